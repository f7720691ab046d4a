//! Journal: the event types and their line format, and replay.
//!
//! One line per event, newline-terminated:
//! `{"v":1,"seq":N,"crc":"<8 hex>","e":{"<kind>":{…}}}` where `crc` is the first 8 hex digits of the
//! SHA-1 of the event JSON text exactly as it stands in the line (`e`'s value). `seq` counts
//! events from 1 for a session and continues across snapshots (a snapshot stores the `seq` it
//! includes).
//!
//! Replay ([`replay`]) is crash-tolerant: lines whose `seq` the state already includes are
//! skipped (a journal that was not truncated after a snapshot); the first line that is torn,
//! fails its checksum, does not parse, is out of sequence or is refused by
//! [`SessionState::apply`] ends the replay. Everything before it applies, so any byte-prefix of
//! a journal yields the state after some prefix of the event sequence. The bytes left unread
//! are reported, never an error.
//!
//! Write cost per turn is proportional to new content: an `ingest` event carries one bounded
//! record (hash, sizes, skeleton, ≤ 1,500-char digest) per new message; `out` carries only the
//! keys appended to the output; nothing re-serialises history.

pub use crate::engine::state::Event;
use crate::engine::state::SessionState;
use crate::error::Result;
use crate::fingerprint_hex;
use serde::{Deserialize, Serialize};

/// Journal line format version.
pub const JOURNAL_VERSION: u32 = 1;

/// Outcome of [`replay`].
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReplayReport {
    /// Events applied.
    pub applied: u64,
    /// Lines skipped because the snapshot already included them.
    pub skipped: u64,
    /// Bytes of the journal not applied (torn or corrupt tail).
    pub ignored_bytes: u64,
    /// Why replay stopped early (`torn`, `checksum`, `parse`, `sequence`, `refused: …`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stopped: Option<String>,
    /// `seq` of the state after replay.
    pub seq: u64,
}

const PREFIX: &str = "{\"v\":1,\"seq\":";

/// First 8 hex digits of the SHA-1 of `event_json`.
pub fn crc(event_json: &str) -> String {
    fingerprint_hex(event_json.as_bytes())
        .chars()
        .take(8)
        .collect()
}

/// Serialise one event as a journal line (with trailing newline).
pub fn encode_line(seq: u64, e: &Event) -> Result<String> {
    let mut line = String::new();
    write_line(&mut line, seq, e);
    Ok(line)
}

/// Append the journal line of one event to `out` (what [`encode_line`] returns).
pub fn write_line(out: &mut String, seq: u64, e: &Event) {
    let body = crate::to_json(e);
    out.reserve(body.len() + 48);
    out.push_str(PREFIX);
    out.push_str(&seq.to_string());
    out.push_str(",\"crc\":\"");
    out.push_str(&crc(&body));
    out.push_str("\",\"e\":");
    out.push_str(&body);
    out.push_str("}\n");
}

/// Parse one line (without its newline) into `(seq, event)`.
pub fn decode_line(line: &str) -> std::result::Result<(u64, Event), &'static str> {
    let rest = line.strip_prefix(PREFIX).ok_or("parse")?;
    let comma = rest.find(',').ok_or("parse")?;
    let seq = rest
        .get(..comma)
        .ok_or("parse")?
        .parse::<u64>()
        .map_err(|_| "parse")?;
    let rest = rest.get(comma..).ok_or("parse")?;
    let rest = rest.strip_prefix(",\"crc\":\"").ok_or("parse")?;
    let sum = rest.get(..8).ok_or("parse")?;
    let rest = rest.get(8..).ok_or("parse")?;
    let body = rest.strip_prefix("\",\"e\":").ok_or("parse")?;
    let body = body.strip_suffix('}').ok_or("torn")?;
    if crc(body) != sum {
        return Err("checksum");
    }
    let e: Event = serde_json::from_str(body).map_err(|_| "parse")?;
    Ok((seq, e))
}

/// Apply the journal `text` to `state` (see the module doc for the stopping rules).
pub fn replay(state: &mut SessionState, text: &str) -> ReplayReport {
    let mut rep = ReplayReport::default();
    let mut pos = 0usize;
    let bytes = text.len();
    let mut started = false;
    while pos < bytes {
        let (line, next) = match text[pos..].find('\n') {
            Some(k) => (&text[pos..pos + k], pos + k + 1),
            None => (&text[pos..], bytes),
        };
        if line.trim().is_empty() {
            pos = next;
            continue;
        }
        let (seq, e) = match decode_line(line) {
            Ok(x) => x,
            Err(why) => {
                rep.stopped = Some(
                    if next == bytes && !text.ends_with('\n') {
                        "torn"
                    } else {
                        why
                    }
                    .to_string(),
                );
                break;
            }
        };
        if !started && seq <= state.seq {
            rep.skipped += 1;
            pos = next;
            continue;
        }
        started = true;
        if seq != state.seq + 1 {
            rep.stopped = Some("sequence".to_string());
            break;
        }
        if let Err(err) = state.apply(e) {
            rep.stopped = Some(format!("refused: {err}"));
            break;
        }
        rep.applied += 1;
        pos = next;
    }
    rep.ignored_bytes = (bytes - pos.min(bytes)) as u64;
    rep.seq = state.seq;
    rep
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_round_trip_and_checksum() {
        let e = Event::ForceFold { on: true };
        let line = encode_line(7, &e).unwrap();
        assert!(line.starts_with("{\"v\":1,\"seq\":7,\"crc\":\""), "{line}");
        assert!(line.ends_with("}\n"));
        let v: serde_json::Value = serde_json::from_str(line.trim_end()).unwrap();
        assert_eq!(v["e"]["forceFold"]["on"], true);
        assert_eq!(
            v["crc"].as_str().unwrap(),
            crc(&serde_json::to_string(&v["e"]).unwrap())
        );
        assert_eq!(decode_line(line.trim_end()).unwrap(), (7, e));
        let bad = line.trim_end().replace("true", "false");
        assert_eq!(decode_line(&bad).unwrap_err(), "checksum");
        assert_eq!(decode_line(&line[..line.len() - 6]).unwrap_err(), "torn");
        // A cut that happens to end in `}` fails its checksum instead; replay() reports either
        // kind on an unterminated last line as "torn".
        assert_eq!(
            decode_line(&line[..line.len() - 3]).unwrap_err(),
            "checksum"
        );
    }

    #[test]
    fn replay_stops_at_gaps_and_skips_included_lines() {
        let mut text = String::new();
        for s in 1..=3 {
            text.push_str(&encode_line(s, &Event::ForceFold { on: s % 2 == 1 }).unwrap());
        }
        let mut st = SessionState::new("s");
        let r = replay(&mut st, &text);
        assert_eq!((r.applied, r.ignored_bytes, st.seq), (3, 0, 3));
        assert!(st.force_fold);
        // Already included: skipped, then continues.
        let more = encode_line(4, &Event::ForceFold { on: false }).unwrap();
        let r = replay(&mut st, &format!("{text}{more}"));
        assert_eq!((r.skipped, r.applied, st.seq), (3, 1, 4));
        // Gap: seq 6 after 4.
        let gap = encode_line(6, &Event::ForceFold { on: true }).unwrap();
        let r = replay(&mut st, &gap);
        assert_eq!(r.stopped.as_deref(), Some("sequence"));
        assert_eq!(r.ignored_bytes, gap.len() as u64);
        assert_eq!(st.seq, 4);
    }
}
