//! Secret redaction for everything lessons write, inject or log.
//!
//! A lesson is meant to be committed with the workspace, so a captured command line or an
//! LLM-proposed body must never carry a credential. [`redact`] replaces, without regular
//! expressions (the core has no regex dependency):
//!
//! * provider keys: `sk-…`, `sk_live_…`/`sk_test_…`/`rk_live_…`, `sk-ant-…`, GitHub tokens
//!   (`ghp_`, `gho_`, `ghu_`, `ghs_`, `ghr_`, `github_pat_`), AWS access key ids (`AKIA…`,
//!   `ASIA…`), Slack tokens (`xox?-…`), Google API keys (`AIza…`), JSON Web Tokens (`eyJ….eyJ…`);
//! * `Bearer <token>` and `Basic <token>` credentials;
//! * `key=value` / `key: value` / `"key": "value"` where the key ends in password, passwd,
//!   pwd, secret, token, api_key/apikey/api-key, access_key, private_key or credentials;
//! * credentials in URLs (`scheme://user:pass@host`);
//! * PEM private key blocks.
//!
//! Redaction is idempotent (`redact(redact(x)) == redact(x)`).

/// The replacement marker.
pub const MARK: &str = "[REDACTED]";

const KEY_SUFFIXES: &[&str] = &[
    "password",
    "passwd",
    "pwd",
    "secret",
    "token",
    "api_key",
    "apikey",
    "api-key",
    "access_key",
    "private_key",
    "credentials",
];

fn is_tok(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'-'
}

/// Length of the run of bytes at `s[i..]` satisfying `f`.
fn run(s: &[u8], i: usize, f: impl Fn(u8) -> bool) -> usize {
    s[i..].iter().take_while(|b| f(**b)).count()
}

/// Token prefixes and the minimum token-character run after them.
const PREFIXES: &[(&str, usize)] = &[
    ("sk-ant-", 16),
    ("sk_live_", 12),
    ("sk_test_", 12),
    ("rk_live_", 12),
    ("sk-", 16),
    ("github_pat_", 20),
    ("ghp_", 20),
    ("gho_", 20),
    ("ghu_", 20),
    ("ghs_", 20),
    ("ghr_", 20),
    ("xoxb-", 10),
    ("xoxp-", 10),
    ("xoxa-", 10),
    ("xoxr-", 10),
    ("xoxs-", 10),
    ("AIza", 30),
];

/// A secret starting at byte `i` (a token boundary): `(bytes consumed, replacement)`.
fn secret_at(s: &[u8], i: usize) -> Option<(usize, String)> {
    let rest = &s[i..];
    for (p, min) in PREFIXES {
        if rest.starts_with(p.as_bytes()) {
            let n = run(s, i + p.len(), is_tok);
            if n >= *min {
                return Some((p.len() + n, format!("{p}{MARK}")));
            }
        }
    }
    // AWS access key ids: AKIA/ASIA + 16 upper-case letters or digits.
    if rest.starts_with(b"AKIA") || rest.starts_with(b"ASIA") {
        let n = run(s, i + 4, |b| b.is_ascii_uppercase() || b.is_ascii_digit());
        if n >= 16 {
            return Some((4 + n, MARK.to_string()));
        }
    }
    // JSON Web Token: eyJ<header>.eyJ<payload>[.<signature>]
    if rest.starts_with(b"eyJ") {
        let b64 = |b: u8| is_tok(b) || b == b'=';
        let h = run(s, i, b64);
        if h >= 10 && s.get(i + h) == Some(&b'.') && s[i + h + 1..].starts_with(b"eyJ") {
            let p = run(s, i + h + 1, b64);
            let mut n = h + 1 + p;
            if s.get(i + n) == Some(&b'.') {
                n += 1 + run(s, i + n + 1, b64);
            }
            return Some((n, MARK.to_string()));
        }
    }
    // Bearer / Basic credentials.
    for scheme in ["bearer ", "basic "] {
        if rest.len() > scheme.len() && rest[..scheme.len()].eq_ignore_ascii_case(scheme.as_bytes())
        {
            let start = i + scheme.len();
            let start = start + run(s, start, |b| b == b' ');
            let n = run(s, start, |b| {
                is_tok(b) || matches!(b, b'.' | b'~' | b'+' | b'/' | b'=')
            });
            if n >= 8 && !s[start..].starts_with(MARK.as_bytes()) {
                let word = std::str::from_utf8(&rest[..scheme.len() - 1]).unwrap_or("Bearer");
                return Some((start - i + n, format!("{word} {MARK}")));
            }
        }
    }
    // PEM private key block.
    if rest.starts_with(b"-----BEGIN ") {
        let head_end = rest[11..].windows(5).position(|w| w == b"-----")? + 11;
        let label = std::str::from_utf8(&rest[11..head_end]).ok()?;
        if label.ends_with("PRIVATE KEY") {
            let end_marker = format!("-----END {label}-----");
            let end = rest
                .windows(end_marker.len())
                .position(|w| w == end_marker.as_bytes())
                .map_or(rest.len(), |p| p + end_marker.len());
            return Some((end, format!("{MARK} private key")));
        }
    }
    key_value_at(s, i)
}

