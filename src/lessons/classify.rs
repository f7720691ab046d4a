//! Deterministic classifier of a session's first request: code-gen | exploration | qa | other.
//!
//! Lessons pay only on code-gen tasks (Reasonix RFC #261: −32 % to −69 % tokens on "write a
//! test", "new file following a pattern", "targeted fix"; nothing or worse on exploration and
//! planning). A false injection costs its tokens on every call of the session; a false skip
//! costs a rediscovery. So the classifier is tuned for precision: code-gen needs an imperative
//! edit verb at the head of a clause and no stronger exploration, question or chore signal,
//! and anything unclear is `confident: false` (no injection).
//!
//! Signals (all on the lower-cased first ~1,500 characters; the first sentence weighs double):
//! * code-gen: edit verbs (`implement`, `add`, `fix`, `write`, `refactor`, …) at a clause head,
//!   after politeness (`please`, `can you`, `let's`, …); code objects (`test`, `function`,
//!   `endpoint`, backticked identifiers, file paths); "Implement the following plan".
//! * exploration: `investigate`, `explore`, `understand`, `review`, `brainstorm`, `plan`,
//!   `look into`, `what effort`, `figure out`, …
//! * qa: a question (`?`, a leading wh-word or auxiliary) that is not a polite imperative.
//! * other: version-control chores (`commit`, `push`, `rebase`, …), retail/customer-service
//!   vocabulary, one-word replies, summaries of earlier conversations.

use serde::{Deserialize, Serialize};

/// Request classes.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum Class {
    /// Writes or modifies code that must follow the repository's conventions.
    CodeGen,
    /// Investigation, review, planning: lessons do not help direction.
    Exploration,
    /// A question to answer.
    Qa,
    /// Chores, chat, non-coding tasks.
    Other,
}

impl Class {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Class::CodeGen => "code-gen",
            Class::Exploration => "exploration",
            Class::Qa => "qa",
            Class::Other => "other",
        }
    }
}

/// Classifier output.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Classification {
    /// Best class.
    pub class: Class,
    /// Only a confident code-gen classification leads to an injection.
    pub confident: bool,
    /// Scores: code-gen, exploration, qa, other.
    pub scores: [u32; 4],
    /// The signals that fired (for the decision log).
    pub signals: Vec<String>,
}

const EDIT_VERBS: &[&str] = &[
    "implement",
    "add",
    "write",
    "create",
    "fix",
    "refactor",
    "rename",
    "update",
    "change",
    "modify",
    "remove",
    "delete",
    "replace",
    "extract",
    "move",
    "convert",
    "port",
    "migrate",
    "build",
    "make",
    "support",
    "wire",
    "introduce",
    "generate",
    "bump",
    "upgrade",
    "split",
    "rewrite",
    "patch",
    "handle",
    "adjust",
    "reduce",
    "simplify",
    "cleanup",
    "optimize",
    "optimise",
    "inline",
    "deduplicate",
    "dedupe",
    "scaffold",
    "set",
    "setup",
    "enable",
    "disable",
    "allow",
    "prevent",
    "ensure",
    "test",
    "document",
    "annotate",
    "type",
    "address",
];

const CODE_OBJECTS: &[&str] = &[
    "test",
    "tests",
    "function",
    "method",
    "class",
    "module",
    "file",
    "files",
    "endpoint",
    "command",
    "flag",
    "option",
    "component",
    "api",
    "bug",
    "feature",
    "script",
    "handler",
    "struct",
    "field",
    "config",
    "schema",
    "validation",
    "cli",
    "hook",
    "hooks",
    "parser",
    "code",
    "implementation",
    "plan",
    "interface",
    "type",
    "types",
    "error",
    "errors",
    "lint",
    "build",
    "crate",
    "package",
    "library",
    "route",
    "migration",
    "query",
    "unit",
    "integration",
    "coverage",
    "regression",
    "benchmark",
    "docs",
    "readme",
    "constant",
    "variable",
    "enum",
    "trait",
    "impl",
    "subcommand",
    "argument",
    "parameter",
    "logging",
    "log",
    "cache",
    "state",
    "tool",
    "plugin",
    "page",
    "view",
    "model",
    "service",
    "controller",
    "database",
    "table",
];

