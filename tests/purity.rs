//! The core does no I/O: files, clock, environment, randomness and printing belong to the JS
//! shim (`js/`) or the bench binary (`src/bin/`). This test keeps the rule true in review by
//! scanning every core source file for the APIs that would break it.

use std::path::{Path, PathBuf};

const FORBIDDEN: &[&str] = &[
    "std::fs",
    "std::env",
    "std::net",
    "std::process",
    "std::thread",
    "SystemTime",
    "Instant::now",
    "println!",
    "eprintln!",
    "print!(",
    "eprint!(",
    "dbg!(",
    "rand::",
    "File::open",
    "File::create",
];

/// The only exceptions, one file and one pattern each: `src/native.rs` is the replay addon,
/// a host of the bench like `src/bin/` (it runs the bench driver's workers on threads and opens
/// the SQLite store read-only; the JS side reads files, keeps time and prints).
const ALLOWED: &[(&str, &str)] = &[("native.rs", "std::thread")];

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let p = entry.unwrap().path();
        if p.is_dir() {
            // src/bin is the bench binary: it reads session files and writes reports.
            if p.file_name().is_some_and(|n| n == "bin") {
                continue;
            }
            rust_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
}

#[test]
fn core_sources_do_no_io() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    assert!(files.len() >= 5, "expected the core sources under src/");
    let mut bad = Vec::new();
    for f in &files {
        // wasm.rs is the binding (it may use js_sys); it is still checked for std I/O.
        let text = std::fs::read_to_string(f).unwrap();
        let top = f.parent() == Some(src.as_path());
        let name = f.file_name().and_then(|n| n.to_str()).unwrap_or("");
        for (n, line) in text.lines().enumerate() {
            let code = line.split("//").next().unwrap_or("");
            for pat in FORBIDDEN {
                let allowed = top && ALLOWED.contains(&(name, *pat));
                if code.contains(pat) && !allowed {
                    bad.push(format!("{}:{}: {}", f.display(), n + 1, line.trim()));
                }
            }
        }
    }
    assert!(bad.is_empty(), "I/O in the core:\n{}", bad.join("\n"));
}
