use super::*;
use crate::fold::record::*;
use crate::Message;
use serde_json::json;

pub(super) fn msg(v: Value) -> Message {
    Message::from_value(v).unwrap()
}

pub(super) const HEX40: &str = "0123456789abcdef0123456789abcdef01234567";

#[test]
fn user_digest_keeps_text_verbatim_and_collapses_churn() {
    let cfg = Config::default();
    let text = "Conversation info (untrusted metadata):\n```json\n{\"chat_id\":\"123\"}\n```\n\nPlease fix `src/engine.rs` so fold_decision is called; keep commit 9fceb02 and never touch Cargo.lock.\nSee https://github.com/acme/repo/issues/4739.";
    let d = digest(
        &msg(json!({"role":"user","content":text,"timestamp":1})),
        &cfg,
        None,
    );
    assert_eq!(d.role, "user");
    let u = d.user_text.as_deref().unwrap();
    assert!(
        u.starts_with("[Conversation info omitted]\nPlease fix `src/engine.rs`"),
        "{u}"
    );
    assert!(u.contains("never touch Cargo.lock."));
    assert!(!u.contains("chat_id"));
    assert_eq!(d.files[..], vec!["src/engine.rs", "Cargo.lock"][..]);
    assert_eq!(
        d.identifiers[..],
        vec![
            "https://github.com/acme/repo/issues/4739",
            "9fceb02",
            "fold_decision"
        ][..]
    );
    assert!(d.text.starts_with("[Conversation info omitted] Please fix"));
}

#[test]
fn long_user_text_is_head_and_tail() {
    let cfg = Config::default();
    let words: Vec<String> = (0..600).map(|i| format!("word{i}")).collect();
    let text = words.join(" ");
    let d = digest(
        &msg(
            json!({"role":"user","content":[{"type":"text","text":text},{"type":"image","data":"AAAA","mimeType":"image/png"}]}),
        ),
        &cfg,
        None,
    );
    let u = d.user_text.unwrap();
    assert!(
        u.chars().count() <= USER_TEXT_CHARS,
        "{}",
        u.chars().count()
    );
    assert!(u.starts_with("word0 word1 "));
    assert!(
        u.ends_with("word599\n[1 image attached]"),
        "{}",
        &u[u.len() - 40..]
    );
    assert!(u.contains(" chars omitted] … "));
    // Cut at whitespace: every word in the output is a whole word from the input.
    for w in u.split_whitespace() {
        assert!(
            w.starts_with("word")
                || ["…", "chars", "omitted]", "[1", "image", "attached]"].contains(&w)
                || w.starts_with('['),
            "{w}"
        );
        if let Some(n) = w.strip_prefix("word") {
            assert!(n.parse::<u32>().unwrap() < 600);
        }
    }
    assert!(d.text.chars().count() <= GIST_CHARS);
}

#[test]
fn assistant_digest_skips_thinking_and_reads_calls() {
    let cfg = Config::default();
    let m = msg(json!({"role":"assistant","content":[
        {"type":"thinking","thinking":"secret reasoning about /etc/shadow and SECRET_TOKEN"},
        {"type":"text","text":"I'll run the tests, then edit lib.rs."},
        {"type":"toolCall","id":"call_1","name":"exec","arguments":{"command":"cd /work/main && cargo test --lib pairing","workdir":"/work/main"}},
        {"type":"toolCall","id":"call_2","name":"edit","arguments":{"path":"src/lib.rs","oldText":"a_b_c","newText":"d_e_f"}}
    ]}));
    let d = digest(&m, &cfg, None);
    assert_eq!(d.call_ids[..], vec!["call_1", "call_2"][..]);
    assert_eq!(d.tool_name.as_deref(), Some("exec"));
    assert_eq!(
        d.commands[..],
        vec!["$ cd /work/main && cargo test --lib pairing"][..]
    );
    assert_eq!(d.files[..], vec!["/work/main", "src/lib.rs", "lib.rs"][..]);
    assert_eq!(d.text, "I'll run the tests, then edit lib.rs.");
    let all = serde_json::to_string(&d).unwrap();
    assert!(
        !all.contains("shadow") && !all.contains("SECRET_TOKEN"),
        "thinking leaked: {all}"
    );
    assert!(d.identifiers.contains(&"a_b_c".into()));
}

