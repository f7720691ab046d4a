//! The cut boundaries of a growing history, kept incrementally.
//!
//! [`super::boundaries`] walks every record's shape; called on each assemble it made a long
//! session quadratic. A [`CutCache`] scans each record once ([`crate::pairing::CutScan`]) and
//! answers the engine's questions (the cuts inside the live tail, the first cut at or after an
//! index) from the kept cut points by binary search.
//!
//! It is derived data: never serialized, rebuilt from the records on first use after a restore,
//! a fork or a load. Records are appended, truncated or cleared (`engine::state`); the owner
//! calls [`CutCache::invalidate`] on anything but an append. As a second guard, a cache that
//! has scanned more records than there are, or whose last scanned shape differs from the
//! record now at that index, is rebuilt from scratch. Debug builds check every answer against
//! [`super::boundaries`] while the history has at most [`CHECKED_UP_TO`] records (past that the
//! check itself would walk the whole history on every assemble, the very cost this cache
//! removes; `tests/assemble_scaling.rs` measures a debug build at 20,000 messages).

use super::boundaries;
use crate::pairing::{CutScan, Shape};
use crate::record::MsgRecord;
use std::cell::RefCell;

/// Incremental [`boundaries`] of a record list (see the module docs). Compares equal to any
/// other cache: it never changes what a state is.
#[derive(Default, Clone)]
pub struct CutCache {
    inner: RefCell<Scanned>,
}

#[derive(Default, Clone)]
struct Scanned {
    scan: CutScan,
    /// Shape of the last record scanned (staleness guard).
    last: Option<Shape>,
}

impl PartialEq for CutCache {
    fn eq(&self, _: &CutCache) -> bool {
        true
    }
}

impl std::fmt::Debug for CutCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CutCache").finish_non_exhaustive()
    }
}

/// Longest history whose answers debug builds check against [`boundaries`].
pub const CHECKED_UP_TO: usize = 4_096;

/// Whether this build checks answers over `records` (see the module docs).
fn checked(records: &[MsgRecord]) -> bool {
    cfg!(debug_assertions) && records.len() <= CHECKED_UP_TO
}

fn to_u32(c: usize) -> Option<u32> {
    u32::try_from(c).ok()
}

impl CutCache {
    /// Forget everything scanned: the records changed other than by appending.
    pub fn invalidate(&mut self) {
        *self.inner.get_mut() = Scanned::default();
    }

    /// Bring the scan up to `records` and run `f` on it.
    fn with<R>(&self, records: &[MsgRecord], f: impl FnOnce(&CutScan) -> R) -> R {
        let mut g = self.inner.borrow_mut();
        let n = g.scan.len();
        let stale = n > records.len() || (n > 0 && g.last.as_ref() != Some(&records[n - 1].shape));
        if stale {
            *g = Scanned::default();
        }
        let n = g.scan.len();
        if n < records.len() {
            for r in &records[n..] {
                g.scan.push(&r.shape);
            }
            g.last = records.last().map(|r| r.shape.clone());
        }
        f(&g.scan)
    }

    /// [`boundaries`]`(records)`.
    pub fn boundaries(&self, records: &[MsgRecord]) -> Vec<u32> {
        let out = self.with(records, |s| {
            let mut out: Vec<u32> = s.cuts().iter().filter_map(|&c| to_u32(c)).collect();
            if s.clean() {
                out.extend(to_u32(s.len()));
            }
            out
        });
        if checked(records) {
            assert_eq!(out, boundaries(records));
        }
        out
    }

    /// Boundaries `c` of `records[..count]` (all of `records` when `count` is past the end)
    /// with `live < c < count`: what `boundaries` of that prefix, filtered so, returns.
    pub fn between(&self, records: &[MsgRecord], live: u32, count: u32) -> Vec<u32> {
        let out = self.with(records, |s| {
            let cuts = s.cuts();
            let m = (count as usize).min(s.len());
            let a = cuts.partition_point(|&c| c <= live as usize);
            let b = cuts.partition_point(|&c| c < m);
            let mut out: Vec<u32> = cuts[a..b.max(a)]
                .iter()
                .filter_map(|&c| to_u32(c))
                .collect();
            // `count` past the end: the end itself is a boundary when nothing is open there.
            if m < count as usize && m > live as usize && s.clean() {
                out.extend(to_u32(m));
            }
            out
        });
        if checked(records) {
            let recs = records.get(..count as usize).unwrap_or(records);
            let mut want = boundaries(recs);
            want.retain(|c| *c > live && *c < count);
            assert_eq!(out, want);
        }
        out
    }

    /// The first boundary of `records` at or after `p`.
    pub fn first_at_least(&self, records: &[MsgRecord], p: u32) -> Option<u32> {
        let out = self.with(records, |s| {
            let cuts = s.cuts();
            let k = cuts.partition_point(|&c| c < p as usize);
            match cuts.get(k) {
                Some(&c) => to_u32(c),
                None => (s.clean() && s.len() >= p as usize)
                    .then(|| to_u32(s.len()))
                    .flatten(),
            }
        });
        if checked(records) {
            assert_eq!(out, boundaries(records).into_iter().find(|c| *c >= p));
        }
        out
    }
}

#[cfg(test)]
mod tests;
