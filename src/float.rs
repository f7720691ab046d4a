//! Decimal text to `f64`: exactly `str::parse::<f64>` (the same grammar, the correctly rounded
//! value, ties to even), for the numbers the core reads (JSON numbers keep their text under
//! `arbitrary_precision`; config values may be strings). The standard parser's Eisel-Lemire
//! step carries a 10 KB table of powers of five and a second slow path, ~16 KB of the wasm
//! module; here short inputs take Clinger's exact fast path and the rest one exact big-integer
//! division.

/// `s.parse::<f64>().ok()`.
pub fn parse(s: &str) -> Option<f64> {
    let b = s.as_bytes();
    let (neg, b) = match b.first() {
        Some(b'-') => (true, &b[1..]),
        Some(b'+') => (false, &b[1..]),
        _ => (false, b),
    };
    let x = if b.eq_ignore_ascii_case(b"inf") || b.eq_ignore_ascii_case(b"infinity") {
        f64::INFINITY
    } else if b.eq_ignore_ascii_case(b"nan") {
        f64::NAN
    } else {
        decimal(b)?
    };
    Some(if neg { -x } else { x })
}

/// `digits[.digits][(e|E)[sign]digits]` with at least one mantissa digit, unsigned.
fn decimal(b: &[u8]) -> Option<f64> {
    let mut i = 0;
    let mut digits: Vec<u8> = Vec::new(); // significant digits, leading zeros dropped
    let mut exp10: i64 = 0; // value = digits · 10^exp10
    let mut seen = false;
    let mut point = false;
    while i < b.len() {
        match b[i] {
            c @ b'0'..=b'9' => {
                seen = true;
                if c != b'0' || !digits.is_empty() {
                    digits.push(c - b'0');
                }
                if point {
                    exp10 -= 1;
                }
            }
            b'.' if !point => point = true,
            _ => break,
        }
        i += 1;
    }
    if !seen {
        return None;
    }
    if i < b.len() {
        if b[i] | 0x20 != b'e' {
            return None;
        }
        i += 1;
        let neg = match b.get(i) {
            Some(b'-') => {
                i += 1;
                true
            }
            Some(b'+') => {
                i += 1;
                false
            }
            _ => false,
        };
        if i == b.len() {
            return None;
        }
        let mut e: i64 = 0;
        for &c in &b[i..] {
            if !c.is_ascii_digit() {
                return None;
            }
            e = (e * 10 + i64::from(c - b'0')).min(1 << 40);
        }
        exp10 += if neg { -e } else { e };
    }
    while digits.last() == Some(&0) {
        digits.pop();
        exp10 += 1;
    }
    if digits.is_empty() {
        return Some(0.0);
    }
    let len = digits.len() as i64;
    if len - 1 + exp10 >= 309 {
        return Some(f64::INFINITY); // ≥ 1e309
    }
    if len + exp10 <= -324 {
        return Some(0.0); // < 1e-324, under half the least subnormal
    }
    // Clinger: an integer below 2^53 times or over a power of ten up to 10^22 (both exact) is
    // one correctly rounded operation.
    if len <= 16 && (-22..=22).contains(&exp10) {
        let mut m = 0u64;
        for &d in &digits {
            m = m * 10 + u64::from(d);
        }
        if m < 1 << 53 {
            let p = [
                1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14,
                1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
            ][exp10.unsigned_abs() as usize];
            return Some(if exp10 >= 0 {
                m as f64 * p
            } else {
                m as f64 / p
            });
        }
    }
    Some(exact(&digits, exp10))
}

/// `digits · 10^exp10` correctly rounded, by big-integer arithmetic: q = ⌊N·2^s / D⌋ with
/// 55–56 bits and a sticky remainder, then rounded to the (possibly subnormal) mantissa.
fn exact(digits: &[u8], exp10: i64) -> f64 {
    let mut n = Big(vec![0]);
    for &d in digits {
        n.mul_add(10, u32::from(d));
    }
    let mut d = Big(vec![1]);
    let tens = if exp10 >= 0 { &mut n } else { &mut d };
    for _ in 0..exp10.unsigned_abs() {
        tens.mul_add(10, 0);
    }
    let s = 55 - (n.bits() - d.bits());
    if s >= 0 {
        n.shl(s as u64);
    } else {
        d.shl(s.unsigned_abs());
    }
    // Long division, one quotient bit at a time (the quotient is below 2^57).
    let mut q: u64 = 0;
    d.shl(57);
    for _ in 0..58 {
        q <<= 1;
        if n.ge(&d) {
            n.sub(&d);
            q |= 1;
        }
        d.shr1();
    }
    let sticky = !n.is_zero();
    // value = (q + frac) · 2^-s; its leading bit has weight 2^e.
    let bq = 64 - i64::from(q.leading_zeros());
    let e = bq - 1 - s;
    let keep = if e < -1022 { 53 - (-1022 - e) } else { 53 };
    let shift = bq - keep; // > 0: q has at least 55 bits
    let (q, shift) = (u128::from(q), shift.min(100) as u32);
    let mant = q >> shift;
    let rem = q & ((1u128 << shift) - 1);
    let half = 1u128 << (shift - 1);
    let up = rem > half || (rem == half && (sticky || mant & 1 == 1));
    let mant = mant as u64 + u64::from(up);
    if e < -1022 {
        // Subnormal (a carry into bit 52 makes it the least normal, as the bits read).
        return f64::from_bits(mant);
    }
    let (mant, e) = if mant >> 53 != 0 {
        (mant >> 1, e + 1)
    } else {
        (mant, e)
    };
    if e > 1023 {
        return f64::INFINITY;
    }
    f64::from_bits(((e + 1023) as u64) << 52 | (mant & ((1 << 52) - 1)))
}

