//! Candidate lessons from a session's bounded per-message digests ([`crate::digest::Digest`]).
//!
//! The deterministic extractor needs no LLM and covers the obvious facts:
//! * the test command that passed (a shell command whose name says test and whose recorded
//!   outcome is `ok` / `exit 0`), with the fingerprint its runner depends on;
//! * lint / type-check commands that passed, likewise;
//! * the file layout read (top-level directories of the files the agent read).
//!
//! [`llm_prompt`] and [`parse_llm`] bound the optional host-LLM pass: at most
//! [`LLM_INPUT_CHARS`] of digest lines in, JSON candidates out, each validated and redacted like
//! any lesson.

use super::redact::redact;
use super::{slug, Lesson};
use crate::digest::Digest;
use crate::text::clip;
use serde::Deserialize;
use serde::Serialize;
use std::collections::BTreeMap;

/// Input of [`extract`].
#[derive(Serialize, Clone, Debug, PartialEq, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct CaptureInput {
    /// Host session id (provenance).
    pub session_id: String,
    /// Workspace directory (absolute paths under it become relative).
    pub workspace: String,
    /// ISO capture time.
    pub now_iso: String,
}

/// Bound of the digest text sent to the LLM.
pub const LLM_INPUT_CHARS: usize = 6_000;
/// Output cap asked of the LLM.
pub const LLM_MAX_TOKENS: u32 = 600;

#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Test,
    Lint,
}

/// The whitespace-separated words of `cmd`.
fn words(cmd: &str) -> Vec<&str> {
    let mut out = Vec::new();
    for w in cmd.split_whitespace() {
        out.push(w);
    }
    out
}

fn kind_of(cmd: &str) -> Option<Kind> {
    let w = words(cmd);
    let has = |x: &str| w.contains(&x);
    let test = has("test")
        || has("--test")
        || w.iter().any(|t| {
            matches!(
                *t,
                "pytest"
                    | "vitest"
                    | "jest"
                    | "mocha"
                    | "rspec"
                    | "phpunit"
                    | "nextest"
                    | "ctest"
                    | "tox"
            )
        })
        || w.iter()
            .any(|t| t.starts_with("test:") || t.ends_with(":test"));
    if test {
        return Some(Kind::Test);
    }
    let lint = w.iter().any(|t| {
        matches!(
            *t,
            "clippy"
                | "lint"
                | "eslint"
                | "ruff"
                | "flake8"
                | "mypy"
                | "tsc"
                | "golangci-lint"
                | "vet"
                | "typecheck"
                | "fmt"
                | "prettier"
                | "biome"
        ) || t.starts_with("lint:")
    });
    lint.then_some(Kind::Lint)
}

/// `$ cmd → outcome` → the command without `cd … &&`, pipes into pagers and redirections.
fn clean_command(label: &str) -> Option<(String, bool)> {
    let rest = label.strip_prefix("$ ")?;
    let (cmd, outcome) = rest.rsplit_once(" → ")?;
    let ok = outcome == "ok" || outcome == "exit 0";
    let mut cmd = cmd.trim().to_string();
    while let Some(idx) = cmd.find("&&") {
        let head = cmd[..idx].trim();
        if head.starts_with("cd ")
            || head.starts_with("export ")
            || head.starts_with("source ")
            || head.starts_with(". ")
        {
            cmd = cmd[idx + 2..].trim().to_string();
        } else {
            break;
        }
    }
    for cut in [" | ", " 2>&1", " >", " ;"] {
        if let Some(i) = cmd.find(cut) {
            cmd.truncate(i);
        }
    }
    let cmd = cmd.trim().to_string();
    if cmd.is_empty() || cmd.len() > 160 || cmd.contains('\n') {
        return None;
    }
    Some((cmd, ok))
}

/// Fingerprint entries a command depends on.
fn command_fingerprint(cmd: &str) -> Vec<String> {
    let w = words(cmd);
    let first = w.first().copied().unwrap_or("");
    let mut fp = Vec::new();
    match first {
        "npm" | "pnpm" | "yarn" | "bun" => {
            let script = match w.get(1).copied() {
                Some("run") | Some("run-script") => w.get(2).copied(),
                Some(s) => Some(s),
                None => None,
            };
            if let Some(s) = script.filter(|s| !s.starts_with('-')) {
                fp.push(format!("package.json#scripts.{s}"));
            }
        }
        "npx" | "node" | "vitest" | "jest" | "tsc" | "eslint" => fp.push("package.json".into()),
        "cargo" => fp.push("Cargo.toml".into()),
        "go" | "golangci-lint" => fp.push("go.mod".into()),
        "pytest" | "python" | "python3" | "uv" | "poetry" | "tox" | "ruff" | "mypy" => {
            fp.push("pyproject.toml".into())
        }
        "make" => fp.push("Makefile".into()),
        "mix" => fp.push("mix.exs".into()),
        "bundle" | "rspec" => fp.push("Gemfile".into()),
        _ => {}
    }
    // A path argument (`node --test tests/js/`, `pytest tests/unit`) is a directory to watch.
    for t in w.iter().skip(1) {
        if !t.starts_with('-')
            && t.contains('/')
            && !t.starts_with('/')
            && !t.contains("..")
            && t.len() < 100
        {
            let dir = t.split('/').next().unwrap_or("");
            if !dir.is_empty() && dir != "." {
                fp.push(format!("{dir}/"));
            }
            break;
        }
    }
    fp.dedup();
    fp
}

