//! wasm-bindgen exports: convert types, call the core, convert back. No logic lives here.
//!
//! One crossing convention, both ways:
//! * **Structured input is JSON text** (`&str`), parsed once into a `crate::json::Value` and
//!   decoded by [`crate::json`] (the config, the engine calls' headers, lesson and search
//!   inputs). Host message JSON is never nested inside it: messages cross as their own strings,
//!   a `Vec<String>` (with a parallel `Vec<u32>` of host indices where the call needs them)
//!   beside the small header, so no message is escaped twice.
//! * **Structured results are JSON text** written by [`crate::json::out`] and turned into plain JS
//!   objects by `JSON.parse` inside [`to_js`] (host numbers keep their exact text: the core's
//!   JSON value stores numbers as text). Bulky plain text (an artifact) is set as a JS string beside it.
//! * Plain strings, numbers and booleans cross as themselves.
//! * `Session.plan` takes a JS function as its message source: the core's one driver
//!   ([`crate::engine::Session::try_drive`]) calls it with a host index and gets that message's
//!   JSON text, only for the indices it needs.
//!
//! serde-wasm-bindgen is not used: it needed a third decoder per input type (beside the JSON
//! text ones) and could not carry `arbitrary_precision` numbers anyway.
//! Errors become JS `Error`s whose `code` property is [`crate::Error::code`].

use crate::config::Config;
use crate::error::Error;
use wasm_bindgen::prelude::*;

// Results go out as JSON text parsed by the engine's own JSON.parse: the core's JSON value keeps
// numbers as text (so host numbers round-trip byte-exact), which only JSON text carries.
fn to_js<T: crate::json::out::ToJson>(v: &T) -> Result<JsValue, JsValue> {
    js_sys::JSON::parse(&crate::json::out::to_string(v))
}

fn err(e: &Error) -> JsValue {
    let out = js_sys::Error::new(&e.to_string());
    let _ = js_sys::Reflect::set(
        &out,
        &JsValue::from_str("code"),
        &JsValue::from_str(e.code()),
    );
    out.into()
}

fn parse_config(json: &str) -> Result<Config, JsValue> {
    Config::from_json(json).map_err(|e| err(&e))
}

/// Crate version.
#[wasm_bindgen]
pub fn version() -> String {
    env!("CARGO_PKG_VERSION").to_string()
}

/// Validate the plugin config (JSON text) and return it with every default filled in.
#[wasm_bindgen(js_name = parseConfig)]
pub fn parse_config_js(json: &str) -> Result<JsValue, JsValue> {
    to_js(&parse_config(json)?)
}

/// Lowercase hex SHA-1 of the UTF-8 bytes of `text`.
#[wasm_bindgen(js_name = sha1Hex)]
pub fn sha1_hex(text: &str) -> String {
    crate::fingerprint_hex(text.as_bytes())
}

/// A directory name for a session id that cannot escape the sessions folder.
#[wasm_bindgen(js_name = sessionDirName)]
pub fn session_dir_name(session_id: &str) -> String {
    crate::safe_name(session_id)
}

/// Parse one message and serialise it back (round-trip check used by tests).
#[wasm_bindgen(js_name = roundTripMessage)]
pub fn round_trip_message(json: &str) -> Result<String, JsValue> {
    crate::Message::from_json(json)
        .map(|m| m.to_json())
        .map_err(|e| err(&e))
}

// ---- session engine ------------------------------------------------------------------------

/// One session's engine state, kept in wasm memory between calls of a process (Gateway mode).
/// A handle is worth it here (style rule 4): the state is large and every turn touches it.
#[wasm_bindgen]
pub struct Session {
    inner: crate::engine::Session,
    replay: Option<crate::engine::journal::ReplayReport>,
}

#[wasm_bindgen]
impl Session {
    /// Fresh state for a session.
    #[wasm_bindgen(constructor)]
    pub fn new(config_json: &str, session_id: &str) -> Result<Session, JsValue> {
        Ok(Session {
            inner: crate::engine::Session::new(parse_config(config_json)?, session_id),
            replay: None,
        })
    }

