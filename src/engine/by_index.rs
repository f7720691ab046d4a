//! [`ByIndex`]: values keyed by host message index, as a sorted vector.
//!
//! The supplied messages of one assemble arrive in ascending index order, so building this
//! is a run of pushes and lookups are binary searches. It replaces `BTreeMap<u32, _>`, whose
//! node code was instantiated once per value type (several KB of the wasm module each).

/// Values keyed by `u32` host index, kept sorted by index, at most one per index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ByIndex<V>(Vec<(u32, V)>);

impl<V> Default for ByIndex<V> {
    fn default() -> Self {
        ByIndex(Vec::new())
    }
}

impl<V> ByIndex<V> {
    /// Empty.
    pub fn new() -> Self {
        ByIndex(Vec::new())
    }

    fn find(&self, i: u32) -> Result<usize, usize> {
        match self.0.last() {
            Some((last, _)) if *last < i => Err(self.0.len()),
            _ => self.0.binary_search_by(|(k, _)| k.cmp(&i)),
        }
    }

    /// Set the value of `i`; the previous one, if any, is returned (and replaced).
    pub fn insert(&mut self, i: u32, v: V) -> Option<V> {
        match self.find(i) {
            Ok(at) => Some(std::mem::replace(&mut self.0[at].1, v)),
            Err(at) => {
                self.0.insert(at, (i, v));
                None
            }
        }
    }

    /// The value of `i`.
    pub fn get(&self, i: &u32) -> Option<&V> {
        self.find(*i).ok().map(|at| &self.0[at].1)
    }

    /// True when `i` has a value.
    pub fn contains_key(&self, i: &u32) -> bool {
        self.find(*i).is_ok()
    }

    /// Number of indices with a value.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// `(index, value)` in ascending index order.
    pub fn iter(&self) -> impl Iterator<Item = (&u32, &V)> {
        self.0.iter().map(|(i, v)| (i, v))
    }

    /// Entries with index `>= from`, ascending.
    pub fn from(&self, from: u32) -> impl Iterator<Item = (&u32, &V)> {
        let at = self.find(from).unwrap_or_else(|at| at);
        self.0[at..].iter().map(|(i, v)| (i, v))
    }

    /// Entries with index `< to`, ascending.
    pub fn below(&self, to: u32) -> impl Iterator<Item = (&u32, &V)> {
        let at = self.find(to).unwrap_or_else(|at| at);
        self.0[..at].iter().map(|(i, v)| (i, v))
    }
}

impl<V> FromIterator<(u32, V)> for ByIndex<V> {
    fn from_iter<I: IntoIterator<Item = (u32, V)>>(iter: I) -> Self {
        let mut m = ByIndex::new();
        for (i, v) in iter {
            m.insert(i, v);
        }
        m
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn behaves_as_an_ordered_map() {
        let mut m = ByIndex::new();
        for i in [5u32, 1, 9, 3, 7] {
            assert_eq!(m.insert(i, i * 10), None);
        }
        assert_eq!(m.insert(3, 33), Some(30));
        assert_eq!(m.len(), 5);
        assert_eq!(m.get(&3), Some(&33));
        assert!(!m.contains_key(&4) && m.contains_key(&9));
        let keys: Vec<u32> = m.iter().map(|(i, _)| *i).collect();
        assert_eq!(keys, vec![1, 3, 5, 7, 9]);
        let from: Vec<u32> = m.from(4).map(|(i, _)| *i).collect();
        assert_eq!(from, vec![5, 7, 9]);
        let below: Vec<u32> = m.below(5).map(|(i, _)| *i).collect();
        assert_eq!(below, vec![1, 3]);
        assert_eq!(m.from(10).count() + m.below(0).count(), 0);
    }
}
