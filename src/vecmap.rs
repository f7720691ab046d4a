//! [`VecMap`]: an ordered map as a sorted vector, for the core's small maps (config tables,
//! per-cause counters, per-kind picks). Same iteration order as `BTreeMap` (ascending keys), so
//! everything written from one (JSON objects, rendered lists) is unchanged; lookups are binary
//! searches. In the wasm module each `BTreeMap` instantiation cost several KB of node code.

use std::borrow::Borrow;
use std::fmt;

/// Keys in ascending order, each once.
#[derive(Clone, PartialEq, Eq)]
pub struct VecMap<K, V>(Vec<(K, V)>);

impl<K, V> Default for VecMap<K, V> {
    fn default() -> Self {
        VecMap(Vec::new())
    }
}

impl<K: Ord, V> VecMap<K, V> {
    /// An empty map.
    pub fn new() -> Self {
        VecMap(Vec::new())
    }

    fn find<Q: Ord + ?Sized>(&self, k: &Q) -> Result<usize, usize>
    where
        K: Borrow<Q>,
    {
        self.0.binary_search_by(|(x, _)| x.borrow().cmp(k))
    }

    /// The value for `k`.
    pub fn get<Q: Ord + ?Sized>(&self, k: &Q) -> Option<&V>
    where
        K: Borrow<Q>,
    {
        self.find(k).ok().map(|i| &self.0[i].1)
    }

    /// The value for `k`, mutably.
    pub fn get_mut<Q: Ord + ?Sized>(&mut self, k: &Q) -> Option<&mut V>
    where
        K: Borrow<Q>,
    {
        self.find(k).ok().map(|i| &mut self.0[i].1)
    }

    /// True when `k` has a value.
    pub fn contains_key<Q: Ord + ?Sized>(&self, k: &Q) -> bool
    where
        K: Borrow<Q>,
    {
        self.find(k).is_ok()
    }

    /// Set the value of `k`; the previous one, if any.
    pub fn insert(&mut self, k: K, v: V) -> Option<V> {
        match self.find(&k) {
            Ok(i) => Some(std::mem::replace(&mut self.0[i].1, v)),
            Err(i) => {
                self.0.insert(i, (k, v));
                None
            }
        }
    }

    /// The value of `k`, inserting `make()` first when there is none.
    pub fn get_or_insert_with(&mut self, k: K, make: impl FnOnce() -> V) -> &mut V {
        let i = match self.find(&k) {
            Ok(i) => i,
            Err(i) => {
                self.0.insert(i, (k, make()));
                i
            }
        };
        &mut self.0[i].1
    }

    /// A map of pairs already in strictly ascending key order (as a sort by key leaves
    /// duplicate-free pairs).
    pub fn from_sorted(pairs: Vec<(K, V)>) -> Self {
        debug_assert!(pairs.windows(2).all(|w| w[0].0 < w[1].0));
        VecMap(pairs)
    }

    /// Remove `k`; its value, if any.
    pub fn remove<Q: Ord + ?Sized>(&mut self, k: &Q) -> Option<V>
    where
        K: Borrow<Q>,
    {
        self.find(k).ok().map(|i| self.0.remove(i).1)
    }
}

impl<K, V> VecMap<K, V> {
    /// Number of keys.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// True when there are no keys.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// `(key, value)` in ascending key order.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = (&K, &V)> + ExactSizeIterator {
        self.0.iter().map(|(k, v)| (k, v))
    }

    /// The pairs in ascending key order.
    pub fn as_slice(&self) -> &[(K, V)] {
        &self.0
    }

    /// The pairs in ascending key order, owned.
    pub fn into_vec(self) -> Vec<(K, V)> {
        self.0
    }

    /// Keys in ascending order.
    pub fn keys(&self) -> impl DoubleEndedIterator<Item = &K> + ExactSizeIterator {
        self.0.iter().map(|(k, _)| k)
    }

    /// Values in key order.
    pub fn values(&self) -> impl DoubleEndedIterator<Item = &V> + ExactSizeIterator {
        self.0.iter().map(|(_, v)| v)
    }

    /// Values in key order, mutably.
    pub fn values_mut(&mut self) -> impl DoubleEndedIterator<Item = &mut V> + ExactSizeIterator {
        self.0.iter_mut().map(|(_, v)| v)
    }
}

impl<'a, K, V> IntoIterator for &'a VecMap<K, V> {
    type Item = (&'a K, &'a V);
    type IntoIter = std::iter::Map<std::slice::Iter<'a, (K, V)>, fn(&'a (K, V)) -> (&'a K, &'a V)>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.iter().map(|(k, v)| (k, v))
    }
}

