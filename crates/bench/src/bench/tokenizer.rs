//! Token counting for the bench: the exact DeepSeek-V4 `tokenizer.json` through the HF
//! `tokenizers` crate, or `o200k_base` from `tiktoken-rs` as the stated fallback.
//!
//! The bench never tokenizes a whole request: requests are concatenations of per-piece token
//! vectors (one piece per rendered message body, see `render.rs`), and each distinct piece text
//! is tokenized once ([`TokenCache`], keyed by a 128-bit content hash). The small error this
//! introduces at piece seams (a BPE merge that would have spanned two pieces) is bounded by
//! the seams themselves: every piece starts or ends at a DeepSeek special token
//! (`<｜User｜>`, `<｜Assistant｜>`, `</think>`, EOS) or at a `\n\n` separator, where the
//! pre-tokenizer splits anyway.
//!
//! Loading the 6.4 MB JSON takes about 0.5 s; it happens once per run (the caller reads the
//! file: the core does no I/O).

use super::pack::Dict;
use ::cachefold::error::{Error, Result};
use std::collections::HashMap;
use std::sync::Arc;

/// Shared token vector of one piece.
pub type Tokens = Arc<[u32]>;

/// Which tokenizer counts tokens.
pub enum Tokenizer {
    /// The exact DeepSeek-V4 tokenizer (vocab 129,283 incl. special tokens).
    DeepSeekV4(Box<tokenizers::Tokenizer>),
    /// `o200k_base` (tiktoken-rs, bundled): within 3-7 % of DeepSeek on agent traffic
    /// (docs/cache-model.md). DeepSeek special tokens are counted as their ordinary text.
    O200k(Box<tiktoken_rs::CoreBPE>),
    /// UTF-8 bytes / 4, rounded up: each 4-byte group of the text is one token (its bytes
    /// packed into the id, so equal groups are equal tokens). This is how the e2e suite's
    /// fake provider counts (`tests/e2e/lib/tokenize.mjs`), so a replay can be checked against
    /// what that provider billed. Pieces are cut separately, so a piece whose length is not a
    /// multiple of 4 counts up to one token more than the provider's whole-request cut.
    Bytes4,
}

impl Tokenizer {
    /// Load the DeepSeek-V4 tokenizer from the bytes of `tokenizer.json`.
    pub fn deepseek_from_bytes(bytes: &[u8]) -> Result<Tokenizer> {
        let t = tokenizers::Tokenizer::from_bytes(bytes)
            .map_err(|e| Error::Input(format!("tokenizer.json: {e}")))?;
        Ok(Tokenizer::DeepSeekV4(Box::new(t)))
    }

    /// The bundled o200k fallback.
    pub fn o200k() -> Result<Tokenizer> {
        let t = tiktoken_rs::o200k_base().map_err(|e| Error::Internal(format!("o200k: {e}")))?;
        Ok(Tokenizer::O200k(Box::new(t)))
    }

    /// The bytes/4 counter (see [`Tokenizer::Bytes4`]).
    pub fn bytes4() -> Tokenizer {
        Tokenizer::Bytes4
    }

    /// Short name for reports: `deepseek-v4`, `o200k` or `bytes4`.
    pub fn name(&self) -> &'static str {
        match self {
            Tokenizer::DeepSeekV4(_) => "deepseek-v4",
            Tokenizer::O200k(_) => "o200k",
            Tokenizer::Bytes4 => "bytes4",
        }
    }

    /// Token ids of `text` (no BOS/EOS added; special tokens written in the text are
    /// recognised by the DeepSeek tokenizer).
    pub fn encode(&self, text: &str) -> Vec<u32> {
        match self {
            Tokenizer::DeepSeekV4(t) => t
                .encode_fast(text, false)
                .map(|e| e.get_ids().to_vec())
                .unwrap_or_default(),
            Tokenizer::O200k(t) => t.encode_ordinary(text),
            Tokenizer::Bytes4 => bytes4_ids(text),
        }
    }

    /// Encode many texts; the DeepSeek path runs on the `tokenizers` thread pool.
    pub fn encode_many(&self, texts: &[&str]) -> Vec<Vec<u32>> {
        match self {
            Tokenizer::DeepSeekV4(t) => {
                let inputs: Vec<&str> = texts.to_vec();
                match t.encode_batch_fast(inputs, false) {
                    Ok(encs) => encs.into_iter().map(|e| e.get_ids().to_vec()).collect(),
                    Err(_) => texts.iter().map(|s| self.encode(s)).collect(),
                }
            }
            Tokenizer::O200k(t) => texts.iter().map(|s| t.encode_ordinary(s)).collect(),
            Tokenizer::Bytes4 => texts.iter().map(|s| bytes4_ids(s)).collect(),
        }
    }

    /// Token count of `text`.
    pub fn count(&self, text: &str) -> u64 {
        self.encode(text).len() as u64
    }
}