/// `x` with `digits` decimals (at most 9): the text of `format!("{x:.digits$}")` (the exact
/// binary value rounded half to even, `inf`/`NaN` as the standard formatter writes them),
/// without the standard float formatter, which is ~18 KB of the wasm module.
pub fn fixed(x: f64, digits: usize) -> String {
    let digits = digits.min(9);
    if x.is_nan() {
        return "NaN".into();
    }
    let sign = if x.is_sign_negative() { "-" } else { "" };
    if x.is_infinite() {
        return format!("{sign}inf");
    }
    // x = m · 2^e exactly.
    let bits = x.to_bits();
    let (be, frac) = (((bits >> 52) & 0x7ff) as i64, bits & ((1 << 52) - 1));
    let (m, e) = if be == 0 {
        (frac, -1074)
    } else {
        (frac | 1 << 52, be - 1075)
    };
    let scaled = u128::from(m) * 10u128.pow(digits as u32); // < 2^83
    let mut int = if e >= 0 {
        let mut n = Big(vec![
            scaled as u32,
            (scaled >> 32) as u32,
            (scaled >> 64) as u32,
        ]);
        n.shl(e as u64);
        n.trim();
        n
    } else {
        let k = (-e) as u32;
        let q = if k >= 128 {
            0 // scaled < 2^83 < 2^(k-1): rounds down
        } else {
            let (q, r, half) = (scaled >> k, scaled & ((1 << k) - 1), 1u128 << (k - 1));
            q + u128::from(r > half || (r == half && q & 1 == 1))
        };
        Big(vec![
            q as u32,
            (q >> 32) as u32,
            (q >> 64) as u32,
            (q >> 96) as u32,
        ])
    };
    let mut text = Vec::new();
    loop {
        text.push(b'0' + int.div10());
        if int.is_zero() {
            break;
        }
    }
    while text.len() <= digits {
        text.push(b'0');
    }
    text.reverse();
    let mut out = String::with_capacity(text.len() + 2);
    out.push_str(sign);
    let point = text.len() - digits;
    out.push_str(std::str::from_utf8(&text[..point]).unwrap_or_default());
    if digits > 0 {
        out.push('.');
        out.push_str(std::str::from_utf8(&text[point..]).unwrap_or_default());
    }
    out
}

/// Unsigned big integer, 32-bit limbs, least significant first.
struct Big(Vec<u32>);

impl Big {
    fn mul_add(&mut self, m: u32, a: u32) {
        let mut carry = u64::from(a);
        for l in self.0.iter_mut() {
            let v = u64::from(*l) * u64::from(m) + carry;
            *l = v as u32;
            carry = v >> 32;
        }
        if carry > 0 {
            self.0.push(carry as u32);
        }
    }

    /// `self /= 10`, returning the remainder.
    fn div10(&mut self) -> u8 {
        let mut rem = 0u64;
        for l in self.0.iter_mut().rev() {
            let v = rem << 32 | u64::from(*l);
            *l = (v / 10) as u32;
            rem = v % 10;
        }
        rem as u8
    }

    fn trim(&mut self) {
        while self.0.len() > 1 && self.0.last() == Some(&0) {
            self.0.pop();
        }
    }

    fn bits(&self) -> i64 {
        let top = self.0.iter().rposition(|&l| l != 0);
        top.map_or(0, |i| {
            32 * i as i64 + 32 - i64::from(self.0[i].leading_zeros())
        })
    }

    fn is_zero(&self) -> bool {
        self.0.iter().all(|&l| l == 0)
    }

    fn shl(&mut self, k: u64) {
        let (words, bits) = ((k / 32) as usize, (k % 32) as u32);
        if bits > 0 {
            let mut carry = 0;
            for l in self.0.iter_mut() {
                let v = (*l << bits) | carry;
                carry = *l >> (32 - bits);
                *l = v;
            }
            if carry > 0 {
                self.0.push(carry);
            }
        }
        if words > 0 {
            let mut shifted = vec![0; words];
            shifted.extend_from_slice(&self.0);
            self.0 = shifted;
        }
    }

