//! OpenClaw's SQLite transcript store (`openclaw-agent.sqlite`, OpenClaw ≥ 2026.7).
//!
//! Table (OpenClaw 2026.9.6 schema):
//!
//! ```sql
//! CREATE TABLE transcript_events (
//!   session_id TEXT NOT NULL, seq INTEGER NOT NULL, event_json TEXT, created_at INTEGER NOT NULL,
//!   event_zstd BLOB, event_utf8_bytes INTEGER, navigation_json TEXT,
//!   PRIMARY KEY (session_id, seq),
//!   CHECK ((event_json IS NOT NULL AND event_zstd IS NULL)
//!       OR (event_json IS NULL AND event_zstd IS NOT NULL AND event_utf8_bytes IS NOT NULL)));
//! ```
//!
//! Each row is one pi session-file entry (`session` header, `message`, `compaction`, …) as
//! JSON; rows over 1 KiB may be stored zstd-compressed (`event_zstd`, with the UTF-8 length in
//! `event_utf8_bytes`). Older stores have only `event_json`. The rows of a session, in `seq`
//! order, are exactly the lines of its pi JSONL file, so they are read as
//! `crate::replay::transcript::parse_pi_lines` reads lines, one row at a time, by a
//! [`PiReader`] ([`for_each_session`] hands over one session at a time).
//!
//! The caller opens the connection (the core does no file I/O); use
//! `rusqlite::Connection::open_with_flags(path, SQLITE_OPEN_READ_ONLY)`.

use crate::replay::transcript::{PiReader, Transcript};
use ::cachefold::error::{Error, Result};
use rusqlite::Connection;

/// Largest decompressed event accepted (OpenClaw refuses more than 4 MiB per event too).
pub const MAX_EVENT_BYTES: usize = 4 << 20;

/// One session read from the store.
pub struct SqliteSession {
    /// `session_id`.
    pub session_id: String,
    /// Parsed transcript.
    pub transcript: Transcript,
    /// Rows that could not be decoded (bad zstd, bad UTF-8, size mismatch).
    pub bad_rows: u64,
}

fn sql_err(e: rusqlite::Error) -> Error {
    Error::Input(format!("sqlite: {e}"))
}

/// Decode one compressed row.
pub fn decode_zstd(blob: &[u8], utf8_bytes: Option<i64>) -> Option<String> {
    let cap = utf8_bytes
        .and_then(|n| usize::try_from(n).ok())
        .unwrap_or(MAX_EVENT_BYTES)
        .min(MAX_EVENT_BYTES);
    let bytes = zstd::bulk::decompress(blob, cap).ok()?;
    if let Some(n) = utf8_bytes {
        if bytes.len() as i64 != n {
            return None;
        }
    }
    String::from_utf8(bytes).ok()
}

/// One session of the store, summarised without decoding its events.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionRow {
    /// `session_id`.
    pub session_id: String,
    /// Rows (events) of the session.
    pub events: u64,
    /// Smallest `created_at` (OpenClaw writes epoch milliseconds).
    pub first_at: i64,
    /// Largest `created_at`.
    pub last_at: i64,
}

/// Every session of the store with its event count and time span, sorted by `session_id`
/// (the order [`read_sessions`] returns them in).
pub fn list_sessions(conn: &Connection) -> Result<Vec<SessionRow>> {
    columns(conn)?;
    let mut st = conn
        .prepare(
            "SELECT session_id, COUNT(*), MIN(created_at), MAX(created_at) FROM transcript_events GROUP BY session_id ORDER BY session_id",
        )
        .map_err(sql_err)?;
    let rows = st
        .query_map([], |r| {
            Ok(SessionRow {
                session_id: r.get(0)?,
                events: r.get::<_, i64>(1)?.max(0) as u64,
                first_at: r.get::<_, Option<i64>>(2)?.unwrap_or(0),
                last_at: r.get::<_, Option<i64>>(3)?.unwrap_or(0),
            })
        })
        .map_err(sql_err)?;
    rows.map(|r| r.map_err(sql_err)).collect()
}

