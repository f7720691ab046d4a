//! The session's one lessons decision: classify the first request, drop stale and invalid
//! lessons, rank the rest by term overlap with the request, and render the exact
//! `systemPromptAddition` within the token cap. The shim records the result and replays it for
//! every later assemble of the session, so this runs once per session.

use super::classify::{classify, Class, Classification};
use super::redact::redact;
use super::{refresh_note, Change, FpInput, Lesson};
use serde::{Deserialize, Serialize};

/// Heading of the injected block.
pub const HEADER: &str =
    "## Workspace lessons (learned earlier, checked against the current files; follow unless told otherwise)";

/// One lesson file as the shim read it.
#[derive(Serialize, Clone, Debug, PartialEq, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct LessonFile {
    /// `project` or `global`.
    pub scope: String,
    /// File name (for log lines).
    pub file: String,
    /// File text.
    pub text: String,
}

/// Input of [`decide`].
#[derive(Serialize, Clone, Debug, PartialEq, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct DecideInput {
    /// The session's first user request (`assemble`'s `prompt`).
    pub request: String,
    /// Token cap of the addition.
    pub max_tokens: u32,
    /// Promoted lessons of both scopes.
    pub lessons: Vec<LessonFile>,
    /// Fingerprint inputs gathered now (for every entry any lesson names).
    pub inputs: Vec<FpInput>,
    /// ISO time stamped on refresh notes.
    pub now_iso: String,
}

/// A lesson left out because its inputs changed.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
#[serde(rename_all = "camelCase")]
pub struct StaleLesson {
    /// Lesson name.
    pub name: String,
    /// Scope.
    pub scope: String,
    /// What changed.
    pub changed: Vec<Change>,
    /// The refresh candidate (file text) to queue in `_candidates/`.
    pub refresh: String,
}

/// A file that could not be used.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
#[serde(rename_all = "camelCase")]
pub struct Invalid {
    /// Scope.
    pub scope: String,
    /// File name.
    pub file: String,
    /// Why.
    pub error: String,
}

/// The decision.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Decision {
    /// Classifier output.
    pub classification: Classification,
    /// True when `text` is the session's addition.
    pub inject: bool,
    /// Why (one short phrase).
    pub reason: String,
    /// The exact addition (empty when not injecting).
    pub text: String,
    /// Its estimated tokens.
    pub tokens: u64,
    /// Names injected, in order.
    pub chosen: Vec<String>,
    /// Fresh lessons left out by the token cap.
    pub over_budget: Vec<String>,
    /// Lessons skipped as stale.
    pub stale: Vec<StaleLesson>,
    /// Files skipped as invalid.
    pub invalid: Vec<Invalid>,
}

/// Estimated tokens of `text` (DeepSeek ≈ 0.3 per weighted char).
pub fn estimate_tokens(text: &str) -> u64 {
    (crate::tokens::weighted_chars(text) * 3).div_ceil(10)
}

const STOP: &[&str] = &[
    "the", "and", "for", "with", "that", "this", "from", "into", "are", "was", "you", "your",
    "our", "can", "could", "would", "should", "please", "let", "lets", "let's", "use", "using",
    "via", "all", "any", "each", "not", "but", "when", "then", "than", "there", "here", "also",
    "have", "has", "will", "just", "like", "need", "want", "make", "new", "one", "some", "what",
    "how", "why", "who", "which", "way", "add", "fix", "write", "run", "runs",
];

fn stem(w: &str) -> String {
    let w = w.trim_matches(|c: char| !c.is_alphanumeric());
    for suf in ["ing", "ed", "es", "s"] {
        if w.len() > suf.len() + 3 {
            if let Some(s) = w.strip_suffix(suf) {
                return s.to_string();
            }
        }
    }
    w.to_string()
}