#[test]
fn exec_result_gets_outcome_and_errors() {
    let cfg = Config::default();
    let args = json!({"command":"cargo test"});
    let out = "   Compiling cachefold\nerror[E0425]: cannot find value `x` in this scope\n --> src/cost.rs:10:5\n\nCommand exited with code 101";
    let m = msg(
        json!({"role":"toolResult","toolCallId":"call_1","toolName":"exec","content":[{"type":"text","text":out}],"isError":true}),
    );
    let d = digest(&m, &cfg, Some(("exec", &args)));
    assert_eq!(d.result_id.as_deref(), Some("call_1"));
    assert_eq!(d.tool_name.as_deref(), Some("exec"));
    assert_eq!(
        d.commands[..],
        vec!["$ cargo test → exit 101: error[E0425]: cannot find value `x` in this scope"][..]
    );
    assert_eq!(
        d.errors[..],
        vec!["error[E0425]: cannot find value `x` in this scope"][..]
    );
    assert_eq!(d.files[..], vec!["src/cost.rs"][..]);
    assert!(!d.protected);
    // Success, details.exitCode wins over text.
    let ok = msg(
        json!({"role":"toolResult","toolCallId":"c","toolName":"bash","content":"test result: ok. 14 passed; 0 failed","details":{"exitCode":0}}),
    );
    let d = digest(&ok, &cfg, Some(("bash", &args)));
    assert_eq!(d.commands[..], vec!["$ cargo test → exit 0"][..]);
    assert!(d.errors.is_empty(), "{:?}", d.errors);
    let plain =
        msg(json!({"role":"toolResult","toolCallId":"c","toolName":"bash","content":"done"}));
    assert_eq!(
        digest(&plain, &cfg, Some(("bash", &args))).commands[..],
        vec!["$ cargo test → ok"][..]
    );
    let aborted = msg(
        json!({"role":"toolResult","toolCallId":"c","toolName":"bash","content":"Debugger attached.\n\nCommand aborted","isError":true}),
    );
    assert_eq!(
        digest(&aborted, &cfg, Some(("bash", &args))).commands[..],
        vec!["$ cargo test → aborted"][..]
    );
    // An error result with no keyword line reports its first line.
    let e = msg(
        json!({"role":"toolResult","toolCallId":"c","toolName":"edit","content":"Could not find the exact text in a.ts.","isError":true}),
    );
    assert_eq!(
        digest(&e, &cfg, None).errors[..],
        vec!["Could not find the exact text in a.ts."][..]
    );
}

#[test]
fn content_tools_report_errors_only_when_they_fail() {
    let cfg = Config::default();
    let args = json!({"path":"src/err.rs"});
    let code = "fn f() -> Result<(), Error> {\n    panic!(\"boom\");\n}";
    let ok = msg(json!({"role":"toolResult","toolCallId":"c","toolName":"read","content":code}));
    assert!(digest(&ok, &cfg, Some(("read", &args))).errors.is_empty());
    let failed = msg(
        json!({"role":"toolResult","toolCallId":"c","toolName":"read","content":"ENOENT: no such file, error opening src/err.rs","isError":true}),
    );
    assert_eq!(
        digest(&failed, &cfg, Some(("read", &args))).errors[..],
        vec!["ENOENT: no such file, error opening src/err.rs"][..]
    );
    // A failed shell command's bare exit line is not repeated as an error.
    let sh = json!({"command":"false"});
    let bare = msg(
        json!({"role":"toolResult","toolCallId":"c","toolName":"exec","content":"Command exited with code 1","isError":true}),
    );
    let d = digest(&bare, &cfg, Some(("exec", &sh)));
    assert!(d.errors.is_empty(), "{:?}", d.errors);
    assert_eq!(d.commands[..], vec!["$ false → exit 1"][..]);
}

