//! pi / OpenClaw session JSONL (and the rows of OpenClaw's SQLite store, which hold the same lines).

#[allow(unused_imports)]
use super::*;

/// Parse a pi (OpenClaw) session JSONL file.
///
/// Entries: `session` header (ignored), `message` (user / assistant / toolResult kept verbatim;
/// `bashExecution` rendered as the user text pi sends the model; `custom` messages with a
/// string or text content kept as user text), `custom_message` and `branch_summary` (sent to
/// the model as user text by pi), `compaction` (recorded aside), everything else ignored.
/// Version ≥ 2 files carry `id`/`parentId`: the active branch (the chain ending at the last
/// entry) is replayed; files without ids are replayed in file order.
///
/// Lines are read one at a time by a [`PiReader`].
pub fn parse_pi(text: &str) -> Result<Transcript> {
    parse_pi_lines(non_blank(text))
}

/// Parse pi entries that are already JSON lines (one entry per string), e.g. the
/// `event_json` column of OpenClaw's `transcript_events` table in `seq` order. Each line is
/// read as it comes ([`PiReader`]): no line's text or parsed JSON is kept, only what the
/// transcript keeps.
pub fn parse_pi_lines<'a>(lines: impl IntoIterator<Item = &'a str>) -> Result<Transcript> {
    let mut r = PiReader::default();
    for line in lines {
        r.push_line(line);
    }
    r.finish()
}

/// A pi session read one line (one `transcript_events` row) at a time.
///
/// Each line is decoded into a [`RawEntry`] (serde derive: only the fields the reader uses are
/// materialised, every other field of the entry is skipped while parsing) and reduced at once
/// to a [`PiEntry`]: its ids and the one payload it contributes (the message moved out of the
/// entry, a compaction summary or a text). Which entries count is decided by
/// [`PiReader::finish`] (the active branch needs the last entry), so until then the reader holds
/// every entry's payload and ids: about what the finished transcript holds, never the lines nor
/// their whole JSON. The result is the one [`parse_pi_values`] gives for the same lines.
#[derive(Debug, Default)]
pub struct PiReader {
    entries: Vec<PiEntry>,
    /// Lines that were not a JSON object.
    skipped: u64,
}

impl PiReader {
    /// Read one line (one entry). A line that is not a JSON object is counted as skipped.
    pub fn push_line(&mut self, line: &str) {
        // Only an object can be an entry (a derived struct would also accept an array).
        let typed = if line.trim_start().starts_with('{') {
            serde_json::from_str::<RawEntry>(line).ok()
        } else {
            None
        };
        let raw = match typed {
            Some(r) => Some(r),
            // Lines the typed decoder refuses (e.g. a repeated key, which a JSON value keeps
            // the last of) go through the JSON value, as before.
            None => match serde_json::from_str::<Value>(line) {
                Ok(Value::Object(o)) => Some(RawEntry::from_map(o)),
                _ => None,
            },
        };
        match raw {
            Some(r) => self.entries.push(PiEntry::from_raw(r)),
            None => self.skipped += 1,
        }
    }

    /// Lines read so far (entries and skipped lines).
    pub fn lines(&self) -> u64 {
        self.entries.len() as u64 + self.skipped
    }

    /// The transcript of the lines read.
    pub fn finish(self) -> Result<Transcript> {
        let mut t = entries_transcript(self.entries);
        t.skipped_lines += self.skipped;
        Ok(t)
    }
}

/// The fields of a pi entry the reader uses, each as the JSON value it holds (`Some` whenever
/// the key is present, `null` included; other keys are skipped unparsed).
#[derive(Debug, Default, serde::Deserialize)]
struct RawEntry {
    #[serde(rename = "type", default, deserialize_with = "present")]
    ty: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    id: Option<Value>,
    #[serde(rename = "parentId", default, deserialize_with = "present")]
    parent_id: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    timestamp: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    message: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    summary: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    content: Option<Value>,
}

/// A present key, whatever its value (`null` too: `parentId: null` marks a linked file).
fn present<'de, D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Option<Value>, D::Error> {
    <Value as serde::Deserialize>::deserialize(d).map(Some)
}