const EXPLORE: &[&str] = &[
    "investigate",
    "explore",
    "exploration",
    "understand",
    "review",
    "reviewing",
    "brainstorm",
    "analyze",
    "analyse",
    "analysis",
    "audit",
    "research",
    "examine",
    "evaluate",
    "eval",
    "assess",
    "compare",
    "trace",
    "summarize",
    "summarise",
    "overview",
    "plan",
    "design",
    "thorough",
    "find",
    "search",
    "locate",
    "why",
    "feedback",
];

const EXPLORE_PHRASES: &[&str] = &[
    "look into",
    "look at",
    "take a look",
    "have a look",
    "find out",
    "figure out",
    "what effort",
    "how much effort",
    "walk me through",
    "help me understand",
    "dig into",
    "get familiar",
    "deep analysis",
    "deep dive",
    "where is",
    "where are",
    "how does",
    "how do",
    "what does",
    "what is the",
    "double check",
    "check whether",
    "check if",
    "root cause",
    "go through",
];

const QA_HEADS: &[&str] = &[
    "what", "why", "how", "when", "where", "which", "who", "is", "are", "does", "do", "did",
    "should", "would", "could", "can", "will", "was", "were", "has", "have", "explain",
];

const CHORES: &[&str] = &[
    "commit",
    "push",
    "rebase",
    "pull",
    "merge",
    "cherry-pick",
    "stash",
    "amend",
    "squash",
    "release",
    "tag",
    "deploy",
    "continue",
    "yes",
    "no",
    "ok",
    "okay",
    "thanks",
    "thank",
];

/// Conversational replies among [`CHORES`].
const CHAT: &[&str] = &["continue", "yes", "no", "ok", "okay", "thanks", "thank"];

const RETAIL: &[&str] = &[
    "order",
    "orders",
    "refund",
    "cancel",
    "address",
    "shipping",
    "delivered",
    "purchase",
    "return",
    "exchange",
    "account",
    "payment",
    "item",
    "items",
    "customer",
    "email",
    "zip",
];

const POLITE: &[&str] = &[
    "please", "pls", "can", "could", "would", "will", "you", "we", "let's", "lets", "let", "us",
    "i", "i'd", "id", "like", "want", "need", "to", "now", "also", "just", "then", "and", "so",
    "ok", "okay", "alright", "hey", "hi", "go", "ahead", "help", "me", "try", "quickly", "first",
    "btw", "kindly", "should", "must", "the", "a", "an", "yeah", "yes",
];

fn words(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    for w in s.split(|c: char| !(c.is_alphanumeric() || c == '\'' || c == '-' || c == '_')) {
        let w = w.trim_matches(|c: char| c == '\'' || c == '-');
        if !w.is_empty() {
            out.push(w.to_string());
        }
    }
    out
}

/// Clauses: split at sentence ends, line breaks, `;` and ` then `.
fn clauses(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in s.lines() {
        for part in line.split(['.', ';', '!', '?', ':']) {
            for c in part.split(" then ").flat_map(|p| p.split(", and ")) {
                let c = c.trim();
                if !c.is_empty() {
                    out.push(c.to_string());
                }
            }
        }
    }
    out
}

/// The verb heading a clause after politeness words, if it is an edit verb.
fn head_verb(clause: &str) -> Option<String> {
    let w = words(clause);
    let mut i = 0;
    while i < w.len() && i < 8 && POLITE.contains(&w[i].as_str()) {
        i += 1;
    }
    let v = w.get(i)?;
    if EDIT_VERBS.contains(&v.as_str()) {
        Some(v.clone())
    } else {
        None
    }
}

