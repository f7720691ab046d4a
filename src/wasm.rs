//! wasm-bindgen exports: convert types, call the core, convert back. No logic lives here.
//!
//! Every core function is an export of its own and the engine is the `Session` class, each with
//! typed arguments and a declared result type (the TypeScript interfaces at the end of this file
//! go into `pkg/cachefold.d.ts`). `js/core.js` wraps them in one error mapping and nothing else.
//!
//! Conventions:
//! * **Host messages and structured inputs cross as JSON text** (`&str`, `Vec<String>`): a host
//!   message must come back byte for byte, and the JS callers hold JSON text already (the
//!   config, a lesson, search documents). Scalars are plain arguments.
//! * **Structured results are JSON text turned into plain objects by `JSON.parse`**
//!   ([`js_sys::JSON::parse`]). The results carry host values (config tables, stats, views),
//!   whose numbers `serde_json` keeps as their text (`arbitrary_precision`): serde-wasm-bindgen
//!   would hand those to JS as `{"$serde_json::private::Number": …}` objects, and `JSON.parse`
//!   of one string is also the cheapest way to build a large object in V8. Bulky plain text (an
//!   artifact) is set as a JS string beside it; string results cross as themselves
//!   (`undefined` for none).
//! * `Session.plan` takes a JS function as its message source: the core's one driver
//!   ([`crate::engine::Session::try_drive`]) calls it with a host index and gets that message's
//!   JSON text, only for the indices it needs.
//! * Errors become JS `Error`s whose `code` property is [`crate::Error::code`].

use crate::config::Config;
use crate::error::Error;
use serde::de::DeserializeOwned;
use serde_json::Value;
use wasm_bindgen::prelude::*;

type JsResult<T> = Result<T, JsValue>;

/// `v` as a plain JS object, through its JSON text.
fn to_js<T: serde::Serialize + ?Sized>(v: &T) -> JsResult<JsValue> {
    js_sys::JSON::parse(&crate::to_json(v))
}

/// A core error as a JS `Error` with its stable `code`.
fn err(e: &Error) -> JsValue {
    let out = js_sys::Error::new(&e.to_string());
    let _ = js_sys::Reflect::set(&out, &"code".into(), &e.code().into());
    out.into()
}

fn input_err(msg: String) -> JsValue {
    err(&Error::Input(msg))
}

fn core<T>(r: crate::error::Result<T>) -> JsResult<T> {
    r.map_err(|e| err(&e))
}

fn config(json: &str) -> JsResult<Config> {
    core(Config::from_json(json))
}

/// A structured input: JSON text decoded by its type's `Deserialize`.
fn json_arg<T: DeserializeOwned>(s: &str) -> JsResult<T> {
    serde_json::from_str(s).map_err(|e| input_err(e.to_string()))
}

/// A text argument, checked: wasm-bindgen's glue does not check a `&str` argument, and a
/// non-string there would trap the instance.
fn js_text(v: &JsValue, name: &str) -> JsResult<String> {
    v.as_string()
        .ok_or_else(|| input_err(format!("{name} must be a string")))
}

/// A state file's text, given as a string or as the file's bytes (a `Uint8Array`, as the shim
/// reads it): bytes are copied into the module in one piece instead of being encoded character
/// by character, which dominated a cold restore. Invalid UTF-8 is replaced by U+FFFD, as Node's
/// `utf8` decoding replaces it, so both forms restore the same state.
fn js_state_text(v: &JsValue, name: &str) -> JsResult<String> {
    if let Some(bytes) = v.dyn_ref::<js_sys::Uint8Array>() {
        return Ok(String::from_utf8(bytes.to_vec())
            .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned()));
    }
    v.as_string()
        .ok_or_else(|| input_err(format!("{name} must be a string or a Uint8Array")))
}

/// A tool name from the host, checked rather than trusted (named as `typeof` would).
fn tool_name(v: &JsValue) -> JsResult<String> {
    if let Some(s) = v.as_string() {
        return Ok(s);
    }
    let got = if v.is_undefined() {
        "undefined"
    } else if v.as_bool().is_some() {
        "boolean"
    } else if v.as_f64().is_some() {
        "number"
    } else {
        "object"
    };
    Err(input_err(format!("toolName must be a string, got {got}")))
}