impl RawEntry {
    /// The same fields taken out of a decoded entry.
    fn from_map(mut o: Map<String, Value>) -> RawEntry {
        let mut take = |k: &str| o.remove(k);
        RawEntry {
            ty: take("type"),
            id: take("id"),
            parent_id: take("parentId"),
            timestamp: take("timestamp"),
            message: take("message"),
            summary: take("summary"),
            content: take("content"),
        }
    }
}

/// One entry reduced to what the transcript takes from it.
#[derive(Debug)]
struct PiEntry {
    /// `type:"session"` (kept in front of any branch, contributes nothing).
    session: bool,
    /// String `id`.
    id: Option<String>,
    /// String `parentId`.
    parent: Option<String>,
    /// The entry has a `parentId` key (any value).
    linked: bool,
    payload: Payload,
}

#[derive(Debug)]
enum Payload {
    /// Contributes nothing (header, switches, labels, unknown types).
    Nothing,
    /// A `message` entry: its message (an object, its `timestamp` filled from the entry's) or
    /// `None` when it has none (a skipped line).
    Message(Option<Value>),
    /// A `compaction` entry's summary.
    Compaction(String),
    /// A `custom_message` / `branch_summary` entry's text (empty: nothing) and time.
    Text(String, Option<f64>),
}

impl PiEntry {
    fn from_raw(r: RawEntry) -> PiEntry {
        let str_of = |v: &Option<Value>| v.as_ref().and_then(Value::as_str).map(str::to_string);
        let ty = r.ty.as_ref().and_then(Value::as_str).unwrap_or("");
        let entry_ts = r
            .timestamp
            .as_ref()
            .and_then(Value::as_str)
            .and_then(parse_iso_ms);
        let payload = match ty {
            "message" => Payload::Message(r.message.filter(Value::is_object).map(|mut m| {
                if m.get("timestamp").and_then(Value::as_f64).is_none() {
                    if let (Some(ts), Some(obj)) = (entry_ts, m.as_object_mut()) {
                        obj.insert("timestamp".into(), json!(ts as u64));
                    }
                }
                m
            })),
            "compaction" => Payload::Compaction(str_of(&r.summary).unwrap_or_default()),
            "custom_message" | "branch_summary" => {
                let text = match (&r.content, &r.summary) {
                    (Some(c), _) => content_text(c),
                    (None, Some(Value::String(s))) => s.clone(),
                    _ => String::new(),
                };
                Payload::Text(text, entry_ts)
            }
            _ => Payload::Nothing,
        };
        PiEntry {
            session: ty == "session",
            id: str_of(&r.id),
            parent: str_of(&r.parent_id),
            linked: r.parent_id.is_some(),
            payload,
        }
    }
}

/// An assistant message OpenClaw authored itself: provider `openclaw` with model
/// `gateway-injected` or `delivery-mirror`, or a message carrying a delivery-mirror marker.
fn transcript_only(m: &Value) -> bool {
    let s = |k: &str| m.get(k).and_then(Value::as_str);
    (s("provider") == Some("openclaw")
        && matches!(s("model"), Some("gateway-injected" | "delivery-mirror")))
        || m.get("openclawDeliveryMirror")
            .and_then(|v| v.get("kind"))
            .and_then(Value::as_str)
            .is_some()
}

/// Parse already-decoded pi entries (values that are not objects contribute nothing).
pub fn parse_pi_values(entries: Vec<Value>) -> Result<Transcript> {
    let entries = entries
        .into_iter()
        .map(|e| match e {
            Value::Object(o) => RawEntry::from_map(o),
            _ => RawEntry::default(),
        })
        .map(PiEntry::from_raw)
        .collect();
    Ok(entries_transcript(entries))
}