    fn shr1(&mut self) {
        let mut carry = 0;
        for l in self.0.iter_mut().rev() {
            let v = (*l >> 1) | carry;
            carry = *l << 31;
            *l = v;
        }
        self.trim();
    }

    fn ge(&self, o: &Big) -> bool {
        let n = self.0.len().max(o.0.len());
        for i in (0..n).rev() {
            let (a, b) = (
                self.0.get(i).copied().unwrap_or(0),
                o.0.get(i).copied().unwrap_or(0),
            );
            if a != b {
                return a > b;
            }
        }
        true
    }

    /// `self -= o` (requires `self >= o`).
    fn sub(&mut self, o: &Big) {
        let mut borrow = 0i64;
        for (i, l) in self.0.iter_mut().enumerate() {
            let v = i64::from(*l) - i64::from(o.0.get(i).copied().unwrap_or(0)) - borrow;
            borrow = i64::from(v < 0);
            *l = v.rem_euclid(1 << 32) as u32;
        }
        self.trim();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn same_fixed(x: f64) {
        for d in 0..=9 {
            assert_eq!(fixed(x, d), format!("{x:.d$}"), "{x:e} with {d} digits");
        }
    }

    #[test]
    fn fixed_matches_std() {
        for x in [
            0.0,
            -0.0,
            0.5,
            1.5,
            2.5,
            -2.5,
            0.125,
            0.0625,
            1e-7,
            0.000_000_5,
            123.456,
            1e15,
            1e22,
            1.7976931348623157e308,
            5e-324,
            f64::MIN_POSITIVE,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
            0.1 + 0.2,
            2.675,
            1.005,
            4.35,
            9.999_999_5,
        ] {
            same_fixed(x);
        }
    }

    proptest! {
        #[test]
        fn fixed_matches_std_on_any_bits(bits in any::<u64>(), small in -1e7f64..1e7) {
            same_fixed(f64::from_bits(bits));
            same_fixed(small);
            same_fixed(small / 1024.0);
        }
    }

    fn same(s: &str) {
        let want = s.parse::<f64>().ok();
        let got = parse(s);
        assert_eq!(got.map(f64::to_bits), want.map(f64::to_bits), "{s:?}");
    }

    #[test]
    fn edge_cases_match_std() {
        for s in [
            "", "+", "-", ".", "e5", "1e", "1e+", "1.e3", ".5", "5.", "-0", "+0.0", "0e-99999999999",
            "1e400", "-1e400", "1e-400", "1e308", "1.7976931348623157e308", "1.7976931348623158e308",
            "1.7976931348623159e308", "2.2250738585072014e-308", "2.2250738585072011e-308",
            "4.9406564584124654e-324", "2.4703282292062327e-324", "2.4703282292062328e-324",
            "5e-324", "1e-323", "9007199254740993", "9007199254740992.5", "123456789012345678901234567890",
            "0.1", "0.30000000000000004", "1e22", "1e23", "8.98846567431158e307", "inf", "-Infinity",
            "NaN", "nan", "infinit", "1_0", " 1", "1 ", "0x10", "1e+0", "00012.5000", "1.0e-0",
            "179769313486231580793728971405303415079934132710037826936173778980444968292764750946649017977587207096330286416692887910946555547851940402630657488671505820681908902000708383676273854845817711531764475730270069855571366959622842914819860834936475292719074168444365510704342711559699508093042880177904174497791",
            "0.000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000002470328229206232720882538",
        ] {
            same(s);
        }
    }

    proptest! {
        #[test]
        fn random_bits_round_trip_like_std(bits in any::<u64>()) {
            let x = f64::from_bits(bits);
            same(&format!("{x}"));
            same(&format!("{x:e}"));
            same(&format!("{x:.3e}"));
        }

        #[test]
        fn random_decimals_match_std(
            int in "[0-9]{0,25}",
            frac in proptest::option::of("[0-9]{0,25}"),
            exp in proptest::option::of(-340i32..320),
            neg in any::<bool>(),
        ) {
            let mut s = String::new();
            if neg { s.push('-'); }
            s.push_str(&int);
            if let Some(f) = &frac { s.push('.'); s.push_str(f); }
            if let Some(e) = exp { s.push_str(&format!("e{e}")); }
            same(&s);
        }

        #[test]
        fn halfway_points_match_std(m in (1u64 << 52)..(1 << 53), k in 0u32..31, up in 1u32..12) {
            // (2m+1)/2 · 2^-k and · 2^up: exactly between two neighbouring doubles.
            let odd = u128::from(2 * m + 1);
            same(&format!("{}e-{}", odd * 5u128.pow(k + 1), k + 1));
            same(&format!("{}", odd << (up - 1)));
            same(&format!("{}1e-{}", odd * 5u128.pow(k + 1), k + 2));
        }
    }
}