#[test]
fn goal_skips_slash_commands_and_one_word_replies() {
    let cfg = Config::default();
    let ds: Vec<Digest> = [
        "/mode",
        "ok",
        "Port the selector to the theme API, keep the tests green",
    ]
    .iter()
    .map(|t| digest(&msg(json!({"role":"user","content":t})), &cfg, None))
    .collect();
    let refs: Vec<&Digest> = ds.iter().collect();
    let out = render_extractive("g", &refs, 10_000);
    assert!(
        out.contains("## Goal\n- Port the selector to the theme API, keep the tests green\n"),
        "{out}"
    );
    assert!(
        out.contains("## User constraints and instructions\n- /mode\n- ok\n- Port"),
        "{out}"
    );
    let only: Vec<&Digest> = ds[..1].iter().collect();
    assert!(render_extractive("g", &only, 10_000).contains("## Goal\n- /mode\n"));
}

#[test]
fn chatty_user_text_leaves_room_for_files() {
    let cfg = Config::default();
    let mut ds: Vec<Digest> = (0..40)
        .map(|i| digest(&msg(json!({"role":"user","content":format!("request {i}: {}", "please refactor the module carefully ".repeat(20))})), &cfg, None))
        .collect();
    let args = json!({"path":"src/keep_me.rs"});
    ds.push(digest(
        &msg(json!({"role":"toolResult","toolCallId":"c","toolName":"edit","content":"ok"})),
        &cfg,
        Some(("edit", &args)),
    ));
    let refs: Vec<&Digest> = ds.iter().collect();
    let out = render_extractive("u", &refs, 6_000);
    assert!(out.chars().count() <= 6_000);
    assert!(out.contains("- src/keep_me.rs"), "{out}");
    assert!(
        out.contains("request 39:") && out.contains("request 0:"),
        "user items are shortened, not dropped"
    );
}

#[test]
fn protected_reads() {
    let cfg = Config::default();
    assert!(is_protected_read(
        "read",
        &json!({"path":"AGENTS.md"}),
        &cfg
    ));
    assert!(is_protected_read(
        "Read",
        &json!({"file_path":"/ws/agents.MD"}),
        &cfg
    ));
    assert!(is_protected_read(
        "read",
        &json!({"filePath":"C:\\ws\\SOUL.md"}),
        &cfg
    ));
    assert!(!is_protected_read(
        "read",
        &json!({"path":"docs/AGENTS.md.bak"}),
        &cfg
    ));
    assert!(!is_protected_read(
        "exec",
        &json!({"path":"AGENTS.md"}),
        &cfg
    ));
    assert!(!is_protected_read("read", &json!({}), &cfg));
    assert!(!is_protected_read("read", &json!("AGENTS.md"), &cfg));
    let m = msg(
        json!({"role":"toolResult","toolCallId":"c","toolName":"read","content":"# Agents\nsee src/other.rs"}),
    );
    let args = json!({"path":"AGENTS.md"});
    let d = digest(&m, &cfg, Some(("read", &args)));
    assert!(d.protected);
    assert_eq!(
        d.files[..],
        vec!["AGENTS.md"][..],
        "paths inside a read's content are not touched files"
    );
    let none = Config {
        protected_reads: vec![],
        ..Config::default()
    };
    assert!(!digest(&m, &none, Some(("read", &args))).protected);
}

#[test]
fn artifact_ids_after_the_word_artifact() {
    let t = format!("[cachefold] read output 51266 chars shrunk; artifact {HEX40} (recover with cachefold_recover)\nartifact:\n{HEX40}");
    assert_eq!(artifact_ids(&t), vec![HEX40.to_string()]);
    let up = HEX40.to_ascii_uppercase();
    assert_eq!(
        artifact_ids(&format!("Artifact id={up}")),
        vec![HEX40.to_string()]
    );
    assert!(
        artifact_ids(&format!("commit {HEX40}")).is_empty(),
        "needs the word artifact"
    );
    assert!(artifact_ids(&format!("artifact {}", &HEX40[..39])).is_empty());
    assert!(artifact_ids(&format!("artifact {HEX40}0")).is_empty());
    let m = msg(
        json!({"role":"toolResult","toolCallId":"c","toolName":"read","content":format!("[cachefold] artifact {HEX40}")}),
    );
    assert_eq!(
        digest(&m, &Config::default(), None).artifacts[..],
        vec![HEX40.to_string()][..]
    );
}

