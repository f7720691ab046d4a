//! Small text helpers shared by digests, fold records and previews: whitespace folding and
//! cuts that never split a word or an identifier.

/// Whitespace runs collapsed to one space, trimmed.
pub fn one_line(s: &str) -> String {
    let mut out = String::with_capacity(s.len().min(4096));
    for w in s.split_whitespace() {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(w);
    }
    out
}

/// The strings of `v` borrowed.
pub fn strs(v: &[String]) -> Vec<&str> {
    let mut out = Vec::with_capacity(v.len());
    for s in v {
        out.push(s.as_str());
    }
    out
}

/// The first `n` chars of `s` (all of `s` when it is shorter).
pub fn head_chars(s: &str, n: usize) -> &str {
    &s[..byte_at(s, n)]
}

/// Byte offset of char index `n` (or the end).
pub fn byte_at(s: &str, n: usize) -> usize {
    s.char_indices().nth(n).map(|(i, _)| i).unwrap_or(s.len())
}

/// At most `max` chars, cut at the last whitespace (if one is in the second half) and ended with
/// `…`, so a word or identifier is not cut in half.
pub fn clip(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    if max == 0 {
        return String::new();
    }
    let keep = max - 1; // room for the ellipsis
    let end = byte_at(s, keep);
    let head = &s[..end];
    let min_keep = byte_at(s, keep / 2);
    let cut = match head.rfind(char::is_whitespace) {
        Some(i) if i >= min_keep => i,
        _ => end,
    };
    format!("{}…", s[..cut].trim_end())
}

/// At most about `max` chars: two thirds head, one third tail, joined by an omission note;
/// both cuts at whitespace where possible.
pub fn head_tail(s: &str, max: usize) -> String {
    let total = s.chars().count();
    if total <= max {
        return s.to_string();
    }
    let note_room = 32;
    let budget = max.saturating_sub(note_room).max(2);
    let head_n = budget * 2 / 3;
    let tail_n = budget - head_n;
    // Head: cut back to whitespace (within the last 40 %).
    let hend = byte_at(s, head_n);
    let hmin = byte_at(s, head_n * 6 / 10);
    let hcut = match s[..hend].rfind(char::is_whitespace) {
        Some(i) if i >= hmin => i,
        _ => hend,
    };
    // Tail: move forward to whitespace (within the first 40 %).
    let tstart = byte_at(s, total - tail_n);
    let tmax = byte_at(s, total - tail_n * 6 / 10);
    let tcut = match s[tstart..].find(char::is_whitespace) {
        Some(i) if tstart + i <= tmax => tstart + i,
        _ => tstart,
    };
    let head = s[..hcut].trim_end();
    let tail = s[tcut..].trim_start();
    let omitted = total - head.chars().count() - tail.chars().count();
    format!("{head} … [{omitted} chars omitted] … {tail}")
}

// ---- case folding without the standard library's Unicode case tables ------------------------

/// `s` without the leading and trailing chars `strip` accepts (`str::trim_matches`, not
/// generic: each closure type made its own copy of the standard one).
#[inline(never)]
pub fn trim_by<'a>(s: &'a str, strip: &dyn Fn(char) -> bool) -> &'a str {
    trim_end_by(trim_start_by(s, strip), strip)
}

/// `s` without the leading chars `strip` accepts (`str::trim_start_matches`).
#[inline(never)]
pub fn trim_start_by<'a>(s: &'a str, strip: &dyn Fn(char) -> bool) -> &'a str {
    match s.char_indices().find(|&(_, c)| !strip(c)) {
        Some((i, _)) => &s[i..],
        None => "",
    }
}

/// `s` without the trailing chars `strip` accepts (`str::trim_end_matches`).
#[inline(never)]
pub fn trim_end_by<'a>(s: &'a str, strip: &dyn Fn(char) -> bool) -> &'a str {
    match s.char_indices().rev().find(|&(_, c)| !strip(c)) {
        Some((i, c)) => &s[..i + c.len_utf8()],
        None => "",
    }
}