    /// Rebuild from the snapshot (or `null`) and the journal written after it.
    pub fn restore(
        config_json: &str,
        session_id: &str,
        snapshot: Option<String>,
        journal: &str,
    ) -> Result<Session, JsValue> {
        let (inner, report) = crate::engine::Session::restore(
            parse_config(config_json)?,
            session_id,
            snapshot.as_deref(),
            journal,
        )
        .map_err(|e| err(&e))?;
        Ok(Session {
            inner,
            replay: Some(report),
        })
    }

    /// What the last `restore` applied, skipped and ignored (a torn tail), or `null`.
    #[wasm_bindgen(js_name = replayReport)]
    pub fn replay_report(&self) -> Result<JsValue, JsValue> {
        to_js(&self.replay)
    }

    /// Host message indices to stringify for an assemble over `count` messages.
    pub fn need(&self, count: u32) -> Vec<u32> {
        self.inner.need(count)
    }

    /// The one plan driver ([`crate::engine::Session::try_drive`]): `need` → assemble (or
    /// compact) → on `needFull`, again with every index. `json_of(i)` returns the JSON text of
    /// host message `i`; it is called only for the indices the engine asks for.
    pub fn plan(
        &mut self,
        header_json: &str,
        compact: bool,
        force: bool,
        json_of: &js_sys::Function,
    ) -> Result<JsValue, JsValue> {
        let head = assemble_input(header_json, Vec::new(), Vec::new())?;
        let what = if compact {
            crate::engine::Drive::Compact { force }
        } else {
            crate::engine::Drive::Assemble
        };
        let driven = self.inner.try_drive(head, what, |i| {
            json_of
                .call1(&JsValue::NULL, &JsValue::from(i))
                .ok()
                .and_then(|v| v.as_string())
                .ok_or_else(|| Error::Input(format!("message {i}: the source gave no JSON text")))
        });
        to_js(&driven.map_err(|e| err(&e))?.plan)
    }

    /// Plan the messages to send. `header_json`: the `AssembleInput` fields but `messages`;
    /// `indices[k]` is the host index of the message whose JSON text is `messages[k]`.
    pub fn assemble(
        &mut self,
        header_json: &str,
        indices: Vec<u32>,
        messages: Vec<String>,
    ) -> Result<JsValue, JsValue> {
        let input = assemble_input(header_json, indices, messages)?;
        to_js(&self.inner.assemble(&input).map_err(|e| err(&e))?)
    }

    /// Host `compact()`: fold now (arguments as [`Session::assemble`]).
    pub fn compact(
        &mut self,
        header_json: &str,
        indices: Vec<u32>,
        messages: Vec<String>,
        force: bool,
    ) -> Result<JsValue, JsValue> {
        let input = assemble_input(header_json, indices, messages)?;
        to_js(&self.inner.compact(&input, force).map_err(|e| err(&e))?)
    }

    /// Record a finished turn (idempotent by advancement key). `header_json`: the
    /// `CommitInput` fields but `messages`, the turn's message JSON texts.
    #[wasm_bindgen(js_name = commitTurn)]
    pub fn commit_turn(
        &mut self,
        header_json: &str,
        messages: Vec<String>,
    ) -> Result<JsValue, JsValue> {
        let input = crate::engine::CommitInput::from_parts(header_json, messages)
            .map_err(|e| err(&e.into()))?;
        to_js(&self.inner.commit_turn(&input).map_err(|e| err(&e))?)
    }

    /// An LLM summary worth preparing now, or `null`.
    #[wasm_bindgen(js_name = summaryRequest)]
    pub fn summary_request(&mut self, now_ms: f64) -> Result<JsValue, JsValue> {
        to_js(&self.inner.summary_request(now_ms))
    }

    /// Deliver a summary (or its failure).
    #[wasm_bindgen(js_name = acceptSummary)]
    pub fn accept_summary(&mut self, request_id: &str, text: &str, ok: bool, now_ms: f64) {
        self.inner.accept_summary(request_id, text, ok, now_ms)
    }

    /// A layer-2 topic check worth sending now (`topics.useLlm`), or `null`.
    #[wasm_bindgen(js_name = topicRequest)]
    pub fn topic_request(&mut self, now_ms: f64) -> Result<JsValue, JsValue> {
        to_js(&self.inner.topic_request(now_ms))
    }

