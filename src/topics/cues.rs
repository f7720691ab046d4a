//! Layer 1's cue phrases: what a user message's first words say about a task boundary
//! (a new task announced, a continuation, harness chatter that is never a task).

/// Phrases that announce a new task (matched in the first 200 chars, lowercased).
const NEW_CUES: &[&str] = &[
    "new task",
    "next task",
    "another task",
    "different task",
    "new feature",
    "new topic",
    "different topic",
    "unrelated",
    "change of topic",
    "switch to",
    "switching to",
    "moving on",
    "move on to",
    "let's move on",
    "next up",
    "something else",
    "another thing",
    "separate issue",
    "separate question",
    "different question",
    "new issue",
    "new question",
    "start a new",
    "let's work on",
    "lets work on",
    "i want to work on",
    "let's tackle",
    "need to tackle",
    "one more change",
    "let's review",
    "review the pr",
    "pr review",
    "review feedback",
    "check the pr comments",
    "ready to release",
    "new release",
    "release a new version",
    "let's get going",
];

/// Openers that often start a new request (weaker than [`NEW_CUES`]).
const NEW_OPENERS: &[&str] = &[
    "alright",
    "now let's",
    "now lets",
    "now i want",
    "now we need",
    "ok, now",
    "ok now",
    "okay, now",
    "next,",
    "we need to",
    "let's have a look",
    "can you help me",
    "i'd like to",
    "i would like to",
];

/// Openers that continue the current task.
const CONTINUE_OPENERS: &[&str] = &[
    "continue",
    "go on",
    "go ahead",
    "yes",
    "yep",
    "yeah",
    "ok",
    "okay",
    "sure",
    "do it",
    "try again",
    "retry",
    "still",
    "same",
    "again",
    "fix it",
    "fix that",
    "fix this",
    "that",
    "it ",
    "it's",
    "this",
    "what about",
    "why",
    "hmm",
    "no",
    "wait",
    "and ",
    "but ",
    "also",
    "great",
    "nice",
    "thanks",
    "perfect",
    "looks good",
    "lgtm",
    "proceed",
    "keep going",
    "y",
    "k",
];

/// Host and harness chatter recorded as user messages (local command echoes, interrupts,
/// injected skill bodies): never a task of its own.
const NOISE_PREFIXES: &[&str] = &[
    "<local-command",
    "<bash-input",
    "<bash-stdout",
    "<bash-stderr",
    "<command-name>/exit",
    "<command-name>/compact",
    "<command-name>/ide",
    "<command-name>/clear",
    "[request interrupted",
    "caveat:",
    "ran `",
    "base directory for this skill",
    "<system-reminder",
];

fn lower_head(user_text: &str) -> String {
    crate::text::head_chars(user_text.trim(), 200).to_lowercase()
}

/// Whether a user text is harness chatter, not a request (local command echoes, interrupts,
/// injected skill bodies).
pub fn is_noise(user_text: &str) -> bool {
    let lower = lower_head(user_text);
    NOISE_PREFIXES.iter().any(|p| lower.starts_with(p))
}

/// Cue score of a user text: > 0 announces a new task, < 0 continues.
pub fn cue(user_text: &str) -> f64 {
    let lower = lower_head(user_text);
    if lower.is_empty() || is_noise(user_text) {
        return -0.3;
    }
    // A slash command (other than the chatter above) starts a workflow.
    if lower.starts_with("<command-message>") || lower.starts_with("<command-name>/") {
        return 0.45;
    }
    if NEW_CUES.iter().any(|c| lower.contains(c)) {
        return 0.45;
    }
    if NEW_OPENERS.iter().any(|c| lower.starts_with(c)) {
        return 0.25;
    }
    let first_word_end = lower
        .find(|c: char| !c.is_alphanumeric() && c != '\'')
        .unwrap_or(lower.len());
    let head = &lower[..first_word_end];
    let opener = CONTINUE_OPENERS.iter().any(|o| {
        let o = o.trim_end();
        if o.contains(' ') {
            lower.starts_with(o)
        } else {
            head == o
        }
    });
    if opener {
        -0.3
    } else {
        0.0
    }
}
