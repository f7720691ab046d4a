//! Secret redaction for everything lessons write, inject or log.
//!
//! A lesson is meant to be committed with the workspace, so a captured command line or an
//! LLM-proposed body must never carry a credential. This is the one rule set: the core applies
//! it before lesson candidates, injections and decision-log text are produced, and the shim's
//! writers call it through the binding (`redactSecrets`); the shim adds only secretlint's
//! recommended preset (js/lessons/redact.js). [`redact`] replaces, first by a scanner:
//!
//! * provider keys: `sk-…`, `sk_live_…`/`sk_test_…`/`rk_live_…`, `sk-ant-…`, GitHub tokens
//!   (`ghp_`, `gho_`, `ghu_`, `ghs_`, `ghr_`, `github_pat_`), AWS access key ids (`AKIA…`,
//!   `ASIA…`), Slack tokens (`xox?-…`), Google API keys (`AIza…`), JSON Web Tokens (`eyJ….eyJ…`);
//! * `Bearer <token>` and `Basic <token>` credentials;
//! * `key=value` / `key: value` / `"key": "value"` where the key ends in password, passwd,
//!   pwd, secret, token, api_key/apikey/api-key, access_key, private_key or credentials;
//! * credentials in URLs (`scheme://user:pass@host`);
//! * PEM private key blocks;
//!
//! then by the context rules ([`context`], `regex` patterns; the name or flag stays, the value
//! goes):
//!
//! * `Authorization: token|Bearer|Basic X`, also inside `-H '…'`;
//! * `NAME=value` / `NAME: value` where the name says pass(word), pwd, secret, token, api key,
//!   access key, private key, `_KEY`/`KEY_`, credential(s) or auth (`PGPASSWORD=…`,
//!   `OPENAI_KEY: …`); a count of tokens (`maxTokens: 200`, `MAX_TOKENS=4096`) is not a name
//!   of a secret;
//! * `--token X`, `--password=X`, `--api-key X`, `--client-secret X`, … (`-p X` is left alone);
//! * `mysql … -pSECRET` (the password glued to `-p`, first one after each mysql/mariadb command);
//! * token shapes: age secret keys, DigitalOcean (`dop_v1_…`), Twilio (`SK` + 32 hex), Hugging
//!   Face (`hf_…`), GitLab (`glpat-…`), npm (`npm_…`), Slack app (`xapp-…`), OpenAI/Anthropic
//!   (`sk-…`), Stripe (`sk_live_…`, `rk_test_…`);
//! * a bare AWS secret access key: 40 characters of base64 with upper- and lower-case letters and
//!   a digit, `/` or `+` (hex digests and words do not qualify).
//!
//! Redaction is idempotent (`redact(redact(x)) == redact(x)`).

use std::sync::LazyLock;

use regex::{Captures, Regex};

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

/// `text` with every recognised secret replaced by [`MARK`]: the scanner, then [`context`].
pub fn redact(text: &str) -> String {
    context(&scan(text))
}