    /// Deliver a topic check's answer (or its failure): `applied`, `malformed`, `failed` or
    /// `ignored`.
    #[wasm_bindgen(js_name = acceptTopic)]
    pub fn accept_topic(&mut self, request_id: &str, text: &str, ok: bool, now_ms: f64) -> String {
        self.inner.accept_topic(request_id, text, ok, now_ms)
    }

    /// Whole state as JSON text.
    pub fn snapshot(&self) -> Result<String, JsValue> {
        self.inner.try_snapshot().map_err(|e| err(&e))
    }

    /// Journal lines produced since the last call.
    #[wasm_bindgen(js_name = takeJournal)]
    pub fn take_journal(&mut self) -> String {
        self.inner.take_journal()
    }

    /// Host `compact()` without a message list: record a fold for the next assemble and
    /// project its result.
    #[wasm_bindgen(js_name = compactRequest)]
    pub fn compact_request(&mut self, input_json: &str) -> Result<JsValue, JsValue> {
        let input: crate::engine::CompactInput = json_arg(input_json)?;
        to_js(&self.inner.compact_request(&input).map_err(|e| err(&e))?)
    }

    /// Host `compact()` without a message list: fold at the next assemble.
    #[wasm_bindgen(js_name = requestFold)]
    pub fn request_fold(&mut self, now_ms: f64) -> Result<(), JsValue> {
        self.inner.request_fold(now_ms).map_err(|e| err(&e))
    }

    /// Session statistics.
    pub fn stats(&self) -> Result<JsValue, JsValue> {
        to_js(&self.inner.stats())
    }

    /// `cachefold_topics`: `{text, details}` (`Session::topics_view`).
    #[wasm_bindgen(js_name = topicsView)]
    pub fn topics_view(&self) -> Result<JsValue, JsValue> {
        to_js(&self.inner.topics_view())
    }

    /// `cachefold_preview`: `{text, details}` (`Session::preview`).
    pub fn preview(&self) -> Result<JsValue, JsValue> {
        to_js(&self.inner.preview())
    }

    /// Where the messages of turn `t<k>` / topic `T<n>` are stored (`Session::recover_plan`).
    #[wasm_bindgen(js_name = recoverPlan)]
    pub fn recover_plan(&self, id: &str) -> Result<JsValue, JsValue> {
        to_js(&self.inner.recover_plan(id).map_err(|e| err(&e))?)
    }

    /// `cachefold_pin`: `{text, details}`; journals the pin (`Session::pin_turn`).
    #[wasm_bindgen(js_name = pinTurn)]
    pub fn pin_turn(&mut self, id: &str) -> Result<JsValue, JsValue> {
        to_js(&self.inner.pin_turn(id).map_err(|e| err(&e))?)
    }

    /// Recent per-call rows with prices (`Session::call_rows`).
    #[wasm_bindgen(js_name = callRows)]
    pub fn call_rows(&self) -> Result<JsValue, JsValue> {
        to_js(&self.inner.call_rows())
    }

    /// Deterministic lesson candidates from this session's digests.
    #[wasm_bindgen(js_name = captureLessons)]
    pub fn capture_lessons(&self, input_json: &str) -> Result<JsValue, JsValue> {
        let input: crate::lessons::capture::CaptureInput = json_arg(input_json)?;
        let digests = self.inner.state().records.iter().map(|r| &r.digest);
        to_js(&crate::lessons::capture::extract(digests, &input))
    }

    /// `{system, prompt}` of the optional LLM capture pass over this session's digests.
    #[wasm_bindgen(js_name = lessonLlmPrompt)]
    pub fn lesson_llm_prompt(&self, existing_json: &str) -> Result<JsValue, JsValue> {
        let existing: Vec<String> = json_arg(existing_json)?;
        let digests = self.inner.state().records.iter().map(|r| &r.digest);
        let (system, prompt) = crate::lessons::capture::llm_prompt(digests, &existing);
        to_js(&crate::json::out::object_of([
            ("system", system.into()),
            ("prompt", prompt.into()),
            ("maxTokens", crate::lessons::capture::LLM_MAX_TOKENS.into()),
        ]))
    }
}

fn assemble_input(
    header_json: &str,
    indices: Vec<u32>,
    messages: Vec<String>,
) -> Result<crate::engine::AssembleInput, JsValue> {
    crate::engine::AssembleInput::from_parts(header_json, indices, messages)
        .map_err(|e| err(&e.into()))
}