/// The crate version.
#[wasm_bindgen]
pub fn version() -> String {
    env!("CARGO_PKG_VERSION").into()
}

/// The plugin config with every default filled in.
#[wasm_bindgen(js_name = parseConfig, unchecked_return_type = "CachefoldConfig")]
pub fn parse_config(
    #[wasm_bindgen(unchecked_param_type = "string")] config_json: JsValue,
) -> JsResult<JsValue> {
    let config_json = &js_text(&config_json, "config_json")?;
    to_js(&config(config_json)?)
}

/// SHA-1 of the UTF-8 text, hex.
#[wasm_bindgen(js_name = sha1Hex)]
pub fn sha1_hex(
    #[wasm_bindgen(unchecked_param_type = "string")] text: JsValue,
) -> JsResult<String> {
    let text = &js_text(&text, "text")?;
    Ok(crate::fingerprint_hex(text.as_bytes()))
}

/// A directory name for a session id that cannot escape the sessions folder.
#[wasm_bindgen(js_name = sessionDirName)]
pub fn session_dir_name(
    #[wasm_bindgen(unchecked_param_type = "string")] session_id: JsValue,
) -> JsResult<String> {
    let session_id = &js_text(&session_id, "session_id")?;
    Ok(crate::safe_name(session_id))
}

// ---- tool-output safety: shrink, defaults, recover, search ------------------------------------

/// Shrink an oversized tool result (a toolResult message or a bare `{content, details}`
/// middleware result) and, when `compactDetails`, bound its `details`.
#[wasm_bindgen(js_name = processToolResult, unchecked_return_type = "ProcessedToolResult")]
pub fn process_tool_result(
    config_json: &str,
    #[wasm_bindgen(unchecked_param_type = "string")] tool: JsValue,
    message_json: &str,
    compact_details: bool,
) -> JsResult<JsValue> {
    let tool = tool_name(&tool)?;
    let cfg = config(config_json)?;
    let message: Value = json_arg(message_json)?;
    let mut p = core(crate::tools::shrink::process_tool_result(
        &cfg,
        &tool,
        message,
        compact_details,
    ))?;
    // The artifact text (up to the whole tool output) goes out as a plain JS string, not inside
    // the JSON text: escaping and re-parsing 1 MB costs ~2 ms of the persist hook's budget.
    let artifact_text = p.artifact_text.take();
    let out = to_js(&p)?;
    if let Some(text) = artifact_text {
        js_sys::Reflect::set(&out, &"artifactText".into(), &text.into())?;
    }
    Ok(out)
}

/// Params with `toolDefaults` filled in, as JSON text, or `undefined` when nothing changes.
#[wasm_bindgen(js_name = applyToolDefaults)]
pub fn apply_tool_defaults(
    config_json: &str,
    #[wasm_bindgen(unchecked_param_type = "string")] tool: JsValue,
    params_json: &str,
) -> JsResult<Option<String>> {
    let tool = tool_name(&tool)?;
    let cfg = config(config_json)?;
    let params: Value = json_arg(params_json)?;
    Ok(
        crate::tools::defaults::apply_tool_defaults(&cfg, &tool, &params)
            .map(|v| crate::to_json(&v)),
    )
}

/// The artifact id (content address) of a text.
#[wasm_bindgen(js_name = artifactId)]
pub fn artifact_id(
    #[wasm_bindgen(unchecked_param_type = "string")] text: JsValue,
) -> JsResult<String> {
    let text = &js_text(&text, "text")?;
    Ok(crate::tools::shrink::artifact_id(text))
}

/// The artifact id in our header when the text was already shrunk, else `undefined`.
#[wasm_bindgen(js_name = isShrunk)]
pub fn is_shrunk(
    #[wasm_bindgen(unchecked_param_type = "string")] text: JsValue,
) -> JsResult<Option<String>> {
    let text = &js_text(&text, "text")?;
    Ok(crate::tools::shrink::is_shrunk(text))
}

/// `{kind, id}` for a `cachefold_recover` id; throws `CACHEFOLD_INVALID_ID`.
#[wasm_bindgen(js_name = parseRecoverTarget, unchecked_return_type = "RecoverTarget")]
pub fn parse_recover_target(
    #[wasm_bindgen(unchecked_param_type = "string")] id: JsValue,
) -> JsResult<JsValue> {
    let id = &js_text(&id, "id")?;
    to_js(&core(crate::tools::recover::parse_target(id))?)
}