/// One id per 4-byte group of `text`'s UTF-8 bytes (the last group zero-padded).
fn bytes4_ids(text: &str) -> Vec<u32> {
    text.as_bytes()
        .chunks(4)
        .map(|c| {
            let mut w = [0u8; 4];
            w[..c.len()].copy_from_slice(c);
            u32::from_le_bytes(w)
        })
        .collect()
}

/// 128-bit content hash (two independent 64-bit FNV-1a-style lanes with a final avalanche);
/// used only as a cache key, so collisions (≈ 2^-64 per pair) are irrelevant at our sizes.
pub fn hash128(bytes: &[u8]) -> u128 {
    let mut a: u64 = 0xcbf2_9ce4_8422_2325;
    let mut b: u64 = 0x6c62_272e_07bb_0142;
    for chunk in bytes.chunks(8) {
        let mut w = [0u8; 8];
        w[..chunk.len()].copy_from_slice(chunk);
        let x = u64::from_le_bytes(w) ^ (chunk.len() as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        a = (a ^ x).wrapping_mul(0x0000_0100_0000_01b3).rotate_left(29);
        b = (b ^ x.rotate_left(17))
            .wrapping_mul(0x9e37_79b9_7f4a_7c15)
            .rotate_left(31);
    }
    let fin = |mut z: u64| {
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    };
    ((fin(a ^ bytes.len() as u64) as u128) << 64) | fin(b ^ a) as u128
}

/// A piece's tokens as a long session keeps them at rest: the ids as little-endian bytes in
/// one zstd frame ([`super::pack`]). Read back whole ([`PackedTokens::unpack`]) when a request
/// renders the piece; a cache simulator keeps a packed piece, not its tokens, for the blocks it
/// remembers (see `cache::Seq::push_packed`).
#[derive(Debug)]
pub struct PackedTokens {
    len: u32,
    frame: Box<[u8]>,
    /// The dictionary it was made with ([`BaseTokens::dictionary`]).
    dict: Option<Arc<Dict>>,
}

impl PackedTokens {
    /// `tokens` packed, when that is smaller (`None`: keep them as they are).
    pub fn pack(tokens: &[u32]) -> Option<PackedTokens> {
        PackedTokens::pack_with(None, tokens)
    }

    /// [`PackedTokens::pack`] with a dictionary (see [`PackedTokens::bytes`]).
    pub fn pack_with(dict: Option<&Arc<Dict>>, tokens: &[u32]) -> Option<PackedTokens> {
        let len = u32::try_from(tokens.len()).ok()?;
        let frame = super::pack::compress(dict.map(|d| &**d), &PackedTokens::bytes(tokens))?;
        Some(PackedTokens {
            len,
            frame,
            dict: dict.cloned(),
        })
    }

    /// The bytes a piece is packed as (each id little-endian).
    pub fn bytes(tokens: &[u32]) -> Vec<u8> {
        tokens.iter().flat_map(|t| t.to_le_bytes()).collect()
    }

    /// Token count.
    pub fn len(&self) -> usize {
        self.len as usize
    }

    /// True when there are no tokens.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The tokens (the frame is ours: it always reads back; an empty piece otherwise).
    pub fn unpack(&self) -> Tokens {
        super::pack::decompress(self.dict.as_deref(), &self.frame, self.len() * 4)
            .map(|b| {
                b.chunks_exact(4)
                    .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                    .collect()
            })
            .unwrap_or_else(|| Vec::new().into())
    }
}

/// Tokens of one pre-tokenized body: as they are, or packed.
#[derive(Debug, Clone)]
pub enum Stored {
    /// Resident tokens.
    Plain(Tokens),
    /// Packed tokens (a long session's, see [`BaseTokens::packing`]).
    Packed(Arc<PackedTokens>),
}

impl Stored {
    /// Token count.
    pub fn len(&self) -> usize {
        match self {
            Stored::Plain(t) => t.len(),
            Stored::Packed(p) => p.len(),
        }
    }

    /// True when there are no tokens.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A session's pre-tokenized bodies by the hash of their text. A long session's are kept
/// packed ([`PackedTokens`]): they are a session's largest part (4 bytes a token), and a
/// replay reads each of them a few times.
#[derive(Debug, Default)]
pub struct BaseTokens {
    map: HashMap<u128, Stored>,
    packing: bool,
    dict: Option<Arc<Dict>>,
}

impl BaseTokens {
    /// Empty; `packing`: tokens inserted are kept packed when that is smaller.
    pub fn packing(packing: bool) -> BaseTokens {
        BaseTokens {
            map: HashMap::new(),
            packing,
            dict: None,
        }
    }

    /// Pack the tokens inserted from now on with `dict` (a dictionary of the session's pieces
    /// as [`PackedTokens::bytes`]).
    pub fn dictionary(&mut self, dict: Option<Arc<Dict>>) {
        self.dict = dict;
    }

    /// True when tokens inserted are kept packed.
    pub fn packs(&self) -> bool {
        self.packing
    }

    /// Keep `tokens` as the tokens of the text hashed `key`.
    pub fn insert(&mut self, key: u128, tokens: Tokens) {
        let packed = self
            .packing
            .then(|| PackedTokens::pack_with(self.dict.as_ref(), &tokens));
        let stored = match packed.flatten() {
            Some(p) => Stored::Packed(Arc::new(p)),
            None => Stored::Plain(tokens),
        };
        self.map.insert(key, stored);
    }

    /// The tokens of the text hashed `key`, if kept.
    pub fn get(&self, key: &u128) -> Option<&Stored> {
        self.map.get(key)
    }

    /// Bodies kept.
    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// True when no body is kept.
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }
}

/// Memo of piece text → tokens.
#[derive(Default)]
pub struct TokenCache {
    map: HashMap<u128, Tokens>,
    /// Texts tokenized (cache misses).
    pub encoded: u64,
    /// Chars tokenized.
    pub encoded_chars: u64,
}

impl TokenCache {
    /// Tokens of `text`, tokenizing on first sight.
    pub fn get(&mut self, tok: &Tokenizer, text: &str) -> Tokens {
        let k = hash128(text.as_bytes());
        if let Some(t) = self.map.get(&k) {
            return t.clone();
        }
        let t: Tokens = tok.encode(text).into();
        self.encoded += 1;
        self.encoded_chars += text.len() as u64;
        self.map.insert(k, t.clone());
        t
    }

    /// Pre-fill with many texts at once (parallel on the DeepSeek path).
    pub fn prefill(&mut self, tok: &Tokenizer, texts: &[&str]) {
        let mut todo: Vec<&str> = Vec::new();
        let mut keys = Vec::new();
        let mut seen = std::collections::HashSet::new();
        for t in texts {
            let k = hash128(t.as_bytes());
            if !self.map.contains_key(&k) && seen.insert(k) {
                todo.push(t);
                keys.push(k);
            }
        }
        // Batches of ~4 MB keep peak memory of the encodings bounded.
        let mut start = 0;
        while start < todo.len() {
            let mut end = start;
            let mut bytes = 0usize;
            while end < todo.len() && (bytes < 4 << 20 || end == start) {
                bytes += todo.get(end).map_or(0, |s| s.len());
                end += 1;
            }
            let (Some(batch), Some(bkeys)) = (todo.get(start..end), keys.get(start..end)) else {
                break;
            };
            let out = tok.encode_many(batch);
            for ((k, ids), text) in bkeys.iter().zip(out).zip(batch) {
                self.encoded += 1;
                self.encoded_chars += text.len() as u64;
                self.map.insert(*k, ids.into());
            }
            start = end;
        }
    }

    /// Forget every piece (the counters stay).
    pub fn clear(&mut self) {
        self.map.clear();
    }

    /// Number of cached pieces.
    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// True when nothing is cached.
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Packed tokens read back as the tokens packed, ids of every size included; a piece
    /// that does not get smaller stays as it is.
    #[test]
    fn packed_tokens_read_back_the_same() {
        let t = Tokenizer::bytes4();
        let text = "fn parse_args() -> Result<Args> { cargo test src/main.rs } ".repeat(30);
        let tokens: Tokens = t.encode(&text).into();
        let p = PackedTokens::pack(&tokens).unwrap();
        assert_eq!(p.len(), tokens.len());
        assert!(
            p.frame.len() * 2 < tokens.len() * 4,
            "{} bytes",
            p.frame.len()
        );
        assert_eq!(p.unpack(), tokens);
        let wide: Vec<u32> = (0..4_000u32)
            .map(|i| [0, 1, 255, 256, 65_535, 129_282, u32::MAX][i as usize % 7] ^ (i % 3))
            .collect();
        assert_eq!(&PackedTokens::pack(&wide).unwrap().unpack()[..], &wide[..]);
        assert!(PackedTokens::pack(&[7, 1 << 30]).is_none());
        let mut base = BaseTokens::packing(true);
        base.insert(1, tokens.clone());
        base.insert(2, vec![7u32].into());
        assert!(matches!(base.get(&1), Some(Stored::Packed(p)) if p.unpack() == tokens));
        assert!(matches!(base.get(&2), Some(Stored::Plain(t)) if t[..] == [7]));
        let mut plain = BaseTokens::packing(false);
        plain.insert(1, tokens.clone());
        assert!(matches!(plain.get(&1), Some(Stored::Plain(t)) if Arc::ptr_eq(t, &tokens)));
        assert_eq!(plain.get(&1).map(Stored::len), Some(tokens.len()));
    }

    #[test]
    fn bytes4_counts_utf8_bytes_over_four_rounded_up() {
        let t = Tokenizer::bytes4();
        assert_eq!(t.name(), "bytes4");
        assert_eq!(t.count(""), 0);
        assert_eq!(t.count("abcd"), 1);
        assert_eq!(t.count("abcde"), 2);
        // "é" is 2 bytes, "｜" 3: 2 + 3 + 1 = 6 bytes.
        assert_eq!(t.count("é｜a"), 2);
        // A prefix of the text is a prefix of the tokens (what the cache model needs).
        let whole = t.encode("0123456789abcdef");
        assert_eq!(&whole[..2], &t.encode("01234567")[..]);
        assert_ne!(whole[0], whole[1]);
    }
}
