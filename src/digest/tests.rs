use super::*;
use crate::fold::record::*;
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

/// The scanners as they were written before the byte-level rewrite (char searches, a lowered
/// copy of the extension, `one_line` over the whole text): the oracle the rewrite must equal.
mod before_bytes {
    use super::super::scan::EXTENSIONS_FOR_TESTS as EXTENSIONS;
    use crate::digest::{ITEM_CHARS, MAX_ARTIFACTS};

    pub fn artifact_ids(text: &str) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        let lower = text.to_ascii_lowercase();
        let mut from = 0;
        while let Some(pos) = lower[from..].find("artifact") {
            let start = from + pos + "artifact".len();
            let line_end = lower[start..]
                .find('\n')
                .map(|i| start + i)
                .unwrap_or(lower.len());
            if let Some(id) = first_hex40(&lower[start..line_end]) {
                if !out.iter().any(|x| x == id) && out.len() < MAX_ARTIFACTS {
                    out.push(id.to_string());
                }
            }
            from = start;
        }
        out
    }

    fn first_hex40(s: &str) -> Option<&str> {
        let b = s.as_bytes();
        let mut i = 0;
        while i < b.len() {
            if b[i].is_ascii_hexdigit() {
                let start = i;
                while i < b.len() && b[i].is_ascii_hexdigit() {
                    i += 1;
                }
                if i - start == 40
                    && (start == 0 || !b[start - 1].is_ascii_alphanumeric())
                    && (i == b.len() || !b[i].is_ascii_alphanumeric())
                {
                    return s.get(start..i);
                }
            } else {
                i += 1;
            }
        }
        None
    }

    pub fn has_known_ext(name: &str) -> bool {
        match name.rsplit_once('.') {
            Some((stem, ext)) if !stem.is_empty() => {
                let e = ext.to_ascii_lowercase();
                EXTENSIONS.contains(&e.as_str())
            }
            _ => false,
        }
    }

    pub fn clean_token(tok: &str) -> &str {
        let mut t = tok.trim_matches(|c: char| {
            matches!(
                c,
                '"' | '\''
                    | '`'
                    | '('
                    | '['
                    | '{'
                    | '<'
                    | ')'
                    | ']'
                    | '}'
                    | '>'
                    | ','
                    | ';'
                    | '!'
                    | '?'
            )
        });
        if let Some((_, v)) = t.split_once('=') {
            t = v.trim_matches(|c: char| matches!(c, '"' | '\'' | '`'));
        }
        t = t.trim_end_matches(|c: char| {
            matches!(
                c,
                '.' | ':' | ',' | ';' | ')' | ']' | '}' | '\'' | '"' | '`'
            )
        });
        loop {
            match t.rsplit_once(':') {
                Some((head, tail))
                    if !tail.is_empty()
                        && tail.bytes().all(|b| b.is_ascii_digit())
                        && !head.is_empty() =>
                {
                    t = head
                }
                _ => break,
            }
        }
        t
    }

    pub fn is_path_like(t: &str) -> bool {
        let n = t.chars().count();
        if !(3..=ITEM_CHARS).contains(&n) || t.contains("://") {
            return false;
        }
        if !t
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "._-/\\~@+%:".contains(c))
        {
            return false;
        }
        if let Some(i) = t.find(':') {
            if i != 1 || t.matches(':').count() > 1 {
                return false;
            }
        }
        if !t.chars().any(|c| c.is_ascii_alphabetic()) {
            return false;
        }
        let segs: Vec<&str> = t.split(['/', '\\']).collect();
        let last = segs.last().copied().unwrap_or("");
        if segs.len() == 1 {
            return has_known_ext(t) && !t.starts_with('.');
        }
        let inner_empty = segs
            .iter()
            .skip(1)
            .take(segs.len().saturating_sub(2))
            .any(|s| s.is_empty());
        if inner_empty {
            return false;
        }
        let rooted = t.starts_with('/')
            || t.starts_with("./")
            || t.starts_with("../")
            || t.starts_with("~/")
            || t.get(1..3) == Some(":\\");
        let nonempty = segs.iter().filter(|s| !s.is_empty()).count();
        if has_known_ext(last) {
            return true;
        }
        if rooted {
            return nonempty >= 2;
        }
        nonempty >= 3
            && segs
                .iter()
                .all(|s| !s.is_empty() && !s.bytes().all(|b| b.is_ascii_digit()))
    }
}

