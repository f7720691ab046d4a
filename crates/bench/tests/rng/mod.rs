//! The seeded generator of the bench crate's randomised tests: proptest's ChaCha `TestRng` from a
//! 64-bit seed. Included by path from the unit tests (`src/`) and the integration tests.
#![allow(dead_code)] // each test crate uses part of it

use proptest::prelude::RngExt;
use proptest::test_runner::{RngAlgorithm, TestRng};

pub struct Rng(TestRng);

impl Rng {
    pub fn new(seed: u64) -> Self {
        let mut s = [0u8; 32];
        s[..8].copy_from_slice(&seed.to_le_bytes());
        Rng(TestRng::from_seed(RngAlgorithm::ChaCha, &s))
    }

    /// Uniform in `0..n` (0 when `n` is 0).
    pub fn below(&mut self, n: usize) -> usize {
        self.0.random_range(0..n.max(1))
    }

    /// Uniform in `0..n` (0 when `n` is 0).
    pub fn below_u64(&mut self, n: u64) -> u64 {
        self.0.random_range(0..n.max(1))
    }

    pub fn pick<'a>(&mut self, xs: &[&'a str]) -> &'a str {
        xs[self.below(xs.len())]
    }
}
