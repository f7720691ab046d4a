//! The core does no I/O: files, clock, environment, randomness and printing belong to the JS
//! shim (`js/`) or the bench binary (`src/bin/`). This test keeps the rule true in review: it
//! parses every core source file with `syn` and visits every `use` tree (groups, renames, globs),
//! every path (expressions, types, patterns) and every macro call, including the tokens inside
//! macro arguments, so `use std::{env, fs}`, `use std::fs as f`, `std::env::var(..)` in an
//! expression and `format!("{:?}", std::env::var(..))` are all seen. Comments and string
//! literals are not code and are not flagged.

use std::path::{Path, PathBuf};

use proc_macro2::{TokenStream, TokenTree};
use syn::visit::Visit;

/// The core's source directories, relative to the repository root, each with the
/// subdirectories that are not core (hosts that may do I/O). The one place to change when the
/// core is split into several crates.
/// (The bench binary and the replay addon, which do I/O, are the crates `crates/bench` and
/// `crates/native`, outside the core.)
const CORE_DIRS: &[(&str, &[&str])] = &[("src", &[])];

/// The only exceptions, one file and one rule each (none: the hosts that do I/O are crates of
/// their own).
const ALLOWED: &[(&str, &str)] = &[];

/// Path prefixes (after a leading `::` and a `core`/`alloc` spelling of std are normalised)
/// that do I/O or read the clock, the environment or randomness.
const FORBIDDEN_PREFIXES: &[&[&str]] = &[
    &["std", "fs"],
    &["std", "env"],
    &["std", "net"],
    &["std", "process"],
    &["std", "thread"],
    &["std", "io", "stdin"],
    &["std", "io", "stdout"],
    &["std", "io", "stderr"],
    &["std", "os"],
    &["std", "time", "SystemTime"],
    &["std", "time", "Instant"],
    &["std", "time", "UNIX_EPOCH"],
    &["rand"],
    &["getrandom"],
];

/// Paths anywhere in a longer path (after an import, `Instant::now()` names no `std`).
const FORBIDDEN_PAIRS: &[(&str, &str)] = &[
    ("Instant", "now"),
    ("SystemTime", "now"),
    ("File", "open"),
    ("File", "create"),
    ("File", "options"),
    ("OpenOptions", "new"),
];

/// Macros that print (to stdout or stderr).
const FORBIDDEN_MACROS: &[&str] = &["println", "eprintln", "print", "eprint", "dbg"];

/// The rule a path breaks, as a short name (`std::fs`, `Instant::now`, ...), or None.
fn path_rule(segs: &[String]) -> Option<String> {
    if segs.is_empty() {
        return None;
    }
    for pre in FORBIDDEN_PREFIXES {
        if segs.len() >= pre.len() && segs.iter().zip(pre.iter()).all(|(a, b)| a == b) {
            return Some(pre.join("::"));
        }
    }
    for w in segs.windows(2) {
        for (a, b) in FORBIDDEN_PAIRS {
            if w[0] == *a && w[1] == *b {
                return Some(format!("{a}::{b}"));
            }
        }
    }
    None
}

/// One finding: line, rule broken, and what the code says.
#[derive(Debug, Clone, PartialEq)]
struct Finding {
    line: usize,
    rule: String,
    what: String,
}

#[derive(Default)]
struct Checker {
    found: Vec<Finding>,
}

impl Checker {
    fn flag(&mut self, line: usize, rule: String, what: String) {
        self.found.push(Finding { line, rule, what });
    }

    fn check_path(&mut self, line: usize, segs: Vec<String>) {
        if let Some(rule) = path_rule(&segs) {
            self.flag(line, rule, segs.join("::"));
        }
    }