#[test]
fn identifier_classes() {
    let mut c = IdentCollector::default();
    c.scan("ids: 550e8400-e29b-41d4-a716-446655440000 commit a1b2c3d4e5 and deadbeefcafe, port 8080, \
            year 42, fn fold_decision(), type FoldCandidate, word Hello, url <https://x.dev/a?b=1>. \
            camelCase getElementById __init__ ABC123 MAX_TOKENS v1.2.3");
    let ids = c.finish(100);
    assert_eq!(
        ids,
        vec![
            "https://x.dev/a?b=1",
            "550e8400-e29b-41d4-a716-446655440000",
            "a1b2c3d4e5",
            "fold_decision",
            "FoldCandidate",
            "camelCase",
            "getElementById",
            "__init__",
            "MAX_TOKENS",
            "8080",
        ]
    );
    let mut c = IdentCollector::default();
    c.scan("deadbeefcafe is only letters; Hello World; ok 12");
    assert!(c.finish(10).is_empty());
    // Bounded.
    let mut c = IdentCollector::default();
    let many: Vec<String> = (0..1000).map(|i| format!("sym_{i}")).collect();
    c.scan(&many.join(" "));
    assert_eq!(c.finish(MAX_IDENTIFIERS).len(), MAX_IDENTIFIERS);
}

#[test]
fn path_detection() {
    for p in [
        "src/main.rs",
        "./run.sh",
        "../x/y",
        "/etc/hosts",
        "~/notes/todo",
        "Cargo.toml",
        "a/b/c",
        "C:\\Users\\me\\x.txt",
        "packages/coding-agent/src/tui/theme-selector.ts",
    ] {
        assert!(is_path_like(p), "{p}");
    }
    for p in [
        "and/or",
        "n/a",
        "1/2",
        "/help",
        "/tmp",
        "e.g.",
        "v1.2.3",
        "http://x.com/a.rs",
        "hello",
        "a//b",
        "2026/11/23",
        "x.y",
        ".env",
    ] {
        assert!(!is_path_like(p), "{p}");
    }
    assert_eq!(clean_token("(`src/x.rs:12:5`),"), "src/x.rs");
    assert_eq!(clean_token("path=\"a/b.rs\""), "a/b.rs");
}

#[test]
fn error_line_rules() {
    let t = "ok line\nTraceback (most recent call last):\nValueError: bad\ntest result: ok. 3 passed; 0 failed\nthread 'main' panicked at src/a.rs\nBUILD FAILED\nno errors found";
    assert_eq!(
        error_lines(t, 10),
        vec![
            "Traceback (most recent call last):",
            "ValueError: bad",
            "thread 'main' panicked at src/a.rs",
            "BUILD FAILED"
        ]
    );
    assert_eq!(error_lines(t, 2).len(), 2);
    let long = format!("error: {}", "x ".repeat(400));
    assert!(error_lines(&long, 1)[0].chars().count() <= ITEM_CHARS);
}

#[test]
fn churn_internal_context_blocks() {
    let t = "Fix the bug.\n<<<BEGIN_OPENCLAW_INTERNAL_CONTEXT>>>\nOpenClaw runtime context for the immediately preceding user message.\nThis context is runtime-generated, not user-authored. Keep internal details private.\nactive exec sessions: 2\n<<<END_OPENCLAW_INTERNAL_CONTEXT>>>\nThanks";
    assert_eq!(
        collapse_churn(t),
        "Fix the bug.\n[openclaw runtime context omitted]\nThanks"
    );
    // Nested and unterminated.
    let n = "a\n<<<BEGIN_OPENCLAW_INTERNAL_CONTEXT>>>\n<<<BEGIN_OPENCLAW_INTERNAL_CONTEXT>>>\nx\n<<<END_OPENCLAW_INTERNAL_CONTEXT>>>\ny\n<<<END_OPENCLAW_INTERNAL_CONTEXT>>>\nb";
    assert_eq!(
        collapse_churn(n),
        "a\n[openclaw runtime context omitted]\nb"
    );
    assert_eq!(
        collapse_churn("a\n<<<BEGIN_OPENCLAW_INTERNAL_CONTEXT>>>\nrest\nof text"),
        "a\n[openclaw runtime context omitted]"
    );
    // Inline mention (not a standalone line) is user text, kept.
    let inline = "what does <<<BEGIN_OPENCLAW_INTERNAL_CONTEXT>>> mean?";
    assert_eq!(collapse_churn(inline), inline);
    // Completion event inside a block: task and status survive.
    let ev = "<<<BEGIN_OPENCLAW_INTERNAL_CONTEXT>>>\nA background task completed. Keep internal details private and use its result to reply in your normal assistant voice.\n[Internal task completion event]\nsource: subagent\nsession_key: agent:main:sub:1\nsession_id: 42\ntype: subagent\ntask: refactor parser\nstatus: completed successfully\n\nchild output here\n<<<END_OPENCLAW_INTERNAL_CONTEXT>>>";
    assert_eq!(
        collapse_churn(ev),
        "[openclaw task completion: refactor parser (completed successfully)]"
    );
}