/// Byte offset of the first `needle` in `hay` (`str::find` with a string pattern). The core's
/// own search instead of the standard two-way searcher (~3 KB of wasm): a byte scan for the
/// first byte, then a comparison. On valid UTF-8 a byte match is a char-boundary match, so the
/// offsets are the standard ones; the needles here are short, the texts bounded.
#[inline(never)]
pub fn find(hay: &str, needle: &str) -> Option<usize> {
    let (h, n) = (hay.as_bytes(), needle.as_bytes());
    let Some((&first, _)) = n.split_first() else {
        return Some(0);
    };
    let last = h.len().checked_sub(n.len())?;
    (0..=last).find(|&i| h[i] == first && &h[i..i + n.len()] == n)
}

/// Byte offset of the last `needle` in `hay` (`str::rfind` with a string pattern).
#[inline(never)]
pub fn rfind(hay: &str, needle: &str) -> Option<usize> {
    let (h, n) = (hay.as_bytes(), needle.as_bytes());
    let last = h.len().checked_sub(n.len())?;
    (0..=last).rev().find(|&i| &h[i..i + n.len()] == n)
}

/// `hay` contains `needle` (`str::contains` with a string pattern).
pub fn has(hay: &str, needle: &str) -> bool {
    find(hay, needle).is_some()
}

/// `s` contains `c` (`str::contains` with a char: the standard one, not inlined, carries the
/// string searcher for non-ASCII chars).
pub fn has_char(s: &str, c: char) -> bool {
    if c.is_ascii() {
        s.as_bytes().contains(&(c as u8))
    } else {
        s.chars().any(|x| x == c)
    }
}

/// `str::split_once` with a string separator.
pub fn split_once<'a>(s: &'a str, sep: &str) -> Option<(&'a str, &'a str)> {
    let i = find(s, sep)?;
    Some((&s[..i], &s[i + sep.len()..]))
}

/// `str::rsplit_once` with a string separator.
pub fn rsplit_once<'a>(s: &'a str, sep: &str) -> Option<(&'a str, &'a str)> {
    let i = rfind(s, sep)?;
    Some((&s[..i], &s[i + sep.len()..]))
}

/// `str::split` with a non-empty string separator, collected.
pub fn split<'a>(mut s: &'a str, sep: &str) -> Vec<&'a str> {
    let mut out = Vec::new();
    while let Some((a, b)) = split_once(s, sep) {
        out.push(a);
        s = b;
    }
    out.push(s);
    out
}

/// A decimal integer as `str::parse::<u64>` reads it: an optional `+`, then one or more ASCII
/// digits, no overflow (one shared copy instead of the standard parser per integer type).
#[inline(never)]
pub fn parse_u64(s: &str) -> Option<u64> {
    let digits = s.strip_prefix('+').unwrap_or(s);
    if digits.is_empty() {
        return None;
    }
    let mut n: u64 = 0;
    for b in digits.bytes() {
        if !b.is_ascii_digit() {
            return None;
        }
        n = n.checked_mul(10)?.checked_add(u64::from(b - b'0'))?;
    }
    Some(n)
}

/// `str::parse::<i64>`: an optional sign, then [`parse_u64`]'s digits, within `i64`'s range.
pub fn parse_i64(s: &str) -> Option<i64> {
    match s.strip_prefix('-') {
        Some(d) if !d.starts_with('+') => 0i64.checked_sub_unsigned(parse_u64(d)?),
        Some(_) => None,
        None => i64::try_from(parse_u64(s)?).ok(),
    }
}

/// `str::parse::<u32>`.
pub fn parse_u32(s: &str) -> Option<u32> {
    u32::try_from(parse_u64(s)?).ok()
}

/// Remove the first `n` elements of `v` (all when it is shorter): `v.drain(..n)` without the
/// drain machinery each element type instantiated in the wasm module.
pub fn drop_front<T>(v: &mut Vec<T>, n: usize) {
    if n >= v.len() {
        v.clear();
    } else if n > 0 {
        *v = v.split_off(n);
    }
}

/// Append `x`, then drop the oldest entries beyond `max` (a bounded queue in a plain `Vec`: the
/// queues are short, and `VecDeque` cost ~2 KB of wasm per element type).
pub fn push_bounded<T>(v: &mut Vec<T>, x: T, max: usize) {
    v.push(x);
    if v.len() > max {
        let extra = v.len() - max;
        drop_front(v, extra);
    }
}