fn token_strategy() -> impl proptest::strategy::Strategy<Value = String> {
    use proptest::prelude::*;
    let piece = prop_oneof![
        Just("src".to_string()),
        Just("main.RS".to_string()),
        Just(".rs".to_string()),
        Just("a.Json".to_string()),
        Just("Dockerfile".to_string()),
        Just("x.dockerfile".to_string()),
        Just("é.rs".to_string()),
        Just("ü".to_string()),
        Just("https://".to_string()),
        Just("12".to_string()),
        "[a-zA-Z0-9_]{0,6}",
        "[ -~]{0,4}",
        prop::sample::select(vec![
            "/", "\\", ".", ":", "::", "=", "\"", "'", "`", "(", ")", "[", "]", "{", "}", "<", ">",
            ",", ";", "!", "?", "~/", "./", "../", "C:\\", ":12", ":3:4", "..", "-", "@", "+", "%",
        ])
        .prop_map(str::to_string),
    ];
    proptest::collection::vec(piece, 0..8).prop_map(|v| v.concat())
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(4_000))]
    #[test]
    fn byte_scanners_equal_the_char_scanners(tok in token_strategy()) {
        proptest::prop_assert_eq!(super::scan::clean_token(&tok), before_bytes::clean_token(&tok));
        proptest::prop_assert_eq!(is_path_like(&tok), before_bytes::is_path_like(&tok), "{:?}", tok);
        let cleaned = super::scan::clean_token(&tok);
        proptest::prop_assert_eq!(is_path_like(cleaned), before_bytes::is_path_like(cleaned), "{:?}", cleaned);
    }

    #[test]
    fn artifact_ids_equal_the_lowered_copy_scan(
        parts in proptest::collection::vec(
            proptest::prop_oneof![
                proptest::strategy::Just("artifact ".to_string()),
                proptest::strategy::Just("ARTIFACT: ".to_string()),
                proptest::strategy::Just("ArTiFaCt".to_string()),
                // Near misses and overlaps for the skipping search.
                proptest::strategy::Just("artifac".to_string()),
                proptest::strategy::Just("aRtI".to_string()),
                proptest::strategy::Just("fact".to_string()),
                proptest::strategy::Just("T".to_string()),
                proptest::strategy::Just("artiartifact".to_string()),
                proptest::strategy::Just("\u{54}\u{c1}".to_string()),
                proptest::strategy::Just("\n".to_string()),
                proptest::strategy::Just("é".to_string()),
                proptest::strategy::Just(HEX40.to_string()),
                proptest::strategy::Just(HEX40.to_ascii_uppercase()),
                proptest::strategy::Just("0123456789ABCDEFabcdef0123456789abcdef01".to_string()),
                "[0-9a-fA-Fx -]{0,8}",
            ],
            0..14,
        ),
    ) {
        let text = parts.concat();
        proptest::prop_assert_eq!(artifact_ids(&text), before_bytes::artifact_ids(&text));
    }

    #[test]
    fn identifier_scan_skips_change_nothing(
        toks in proptest::collection::vec(
            proptest::prop_oneof![
                token_strategy(),
                "[a-z]{0,9}",
                "[a-zA-Z0-9_:/.-]{0,12}",
                proptest::strategy::Just("http://example.com/a_b".to_string()),
                proptest::strategy::Just("abcdefab-abcd-abcd-abcd-abcdefabcdef".to_string()),
                proptest::strategy::Just("ab-cdef12".to_string()),
                proptest::strategy::Just("x\u{b}y".to_string()),
                proptest::strategy::Just("42;".to_string()),
                proptest::strategy::Just("a1-b2-c3".to_string()),
                proptest::strategy::Just("ab:cd".to_string()),
                "[0-9a-f;:_()-]{0,8}",
                "[a-z]{0,3}[A-Z_-][a-z0-9é]{0,3}",
            ],
            0..40,
        ),
        seps in proptest::collection::vec(
            proptest::sample::select(vec![
                " ", "\n", "\t", "\u{b}", "\u{c}", "\r\n", "\u{a0}", "  ", "é ", "\u{85}", "\u{2028}",
                "\u{3000}", "\u{1f}",
            ]),
            40,
        ),
    ) {
        let mut text = String::new();
        for (t, s) in toks.iter().zip(&seps) {
            text.push_str(t);
            text.push_str(s);
        }
        let mut fast = IdentCollector::default();
        fast.scan(&text);
        let mut all = IdentCollector::default();
        all.scan_unfiltered(&text);
        proptest::prop_assert_eq!(fast.finish(usize::MAX), all.finish(usize::MAX), "{:?}", text);
    }

    #[test]
    fn gist_equals_the_clip_of_the_whole_line(
        words in proptest::collection::vec("[a-zé]{0,12}|[ \n\t]{1,3}", 0..120),
    ) {
        let text = words.concat();
        proptest::prop_assert_eq!(gist(&text), clip(&one_line(&text), GIST_CHARS));
    }
}