fn is_polite_imperative(first: &str) -> bool {
    let w = words(first);
    let modal = matches!(
        w.first().map(String::as_str),
        Some("can" | "could" | "would" | "will")
    ) && matches!(w.get(1).map(String::as_str), Some("you" | "we" | "u"));
    modal && head_verb(first).is_some()
}

/// A code identifier or path in the original text: `camelCase`/`PascalCase` with an inner
/// capital, `snake_case`, `a::b`, `f()`, or a source file name.
fn has_code_ref(request: &str) -> bool {
    request.split_whitespace().take(200).any(|w| {
        let w = w.trim_matches(|c: char| !c.is_alphanumeric() && c != '_' && c != '(' && c != ')');
        let inner_cap = w.chars().skip(1).any(|c| c.is_ascii_uppercase())
            && w.chars().any(|c| c.is_ascii_lowercase());
        let snake = w.contains('_') && w.chars().all(|c| c.is_alphanumeric() || c == '_');
        let src = [
            ".rs", ".ts", ".js", ".go", ".py", ".ex", ".rb", ".java", ".tsx", ".mjs",
        ]
        .iter()
        .any(|e| w.ends_with(e));
        inner_cap || snake || src || w.contains("::") || w.ends_with("()")
    })
}

/// Classify the first request of a session.
pub fn classify(request: &str) -> Classification {
    let text = crate::text::head_chars(request, 1_500).to_lowercase();
    let text = text.trim();
    let mut s = [0u32; 4];
    let mut sig = Vec::new();
    if text.is_empty() {
        return Classification {
            class: Class::Other,
            confident: false,
            scores: s,
            signals: vec!["empty".into()],
        };
    }
    // Not a request: a summary of an earlier conversation or a compaction instruction.
    if text.starts_with("this session is being continued")
        || text.starts_with("your task is to create a detailed summary")
    {
        return Classification {
            class: Class::Other,
            confident: true,
            scores: [0, 0, 0, 9],
            signals: vec!["continuation/summary".into()],
        };
    }
    let cl = clauses(text);
    let first = cl.first().cloned().unwrap_or_default();
    let all_words = words(text);
    let first_words = words(&first);

    // code-gen
    if text.starts_with("implement the following plan") || text.starts_with("implement this plan") {
        s[0] += 6;
        sig.push("implement-plan".into());
    }
    for (k, c) in cl.iter().take(6).enumerate() {
        if let Some(v) = head_verb(c) {
            let w = if k == 0 { 3 } else { 1 };
            s[0] += w;
            sig.push(format!("verb:{v}"));
        }
    }
    let objects = all_words
        .iter()
        .take(120)
        .filter(|w| CODE_OBJECTS.contains(&w.as_str()))
        .count() as u32;
    if objects > 0 {
        s[0] += objects.min(3);
        sig.push(format!("objects:{objects}"));
    }
    if text.contains('`') || has_code_ref(request) {
        s[0] += 1;
        sig.push("code-ref".into());
    }

    // exploration
    for w in first_words.iter() {
        if EXPLORE.contains(&w.as_str()) {
            s[1] += 2;
            sig.push(format!("explore:{w}"));
        }
    }
    for w in all_words.iter().skip(first_words.len()).take(80) {
        if EXPLORE.contains(&w.as_str()) {
            s[1] += 1;
        }
    }
    for p in EXPLORE_PHRASES {
        if text.contains(p) {
            s[1] += 2;
            sig.push(format!("explore:{p}"));
        }
    }

    // qa
    let polite = cl.iter().take(3).any(|c| is_polite_imperative(c));
    let question = text
        .split(['\n'])
        .next()
        .unwrap_or("")
        .trim_end()
        .ends_with('?')
        || first_words
            .first()
            .is_some_and(|w| QA_HEADS.contains(&w.as_str()));
    if question && !polite {
        s[2] += 3;
        sig.push("question".into());
        if first_words
            .first()
            .is_some_and(|w| w == "explain" || w == "what" || w == "why" || w == "how")
        {
            s[2] += 1;
        }
    }

    // other
    // A version-control verb heading the request is a chore; a conversational word ("ok",
    // "yes", "continue") only when it is (nearly) the whole message.
    let chore_head = first_words
        .iter()
        .find(|w| !POLITE.contains(&w.as_str()) || CHORES.contains(&w.as_str()));
    if let Some(w) = chore_head {
        let chat = CHAT.contains(&w.as_str());
        if CHORES.contains(&w.as_str()) && (!chat || all_words.len() <= 4) {
            s[3] += 4;
            sig.push(format!("chore:{w}"));
        }
    }
    let retail = all_words
        .iter()
        .filter(|w| RETAIL.contains(&w.as_str()))
        .count() as u32;
    if retail >= 2 {
        s[3] += retail.min(6);
        sig.push(format!("retail:{retail}"));
    }
    if all_words.len() <= 3 && s[0] < 3 {
        s[3] += 3;
        sig.push("short".into());
    }

    let best = (0..4).max_by_key(|&k| (s[k], 3 - k)).unwrap_or(3);
    let class = [Class::CodeGen, Class::Exploration, Class::Qa, Class::Other][best];
    let rivals = s[1].max(s[2]).max(s[3]);
    // Code-gen must be clear: a head verb, a clear margin, and no strong rival.
    let has_verb = sig
        .iter()
        .any(|x| x.starts_with("verb:") || x == "implement-plan");
    let confident = match class {
        Class::CodeGen => has_verb && s[0] >= 4 && s[0] >= 2 * rivals.max(1),
        _ => s[best] >= 3 && s[best] > s[0],
    };
    Classification {
        class,
        confident,
        scores: s,
        signals: sig,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(t: &str) -> (Class, bool) {
        let r = classify(t);
        (r.class, r.confident)
    }

    #[test]
    fn code_gen_requests() {
        for t in [
            "Write a unit test for parseConfig in src/config.rs",
            "Implement the following plan:\n\n# Plan: add an `entire reset` command",
            "Can you add a test for each error type?",
            "Add a --raw-transcript option to the explain command",
            "please fix the failing test in tests/api.test.ts",
            "ok, add a unit test for the config parser",
            "Create a new tool file matching the existing tool registration pattern",
            "Refactor GetSessionLog so it accepts a checkpoint id instead of a commit hash",
        ] {
            assert_eq!(c(t), (Class::CodeGen, true), "{t}");
        }
    }

    #[test]
    fn not_code_gen() {
        for (t, want) in [
            (
                "Investigate how SessionLive and SubagentLive render transcripts",
                Class::Exploration,
            ),
            (
                "Very thorough exploration. I need to understand how the renderer works",
                Class::Exploration,
            ),
            (
                "What is the difference between LoadEntireSettings and loadSettingsFromFile?",
                Class::Qa,
            ),
            ("why does the hook fire twice?", Class::Qa),
            ("commit, push.", Class::Other),
            ("yes", Class::Other),
            (
                "I want to cancel my order #W123 and get a refund to my credit card",
                Class::Other,
            ),
            (
                "This session is being continued from a previous conversation",
                Class::Other,
            ),
        ] {
            let r = classify(t);
            assert_eq!(r.class, want, "{t}: {r:?}");
            assert!(!(r.class == Class::CodeGen && r.confident), "{t}");
        }
    }

    #[test]
    fn unsure_means_no_injection() {
        // Mixed signals: an edit verb but an exploration head.
        let r = classify(
            "look at the changes in this branch and review the codebase, then fix what you find",
        );
        assert!(!(r.class == Class::CodeGen && r.confident), "{r:?}");
        assert!(!classify("").confident);
    }

    #[test]
    fn deterministic() {
        let t = "Add a method to the Store class";
        assert_eq!(classify(t), classify(t));
    }
}
