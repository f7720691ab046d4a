//! zstd frames for what a long session holds for its whole replay (its messages' JSON, its
//! pre-tokenized bodies): level 1, one frame per item, one compression and one decompression
//! context per thread (a context is hundreds of KB; one per item would cost more than the
//! compression).

thread_local! {
    static PACKER: std::cell::RefCell<Option<zstd::bulk::Compressor<'static>>> =
        const { std::cell::RefCell::new(None) };
    static UNPACKER: std::cell::RefCell<Option<zstd::bulk::Decompressor<'static>>> =
        const { std::cell::RefCell::new(None) };
}

/// `bytes` as one zstd frame, when that is smaller (`None`: keep them as they are).
pub fn compress(bytes: &[u8]) -> Option<Box<[u8]>> {
    let packed = PACKER.with(|p| {
        let mut p = p.borrow_mut();
        if p.is_none() {
            *p = zstd::bulk::Compressor::new(1).ok();
        }
        p.as_mut().and_then(|c| c.compress(bytes).ok())
    })?;
    (packed.len() < bytes.len()).then(|| packed.into_boxed_slice())
}

/// The `len` bytes of a frame made by [`compress`] (`None` if it does not decode to them).
pub fn decompress(frame: &[u8], len: usize) -> Option<Vec<u8>> {
    UNPACKER
        .with(|d| {
            let mut d = d.borrow_mut();
            if d.is_none() {
                *d = zstd::bulk::Decompressor::new().ok();
            }
            d.as_mut().and_then(|d| d.decompress(frame, len).ok())
        })
        .filter(|b| b.len() == len)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_frame_reads_back_and_is_made_only_when_smaller() {
        let text = "cargo test parse_args src/main.rs ok ".repeat(40);
        let frame = compress(text.as_bytes()).unwrap();
        assert!(frame.len() * 4 < text.len());
        assert_eq!(decompress(&frame, text.len()).unwrap(), text.as_bytes());
        // A wrong length is not a read-back.
        assert!(decompress(&frame, text.len() + 1).is_none());
        assert!(compress(b"ab").is_none());
    }
}