#[test]
fn churn_legacy_completion_events() {
    let t = "before\n\nOpenClaw runtime context (internal):\nThis context is runtime-generated, not user-authored. Keep internal details private.\n\n[Internal task completion event]\nsource: subagent\ntask: scan repo\nstatus: ok\n\n<<<BEGIN_UNTRUSTED_CHILD_RESULT>>>\nfound 3 files\n\nwith blank lines\n<<<END_UNTRUSTED_CHILD_RESULT>>>\n\nAction:\nReply to the user.\n\n---\n\n[Internal task completion event]\ntask: second\nstatus: failed\n\n<<<BEGIN_UNTRUSTED_CHILD_RESULT>>>\nboom\n<<<END_UNTRUSTED_CHILD_RESULT>>>\n\nAction:\nReply.\n\nafter";
    assert_eq!(
        collapse_churn(t),
        "before\n\n[openclaw task completion: scan repo (ok)]\nafter"
    );
    let bare = "[Internal task completion event]\ntask: t\nstatus: done\n\nresult text";
    assert_eq!(
        collapse_churn(bare),
        "[openclaw task completion: t (done)]\nresult text"
    );
}

#[test]
fn churn_inbound_metadata_blocks() {
    let old = "Conversation info (untrusted metadata):\n```json\n{\n  \"message_id\": \"77\"\n}\n```\n\nSender (untrusted metadata):\n```json\n{\"name\":\"Ann\"}\n```\n\nhello there";
    assert_eq!(
        collapse_churn(old),
        "[Conversation info omitted]\n[Sender omitted]\nhello there"
    );
    let new = "Conversation info: ⟦openclaw:ctx⟧\n```json\n{\"chat_id\":\"1\"}\n```\n\nChat history since last reply: ⟦openclaw:ctx⟧\n[Ann] hi\n[Bob] yo\n\nDelivery: to send a message, use the `message` tool.\nactual question?";
    assert_eq!(
        collapse_churn(new),
        "[Conversation info omitted]\n[Chat history since last reply omitted]\nactual question?"
    );
    let hist = "Chat history since last reply (untrusted, for context):\n```json\n[]\n```\nq";
    assert_eq!(
        collapse_churn(hist),
        "[Chat history since last reply omitted]\nq"
    );
    assert_eq!(
        collapse_churn("q\nContext: ⟦openclaw:ctx⟧\nanything\nelse"),
        "q\n[Context omitted]"
    );
    // User text that merely mentions the words is kept.
    let plain = "Is this untrusted (really)?\nDelivery: tomorrow";
    assert_eq!(collapse_churn(plain), plain);
}

#[test]
fn custom_and_bash_execution_roles() {
    let cfg = Config::default();
    let rc = msg(
        json!({"role":"custom","customType":"openclaw.runtime-context","content":"secret runtime stuff"}),
    );
    assert_eq!(digest(&rc, &cfg, None).text, RUNTIME_MARKER);
    let b = msg(json!({"role":"bashExecution","command":"ls -la","output":"total 0","exitCode":2}));
    let d = digest(&b, &cfg, None);
    assert_eq!(d.commands[..], vec!["$ ls -la → exit 2"][..]);
    assert_eq!(d.role, "bashExecution");
}

#[test]
fn extensions_are_lowercase_ascii() {
    // has_known_ext compares them case-insensitively with the token's extension.
    for e in super::scan::EXTENSIONS_FOR_TESTS {
        assert!(
            e.bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit()),
            "{e}"
        );
    }
    assert!(super::scan::EXTENSIONS_FOR_TESTS.len() > 40);
}