/// Unicode's one-to-one lowercase mappings (every `c` whose `char::to_lowercase` is a single
/// other character), as runs: `(start << 8 | (count - 1) << 1 | (stride - 1), delta)`, meaning
/// `start + k·stride ↦ start + k·stride + delta` for `k < count`. 1.5 KB here; the standard
/// `to_lowercase`/`to_uppercase` carry ~24 KB of tables and the final-sigma rule into the wasm
/// module. A test rebuilds this table from the standard library and compares.
#[rustfmt::skip]
const LOWER: &[(u32, i32)] = &[
    (0x00004132, 32), (0x0000c02c, 32), (0x0000d80c, 32), (0x0001002f, 1), (0x00013205, 1), (0x0001390f, 1),
    (0x00014a2d, 1), (0x00017800, -121), (0x00017905, 1), (0x00018100, 210), (0x00018203, 1), (0x00018600, 206),
    (0x00018700, 1), (0x00018902, 205), (0x00018b00, 1), (0x00018e00, 79), (0x00018f00, 202), (0x00019000, 203),
    (0x00019100, 1), (0x00019300, 205), (0x00019400, 207), (0x00019600, 211), (0x00019700, 209), (0x00019800, 1),
    (0x00019c00, 211), (0x00019d00, 213), (0x00019f00, 214), (0x0001a005, 1), (0x0001a600, 218), (0x0001a700, 1),
    (0x0001a900, 218), (0x0001ac00, 1), (0x0001ae00, 218), (0x0001af00, 1), (0x0001b102, 217), (0x0001b303, 1),
    (0x0001b700, 219), (0x0001b800, 1), (0x0001bc00, 1), (0x0001c400, 2), (0x0001c500, 1), (0x0001c700, 2),
    (0x0001c800, 1), (0x0001ca00, 2), (0x0001cb11, 1), (0x0001de11, 1), (0x0001f100, 2), (0x0001f203, 1),
    (0x0001f600, -97), (0x0001f700, -56), (0x0001f827, 1), (0x00022000, -130), (0x00022211, 1), (0x00023a00, 10795),
    (0x00023b00, 1), (0x00023d00, -163), (0x00023e00, 10792), (0x00024100, 1), (0x00024300, -195), (0x00024400, 69),
    (0x00024500, 71), (0x00024609, 1), (0x00037003, 1), (0x00037600, 1), (0x00037f00, 116), (0x00038600, 38),
    (0x00038804, 37), (0x00038c00, 64), (0x00038e02, 63), (0x00039120, 32), (0x0003a310, 32), (0x0003cf00, 8),
    (0x0003d817, 1), (0x0003f400, -60), (0x0003f700, 1), (0x0003f900, -7), (0x0003fa00, 1), (0x0003fd04, -130),
    (0x0004001e, 80), (0x0004103e, 32), (0x00046021, 1), (0x00048a35, 1), (0x0004c000, 15), (0x0004c10d, 1),
    (0x0004d05f, 1), (0x0005314a, 48), (0x0010a04a, 7264), (0x0010c700, 7264), (0x0010cd00, 7264), (0x0013a09e, 38864),
    (0x0013f00a, 8), (0x001c8900, 1), (0x001c9054, -3008), (0x001cbd04, -3008), (0x001e0095, 1), (0x001e9e00, -7615),
    (0x001ea05f, 1), (0x001f080e, -8), (0x001f180a, -8), (0x001f280e, -8), (0x001f380e, -8), (0x001f480a, -8),
    (0x001f5907, -8), (0x001f680e, -8), (0x001f880e, -8), (0x001f980e, -8), (0x001fa80e, -8), (0x001fb802, -8),
    (0x001fba02, -74), (0x001fbc00, -9), (0x001fc806, -86), (0x001fcc00, -9), (0x001fd802, -8), (0x001fda02, -100),
    (0x001fe802, -8), (0x001fea02, -112), (0x001fec00, -7), (0x001ff802, -128), (0x001ffa02, -126), (0x001ffc00, -9),
    (0x00212600, -7517), (0x00212a00, -8383), (0x00212b00, -8262), (0x00213200, 28), (0x0021601e, 16), (0x00218300, 1),
    (0x0024b632, 26), (0x002c005e, 48), (0x002c6000, 1), (0x002c6200, -10743), (0x002c6300, -3814), (0x002c6400, -10727),
    (0x002c6705, 1), (0x002c6d00, -10780), (0x002c6e00, -10749), (0x002c6f00, -10783), (0x002c7000, -10782), (0x002c7200, 1),
    (0x002c7500, 1), (0x002c7e02, -10815), (0x002c8063, 1), (0x002ceb03, 1), (0x002cf200, 1), (0x00a6402d, 1),
    (0x00a6801b, 1), (0x00a7220d, 1), (0x00a7323d, 1), (0x00a77903, 1), (0x00a77d00, -35332), (0x00a77e09, 1),
    (0x00a78b00, 1), (0x00a78d00, -42280), (0x00a79003, 1), (0x00a79613, 1), (0x00a7aa00, -42308), (0x00a7ab00, -42319),
    (0x00a7ac00, -42315), (0x00a7ad00, -42305), (0x00a7ae00, -42308), (0x00a7b000, -42258), (0x00a7b100, -42282), (0x00a7b200, -42261),
    (0x00a7b300, 928), (0x00a7b40f, 1), (0x00a7c400, -48), (0x00a7c500, -42307), (0x00a7c600, -35384), (0x00a7c703, 1),
    (0x00a7cb00, -42343), (0x00a7cc0f, 1), (0x00a7dc00, -42561), (0x00a7f500, 1), (0x00ff2132, 32), (0x0104004e, 40),
    (0x0104b046, 40), (0x01057014, 39), (0x01057c1c, 39), (0x01058c0c, 39), (0x01059402, 39), (0x010c8064, 64),
    (0x010d502a, 32), (0x0118a03e, 32), (0x016e403e, 32), (0x016ea030, 27), (0x01e90042, 34),
];

