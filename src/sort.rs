//! The core's sorts: one merge sort ([`merge_sort`]), used to order indices under a `dyn`
//! comparison for every element type, and directly for `u64` values. Each `sort_by` of a new
//! element or closure type instantiated the standard library's driftsort / ipnsort machinery
//! again (~3 KB of wasm each); even the two shared instantiations left were ~6 KB, where this
//! one is a few hundred bytes. Stable, O(n log n) comparisons, one buffer of n elements.

use std::cmp::Ordering;

/// Stable sort of `v` by `cmp` (the same order as `slice::sort_by`).
pub fn sort_by<T>(v: &mut [T], mut cmp: impl FnMut(&T, &T) -> Ordering) {
    if v.len() < 2 {
        return;
    }
    let order = sorted_indices(v.len(), &mut |a, b| cmp(&v[a], &v[b]));
    for (a, b) in swaps(&order) {
        v.swap(a as usize, b as usize);
    }
}

/// The swaps that put element `order[k]` at position `k` for every `k`, in order (not generic:
/// the code per element type is the swap loop alone). O(n).
#[inline(never)]
fn swaps(order: &[u32]) -> Vec<(u32, u32)> {
    let n = order.len();
    // at[p]: original index of the element now at p; pos[o]: where original element o is now.
    let mut at: Vec<u32> = Vec::with_capacity(n);
    for i in 0..n as u32 {
        at.push(i);
    }
    let mut pos = at.clone();
    let mut out = Vec::new();
    for (k, &o) in order.iter().enumerate() {
        let p = pos[o as usize];
        if p as usize != k {
            let displaced = at[k];
            out.push((k as u32, p));
            at[k] = o;
            at[p as usize] = displaced;
            pos[o as usize] = k as u32;
            pos[displaced as usize] = p;
        }
    }
    out
}

/// Stable sort of `v` by `key` (the same order as `slice::sort_by_key`).
pub fn sort_by_key<T, K: Ord>(v: &mut [T], mut key: impl FnMut(&T) -> K) {
    sort_by(v, |a, b| key(a).cmp(&key(b)));
}

/// Ascending sort with duplicates removed.
pub fn sort_dedup<T: Ord>(v: &mut Vec<T>) {
    sort_by(v, T::cmp);
    v.dedup();
}

/// Ascending sort of integers with duplicates removed.
pub fn sort_dedup_u64(v: &mut Vec<u64>) {
    merge_sort(v, &mut |a, b| a < b);
    v.dedup();
}

/// Drop repeated values, keeping each value's first occurrence where it stands.
pub fn dedup_keep_first<T: Ord>(v: &mut Vec<T>) {
    if v.len() < 2 {
        return;
    }
    let order = sorted_indices(v.len(), &mut |a, b| v[a].cmp(&v[b]));
    let mut keep = vec![true; v.len()];
    for w in order.windows(2) {
        // Equal values sort by position: every one after the first of a run is a repeat.
        if v[w[0] as usize] == v[w[1] as usize] {
            keep[w[1] as usize] = false;
        }
    }
    let mut i = 0;
    v.retain(|_| {
        i += 1;
        keep[i - 1]
    });
}

/// True when the ascending, duplicate-free `set` holds `x`.
pub fn contains<T: Ord>(set: &[T], x: &T) -> bool {
    set.binary_search(x).is_ok()
}

/// `0..n` in the stable order of `cmp`.
#[inline(never)]
fn sorted_indices(n: usize, cmp: &mut dyn FnMut(usize, usize) -> Ordering) -> Vec<u32> {
    let mut idx: Vec<u32> = Vec::with_capacity(n);
    for i in 0..n as u32 {
        idx.push(i);
    }
    merge_sort(&mut idx, &mut |a, b| {
        cmp(a as usize, b as usize) == Ordering::Less
    });
    idx
}

/// Stable sort of `a` by `less`: insertion sort of runs of 12, then bottom-up merges
/// through one buffer (an element moves before an earlier one only when strictly less).
fn merge_sort<T: Copy + Default>(a: &mut [T], less: &mut dyn FnMut(T, T) -> bool) {
    const RUN: usize = 12;
    let n = a.len();
    let mut start = 0;
    while start < n {
        let end = (start + RUN).min(n);
        for i in start + 1..end {
            let x = a[i];
            let mut j = i;
            while j > start && less(x, a[j - 1]) {
                a[j] = a[j - 1];
                j -= 1;
            }
            a[j] = x;
        }
        start = end;
    }
    if n <= RUN {
        return;
    }
    let mut buf = vec![T::default(); n];
    let mut width = RUN;
    while width < n {
        let mut lo = 0;
        while lo < n {
            let mid = (lo + width).min(n);
            let hi = (lo + 2 * width).min(n);
            let (mut i, mut j) = (lo, mid);
            for slot in &mut buf[lo..hi] {
                *slot = if j < hi && (i == mid || less(a[j], a[i])) {
                    j += 1;
                    a[j - 1]
                } else {
                    i += 1;
                    a[i - 1]
                };
            }
            lo = hi;
        }
        a.copy_from_slice(&buf);
        width *= 2;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Long inputs (several merge passes, a ragged last run) in the standard sort's order.
        #[test]
        fn merge_sort_is_stable_sort(v in proptest::collection::vec((0u8..20, any::<u16>()), 0..700)) {
            let mut a = v.clone();
            let mut b = v.clone();
            sort_by_key(&mut a, |x| x.0);
            b.sort_by_key(|x| x.0);
            prop_assert_eq!(a, b);
            let mut u: Vec<u64> = v.iter().map(|x| u64::from(x.1) % 97).collect();
            let mut w = u.clone();
            sort_dedup_u64(&mut u);
            w.sort_unstable();
            w.dedup();
            prop_assert_eq!(u, w);
        }

        #[test]
        fn same_order_as_std(v in proptest::collection::vec((0u8..6, any::<u16>()), 0..80)) {
            let mut a = v.clone();
            let mut b = v.clone();
            sort_by_key(&mut a, |x| x.0);
            b.sort_by_key(|x| x.0);
            prop_assert_eq!(&a, &b);
            let mut a = v.clone();
            let mut b = v;
            sort_by(&mut a, |x, y| y.cmp(x));
            b.sort_by(|x, y| y.cmp(x));
            prop_assert_eq!(&a, &b);
            let mut firsts = a.clone();
            dedup_keep_first(&mut firsts);
            let mut seen = std::collections::HashSet::new();
            let want: Vec<_> = a.iter().copied().filter(|x| seen.insert(*x)).collect();
            prop_assert_eq!(firsts, want);
            sort_dedup(&mut a);
            b.sort_unstable();
            b.dedup();
            prop_assert_eq!(a, b);
        }
    }
}
