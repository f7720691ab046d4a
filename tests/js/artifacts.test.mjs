// Artifact store: ids, paths, permissions, dedupe, references, garbage collection. Pure fs.
import test from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { readdirSync, statSync, utimesSync, writeFileSync, existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import {
  artifactPath,
  isArtifactId,
  readArtifact,
  sessionArtifactIds,
  sessionRefs,
  sessionShrinkStats,
  storeRoot,
  touchArtifact,
  writeArtifact,
  artifactMeta,
} from "../../js/artifacts.js";
import { collectGarbage } from "../../js/artifacts/gc.js";
import { tempDir } from "./helpers.mjs";

const sha1 = (t) => createHash("sha1").update(t, "utf8").digest("hex");
const mode = (p) => statSync(p).mode & 0o777;
const DAY = 86_400_000;

test("ids: only 40 lowercase hex, resolved inside the store", () => {
  const dir = tempDir();
  const good = sha1("x");
  assert.ok(isArtifactId(good));
  assert.equal(artifactPath(dir, good), join(dir, "artifacts", good.slice(0, 2), good));
  const bad = [
    "../x",
    "/etc/passwd",
    good.toUpperCase(),
    good.slice(0, 39),
    `${good}0`,
    `${good.slice(0, 38)}/x`,
    `${good.slice(0, 38)}..`,
    `${good.slice(0, 39)}é`,
    `${good.slice(0, 36)}ｆｆｆｆ`,
    "",
    null,
    42,
    `../../${good.slice(6)}`,
  ];
  for (const id of bad) {
    assert.equal(isArtifactId(id), false, String(id));
    assert.throws(() => artifactPath(dir, id), (e) => e.code === "CACHEFOLD_INVALID_ID", String(id));
    assert.throws(() => readArtifact(dir, id), (e) => e.code === "CACHEFOLD_INVALID_ID");
    assert.throws(() => writeArtifact(dir, id, "t"), (e) => e.code === "CACHEFOLD_INVALID_ID");
  }
});

test("files 0600, directories 0700, content exact", () => {
  const dir = tempDir();
  const text = "héllo\nwörld\n".repeat(100);
  const id = sha1(text);
  const w = writeArtifact(dir, id, text, { tool: "read", callId: "c1", session: "agent:main:t", originalChars: 1200, shrunkChars: 300 });
  assert.equal(w.created, true);
  assert.equal(w.bytes, Buffer.byteLength(text));
  assert.equal(readArtifact(dir, id), text);
  const root = storeRoot(dir);
  assert.equal(mode(root), 0o700);
  assert.equal(mode(join(root, id.slice(0, 2))), 0o700);
  assert.equal(mode(join(root, "sessions")), 0o700);
  assert.equal(mode(w.path), 0o600);
  assert.equal(mode(`${w.path}.json`), 0o600);
  const refs = readdirSync(join(root, "sessions"));
  assert.ok(refs.length > 0, "the session's refs file was written");
  for (const f of refs) assert.equal(mode(join(root, "sessions", f)), 0o600);
  const meta = artifactMeta(dir, id);
  assert.equal(meta.id, id);
  assert.equal(meta.bytes, Buffer.byteLength(text));
  assert.deepEqual(meta.refs.map((r) => [r.tool, r.callId, r.session]), [["read", "c1", "agent:main:t"]]);
  assert.equal(readArtifact(dir, sha1("never stored")), null);
});

test("identical content is stored once; references accumulate", () => {
  const dir = tempDir();
  const text = "same output\n".repeat(500);
  const id = sha1(text);
  const a = writeArtifact(dir, id, text, { tool: "exec", callId: "c1", session: "s1", originalChars: 6000, shrunkChars: 1000 });
  const before = statSync(a.path).mtimeMs;
  const b = writeArtifact(dir, id, text, { tool: "exec", callId: "c2", session: "s2", originalChars: 6000, shrunkChars: 1000 });
  assert.equal(a.created, true);
  assert.equal(b.created, false);
  const shard = join(storeRoot(dir), id.slice(0, 2));
  assert.deepEqual(readdirSync(shard).sort(), [id, `${id}.json`]);
  assert.equal(statSync(a.path).mtimeMs, before, "not rewritten");
  assert.deepEqual(artifactMeta(dir, id).refs.map((r) => r.callId), ["c1", "c2"]);
  assert.deepEqual(sessionArtifactIds(dir, "s1"), [id]);
  assert.deepEqual(sessionArtifactIds(dir, "s2"), [id]);
  assert.deepEqual(sessionArtifactIds(dir, "s3"), []);
  writeArtifact(dir, id, text, { tool: "exec", callId: "c3", session: "s1", originalChars: 6000, shrunkChars: 1000 });
  assert.equal(sessionRefs(dir, "s1").length, 2);
  assert.deepEqual(sessionShrinkStats(dir, "s1"), { shrunkResults: 2, artifacts: 1, originalChars: 12000, shrunkChars: 2000, savedChars: 10000 });
  // A torn last line (crash mid-append) is skipped, not fatal.
  const refsFile = join(storeRoot(dir), "sessions", sha1("s1") + ".jsonl");
  writeFileSync(refsFile, readFileSync(refsFile, "utf8") + '{"id":"ab', { flag: "w" });
  assert.equal(sessionRefs(dir, "s1").length, 2);
  assert.equal(touchArtifact(dir, id, { session: "s9" }), true);
  assert.equal(touchArtifact(dir, sha1("absent"), { session: "s9" }), false);
  assert.deepEqual(sessionArtifactIds(dir, "s9"), [id]);
});

function put(dir, label, bytes, session, refAt) {
  const text = `${label}\n`.padEnd(bytes, "x");
  const id = sha1(text);
  writeArtifact(dir, id, text, { tool: "exec", session, nowMs: refAt });
  return id;
}

function ageRefs(dir, session, ageMs) {
  const p = join(storeRoot(dir), "sessions", sha1(session) + ".jsonl");
  assert.ok(existsSync(p), `no refs file for ${session}`);
  const t = (Date.now() - ageMs) / 1000;
  utimesSync(p, t, t);
}

/**
 * Wait until the clock has passed the last write. A GC keeps an artifact whose metadata was
 * written at or after its start (`touchedAt >= started`, the same millisecond included: a
 * reference racing the GC wins); a test that writes and collects within one millisecond would
 * otherwise see nothing evicted.
 */
async function pastLastWrite() {
  const t = Date.now();
  while (Date.now() <= t) await new Promise((r) => setTimeout(r, 1));
}

test("eviction: least recently referenced first, never an artifact a live session points to", async () => {
  const dir = tempDir();
  const now = Date.now();
  const a = put(dir, "A", 1000, "live-session", now - 10 * DAY); // oldest reference, but live
  const b = put(dir, "B", 1000, "old-session", now - 5 * DAY);
  const c = put(dir, "C", 1000, "old-session", now - 2 * DAY);
  ageRefs(dir, "old-session", 40 * DAY); // older than LIVE_SESSION_DAYS (30)

  await pastLastWrite();
  let r = await collectGarbage(dir, { maxBytes: 2500 });
  assert.equal(r.bytesBefore, 3000);
  assert.deepEqual(r.evicted, [b]);
  assert.equal(r.staleRefFiles, 1);
  assert.equal(readArtifact(dir, b), null);
  assert.equal(existsSync(artifactPath(dir, b) + ".json"), false);
  assert.ok(readArtifact(dir, a) && readArtifact(dir, c));

  r = await collectGarbage(dir, { maxBytes: 100 });
  assert.deepEqual(r.evicted, [c]);
  assert.equal(r.overBudget, true, "live artifact kept even over budget");
  assert.equal(r.liveKept, 1);
  assert.ok(readArtifact(dir, a), "referenced artifact survives");

  // Under budget: nothing happens.
  r = await collectGarbage(dir, { maxBytes: 1 << 30 });
  assert.deepEqual(r.evicted, []);
  assert.equal(r.scanned, 1);
});

test("eviction never removes a referenced artifact (random budgets)", async () => {
  let evicted = 0;
  for (let round = 0; round < 5; round += 1) {
    const dir = tempDir();
    const now = Date.now();
    const referenced = new Set();
    for (let i = 0; i < 12; i += 1) {
      const live = (i * 7 + round) % 3 === 0;
      const id = put(dir, `doc-${round}-${i}`, 200 + ((i * 37) % 300), live ? `live-${i % 2}` : `dead-${i % 2}`, now - (i + 1) * DAY);
      if (live) referenced.add(id);
    }
    ageRefs(dir, "dead-0", 60 * DAY);
    ageRefs(dir, "dead-1", 60 * DAY);
    const budget = 100 + round * 700;
    await pastLastWrite();
    const r = await collectGarbage(dir, { maxBytes: budget });
    for (const id of referenced) assert.ok(readArtifact(dir, id) !== null, `live ${id} kept (round ${round})`);
    for (const id of r.evicted) assert.ok(!referenced.has(id));
    assert.ok(r.bytesAfter <= budget || r.overBudget);
    evicted += r.evicted.length;
  }
  assert.ok(evicted > 0, "the budgets made eviction happen");
});

test("a reference made during GC wins over eviction", async () => {
  const dir = tempDir();
  const id = put(dir, "Z", 1000, "dead", Date.now() - 9 * DAY);
  ageRefs(dir, "dead", 60 * DAY);
  // Simulate a concurrent reference: lastRefAt in the future of the GC start.
  const meta = JSON.parse(readFileSync(artifactPath(dir, id) + ".json", "utf8"));
  meta.lastRefAt = Date.now() + 60_000;
  writeFileSync(artifactPath(dir, id) + ".json", JSON.stringify(meta));
  const r = await collectGarbage(dir, { maxBytes: 10 });
  assert.deepEqual(r.evicted, []);
  assert.ok(readArtifact(dir, id));
});