#[test]
fn gist_of_long_texts_equals_the_clip_of_the_whole_line() {
    let mut met = 0;
    for n in [0usize, 1, 150, 299, 300, 301, 302, 303, 600, 5_000] {
        for unit in ["a ", "ab\n", "é  ", "word ", "x"] {
            let text = unit.repeat(n);
            assert_eq!(
                gist(&text),
                clip(&one_line(&text), GIST_CHARS),
                "{unit:?} × {n}"
            );
            met += 1;
        }
    }
    assert_eq!(met, 50);
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

/// The searches as they were before the searcher-free rewrite (`str::contains` with `&str`
/// patterns on a lowered copy of each line, a `to_ascii_lowercase` of the tool name): the
/// oracle [`contains_any`] and its callers must equal.
mod before_searches {
    pub fn error_lines(text: &str, max: usize) -> Vec<String> {
        use crate::digest::scan::{error_lines_by, ERROR_CLEAR, ERROR_KEYS};
        error_lines_by(text, max, |l| {
            let lower = l.to_ascii_lowercase();
            ERROR_KEYS.iter().any(|k| lower.contains(k))
                && !ERROR_CLEAR.iter().any(|c| lower.contains(c))
        })
    }

    /// `collapse_churn`'s test for markers.
    pub fn has_churn(text: &str) -> bool {
        text.contains("<<<")
            || text.contains("untrusted")
            || text.contains("⟦openclaw:ctx⟧")
            || text.contains("[Internal task completion event]")
            || text.contains("OpenClaw runtime context (internal):")
            || text.contains("Delivery:")
    }

    /// `shell_command`'s test of the tool name.
    pub fn shellish(tool_name: &str) -> bool {
        let t = tool_name.to_ascii_lowercase();
        matches!(
            t.as_str(),
            "exec" | "bash" | "shell" | "sh" | "run" | "terminal" | "run_command" | "process"
        ) || t.contains("exec")
            || t.contains("bash")
            || t.contains("shell")
    }
}

/// Texts made of the searched words, their near misses and case variants.
fn search_text_strategy() -> impl proptest::strategy::Strategy<Value = String> {
    use proptest::prelude::*;
    let piece = prop_oneof![
        prop::sample::select(vec![
            "error",
            "ERROR",
            "Errors: 0",
            "eRr",
            "errorr",
            "failed",
            " 0 failed",
            "0 FAILED",
            "fail",
            "Failure",
            "0 failures",
            "panic",
            "PANI",
            "traceback",
            "trace",
            "exception",
            "fatal",
            "fata",
            "no errors",
            "no error",
            "error: 0",
            "0 errors",
            "<<<",
            "<<",
            "<",
            "untrusted",
            "untruste",
            "UNTRUSTED",
            "⟦openclaw:ctx⟧",
            "⟦openclaw:ctx",
            "⟦",
            "[Internal task completion event]",
            "[Internal task",
            "OpenClaw runtime context (internal):",
            "OpenClaw runtime",
            "Delivery:",
            "Delivery",
            "delivery:",
            "exec",
            "EXEC",
            "exe",
            "bash",
            "Bash",
            "bas",
            "shell",
            "SHELL",
            "shel",
            "sh",
            "run",
            "terminal",
            "run_command",
            "process",
            "é",
            "İ",
            "K",
            "ſ",
            "\n",
            "\r\n",
            " ",
            "\t",
        ])
        .prop_map(str::to_string),
        "[a-zA-Z0-9 :<]{0,6}",
    ];
    proptest::collection::vec(piece, 0..12).prop_map(|v| v.concat())
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(4_000))]
    #[test]
    fn searches_without_a_searcher_equal_the_str_searches(text in search_text_strategy()) {
        for max in [1, MAX_ERRORS, usize::MAX] {
            proptest::prop_assert_eq!(
                error_lines(&text, max),
                before_searches::error_lines(&text, max),
                "{:?}", text
            );
        }
        proptest::prop_assert_eq!(
            contains_any(&text, super::churn::TRIGGERS, false),
            before_searches::has_churn(&text),
            "{:?}", text
        );
        let lower = text.to_ascii_lowercase();
        for pats in [&["error", "fatal"][..], &["shell"], &["0 failed", "no errors"], &[""], &[]] {
            proptest::prop_assert_eq!(
                contains_any(&text, pats, true),
                pats.iter().any(|p| !p.is_empty() && lower.contains(p)),
                "{:?} {:?}", text, pats
            );
            proptest::prop_assert_eq!(
                contains_any(&text, pats, false),
                pats.iter().any(|p| !p.is_empty() && text.contains(p)),
                "{:?} {:?}", text, pats
            );
        }
        let args = json!({"command": "ls"});
        proptest::prop_assert_eq!(
            shell_command(&text, &args).is_some(),
            before_searches::shellish(&text),
            "{:?}", text
        );
        // Text without markers is handed back unchanged (not collapsed).
        if !before_searches::has_churn(&text) {
            proptest::prop_assert_eq!(collapse_churn(&text), text.clone());
        }
    }
}