/// Column names of `transcript_events`; an error when the table is missing.
fn columns(conn: &Connection) -> Result<Vec<String>> {
    let mut cols = Vec::new();
    {
        let mut st = conn
            .prepare("PRAGMA table_info(transcript_events)")
            .map_err(sql_err)?;
        let rows = st
            .query_map([], |r| r.get::<_, String>(1))
            .map_err(sql_err)?;
        for c in rows {
            cols.push(c.map_err(sql_err)?);
        }
    }
    if cols.is_empty() {
        return Err(Error::Input(
            "sqlite: no transcript_events table (not an OpenClaw agent store?)".into(),
        ));
    }
    Ok(cols)
}

/// Every session in the store (sorted by `session_id`), or only `only` when given.
pub fn read_sessions(conn: &Connection, only: Option<&str>) -> Result<Vec<SqliteSession>> {
    read_sessions_where(conn, &|id| !matches!(only, Some(o) if o != id))
}

/// The sessions of the store whose `session_id` passes `keep`, sorted by `session_id`.
pub fn read_sessions_where(
    conn: &Connection,
    keep: &dyn Fn(&str) -> bool,
) -> Result<Vec<SqliteSession>> {
    let mut out = Vec::new();
    for_each_session(conn, keep, &mut |s| {
        out.push(s);
        Ok(())
    })?;
    Ok(out)
}

/// [`read_sessions_where`] one session at a time: `each` gets every kept session as soon as
/// its rows are read, so a caller that replays or prepares it and lets it go holds one parsed
/// session at a time. Each row is decoded as it is read, into what the transcript keeps of it
/// ([`PiReader`]: neither the row's text nor its whole JSON is kept). An error of `each` stops
/// the read and is returned.
pub fn for_each_session(
    conn: &Connection,
    keep: &dyn Fn(&str) -> bool,
    each: &mut dyn FnMut(SqliteSession) -> Result<()>,
) -> Result<()> {
    let cols = columns(conn)?;
    let has_zstd =
        cols.iter().any(|c| c == "event_zstd") && cols.iter().any(|c| c == "event_utf8_bytes");
    let sql = if has_zstd {
        "SELECT session_id, seq, event_json, event_zstd, event_utf8_bytes FROM transcript_events ORDER BY session_id, seq"
    } else {
        "SELECT session_id, seq, event_json, NULL, NULL FROM transcript_events ORDER BY session_id, seq"
    };
    let mut st = conn.prepare(sql).map_err(sql_err)?;
    let mut rows = st.query([]).map_err(sql_err)?;
    // (session id, its rows read so far, rows not decodable)
    let mut cur: Option<(String, PiReader, u64)> = None;
    let finish = |c: (String, PiReader, u64),
                  each: &mut dyn FnMut(SqliteSession) -> Result<()>|
     -> Result<()> {
        let (id, reader, bad) = c;
        let transcript = reader.finish()?;
        each(SqliteSession {
            session_id: id,
            transcript,
            bad_rows: bad,
        })
    };
    while let Some(r) = rows.next().map_err(sql_err)? {
        let id: String = r.get(0).map_err(sql_err)?;
        if !keep(&id) {
            continue;
        }
        let json: Option<String> = r.get(2).map_err(sql_err)?;
        let blob: Option<Vec<u8>> = r.get(3).map_err(sql_err)?;
        let n: Option<i64> = r.get(4).map_err(sql_err)?;
        if cur.as_ref().is_some_and(|(c, ..)| *c != id) {
            if let Some(c) = cur.take() {
                finish(c, each)?;
            }
        }
        let entry = cur.get_or_insert_with(|| (id.clone(), PiReader::default(), 0));
        let line = match (json, blob) {
            (Some(j), _) => Some(j),
            (None, Some(b)) => decode_zstd(&b, n),
            (None, None) => None,
        };
        match line {
            // As `parse_pi_lines` reads a line: an entry or a skipped line.
            Some(j) => entry.1.push_line(&j),
            None => entry.2 += 1,
        }
    }
    if let Some(c) = cur.take() {
        finish(c, each)?;
    }
    Ok(())
}