/// A structured input: JSON text decoded by [`crate::json`].
fn json_arg<T: crate::json::FromJson>(s: &str) -> Result<T, JsValue> {
    crate::json::from_str(s).map_err(|e| err(&e.into()))
}

// ---- tool-output bindings (tools helper) ----
// Tool-output safety: shrink/compact tool results, before_tool_call defaults, recover, search.

/// A tool name from the host: a JS string, else a `CACHEFOLD_INPUT` error. Declared as a
/// `JsValue` because wasm-bindgen's `&str` glue does not check its argument: a number or an
/// object there wrote out of bounds and trapped the instance.
fn string_arg(what: &str, v: &JsValue) -> Result<String, JsValue> {
    v.as_string().ok_or_else(|| {
        err(&Error::Input(format!(
            "{what} must be a string, got {}",
            v.js_typeof().as_string().unwrap_or_default()
        )))
    })
}

fn tools_json_arg(s: &str) -> Result<crate::json::Value, JsValue> {
    crate::json::parse::from_str(s).map_err(|e| err(&Error::Input(e.to_string())))
}

/// Shrink an oversized tool result and (when `compact_details`) bound its `details`.
/// `message_json`: a toolResult message or a bare `{content, details}` middleware result.
#[wasm_bindgen(js_name = processToolResult)]
pub fn process_tool_result_js(
    config_json: &str,
    tool_name: JsValue,
    message_json: String,
    compact_details: bool,
) -> Result<JsValue, JsValue> {
    let tool_name = string_arg("toolName", &tool_name)?;
    let tool_name = tool_name.as_str();
    let cfg = parse_config(config_json)?;
    let message = tools_json_arg(&message_json)?;
    drop(message_json); // a 100 MB result: free the input copy before the artifact is built
    let mut p =
        crate::tools::shrink::process_tool_result(&cfg, tool_name, message, compact_details)
            .map_err(|e| err(&e))?;
    // The artifact text (up to the whole tool output) goes out as a plain JS string, not through
    // to_js's JSON text: escaping and re-parsing 1 MB costs ~2 ms of the persist hook's budget.
    let artifact_text = p.artifact_text.take();
    let out = to_js(&p)?;
    if let Some(text) = artifact_text {
        js_sys::Reflect::set(
            &out,
            &JsValue::from_str("artifactText"),
            &JsValue::from_str(&text),
        )?;
    }
    Ok(out)
}

/// Params with `toolDefaults` filled in, as JSON text, or `undefined` when nothing changes.
#[wasm_bindgen(js_name = applyToolDefaults)]
pub fn apply_tool_defaults_js(
    config_json: &str,
    tool_name: JsValue,
    params_json: &str,
) -> Result<Option<String>, JsValue> {
    let tool_name = string_arg("toolName", &tool_name)?;
    let tool_name = tool_name.as_str();
    let cfg = parse_config(config_json)?;
    let params = tools_json_arg(params_json)?;
    Ok(
        crate::tools::defaults::apply_tool_defaults(&cfg, tool_name, &params)
            .map(|v| crate::json::out::to_string(&v)),
    )
}

/// Lowercase hex SHA-1 of `text`: the artifact id.
#[wasm_bindgen(js_name = artifactId)]
pub fn artifact_id_js(text: &str) -> String {
    crate::tools::shrink::artifact_id(text)
}

/// The artifact id in our header when `text` was already shrunk, else `undefined`.
#[wasm_bindgen(js_name = isShrunk)]
pub fn is_shrunk_js(text: &str) -> Option<String> {
    crate::tools::shrink::is_shrunk(text)
}

/// `{kind: "artifact"|"fold"|"condensed", id}` for a `cachefold_recover` id (decided by the
/// id's whole shape); throws `CACHEFOLD_INVALID_ID`.
#[wasm_bindgen(js_name = parseRecoverTarget)]
pub fn parse_recover_target_js(id: &str) -> Result<JsValue, JsValue> {
    to_js(&crate::tools::recover::parse_target(id).map_err(|e| err(&e))?)
}

/// `{text, details}` of `cachefold_recover` for `params_json` (`{lines?, chars?, maxChars?}`).
#[wasm_bindgen(js_name = recoverAnswer)]
pub fn recover_answer_js(id: &str, text: &str, params_json: &str) -> Result<JsValue, JsValue> {
    let params = tools_json_arg(params_json)?;
    to_js(&crate::tools::recover::answer(id, text, &params).map_err(|e| err(&e))?)
}