/// `{text, details}` of `cachefold_recover` over the stored text; params `{lines?, chars?, maxChars?}`.
#[wasm_bindgen(js_name = recoverAnswer, unchecked_return_type = "ToolAnswer")]
pub fn recover_answer(
    #[wasm_bindgen(unchecked_param_type = "string")] id: JsValue,
    #[wasm_bindgen(unchecked_param_type = "string")] text: JsValue,
    #[wasm_bindgen(unchecked_param_type = "string")] params_json: JsValue,
) -> JsResult<JsValue> {
    let id = &js_text(&id, "id")?;
    let text = &js_text(&text, "text")?;
    let params_json = &js_text(&params_json, "params_json")?;
    let params: Value = json_arg(params_json)?;
    to_js(&core(crate::tools::recover::answer(id, text, &params))?)
}

/// `{text, hits, more}` of `cachefold_search` over the documents (`[{id, kind, text}]`).
#[wasm_bindgen(js_name = searchAnswer, unchecked_return_type = "SearchAnswer")]
pub fn search_answer(
    #[wasm_bindgen(unchecked_param_type = "string")] docs_json: JsValue,
    #[wasm_bindgen(unchecked_param_type = "string")] query: JsValue,
    regex: bool,
    max_hits: u32,
) -> JsResult<JsValue> {
    let docs_json = &js_text(&docs_json, "docs_json")?;
    let query = &js_text(&query, "query")?;
    let docs: Vec<crate::tools::search::OwnedDoc> = json_arg(docs_json)?;
    to_js(&core(crate::tools::search::answer(
        &docs,
        query,
        regex,
        max_hits as usize,
    ))?)
}

/// Bounded copy of a `details` value (JSON text in, JSON text out).
#[wasm_bindgen(js_name = compactDetails)]
pub fn compact_details(
    #[wasm_bindgen(unchecked_param_type = "string")] details_json: JsValue,
) -> JsResult<String> {
    let details_json = &js_text(&details_json, "details_json")?;
    let v: Value = json_arg(details_json)?;
    Ok(crate::to_json(&crate::tools::details::compact_details(&v)))
}

// ---- lessons ----------------------------------------------------------------------------------

/// A lesson file's fields.
#[wasm_bindgen(js_name = lessonParse, unchecked_return_type = "Lesson")]
pub fn lesson_parse(
    #[wasm_bindgen(unchecked_param_type = "string")] text: JsValue,
) -> JsResult<JsValue> {
    let text = &js_text(&text, "text")?;
    to_js(&core(crate::lessons::Lesson::parse(text))?)
}

/// Validate a lesson (JSON) and render its file text (secrets redacted).
#[wasm_bindgen(js_name = lessonRender)]
pub fn lesson_render(
    #[wasm_bindgen(unchecked_param_type = "string")] lesson_json: JsValue,
) -> JsResult<String> {
    let lesson_json = &js_text(&lesson_json, "lesson_json")?;
    let l: crate::lessons::Lesson = json_arg(lesson_json)?;
    core(l.validate())?;
    Ok(l.render())
}

/// A lesson file re-rendered with the hash of the inputs (`[{entry, content}]`).
#[wasm_bindgen(js_name = lessonStamp)]
pub fn lesson_stamp(
    #[wasm_bindgen(unchecked_param_type = "string")] text: JsValue,
    #[wasm_bindgen(unchecked_param_type = "string")] inputs_json: JsValue,
) -> JsResult<String> {
    let text = &js_text(&text, "text")?;
    let inputs_json = &js_text(&inputs_json, "inputs_json")?;
    let mut l = core(crate::lessons::Lesson::parse(text))?;
    let inputs: Vec<crate::lessons::FpInput> = json_arg(inputs_json)?;
    l.stamp(&inputs);
    Ok(l.render())
}

