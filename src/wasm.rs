//! wasm-bindgen exports: convert types, call the core, convert back. No logic lives here.
//!
//! The module exports few functions, because every export costs the same wasm-bindgen
//! plumbing (an export wrapper, a multi-value shim, an unwind guard, the argument and result
//! conversions): one dispatcher, [`call`], for the free functions, one, [`Session::call`], for
//! the session methods, and beside them only what cannot cross through them: the `Session`
//! constructor and `restore`, and `Session.plan`, which takes a JS function. `js/core.js` turns the dispatchers
//! back into the named API the rest of the plugin calls (`core.lessonParse(text)`,
//! `session.commitTurn(header, messages)`, ...); the `match op` tables below are its other half.
//! An unknown `op` is a `CACHEFOLD_INPUT` error.
//!
//! One crossing convention, both ways:
//! * **Scalars are one small JSON header** (`&str`): an op's booleans, numbers and ids as one
//!   object (`{"nowMs": …, "ok": …, "requestId": …}`), decoded field by field by
//!   [`crate::json`]. The engine calls' own headers (assemble, commitTurn, compactRequest) are
//!   that object themselves.
//! * **Texts cross as their own strings**, a `Vec<String>` in argument order: plain text (a
//!   lesson file, a tool output) and structured input that is JSON text already (the config, a
//!   lesson, search documents). Host messages come last, with a parallel `Vec<u32>` of host
//!   indices where the call needs them. Nothing bulky is ever escaped inside the header.
//! * **Structured results are JSON text** written by [`crate::json::out`] and turned into plain JS
//!   objects by `JSON.parse` inside [`to_js`] (host numbers keep their exact text: the core's
//!   JSON value stores numbers as text). Bulky plain text (an artifact) is set as a JS string
//!   beside it; string results cross as themselves (`undefined` for none).
//! * `Session.plan` takes a JS function as its message source: the core's one driver
//!   ([`crate::engine::Session::try_drive`]) calls it with a host index and gets that message's
//!   JSON text, only for the indices it needs.
//!
//! serde-wasm-bindgen is not used: it needed a third decoder per input type (beside the JSON
//! text ones) and could not carry `arbitrary_precision` numbers anyway.
//! Errors become JS `Error`s whose `code` property is [`crate::Error::code`].

use crate::config::Config;
use crate::error::Error;
use crate::json::{Fields, FromJson, Value};
use wasm_bindgen::prelude::*;

// The JS built-ins the bindings use, imported here rather than through `js-sys`: with `js-sys`
// linked, 43 closure invoke shims stayed in the module's function table (5 KB of code before
// wasm-opt, 0.7 KB shipped).
#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(catch, js_namespace = JSON, js_name = parse)]
    fn json_parse(text: &str) -> Result<JsValue, JsValue>;

    #[wasm_bindgen(catch, js_namespace = Reflect, js_name = set)]
    fn reflect_set(target: &JsValue, key: &JsValue, value: &JsValue) -> Result<bool, JsValue>;

    #[wasm_bindgen(js_name = Error)]
    type JsError;
    #[wasm_bindgen(constructor, js_class = "Error")]
    fn new(message: &str) -> JsError;

    /// A JS function (`Session.plan`'s message source).
    pub type Function;
    #[wasm_bindgen(catch, method, js_name = call)]
    fn call1(this: &Function, context: &JsValue, arg: &JsValue) -> Result<JsValue, JsValue>;
}

// Results go out as JSON text parsed by the engine's own JSON.parse: the core's JSON value keeps
// numbers as text (so host numbers round-trip byte-exact), which only JSON text carries.
fn to_js(v: &dyn crate::json::out::ToJson) -> Result<JsValue, JsValue> {
    let mut text = String::new();
    v.write_json(&mut text);
    json_parse(&text)
}

fn err(e: &Error) -> JsValue {
    let out = JsError::new(&e.to_string());
    let _ = reflect_set(
        &out,
        &JsValue::from_str("code"),
        &JsValue::from_str(e.code()),
    );
    out.into()
}

fn input_err(msg: String) -> JsValue {
    err(&Error::Input(msg))
}

fn core<T>(r: crate::error::Result<T>) -> Result<T, JsValue> {
    r.map_err(|e| err(&e))
}

fn parse_config(json: &str) -> Result<Config, JsValue> {
    core(Config::from_json(json))
}

/// A string result (`undefined` for none).
fn text_js(s: Option<String>) -> JsValue {
    s.map_or(JsValue::UNDEFINED, |s| JsValue::from_str(&s))
}

/// A structured input: JSON text decoded by [`crate::json`].
fn json_arg<T: FromJson>(s: &str) -> Result<T, JsValue> {
    crate::json::from_str(s).map_err(|e| err(&e.into()))
}