/// Content terms: lower-case words of 3+ characters, stop words out, light stemming; path and
/// identifier parts count separately (`package.json` → `package`, `json`). Sorted, each once.
pub fn terms(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for w in text.to_lowercase().split(|c: char| !c.is_alphanumeric()) {
        if w.len() >= 3 && !STOP.contains(&w) {
            out.push(stem(w));
        }
    }
    out.sort_unstable();
    out.dedup();
    out
}

/// True when the sorted `set` holds `t`.
fn has(set: &[String], t: &String) -> bool {
    set.binary_search(t).is_ok()
}

fn relevance(req: &[String], l: &Lesson) -> u32 {
    let head = terms(&format!(
        "{} {}",
        l.name.replace(['-', '_', '.'], " "),
        l.description
    ));
    let body = terms(&l.body.join("\n"));
    let h = req.iter().filter(|t| has(&head, t)).count() as u32;
    let b = req
        .iter()
        .filter(|t| has(&body, t) && !has(&head, t))
        .count() as u32;
    2 * h + b
}

fn block(l: &Lesson) -> String {
    let mut s = format!("[{}] {}", l.name, redact(&l.description));
    for line in l
        .body
        .iter()
        .filter(|x| !x.trim().is_empty() && !x.starts_with("- REFRESH:"))
    {
        s.push('\n');
        s.push_str(&redact(line));
    }
    s
}

/// A session that gets no lessons, decided before any lesson file is read.
#[derive(Serialize, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Gate {
    /// Why (one short phrase, as [`Decision::reason`]).
    pub reason: String,
    /// The classifier's output, when the request was classified.
    pub classification: Option<Classification>,
}

/// The rules that refuse lessons without reading any: a session already under way (its first
/// assemble had `messages_before` messages: an addition now would change the system prompt
/// mid-session), then a request that is not confidently code-gen. `None`: read the lessons and
/// call [`decide`].
pub fn gate(request: &str, messages_before: u64) -> Option<Gate> {
    if messages_before > 0 {
        return Some(Gate {
            reason: "session already under way".into(),
            classification: None,
        });
    }
    let classification = classify(request);
    refusal(&classification).map(|reason| Gate {
        reason,
        classification: Some(classification),
    })
}

/// Why a classified request gets no lessons, or `None` for a confident code-gen request.
fn refusal(c: &Classification) -> Option<String> {
    if c.class != Class::CodeGen {
        Some(format!("request classified {}", c.class.as_str()))
    } else if !c.confident {
        Some("code-gen but not confident".into())
    } else {
        None
    }
}

