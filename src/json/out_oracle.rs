//! The results the wasm bindings hand to JS, written by [`super::out::to_string`] (which under
//! `cfg(test)` asserts byte identity with `serde_json::to_string`): one value of each type the
//! bindings return, from the same core calls.

use super::out::to_string;
use crate::config::Config;
use crate::json;

const LESSON: &str = "---\nname: testing\ndescription: Test runner \"x\"\nfingerprint:\n  - package.json#scripts.test\n  - tests/\ncaptured-at: 2026-05-05\n---\n- run via `npm test`\n";

#[test]
fn tool_and_lesson_results_match_serde_json() {
    let mut cfg = Config::from_json("{}").unwrap();
    to_string(&cfg);
    cfg.persist.default_threshold = 10;
    let big = "line é\t\"q\"\n".repeat(50);
    let msg = json!({"role": "toolResult", "toolCallId": "c1", "toolName": "exec",
        "content": [{"type": "text", "text": big}], "details": {"exitCode": 0, "x": 1.50}, "isError": false, "timestamp": 1});
    let p = crate::tools::shrink::process_tool_result(&cfg, "exec", msg.clone(), true).unwrap();
    to_string(&p);
    let none =
        crate::tools::shrink::process_tool_result(&cfg, "read", json!({"role": "user"}), false);
    if let Ok(p) = none {
        to_string(&p);
    }
    for id in ["f12", "c3", &"a".repeat(40)] {
        to_string(&crate::tools::recover::parse_target(id).unwrap());
    }
    to_string(&crate::tools::recover::answer("f1", &big, &json!({"lines": [2, 3]})).unwrap());
    let docs = vec![crate::tools::search::OwnedDoc {
        id: "f1".into(),
        kind: "fold".into(),
        text: big.clone(),
    }];
    to_string(&crate::tools::search::answer(&docs, "line", false, 3).unwrap());
    to_string(&crate::tools::search::answer(&docs, "l[a-z]+e", true, 50).unwrap());
    let l = crate::lessons::Lesson::parse(LESSON).unwrap();
    to_string(&l);
    to_string(&l.staleness(&[]));
    to_string(&crate::lessons::classify::classify(
        "implement a parser for the config",
    ));
    let input: crate::lessons::select::DecideInput = crate::json::from_str(
        &json!({"request": "add a test for the parser", "maxTokens": 400,
            "lessons": [{"scope": "project", "file": "testing.md", "text": LESSON}],
            "inputs": [{"entry": "tests/", "content": "a\nb"}], "nowIso": "2026-01-01T00:00:00Z"})
        .to_string(),
    )
    .unwrap();
    to_string(&crate::lessons::select::decide(&input));
    let cap: crate::lessons::capture::CaptureInput =
        crate::json::from_str(r#"{"workspace": "/w", "session": "s", "nowIso": "t"}"#).unwrap();
    to_string(&crate::lessons::capture::parse_llm(
        r#"[{"name": "lint", "description": "d", "fingerprint": ["package.json"], "body": ["- npm run lint"]}]"#,
        &cap,
    ));
}