fn run(r: (u32, i32)) -> (u32, u32, u32, i32) {
    (r.0 >> 8, ((r.0 >> 1) & 0x7f) + 1, (r.0 & 1) + 1, r.1)
}

/// `c` lowercased when Unicode maps it to one other character; otherwise `c` (so `İ`, whose
/// lowercase is two characters, stays itself, and final sigma is not special-cased).
pub fn lower_char(c: char) -> char {
    let x = c as u32;
    if x < 0x80 {
        return c.to_ascii_lowercase();
    }
    let i = LOWER.partition_point(|r| r.0 >> 8 <= x);
    if i == 0 {
        return c;
    }
    let (start, count, stride, delta) = run(LOWER[i - 1]);
    let k = x - start;
    if k % stride == 0 && k / stride < count {
        char::from_u32(x.wrapping_add_signed(delta)).unwrap_or(c)
    } else {
        c
    }
}

/// The characters whose [`lower_char`] is `c` (besides `c` itself): what a case-insensitive
/// character class also accepts.
pub fn upper_chars(c: char) -> impl Iterator<Item = char> {
    let x = c as u32;
    LOWER.iter().filter_map(move |&r| {
        let (start, count, stride, delta) = run(r);
        let u = x.wrapping_add_signed(-delta);
        let k = u.wrapping_sub(start);
        (u >= start && k % stride == 0 && k / stride < count)
            .then(|| char::from_u32(u))
            .flatten()
    })
}

