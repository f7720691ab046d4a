//! zstd frames for what a long session holds for its whole replay (its messages' JSON, its
//! pre-tokenized bodies): level 1, one frame per item, one compression and one decompression
//! context per thread (a context is hundreds of KB; one per item would cost more than the
//! compression). Items are small (a message, a body), so a frame compresses better with a
//! [`Dict`] made of the same session's items.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// A raw-content zstd dictionary: items of a session, which its other items share much with
/// (JSON keys, tool names, paths, vocabulary). Frames made with it read back only with it.
#[derive(Debug)]
pub struct Dict {
    /// Unique per dictionary made (the contexts of a thread know which one they hold).
    id: u64,
    bytes: Box<[u8]>,
}

/// Bytes of a [`Dict`] (zstd reads raw content of this size fast; more gained little on
/// agent sessions).
pub const DICT_BYTES: usize = 64 << 10;

static NEXT_DICT: AtomicU64 = AtomicU64::new(1);

impl Dict {
    /// A dictionary of items taken evenly across `items` (whole, up to [`DICT_BYTES`]); `None`
    /// when they are empty.
    pub fn sample(items: &[&[u8]]) -> Option<Arc<Dict>> {
        let total: usize = items.iter().map(|i| i.len()).sum();
        let mut bytes = Vec::with_capacity(DICT_BYTES.min(total));
        let mut seen = 0u128;
        for item in items {
            seen += item.len() as u128;
            let taken = (bytes.len() + item.len()) as u128;
            // Taken in proportion to the items seen: the dictionary spans the session.
            if taken <= DICT_BYTES as u128 && seen * DICT_BYTES as u128 >= taken * total as u128 {
                bytes.extend_from_slice(item);
            }
        }
        (!bytes.is_empty()).then(|| {
            Arc::new(Dict {
                id: NEXT_DICT.fetch_add(1, Ordering::Relaxed),
                bytes: bytes.into_boxed_slice(),
            })
        })
    }

    /// Its size.
    pub fn len(&self) -> usize {
        self.bytes.len()
    }

    /// True when empty (never made so).
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }
}

thread_local! {
    // With the id of the dictionary each holds (0: none).
    static PACKER: std::cell::RefCell<Option<(u64, zstd::bulk::Compressor<'static>)>> =
        const { std::cell::RefCell::new(None) };
    static UNPACKER: std::cell::RefCell<Option<(u64, zstd::bulk::Decompressor<'static>)>> =
        const { std::cell::RefCell::new(None) };
}

fn id_and_bytes(dict: Option<&Dict>) -> (u64, &[u8]) {
    dict.map_or((0, &[][..]), |d| (d.id, &d.bytes[..]))
}

/// `bytes` as one zstd frame (with `dict`), when that is smaller (`None`: keep them as they
/// are).
pub fn compress(dict: Option<&Dict>, bytes: &[u8]) -> Option<Box<[u8]>> {
    let (id, raw) = id_and_bytes(dict);
    let packed = PACKER.with(|p| {
        let mut p = p.borrow_mut();
        if !matches!(p.as_ref(), Some((held, _)) if *held == id) {
            let mut c = match p.take() {
                Some((_, c)) => c,
                None => zstd::bulk::Compressor::new(1).ok()?,
            };
            c.set_dictionary(1, raw).ok()?;
            *p = Some((id, c));
        }
        p.as_mut().and_then(|(_, c)| c.compress(bytes).ok())
    })?;
    (packed.len() < bytes.len()).then(|| packed.into_boxed_slice())
}

/// The `len` bytes of a frame made by [`compress`] with `dict` (`None` if it does not decode to
/// them).
pub fn decompress(dict: Option<&Dict>, frame: &[u8], len: usize) -> Option<Vec<u8>> {
    let (id, raw) = id_and_bytes(dict);
    UNPACKER
        .with(|d| {
            let mut d = d.borrow_mut();
            if !matches!(d.as_ref(), Some((held, _)) if *held == id) {
                let mut x = match d.take() {
                    Some((_, x)) => x,
                    None => zstd::bulk::Decompressor::new().ok()?,
                };
                x.set_dictionary(raw).ok()?;
                *d = Some((id, x));
            }
            d.as_mut().and_then(|(_, x)| x.decompress(frame, len).ok())
        })
        .filter(|b| b.len() == len)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_frame_reads_back_and_is_made_only_when_smaller() {
        let text = "cargo test parse_args src/main.rs ok ".repeat(40);
        let frame = compress(None, text.as_bytes()).unwrap();
        assert!(frame.len() * 4 < text.len());
        assert_eq!(
            decompress(None, &frame, text.len()).unwrap(),
            text.as_bytes()
        );
        // A wrong length is not a read-back.
        assert!(decompress(None, &frame, text.len() + 1).is_none());
        assert!(compress(None, b"ab").is_none());
    }

    /// A dictionary of a session's items makes its small items' frames smaller; each frame
    /// reads back with its own dictionary, whatever the thread used last.
    #[test]
    fn frames_with_a_dictionary_read_back_with_it() {
        let items: Vec<String> = (0..400)
            .map(|i| {
                format!(
                    "{{\"role\":\"toolResult\",\"toolCallId\":\"call_{i}\",\"toolName\":\"read\",\
                     \"content\":[{{\"type\":\"text\",\"text\":\"src/f{}.rs: fn parse_args() {{}}\"}}]}}",
                    i % 37
                )
            })
            .collect();
        let refs: Vec<&[u8]> = items.iter().map(|s| s.as_bytes()).collect();
        let d = Dict::sample(&refs).unwrap();
        let other = Dict::sample(&[b"something else entirely, 0123456789".as_slice()]).unwrap();
        assert!(d.len() <= DICT_BYTES && !d.is_empty() && d.id != other.id);
        let item = items[399].as_bytes();
        let plain = compress(None, item).map_or(item.len(), |f| f.len());
        let framed = compress(Some(&d), item).unwrap();
        assert!(framed.len() * 2 < plain, "{} vs {plain}", framed.len());
        // Interleaved use of other dictionaries on this thread.
        let f_other = compress(Some(&other), item);
        assert_eq!(decompress(Some(&d), &framed, item.len()).unwrap(), item);
        if let Some(f) = f_other {
            assert_eq!(decompress(Some(&other), &f, item.len()).unwrap(), item);
        }
        let f_none = compress(None, items[0].as_bytes());
        assert_eq!(decompress(Some(&d), &framed, item.len()).unwrap(), item);
        if let Some(f) = f_none {
            assert_eq!(
                decompress(None, &f, items[0].len()).unwrap(),
                items[0].as_bytes()
            );
        }
        // Read back without its dictionary, a frame does not give the item.
        assert_ne!(decompress(None, &framed, item.len()).as_deref(), Some(item));
        assert!(Dict::sample(&[]).is_none());
    }
}
