//! Token estimates without a tokenizer: a weighted character count plus a per-session
//! linear calibration against the provider's reported prompt tokens.
//!
//! The wasm core cannot ship DeepSeek's 6 MB `tokenizer.json`, and `chars/4` is biased by
//! script: it underestimates DeepSeek V4 by about 14 % on agent traffic, 2x on Chinese and 3x
//! on Japanese (docs/cache-model.md). [`weighted_chars`] weighs each character by its
//! expected token cost relative to ASCII, so that one slope fits mixed text:
//! `tokens ≈ 0.3 · weighted_chars` (DeepSeek documents "1 English character ≈ 0.3 token,
//! 1 Chinese character ≈ 0.6 token").
//!
//! [`Calibration`] then learns `prompt_tokens = a + b · weighted_chars(messages)` from each
//! call's usage: `a` is the static prefix the engine never sees (system prompt + tool schemas),
//! `b` the session's real slope. Invariants: `b ∈ [0.05, 2.0]`, `a ≥ 0`, memory bounded
//! (running moments plus at most [`Calibration::MAX_POINTS`] recent points).

use serde::{Deserialize, Serialize};

/// Weight of one character in tenths of an ASCII character.
///
/// | range | weight | why (DeepSeek V4, tokens ≈ 0.3 · weight) |
/// |---|---|---|
/// | ASCII | 1.0 | ≈ 3.3 chars per token on agent traffic (code, JSON, English) |
/// | Latin-1 / Latin Extended (U+0080–U+024F) | 1.5 | accented letters often split off |
/// | Greek, Cyrillic, Armenian, Hebrew, Arabic (U+0370–U+06FF) | 1.7 | ≈ 0.5 token per letter |
/// | IPA, spacing modifiers, combining marks (U+0250–U+036F) | 2.0 | rare, mostly split |
/// | other alphabetic scripts below U+2000 (Indic, Thai, …) | 3.3 | mostly byte-level: ≈ 1 token per char |
/// | punctuation, arrows, box drawing, math (U+2000–U+2E7F) | 2.0 | 3-byte UTF-8, often one token each |
/// | CJK ideographs, CJK punctuation, fullwidth forms | 2.0 | DeepSeek: ≈ 0.6 token per Chinese character |
/// | Hiragana, Katakana, Hangul | 2.5 | ≈ 0.75 token per char (3x chars/4 on Japanese) |
/// | astral plane (emoji, rare ideographs) | 4.0 | 4-byte UTF-8, usually 1-2 tokens |
pub fn char_weight_tenths(c: char) -> u64 {
    let u = c as u32;
    match u {
        0..=0x7F => 10,
        0x80..=0x24F => 15,
        0x370..=0x6FF => 17,
        0x250..=0x36F => 20,
        0x1100..=0x11FF | 0x3040..=0x30FF | 0x3130..=0x318F | 0xAC00..=0xD7AF => 25,
        0x700..=0x1FFF => 33,
        0x2000..=0x2E7F => 20,
        0x2E80..=0x9FFF | 0xF900..=0xFAFF | 0xFE30..=0xFE4F | 0xFF00..=0xFFEF | 0xA000..=0xABFF => {
            20
        }
        0x10000.. => 40,
        _ => 20,
    }
}

/// Weighted character count: approximates DeepSeek-V4 tokens×(1/0.3) so one slope fits
/// mixed text (CJK and other non-Latin scripts weigh more). Weights: [`char_weight_tenths`].
/// Rounded to the nearest whole ASCII-equivalent character.
pub fn weighted_chars(s: &str) -> u64 {
    // Fast path: pure ASCII weighs its length.
    if s.is_ascii() {
        return s.len() as u64;
    }
    let mut tenths = 0;
    for c in s.chars() {
        tenths += char_weight_tenths(c);
    }
    (tenths + 5) / 10
}

/// Weight of one image part, in place of its base64 `data`: about 1,600 tokens at
/// [`DEFAULT_SLOPE`]. Providers bill an image by its pixels, not by the length of its encoding:
/// Anthropic about 1,600 tokens for the largest image it does not shrink (1.15 megapixels),
/// OpenAI's high-detail tiles and Gemini's 258-token tiles less for a screenshot. Counted as text,
/// a 1 MB screenshot weighed ~1.4 million chars (~400,000 estimated tokens): met before any
/// calibration, the fold rules folded the image away at once; read in a tool loop, it drove the
/// calibration's slope to its floor and every later estimate went wrong (2.6× the billed prompt
/// in `tests/e2e/images.test.mjs`).
pub const IMAGE_WEIGHT: u64 = 5_334;

