//! The core's layers import downwards only: the building blocks (`message`, `text`, `tokens`,
//! `pairing`, `digest`, `record`, `fold`, `cost`, `topics`) never name the engine, which sits on
//! top of them. A plain-text check over the sources (comments skipped), so a new `use
//! crate::engine::…` in a lower module fails here, in review, rather than growing a cycle.

use std::fs;
use std::path::{Path, PathBuf};

/// Modules below the engine (files or folders under `src/`).
const LOWER: &[&str] = &[
    "message.rs",
    "text.rs",
    "tokens.rs",
    "enums.rs",
    "error.rs",
    "record.rs",
    "cost.rs",
    "pairing",
    "digest",
    "fold",
    "topics",
];

fn rust_files(p: &Path, out: &mut Vec<PathBuf>) {
    if p.is_dir() {
        let mut entries: Vec<PathBuf> = fs::read_dir(p)
            .expect("read_dir")
            .map(|e| e.expect("dir entry").path())
            .collect();
        entries.sort();
        for e in entries {
            rust_files(&e, out);
        }
    } else if p.extension().is_some_and(|e| e == "rs") {
        out.push(p.to_path_buf());
    }
}

/// `(file, line number, line)` of every non-comment line naming the engine module
/// in the lower modules.
fn upward_imports() -> Vec<(String, usize, String)> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    for m in LOWER {
        let p = src.join(m);
        assert!(p.exists(), "{} is missing: update LOWER", p.display());
        rust_files(&p, &mut files);
    }
    let mut found = Vec::new();
    for f in files {
        let text = fs::read_to_string(&f).expect("read source");
        for (n, line) in text.lines().enumerate() {
            let code = line.trim_start();
            if code.starts_with("//") {
                continue;
            }
            if code.contains("crate::engine") || code.contains("cachefold::engine") {
                found.push((f.display().to_string(), n + 1, line.to_string()));
            }
        }
    }
    found
}

#[test]
fn lower_layers_do_not_import_the_engine() {
    let found = upward_imports();
    assert!(
        found.is_empty(),
        "lower modules import the engine:\n{}",
        found
            .iter()
            .map(|(f, n, l)| format!("{f}:{n}: {l}"))
            .collect::<Vec<_>>()
            .join("\n")
    );
}