/// `{text, hits, more}` of `cachefold_search` over `docs_json` (`[{id, kind, text}]`).
#[wasm_bindgen(js_name = searchAnswer)]
pub fn search_answer_js(
    docs_json: &str,
    query: &str,
    regex: bool,
    max_hits: u32,
) -> Result<JsValue, JsValue> {
    let docs: Vec<crate::tools::search::OwnedDoc> = json_arg(docs_json)?;
    to_js(
        &crate::tools::search::answer(&docs, query, regex, max_hits as usize)
            .map_err(|e| err(&e))?,
    )
}

/// Bounded copy of a `details` value (JSON text in, JSON text out).
#[wasm_bindgen(js_name = compactDetails)]
pub fn compact_details_js(details_json: &str) -> Result<String, JsValue> {
    Ok(crate::json::out::to_string(
        &crate::tools::details::compact_details(&tools_json_arg(details_json)?),
    ))
}

// ---- lessons bindings (js/lessons.js) ----

/// Parse and validate a lesson file; throws `CACHEFOLD_INPUT` with the reason.
#[wasm_bindgen(js_name = lessonParse)]
pub fn lesson_parse_js(text: &str) -> Result<JsValue, JsValue> {
    to_js(&crate::lessons::Lesson::parse(text).map_err(|e| err(&e))?)
}

/// Validate a lesson (JSON) and render its file text (secrets redacted).
#[wasm_bindgen(js_name = lessonRender)]
pub fn lesson_render_js(lesson_json: &str) -> Result<String, JsValue> {
    let l: crate::lessons::Lesson = json_arg(lesson_json)?;
    l.validate().map_err(|e| err(&e))?;
    Ok(l.render())
}

/// A lesson file re-rendered with the hash of `inputs_json` (`[{entry, content}]`).
#[wasm_bindgen(js_name = lessonStamp)]
pub fn lesson_stamp_js(text: &str, inputs_json: &str) -> Result<String, JsValue> {
    let mut l = crate::lessons::Lesson::parse(text).map_err(|e| err(&e))?;
    let inputs: Vec<crate::lessons::FpInput> = json_arg(inputs_json)?;
    l.stamp(&inputs);
    Ok(l.render())
}

/// `{stale, changed: [{entry, what}]}` of a lesson file against `inputs_json`.
#[wasm_bindgen(js_name = lessonStaleness)]
pub fn lesson_staleness_js(text: &str, inputs_json: &str) -> Result<JsValue, JsValue> {
    let l = crate::lessons::Lesson::parse(text).map_err(|e| err(&e))?;
    let inputs: Vec<crate::lessons::FpInput> = json_arg(inputs_json)?;
    to_js(&l.staleness(&inputs))
}

/// Classify a first request.
#[wasm_bindgen(js_name = lessonsClassify)]
pub fn lessons_classify_js(request: &str) -> Result<JsValue, JsValue> {
    to_js(&crate::lessons::classify::classify(request))
}

/// The session's lessons decision for `input_json` ([`crate::lessons::select::DecideInput`]).
#[wasm_bindgen(js_name = lessonsDecide)]
pub fn lessons_decide_js(input_json: &str) -> Result<JsValue, JsValue> {
    let input: crate::lessons::select::DecideInput = json_arg(input_json)?;
    to_js(&crate::lessons::select::decide(&input))
}

/// Candidates from the LLM capture answer.
#[wasm_bindgen(js_name = lessonsParseLlm)]
pub fn lessons_parse_llm_js(answer: &str, input_json: &str) -> Result<JsValue, JsValue> {
    let input: crate::lessons::capture::CaptureInput = json_arg(input_json)?;
    to_js(&crate::lessons::capture::parse_llm(answer, &input))
}

/// `text` with secrets replaced by `[REDACTED]`.
#[wasm_bindgen(js_name = redactSecrets)]
pub fn redact_secrets_js(text: &str) -> String {
    crate::lessons::redact::redact(text)
}

/// A lesson name from free text.
#[wasm_bindgen(js_name = lessonSlug)]
pub fn lesson_slug_js(text: &str) -> String {
    crate::lessons::slug(text)
}