/// [`weighted_chars`] of a message's JSON text whose image parts (`images` of them, their base64
/// `data` strings `data_bytes` long in all) each weigh [`IMAGE_WEIGHT`] instead of their data.
/// Base64 is ASCII and `JSON.stringify` escapes none of its characters, so the data weighs its
/// length in the text.
pub fn message_weight(json: &str, images: u64, data_bytes: u64) -> u64 {
    weighted_chars(json)
        .saturating_sub(data_bytes)
        .saturating_add(images.saturating_mul(IMAGE_WEIGHT))
}

/// Default slope before any observation: DeepSeek's documented 0.3 token per English char.
pub const DEFAULT_SLOPE: f64 = 0.3;
/// Slope bounds: below 0.05 or above 2 tokens per weighted char is a measurement error
/// (e.g. the host's usage belongs to a different prompt than the one we measured).
pub const SLOPE_MIN: f64 = 0.05;
/// Upper slope bound, see [`SLOPE_MIN`].
pub const SLOPE_MAX: f64 = 2.0;

/// Running least squares of `prompt_tokens = a + b · weighted_chars`.
///
/// Keeps centred running moments (Welford updates, so long sessions with large, nearly equal
/// x values do not lose precision to cancellation) plus the last [`Calibration::MAX_POINTS`]
/// observations for the error statistic.
#[derive(Serialize, Deserialize, Clone, Default, Debug, PartialEq)]
#[serde(rename_all = "camelCase", default)]
pub struct Calibration {
    n: u64,
    mean_x: f64,
    mean_y: f64,
    /// Σ (x − x̄)²
    m2x: f64,
    /// Σ (x − x̄)(y − ȳ)
    cxy: f64,
    /// Fitted intercept (static tokens).
    a: f64,
    /// Fitted slope (0 means "not fitted": use [`DEFAULT_SLOPE`]).
    b: f64,
    /// Last observations (x, y), oldest first.
    recent: Vec<(u64, u64)>,
}

impl Calibration {
    /// Points kept for [`Calibration::mean_abs_error_pct`].
    pub const MAX_POINTS: usize = 64;

    /// Record one call: `weighted_chars` of the messages we sent, `prompt_tokens` the provider
    /// reported (input + cacheRead + cacheWrite).
    pub fn observe(&mut self, weighted_chars: u64, prompt_tokens: u64) {
        let x = weighted_chars as f64;
        let y = prompt_tokens as f64;
        self.n += 1;
        let n = self.n as f64;
        let dx = x - self.mean_x;
        self.mean_x += dx / n;
        let dy = y - self.mean_y;
        self.mean_y += dy / n;
        self.m2x += dx * (x - self.mean_x);
        self.cxy += dx * (y - self.mean_y);
        crate::text::push_bounded(
            &mut self.recent,
            (weighted_chars, prompt_tokens),
            Self::MAX_POINTS,
        );
        self.refit();
    }

    fn refit(&mut self) {
        let n = self.n as f64;
        if self.n == 0 {
            self.a = 0.0;
            self.b = 0.0;
            return;
        }
        // Raw second moments for the through-origin fit.
        let sxx = self.m2x + n * self.mean_x * self.mean_x;
        let sxy = self.cxy + n * self.mean_x * self.mean_y;
        let origin_slope = if sxx > 0.0 {
            (sxy / sxx).clamp(SLOPE_MIN, SLOPE_MAX)
        } else {
            DEFAULT_SLOPE
        };
        // "No spread": fewer than two distinct x, or a relative spread below 1e-6 (the
        // intercept would be pure noise).
        let spread = self.n >= 2 && self.m2x > 1e-12 * n * (self.mean_x * self.mean_x).max(1.0);
        if !spread {
            if sxx > 0.0 {
                self.a = 0.0;
                self.b = origin_slope;
            } else {
                // Only empty message lists seen: the whole prompt is static.
                self.a = self.mean_y.max(0.0);
                self.b = 0.0;
            }
            return;
        }
        let b = self.cxy / self.m2x;
        if !b.is_finite() {
            self.a = 0.0;
            self.b = origin_slope;
            return;
        }
        let bc = b.clamp(SLOPE_MIN, SLOPE_MAX);
        let a = self.mean_y - bc * self.mean_x;
        if a >= 0.0 {
            self.a = a;
            self.b = bc;
        } else {
            // A negative intercept is impossible (the static prefix cannot be negative):
            // fit through the origin instead.
            self.a = 0.0;
            self.b = origin_slope;
        }
    }