/// `{stale, changed: [{entry, what}]}` of a lesson file against the inputs.
#[wasm_bindgen(js_name = lessonStaleness, unchecked_return_type = "LessonStaleness")]
pub fn lesson_staleness(
    #[wasm_bindgen(unchecked_param_type = "string")] text: JsValue,
    #[wasm_bindgen(unchecked_param_type = "string")] inputs_json: JsValue,
) -> JsResult<JsValue> {
    let text = &js_text(&text, "text")?;
    let inputs_json = &js_text(&inputs_json, "inputs_json")?;
    let l = core(crate::lessons::Lesson::parse(text))?;
    let inputs: Vec<crate::lessons::FpInput> = json_arg(inputs_json)?;
    to_js(&l.staleness(&inputs))
}

/// Which lessons to inject (`DecideInput` JSON).
#[wasm_bindgen(js_name = lessonsDecide, unchecked_return_type = "LessonDecision")]
pub fn lessons_decide(
    #[wasm_bindgen(unchecked_param_type = "string")] input_json: JsValue,
) -> JsResult<JsValue> {
    let input_json = &js_text(&input_json, "input_json")?;
    let input: crate::lessons::select::DecideInput = json_arg(input_json)?;
    to_js(&crate::lessons::select::decide(&input))
}

/// Candidates from the LLM capture answer (`CaptureInput` JSON).
#[wasm_bindgen(js_name = lessonsParseLlm, unchecked_return_type = "Lesson[]")]
pub fn lessons_parse_llm(
    #[wasm_bindgen(unchecked_param_type = "string")] answer: JsValue,
    #[wasm_bindgen(unchecked_param_type = "string")] input_json: JsValue,
) -> JsResult<JsValue> {
    let answer = &js_text(&answer, "answer")?;
    let input_json = &js_text(&input_json, "input_json")?;
    let input: crate::lessons::capture::CaptureInput = json_arg(input_json)?;
    to_js(&crate::lessons::capture::parse_llm(answer, &input))
}

/// The text with secrets replaced by `[REDACTED]` markers.
#[wasm_bindgen(js_name = redactSecrets)]
pub fn redact_secrets(
    #[wasm_bindgen(unchecked_param_type = "string")] text: JsValue,
) -> JsResult<String> {
    let text = &js_text(&text, "text")?;
    Ok(crate::lessons::redact::redact(text))
}

/// A lesson name from free text.
#[wasm_bindgen(js_name = lessonSlug)]
pub fn lesson_slug(
    #[wasm_bindgen(unchecked_param_type = "string")] text: JsValue,
) -> JsResult<String> {
    let text = &js_text(&text, "text")?;
    Ok(crate::lessons::slug(text))
}

// ---- session engine ---------------------------------------------------------------------------

/// One session's engine state, kept in wasm memory between calls of a process (Gateway mode).
#[wasm_bindgen]
pub struct Session {
    inner: crate::engine::Session,
    replay: Option<crate::engine::journal::ReplayReport>,
}

fn assemble_input(
    header_json: &str,
    indices: Vec<u32>,
    messages: Vec<String>,
) -> JsResult<crate::engine::AssembleInput> {
    core(crate::engine::AssembleInput::from_parts(
        header_json,
        indices,
        messages,
    ))
}

#[wasm_bindgen]
impl Session {
    /// Fresh state for a session.
    #[wasm_bindgen(constructor)]
    pub fn new(
        #[wasm_bindgen(unchecked_param_type = "string")] config_json: JsValue,
        #[wasm_bindgen(unchecked_param_type = "string")] session_id: JsValue,
    ) -> JsResult<Session> {
        let config_json = &js_text(&config_json, "config_json")?;
        let session_id = &js_text(&session_id, "session_id")?;
        Ok(Session {
            inner: crate::engine::Session::new(config(config_json)?, session_id),
            replay: None,
        })
    }

