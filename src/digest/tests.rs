use super::*;
use crate::fold::oracle;
use crate::fold::prompt::summary_prompt;
use crate::fold::record::*;
use crate::json;
use crate::text::*;
use proptest::prelude::*;

fn msg(v: Value) -> Message {
    Message::from_value(v).unwrap()
}

const HEX40: &str = "0123456789abcdef0123456789abcdef01234567";

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
    assert_eq!(d.files, vec!["src/engine.rs", "Cargo.lock"]);
    assert_eq!(
        d.identifiers,
        vec![
            "https://github.com/acme/repo/issues/4739",
            "9fceb02",
            "fold_decision"
        ]
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
    assert_eq!(d.call_ids, vec!["call_1", "call_2"]);
    assert_eq!(d.tool_name.as_deref(), Some("exec"));
    assert_eq!(
        d.commands,
        vec!["$ cd /work/main && cargo test --lib pairing"]
    );
    assert_eq!(d.files, vec!["/work/main", "src/lib.rs", "lib.rs"]);
    assert_eq!(d.text, "I'll run the tests, then edit lib.rs.");
    let all = serde_json::to_string(&d).unwrap();
    assert!(
        !all.contains("shadow") && !all.contains("SECRET_TOKEN"),
        "thinking leaked: {all}"
    );
    assert!(d.identifiers.contains(&"a_b_c".to_string()));
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
        d.commands,
        vec!["$ cargo test → exit 101: error[E0425]: cannot find value `x` in this scope"]
    );
    assert_eq!(
        d.errors,
        vec!["error[E0425]: cannot find value `x` in this scope"]
    );
    assert_eq!(d.files, vec!["src/cost.rs"]);
    assert!(!d.protected);
    // Success, details.exitCode wins over text.
    let ok = msg(
        json!({"role":"toolResult","toolCallId":"c","toolName":"bash","content":"test result: ok. 14 passed; 0 failed","details":{"exitCode":0}}),
    );
    let d = digest(&ok, &cfg, Some(("bash", &args)));
    assert_eq!(d.commands, vec!["$ cargo test → exit 0"]);
    assert!(d.errors.is_empty(), "{:?}", d.errors);
    let plain =
        msg(json!({"role":"toolResult","toolCallId":"c","toolName":"bash","content":"done"}));
    assert_eq!(
        digest(&plain, &cfg, Some(("bash", &args))).commands,
        vec!["$ cargo test → ok"]
    );
    let aborted = msg(
        json!({"role":"toolResult","toolCallId":"c","toolName":"bash","content":"Debugger attached.\n\nCommand aborted","isError":true}),
    );
    assert_eq!(
        digest(&aborted, &cfg, Some(("bash", &args))).commands,
        vec!["$ cargo test → aborted"]
    );
    // An error result with no keyword line reports its first line.
    let e = msg(
        json!({"role":"toolResult","toolCallId":"c","toolName":"edit","content":"Could not find the exact text in a.ts.","isError":true}),
    );
    assert_eq!(
        digest(&e, &cfg, None).errors,
        vec!["Could not find the exact text in a.ts."]
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
        digest(&failed, &cfg, Some(("read", &args))).errors,
        vec!["ENOENT: no such file, error opening src/err.rs"]
    );
    // A failed shell command's bare exit line is not repeated as an error.
    let sh = json!({"command":"false"});
    let bare = msg(
        json!({"role":"toolResult","toolCallId":"c","toolName":"exec","content":"Command exited with code 1","isError":true}),
    );
    let d = digest(&bare, &cfg, Some(("exec", &sh)));
    assert!(d.errors.is_empty(), "{:?}", d.errors);
    assert_eq!(d.commands, vec!["$ false → exit 1"]);
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
        d.files,
        vec!["AGENTS.md"],
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
        digest(&m, &Config::default(), None).artifacts,
        vec![HEX40.to_string()]
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

fn sample_digests() -> Vec<Digest> {
    let cfg = Config::default();
    let args = json!({"command":"cargo test"});
    vec![
        digest(
            &msg(
                json!({"role":"user","content":"Build the cost model in src/cost.rs. Never use the regex crate. Ticket 550e8400-e29b-41d4-a716-446655440000."}),
            ),
            &cfg,
            None,
        ),
        digest(
            &msg(
                json!({"role":"assistant","content":[{"type":"text","text":"Plan: write price_for first."},{"type":"toolCall","id":"c1","name":"exec","arguments":{"command":"cargo test"}}]}),
            ),
            &cfg,
            None,
        ),
        digest(
            &msg(
                json!({"role":"toolResult","toolCallId":"c1","toolName":"exec","content":format!("error: linker failed\nCommand exited with code 1\n[cachefold] artifact {HEX40}"),"isError":true}),
            ),
            &cfg,
            Some(("exec", &args)),
        ),
        digest(
            &msg(json!({"role":"user","content":"Also keep DS_BLOCK = 128."})),
            &cfg,
            None,
        ),
    ]
}