    fn slope(&self) -> f64 {
        if self.n == 0 || !(self.b.is_finite() && self.b > 0.0) {
            DEFAULT_SLOPE
        } else {
            self.b
        }
    }

    /// Slope b (tokens per weighted char).
    pub fn slope_b(&self) -> f64 {
        self.slope()
    }

    /// Intercept a (tokens).
    pub fn intercept_a(&self) -> f64 {
        if self.a.is_finite() {
            self.a.max(0.0)
        } else {
            0.0
        }
    }

    /// b · x (messages only); default b = 0.3 until calibrated.
    pub fn tokens(&self, weighted_chars: u64) -> u64 {
        (self.slope() * weighted_chars as f64).round() as u64
    }

    /// a (system prompt + tools), 0 until known.
    pub fn static_tokens(&self) -> u64 {
        self.intercept_a().round() as u64
    }

    /// Number of observations so far.
    pub fn samples(&self) -> u64 {
        self.n
    }

    /// Mean |predicted − reported| / reported, in percent, over the kept points (0 when none).
    pub fn mean_abs_error_pct(&self) -> f64 {
        let (a, b) = (self.intercept_a(), self.slope());
        let mut sum = 0.0;
        let mut k = 0u32;
        for &(x, y) in &self.recent {
            if y == 0 {
                continue;
            }
            let pred = a + b * x as f64;
            sum += (pred - y as f64).abs() / y as f64;
            k += 1;
        }
        if k == 0 {
            0.0
        } else {
            100.0 * sum / f64::from(k)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weights_by_script() {
        assert_eq!(weighted_chars(""), 0);
        assert_eq!(weighted_chars("hello world"), 11);
        assert_eq!(weighted_chars("你好世界"), 8);
        assert_eq!(weighted_chars("こんにちは"), 13); // 5 × 2.5 = 12.5 → 13
        assert_eq!(weighted_chars("안녕"), 5);
        assert_eq!(weighted_chars("привет"), 10); // 6 × 1.7 = 10.2
        assert_eq!(weighted_chars("café"), 5); // 3 + 1.5 = 4.5 → 5 (rounds half up)
        assert_eq!(weighted_chars("→"), 2);
        assert_eq!(weighted_chars("😀"), 4);
        assert_eq!(weighted_chars("नमस्ते"), 20); // 6 code points × 3.3 = 19.8
                                                // Chinese costs about twice ASCII per char, Japanese kana 2.5x: the ratios the
                                                // chars/4 bias implies (2x and 3x under-count vs ~1.14x for ASCII-heavy traffic).
        let zh = "这是一个测试句子用于估计令牌数量";
        assert_eq!(weighted_chars(zh), 2 * zh.chars().count() as u64);
    }

    #[test]
    fn defaults_before_calibration() {
        let c = Calibration::default();
        assert_eq!(c.samples(), 0);
        assert_eq!(c.tokens(1000), 300);
        assert_eq!(c.static_tokens(), 0);
        assert_eq!(c.mean_abs_error_pct(), 0.0);
    }

    #[test]
    fn recovers_intercept_and_slope() {
        let mut c = Calibration::default();
        // prompt = 5000 + 0.28·x exactly.
        for i in 0..200u64 {
            let x = 10_000 + i * 1_337;
            c.observe(x, 5_000 + (x * 28) / 100);
        }
        assert!((c.slope_b() - 0.28).abs() < 1e-3, "{}", c.slope_b());
        assert!(
            (c.static_tokens() as i64 - 5_000).abs() <= 5,
            "{}",
            c.static_tokens()
        );
        assert_eq!(c.tokens(100_000), 28_000);
        assert!(c.mean_abs_error_pct() < 0.01, "{}", c.mean_abs_error_pct());
        assert_eq!(c.samples(), 200);
    }

    #[test]
    fn recovers_from_noisy_points() {
        let mut c = Calibration::default();
        // Deterministic ±2 % noise.
        for i in 0..500u64 {
            let x = 20_000 + (i * 7_919) % 150_000;
            let clean = 8_000.0 + 0.31 * x as f64;
            let noise = (((i * 37) % 41) as f64 - 20.0) / 1000.0;
            c.observe(x, (clean * (1.0 + noise)).round() as u64);
        }
        assert!((c.slope_b() - 0.31).abs() < 0.01, "{}", c.slope_b());
        assert!(
            (c.static_tokens() as f64 - 8_000.0).abs() < 1_000.0,
            "{}",
            c.static_tokens()
        );
        let err = c.mean_abs_error_pct();
        assert!(err > 0.1 && err < 2.5, "{err}");
    }

    #[test]
    fn one_point_fits_through_origin() {
        let mut c = Calibration::default();
        c.observe(10_000, 3_500);
        assert_eq!(c.static_tokens(), 0);
        assert!((c.slope_b() - 0.35).abs() < 1e-12);
        assert_eq!(c.tokens(10_000), 3_500);
        assert!(c.mean_abs_error_pct() < 1e-9);
        // The same x again: still no spread, slope-only.
        c.observe(10_000, 3_700);
        assert_eq!(c.static_tokens(), 0);
        assert!((c.slope_b() - 0.36).abs() < 1e-9, "{}", c.slope_b());
    }

    #[test]
    fn clamps_slope_and_intercept() {
        let mut c = Calibration::default();
        c.observe(1_000, 100_000);
        assert_eq!(c.slope_b(), SLOPE_MAX);
        let mut c = Calibration::default();
        c.observe(1_000_000, 10);
        assert_eq!(c.slope_b(), SLOPE_MIN);
        // A line with a negative intercept is refitted through the origin.
        let mut c = Calibration::default();
        for x in [10_000u64, 20_000, 30_000] {
            c.observe(x, (x * 4 / 10).saturating_sub(2_000));
        }
        assert_eq!(c.static_tokens(), 0);
        assert!(c.slope_b() > 0.3 && c.slope_b() < 0.4, "{}", c.slope_b());
        // A steep fitted slope is clamped and the intercept follows.
        let mut c = Calibration::default();
        c.observe(100, 1_000);
        c.observe(200, 2_000);
        assert_eq!(c.slope_b(), SLOPE_MAX);
        assert_eq!(c.static_tokens(), 1_200);
        // x = 0 with a prompt: all static, slope still the default.
        let mut c = Calibration::default();
        c.observe(0, 4_000);
        assert_eq!(c.tokens(1_000), 300);
        assert_eq!(c.static_tokens(), 4_000);
    }

    #[test]
    fn bounded_memory_and_serde_round_trip() {
        let mut c = Calibration::default();
        for i in 0..1_000u64 {
            c.observe(1_000 + i, 500 + i / 3);
        }
        assert_eq!(c.recent.len(), Calibration::MAX_POINTS);
        assert_eq!(c.recent.first(), Some(&(1_936, 500 + 936 / 3)));
        let s = serde_json::to_string(&c).unwrap();
        let back: Calibration = serde_json::from_str(&s).unwrap();
        assert_eq!(back.tokens(50_000), c.tokens(50_000));
        assert_eq!(back.static_tokens(), c.static_tokens());
        assert_eq!(back.samples(), 1_000);
        // Missing fields (older snapshot) deserialize to the defaults.
        let empty: Calibration = serde_json::from_str("{}").unwrap();
        assert_eq!(empty, Calibration::default());
    }

    /// An image weighs [`IMAGE_WEIGHT`] whatever the length of its data; a message without
    /// images weighs its text.
    #[test]
    fn images_weigh_a_fixed_amount_not_their_data() {
        let text = r#"{"role":"user","content":[{"type":"text","text":"é what is wrong here?"}]}"#;
        assert_eq!(message_weight(text, 0, 0), weighted_chars(text));
        for data in ["", "QUJD", &"A".repeat(1_400_000)] {
            let json = format!(
                r#"{{"role":"user","content":[{{"type":"text","text":"é"}},{{"type":"image","data":"{data}","mimeType":"image/png"}}]}}"#
            );
            let bare = weighted_chars(&json) - data.len() as u64;
            assert_eq!(
                message_weight(&json, 1, data.len() as u64),
                bare + IMAGE_WEIGHT
            );
        }
        // Data lengths past the text (a caller's mistake) never wrap.
        assert_eq!(message_weight("{}", 2, 1_000), 2 * IMAGE_WEIGHT);
    }
}