    /// Rebuild from the snapshot (or `null`) and the journal written after it, each as text or
    /// as the file's UTF-8 bytes.
    pub fn restore(
        #[wasm_bindgen(unchecked_param_type = "string")] config_json: JsValue,
        #[wasm_bindgen(unchecked_param_type = "string")] session_id: JsValue,
        #[wasm_bindgen(unchecked_param_type = "string | Uint8Array | null | undefined")]
        snapshot: JsValue,
        #[wasm_bindgen(unchecked_param_type = "string | Uint8Array")] journal: JsValue,
    ) -> JsResult<Session> {
        let config_json = &js_text(&config_json, "config_json")?;
        let session_id = &js_text(&session_id, "session_id")?;
        let snapshot = if snapshot.is_null() || snapshot.is_undefined() {
            None
        } else {
            Some(js_state_text(&snapshot, "snapshot")?)
        };
        let journal = &js_state_text(&journal, "journal")?;
        let (inner, report) = core(crate::engine::Session::restore(
            config(config_json)?,
            session_id,
            snapshot.as_deref(),
            journal,
        ))?;
        Ok(Session {
            inner,
            replay: Some(report),
        })
    }

    /// The one plan driver ([`crate::engine::Session::try_drive`]): `need` → assemble (or
    /// compact) → on `needFull`, again with every index. `jsonOf(i)` returns the JSON text of
    /// host message `i`, as a string or as its UTF-8 bytes; it is called only for the indices
    /// the engine asks for. Bytes (Node's `Buffer.from(text)`) cross in one copy: a string is
    /// encoded by the glue char by char (a long first fetch is tens of megabytes).
    #[wasm_bindgen(unchecked_return_type = "AssemblePlan")]
    pub fn plan(
        &mut self,
        header_json: &str,
        compact: bool,
        force: bool,
        #[wasm_bindgen(
            js_name = jsonOf,
            unchecked_param_type = "(index: number) => string | Uint8Array"
        )]
        json_of: &js_sys::Function,
    ) -> JsResult<JsValue> {
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
                .and_then(|v| match v.dyn_ref::<js_sys::Uint8Array>() {
                    Some(bytes) => String::from_utf8(bytes.to_vec()).ok(),
                    None => v.as_string(),
                })
                .ok_or_else(|| Error::Input(format!("message {i}: the source gave no JSON text")))
        });
        to_js(&core(driven)?.plan)
    }

    /// What the last `restore` applied, skipped and ignored (a torn tail), or `null`.
    #[wasm_bindgen(js_name = replayReport, unchecked_return_type = "ReplayReport | null")]
    pub fn replay_report(&self) -> JsResult<JsValue> {
        to_js(&self.replay)
    }

    /// Host message indices to stringify for an assemble over `count` messages.
    pub fn need(&self, count: u32) -> Vec<u32> {
        self.inner.need(count)
    }

    /// Plan the messages to send. The header: the `AssembleInput` fields but `messages`;
    /// `indices[k]` is the host index of the message whose JSON text is `messages[k]`.
    #[wasm_bindgen(unchecked_return_type = "AssemblePlan")]
    pub fn assemble(
        &mut self,
        #[wasm_bindgen(unchecked_param_type = "string")] header_json: JsValue,
        indices: Vec<u32>,
        messages: Vec<String>,
    ) -> JsResult<JsValue> {
        let header_json = &js_text(&header_json, "header_json")?;
        let input = assemble_input(header_json, indices, messages)?;
        to_js(&core(self.inner.assemble(&input))?)
    }

    /// Host `compact()` with the messages: fold now (as `assemble`, plus `force`).
    #[wasm_bindgen(unchecked_return_type = "AssemblePlan")]
    pub fn compact(
        &mut self,
        #[wasm_bindgen(unchecked_param_type = "string")] header_json: JsValue,
        indices: Vec<u32>,
        messages: Vec<String>,
        force: bool,
    ) -> JsResult<JsValue> {
        let header_json = &js_text(&header_json, "header_json")?;
        let input = assemble_input(header_json, indices, messages)?;
        to_js(&core(self.inner.compact(&input, force))?)
    }

    /// Record a finished turn (idempotent by advancement key). The header: the `CommitInput`
    /// fields but `messages`, the turn's message JSON texts.
    #[wasm_bindgen(js_name = commitTurn, unchecked_return_type = "CommitOutcome")]
    pub fn commit_turn(
        &mut self,
        #[wasm_bindgen(unchecked_param_type = "string")] header_json: JsValue,
        messages: Vec<String>,
    ) -> JsResult<JsValue> {
        let header_json = &js_text(&header_json, "header_json")?;
        let input = core(crate::engine::CommitInput::from_parts(
            header_json,
            messages,
        ))?;
        to_js(&core(self.inner.commit_turn(&input))?)
    }

    /// An LLM summary worth preparing now, or `null`.
    #[wasm_bindgen(js_name = summaryRequest, unchecked_return_type = "SummaryRequest | null")]
    pub fn summary_request(&mut self, now_ms: f64) -> JsResult<JsValue> {
        to_js(&self.inner.summary_request(now_ms))
    }

    /// Deliver a summary (or its failure).
    #[wasm_bindgen(js_name = acceptSummary)]
    pub fn accept_summary(
        &mut self,
        #[wasm_bindgen(unchecked_param_type = "string")] request_id: JsValue,
        #[wasm_bindgen(unchecked_param_type = "string")] text: JsValue,
        ok: bool,
        now_ms: f64,
    ) -> JsResult<()> {
        let request_id = &js_text(&request_id, "request_id")?;
        let text = &js_text(&text, "text")?;
        self.inner.accept_summary(request_id, text, ok, now_ms);
        Ok(())
    }

    /// A layer-2 topic check worth sending now (`topics.useLlm`), or `null`.
    #[wasm_bindgen(js_name = topicRequest, unchecked_return_type = "TopicRequest | null")]
    pub fn topic_request(&mut self, now_ms: f64) -> JsResult<JsValue> {
        to_js(&self.inner.topic_request(now_ms))
    }

    /// Deliver a topic check's answer: `applied`, `malformed`, `failed` or `ignored`.
    #[wasm_bindgen(js_name = acceptTopic)]
    pub fn accept_topic(
        &mut self,
        #[wasm_bindgen(unchecked_param_type = "string")] request_id: JsValue,
        #[wasm_bindgen(unchecked_param_type = "string")] text: JsValue,
        ok: bool,
        now_ms: f64,
    ) -> JsResult<String> {
        let request_id = &js_text(&request_id, "request_id")?;
        let text = &js_text(&text, "text")?;
        Ok(self.inner.accept_topic(request_id, text, ok, now_ms))
    }

    /// Whole state as JSON text.
    pub fn snapshot(&self) -> JsResult<String> {
        core(self.inner.try_snapshot())
    }

    /// Journal lines produced since the last call. An error when events passed the journal
    /// limit unencoded (`setJournalLimit`): only a snapshot holds them.
    #[wasm_bindgen(js_name = takeJournal)]
    pub fn take_journal(&mut self) -> JsResult<String> {
        core(self.inner.try_take_journal())
    }

    /// Host `compact()` without a message list: record a fold for the next assemble and project
    /// its result (`CompactInput` JSON).
    #[wasm_bindgen(js_name = compactRequest, unchecked_return_type = "CompactAnswer")]
    pub fn compact_request(
        &mut self,
        #[wasm_bindgen(unchecked_param_type = "string")] input_json: JsValue,
    ) -> JsResult<JsValue> {
        let input_json = &js_text(&input_json, "input_json")?;
        let input: crate::engine::CompactInput = json_arg(input_json)?;
        to_js(&core(self.inner.compact_request(&input))?)
    }

    /// Fold at the next assemble.
    #[wasm_bindgen(js_name = requestFold)]
    pub fn request_fold(&mut self, now_ms: f64) -> JsResult<()> {
        core(self.inner.request_fold(now_ms))
    }

    /// The session's counters, prices and state (`cachefold_stats`, `/cachefold`).
    #[wasm_bindgen(unchecked_return_type = "SessionStats")]
    pub fn stats(&self) -> JsResult<JsValue> {
        to_js(&self.inner.view().stats())
    }

    /// `cachefold_topics`: `{text, details}`.
    #[wasm_bindgen(js_name = topicsView, unchecked_return_type = "ToolAnswer")]
    pub fn topics_view(&self) -> JsResult<JsValue> {
        to_js(&self.inner.view().topics_view())
    }

    /// `cachefold_preview`: `{text, details}`.
    #[wasm_bindgen(unchecked_return_type = "ToolAnswer")]
    pub fn preview(&self) -> JsResult<JsValue> {
        to_js(&self.inner.view().preview())
    }

    /// Where the messages of turn `t<k>` / topic `T<n>` are stored.
    #[wasm_bindgen(js_name = recoverPlan, unchecked_return_type = "RecoverPlan")]
    pub fn recover_plan(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] id: JsValue,
    ) -> JsResult<JsValue> {
        let id = &js_text(&id, "id")?;
        to_js(&core(self.inner.view().recover_plan(id))?)
    }

    /// `cachefold_pin`: `{text, details}`; journals the pin.
    #[wasm_bindgen(js_name = pinTurn, unchecked_return_type = "ToolAnswer")]
    pub fn pin_turn(
        &mut self,
        #[wasm_bindgen(unchecked_param_type = "string")] id: JsValue,
    ) -> JsResult<JsValue> {
        let id = &js_text(&id, "id")?;
        to_js(&core(self.inner.pin_turn(id))?)
    }

    /// Recent per-call rows with prices.
    #[wasm_bindgen(js_name = callRows, unchecked_return_type = "CallRow[]")]
    pub fn call_rows(&self) -> JsResult<JsValue> {
        to_js(&self.inner.view().call_rows())
    }

    /// Deterministic lesson candidates from this session's digests (`CaptureInput` JSON).
    #[wasm_bindgen(js_name = captureLessons, unchecked_return_type = "Lesson[]")]
    pub fn capture_lessons(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] input_json: JsValue,
    ) -> JsResult<JsValue> {
        let input_json = &js_text(&input_json, "input_json")?;
        let input: crate::lessons::capture::CaptureInput = json_arg(input_json)?;
        let digests = self.inner.state().records.iter().map(|r| &r.digest);
        to_js(&crate::lessons::capture::extract(digests, &input))
    }

    /// `{system, prompt, maxTokens}` of the optional LLM capture pass over this session's
    /// digests; `existing_json`: the JSON list of existing lesson names.
    #[wasm_bindgen(js_name = lessonLlmPrompt, unchecked_return_type = "LlmPrompt")]
    pub fn lesson_llm_prompt(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] existing_json: JsValue,
    ) -> JsResult<JsValue> {
        let existing_json = &js_text(&existing_json, "existing_json")?;
        let existing: Vec<String> = json_arg(existing_json)?;
        let digests = self.inner.state().records.iter().map(|r| &r.digest);
        let (system, prompt) = crate::lessons::capture::llm_prompt(digests, &existing);
        to_js(&crate::object_of([
            ("system", system.into()),
            ("prompt", prompt.into()),
            ("maxTokens", crate::lessons::capture::LLM_MAX_TOKENS.into()),
        ]))
    }
}