/// Decide the session's addition.
pub fn decide(input: &DecideInput) -> Decision {
    let classification = classify(&input.request);
    let mut d = Decision {
        classification: classification.clone(),
        inject: false,
        reason: String::new(),
        text: String::new(),
        tokens: 0,
        chosen: Vec::new(),
        over_budget: Vec::new(),
        stale: Vec::new(),
        invalid: Vec::new(),
    };
    if let Some(reason) = refusal(&classification) {
        d.reason = reason;
        return d;
    }
    // Parse, dedupe by name (project wins over global), drop stale.
    let mut fresh: Vec<(Lesson, bool)> = Vec::new();
    // Project files first, then by file name; the input position breaks ties, so the order is
    // total (the one a stable sort gives) and an unstable sort finds it.
    let mut files: Vec<(usize, &LessonFile)> = input.lessons.iter().enumerate().collect();
    files.sort_unstable_by(|(i, a), (j, b)| {
        (a.scope != "project", &a.file, i).cmp(&(b.scope != "project", &b.file, j))
    });
    for (_, f) in files {
        let l = match Lesson::parse(&f.text) {
            Ok(l) => l,
            Err(e) => {
                d.invalid.push(Invalid {
                    scope: f.scope.clone(),
                    file: f.file.clone(),
                    error: e.to_string(),
                });
                continue;
            }
        };
        if fresh.iter().any(|(x, _)| x.name == l.name) || d.stale.iter().any(|x| x.name == l.name) {
            continue;
        }
        let st = l.staleness(&input.inputs);
        if st.stale {
            let note = refresh_note(&l, &st, &input.inputs, &input.now_iso);
            d.stale.push(StaleLesson {
                name: l.name.clone(),
                scope: f.scope.clone(),
                changed: st.changed,
                refresh: note.render(),
            });
            continue;
        }
        fresh.push((l, f.scope == "project"));
    }
    if fresh.is_empty() {
        d.reason = if d.stale.is_empty() {
            "no lessons".into()
        } else {
            "every lesson is stale".into()
        };
        return d;
    }
    let req = terms(&input.request);
    let mut ranked: Vec<(u32, bool, Lesson)> = Vec::with_capacity(fresh.len());
    for (l, p) in fresh {
        ranked.push((relevance(&req, &l), p, l));
    }
    // Most relevant first; project before global; then by name (deterministic: names are
    // distinct after the dedupe above, so the order is total).
    ranked.sort_unstable_by(|a, b| {
        b.0.cmp(&a.0)
            .then(b.1.cmp(&a.1))
            .then(a.2.name.cmp(&b.2.name))
    });
    let cap = u64::from(input.max_tokens);
    let mut text = HEADER.to_string();
    for (score, project, l) in &ranked {
        // Personal (global) lessons only when they relate to the request.
        if !project && *score == 0 {
            continue;
        }
        let candidate = format!("{text}\n{}", block(l));
        if estimate_tokens(&candidate) <= cap {
            text = candidate;
            d.chosen.push(l.name.clone());
        } else {
            d.over_budget.push(l.name.clone());
        }
    }
    if d.chosen.is_empty() {
        d.reason = "no lesson fits the token cap".into();
        return d;
    }
    d.tokens = estimate_tokens(&text);
    d.text = text;
    d.inject = true;
    d.reason = format!("code-gen; {} lesson(s) by relevance", d.chosen.len());
    d
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lesson(name: &str, desc: &str, body: &[&str], fp: &[&str]) -> Lesson {
        Lesson {
            name: name.into(),
            description: desc.into(),
            fingerprint: fp.iter().map(|s| s.to_string()).collect(),
            body: body.iter().map(|s| s.to_string()).collect(),
            ..Lesson::default()
        }
    }

    fn file(scope: &str, l: &Lesson) -> LessonFile {
        LessonFile {
            scope: scope.into(),
            file: format!("{}.md", l.name),
            text: l.render(),
        }
    }

    fn inputs() -> Vec<FpInput> {
        vec![
            FpInput {
                entry: "package.json#scripts.test".into(),
                content: Some("\"vitest\"".into()),
            },
            FpInput {
                entry: "tests/".into(),
                content: Some("a.test.ts".into()),
            },
        ]
    }

    fn lib() -> Vec<LessonFile> {
        let mut t = lesson(
            "testing",
            "Test runner and test file convention",
            &["- vitest; tests in tests/**/*.test.ts; run `npm test`"],
            &["package.json#scripts.test", "tests/"],
        );
        t.stamp(&inputs());
        let mut i = lesson(
            "imports",
            "ESM import style",
            &["- import with a .js suffix even for .ts sources"],
            &["package.json#scripts.test"],
        );
        i.stamp(&inputs());
        let g = lesson(
            "prefs",
            "personal preference for functional style",
            &["- prefer small pure functions"],
            &[],
        );
        vec![file("project", &t), file("project", &i), file("global", &g)]
    }

    fn input(req: &str, lessons: Vec<LessonFile>) -> DecideInput {
        DecideInput {
            request: req.into(),
            max_tokens: 200,
            lessons,
            inputs: inputs(),
            now_iso: "2026-06-01T00:00:00Z".into(),
        }
    }

    #[test]
    fn injects_relevant_lessons_for_code_gen() {
        let d = decide(&input("Write a unit test for the store module", lib()));
        assert!(d.inject, "{d:?}");
        assert_eq!(d.chosen[0], "testing");
        assert!(d.text.starts_with(HEADER) && d.text.contains("[testing]"));
        assert!(
            !d.chosen.contains(&"prefs".to_string()),
            "unrelated personal lesson left out"
        );
        assert!(d.tokens <= 200 && d.tokens == estimate_tokens(&d.text));
        // Deterministic: same input, same bytes.
        assert_eq!(
            decide(&input("Write a unit test for the store module", lib())).text,
            d.text
        );
    }

    #[test]
    fn no_injection_outside_code_gen() {
        for req in [
            "Investigate how the renderer works",
            "what does npm test run?",
            "commit and push",
        ] {
            let d = decide(&input(req, lib()));
            assert!(!d.inject && d.text.is_empty(), "{req}: {d:?}");
        }
    }

    #[test]
    fn stale_and_invalid_are_skipped_with_a_refresh_note() {
        let mut files = lib();
        files.push(LessonFile {
            scope: "project".into(),
            file: "broken.md".into(),
            text: "name: nope".into(),
        });
        let mut inp = input("Write a unit test for the store module", files);
        inp.inputs[0].content = Some("\"jest\"".into());
        let d = decide(&inp);
        assert_eq!(d.invalid.len(), 1);
        assert_eq!(d.invalid[0].file, "broken.md");
        let stale: Vec<_> = d.stale.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(stale, vec!["imports", "testing"]);
        assert!(d.stale[0].refresh.contains("refresh-of: imports"));
        assert!(!d.inject || !d.chosen.iter().any(|n| n == "testing" || n == "imports"));
    }

    #[test]
    fn a_lesson_name_comes_from_the_project_then_the_first_file_by_name_then_input_order() {
        let copy = |which: &str| {
            lesson(
                "store-rule",
                "store module test rule",
                &[&format!(
                    "- the {which} copy of the rule about the store module tests"
                )],
                &[],
            )
        };
        let named = |scope: &str, name: &str, which: &str| LessonFile {
            file: name.into(),
            ..file(scope, &copy(which))
        };
        let files = vec![
            named("global", "a.md", "global"),
            named("project", "z.md", "later-name"),
            named("project", "m.md", "first-of-two"),
            named("project", "m.md", "second-of-two"),
        ];
        let d = decide(&input("Write a unit test for the store module", files));
        assert!(d.inject, "{d:?}");
        assert_eq!(d.chosen, vec!["store-rule"]);
        assert!(d.text.contains("the first-of-two copy"), "{}", d.text);
    }

    #[test]
    fn token_cap_is_respected() {
        let mut files = Vec::new();
        for k in 0..12 {
            let l = lesson(
                &format!("rule-{k}"),
                "store module test rule",
                &["- a rule about the store module tests that takes some room to state in full"],
                &[],
            );
            files.push(file("project", &l));
        }
        let mut inp = input("Write a unit test for the store module", files);
        inp.max_tokens = 120;
        let d = decide(&inp);
        assert!(d.inject && d.tokens <= 120, "{d:?}");
        assert!(!d.over_budget.is_empty());
        inp.max_tokens = 20;
        assert!(!decide(&inp).inject);
    }

    #[test]
    fn injected_text_is_redacted() {
        let l = lesson(
            "deploy",
            "deploy the store module",
            &["- API_TOKEN=ghp_0123456789abcdefghijABCDEFGHIJ make deploy"],
            &[],
        );
        // Bypass render's redaction to simulate a hand-edited file.
        let text = format!(
            "---\nname: deploy\ndescription: {}\n---\n{}\n",
            l.description, l.body[0]
        );
        let d = decide(&input(
            "Write a deploy script for the store module",
            vec![LessonFile {
                scope: "project".into(),
                file: "deploy.md".into(),
                text,
            }],
        ));
        assert!(d.inject, "{d:?}");
        assert!(!d.text.contains("ghp_0123"), "{}", d.text);
    }
}