/// The scanner's secrets (prefixed tokens, credentials, key/value pairs, URLs, PEM blocks).
fn scan(text: &str) -> String {
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

/// A rule pattern; the patterns are constants (each rule has a test that compiles it).
fn re(pattern: &str) -> Regex {
    Regex::new(pattern).expect("a redaction pattern is valid")
}

/// True when a marker starts at byte `at` of `text` (the JS rules' `(?!\[REDACTED\])`,
/// case-insensitive).
fn marked_at(text: &str, at: usize) -> bool {
    text.as_bytes()
        .get(at..at + MARK.len())
        .is_some_and(|head| head.eq_ignore_ascii_case(MARK.as_bytes()))
}

/// The byte offset of the character after the one at `i`.
fn next_char(text: &str, i: usize) -> usize {
    i + text[i..].chars().next().map_or(1, char::len_utf8)
}

/// Every match of `head` from the left followed by a `value` (an anchored pattern) at the
/// head's end: the head stays, the value becomes [`MARK`], unless `keep(caps, value_start)`
/// says the match stays. A head without a value, or one kept, is passed over up to the value's
/// start: a head starting later within it ends there too and has the same value (what the JS
/// rules' lookaheads at that start did). The value is measured only when it is replaced, so a
/// text of kept heads is scanned once.
fn replace_after_head(
    text: &str,
    head: &Regex,
    value: &Regex,
    keep: impl Fn(&Captures, usize) -> bool,
) -> String {
    let mut out = String::with_capacity(text.len());
    let mut copied = 0;
    let mut at = 0;
    while let Some(caps) = head.captures_at(text, at) {
        let Some(m) = caps.get(0).filter(|m| !m.is_empty()) else {
            break;
        };
        let vs = m.end();
        let v = if keep(&caps, vs) {
            None
        } else {
            value.find(&text[vs..])
        };
        let Some(v) = v else {
            at = vs;
            continue;
        };
        out.push_str(&text[copied..vs]);
        out.push_str(MARK);
        copied = vs + v.end();
        at = copied;
    }
    out.push_str(&text[copied..]);
    out
}

/// `Authorization: token|Bearer|Basic X` (and `authorization=X`): the header stays.
static AUTHORIZATION: LazyLock<Regex> = LazyLock::new(|| {
    re(r#"(?i)((?-u:\b)authorization\s*[:=]\s*(?:token|bearer|basic)?\s*)[^\s"'`]+"#)
});

/// `NAME=` / `NAME: ` / `"NAME": ` with a secret-looking name, up to its value. Group 1: the name.
static SECRET_NAME: LazyLock<Regex> = LazyLock::new(|| {
    re(concat!(
        r#"(?i)(?-u:\b)([A-Za-z0-9_.-]*(?:PASS(?:WORD|WD)?|PWD|SECRET|TOKEN|API[_-]?KEY"#,
        r#"|ACCESS[_-]?KEY|PRIVATE[_-]?KEY|_KEY|KEY_|CREDENTIALS?|AUTH)[A-Za-z0-9_]*)["']?\s*[=:]\s*"#,
    ))
});

/// The value after a [`SECRET_NAME`]: quoted (up to the line's end), or up to a space, quote or
/// shell punctuation.
static NAME_VALUE: LazyLock<Regex> =
    LazyLock::new(|| re(r#"\A(?:"[^"\n]*"|'[^'\n]*'|[^\s"'`;&|,)}\]]+)"#));

/// The keywords of [`SECRET_NAME`], to tell a name of a secret from a count of tokens.
static SECRET_WORD: LazyLock<Regex> = LazyLock::new(|| {
    re(concat!(
        r"(?i)PASS(?:WORD|WD)?|PWD|SECRET|TOKEN|API[_-]?KEY|ACCESS[_-]?KEY|PRIVATE[_-]?KEY|_KEY",
        r"|KEY_|CREDENTIALS?|AUTH",
    ))
});

/// `tokens` in a name: a count (`maxTokens`, `MAX_TOKENS`), not a credential.
static TOKENS_WORD: LazyLock<Regex> = LazyLock::new(|| re(r"(?i)tokens"));

/// The scheme word of an Authorization header standing as a value (`token X`, `Bearer X`).
static SCHEME_WORD: LazyLock<Regex> = LazyLock::new(|| re(r"(?i)\A(?:token|bearer|basic)\s"));

/// `--token `, `--password=`, `-api-key `, … up to the value (the flag stays).
static SECRET_FLAG: LazyLock<Regex> = LazyLock::new(|| {
    re(concat!(
        r"(?i)--?(?:token|password|passwd|pass|secret|api[-_]?key|access[-_]?key",
        r"|auth(?:[-_]token)?|client[-_]secret|private[-_]key)(?:=|\s+)",
    ))
});

/// The value after a [`SECRET_FLAG`]: quoted (up to the line's end), or up to a space or quote.
static FLAG_VALUE: LazyLock<Regex> = LazyLock::new(|| re(r#"\A(?:"[^"\n]*"|'[^'\n]*'|[^\s"'`]+)"#));

/// A mysql/mariadb command word; its password follows a `-p` later on the same line.
static MYSQL: LazyLock<Regex> = LazyLock::new(|| {
    re(r"(?i)(?-u:\b)(?:mysql|mysqldump|mysqladmin|mariadb|mariadb-dump)(?-u:\b)")
});

/// `-pSECRET` after whitespace. Group 1: up to the `p`, group 2: the password.
static GLUED_P: LazyLock<Regex> = LazyLock::new(|| re(r#"(?i)(\s-p)([^\s"'`]+)"#));

/// Token shapes replaced whole, one pattern each (applied in this order).
static SHAPES: LazyLock<[Regex; 4]> = LazyLock::new(|| {
    [
        re(r"(?-u:\b)AGE-SECRET-KEY-1[0-9A-Za-z]{20,}"),
        re(r"(?-u:\b)do[por]_v1_[0-9a-f]{64}(?-u:\b)"),
        re(r"(?-u:\b)SK[0-9a-fA-F]{32}(?-u:\b)"),
        re(concat!(
            r"(?-u:\b)(?:hf_[A-Za-z0-9]{30,}|glpat-[A-Za-z0-9_-]{20,}|npm_[A-Za-z0-9]{36}",
            r"|xapp-[0-9]-[A-Za-z0-9-]{20,}|sk-(?:proj-|ant-)?[A-Za-z0-9_-]{20,}",
            r"|[rs]k_(?:live|test)_[A-Za-z0-9]{16,})",
        )),
    ]
});

/// Maximal runs of base64 characters (a bare AWS secret key is a run of exactly 40).
static B64_RUN: LazyLock<Regex> = LazyLock::new(|| re(r"[A-Za-z0-9/+=]+"));

/// A bare AWS secret access key: 40 base64 characters (no `=`) with an upper- and a lower-case
/// letter and a digit, `/` or `+`.
fn is_aws_secret(run: &str) -> bool {
    let b = run.as_bytes();
    b.len() == 40
        && !b.contains(&b'=')
        && b.iter().any(u8::is_ascii_uppercase)
        && b.iter().any(u8::is_ascii_lowercase)
        && b.iter()
            .any(|c| c.is_ascii_digit() || matches!(c, b'/' | b'+'))
}

/// The password after the first `-p` on the line of each mysql/mariadb command word (the rest
/// of the line up to and including its newline). A line without one is not searched again for
/// the next command word on it (the search from there would find none either).
fn mysql_passwords(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut copied = 0;
    let mut at = 0;
    while let Some(cmd) = MYSQL.find_at(text, at) {
        let line_end = text[cmd.end()..]
            .find('\n')
            .map_or(text.len(), |n| cmd.end() + n);
        // A `-p` after the line's newline ends its value on the next line.
        let limit = text.get(line_end + 1..).map_or(text.len(), |rest| {
            rest.find('\n').map_or(text.len(), |n| line_end + 1 + n)
        });
        let hay = &text[..limit];
        let mut from = cmd.end();
        let hit = loop {
            let Some(c) = GLUED_P.captures_at(hay, from) else {
                break None;
            };
            match (c.get(1), c.get(2)) {
                (Some(flag), Some(pw)) if flag.start() <= line_end => {
                    if !marked_at(text, pw.start()) {
                        break Some((flag.end(), pw.end()));
                    }
                    from = next_char(text, flag.start());
                }
                _ => break None,
            }
        };
        match hit {
            Some((flag_end, pw_end)) => {
                out.push_str(&text[copied..flag_end]);
                out.push_str(MARK);
                copied = pw_end;
                at = pw_end;
            }
            None => at = line_end.max(cmd.end()),
        }
    }
    out.push_str(&text[copied..]);
    out
}

/// The context rules, in order (each rule sees the previous one's output).
pub fn context(text: &str) -> String {
    let t = AUTHORIZATION.replace_all(text, |c: &Captures| format!("{}{MARK}", &c[1]));
    let t = replace_after_head(&t, &SECRET_NAME, &NAME_VALUE, |c, vs| {
        let name = c.get(1).map_or("", |m| m.as_str());
        let count = !SECRET_WORD.is_match(&TOKENS_WORD.replace_all(name, ""));
        count || marked_at(&t, vs) || SCHEME_WORD.is_match(&t[vs..])
    });
    let t = replace_after_head(&t, &SECRET_FLAG, &FLAG_VALUE, |_, vs| marked_at(&t, vs));
    let t = mysql_passwords(&t);
    let t = SHAPES
        .iter()
        .fold(t, |t, shape| shape.replace_all(&t, MARK).into_owned());
    B64_RUN
        .replace_all(&t, |c: &Captures| {
            let run = &c[0];
            if is_aws_secret(run) {
                MARK.to_string()
            } else {
                run.to_string()
            }
        })
        .into_owned()
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

    /// `redact(text)`, checked idempotent.
    fn red(text: &str) -> String {
        let r = redact(text);
        assert_eq!(redact(&r), r, "idempotent: {text:?} -> {r:?}");
        r
    }

    #[test]
    fn authorization_header_values() {
        assert_eq!(
            red("curl -H 'Authorization: token abc123def456' api"),
            "curl -H 'Authorization: token [REDACTED]' api"
        );
        assert_eq!(red("authorization=abc123"), "authorization=[REDACTED]");
        assert_eq!(
            red("AUTHORIZATION : basic dXNlcg"),
            "AUTHORIZATION : basic [REDACTED]"
        );
    }

    #[test]
    fn values_of_secret_names() {
        for (text, want) in [
            (
                "PGPASSWORD=pgS3cretValue9 psql -h db",
                "PGPASSWORD=[REDACTED] psql -h db",
            ),
            ("DBPASS=dbS3cretValue9 make", "DBPASS=[REDACTED] make"),
            ("OPENAI_KEY: abc123", "OPENAI_KEY: [REDACTED]"),
            ("MYAPIKEY='a b c'", "MYAPIKEY=[REDACTED]"),
            ("{\"dbPwd\": \"x1\"}", "{\"dbPwd\": [REDACTED]}"),
            ("KEY_ID=abc; ls", "KEY_ID=[REDACTED]; ls"),
            ("GH_AUTH=abc,next", "GH_AUTH=[REDACTED],next"),
            ("Credential=abc", "Credential=[REDACTED]"),
            // The scheme word of a header is not the value; what follows is.
            ("X_AUTH: token abc123", "X_AUTH: token abc123"),
            // Counts of tokens are not credentials; a secret name beside them still is.
            (
                "maxTokens: 200, MAX_TOKENS=4096",
                "maxTokens: 200, MAX_TOKENS=4096",
            ),
            ("TOKENS_SECRET=abc", "TOKENS_SECRET=[REDACTED]"),
        ] {
            assert_eq!(red(text), want, "{text:?}");
        }
    }

    #[test]
    fn values_of_secret_flags() {
        for (text, want) in [
            (
                "deploy --token tokS3cretValue9",
                "deploy --token [REDACTED]",
            ),
            ("psql --pass pwS3cret", "psql --pass [REDACTED]"),
            ("x --api-key 'k e y' y", "x --api-key [REDACTED] y"),
            ("x --client_secret=cs1 y", "x --client_secret=[REDACTED] y"),
            ("x -auth-token \"t\"", "x -auth-token [REDACTED]"),
            (
                "ssh -p 22 host; mkdir -p build",
                "ssh -p 22 host; mkdir -p build",
            ),
        ] {
            assert_eq!(red(text), want, "{text:?}");
        }
    }

    #[test]
    fn mysql_password_glued_to_p() {
        for (text, want) in [
            (
                "mysql -uroot -pmyS3cret app",
                "mysql -uroot -p[REDACTED] app",
            ),
            // A bare -p (prompt) is passed over for the next one on the line.
            (
                "mysqldump -p -uroot -pS3cret db",
                "mysqldump -p -uroot -p[REDACTED] db",
            ),
            ("MariaDB-dump\n-pS3cret", "MariaDB-dump\n-p[REDACTED]"),
            // Not on the command's line, not after a mysql command.
            ("mysql -uroot\nx -pS3cret", "mysql -uroot\nx -pS3cret"),
            ("mkdir -pbuild", "mkdir -pbuild"),
        ] {
            assert_eq!(red(text), want, "{text:?}");
        }
    }

    #[test]
    fn token_shapes() {
        let hex64 = "0123456789abcdef".repeat(4);
        for (text, want) in [
            (
                format!("age -i AGE-SECRET-KEY-1{} f", "Q".repeat(58)),
                "age -i [REDACTED] f".to_string(),
            ),
            (
                format!("doctl -t dop_v1_{hex64} x"),
                "doctl -t [REDACTED] x".to_string(),
            ),
            (
                "twilio SK0123456789abcdef0123456789abcdef x".to_string(),
                "twilio [REDACTED] x".to_string(),
            ),
            (
                "login hf_abcdefghijklmnopqrstuvwxyzABCDEFGH".to_string(),
                "login [REDACTED]".to_string(),
            ),
            (
                "t glpat-abcdefghijklmnopqrst".to_string(),
                "t [REDACTED]".to_string(),
            ),
            (
                "t npm_abcdefghijklmnopqrstuvwxyz0123456789".to_string(),
                "t [REDACTED]".to_string(),
            ),
            (
                "t xapp-1-A0123456789-0123456789012-abc".to_string(),
                "t [REDACTED]".to_string(),
            ),
            (
                "t rk_test_abcdefghij0123456789".to_string(),
                "t [REDACTED]".to_string(),
            ),
        ] {
            assert_eq!(red(&text), want, "{text:?}");
        }
        // Too short, or glued to a word.
        for text in [
            "SK0123456789abcdef",
            "xSK0123456789abcdef0123456789abcdef",
            "hf_short",
        ] {
            assert_eq!(red(text), text);
        }
    }

    #[test]
    fn bare_aws_secret_access_key() {
        assert_eq!(
            red("aws configure set x wJalrXUtnFEMI/K7MDENG/bPxRfiCYzK8aQ3pL2m"),
            "aws configure set x [REDACTED]"
        );
        for text in [
            "git checkout 0123456789abcdef0123456789abcdef01234567",
            "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzK8aQ3pL2mX",
            "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzK8aQ3pL2m=",
            "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMN",
        ] {
            assert_eq!(red(text), text);
        }
    }

    /// The secrets of tests/js/reliability-secrets.test.mjs: the core alone removes each.
    #[test]
    fn the_shims_secret_set_without_secretlint() {
        let cases = [
            ("PGPASSWORD=pgS3cretValue9 psql -h db", "pgS3cretValue9"),
            ("deploy --token tokS3cretValue9", "tokS3cretValue9"),
            ("OPENAI_KEY=sk-proj-abcdefghijklmnopqrstuvwxyzABCDEF0123456789", "sk-proj-abcdefghijklmnopqrstuvwxyzABCDEF0123456789"),
            ("huggingface-cli login hf_abcdefghijklmnopqrstuvwxyzABCDEFGH", "hf_abcdefghijklmnopqrstuvwxyzABCDEFGH"),
            ("DBPASS=dbS3cretValue9 make migrate", "dbS3cretValue9"),
            ("STRIPE_KEY=sk_live_51Habcdefghijklmnopqrstuvwx", "sk_live_51Habcdefghijklmnopqrstuvwx"),
            ("psql --password pwS3cretValue9", "pwS3cretValue9"),
            ("mysql -uroot -pmyS3cretValue9 app", "myS3cretValue9"),
            ("curl -H 'Authorization: token ghp_abcdefghijklmnopqrstuvwxyz0123456789' api", "ghp_abcdefghijklmnopqrstuvwxyz0123456789"),
            ("git clone https://x:glpat-abcdefghijklmnopqrst@gitlab.com/a/b", "glpat-abcdefghijklmnopqrst"),
            ("echo //registry.npmjs.org/:_authToken=npm_abcdefghijklmnopqrstuvwxyz0123456789", "npm_abcdefghijklmnopqrstuvwxyz0123456789"),
            ("aws configure set x wJalrXUtnFEMI/K7MDENG/bPxRfiCYzK8aQ3pL2m", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzK8aQ3pL2m"),
            ("SLACK=xapp-1-A0123456789-0123456789012-abcdef0123456789abcdef0123456789abcdef", "xapp-1-A0123456789-0123456789012-abcdef0123456789abcdef0123456789abcdef"),
            ("age -d -i AGE-SECRET-KEY-1QQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQ f", "AGE-SECRET-KEY-1QQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQ"),
            ("doctl auth init -t dop_v1_0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", "dop_v1_0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"),
            ("twilio api:core --api-key SK0123456789abcdef0123456789abcdef", "SK0123456789abcdef0123456789abcdef"),
            ("GITHUB_TOKEN=ghp_zyxwvutsrqponmlkjihgfedcba9876543210 gh pr list", "ghp_zyxwvutsrqponmlkjihgfedcba9876543210"),
            ("export AWS_ACCESS_KEY_ID=AKIAZ7VRSQ5TEXAMPLQ2", "AKIAZ7VRSQ5TEXAMPLQ2"),
        ];
        for (text, secret) in cases {
            let r = red(text);
            assert!(!r.contains(secret), "{text:?} -> {r:?}");
        }
        for plain in [
            "run `npm test` (node --test); tests in tests/*.test.mjs",
            "mkdir -p build && ssh -p 22 host",
            "git checkout 0123456789abcdef0123456789abcdef01234567",
        ] {
            assert_eq!(red(plain), plain);
        }
    }
}
