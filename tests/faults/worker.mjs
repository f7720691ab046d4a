// A turn loop against one session, run as a child process by the fault campaign
// (tests/faults/campaign.test.mjs), which kills it at random moments.
//
// argv[2] = JSON {stateDir, logFile, sessionId, start, count, keyPrefix, assemble, config}
// (`config`: plugin config merged over stateDir/logFile; default: folds off).
// stdout, one line each: "ready",
//   "A <k> <hash,hash,...> <folds> <stablePrefix|-> <headLen> <declared>" (assemble output of
//   turn k, one short hash per message, `hash~f12` for a fold or condensed record with its id;
//   from the assemble's report in the decision log: folds
//   made by this call, the output entries declared unchanged, the pinned head's length, and 1
//   when the report declares a divergence, an environment change or a passthrough),
//   "C <key> <status>" (commitTurn answered), "done".
import { closeSync, openSync, readSync, statSync, writeSync } from "node:fs";
import plugin from "../../js/index.js";
import { history, turn, MODEL, outputEntry } from "./turns.mjs";

const opts = JSON.parse(process.argv[2]);
const config = opts.config ?? { minFoldTokens: 1e9, tokenBudget: 1e9 };
const say = (line) => writeSync(1, `${line}\n`); // synchronous: a line printed is a line the parent sees
let factory;
plugin.register({
  pluginConfig: { stateDir: opts.stateDir, logFile: opts.logFile, ...config },
  logger: { info() {}, warn() {}, error: (m) => process.stderr.write(`${m}\n`) },
  registerContextEngine: (_id, f) => (factory = f),
  on() {},
  registerTool() {},
  registerAgentToolResultMiddleware() {},
});

const logSize = () => {
  try {
    return statSync(opts.logFile).size;
  } catch {
    return 0;
  }
};

/** The decision-log event of the assemble logged after byte `from` (this process's call). */
function assembleEvent(from) {
  if (!opts.logFile) return null;
  const fd = openSync(opts.logFile, "r");
  try {
    const buf = Buffer.alloc(Math.max(0, logSize() - from));
    readSync(fd, buf, 0, buf.length, from);
    const lines = buf.toString("utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l));
    return lines.filter((e) => e.event === "assemble" && e.sessionId === opts.sessionId).pop() ?? null;
  } finally {
    closeSync(fd);
  }
}

say("ready");
for (let k = opts.start; k < opts.start + opts.count; k++) {
  const engine = await factory({}); // one engine per turn, as OpenClaw does
  if (opts.assemble) {
    const msgs = history(k);
    const at = logSize();
    const r = await engine.assemble({ sessionId: opts.sessionId, messages: msgs, model: MODEL, tokenBudget: config.tokenBudget });
    const ev = assembleEvent(at);
    const rep = ev?.report ?? {};
    const declared = !ev || ev.passthrough || !!rep.divergence || (rep.envChanges ?? []).length > 0;
    say(`A ${k} ${r.messages.map(outputEntry).join(",")} ${(rep.folds ?? []).length} ${rep.stablePrefix ?? "-"} ${rep.headLen ?? 0} ${declared ? 1 : 0}`);
  }
  const c = await engine.commitTurn({ sessionId: opts.sessionId, advancementKey: `${opts.keyPrefix}${k}`, messages: turn(k) });
  say(`C ${opts.keyPrefix}${k} ${c.status}`);
}
say("done");