/// `key=value`, `key: value`, `"key": "value"` with a secret-looking key.
fn key_value_at(s: &[u8], i: usize) -> Option<(usize, String)> {
    let k = run(s, i, |b| is_tok(b) || b == b'.');
    if k == 0 {
        return None;
    }
    // ASCII by construction (token bytes and dots), so the text is always valid UTF-8.
    let key = std::str::from_utf8(&s[i..i + k])
        .unwrap_or_default()
        .to_ascii_lowercase();
    let hit = KEY_SUFFIXES.iter().any(|suf| {
        key.ends_with(suf) && {
            let before = key.len() - suf.len();
            before == 0 || matches!(key.as_bytes()[before - 1], b'_' | b'-' | b'.')
        }
    });
    if !hit {
        return None;
    }
    let mut j = i + k;
    if matches!(s.get(j), Some(b'"' | b'\'')) {
        j += 1;
    }
    j += run(s, j, |b| b == b' ');
    if !matches!(s.get(j), Some(b'=' | b':')) {
        return None;
    }
    j += 1;
    j += run(s, j, |b| b == b' ');
    let quote = match s.get(j) {
        Some(q @ (b'"' | b'\'')) => {
            j += 1;
            Some(*q)
        }
        _ => None,
    };
    if s[j..].starts_with(MARK.as_bytes()) {
        return None;
    }
    let v = match quote {
        Some(q) => run(s, j, |b| b != q && b != b'\n'),
        None => run(s, j, |b| {
            !b.is_ascii_whitespace() && !matches!(b, b',' | b';' | b'&' | b'`' | b')')
        }),
    };
    if v == 0 {
        return None;
    }
    // ASCII too: the key, a quote, spaces, `=` or `:`.
    let prefix = std::str::from_utf8(&s[i..j]).unwrap_or_default();
    Some((j + v - i, format!("{prefix}{MARK}")))
}

/// Credentials in a URL: `://user:pass@` → `://[REDACTED]@`.
fn url_creds_at(s: &[u8], i: usize) -> Option<(usize, String)> {
    if !s[i..].starts_with(b"://") {
        return None;
    }
    let j = i + 3;
    let n = run(s, j, |b| {
        !b.is_ascii_whitespace() && !matches!(b, b'/' | b'@' | b'?' | b'#')
    });
    if s.get(j + n) == Some(&b'@') && s[j..j + n].contains(&b':') && n > 2 {
        return Some((3 + n, format!("://{MARK}")));
    }
    None
}

/// `text` with every recognised secret replaced by [`MARK`].
pub fn redact(text: &str) -> String {
    let s = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    let mut copied = 0;
    while i < s.len() {
        let boundary = i == 0 || !(is_tok(s[i - 1]) || s[i - 1] == b'.');
        let hit = if boundary && (s[i].is_ascii_alphanumeric() || s[i] == b'-') {
            secret_at(s, i)
        } else if s[i] == b':' {
            url_creds_at(s, i)
        } else {
            None
        };
        if let Some((n, rep)) = hit {
            out.push_str(&text[copied..i]);
            out.push_str(&rep);
            i += n;
            copied = i;
        } else {
            i += 1;
        }
    }
    // Replacements end on ASCII bytes, so `copied` is always a char boundary.
    out.push_str(&text[copied..]);
    out
}

/// True when [`redact`] would change `text`.
pub fn has_secret(text: &str) -> bool {
    redact(text) != text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn planted_secrets_are_redacted() {
        let cases = [
            (
                "export OPENAI_API_KEY=sk-proj-abcdefghijklmnopqrstuvwx",
                "sk-proj-abcdefghijklmnop",
            ),
            (
                "key sk-abcdefghijklmnopqrstuvwxyz0123 here",
                "sk-abcdefghijklmnop",
            ),
            ("sk-ant-api03-AAAAAAAAAAAAAAAAAAAAAAAA", "AAAAAAAAAAAAAAAA"),
            (
                "git clone https://ghp_0123456789abcdefghijABCDEFGHIJ0123@github.com/x",
                "ghp_0123456789",
            ),
            (
                "token github_pat_11ABCDEFG0123456789_abcdefghijklmnop",
                "github_pat_11ABC",
            ),
            ("aws AKIAIOSFODNN7EXAMPLE id", "AKIAIOSFODNN7EXAMPLE"),
            (
                "curl -H 'Authorization: Bearer abc.def-ghi_jkl0123456789'",
                "abc.def-ghi",
            ),
            ("password=hunter2 next", "hunter2"),
            ("DB_PASSWORD: 's3cr3t!'", "s3cr3t!"),
            (r#"{"client_secret": "xyzzy-plugh"}"#, "xyzzy-plugh"),
            ("GITHUB_TOKEN=abc123 npm test", "abc123"),
            ("postgres://admin:pa55word@db:5432/app", "pa55word"),
            ("xoxb-123456789012-abcdefghij", "abcdefghij"),
            (
                "jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N",
                "eyJzdWIi",
            ),
            (
                "-----BEGIN RSA PRIVATE KEY-----\nMIIEow\n-----END RSA PRIVATE KEY-----",
                "MIIEow",
            ),
        ];
        for (text, secret) in cases {
            let r = redact(text);
            assert!(!r.contains(secret), "{text:?} -> {r:?}");
            assert!(r.contains(MARK), "{r}");
            assert_eq!(redact(&r), r, "idempotent: {r}");
            assert!(has_secret(text));
        }
    }

    #[test]
    fn ordinary_text_is_untouched() {
        for text in [
            "run tests with `npm test` (vitest), files in tests/**/*.test.ts",
            "cargo test --locked --features bench --test lessons",
            "maxTokens: 200, tokens are estimated; the task-runner uses tokens",
            "see https://example.com/docs?x=1 and ask-me-anything",
            "risk-free; desk-top; task-list",
            "Überprüfe die Tests 测试 ✓",
        ] {
            assert_eq!(redact(text), text);
        }
    }
}