fn relative<'a>(path: &'a str, workspace: &str) -> Option<&'a str> {
    let ws = workspace.trim_end_matches('/');
    let p = if !ws.is_empty() && path.starts_with(ws) && path[ws.len()..].starts_with('/') {
        &path[ws.len() + 1..]
    } else {
        path
    };
    let p = p.strip_prefix("./").unwrap_or(p);
    if p.starts_with('/')
        || p.starts_with('~')
        || p.contains("..")
        || p.contains("://")
        || p.is_empty()
    {
        None
    } else {
        Some(p)
    }
}

fn provenance(l: &mut Lesson, input: &CaptureInput, idx: usize) {
    l.session = clip(&input.session_id, 120);
    l.turn = format!("m{idx}");
    l.captured_at = input.now_iso.clone();
}

/// Deterministic candidates from the digests of one session, in message order.
pub fn extract<'a>(
    digests: impl IntoIterator<Item = &'a Digest>,
    input: &CaptureInput,
) -> Vec<Lesson> {
    // Last passing command per kind (with its message index), and every failing one.
    let mut passed: BTreeMap<u8, (String, usize)> = BTreeMap::new();
    let mut dirs: BTreeMap<String, usize> = BTreeMap::new();
    let mut last_idx = 0;
    for (idx, d) in digests.into_iter().enumerate() {
        last_idx = idx;
        if d.role != "toolResult" && d.role != "bashExecution" {
            continue;
        }
        for c in &d.commands {
            let Some((cmd, ok)) = clean_command(c) else {
                continue;
            };
            let Some(kind) = kind_of(&cmd) else { continue };
            let failed_text = d.text.contains(" failed")
                && !d.text.contains(" 0 failed")
                && !d.text.contains("failed: 0");
            if ok && !failed_text {
                passed.insert(kind as u8, (cmd, idx));
            }
        }
        if d.tool_name
            .as_deref()
            .is_some_and(|t| t.eq_ignore_ascii_case("read"))
        {
            for f in &d.files {
                if let Some(rel) = relative(f, &input.workspace) {
                    if let Some((top, _)) = rel.split_once('/') {
                        if !top.starts_with('.') && !top.is_empty() {
                            *dirs.entry(format!("{top}/")).or_insert_with(|| 0) += 1;
                        }
                    }
                }
            }
        }
    }
    let mut out = Vec::new();
    for (k, (cmd, idx)) in &passed {
        let cmd = redact(cmd);
        let (name, desc, line) = if *k == Kind::Test as u8 {
            (
                "testing",
                "How the tests are run in this workspace",
                format!("- run the tests with `{cmd}` (passed when captured)"),
            )
        } else {
            (
                "lint",
                "Lint / type-check command of this workspace",
                format!("- check with `{cmd}` (passed when captured)"),
            )
        };
        let mut l = Lesson {
            name: name.into(),
            description: desc.into(),
            fingerprint: command_fingerprint(&cmd),
            body: vec![clip(&line, super::MAX_LINE_CHARS)],
            ..Lesson::default()
        };
        if *k == Kind::Test as u8 {
            if let Some(t) = dirs
                .keys()
                .find(|d| matches!(d.as_str(), "tests/" | "test/" | "__tests__/" | "spec/"))
            {
                l.body.push(format!("- tests live under `{t}`"));
                if !l.fingerprint.contains(t) {
                    l.fingerprint.push(t.clone());
                }
            }
        }
        provenance(&mut l, input, *idx);
        if l.validate().is_ok() {
            out.push(l);
        }
    }
    let mut top: Vec<(&String, &usize)> = Vec::new();
    for (d, n) in dirs.iter() {
        if *n >= 2 {
            top.push((d, n));
        }
    }
    // Most read first, then by name: the map gives name order, which a stable sort by count
    // keeps among equal counts.
    top.sort_by_key(|&(_, n)| std::cmp::Reverse(*n));
    top.truncate(4);
    if top.len() >= 2 {
        let mut listed: Vec<String> = Vec::with_capacity(top.len());
        let mut fp: Vec<String> = Vec::with_capacity(top.len());
        for (d, n) in &top {
            listed.push(format!("`{d}` ({n} reads)"));
            fp.push((*d).clone());
        }
        fp.sort_unstable();
        let mut l = Lesson {
            name: "layout".into(),
            description: "Where the code of this workspace lives (directories read most)".into(),
            fingerprint: fp,
            body: vec![clip(
                &format!("- most-read directories: {}", listed.join(", ")),
                super::MAX_LINE_CHARS,
            )],
            ..Lesson::default()
        };
        provenance(&mut l, input, last_idx);
        if l.validate().is_ok() {
            out.push(l);
        }
    }
    out
}