#[test]
fn render_has_header_sections_and_merged_commands() {
    let ds = sample_digests();
    let refs: Vec<&Digest> = ds.iter().collect();
    let out = render_extractive("f-000001", &refs, 10_000);
    let first = out.lines().next().unwrap();
    assert_eq!(
        first,
        "[cachefold fold f-000001] Earlier conversation folded to save context. Exact text: call cachefold_recover with {\"id\":\"f-000001\"}; search with cachefold_search."
    );
    for s in [
        "## Goal",
        "## User constraints and instructions",
        "## Decisions",
        "## Files touched",
        "## Commands and outcomes",
        "## Errors",
        "## Open threads",
        "## Artifacts",
        "## Identifiers",
    ] {
        assert!(out.contains(s), "missing {s}:\n{out}");
    }
    assert!(out.contains("- Build the cost model in src/cost.rs. Never use the regex crate."));
    assert!(out.contains("- Also keep DS_BLOCK = 128."));
    assert!(
        out.contains("- $ cargo test → exit 1: error: linker failed\n"),
        "{out}"
    );
    assert!(
        !out.contains("- $ cargo test\n"),
        "bare command must merge into its outcome:\n{out}"
    );
    assert!(out.contains(&format!(
        "- {HEX40} (cachefold_recover {{\"id\":\"{HEX40}\"}})"
    )));
    assert!(out.contains("550e8400-e29b-41d4-a716-446655440000"));
    assert!(out.contains("last user request: Also keep DS_BLOCK = 128."));
    assert!(out.contains("last command failed: $ cargo test → exit 1"));
    // Deterministic.
    assert_eq!(out, render_extractive("f-000001", &refs, 10_000));
    assert!(out.chars().count() <= 10_000);
}

#[test]
fn render_drops_low_priority_first_and_keeps_user_text() {
    let ds = sample_digests();
    let refs: Vec<&Digest> = ds.iter().collect();
    let full = render_extractive("f1", &refs, 100_000);
    let header = fold_header("f1").chars().count();
    let tight = render_extractive("f1", &refs, header + 260);
    assert!(
        tight.chars().count() <= header + 260,
        "{}",
        tight.chars().count()
    );
    assert!(tight.contains("Never use the regex crate."), "{tight}");
    assert!(tight.contains("Also keep DS_BLOCK = 128."), "{tight}");
    assert!(!tight.contains("## Decisions"), "{tight}");
    assert!(full.contains("## Decisions"));
    // Smaller than the header: just the header.
    assert_eq!(
        render_extractive("f1", &refs, 5),
        format!("{}\n", fold_header("f1"))
    );
    assert_eq!(
        render_extractive("f1", &[], 1000),
        format!("{}\n", fold_header("f1"))
    );
}

#[test]
fn summary_prompt_asks_for_sections_verbatim() {
    let ds = sample_digests();
    let refs: Vec<&Digest> = ds.iter().collect();
    let (sys, user) = summary_prompt("f9", &refs, 2_000);
    assert!(sys.contains("exactly"));
    assert!(user.contains("at most 2000 characters"));
    for s in SECTIONS {
        assert!(user.contains(&format!("## {s}\n")), "{s}");
    }
    assert!(user.contains("verbatim"));
    assert!(user.contains("550e8400-e29b-41d4-a716-446655440000"));
    assert!(user.contains("1. user: Build the cost model"));
    assert!(user.contains("2. assistant → exec: Plan: write price_for first. [$ cargo test]"));
    assert_eq!(summary_prompt("f9", &refs, 2_000), (sys, user));
}