/// The transcript of reduced entries: the active branch, in order.
fn entries_transcript(entries: Vec<PiEntry>) -> Transcript {
    let mut t = Transcript::new("pi");
    for e in active_branch(entries) {
        match e.payload {
            Payload::Message(None) => t.skipped_lines += 1,
            Payload::Message(Some(m)) => {
                let role = m
                    .get("role")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string();
                match role.as_str() {
                    // Replies OpenClaw writes itself (slash-command answers, `chat.inject`,
                    // channel delivery mirrors) are transcript-only: no model call, and the host
                    // never sends them to a provider (`isTranscriptOnlyOpenClawAssistantMessage`).
                    "assistant" if transcript_only(&m) => {}
                    "assistant" => {
                        if let Ok(mm) = Message::from_value(m) {
                            let usage = mm.usage();
                            t.push_call_message(mm, usage);
                        }
                    }
                    "user" | "toolResult" => t.push(m),
                    "bashExecution" => {
                        let ts = m.get("timestamp").cloned().unwrap_or(Value::Null);
                        t.push(user_text(&bash_execution_text(&m), ts));
                    }
                    "custom" | "branchSummary" | "compactionSummary" => {
                        let ts = m.get("timestamp").cloned().unwrap_or(Value::Null);
                        let text = Message::from_value(m)
                            .map(|mm| mm.text())
                            .unwrap_or_default();
                        if text.is_empty() {
                            t.skipped_lines += 1;
                        } else {
                            t.push(user_text(&text, ts));
                        }
                    }
                    _ => t.skipped_lines += 1,
                }
            }
            Payload::Compaction(summary) => t.compactions.push((t.messages.len(), summary)),
            Payload::Text(text, ts) => {
                if !text.is_empty() {
                    let ts = ts.map(|x| json!(x as u64)).unwrap_or(Value::Null);
                    t.push(user_text(&text, ts));
                }
            }
            // Header, model/thinking switches, labels, session info, custom state: not context.
            Payload::Nothing => {}
        }
    }
    t
}

/// With `id`/`parentId` on the entries, keep the chain that ends at the last entry with an id
/// (pi's "leaf"); entries without an id (the header) stay in front. Without ids: unchanged.
fn active_branch(entries: Vec<PiEntry>) -> Vec<PiEntry> {
    if !entries.iter().any(|e| e.linked) {
        return entries;
    }
    let mut by_id: BTreeMap<&str, usize> = BTreeMap::new();
    for (i, e) in entries.iter().enumerate() {
        if e.session {
            continue;
        }
        if let Some(id) = e.id.as_deref() {
            by_id.entry(id).or_insert(i);
        }
    }
    let Some(leaf) = entries.iter().rposition(|e| !e.session && e.id.is_some()) else {
        return entries;
    };
    let mut keep = BTreeSet::new();
    let mut cur = Some(leaf);
    while let Some(i) = cur {
        if !keep.insert(i) {
            break; // cycle guard
        }
        cur = entries
            .get(i)
            .and_then(|e| e.parent.as_deref())
            .and_then(|p| by_id.get(p).copied());
    }
    drop(by_id);
    entries
        .into_iter()
        .enumerate()
        .filter(|(i, e)| keep.contains(i) || e.session)
        .map(|(_, e)| e)
        .collect()
}

/// What pi sends the model for a user-run `!command` (bashExecutionToText).
fn bash_execution_text(m: &Value) -> String {
    let cmd = m.get("command").and_then(Value::as_str).unwrap_or("");
    let out = m.get("output").and_then(Value::as_str).unwrap_or("");
    let mut s = format!("Ran `{cmd}`\n");
    if out.is_empty() {
        s.push_str("(no output)");
    } else {
        s.push_str("```\n");
        s.push_str(out);
        s.push_str("\n```");
    }
    if m.get("cancelled").and_then(Value::as_bool) == Some(true) {
        s.push_str("\n\n(command cancelled)");
    } else if let Some(code) = m
        .get("exitCode")
        .and_then(Value::as_i64)
        .filter(|c| *c != 0)
    {
        s.push_str(&format!("\n\nCommand exited with code {code}"));
    }
    s
}

pub(super) fn user_text(text: &str, ts: Value) -> Value {
    json!({"role": "user", "content": [{"type": "text", "text": text}], "timestamp": ts})
}

/// Text of a string content or of the text parts of a content array.
pub(super) fn content_text(c: &Value) -> String {
    match c {
        Value::String(s) => s.clone(),
        Value::Array(items) => {
            let mut out = String::new();
            for p in items {
                let t = match p {
                    Value::String(s) => Some(s.as_str()),
                    _ => p.get("text").and_then(Value::as_str),
                };
                if let Some(t) = t {
                    if !out.is_empty() {
                        out.push('\n');
                    }
                    out.push_str(t);
                }
            }
            out
        }
        _ => String::new(),
    }
}

#[cfg(test)]
#[path = "pi_stream_tests.rs"]
mod stream_tests;