    /// Every full path a `use` tree imports (`use std::{env, fs as f, io::*}` gives
    /// `std::env`, `std::fs`, `std::io::*`); renames and globs of `std` itself are flagged
    /// because they would hide the paths written through them.
    fn use_tree(&mut self, prefix: &mut Vec<String>, tree: &syn::UseTree) {
        match tree {
            syn::UseTree::Path(p) => {
                prefix.push(p.ident.to_string());
                self.use_tree(prefix, &p.tree);
                prefix.pop();
            }
            syn::UseTree::Name(n) => {
                let mut segs = prefix.clone();
                let name = n.ident.to_string();
                if name != "self" {
                    segs.push(name);
                }
                self.check_use(n.ident.span().start().line, segs, None);
            }
            syn::UseTree::Rename(r) => {
                let mut segs = prefix.clone();
                let name = r.ident.to_string();
                if name != "self" {
                    segs.push(name);
                }
                self.check_use(
                    r.ident.span().start().line,
                    segs,
                    Some(r.rename.to_string()),
                );
            }
            syn::UseTree::Glob(g) => {
                let segs = prefix.clone();
                let line = g.star_token.span.start().line;
                // A glob of a module above a forbidden path brings its names into scope
                // (`use std::*` brings `fs`, `use std::time::*` brings SystemTime).
                let segs = normalise(segs);
                for pre in FORBIDDEN_PREFIXES {
                    let above =
                        segs.len() < pre.len() && segs.iter().zip(pre.iter()).all(|(a, b)| a == b);
                    if above {
                        self.flag(line, pre.join("::"), format!("{}::*", segs.join("::")));
                    }
                }
                let mut probe = segs.clone();
                probe.push("*".into());
                if let Some(rule) = path_rule(&probe) {
                    self.flag(line, rule, probe.join("::"));
                }
            }
            syn::UseTree::Group(g) => {
                for t in &g.items {
                    self.use_tree(prefix, t);
                }
            }
        }
    }

    fn check_use(&mut self, line: usize, segs: Vec<String>, rename: Option<String>) {
        let std_root = segs.len() == 1 && matches!(segs[0].as_str(), "std" | "core" | "alloc");
        if let (true, Some(r)) = (std_root, rename.as_ref()) {
            self.flag(line, "std alias".into(), format!("use {} as {r}", segs[0]));
        }
        self.check_path(line, normalise(segs));
    }

    /// Paths and nested macro calls inside a macro's tokens (which `syn` leaves unparsed):
    /// `ident :: ident :: ...` runs and `ident !` calls, at any depth.
    fn macro_tokens(&mut self, tokens: TokenStream) {
        let trees: Vec<TokenTree> = tokens.into_iter().collect();
        let mut i = 0;
        while i < trees.len() {
            match &trees[i] {
                TokenTree::Group(g) => {
                    self.macro_tokens(g.stream());
                    i += 1;
                }
                TokenTree::Ident(id) => {
                    let line = id.span().start().line;
                    let mut segs = vec![id.to_string()];
                    let mut j = i + 1;
                    // `:` `:` ident, repeated.
                    while let (
                        Some(TokenTree::Punct(a)),
                        Some(TokenTree::Punct(b)),
                        Some(TokenTree::Ident(next)),
                    ) = (trees.get(j), trees.get(j + 1), trees.get(j + 2))
                    {
                        if a.as_char() != ':' || b.as_char() != ':' {
                            break;
                        }
                        segs.push(next.to_string());
                        j += 3;
                    }
                    if let Some(TokenTree::Punct(p)) = trees.get(j) {
                        if p.as_char() == '!' {
                            self.check_macro_name(line, &segs);
                        }
                    }
                    self.check_path(line, normalise(segs));
                    i = j;
                }
                _ => i += 1,
            }
        }
    }

    fn check_macro_name(&mut self, line: usize, segs: &[String]) {
        if let Some(last) = segs.last() {
            if FORBIDDEN_MACROS.contains(&last.as_str()) {
                self.flag(line, format!("{last}!"), format!("{}!", segs.join("::")));
            }
        }
    }
}

