//! The built-in demo session (`cachefold-bench --demo`): a deterministic, realistic long
//! coding session, generated here because the corpus may not be copied into the repository.
//!
//! Shape (OpenClaw/pi message shapes, one OpenClaw-like agent working on this repository):
//! 22 user turns with standing constraints and corrections, ~8 model calls per turn (≥ 150
//! calls), tool calls to `read` (real files of this project, embedded at compile time with
//! `include_str!`, whole or with offset/limit), `grep` over those files, `exec` (cargo build
//! and test logs with real test names and rustc-style errors pointing at real lines, git diff,
//! ls), `edit` and `write`. Parallel reads, short thinking blocks, idle gaps of 6-20 minutes
//! between some turns (so cache-ttl pruning has something to do) and tool outputs from a few
//! hundred chars to ~60K chars, like the corpus sessions (largest corpus result: 51K chars).
//!
//! Determinism: a fixed-seed LCG drives every choice; the only input is the embedded files,
//! so the session changes only when those files change.

use crate::replay::transcript::{Call, Transcript};
use ::cachefold::message::{Message, Usage};
use serde_json::json;
use serde_json::Value;

/// Files the demo agent reads (path, contents), embedded at compile time.
pub const FILES: &[(&str, &str)] = &[
    (
        "src/replay/transcript/mod.rs",
        include_str!("../replay/transcript/mod.rs"),
    ),
    ("src/message.rs", include_str!("../../../../src/message.rs")),
    ("src/error.rs", include_str!("../../../../src/error.rs")),
    ("src/config.rs", include_str!("../../../../src/config.rs")),
    ("src/bench/cache.rs", include_str!("cache.rs")),
    ("src/bench/render.rs", include_str!("render.rs")),
    (
        "src/bench/strategies/legacy.rs",
        include_str!("strategies/legacy.rs"),
    ),
    ("src/bench/run.rs", include_str!("run.rs")),
    ("src/bench/anchors.rs", include_str!("anchors.rs")),
    ("src/bench/summarize.rs", include_str!("summarize.rs")),
    ("Cargo.toml", include_str!("../../Cargo.toml")),
];

struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        self.0 >> 33
    }
    fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            0
        } else {
            self.next() % n
        }
    }
}

enum Act {
    Read {
        file: usize,
        offset: Option<usize>,
        limit: Option<usize>,
    },
    Grep {
        pattern: &'static str,
    },
    Exec {
        cmd: &'static str,
    },
    Edit {
        file: usize,
    },
    Write {
        path: &'static str,
    },
}

struct Gen {
    rng: Lcg,
    now: u64,
    msgs: Vec<Value>,
    calls: Vec<Call>,
    next_id: u64,
    edits: u64,
}

fn file(i: usize) -> (&'static str, &'static str) {
    FILES.get(i).copied().unwrap_or(("README.md", ""))
}

fn line_count(s: &str) -> usize {
    s.lines().count()
}

impl Gen {
    fn tick(&mut self, lo: u64, hi: u64) -> u64 {
        self.now += lo + self.rng.below(hi - lo + 1);
        self.now
    }

    fn user(&mut self, text: &str) {
        let ts = self.tick(20_000, 90_000);
        self.msgs.push(
            json!({"role": "user", "content": [{"type": "text", "text": text}], "timestamp": ts}),
        );
    }

    fn read_output(&self, f: usize, offset: Option<usize>, limit: Option<usize>) -> String {
        let (_, body) = file(f);
        let total = line_count(body);
        let start = offset.unwrap_or(1).max(1);
        let limit = limit.unwrap_or(2_000);
        let lines: Vec<&str> = body.lines().skip(start - 1).take(limit).collect();
        let end = start + lines.len().saturating_sub(1);
        let mut s = lines.join("\n");
        if end < total {
            s.push_str(&format!(
                "\n\n[Showing lines {start}-{end} of {total}. Use offset={} to continue.]",
                end + 1
            ));
        }
        s
    }

    fn grep_output(&self, pattern: &str) -> String {
        let mut out = Vec::new();
        for (path, body) in FILES {
            for (n, l) in body.lines().enumerate() {
                if l.contains(pattern) {
                    out.push(format!("{path}:{}:{}", n + 1, l.trim_end()));
                }
            }
        }
        let total = out.len();
        out.truncate(100);
        let mut s = out.join("\n");
        if total > 100 {
            s.push_str(&format!(
                "\n\n[{total} matches, showing first 100. Narrow the pattern or use glob.]"
            ));
        }
        if s.is_empty() {
            s = "No matches found".into();
        }
        s
    }

