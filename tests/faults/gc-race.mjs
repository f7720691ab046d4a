// Two processes racing artifact GC while a third re-references artifacts (issue 24, item 6).
// Run as a child by tests/js/reliability-gc.test.mjs and the fault campaign.
//
// argv[2] = JSON {role: "gc" | "ref", stateDir, n, rounds, stop} (artifacts: bodies(n))
//   gc:  runs collectGarbage(maxBytes 0) in a loop until the file `stop` exists; prints
//        "G <runs> <evicted>".
//   ref: each round references every id (in a shuffled order) from a new session, then checks
//        that every id its ref file names is stored (no GC may delete it: the session is active),
//        then ages its ref file past the 30-day window so the next GC may evict again.
//        Prints "R <round> <referenced> <missing> <missing ids, comma separated>" per round.
import { spawn } from "node:child_process";
import { utimesSync, existsSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { writeArtifact, readArtifact, sessionArtifactIds, sha1Hex, storeRoot } from "../../js/artifacts.js";
import { collectGarbage } from "../../js/artifacts/gc.js";
import { tempDir } from "../js/helpers.mjs";
import { join } from "node:path";

/** n artifact texts by id. */
export function bodies(n) {
  const out = new Map();
  for (let i = 0; i < n; i++) {
    const t = `artifact body ${i}\n`.repeat(20);
    out.set(sha1Hex(t), t);
  }
  return out;
}

const DAY = 86_400_000;
const SELF = fileURLToPath(import.meta.url);

function child(arg) {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, [SELF, JSON.stringify(arg)], { stdio: ["ignore", "pipe", "inherit"] });
    let out = "";
    p.stdout.on("data", (d) => (out += d));
    p.on("error", reject);
    p.on("exit", (code) => (code === 0 ? resolve(out) : reject(new Error(`${arg.role} exited ${code}: ${out}`))));
  });
}

/**
 * n artifacts of a session gone for 40 days, two processes running GC (budget 0) in a loop and a
 * third re-referencing every artifact, `rounds` times. Returns the references made, the
 * referenced artifacts missing afterwards (per round), the GC runs and evictions.
 */
export async function raceGc({ n, rounds }) {
  const stateDir = tempDir("cachefold-gc-race-");
  const all = bodies(n);
  for (const [id, t] of all) writeArtifact(stateDir, id, t, { tool: "read", callId: "seed", session: "seed", nowMs: Date.now() - 40 * DAY });
  const old = (Date.now() - 40 * DAY) / 1000;
  utimesSync(join(storeRoot(stateDir), "sessions", `${sha1Hex("seed")}.jsonl`), old, old);
  const stop = join(stateDir, "stop");
  const gcs = [child({ role: "gc", stateDir, stop }), child({ role: "gc", stateDir, stop })];
  let ref;
  try {
    ref = await child({ role: "ref", stateDir, n, rounds });
  } finally {
    writeFileSync(stop, "");
  }
  const g = (await Promise.all(gcs)).map((out) => out.trim().split(" "));
  const lines = ref.trim().split("\n").map((l) => l.split(" "));
  return {
    referenced: lines.reduce((sum, l) => sum + Number(l[2]), 0),
    missing: lines.flatMap((l) => (Number(l[3]) ? [`round ${l[1]}: ${l[4]}`] : [])),
    missingCount: lines.reduce((sum, l) => sum + Number(l[3]), 0),
    gcRuns: g.reduce((sum, l) => sum + Number(l[1]), 0),
    evicted: g.reduce((sum, l) => sum + Number(l[2]), 0),
  };
}

const main = process.argv[1] === SELF;
const o = main && process.argv[2] ? JSON.parse(process.argv[2]) : { role: "none" };
const all = bodies(o.n ?? 0);
const text = (id) => all.get(id);

if (o.role === "gc") {
  let runs = 0;
  let evicted = 0;
  while (!existsSync(o.stop)) {
    const r = await collectGarbage(o.stateDir, { maxBytes: 0 });
    runs += 1;
    evicted += r.evicted.length;
  }
  console.log(`G ${runs} ${evicted}`);
} else if (o.role === "ref") {
  const old = (Date.now() - 40 * 86_400_000) / 1000;
  for (let round = 0; round < o.rounds; round++) {
    const session = `live-${process.pid}-${round}`;
    const ids = [...all.keys()].sort(() => Math.random() - 0.5);
    let referenced = 0;
    for (const id of ids) {
      try {
        writeArtifact(o.stateDir, id, text(id), { tool: "read", callId: `c-${round}-${id.slice(0, 6)}`, session });
        referenced += 1;
        if (referenced % 25 === 0) await new Promise((r) => setImmediate(r));
      } catch (err) {
        /* the hook keeps the original result: not a reference */
        if (process.env.GC_RACE_DEBUG) console.error(`ref ${id}: ${err.message}`);
      }
    }
    const absent = () => sessionArtifactIds(o.stateDir, session).filter((id) => readArtifact(o.stateDir, id) !== text(id));
    // A GC comparing an artifact it set aside puts it back within milliseconds: look twice.
    let missing = absent();
    if (missing.length) {
      await new Promise((r) => setTimeout(r, 200));
      missing = absent();
      if (process.env.GC_RACE_DEBUG) for (const id of missing) console.error(id, (await import("node:fs")).readdirSync(join(storeRoot(o.stateDir), id.slice(0, 2))).filter((f) => f.startsWith(id)), readArtifact(o.stateDir, id)?.length);
    }
    console.log(`R ${round} ${referenced} ${missing.length} ${missing.join(",")}`);
    try {
      utimesSync(join(storeRoot(o.stateDir), "sessions", `${sha1Hex(session)}.jsonl`), old, old);
    } catch {}
  }
}