impl<K, V> IntoIterator for VecMap<K, V> {
    type Item = (K, V);
    type IntoIter = std::vec::IntoIter<(K, V)>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.into_iter()
    }
}

/// Later pairs win over earlier ones with the same key (as `BTreeMap::from_iter`).
impl<K: Ord, V> FromIterator<(K, V)> for VecMap<K, V> {
    fn from_iter<I: IntoIterator<Item = (K, V)>>(it: I) -> Self {
        let mut m = VecMap::new();
        for (k, v) in it {
            m.insert(k, v);
        }
        m
    }
}

impl<K: Ord, V, const N: usize> From<[(K, V); N]> for VecMap<K, V> {
    fn from(pairs: [(K, V); N]) -> Self {
        let mut m = VecMap::new();
        for (k, v) in pairs {
            m.insert(k, v);
        }
        m
    }
}

impl<K: fmt::Debug, V: fmt::Debug> fmt::Debug for VecMap<K, V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

impl<V: crate::json::FromJson> crate::json::FromJson for VecMap<String, V> {
    fn from_json(v: crate::json::Value) -> crate::json::DResult<Self> {
        let mut out = VecMap::new();
        for (k, x) in crate::json::object(v)? {
            match V::from_json(x) {
                Ok(x) => {
                    out.insert(k, x);
                }
                Err(e) => return Err(e.at(&k)),
            }
        }
        Ok(out)
    }
}

impl<V: crate::json::out::ToJson> crate::json::out::ToJson for VecMap<String, V> {
    fn write_json(&self, out: &mut String) {
        out.push('{');
        for (i, (k, v)) in self.iter().enumerate() {
            crate::json::out::key(out, i == 0, k);
            v.write_json(out);
        }
        out.push('}');
    }
}

/// Integer keys are written as their decimal text, as `serde_json` writes them.
impl<V: crate::json::out::ToJson> crate::json::out::ToJson for VecMap<u32, V> {
    fn write_json(&self, out: &mut String) {
        out.push('{');
        for (i, (k, v)) in self.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            out.push('"');
            crate::json::out::unsigned(out, u64::from(*k));
            out.push_str("\":");
            v.write_json(out);
        }
        out.push('}');
    }
}

impl<K: serde::Serialize, V: serde::Serialize> serde::Serialize for VecMap<K, V> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_map(self.iter())
    }
}

impl<'de, K: Ord + serde::Deserialize<'de>, V: serde::Deserialize<'de>> serde::Deserialize<'de>
    for VecMap<K, V>
{
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(std::collections::BTreeMap::<K, V>::deserialize(d)?
            .into_iter()
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeMap;

    proptest! {
        #[test]
        fn behaves_like_btreemap(ops in proptest::collection::vec((0u8..3, 0u8..12, any::<u16>()), 0..60)) {
            let mut a = VecMap::new();
            let mut b = BTreeMap::new();
            for (op, k, v) in ops {
                match op {
                    0 => prop_assert_eq!(a.insert(k, v), b.insert(k, v)),
                    1 => prop_assert_eq!(a.remove(&k), b.remove(&k)),
                    _ => {
                        // Wrapping: a value inserted as u16::MAX then bumped (a kept
                        // counterexample of this property's own arithmetic).
                        let x = a.get_or_insert_with(k, || 0);
                        *x = x.wrapping_add(1u16.min(v));
                        let y = b.entry(k).or_insert(0);
                        *y = y.wrapping_add(1u16.min(v));
                    }
                }
                prop_assert_eq!(a.get(&k), b.get(&k));
                prop_assert_eq!(a.iter().collect::<Vec<_>>(), b.iter().collect::<Vec<_>>());
            }
            let text: VecMap<String, u16> = a.iter().map(|(k, v)| (k.to_string(), *v)).collect();
            let tree: BTreeMap<String, u16> = b.iter().map(|(k, v)| (k.to_string(), *v)).collect();
            prop_assert_eq!(crate::json::out::to_string(&text), serde_json::to_string(&tree).unwrap());
            prop_assert_eq!(format!("{text:?}"), format!("{tree:?}"));
            let ints: VecMap<u32, u16> = a.iter().map(|(k, v)| (u32::from(*k) * 1000, *v)).collect();
            let int_tree: BTreeMap<u32, u16> = b.iter().map(|(k, v)| (u32::from(*k) * 1000, *v)).collect();
            prop_assert_eq!(crate::json::out::to_string(&ints), serde_json::to_string(&int_tree).unwrap());
            prop_assert_eq!(VecMap::from_sorted(ints.clone().into_vec()), ints);
        }
    }
}