/// `::std::fs` and `core::...`/`alloc::...` spellings compare as `std::...`.
fn normalise(mut segs: Vec<String>) -> Vec<String> {
    if let Some(first) = segs.first_mut() {
        if first == "core" || first == "alloc" {
            *first = "std".into();
        }
    }
    segs
}

fn segs_of(path: &syn::Path) -> Vec<String> {
    path.segments.iter().map(|s| s.ident.to_string()).collect()
}

fn line_of(path: &syn::Path) -> usize {
    path.segments
        .first()
        .map(|s| s.ident.span().start().line)
        .unwrap_or(0)
}

impl<'ast> Visit<'ast> for Checker {
    fn visit_item_use(&mut self, u: &'ast syn::ItemUse) {
        self.use_tree(&mut Vec::new(), &u.tree);
    }

    fn visit_item_extern_crate(&mut self, e: &'ast syn::ItemExternCrate) {
        let name = e.ident.to_string();
        let line = e.ident.span().start().line;
        if matches!(name.as_str(), "rand" | "getrandom") {
            self.flag(line, name.clone(), format!("extern crate {name}"));
        }
        if let (true, Some((_, r))) = (name == "std", e.rename.as_ref()) {
            self.flag(line, "std alias".into(), format!("extern crate std as {r}"));
        }
    }

    fn visit_path(&mut self, p: &'ast syn::Path) {
        self.check_path(line_of(p), normalise(segs_of(p)));
        syn::visit::visit_path(self, p);
    }

    fn visit_macro(&mut self, m: &'ast syn::Macro) {
        let line = line_of(&m.path);
        self.check_macro_name(line, &segs_of(&m.path));
        self.macro_tokens(m.tokens.clone());
        syn::visit::visit_macro(self, m);
    }
}

/// Findings for one source text; Err when it does not parse (an unparsed file is unchecked).
fn check_source(text: &str) -> Result<Vec<Finding>, String> {
    let file = syn::parse_file(text).map_err(|e| {
        let at = e.span().start();
        format!("{}:{}: {e}", at.line, at.column)
    })?;
    let mut c = Checker::default();
    c.visit_file(&file);
    c.found.sort_by_key(|f| f.line);
    c.found.dedup();
    Ok(c.found)
}

fn rust_files(dir: &Path, skip: &[PathBuf], out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let p = entry.unwrap().path();
        if p.is_dir() {
            if !skip.contains(&p) {
                rust_files(&p, skip, out);
            }
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
}

#[test]
fn core_sources_do_no_io() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    for (dir, skip) in CORE_DIRS {
        let skip: Vec<PathBuf> = skip.iter().map(|s| root.join(s)).collect();
        let before = files.len();
        rust_files(&root.join(dir), &skip, &mut files);
        assert!(files.len() > before, "no Rust sources under core dir {dir}");
    }
    assert!(
        files.len() >= 50,
        "expected the core sources, found {} files",
        files.len()
    );
    let mut bad = Vec::new();
    for f in &files {
        let rel = f
            .strip_prefix(root)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        let text = std::fs::read_to_string(f).unwrap();
        let found = check_source(&text).unwrap_or_else(|e| panic!("{rel}: does not parse: {e}"));
        for x in found {
            if ALLOWED.contains(&(rel.as_str(), x.rule.as_str())) {
                continue;
            }
            bad.push(format!("{rel}:{}: {} ({})", x.line, x.what, x.rule));
        }
    }
    assert!(bad.is_empty(), "I/O in the core:\n{}", bad.join("\n"));
}

/// The exceptions still name something real: an allowed rule no file breaks any more is stale.
#[test]
fn every_exception_is_used() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for (file, rule) in ALLOWED {
        let text = std::fs::read_to_string(root.join(file)).unwrap();
        let found = check_source(&text).unwrap();
        assert!(
            found.iter().any(|x| x.rule == *rule),
            "{file} no longer needs the {rule} exception: remove it"
        );
    }
}

