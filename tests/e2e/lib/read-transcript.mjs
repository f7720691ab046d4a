// Dump OpenClaw transcript events as JSON (run with Node 24: needs node:sqlite and zlib zstd).
//   node read-transcript.mjs <openclaw-agent.sqlite> [sessionId]
// Prints [{sessionId, seq, event}] oldest first. Large events are stored zstd-compressed
// (`event_zstd` with `event_json` NULL, docs/host-integration.md) and are decoded here.
import { DatabaseSync } from "node:sqlite";
import zlib from "node:zlib";

const [db, sessionId] = process.argv.slice(2);
const conn = new DatabaseSync(db, { readOnly: true });
const rows = sessionId
  ? conn.prepare("SELECT session_id, seq, event_json, event_zstd FROM transcript_events WHERE session_id = ? ORDER BY seq").all(sessionId)
  : conn.prepare("SELECT session_id, seq, event_json, event_zstd FROM transcript_events ORDER BY session_id, seq").all();
const out = rows.map((r) => {
  const text = r.event_json ?? zlib.zstdDecompressSync(Buffer.from(r.event_zstd)).toString("utf8");
  return { sessionId: r.session_id, seq: r.seq, event: JSON.parse(text) };
});
process.stdout.write(JSON.stringify(out));
