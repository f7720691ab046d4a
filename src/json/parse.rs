//! The core's JSON parser: text to a [`Value`], accepting exactly what
//! `serde_json::from_str::<serde_json::Value>` accepts and building the same value.
//!
//! `serde_json`'s parser is generic over a `serde` visitor and its error type formats through
//! `f64`'s `Display`; in the wasm module the two cost about 30 KB of code (the float printer
//! alone ~18 KB). This parser is one small loop over bytes.
//!
//! Rules, as `serde_json` (1.0.x, `arbitrary_precision` + `preserve_order`) has them:
//! * whitespace is space, tab, line feed and carriage return only;
//! * a number keeps its text, except that an exponent is written `e` with an explicit sign
//!   (`1E5` is `1e+5`); a leading zero may not be followed by a digit, a `.` or an `e` needs a
//!   digit after it;
//! * strings: a raw control character (U+0000–U+001F) is an error; escapes are `\" \\ \/ \b \f
//!   \n \r \t \uXXXX`, and a `\u` surrogate must be a leading one followed by `\u` and a
//!   trailing one;
//! * a repeated object key keeps its first position and its last value;
//! * nesting deeper than 127 arrays/objects is "recursion limit exceeded";
//! * anything but whitespace after the value is "trailing characters".
//!
//! Errors read like `serde_json`'s: `EOF while parsing a string at line 1 column 7`. A property
//! test checks acceptance, values and re-serialised text against `serde_json` on generated
//! input.

use super::value::{Map, Number, Value};
use std::fmt;

/// Why a text is not JSON, and where (1-based line, column of the offending byte).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    msg: &'static str,
    line: usize,
    column: usize,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line == 0 {
            f.write_str(self.msg)
        } else {
            write!(
                f,
                "{} at line {} column {}",
                self.msg, self.line, self.column
            )
        }
    }
}

impl std::error::Error for ParseError {}

/// Parse one JSON text.
pub fn from_str(text: &str) -> Result<Value, ParseError> {
    let mut p = Parser {
        b: text.as_bytes(),
        i: 0,
        depth: 0,
    };
    let v = p.value()?;
    p.ws();
    if p.i < p.b.len() {
        return Err(p.err("trailing characters", p.i + 1));
    }
    Ok(v)
}

/// Deepest nesting `serde_json` accepts (its recursion budget of 128 minus one).
const MAX_DEPTH: u32 = 127;

struct Parser<'a> {
    b: &'a [u8],
    i: usize,
    depth: u32,
}