fn tools_json_arg(s: &str) -> Result<Value, JsValue> {
    crate::json::parse::from_str(s).map_err(|e| input_err(e.to_string()))
}

/// One call's arguments: the scalar header (parsed when an op first reads it) and the texts.
struct Args<'a> {
    header: &'a str,
    fields: Option<Fields>,
    texts: std::vec::IntoIter<String>,
}

impl<'a> Args<'a> {
    fn new(header: &'a str, texts: Vec<String>) -> Args<'a> {
        Args {
            header,
            fields: None,
            texts: texts.into_iter(),
        }
    }

    /// The next text argument.
    fn text(&mut self) -> Result<String, JsValue> {
        self.texts
            .next()
            .ok_or_else(|| input_err("a text argument is missing".to_string()))
    }

    /// The remaining texts (the messages).
    fn rest(self) -> Vec<String> {
        self.texts.collect()
    }

    /// The header's fields.
    fn fields(&mut self) -> Result<&mut Fields, JsValue> {
        let fields = match self.fields.take() {
            Some(f) => f,
            None => crate::json::parse(self.header)
                .and_then(Fields::new)
                .map_err(|e| err(&e.into()))?,
        };
        Ok(self.fields.insert(fields))
    }

    /// Header field `key` (absent: the type's absent value, else an error naming it).
    fn get<T: FromJson + Default>(&mut self, key: &str) -> Result<T, JsValue> {
        let mut out = T::default();
        self.need(key, &mut out)?;
        Ok(out)
    }

    /// [`Args::get`] through a slot (not generic).
    fn need(&mut self, key: &str, slot: &mut dyn crate::json::Slot) -> Result<(), JsValue> {
        self.fields()?.need(key, slot).map_err(|e| err(&e.into()))
    }

    /// Header field `toolName`, which must be a string: a tool name from the host is checked
    /// here rather than trusted, with the JS type named as `typeof` would.
    fn tool_name(&mut self) -> Result<String, JsValue> {
        let got = match self.fields()?.take("toolName") {
            Some(Value::String(s)) => return Ok(s),
            None => "undefined",
            Some(Value::Bool(_)) => "boolean",
            Some(Value::Number(_)) => "number",
            Some(_) => "object",
        };
        Err(input_err(format!("toolName must be a string, got {got}")))
    }
}

/// The free functions, by `op` name; `header` and `texts` as in the module doc.
#[wasm_bindgen]
pub fn call(op: &str, header: &str, texts: Vec<String>) -> Result<JsValue, JsValue> {
    let mut a = Args::new(header, texts);
    Ok(match op {
        "version" => env!("CARGO_PKG_VERSION").into(),
        // The plugin config with every default filled in.
        "parseConfig" => to_js(&parse_config(&a.text()?)?)?,
        "sha1Hex" => crate::fingerprint_hex(a.text()?.as_bytes()).into(),
        // A directory name for a session id that cannot escape the sessions folder.
        "sessionDirName" => crate::safe_name(&a.text()?).into(),
        // Parse one message and serialise it back (round-trip check used by tests).
        "roundTripMessage" => core(crate::Message::from_json(&a.text()?))?
            .to_json()
            .into(),

        // ---- tool-output safety (tools helper): shrink, defaults, recover, search ----
        // Shrink an oversized tool result (a toolResult message or a bare `{content, details}`
        // middleware result) and, when `compactDetails`, bound its `details`.
        "processToolResult" => {
            let tool_name = a.tool_name()?;
            let compact_details: bool = a.get("compactDetails")?;
            let cfg = parse_config(&a.text()?)?;
            let message = tools_json_arg(&a.text()?)?; // the input copy is freed right here
            let mut p = core(crate::tools::shrink::process_tool_result(
                &cfg,
                &tool_name,
                message,
                compact_details,
            ))?;
            // The artifact text (up to the whole tool output) goes out as a plain JS string, not
            // through to_js's JSON text: escaping and re-parsing 1 MB costs ~2 ms of the
            // persist hook's budget.
            let artifact_text = p.artifact_text.take();
            let out = to_js(&p)?;
            if let Some(text) = artifact_text {
                reflect_set(
                    &out,
                    &JsValue::from_str("artifactText"),
                    &JsValue::from_str(&text),
                )?;
            }
            out
        }
        // Params with `toolDefaults` filled in, as JSON text, or `undefined` when nothing changes.
        "applyToolDefaults" => {
            let tool_name = a.tool_name()?;
            let cfg = parse_config(&a.text()?)?;
            let params = tools_json_arg(&a.text()?)?;
            text_js(
                crate::tools::defaults::apply_tool_defaults(&cfg, &tool_name, &params)
                    .map(|v| crate::json::out::to_string(&v)),
            )
        }
        "artifactId" => crate::tools::shrink::artifact_id(&a.text()?).into(),
        // The artifact id in our header when the text was already shrunk, else `undefined`.
        "isShrunk" => text_js(crate::tools::shrink::is_shrunk(&a.text()?)),
        // `{kind, id}` for a `cachefold_recover` id (header `{id}`); throws
        // `CACHEFOLD_INVALID_ID`.
        "parseRecoverTarget" => to_js(&core(crate::tools::recover::parse_target(
            &a.get::<String>("id")?,
        ))?)?,
        // `{text, details}` of `cachefold_recover`: header `{id}`; texts: the stored text, the
        // params JSON (`{lines?, chars?, maxChars?}`).
        "recoverAnswer" => {
            let (id, text) = (a.get::<String>("id")?, a.text()?);
            let params = tools_json_arg(&a.text()?)?;
            to_js(&core(crate::tools::recover::answer(&id, &text, &params))?)?
        }
        // `{text, hits, more}` of `cachefold_search`: texts docs JSON (`[{id, kind, text}]`),
        // query; header `{regex, maxHits}`.
        "searchAnswer" => {
            let (regex, max_hits): (bool, u32) = (a.get("regex")?, a.get("maxHits")?);
            let docs: Vec<crate::tools::search::OwnedDoc> = json_arg(&a.text()?)?;
            let query = a.text()?;
            to_js(&core(crate::tools::search::answer(
                &docs,
                &query,
                regex,
                max_hits as usize,
            ))?)?
        }
        // Bounded copy of a `details` value (JSON text in, JSON text out).
        "compactDetails" => crate::json::out::to_string(&crate::tools::details::compact_details(
            &tools_json_arg(&a.text()?)?,
        ))
        .into(),

        // ---- lessons (js/lessons.js) ----
        "lessonParse" => to_js(&core(crate::lessons::Lesson::parse(&a.text()?))?)?,
        // Validate a lesson (JSON) and render its file text (secrets redacted).
        "lessonRender" => {
            let l: crate::lessons::Lesson = json_arg(&a.text()?)?;
            core(l.validate())?;
            l.render().into()
        }
        // A lesson file re-rendered with the hash of the inputs (`[{entry, content}]`).
        "lessonStamp" => {
            let mut l = core(crate::lessons::Lesson::parse(&a.text()?))?;
            let inputs: Vec<crate::lessons::FpInput> = json_arg(&a.text()?)?;
            l.stamp(&inputs);
            l.render().into()
        }
        // `{stale, changed: [{entry, what}]}` of a lesson file against the inputs.
        "lessonStaleness" => {
            let l = core(crate::lessons::Lesson::parse(&a.text()?))?;
            let inputs: Vec<crate::lessons::FpInput> = json_arg(&a.text()?)?;
            to_js(&l.staleness(&inputs))?
        }
        "lessonsClassify" => to_js(&crate::lessons::classify::classify(&a.text()?))?,
        "lessonsDecide" => {
            let input: crate::lessons::select::DecideInput = json_arg(&a.text()?)?;
            to_js(&crate::lessons::select::decide(&input))?
        }
        // Candidates from the LLM capture answer: texts answer, capture input JSON.
        "lessonsParseLlm" => {
            let answer = a.text()?;
            let input: crate::lessons::capture::CaptureInput = json_arg(&a.text()?)?;
            to_js(&crate::lessons::capture::parse_llm(&answer, &input))?
        }
        "redactSecrets" => crate::lessons::redact::redact(&a.text()?).into(),
        "lessonSlug" => crate::lessons::slug(&a.text()?).into(),
        _ => return Err(unknown(op)),
    })
}

#[inline(never)]
fn unknown(op: &str) -> JsValue {
    input_err(format!("unknown op {}", crate::json::out::quoted(op)))
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
        let (inner, report) = core(crate::engine::Session::restore(
            parse_config(config_json)?,
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
    /// compact) → on `needFull`, again with every index. `json_of(i)` returns the JSON text of
    /// host message `i`; it is called only for the indices the engine asks for.
    pub fn plan(
        &mut self,
        header_json: &str,
        compact: bool,
        force: bool,
        json_of: &Function,
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
        to_js(&core(driven)?.plan)
    }

    /// The session methods, by `op` name; `header`, `indices` and `texts` as in the module doc.
    pub fn call(
        &mut self,
        op: &str,
        header: &str,
        indices: Vec<u32>,
        texts: Vec<String>,
    ) -> Result<JsValue, JsValue> {
        let s = &mut self.inner;
        let mut a = Args::new(header, texts);
        Ok(match op {
            // What the last `restore` applied, skipped and ignored (a torn tail), or `null`.
            "replayReport" => to_js(&self.replay)?,
            // Host message indices to stringify for an assemble over `count` messages.
            "need" => to_js(&s.need(a.get("count")?))?,
            // Plan the messages to send. Header: the `AssembleInput` fields but `messages`;
            // `indices[k]` is the host index of the message whose JSON text is `texts[k]`.
            "assemble" => {
                let input = assemble_input(header, indices, a.rest())?;
                to_js(&core(s.assemble(&input))?)?
            }
            // Host `compact()`: fold now. Header `{force}`; texts: the assemble header, then the
            // messages (as for `assemble`).
            "compact" => {
                let force: bool = a.get("force")?;
                let head = a.text()?;
                let input = assemble_input(&head, indices, a.rest())?;
                to_js(&core(s.compact(&input, force))?)?
            }
            // Record a finished turn (idempotent by advancement key). Header: the `CommitInput`
            // fields but `messages`, the turn's message JSON texts.
            "commitTurn" => {
                let input = crate::engine::CommitInput::from_parts(header, a.rest())
                    .map_err(|e| err(&e.into()))?;
                to_js(&core(s.commit_turn(&input))?)?
            }
            // An LLM summary worth preparing now, or `null`.
            "summaryRequest" => to_js(&s.summary_request(a.get("nowMs")?))?,
            // Deliver a summary (or its failure): header `{requestId, ok, nowMs}`, text.
            "acceptSummary" => {
                let (id, ok, now): (String, bool, f64) =
                    (a.get("requestId")?, a.get("ok")?, a.get("nowMs")?);
                s.accept_summary(&id, &a.text()?, ok, now);
                JsValue::UNDEFINED
            }
            // A layer-2 topic check worth sending now (`topics.useLlm`), or `null`.
            "topicRequest" => to_js(&s.topic_request(a.get("nowMs")?))?,
            // Deliver a topic check's answer (as `acceptSummary`): `applied`, `malformed`,
            // `failed` or `ignored`.
            "acceptTopic" => {
                let (id, ok, now): (String, bool, f64) =
                    (a.get("requestId")?, a.get("ok")?, a.get("nowMs")?);
                s.accept_topic(&id, &a.text()?, ok, now).into()
            }
            // Whole state as JSON text.
            "snapshot" => core(s.try_snapshot())?.into(),
            // Journal lines produced since the last call.
            "takeJournal" => s.take_journal().into(),
            // Host `compact()` without a message list: record a fold for the next assemble and
            // project its result. Header: the `CompactInput`.
            "compactRequest" => {
                let input: crate::engine::CompactInput = json_arg(header)?;
                to_js(&core(s.compact_request(&input))?)?
            }
            // Host `compact()` without a message list: fold at the next assemble.
            "requestFold" => {
                core(s.request_fold(a.get("nowMs")?))?;
                JsValue::UNDEFINED
            }
            "stats" => to_js(&s.stats())?,
            // `cachefold_topics`: `{text, details}`.
            "topicsView" => to_js(&s.topics_view())?,
            // `cachefold_preview`: `{text, details}`.
            "preview" => to_js(&s.preview())?,
            // Where the messages of turn `t<k>` / topic `T<n>` are stored: header `{id}`.
            "recoverPlan" => to_js(&core(s.recover_plan(&a.get::<String>("id")?))?)?,
            // `cachefold_pin`: `{text, details}`; journals the pin. Header `{id}`.
            "pinTurn" => to_js(&core(s.pin_turn(&a.get::<String>("id")?))?)?,
            // Recent per-call rows with prices.
            "callRows" => to_js(&s.call_rows())?,
            // Deterministic lesson candidates from this session's digests: text, the capture
            // input JSON.
            "captureLessons" => {
                let input: crate::lessons::capture::CaptureInput = json_arg(&a.text()?)?;
                let digests = s.state().records.iter().map(|r| &r.digest);
                to_js(&crate::lessons::capture::extract(digests, &input))?
            }
            // `{system, prompt, maxTokens}` of the optional LLM capture pass over this session's
            // digests: text, the JSON list of existing lesson names.
            "lessonLlmPrompt" => {
                let existing: Vec<String> = json_arg(&a.text()?)?;
                let digests = s.state().records.iter().map(|r| &r.digest);
                let (system, prompt) = crate::lessons::capture::llm_prompt(digests, &existing);
                to_js(&crate::json::out::object_of([
                    ("system", system.into()),
                    ("prompt", prompt.into()),
                    ("maxTokens", crate::lessons::capture::LLM_MAX_TOKENS.into()),
                ]))?
            }
            _ => return Err(unknown(op)),
        })
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