/// `(system, prompt)` for the optional LLM pass over the digests (bounded input).
pub fn llm_prompt<'a>(
    digests: impl IntoIterator<Item = &'a Digest>,
    existing: &[String],
) -> (String, String) {
    let system = "You extract durable conventions of a code repository from an agent session log: \
the test/build commands that work, file layout, naming and import conventions, registration patterns. \
Only facts the log shows, that a later session in the same repository would otherwise rediscover. \
Never include secrets, personal data, task-specific details or anything about this one task. \
Answer with JSON only: an array (at most 3) of {\"name\": kebab-case, \"description\": one line, \
\"fingerprint\": [relative files, dirs ending in /, or file.json#field that the fact depends on], \
\"body\": [at most 4 short lines starting with \"- \"]}. Answer [] when nothing qualifies."
        .to_string();
    let mut prompt = String::new();
    if !existing.is_empty() {
        prompt.push_str(&format!(
            "Lessons that already exist (do not repeat): {}\n\n",
            existing.join(", ")
        ));
    }
    prompt.push_str("Session log (one line per message):\n");
    for d in digests {
        let mut line = format!("{}: {}", d.role, d.text);
        for c in &d.commands {
            line.push_str(&format!(" | {c}"));
        }
        if !d.files.is_empty() {
            line.push_str(&format!(" | files: {}", d.files.join(", ")));
        }
        let line = redact(&clip(&line, 400));
        if prompt.len() + line.len() + 1 > LLM_INPUT_CHARS {
            break;
        }
        prompt.push_str(&line);
        prompt.push('\n');
    }
    (system, prompt)
}

#[derive(Default, Deserialize)]
#[serde(default)]
struct Proposal {
    name: String,
    description: String,
    fingerprint: Vec<String>,
    body: Vec<String>,
}

