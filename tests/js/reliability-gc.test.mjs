// Artifacts a live session still needs (issue 24, item 6): gc's 30-day rule follows the session's
// own activity, and GC racing other processes never deletes an artifact a session references.
import test from "node:test";
import assert from "node:assert/strict";
import { utimesSync } from "node:fs";
import { join } from "node:path";
import { readArtifact, sha1Hex, storeRoot, writeArtifact } from "../../js/artifacts.js";
import { collectGarbage } from "../../js/artifacts/gc.js";
import { raceGc } from "../faults/gc-race.mjs";
import { engineFor, pkgSkip, tempDir, user, assistantText } from "./helpers.mjs";

const skip = pkgSkip();
const DAY = 86_400_000;

function age(path, days) {
  const t = (Date.now() - days * DAY) / 1000;
  utimesSync(path, t, t);
}

test("a session active today keeps an artifact it shrank 31 days ago (ref keyed by session id or by key)", { skip }, async () => {
  const stateDir = tempDir();
  const eng = await engineFor({ stateDir });
  const [a, b, c] = ["by id", "by key", "nobody"].map((w) => `full output ${w}\n`.repeat(400));
  const old = Date.now() - 31 * DAY;
  // Ref keyed by the session id (the middleware without a session key), by the session key with
  // the session id recorded, and one of a session gone for 31 days.
  writeArtifact(stateDir, sha1Hex(a), a, { tool: "read", callId: "c1", session: "s-active", nowMs: old });
  writeArtifact(stateDir, sha1Hex(b), b, { tool: "read", callId: "c2", session: "agent:main:main", sessionId: "s-active", nowMs: old });
  writeArtifact(stateDir, sha1Hex(c), c, { tool: "read", callId: "c3", session: "s-gone", nowMs: old });
  for (const key of ["s-active", "agent:main:main", "s-gone"]) age(join(storeRoot(stateDir), "sessions", `${sha1Hex(key)}.jsonl`), 31);
  // The session is active today: a turn journaled now.
  assert.equal((await eng.commitTurn({ sessionId: "s-active", advancementKey: "k1", messages: [user("q"), assistantText("a")] })).status, "committed");
  const r = await collectGarbage(stateDir, { maxBytes: 0 });
  assert.equal(readArtifact(stateDir, sha1Hex(a)), a, "the ref file named by the active session's id");
  assert.equal(readArtifact(stateDir, sha1Hex(b)), b, "the session key's ref file, whose lines name the active session");
  assert.equal(readArtifact(stateDir, sha1Hex(c)), null, "an inactive session's artifact is evicted over budget");
  assert.deepEqual(r.evicted, [sha1Hex(c)]);
  assert.equal(r.staleRefFiles, 1);
});

test("two processes racing gc while a third re-references: no referenced artifact deleted", { skip, timeout: 120_000 }, async () => {
  const r = await raceGc({ n: 300, rounds: 5 });
  console.log(`gc race: ${r.referenced} references, ${r.gcRuns} gc runs, ${r.evicted} evicted, ${r.missingCount} referenced artifacts missing`);
  assert.ok(r.gcRuns > 2, `the GCs ran ${r.gcRuns} times`);
  assert.ok(r.evicted > 0, `the GCs evicted ${r.evicted}`);
  assert.deepEqual(r.missing, []);
});