    fn test_names(&self) -> Vec<String> {
        let mut v = Vec::new();
        for (path, body) in FILES {
            let module = path
                .trim_start_matches("src/")
                .trim_end_matches(".rs")
                .replace('/', "::");
            let mut pending = false;
            for l in body.lines() {
                let t = l.trim();
                if t == "#[test]" {
                    pending = true;
                } else if pending {
                    if let Some(rest) = t.strip_prefix("fn ") {
                        let name = rest.split('(').next().unwrap_or("");
                        v.push(format!("{module}::tests::{name}"));
                    }
                    pending = false;
                }
            }
        }
        v
    }

    fn exec_output(&mut self, cmd: &str) -> (String, bool) {
        let tests = self.test_names();
        match cmd {
            c if c.starts_with("cargo build") || c.starts_with("cargo clippy") => {
                let mut s = String::new();
                for dep in [
                    "serde_derive v1.0.229",
                    "serde_json v1.0.145",
                    "sha1 v0.10.7",
                    "onig_sys v69.9.1",
                    "tokenizers v0.22.2",
                    "rusqlite v0.32.1",
                    "zstd-sys v2.0.16",
                    "tiktoken-rs v0.12.1",
                ] {
                    s.push_str(&format!("   Compiling {dep}\n"));
                }
                s.push_str("   Compiling cachefold v0.1.0 (/home/sam/src/cachefold)\n");
                let fail = self.edits % 3 == 1;
                if fail {
                    let (path, body) = file(4);
                    let ln = line_count(body) / 2;
                    let text = body.lines().nth(ln - 1).unwrap_or("").trim();
                    s.push_str(&format!(
                        "error[E0308]: mismatched types\n  --> {path}:{ln}:17\n   |\n{ln:>4} | {text}\n   |                 ^^^^ expected `u64`, found `usize`\n   |\nhelp: you can convert a `usize` to a `u64` and panic if the converted value doesn't fit\n   |\n{ln:>4} |                 .try_into().unwrap()\n   |                 ++++++++++++++++++++\n\nerror: could not compile `cachefold` (lib) due to 1 previous error\n"
                    ));
                } else {
                    for k in 0..(2 + self.rng.below(4)) {
                        let (path, body) = file((k as usize * 3 + 1) % FILES.len());
                        let ln = 1 + (k as usize * 37) % line_count(body).max(1);
                        s.push_str(&format!(
                            "warning: unused variable: `tmp{k}`\n  --> {path}:{ln}:13\n   |\n   = note: `#[warn(unused_variables)]` on by default\n\n"
                        ));
                    }
                    s.push_str("    Finished `dev` profile [unoptimized + debuginfo] target(s) in 38.41s\n");
                }
                (s, fail)
            }
            c if c.starts_with("cargo test") => {
                let mut s = String::from("    Finished `test` profile [unoptimized + debuginfo] target(s) in 21.07s\n     Running unittests src/lib.rs (target/debug/deps/cachefold-5cf6edcf8bce83a8)\n\n");
                let fail_idx = if self.edits % 4 == 2 {
                    Some(self.rng.below(tests.len().max(1) as u64) as usize)
                } else {
                    None
                };
                s.push_str(&format!("running {} tests\n", tests.len() * 6));
                for rep in 0..6 {
                    for (i, t) in tests.iter().enumerate() {
                        let status = if Some(i) == fail_idx && rep == 0 {
                            "FAILED"
                        } else {
                            "ok"
                        };
                        s.push_str(&format!(
                            "test {t}{} ... {status}\n",
                            if rep == 0 {
                                String::new()
                            } else {
                                format!("_case_{rep}")
                            }
                        ));
                    }
                }
                let failed = fail_idx.is_some();
                if let Some(i) = fail_idx {
                    let t = tests.get(i).cloned().unwrap_or_default();
                    s.push_str(&format!("\nfailures:\n\n---- {t} stdout ----\n\nthread '{t}' panicked at src/bench/cache.rs:212:9:\nassertion `left == right` failed\n  left: 1408\n right: 1536\nnote: run with `RUST_BACKTRACE=1` environment variable to display a backtrace\n\n\nfailures:\n    {t}\n\ntest result: FAILED. {} passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.84s\n\nerror: test failed, to rerun pass `--lib`\n", tests.len() * 6 - 1));
                } else {
                    s.push_str(&format!(
                        "\ntest result: ok. {} passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.81s\n",
                        tests.len() * 6
                    ));
                }
                (s, failed)
            }
            c if c.starts_with("git diff") => {
                let (path, body) = file(self.rng.below(FILES.len() as u64) as usize);
                let start = 1 + self
                    .rng
                    .below(line_count(body).saturating_sub(40).max(1) as u64)
                    as usize;
                let mut s = format!("diff --git a/{path} b/{path}\nindex 3f2a9c1..8be01d7 100644\n--- a/{path}\n+++ b/{path}\n@@ -{start},30 +{start},31 @@\n");
                for (k, l) in body.lines().skip(start - 1).take(30).enumerate() {
                    if k == 12 {
                        s.push_str(&format!("-{l}\n+{l} // checked\n"));
                    } else {
                        s.push_str(&format!(" {l}\n"));
                    }
                }
                (s, false)
            }
            _ => {
                let mut s = String::new();
                for (p, b) in FILES {
                    s.push_str(&format!("{:>8}  {p}\n", b.len()));
                }
                (s, false)
            }
        }
    }

