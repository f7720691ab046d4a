//! What the tests read from outside the repository: the shared corpus of real sessions
//! (`../shared/corpus` beside the checkout, or `$CACHEFOLD_CORPUS`) and the fetched DeepSeek-V4
//! tokenizer. Outside CI a missing one is reported as skipped, with the reason, and the test
//! returns; under CI (`CI=true` or `CI=1`, as `.ci/run` runs) it is a failure, so a missing
//! corpus or tokenizer can never pass as green.
#![allow(dead_code)] // each test binary uses the part it needs

use std::path::{Path, PathBuf};

/// True when the environment says this is a CI run (`CI=true`, `CI=1`, any case).
pub fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "1" || v.eq_ignore_ascii_case("true"))
}

/// A prerequisite of `test` is missing: fail under CI, else say it was skipped and why.
/// Returns only outside CI (the caller then returns from the test).
pub fn missing(test: &str, what: &str) {
    assert!(
        !in_ci(),
        "{test}: {what}; under CI a missing prerequisite is a failure, not a skip"
    );
    eprintln!("SKIPPED {test}: {what} (outside CI; with CI=true this fails)");
}

/// The corpus folder, when it exists.
pub fn corpus_path() -> PathBuf {
    std::env::var("CACHEFOLD_CORPUS")
        .map(PathBuf::from)
        .unwrap_or_else(|_| Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus"))
}

/// The corpus folder for `test`, or None (skipped outside CI, a panic under CI).
pub fn corpus(test: &str) -> Option<PathBuf> {
    let p = corpus_path();
    if p.is_dir() {
        return Some(p);
    }
    missing(
        test,
        &format!(
            "no corpus at {} (set CACHEFOLD_CORPUS or place shared/corpus beside the checkout)",
            p.display()
        ),
    );
    None
}

/// A file under the corpus, read as text, or None (skipped outside CI, a panic under CI).
pub fn corpus_file(test: &str, root: &Path, rel: &str) -> Option<String> {
    match std::fs::read_to_string(root.join(rel)) {
        Ok(t) => Some(t),
        Err(e) => {
            missing(test, &format!("corpus file {rel}: {e}"));
            None
        }
    }
}
