//! Decoding of the lesson and tool-search inputs the binding receives as JSON text (see
//! [`crate::json`]; the engine's own inputs are decoded beside their types in
//! `engine::api`). Field names are the exact JSON names; every struct here has serde's
//! container-level `default`, so a missing field is its type's default.

use crate::json::json_struct;
use crate::lessons::capture::CaptureInput;
use crate::lessons::select::{DecideInput, LessonFile};
use crate::lessons::{FpInput, Lesson};
use crate::tools::search::OwnedDoc;

json_struct!(CaptureInput default {
    session_id: "sessionId",
    workspace: "workspace",
    now_iso: "nowIso",
});

json_struct!(LessonFile default {
    scope: "scope",
    file: "file",
    text: "text",
});

json_struct!(DecideInput default {
    request: "request",
    max_tokens: "maxTokens",
    lessons: "lessons",
    inputs: "inputs",
    now_iso: "nowIso",
});

json_struct!(FpInput default {
    entry: "entry",
    content: "content",
});

json_struct!(Lesson default {
    name: "name",
    description: "description",
    fingerprint: "fingerprint",
    captured_at: "capturedAt",
    fingerprint_hash: "fingerprintHash",
    fingerprint_parts: "fingerprintParts",
    session: "session",
    turn: "turn",
    refresh_of: "refreshOf",
    body: "body",
});

// No container default: every field is required, as the derived decoder had it.
json_struct!(OwnedDoc {
    id: "id",
    kind: "kind",
    text: "text",
});

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json;
    use crate::json::FromJson;
    use crate::json::Value;
    use serde::de::DeserializeOwned;
    use std::fmt::Debug;

    /// The hand-written decoder agrees with the derived one (kept under `cfg(test)` as the
    /// oracle): same value when both accept, both reject otherwise.
    fn agree<T: FromJson + DeserializeOwned + PartialEq + Debug>(v: Value) {
        let old = serde_json::from_value::<T>(v.clone().into());
        let new = T::from_json(v.clone());
        match (old, new) {
            (Ok(a), Ok(b)) => assert_eq!(a, b, "{v}"),
            (Err(_), Err(_)) => {}
            (a, b) => panic!("decoders disagree on {v}: serde {a:?}, json {b:?}"),
        }
    }

    #[test]
    fn lesson_and_search_inputs_decode_as_before() {
        for v in [
            json!({}),
            json!({"sessionId": "s", "workspace": "/w", "nowIso": "2026-01-01T00:00:00Z", "x": 1}),
            json!({"sessionId": 3}),
            json!({"sessionId": null}),
        ] {
            agree::<CaptureInput>(v);
        }
        for v in [
            json!({"request": "add a test", "maxTokens": 200, "lessons": [{"scope": "project", "file": "a.md", "text": "t"}], "inputs": [{"entry": "a", "content": null}, {"entry": "b", "content": "x"}], "nowIso": "z"}),
            json!({"maxTokens": -1}),
            json!({"maxTokens": 1.5}),
            json!({"lessons": [{"scope": 1}]}),
            json!({"inputs": [{"entry": "a"}]}),
        ] {
            agree::<DecideInput>(v);
        }
        for v in [
            json!({"name": "n", "description": "d", "fingerprint": ["a"], "capturedAt": "t", "fingerprintHash": "h", "fingerprintParts": ["p"], "session": "s", "turn": "t", "refreshOf": "", "body": ["b"]}),
            json!({"body": "not a list"}),
        ] {
            agree::<Lesson>(v);
        }
        for v in [
            json!({"id": "a", "kind": "fold", "text": "t"}),
            json!({"id": "a", "kind": "fold"}),
            json!([]),
        ] {
            agree::<OwnedDoc>(v);
        }
        agree::<Vec<FpInput>>(json!([{"entry": "e", "content": "c"}, {}]));
    }
}