/// Candidates from the LLM's JSON answer (fenced or bare); invalid proposals are dropped.
pub fn parse_llm(answer: &str, input: &CaptureInput) -> Vec<Lesson> {
    let start = answer.find('[');
    let end = answer.rfind(']');
    let (Some(s), Some(e)) = (start, end) else {
        return Vec::new();
    };
    if e < s {
        return Vec::new();
    }
    let Ok(list) = serde_json::from_str::<Vec<Proposal>>(&answer[s..=e]) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for p in list.into_iter().take(3) {
        let mut fingerprint = p.fingerprint;
        fingerprint.truncate(super::MAX_FINGERPRINT);
        let mut body = Vec::new();
        for b in p.body.iter().take(4) {
            let b = clip(&redact(b.trim()), super::MAX_LINE_CHARS);
            if !b.is_empty() {
                body.push(b);
            }
        }
        let mut l = Lesson {
            name: slug(&p.name),
            description: clip(&redact(p.description.trim()), super::MAX_DESCRIPTION_CHARS),
            fingerprint,
            body,
            ..Lesson::default()
        };
        provenance(&mut l, input, 0);
        l.turn = "llm".into();
        if l.validate().is_ok() {
            out.push(l);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tool(name: &str, text: &str, commands: &[&str], files: &[&str]) -> Digest {
        Digest {
            role: "toolResult".into(),
            text: text.into(),
            tool_name: Some(name.into()),
            commands: commands.iter().map(|&s| s.into()).collect(),
            files: files.iter().map(|&s| s.into()).collect(),
            ..Digest::default()
        }
    }

    fn input() -> CaptureInput {
        CaptureInput {
            session_id: "sess-1".into(),
            workspace: "/home/u/proj".into(),
            now_iso: "2026-06-01T10:00:00Z".into(),
        }
    }

    #[test]
    fn captures_the_passing_test_command_and_layout() {
        let ds = [
            Digest {
                role: "user".into(),
                text: "add a test".into(),
                ..Digest::default()
            },
            tool("read", "...", &[], &["/home/u/proj/src/store.ts"]),
            tool("read", "...", &[], &["src/index.ts"]),
            tool("read", "...", &[], &["tests/store.test.ts"]),
            tool("read", "...", &[], &["/home/u/proj/tests/a.test.ts"]),
            tool(
                "exec",
                "FAIL tests/store.test.ts",
                &["$ cd /home/u/proj && npm test → exit 1: FAIL"],
                &[],
            ),
            tool(
                "exec",
                "Tests 12 passed",
                &["$ cd /home/u/proj && npm test 2>&1 | tail -20 → exit 0"],
                &[],
            ),
            tool("exec", "", &["$ npx tsc --noEmit → ok"], &[]),
        ];
        let got = extract(ds.iter(), &input());
        let names: Vec<_> = got.iter().map(|l| l.name.as_str()).collect();
        assert_eq!(names, vec!["testing", "lint", "layout"]);
        let t = &got[0];
        assert_eq!(
            t.body[0],
            "- run the tests with `npm test` (passed when captured)"
        );
        assert_eq!(t.fingerprint, vec!["package.json#scripts.test", "tests/"]);
        assert_eq!((t.session.as_str(), t.turn.as_str()), ("sess-1", "m6"));
        assert_eq!(got[2].fingerprint, vec!["src/", "tests/"]);
        for l in &got {
            Lesson::parse(&l.render()).unwrap();
        }
    }

    #[test]
    fn layout_lists_the_four_most_read_directories_ties_by_name() {
        let mut ds = Vec::new();
        for (dir, reads) in [
            ("beta", 3),
            ("delta", 2),
            ("alpha", 2),
            ("zeta", 5),
            ("gamma", 2),
        ] {
            for i in 0..reads {
                ds.push(tool("read", "...", &[], &[&format!("{dir}/f{i}.rs")]));
            }
        }
        let got = extract(ds.iter(), &input());
        let layout = got
            .iter()
            .find(|l| l.name == "layout")
            .expect("a layout lesson");
        let text = layout.body.join("\n");
        let at = |d: &str| text.find(&format!("`{d}/`"));
        let order: Vec<_> = ["zeta", "beta", "alpha", "delta"]
            .iter()
            .map(|d| at(d))
            .collect();
        assert!(order.iter().all(Option::is_some), "{text}");
        assert!(order.windows(2).all(|w| w[0] < w[1]), "{text}");
        assert_eq!(at("gamma"), None, "{text}");
        assert_eq!(
            layout.fingerprint,
            vec!["alpha/", "beta/", "delta/", "zeta/"]
        );
    }

    #[test]
    fn failing_or_secret_commands() {
        let ds = [tool("exec", "", &["$ cargo test → exit 101: error"], &[])];
        assert!(extract(ds.iter(), &input()).is_empty());
        let ds = [tool(
            "exec",
            "ok",
            &["$ GITHUB_TOKEN=ghp_0123456789abcdefghijABCDEFGHIJ cargo test --locked → exit 0"],
            &[],
        )];
        let got = extract(ds.iter(), &input());
        assert_eq!(got.len(), 1);
        assert!(!got[0].render().contains("ghp_0123456789"));
        assert!(got[0].fingerprint.is_empty(), "{:?}", got[0].fingerprint);
    }

    #[test]
    fn llm_round_trip_is_bounded_and_validated() {
        let ds: Vec<Digest> = (0..500)
            .map(|k| {
                tool(
                    "exec",
                    &format!("line {k} password=hunter2"),
                    &["$ make → ok"],
                    &[],
                )
            })
            .collect();
        let (_, prompt) = llm_prompt(ds.iter(), &["testing".into()]);
        assert!(prompt.len() <= LLM_INPUT_CHARS && !prompt.contains("hunter2"));
        let answer = "```json\n[{\"name\":\"Imports\",\"description\":\"ESM imports\",\"fingerprint\":[\"tsconfig.json\"],\"body\":[\"- use .js suffix\", \"- token sk-abcdefghijklmnopqrstuvwx\"]},{\"name\":\"bad\",\"description\":\"\",\"body\":[]},{\"name\":\"x\",\"description\":\"d\",\"fingerprint\":[\"/etc/passwd\"],\"body\":[\"- y\"]}]\n```";
        let got = parse_llm(answer, &input());
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].name, "imports");
        assert!(!got[0].body[1].contains("sk-abcdefghijklmnop"));
        assert!(parse_llm("no json here", &input()).is_empty());
    }
}