#[wasm_bindgen(typescript_custom_section)]
const TS_TYPES: &str = include_str!("wasm.d.ts");

// ---- shim rules kept in the core: profiles, model gating, lesson gating ----------------------

/// The plugin config as the host holds it (`input_json`: its JSON, `null` for none) resolved
/// key by key: the config to run on and every problem found, worded from the manifest's
/// `configSchema` (`schema_json`, `null` when unreadable).
#[wasm_bindgen(js_name = resolveConfig, unchecked_return_type = "ResolvedConfig")]
pub fn resolve_config(
    #[wasm_bindgen(unchecked_param_type = "string")] input_json: JsValue,
    #[wasm_bindgen(unchecked_param_type = "string")] schema_json: JsValue,
) -> JsResult<JsValue> {
    let input: Value = json_arg(&js_text(&input_json, "input_json")?)?;
    let schema: Value = json_arg(&js_text(&schema_json, "schema_json")?)?;
    to_js(&crate::config::resolve::resolve(&input, &schema))
}

/// The knobs of profile `name`, `undefined` for an unknown name.
#[wasm_bindgen(js_name = profileKnobs, unchecked_return_type = "ProfileKnobs | undefined")]
pub fn profile_knobs(
    #[wasm_bindgen(unchecked_param_type = "string")] name: JsValue,
) -> JsResult<JsValue> {
    let name = &js_text(&name, "name")?;
    match crate::config::profile::knobs(name) {
        Some(k) => to_js(&k),
        None => Ok(JsValue::UNDEFINED),
    }
}

