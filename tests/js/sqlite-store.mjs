// Writes a small OpenClaw agent store (`openclaw-agent.sqlite`, OpenClaw 2026.9.6's
// transcript_events schema) from pi JSONL files, as OpenClaw does: one row per entry, rows over
// `zstdOver` bytes zstd-compressed with their UTF-8 length. Needs node:sqlite and zlib's zstd
// (Node >= 22.15); under an older Node, run this file with Node 24:
//   node24 tests/js/sqlite-store.mjs OUT.sqlite '[{"id":"s1","file":"...jsonl","t0":1000}]' [zstdOver]
import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";

/** sessions: [{id, file, t0}]; created_at = t0 + seq (epoch ms). */
export async function writeStore(path, sessions, zstdOver = 200) {
  const { DatabaseSync } = await import("node:sqlite");
  const zlib = await import("node:zlib");
  const db = new DatabaseSync(path);
  db.exec(`CREATE TABLE transcript_events (
    session_id TEXT NOT NULL, seq INTEGER NOT NULL, event_json TEXT, created_at INTEGER NOT NULL,
    event_zstd BLOB, event_utf8_bytes INTEGER, navigation_json TEXT,
    PRIMARY KEY (session_id, seq),
    CHECK ((event_json IS NOT NULL AND event_zstd IS NULL)
        OR (event_json IS NULL AND event_zstd IS NOT NULL AND event_utf8_bytes IS NOT NULL)))`);
  const plain = db.prepare("INSERT INTO transcript_events (session_id, seq, event_json, created_at) VALUES (?, ?, ?, ?)");
  const packed = db.prepare("INSERT INTO transcript_events (session_id, seq, event_json, created_at, event_zstd, event_utf8_bytes) VALUES (?, ?, NULL, ?, ?, ?)");
  let compressed = 0;
  for (const s of sessions) {
    const lines = readFileSync(s.file, "utf8").split("\n").filter((l) => l.startsWith("{"));
    lines.forEach((l, seq) => {
      const bytes = Buffer.byteLength(l);
      if (bytes > zstdOver) {
        packed.run(s.id, seq, s.t0 + seq, zlib.zstdCompressSync(Buffer.from(l)), bytes);
        compressed += 1;
      } else plain.run(s.id, seq, l, s.t0 + seq);
    });
  }
  db.close();
  return { compressed };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const [out, spec, over] = process.argv.slice(2);
  const r = await writeStore(out, JSON.parse(spec), over ? Number(over) : undefined);
  process.stdout.write(`${JSON.stringify(r)}\n`);
}