/// Every import form and call site the check must see, and what it must not flag.
#[test]
fn the_check_sees_every_form() {
    let caught: &[(&str, &str)] = &[
        ("use std::fs;", "std::fs"),
        ("use std::{env, fs};", "std::env"),
        ("use std::{env, fs};", "std::fs"),
        ("use std::{io::{self, Read}, fs as f};", "std::fs"),
        ("use std::fs as f;", "std::fs"),
        ("use ::std::env::var;", "std::env"),
        (
            "use core::time::Duration; use std::time::SystemTime;",
            "std::time::SystemTime",
        ),
        ("use std::time::*;", "std::time::SystemTime"),
        ("use std::*;", "std::fs"),
        ("use std::io::*;", "std::io::stdout"),
        ("use rand::*;", "rand"),
        ("use std::{self as s};", "std alias"),
        ("use std::time::Instant as I;", "std::time::Instant"),
        ("use std as s;", "std alias"),
        ("extern crate std as s;", "std alias"),
        ("use std::process::Command;", "std::process"),
        ("use std::net::TcpStream;", "std::net"),
        ("use std::thread::spawn;", "std::thread"),
        ("use rand::Rng;", "rand"),
        ("fn f() { let _ = std::env::var(\"X\"); }", "std::env"),
        ("fn f() -> std::fs::File { todo!() }", "std::fs"),
        ("fn f() { let _ = ::std::fs::read(\"x\"); }", "std::fs"),
        ("fn f() { let _ = Instant::now(); }", "Instant::now"),
        (
            "fn f() { let _ = std::time::Instant::now(); }",
            "std::time::Instant",
        ),
        ("fn f() { let _ = File::open(\"x\"); }", "File::open"),
        ("fn f() { let _ = rand::random::<u8>(); }", "rand"),
        ("fn f() { println!(\"x\"); }", "println!"),
        ("fn f() { std::println!(\"x\"); }", "println!"),
        ("fn f() { eprintln!(\"x\"); }", "eprintln!"),
        ("fn f() { print!(\"x\"); }", "print!"),
        ("fn f() { let x = dbg!(1); }", "dbg!"),
        (
            "fn f() { let _ = format!(\"{:?}\", std::env::var(\"X\")); }",
            "std::env",
        ),
        (
            "fn f() { let _ = vec![format!(\"{}\", { eprintln!(\"x\"); 1 })]; }",
            "eprintln!",
        ),
        (
            "macro_rules! m { () => { std::fs::read(\"x\") }; }",
            "std::fs",
        ),
        (
            "mod m { fn g() { let _ = std::process::id(); } }",
            "std::process",
        ),
        (
            "impl S { fn g(&self) { let _ = std::thread::current(); } }",
            "std::thread",
        ),
    ];
    for (src, rule) in caught {
        let found = check_source(src).unwrap();
        assert!(
            found.iter().any(|x| x.rule == *rule),
            "missed {rule} in {src:?}: {found:?}"
        );
    }
    let clean: &[&str] = &[
        "// std::fs::read and println!(\"x\") in a comment\nfn f() {}",
        "/// Doc: `std::env::var`, `Instant::now()`.\nfn f() {}",
        "fn f() -> &'static str { \"std::fs::read println!\" }",
        "use std::collections::BTreeMap; use std::fmt::Write; use core::time::Duration;",
        "fn f() -> String { format!(\"{}\", 1) }",
        "fn f(files: &[u8]) -> usize { files.len() }",
        "use crate::fs_like::read; fn g() { let _ = self::env2::x(); }",
    ];
    for src in clean {
        let found = check_source(src).unwrap();
        assert!(found.is_empty(), "false alarm in {src:?}: {found:?}");
    }
    assert!(
        check_source("fn f( {").is_err(),
        "a file that does not parse must fail the check"
    );
}