/// Proptest counterexample: section headers were counted one char short, so a record
/// with many sections overran its budget by a few chars.
#[test]
fn regression_budget_counts_section_headers_exactly() {
    let cfg = Config::default();
    let big = format!("error: boom src/main.rs https://a.b/c \n Sender (untrusted metadata): fold_decision artifact {HEX40} \n {}", "A AAaA 0aa-aA0aAaAaAaa ".repeat(40));
    let ts = [big.as_str(), "", "fold_decision error: boom fold_decision artifact 0123456789abcdef0123456789abcdef01234567 fold_decision"];
    let ds: Vec<Digest> = ts
        .iter()
        .enumerate()
        .map(|(i, t)| {
            digest(
                &msg(json!({"role": if i % 2 == 0 { "user" } else { "assistant" }, "content": t})),
                &cfg,
                None,
            )
        })
        .collect();
    let refs: Vec<&Digest> = ds.iter().collect();
    let full = render_extractive("fid", &refs, usize::MAX);
    let s = collect_sections(&refs);
    assert_eq!(
        full.chars().count(),
        Fitter::new(&fold_header("fid"), s).total()
    );
    for max in (0..full.chars().count() + 10).step_by(7) {
        let out = render_extractive("fid", &refs, max);
        assert!(
            out.chars().count() <= max.max(fold_header("fid").chars().count() + 1),
            "max {max}: {}",
            out.chars().count()
        );
    }
}

#[test]
fn clip_and_head_tail_bounds() {
    assert_eq!(clip("hello world", 20), "hello world");
    assert_eq!(clip("hello wonderful world", 12), "hello…");
    assert_eq!(clip("abcdefghij", 5), "abcd…");
    assert_eq!(clip("abc", 0), "");
    let s = "x".repeat(5000);
    assert!(head_tail(&s, 1200).chars().count() <= 1200);
    let s = "ä ".repeat(3000);
    assert!(head_tail(&s, 500).chars().count() <= 500);
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
    assert_eq!(d.commands, vec!["$ ls -la → exit 2"]);
    assert_eq!(d.role, "bashExecution");
}

fn arb_text() -> impl Strategy<Value = String> {
    let atoms = prop_oneof![
        Just("src/main.rs".to_string()),
        Just("error: boom".to_string()),
        Just("fold_decision".to_string()),
        Just(format!("artifact {HEX40}")),
        Just("https://a.b/c".to_string()),
        Just("\n".to_string()),
        Just("<<<BEGIN_OPENCLAW_INTERNAL_CONTEXT>>>".to_string()),
        Just("Sender (untrusted metadata):".to_string()),
        Just("```json".to_string()),
        Just("你好".to_string()),
        "[a-zA-Z0-9 _./-]{0,40}",
    ];
    proptest::collection::vec(atoms, 0..80).prop_map(|v| v.join(" "))
}

fn arb_digest() -> impl Strategy<Value = Digest> {
    let pick = |pool: &'static [&'static str], n: usize| {
        proptest::collection::vec(proptest::sample::select(pool), 0..n)
            .prop_map(|v| v.into_iter().map(str::to_string).collect::<Vec<_>>())
    };
    const WORDS: &[&str] = &[
        "src/a.rs",
        "src/b.rs",
        "Cargo.toml",
        "x_y",
        "fold_decision",
        "42",
        HEX40,
        "https://a.b/c",
        "",
    ];
    const CMDS: &[&str] = &[
        "$ cargo test",
        "$ cargo test → exit 1",
        "$ cargo test → ok",
        "$ ls",
        "$ ls → exit 0",
        "$ make → timed out",
        "$ make",
    ];
    const ERRS: &[&str] = &[
        "error: boom",
        "error[E0308]: mismatched types",
        "panicked at src/a.rs:3",
        "boom",
    ];
    let user = prop_oneof![
        Just(None),
        Just(Some("ok".to_string())),
        Just(Some("/mode".to_string())),
        "[a-z ]{0,60}".prop_map(Some),
        ("[a-z]{1,12}", 5usize..400).prop_map(|(w, n)| Some(format!("{w} ").repeat(n))),
        (1usize..30).prop_map(|n| Some(format!("line one\n{}", "keep it short. ".repeat(n)))),
    ];
    (
        0..3usize,
        prop_oneof![
            Just(String::new()),
            "[a-z ]{1,40}",
            (1usize..60).prop_map(|n| "note ".repeat(n))
        ],
        (
            pick(WORDS, 6),
            pick(CMDS, 4),
            pick(ERRS, 3),
            pick(WORDS, 10),
            pick(&[HEX40, "0123456789abcdef0123456789abcdef01234567"], 2),
        ),
        user,
    )
        .prop_map(
            |(role, text, (files, commands, errors, identifiers, artifacts), user_text)| Digest {
                role: ["user", "assistant", "toolResult"][role].to_string(),
                text,
                files,
                commands,
                errors,
                identifiers,
                artifacts,
                user_text: if role == 0 { user_text } else { None },
                ..Digest::default()
            },
        )
}