    /// One model call: optional thinking + text, then tool calls and their results.
    fn step(&mut self, text: Option<&str>, acts: Vec<Act>) {
        let ts = self.tick(3_000, 25_000);
        let mut parts: Vec<Value> = Vec::new();
        if self.rng.below(3) == 0 {
            parts.push(json!({"type": "thinking", "thinking": format!("Checking the next piece before changing anything; step {} of the plan.", self.calls.len() + 1)}));
        }
        if let Some(t) = text {
            parts.push(json!({"type": "text", "text": t}));
        }
        let mut results: Vec<Value> = Vec::new();
        for a in acts {
            self.next_id += 1;
            let id = format!("call_{:05}", self.next_id);
            let (name, args, out, err) = match a {
                Act::Read {
                    file: f,
                    offset,
                    limit,
                } => {
                    let (path, _) = file(f);
                    let mut args = json!({"path": path});
                    if let (Some(o), Some(obj)) = (offset, args.as_object_mut()) {
                        obj.insert("offset".into(), json!(o));
                    }
                    if let (Some(l), Some(obj)) = (limit, args.as_object_mut()) {
                        obj.insert("limit".into(), json!(l));
                    }
                    ("read", args, self.read_output(f, offset, limit), false)
                }
                Act::Grep { pattern } => (
                    "grep",
                    json!({"pattern": pattern, "path": "src"}),
                    self.grep_output(pattern),
                    false,
                ),
                Act::Exec { cmd } => {
                    let (out, failed) = self.exec_output(cmd);
                    let code = if failed { 101 } else { 0 };
                    (
                        "exec",
                        json!({"command": cmd}),
                        format!("{out}\n\n(exit code {code})"),
                        failed,
                    )
                }
                Act::Edit { file: f } => {
                    self.edits += 1;
                    let (path, body) = file(f);
                    let ln = 1 + (self.edits as usize * 53) % line_count(body).max(1);
                    let old = body.lines().nth(ln - 1).unwrap_or("").to_string();
                    (
                        "edit",
                        json!({"path": path, "oldText": old, "newText": format!("{old} // reviewed")}),
                        format!("Successfully replaced text in {path}."),
                        false,
                    )
                }
                Act::Write { path } => {
                    let content = format!(
                        "//! {path}: notes written by the demo agent.\n\n{}",
                        file(0).1.lines().take(40).collect::<Vec<_>>().join("\n")
                    );
                    (
                        "write",
                        json!({"path": path, "content": content}),
                        format!("Successfully wrote {} bytes to {path}", content.len()),
                        false,
                    )
                }
            };
            parts.push(json!({"type": "toolCall", "id": id, "name": name, "arguments": args}));
            results.push(json!({"role": "toolResult", "toolCallId": id, "toolName": name, "content": [{"type": "text", "text": out}], "isError": err, "timestamp": ts + 400}));
        }
        let stop = if results.is_empty() {
            "stop"
        } else {
            "toolUse"
        };
        let output = 40 + self.rng.below(400);
        let usage = Usage {
            input: 0,
            cache_read: 0,
            cache_write: 0,
            output,
        };
        let msg = json!({"role": "assistant", "content": parts, "api": "openai-completions", "provider": "deepseek", "model": "deepseek-flash",
            "usage": {"input": 0, "output": output, "cacheRead": 0, "cacheWrite": 0}, "stopReason": stop, "timestamp": ts});
        self.calls.push(Call {
            assistant_index: self.msgs.len(),
            timestamp_ms: ts as f64,
            usage: Some(usage),
            output_tokens: output,
        });
        self.msgs.push(msg);
        self.msgs.extend(results);
    }
}