/// Whether the engine manages context for `model` under this config (mode and targetModels).
#[wasm_bindgen(js_name = modelManaged)]
pub fn model_managed(
    #[wasm_bindgen(unchecked_param_type = "string")] config_json: JsValue,
    #[wasm_bindgen(unchecked_param_type = "string")] model: JsValue,
) -> JsResult<bool> {
    let config_json = &js_text(&config_json, "config_json")?;
    let model = js_text(&model, "model")?;
    Ok(crate::engine::model_managed(
        &config(config_json)?,
        Some(&model),
    ))
}

/// A session that gets no lessons, decided before reading any; `undefined`: read them and call
/// `lessonsDecide`.
#[wasm_bindgen(js_name = lessonsGate, unchecked_return_type = "LessonGate | undefined")]
pub fn lessons_gate(
    #[wasm_bindgen(unchecked_param_type = "string")] request: JsValue,
    messages_before: u32,
) -> JsResult<JsValue> {
    let request = &js_text(&request, "request")?;
    match crate::lessons::select::gate(request, u64::from(messages_before)) {
        Some(g) => to_js(&g),
        None => Ok(JsValue::UNDEFINED),
    }
}

// --- charts (src/chart): data in, SVG text out ---

/// The chart described by `chart_json` (a `ChartSpec`) as SVG text.
#[wasm_bindgen(js_name = chartSvg)]
pub fn chart_svg(
    #[wasm_bindgen(unchecked_param_type = "string")] chart_json: JsValue,
) -> JsResult<String> {
    let chart_json = &js_text(&chart_json, "chart_json")?;
    let chart = crate::chart::Chart::from_value(&json_arg(chart_json)?).map_err(input_err)?;
    Ok(crate::chart::svg(&chart))
}