/// Fold-record building is linear: 200,000 digests (a 100,000-message fold has about as
/// many items) fitted into a small record. The quadratic builder recomputed the record's
/// length and shifted the section once per dropped item: about 10^11 steps here, hours.
#[test]
fn fold_record_of_200k_digests_is_linear() {
    let ds: Vec<Digest> = (0..200_000)
        .map(|i| Digest {
            role: if i % 2 == 0 { "user" } else { "assistant" }.to_string(),
            text: format!("decision {i}"),
            files: vec![format!("src/m{i}.rs")],
            commands: vec![format!("$ run {i}"), format!("$ run {i} → exit {}", i % 3)],
            errors: vec![format!("error: e{i}")],
            identifiers: vec![format!("id_{i}")],
            user_text: (i % 2 == 0).then(|| format!("step {i}: {}", "word ".repeat(i % 50))),
            ..Digest::default()
        })
        .collect();
    let refs: Vec<&Digest> = ds.iter().collect();
    let out = render_extractive("f1", &refs, 8_000);
    assert!(out.chars().count() <= 8_000);
    assert!(out.contains("step 199998"), "the newest user text is kept");
    let (_, user) = summary_prompt("f1", &refs, 2_000);
    assert!(user.contains("1. user: step 0"));
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn digests_are_bounded(t in arb_text(), role in 0..4usize) {
        let cfg = Config::default();
        let args = json!({"command": t.clone(), "path": "a/b.rs"});
        let m = match role {
            0 => json!({"role":"user","content":t}),
            1 => json!({"role":"assistant","content":[{"type":"text","text":t},{"type":"toolCall","id":"c","name":"exec","arguments":args}]}),
            2 => json!({"role":"toolResult","toolCallId":"c","toolName":"exec","content":t,"isError":true}),
            _ => json!({"role":"custom","content":t}),
        };
        let d = digest(&msg(m), &cfg, Some(("exec", &args)));
        prop_assert!(d.text.chars().count() <= GIST_CHARS);
        prop_assert!(d.user_text.as_ref().map_or(0, |u| u.chars().count()) <= USER_TEXT_CHARS);
        prop_assert!(d.files.len() <= MAX_FILES && d.commands.len() <= MAX_COMMANDS);
        prop_assert!(d.errors.len() <= MAX_ERRORS && d.identifiers.len() <= MAX_IDENTIFIERS);
        prop_assert!(d.artifacts.len() <= MAX_ARTIFACTS);
        prop_assert!(d.commands.iter().chain(&d.errors).chain(&d.files).all(|x| x.chars().count() <= 2 * ITEM_CHARS));
    }

    #[test]
    fn render_respects_budget_and_keeps_identifiers_whole(ts in proptest::collection::vec(arb_text(), 0..8), max in 0usize..3000) {
        let cfg = Config::default();
        let ds: Vec<Digest> = ts.iter().enumerate().map(|(i, t)| {
            let role = if i % 2 == 0 { "user" } else { "assistant" };
            digest(&msg(json!({"role": role, "content": t})), &cfg, None)
        }).collect();
        let refs: Vec<&Digest> = ds.iter().collect();
        let out = render_extractive("fid", &refs, max);
        let header = fold_header("fid").chars().count() + 1;
        prop_assert!(out.chars().count() <= max.max(header), "{} > {}", out.chars().count(), max);
        prop_assert!(out.starts_with(&fold_header("fid")));
        if let Some(pos) = out.find("\n## Identifiers\n") {
            let line = out[pos + 16..].lines().next().unwrap_or("");
            let all: Vec<&String> = ds.iter().flat_map(|d| d.identifiers.iter()).collect();
            for id in line.split(", ") {
                prop_assert!(all.iter().any(|x| x.as_str() == id), "cut identifier {id:?}");
            }
        }
    }

    /// The linear record builder renders exactly what the quadratic one did, on digests
    /// with duplicates, commands with and without outcomes, long user text and budgets from
    /// nothing to everything.
    #[test]
    fn linear_builder_matches_the_quadratic_oracle(ds in proptest::collection::vec(arb_digest(), 0..60), max in 0usize..6000) {
        let refs: Vec<&Digest> = ds.iter().collect();
        for m in [max, max / 8, max * 4, usize::MAX] {
            prop_assert_eq!(
                render_extractive("f3", &refs, m),
                oracle::render_extractive_quadratic("f3", &refs, m)
            );
        }
        prop_assert_eq!(summary_prompt("f3", &refs, max / 4), oracle::summary_prompt_quadratic("f3", &refs, max / 4));
    }

    #[test]
    fn text_without_markers_is_unchanged(t in "[a-zA-Z0-9 \n:()`.,-]{0,200}") {
        prop_assume!(!t.contains("untrusted") && !t.contains("Delivery:"));
        prop_assert_eq!(collapse_churn(&t), t);
    }
}