impl Parser<'_> {
    /// An error pointing at byte `at` (1-based within the text; 0 = the start).
    #[cold]
    #[inline(never)]
    fn err(&self, msg: &'static str, at: usize) -> ParseError {
        let at = at.min(self.b.len());
        let before = &self.b[..at];
        let line = 1 + before.iter().filter(|&&c| c == b'\n').count();
        let column = match before.iter().rposition(|&c| c == b'\n') {
            Some(nl) => at - nl - 1,
            None => at,
        };
        ParseError { msg, line, column }
    }

    fn ws(&mut self) {
        while let Some(b' ' | b'\n' | b'\t' | b'\r') = self.b.get(self.i) {
            self.i += 1;
        }
    }

    fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }

    fn value(&mut self) -> Result<Value, ParseError> {
        self.ws();
        let Some(c) = self.peek() else {
            return Err(self.err("EOF while parsing a value", self.i));
        };
        match c {
            b'n' => self.word(b"null", Value::Null),
            b't' => self.word(b"true", Value::Bool(true)),
            b'f' => self.word(b"false", Value::Bool(false)),
            b'"' => {
                self.i += 1;
                Ok(Value::String(self.string()?))
            }
            b'-' | b'0'..=b'9' => self.number(),
            b'[' | b'{' => {
                self.depth += 1;
                if self.depth > MAX_DEPTH {
                    return Err(self.err("recursion limit exceeded", self.i + 1));
                }
                self.i += 1;
                let v = if c == b'[' {
                    self.array()?
                } else {
                    self.object()?
                };
                self.depth -= 1;
                Ok(v)
            }
            _ => Err(self.err("expected value", self.i + 1)),
        }
    }

    fn word(&mut self, w: &[u8], v: Value) -> Result<Value, ParseError> {
        for (k, &want) in w.iter().enumerate() {
            match self.b.get(self.i + k) {
                Some(&c) if c == want => {}
                Some(_) if k == 0 => return Err(self.err("expected value", self.i + 1)),
                Some(_) => return Err(self.err("expected ident", self.i + k + 1)),
                None => return Err(self.err("EOF while parsing a value", self.b.len())),
            }
        }
        self.i += w.len();
        Ok(v)
    }

    fn digits(&mut self, out: &mut String) -> usize {
        let start = self.i;
        while let Some(c @ b'0'..=b'9') = self.peek() {
            out.push(c as char);
            self.i += 1;
        }
        self.i - start
    }

    fn number(&mut self) -> Result<Value, ParseError> {
        let mut n = String::with_capacity(16);
        if self.peek() == Some(b'-') {
            n.push('-');
            self.i += 1;
        }
        match self.peek() {
            Some(b'0') => {
                n.push('0');
                self.i += 1;
                if let Some(b'0'..=b'9') = self.peek() {
                    return Err(self.err("invalid number", self.i + 1));
                }
            }
            Some(b'1'..=b'9') => {
                self.digits(&mut n);
            }
            Some(_) => return Err(self.err("invalid number", self.i + 1)),
            None => return Err(self.err("EOF while parsing a value", self.i)),
        }
        if self.peek() == Some(b'.') {
            n.push('.');
            self.i += 1;
            if self.digits(&mut n) == 0 {
                return Err(match self.peek() {
                    Some(_) => self.err("invalid number", self.i + 1),
                    None => self.err("EOF while parsing a value", self.i),
                });
            }
        }
        if let Some(b'e' | b'E') = self.peek() {
            n.push('e');
            self.i += 1;
            match self.peek() {
                Some(s @ (b'+' | b'-')) => {
                    n.push(s as char);
                    self.i += 1;
                }
                _ => n.push('+'),
            }
            match self.peek() {
                Some(b'0'..=b'9') => {
                    self.digits(&mut n);
                }
                Some(_) => return Err(self.err("invalid number", self.i + 1)),
                None => return Err(self.err("EOF while parsing a value", self.i)),
            }
        }
        Ok(Value::Number(Number::from_text(n)))
    }

    /// The rest of a string after its opening quote, unescaped.
    fn string(&mut self) -> Result<String, ParseError> {
        let mut out = String::new();
        let mut run = self.i;
        loop {
            let Some(c) = self.peek() else {
                return Err(self.err("EOF while parsing a string", self.b.len()));
            };
            match c {
                b'"' => {
                    out.push_str(self.text(run, self.i));
                    self.i += 1;
                    return Ok(out);
                }
                b'\\' => {
                    out.push_str(self.text(run, self.i));
                    self.i += 1;
                    self.escape(&mut out)?;
                    run = self.i;
                }
                0..=0x1f => {
                    return Err(self.err(
                        "control character (\\u0000-\\u001F) found while parsing a string",
                        self.i + 1,
                    ))
                }
                _ => self.i += 1,
            }
        }
    }

    /// `b[a..z]` as text: the input is a `str` and runs end at ASCII bytes, so this is valid UTF-8.
    fn text(&self, a: usize, z: usize) -> &str {
        std::str::from_utf8(&self.b[a..z]).unwrap_or_default()
    }

    fn escape(&mut self, out: &mut String) -> Result<(), ParseError> {
        let Some(c) = self.peek() else {
            return Err(self.err("EOF while parsing a string", self.b.len()));
        };
        self.i += 1;
        let ch = match c {
            b'"' => '"',
            b'\\' => '\\',
            b'/' => '/',
            b'b' => '\u{8}',
            b'f' => '\u{c}',
            b'n' => '\n',
            b'r' => '\r',
            b't' => '\t',
            b'u' => return self.unicode(out),
            _ => return Err(self.err("invalid escape", self.i)),
        };
        out.push(ch);
        Ok(())
    }

    fn hex4(&mut self) -> Result<u32, ParseError> {
        let mut n = 0;
        for _ in 0..4 {
            let Some(c) = self.peek() else {
                return Err(self.err("EOF while parsing a string", self.b.len()));
            };
            self.i += 1;
            let d = match c {
                b'0'..=b'9' => c - b'0',
                b'a'..=b'f' => c - b'a' + 10,
                b'A'..=b'F' => c - b'A' + 10,
                _ => return Err(self.err("invalid escape", self.i)),
            };
            n = n * 16 + u32::from(d);
        }
        Ok(n)
    }

    fn unicode(&mut self, out: &mut String) -> Result<(), ParseError> {
        let n = self.hex4()?;
        let lone = "lone leading surrogate in hex escape";
        let cp = match n {
            0xDC00..=0xDFFF => return Err(self.err(lone, self.i)),
            0xD800..=0xDBFF => {
                if self.peek() != Some(b'\\') {
                    return Err(self.unexpected_end());
                }
                self.i += 1;
                if self.peek() != Some(b'u') {
                    return Err(self.unexpected_end());
                }
                self.i += 1;
                let lo = self.hex4()?;
                if !(0xDC00..=0xDFFF).contains(&lo) {
                    return Err(self.err(lone, self.i));
                }
                0x10000 + ((n - 0xD800) << 10) + (lo - 0xDC00)
            }
            _ => n,
        };
        out.push(char::from_u32(cp).unwrap_or('\u{FFFD}'));
        Ok(())
    }

    #[cold]
    fn unexpected_end(&mut self) -> ParseError {
        if self.i >= self.b.len() {
            return self.err("EOF while parsing a string", self.b.len());
        }
        self.i += 1;
        self.err("unexpected end of hex escape", self.i)
    }

    fn array(&mut self) -> Result<Value, ParseError> {
        let mut out = Vec::new();
        self.ws();
        if self.peek() == Some(b']') {
            self.i += 1;
            return Ok(Value::Array(out));
        }
        loop {
            out.push(self.value()?);
            self.ws();
            match self.peek() {
                Some(b',') => {
                    self.i += 1;
                    self.ws();
                    if self.peek() == Some(b']') {
                        return Err(self.err("trailing comma", self.i + 1));
                    }
                }
                Some(b']') => {
                    self.i += 1;
                    return Ok(Value::Array(out));
                }
                Some(_) => return Err(self.err("expected `,` or `]`", self.i + 1)),
                None => return Err(self.err("EOF while parsing a list", self.i)),
            }
        }
    }

    fn object(&mut self) -> Result<Value, ParseError> {
        let mut out = Vec::new();
        self.ws();
        if self.peek() == Some(b'}') {
            self.i += 1;
            return Ok(Value::Object(Map::from_parsed(out)));
        }
        loop {
            match self.peek() {
                Some(b'"') => self.i += 1,
                Some(b'}') => return Err(self.err("trailing comma", self.i + 1)),
                Some(_) => return Err(self.err("key must be a string", self.i + 1)),
                None => return Err(self.err("EOF while parsing an object", self.i)),
            }
            let key = self.string()?;
            self.ws();
            match self.peek() {
                Some(b':') => self.i += 1,
                Some(_) => return Err(self.err("expected `:`", self.i + 1)),
                None => return Err(self.err("EOF while parsing an object", self.i)),
            }
            let v = self.value()?;
            out.push((key, v));
            self.ws();
            match self.peek() {
                Some(b',') => {
                    self.i += 1;
                    self.ws();
                }
                Some(b'}') => {
                    self.i += 1;
                    return Ok(Value::Object(Map::from_parsed(out)));
                }
                Some(_) => return Err(self.err("expected `,` or `}`", self.i + 1)),
                None => return Err(self.err("EOF while parsing an object", self.i)),
            }
        }
    }
}