/// The demo transcript (same bytes on every run of the same build).
pub fn session() -> Transcript {
    // 2026-11-16 (a Monday) 06:30 UTC: inside DeepSeek's peak band.
    let mut g = Gen {
        rng: Lcg(0x5eed_cafe_f00d),
        now: 1_794_810_600_000,
        msgs: Vec::new(),
        calls: Vec::new(),
        next_id: 0,
        edits: 0,
    };
    let turns: &[(&str, usize)] = &[
        ("We're adding a replay bench to cachefold. Read src/transcript.rs and src/bench/cache.rs first and tell me how a recorded call becomes a request. Don't change the public API of transcript.rs: the engine helper depends on it.", 0),
        ("Good. Now check that the cache model reproduces the hand-worked 768/769, 1024/1079 and 1408/1631 sequences from docs/cache-model.md. Run the tests.", 1),
        ("The 1408/1631 case fails for me. Find out why; the output unit must not match when the tool call was re-serialised.", 2),
        ("Use BTreeMap, not HashMap, for anything that ends up in the report: output must be byte-identical between runs.", 3),
        ("Now read src/bench/strategies/legacy.rs and review the S1a model against OpenClaw's compaction docs: reserve floor 20,000, keep ~20,000 recent tokens, never split a tool call from its result.", 4),
        ("Add the cache-ttl pruning variant (S1b). Soft-trim keeps first and last 1500 chars; hard clear only above 50 % of the window.", 5),
        ("Build it and fix whatever breaks.", 1),
        ("Check src/bench/render.rs against the V4 template: tool results merge into the following user turn, calls use the DSML block.", 0),
        ("grep for every place we call serde_json::to_string in the bench; Python's json.dumps uses ', ' and ': ' separators, we must match it for tool arguments.", 3),
        ("Read run.rs and make sure summariser calls are billed on their own cache state.", 4),
        ("Run the whole test suite again.", 1),
        ("The bench must stay under 2 minutes on 2 cores for the full corpus. Where does the time go? Look at the tokenizer cache.", 2),
        ("Don't tokenize whole requests. Tokenize each message body once and concatenate pieces.", 5),
        ("Show me the diff so far.", 6),
        ("Read the anchors extractor and check that file paths with :line:col suffixes produce the path.", 0),
        ("Build with clippy and fix warnings. No unwrap on host data anywhere.", 1),
        ("Write a short design note to docs/bench-notes.md summarising the cache model and the strategies.", 7),
        ("Re-read Cargo.toml: is tiktoken-rs in the bench feature? The o200k fallback needs it.", 3),
        ("Run the tests one more time and then summarise what changed and what is still open.", 1),
        ("One more thing: the report must show ×S1a for input cost, not total cost. Fix the table.", 4),
        ("Read config.rs and message.rs again and check the usage fields we rely on.", 0),
        ("Final check: build, test, diff. Then stop.", 6),
    ];
    for (ti, (text, kind)) in turns.iter().enumerate() {
        if ti > 0 && ti % 4 == 0 {
            // The user went away: an idle gap of 6-20 minutes.
            g.now += 360_000 + g.rng.below(840_000);
        }
        g.user(text);
        let plan: Vec<(Option<&str>, Vec<Act>)> = match kind {
            0 => vec![
                (Some("Reading the files first."), vec![Act::Read { file: 0, offset: None, limit: None }, Act::Read { file: 4, offset: None, limit: None }]),
                (None, vec![Act::Grep { pattern: "pub fn " }]),
                (None, vec![Act::Read { file: 5, offset: None, limit: None }]),
                (None, vec![Act::Read { file: 1, offset: Some(60), limit: Some(120) }]),
                (None, vec![Act::Grep { pattern: "assistant_index" }]),
                (None, vec![Act::Read { file: 7, offset: Some(1), limit: Some(200) }]),
                (None, vec![Act::Read { file: 8, offset: None, limit: None }]),
                (Some("Here is how it fits together: the reader produces messages and calls; each call's history is rendered with the static prefix and hashed in 128-token blocks."), vec![]),
            ],
            1 => vec![
                (Some("Building."), vec![Act::Exec { cmd: "cargo build --features bench" }]),
                (None, vec![Act::Read { file: 4, offset: Some(150), limit: Some(80) }]),
                (None, vec![Act::Edit { file: 4 }]),
                (None, vec![Act::Exec { cmd: "cargo build --features bench" }]),
                (None, vec![Act::Exec { cmd: "cargo test --features bench" }]),
                (None, vec![Act::Read { file: 7, offset: Some(300), limit: Some(120) }]),
                (None, vec![Act::Edit { file: 7 }]),
                (None, vec![Act::Exec { cmd: "cargo test --features bench" }]),
                (Some("Build and tests pass now."), vec![]),
            ],
            2 => vec![
                (Some("Looking at the failing case."), vec![Act::Exec { cmd: "cargo test --features bench cache" }]),
                (None, vec![Act::Read { file: 4, offset: None, limit: None }]),
                (None, vec![Act::Grep { pattern: "block_hashes" }]),
                (None, vec![Act::Read { file: 5, offset: Some(80), limit: Some(100) }]),
                (None, vec![Act::Edit { file: 4 }]),
                (None, vec![Act::Exec { cmd: "cargo test --features bench cache" }]),
                (None, vec![Act::Read { file: 9, offset: None, limit: None }]),
                (Some("Found it: the end-of-output unit was stored before the prompt unit was probed."), vec![]),
            ],
            3 => vec![
                (None, vec![Act::Grep { pattern: "HashMap" }]),
                (None, vec![Act::Read { file: 10, offset: None, limit: None }]),
                (None, vec![Act::Read { file: 6, offset: Some(1), limit: Some(150) }]),
                (None, vec![Act::Edit { file: 6 }]),
                (None, vec![Act::Grep { pattern: "serde_json::to_string" }]),
                (None, vec![Act::Edit { file: 5 }]),
                (Some("Done; report output only goes through BTreeMap and Vec now."), vec![]),
            ],
            4 => vec![
                (None, vec![Act::Read { file: 6, offset: None, limit: None }]),
                (None, vec![Act::Read { file: 7, offset: None, limit: None }]),
                (None, vec![Act::Grep { pattern: "reserve" }]),
                (None, vec![Act::Edit { file: 6 }]),
                (None, vec![Act::Exec { cmd: "cargo test --features bench strategies" }]),
                (None, vec![Act::Read { file: 3, offset: Some(90), limit: Some(120) }]),
                (None, vec![Act::Edit { file: 7 }]),
                (Some("Reviewed; one fix applied."), vec![]),
            ],
            5 => vec![
                (None, vec![Act::Read { file: 6, offset: Some(200), limit: Some(200) }]),
                (None, vec![Act::Grep { pattern: "fn prune" }]),
                (None, vec![Act::Edit { file: 6 }]),
                (None, vec![Act::Edit { file: 6 }]),
                (None, vec![Act::Exec { cmd: "cargo build --features bench" }]),
                (None, vec![Act::Exec { cmd: "cargo test --features bench" }]),
                (Some("Added."), vec![]),
            ],
            6 => vec![
                (None, vec![Act::Exec { cmd: "git diff" }]),
                (None, vec![Act::Exec { cmd: "git diff --stat" }]),
                (None, vec![Act::Exec { cmd: "ls -la src src/bench" }]),
                (None, vec![Act::Exec { cmd: "cargo build --features bench" }]),
                (None, vec![Act::Exec { cmd: "cargo test --features bench" }]),
                (Some("That's the full diff; build and tests are green."), vec![]),
            ],
            _ => vec![
                (None, vec![Act::Read { file: 4, offset: Some(1), limit: Some(60) }]),
                (None, vec![Act::Read { file: 6, offset: Some(1), limit: Some(40) }]),
                (None, vec![Act::Write { path: "docs/bench-notes.md" }]),
                (Some("Wrote docs/bench-notes.md."), vec![]),
            ],
        };
        for (text, acts) in plan {
            g.step(text, acts);
        }
    }
    let messages: Vec<Message> = g
        .msgs
        .into_iter()
        .filter_map(|v| Message::from_value(v).ok())
        .collect();
    Transcript {
        format: "demo".into(),
        messages,
        calls: g.calls,
        compactions: Vec::new(),
        skipped_lines: 0,
    }
}
