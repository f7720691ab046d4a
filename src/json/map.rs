//! The JSON object of [`super::value`]: members in insertion order in one vector.
//!
//! As `serde_json`'s map under `preserve_order`: inserting an existing key replaces its value in
//! place, [`Map::remove`] is a swap-remove, equality ignores member order. Lookups are linear
//! (host objects hold a handful of members); a parsed object with many members is
//! de-duplicated by one sort ([`Map::from_parsed`]).

// The methods are `serde_json::Map`'s, by name and behaviour; each is a line or two.
#![allow(missing_docs)]

use super::value::{Map, Value};

impl Default for Map<String, Value> {
    fn default() -> Self {
        Map::new()
    }
}

impl Map<String, Value> {
    pub fn new() -> Self {
        Map { m: Vec::new() }
    }

    pub fn with_capacity(n: usize) -> Self {
        Map {
            m: Vec::with_capacity(n),
        }
    }

    pub fn len(&self) -> usize {
        self.m.len()
    }

    pub fn is_empty(&self) -> bool {
        self.m.is_empty()
    }

    pub fn clear(&mut self) {
        self.m.clear();
    }

    fn position(&self, key: &str) -> Option<usize> {
        self.m.iter().position(|(k, _)| k == key)
    }

    pub fn get(&self, key: &str) -> Option<&Value> {
        self.m.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    pub fn get_mut(&mut self, key: &str) -> Option<&mut Value> {
        self.m.iter_mut().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    pub fn contains_key(&self, key: &str) -> bool {
        self.position(key).is_some()
    }

    /// Insert or replace (a replaced member keeps its position); the old value.
    pub fn insert(&mut self, key: String, v: Value) -> Option<Value> {
        match self.position(&key) {
            Some(i) => Some(std::mem::replace(&mut self.m[i].1, v)),
            None => {
                self.m.push((key, v));
                None
            }
        }
    }

    /// The member `key`, added as `null` when missing.
    pub(crate) fn entry_or_null(&mut self, key: &str) -> &mut Value {
        let i = match self.position(key) {
            Some(i) => i,
            None => {
                self.m.push((key.to_string(), Value::Null));
                self.m.len() - 1
            }
        };
        &mut self.m[i].1
    }

    /// Remove `key`; the last member moves into its place (`serde_json`'s `remove` under
    /// `preserve_order`).
    pub fn remove(&mut self, key: &str) -> Option<Value> {
        self.swap_remove(key)
    }

    pub fn swap_remove(&mut self, key: &str) -> Option<Value> {
        self.position(key).map(|i| self.m.swap_remove(i).1)
    }

    /// Remove `key`, keeping the order of the others.
    pub fn shift_remove(&mut self, key: &str) -> Option<Value> {
        self.position(key).map(|i| self.m.remove(i).1)
    }

    pub fn retain(&mut self, mut keep: impl FnMut(&String, &mut Value) -> bool) {
        self.m.retain_mut(|(k, v)| keep(k, v));
    }

    pub fn iter(&self) -> Iter<'_> {
        self.into_iter()
    }

    pub fn iter_mut(&mut self) -> IterMut<'_> {
        self.into_iter()
    }

    pub fn keys(&self) -> impl Iterator<Item = &String> + '_ {
        self.m.iter().map(|(k, _)| k)
    }

    pub fn values(&self) -> impl Iterator<Item = &Value> + '_ {
        self.m.iter().map(|(_, v)| v)
    }

    pub fn values_mut(&mut self) -> impl Iterator<Item = &mut Value> + '_ {
        self.m.iter_mut().map(|(_, v)| v)
    }

    /// A parsed object's members in text order: a repeated key keeps its first position and
    /// its last value (what inserting them one by one gives), in O(n log n).
    pub(crate) fn from_parsed(mut m: Vec<(String, Value)>) -> Self {
        if m.len() > 1 {
            Map::dedup_parsed(&mut m);
        }
        Map { m }
    }

    fn dedup_parsed(m: &mut Vec<(String, Value)>) {
        if m.len() <= 8 {
            let mut i = 1;
            while i < m.len() {
                match m[..i].iter().position(|(k, _)| *k == m[i].0) {
                    Some(j) => {
                        let (_, v) = m.remove(i);
                        m[j].1 = v;
                    }
                    None => i += 1,
                }
            }
            return;
        }
        let mut idx: Vec<u32> = (0..m.len() as u32).collect();
        crate::sort::sort_by(&mut idx, |a, b| m[*a as usize].0.cmp(&m[*b as usize].0));
        if idx
            .windows(2)
            .all(|w| m[w[0] as usize].0 != m[w[1] as usize].0)
        {
            return;
        }
        // Runs of equal keys (ascending positions, the sort being stable): the first position
        // takes the last value, the others go.
        let mut drop = vec![false; m.len()];
        let mut moves = Vec::new();
        let mut a = 0;
        while a < idx.len() {
            let mut z = a + 1;
            while z < idx.len() && m[idx[z] as usize].0 == m[idx[a] as usize].0 {
                z += 1;
            }
            if z - a > 1 {
                moves.push((idx[a] as usize, idx[z - 1] as usize));
                for &i in &idx[a + 1..z] {
                    drop[i as usize] = true;
                }
            }
            a = z;
        }
        for (first, last) in moves {
            let v = std::mem::take(&mut m[last].1);
            m[first].1 = v;
        }
        let mut k = 0;
        m.retain(|_| {
            k += 1;
            !drop[k - 1]
        });
    }
}

impl PartialEq for Map<String, Value> {
    /// Same members with equal values, in any order (as `serde_json`'s map).
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len()
            && self
                .m
                .iter()
                .all(|(k, v)| other.get(k).is_some_and(|w| w == v))
    }
}

impl std::ops::Index<&str> for Map<String, Value> {
    type Output = Value;

    fn index(&self, key: &str) -> &Value {
        self.get(key).expect("no entry found for key")
    }
}

pub type Iter<'a> = std::iter::Map<
    std::slice::Iter<'a, (String, Value)>,
    fn(&'a (String, Value)) -> (&'a String, &'a Value),
>;
pub type IterMut<'a> = std::iter::Map<
    std::slice::IterMut<'a, (String, Value)>,
    fn(&'a mut (String, Value)) -> (&'a String, &'a mut Value),
>;

impl<'a> IntoIterator for &'a Map<String, Value> {
    type Item = (&'a String, &'a Value);
    type IntoIter = Iter<'a>;

    fn into_iter(self) -> Iter<'a> {
        self.m.iter().map(|(k, v)| (k, v))
    }
}

impl<'a> IntoIterator for &'a mut Map<String, Value> {
    type Item = (&'a String, &'a mut Value);
    type IntoIter = IterMut<'a>;

    fn into_iter(self) -> IterMut<'a> {
        self.m.iter_mut().map(|(k, v)| (&*k, v))
    }
}

impl IntoIterator for Map<String, Value> {
    type Item = (String, Value);
    type IntoIter = std::vec::IntoIter<(String, Value)>;

    fn into_iter(self) -> Self::IntoIter {
        self.m.into_iter()
    }
}

impl FromIterator<(String, Value)> for Map<String, Value> {
    fn from_iter<I: IntoIterator<Item = (String, Value)>>(it: I) -> Self {
        let mut m = Map::new();
        m.extend(it);
        m
    }
}

impl Extend<(String, Value)> for Map<String, Value> {
    fn extend<I: IntoIterator<Item = (String, Value)>>(&mut self, it: I) {
        for (k, v) in it {
            self.insert(k, v);
        }
    }
}