#[cfg(not(target_arch = "wasm32"))]
impl From<serde_json::Value> for Value {
    /// Through its text (tests and the native bench).
    fn from(v: serde_json::Value) -> Value {
        from_str(&v.to_string()).unwrap_or(Value::Null)
    }
}

#[cfg(not(target_arch = "wasm32"))]
impl From<Value> for serde_json::Value {
    fn from(v: Value) -> serde_json::Value {
        serde_json::from_str(&v.to_string()).unwrap_or(serde_json::Value::Null)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Both parsers agree: same acceptance, and for accepted text the same value and the same
    /// re-serialised text (object order, number text).
    fn agree(text: &str) {
        let ours = from_str(text);
        let theirs = serde_json::from_str::<serde_json::Value>(text);
        match (&ours, &theirs) {
            (Ok(a), Ok(b)) => {
                assert_eq!(a.to_string(), b.to_string(), "text of {text:?}");
                assert_eq!(*a, Value::from(b.clone()), "value of {text:?}");
            }
            (Err(_), Err(_)) => {}
            _ => panic!("{text:?}: ours {ours:?}, serde_json {theirs:?}"),
        }
    }

    #[test]
    fn cases() {
        for t in [
            "",
            " ",
            "null",
            "nul",
            "nulx",
            "true",
            "tru",
            "false ",
            " [] ",
            "[1,]",
            "[,1]",
            "{}",
            "{,}",
            "{\"a\":1,}",
            "{\"a\" 1}",
            "{\"a\":1 \"b\":2}",
            "{1:2}",
            "[1 2]",
            "0",
            "-0",
            "-",
            "01",
            "-01",
            "1.",
            "1.5",
            ".5",
            "1e5",
            "1E5",
            "1e+5",
            "1E-05",
            "1e",
            "1e+",
            "1.5e3x",
            "123456789012345678901234567890",
            "-9223372036854775809",
            "18446744073709551616",
            "1.0",
            "1.00",
            "\"a\\u00e9\\ud83d\\ude00\"",
            "\"\\ud83d\"",
            "\"\\ud83dx\"",
            "\"\\ud83d\\n\"",
            "\"\\ude00\"",
            "\"\\ud83d\\u0041\"",
            "\"\\x\"",
            "\"\\u12\"",
            "\"\\u12g4\"",
            "\"a\tb\"",
            "\"a\u{7f}b\"",
            "\"unterminated",
            "{\"a\":1,\"a\":2,\"b\":3}",
            "{\"b\":1,\"a\":2}",
            "[1] x",
            "[1]\n\t ",
            "\u{feff}1",
            "\"é€😀\"",
            "[\"\\/\\b\\f\\n\\r\\t\\\"\\\\\"]",
            "1 ",
            "{\"a\":[{\"b\":null}]}",
            "[true,false,null]",
            "-1.5e-7",
            "2.",
            "-a",
            "[-]",
            "{\"a\"",
            "{\"a\":",
            "[",
        ] {
            agree(t);
        }
        for depth in [126, 127, 128, 200] {
            agree(&format!("{}{}", "[".repeat(depth), "]".repeat(depth)));
            agree(&format!(
                "{}1{}",
                "{\"k\":".repeat(depth),
                "}".repeat(depth)
            ));
        }
    }

    #[test]
    fn error_text_names_the_place() {
        let e = from_str("{\"a\":\n  tru}").unwrap_err().to_string();
        assert_eq!(e, "expected ident at line 2 column 6");
        let e = from_str("[1,2").unwrap_err().to_string();
        assert!(e.starts_with("EOF while parsing a list"), "{e}");
    }

    fn json_text() -> impl Strategy<Value = String> {
        let leaf = prop_oneof![
            Just("null".to_string()),
            Just("true".to_string()),
            "-?(0|[1-9][0-9]{0,22})(\\.[0-9]{1,5})?([eE][+-]?[0-9]{1,3})?",
            "\"([a-zé😀 ]|\\\\[\"\\\\/bfnrt]|\\\\u[0-9a-fA-F]{4}|\\\\ud83d\\\\ude00)*\"",
        ];
        leaf.prop_recursive(4, 40, 5, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..5)
                    .prop_map(|v| format!("[{}]", v.join(","))),
                prop::collection::vec(("[a-c]{1,2}", inner), 0..5).prop_map(|v| format!(
                    "{{{}}}",
                    v.iter()
                        .map(|(k, x)| format!("\"{k}\" : {x}"))
                        .collect::<Vec<_>>()
                        .join(" ,")
                )),
            ]
        })
    }

    proptest! {
        #[test]
        fn agrees_with_serde_json_on_valid_text(t in json_text()) {
            agree(&t);
        }

        #[test]
        fn agrees_with_serde_json_on_damaged_text(t in json_text(), cut in any::<prop::sample::Index>(), junk in "[\\\\\"{}\\[\\],:0-9a-z \\u{1}-]{0,3}") {
            let at = cut.index(t.len() + 1);
            let at = (0..=at).rev().find(|&k| t.is_char_boundary(k)).unwrap_or(0);
            agree(&format!("{}{junk}{}", &t[..at], &t[at..]));
            agree(&t[..at]);
        }
    }

    /// An object's text with these members in this order (keys may repeat).
    fn obj(members: &[(String, u8)]) -> String {
        let body: Vec<String> = members
            .iter()
            .map(|(k, v)| format!("\"{k}\":{v}"))
            .collect();
        format!("{{{}}}", body.join(","))
    }

    proptest! {
        /// Repeated keys, few or many: the same members in the same order as `serde_json`.
        #[test]
        fn repeated_keys_as_serde_json(members in prop::collection::vec(("[a-e]{1,2}", any::<u8>()), 0..40)) {
            let text = obj(&members);
            let ours = from_str(&text).unwrap();
            let theirs: serde_json::Value = serde_json::from_str(&text).unwrap();
            prop_assert_eq!(ours.to_string(), theirs.to_string());
            // And through serde in both directions.
            prop_assert_eq!(serde_json::to_string(&ours).unwrap(), theirs.to_string());
            let back: Value = serde_json::from_str(&text).unwrap();
            prop_assert_eq!(back.to_string(), theirs.to_string());
        }
    }
}