/// `s` with every character through [`lower_char`].
pub fn lower(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        out.push(lower_char(c));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `drop_front` is `drain(..n)`, also past the end.
    #[test]
    fn drop_front_is_drain() {
        for n in 0..6 {
            let mut a: Vec<String> = (0..4).map(|i| i.to_string()).collect();
            let mut b = a.clone();
            drop_front(&mut a, n);
            b.drain(..n.min(b.len()));
            assert_eq!(a, b, "n {n}");
        }
    }

    /// The integer readers are the standard library's, signs and overflow included.
    #[test]
    fn integer_parsing_is_the_standard_one() {
        let cases = [
            "",
            "+",
            "-",
            "0",
            "+0",
            "-0",
            "007",
            "42",
            "+42",
            "-42",
            "++1",
            "+-1",
            "-+1",
            "--1",
            " 1",
            "1 ",
            "1_000",
            "4294967295",
            "4294967296",
            "9223372036854775807",
            "9223372036854775808",
            "-9223372036854775808",
            "-9223372036854775809",
            "18446744073709551615",
            "18446744073709551616",
            "1e3",
            "٣",
        ];
        for c in cases {
            assert_eq!(parse_u64(c), c.parse::<u64>().ok(), "u64 {c:?}");
            assert_eq!(parse_i64(c), c.parse::<i64>().ok(), "i64 {c:?}");
            assert_eq!(parse_u32(c), c.parse::<u32>().ok(), "u32 {c:?}");
        }
    }

    proptest::proptest! {
        /// Random digit strings and signs read as the standard parsers read them.
        #[test]
        fn integer_parsing_matches_on_random_text(s in "[-+]?[0-9]{0,21}") {
            proptest::prop_assert_eq!(parse_u64(&s), s.parse::<u64>().ok());
            proptest::prop_assert_eq!(parse_i64(&s), s.parse::<i64>().ok());
            proptest::prop_assert_eq!(parse_u32(&s), s.parse::<u32>().ok());
        }

        /// The searches are the standard library's (offsets, splits), incl. multi-byte text.
        #[test]
        fn searches_are_the_standard_ones(h in "[ab→é ]{0,14}", n in "[ab→é ]{0,3}") {
            proptest::prop_assert_eq!(find(&h, &n), h.find(n.as_str()));
            proptest::prop_assert_eq!(rfind(&h, &n), h.rfind(n.as_str()));
            proptest::prop_assert_eq!(has(&h, &n), h.contains(n.as_str()));
            for c in ['a', '→', 'é', 'x'] {
                proptest::prop_assert_eq!(has_char(&h, c), h.contains(c));
            }
            proptest::prop_assert_eq!(split_once(&h, &n), h.split_once(n.as_str()));
            proptest::prop_assert_eq!(rsplit_once(&h, &n), h.rsplit_once(n.as_str()));
            if !n.is_empty() {
                let want: Vec<&str> = h.split(n.as_str()).collect();
                proptest::prop_assert_eq!(split(&h, &n), want);
            }
        }

        /// The trims are the standard library's, for char sets and predicates alike.
        #[test]
        fn trims_are_the_standard_ones(s in "[-a:/é\\$ ]{0,12}") {
            let dash = |c: char| c == '-';
            proptest::prop_assert_eq!(trim_by(&s, &dash), s.trim_matches('-'));
            let set = |c: char| matches!(c, '/' | '\\' | ':');
            proptest::prop_assert_eq!(trim_end_by(&s, &set), s.trim_end_matches(['/', '\\', ':']));
            proptest::prop_assert_eq!(trim_start_by(&s, &set), s.trim_start_matches(['/', '\\', ':']));
            let alnum = |c: char| !c.is_alphanumeric();
            proptest::prop_assert_eq!(trim_by(&s, &alnum), s.trim_matches(alnum));
        }
    }

    /// The table is exactly the standard library's one-to-one lowercase mappings.
    #[test]
    fn lower_table_is_the_standard_librarys() {
        for c in (0..=0x10FFFFu32).filter_map(char::from_u32) {
            let mut l = c.to_lowercase();
            let want = match (l.next(), l.next()) {
                (Some(x), None) => x,
                _ => c,
            };
            assert_eq!(lower_char(c), want, "U+{:04X}", c as u32);
            if want != c {
                assert!(upper_chars(want).any(|u| u == c), "U+{:04X}", c as u32);
            }
        }
        for c in ['a', 'é', 'ß', 'ω', 'я', '1', '-'] {
            for u in upper_chars(c) {
                assert_eq!(lower_char(u), c);
            }
        }
        assert_eq!(upper_chars('a').collect::<String>(), "A");
        assert_eq!(
            lower("Straße ÉCOLE Σοφία ДОМ İ"),
            "straße école σοφία дом İ"
        );
    }
}