/// Panels (`panels_json`: a `ChartSpec[]`) one above the other in one SVG document.
#[wasm_bindgen(js_name = chartFigure)]
pub fn chart_figure(
    #[wasm_bindgen(unchecked_param_type = "string")] title: JsValue,
    #[wasm_bindgen(unchecked_param_type = "string")] panels_json: JsValue,
) -> JsResult<String> {
    let title = &js_text(&title, "title")?;
    let panels_json = &js_text(&panels_json, "panels_json")?;
    let panels: Vec<Value> = json_arg(panels_json)?;
    let panels = panels
        .iter()
        .map(crate::chart::Chart::from_value)
        .collect::<Result<Vec<_>, _>>()
        .map_err(input_err)?;
    Ok(crate::chart::figure(title, &panels))
}

/// The charts' stylesheet (light and dark palettes) for a page that shows them inline.
#[wasm_bindgen(js_name = chartCss)]
pub fn chart_css() -> String {
    crate::chart::css()
}

// ---- persistence without the text round trip ---------------------------------------------------

/// What the shim needs to write a session's state as the core's UTF-8 bytes, and to skip a
/// journal append that the snapshot written right after it would supersede.
#[wasm_bindgen]
impl Session {
    /// [`Session::snapshot`] as UTF-8 bytes (the same text): written to the file as they are,
    /// with no decoding into a JS string and encoding back.
    #[wasm_bindgen(js_name = snapshotBytes)]
    pub fn snapshot_bytes(&self) -> JsResult<Vec<u8>> {
        core(self.inner.try_snapshot_bytes())
    }

    /// UTF-8 length of the journal lines not yet taken (what [`Session::take_journal`] would
    /// return); 0 when there are none.
    #[wasm_bindgen(js_name = journalBytes)]
    pub fn journal_bytes(&self) -> f64 {
        self.inner.pending_journal_len() as f64
    }

    /// Discard the journal lines not yet taken: only once a snapshot that includes their events
    /// is on disk (the snapshot carries the `seq` after them).
    #[wasm_bindgen(js_name = dropJournal)]
    pub fn drop_journal(&mut self) {
        self.inner.drop_journal();
    }

    /// The shim writes a snapshot instead of journal lines past `bytes` (until the lines are
    /// taken or dropped): events past that are not encoded, `journalBytes` is then above
    /// `bytes` and `takeJournal` fails. A negative or non-finite `bytes` sets no limit.
    #[wasm_bindgen(js_name = setJournalLimit)]
    pub fn set_journal_limit(&mut self, bytes: f64) {
        if bytes.is_finite() && bytes >= 0.0 {
            // Saturating: a limit beyond usize is no limit in practice.
            self.inner.set_journal_limit(bytes as usize);
        }
    }
}
