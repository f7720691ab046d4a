// node:test reporter for .ci/test's stage table: one TSV line per test file with its top-level
// test count, passes, failures, skips and the summed duration of its top-level tests (seconds).
// Use beside the spec reporter:
//   node --test --test-reporter=spec --test-reporter-destination=stdout \
//     --test-reporter=./.ci/times-reporter.mjs --test-reporter-destination=FILE.tsv ...
import { relative } from "node:path";

export default async function* timesReporter(source) {
  const files = new Map();
  for await (const ev of source) {
    if (ev.type !== "test:pass" && ev.type !== "test:fail") continue;
    const d = ev.data;
    if (d.nesting !== 0) continue;
    const file = d.file ? relative(process.cwd(), d.file) : "(no file)";
    const f = files.get(file) ?? { tests: 0, pass: 0, fail: 0, skip: 0, ms: 0 };
    f.tests += 1;
    if (d.skip !== undefined && d.skip !== false) f.skip += 1;
    else if (ev.type === "test:pass") f.pass += 1;
    else f.fail += 1;
    f.ms += d.details?.duration_ms ?? 0;
    files.set(file, f);
  }
  for (const [file, f] of files) {
    yield `${file}\t${f.tests}\t${f.pass}\t${f.fail}\t${f.skip}\t${(f.ms / 1000).toFixed(1)}\n`;
  }
}
