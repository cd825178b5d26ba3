//! The figures of one record, by metric name: what `Record::metrics` holds. A year of records
//! is held in memory by a report, so this is not a map with a string per entry: the names are
//! interned as a whole sorted list (each distinct list of names is stored once for the
//! process, and records of one kind all have the same list), and a record holds only a
//! pointer to its list and its values. It reads like the map it replaces (`get`,
//! `contains_key`, `iter`, `metrics["write_iops"]`) and serialises to the same JSON object, in
//! name order.

use std::cell::{Cell, RefCell};
use std::collections::HashSet;
use std::fmt;

use serde::de::{DeserializeSeed, MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

type Names = &'static [&'static str];

thread_local! {
    /// Every metric name met, stored once (leaked): the names are a small set in practice,
    /// and at most as many as a history's distinct keys.
    static NAMES: RefCell<HashSet<&'static str>> = RefCell::new(HashSet::new());
    /// Every list of names met, stored once (leaked): as few as the kinds of records read.
    static LISTS: RefCell<HashSet<Names>> = RefCell::new(HashSet::new());
    /// The list of the last record read: the next record almost always has the same, in the
    /// same order, and is then read without hashing or sorting anything.
    static LAST: Cell<Names> = const { Cell::new(&[]) };
}

/// The one stored copy of `name`.
fn intern(name: &str) -> &'static str {
    NAMES.with(|n| {
        let mut n = n.borrow_mut();
        if let Some(s) = n.get(name) {
            return *s;
        }
        let s: &'static str = Box::leak(name.to_owned().into_boxed_str());
        n.insert(s);
        s
    })
}

/// The one stored copy of a sorted list of interned names.
fn intern_list(names: &[&'static str]) -> Names {
    if names.is_empty() {
        return &[];
    }
    LISTS.with(|l| {
        let mut l = l.borrow_mut();
        if let Some(s) = l.get(names) {
            return *s;
        }
        let s: Names = Box::leak(names.to_vec().into_boxed_slice());
        l.insert(s);
        s
    })
}

/// A record's metrics: name → value, in name order, each name once.
#[derive(Clone, Default, PartialEq)]
pub struct Metrics {
    names: Names,
    values: Box<[f64]>,
}

impl Metrics {
    pub fn new() -> Metrics {
        Metrics::default()
    }

    fn find(&self, name: &str) -> Result<usize, usize> {
        self.names.binary_search_by(|k| (*k).cmp(name))
    }

    /// The value of `name` (a `str` or a `String`, as the map took).
    pub fn get<Q: AsRef<str> + ?Sized>(&self, name: &Q) -> Option<&f64> {
        self.find(name.as_ref()).ok().map(|i| &self.values[i])
    }

    pub fn contains_key<Q: AsRef<str> + ?Sized>(&self, name: &Q) -> bool {
        self.find(name.as_ref()).is_ok()
    }

    /// Sets `name` to `value`, returning the value it replaces. Takes a `String` as the
    /// map's `insert` did, so that `"name".into()` stays unambiguous.
    pub fn insert(&mut self, name: String, value: f64) -> Option<f64> {
        match self.find(&name) {
            Ok(i) => Some(std::mem::replace(&mut self.values[i], value)),
            Err(i) => {
                let mut names = self.names.to_vec();
                names.insert(i, intern(&name));
                let mut values = std::mem::take(&mut self.values).into_vec();
                values.insert(i, value);
                self.names = intern_list(&names);
                self.values = values.into_boxed_slice();
                None
            }
        }
    }

    pub fn remove(&mut self, name: &str) -> Option<f64> {
        let i = self.find(name).ok()?;
        let mut names = self.names.to_vec();
        names.remove(i);
        let mut values = std::mem::take(&mut self.values).into_vec();
        let v = values.remove(i);
        self.names = intern_list(&names);
        self.values = values.into_boxed_slice();
        Some(v)
    }

    pub fn clear(&mut self) {
        *self = Metrics::default();
    }

    pub fn len(&self) -> usize {
        self.values.len()
    }

    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// (name, value) in name order.
    pub fn iter(&self) -> impl Iterator<Item = (&'static str, &f64)> + '_ {
        self.names.iter().copied().zip(self.values.iter())
    }

    pub fn keys(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.names.iter().copied()
    }

    /// The names, in order: the one stored list that every record of the same kind shares
    /// (two records have the same names exactly when these are the same slice).
    pub fn names(&self) -> &'static [&'static str] {
        self.names
    }

    pub fn values(&self) -> impl Iterator<Item = &f64> + '_ {
        self.values.iter()
    }

    /// The values, in the order of [`names`](Self::names).
    pub fn figures(&self) -> &[f64] {
        &self.values
    }

    /// The figures of the names `keep` lists (any order), the others dropped: what a judged
    /// run of a long window holds (`run_index::Run::holding`). Worked out once per list of
    /// names, as runs of one kind share one (`keep` is a stored list, never freed, so that
    /// it is known by its place).
    pub fn only(&self, keep: &'static [&'static str]) -> Metrics {
        thread_local! {
            /// The last list seen and, for the last `keep`, the places kept and their names.
            static ONLY: RefCell<(usize, usize, Vec<usize>, Names)> =
                const { RefCell::new((0, 0, Vec::new(), &[])) };
        }
        ONLY.with(|o| {
            let mut o = o.borrow_mut();
            let (list, wanted) = (self.names.as_ptr() as usize, keep.as_ptr() as usize);
            if o.0 != list || o.1 != wanted {
                let places: Vec<usize> = (0..self.names.len())
                    .filter(|&i| keep.contains(&self.names[i]))
                    .collect();
                let names: Vec<&'static str> = places.iter().map(|&i| self.names[i]).collect();
                *o = (list, wanted, places, intern_list(&names));
            }
            Metrics {
                names: o.3,
                values: o.2.iter().map(|&i| self.values[i]).collect(),
            }
        })
    }

    /// From pairs in any order; a name given twice keeps its last value, as a map would.
    fn from_pairs(mut v: Vec<(&'static str, f64)>) -> Metrics {
        // Stable: of equal names the last given ends last, and is the one kept.
        v.sort_by(|a, b| a.0.cmp(b.0));
        let mut names: Vec<&'static str> = Vec::with_capacity(v.len());
        let mut values: Vec<f64> = Vec::with_capacity(v.len());
        for (k, x) in v {
            match names.last() {
                Some(last) if *last == k => *values.last_mut().expect("as many") = x,
                _ => {
                    names.push(k);
                    values.push(x);
                }
            }
        }
        Metrics {
            names: intern_list(&names),
            values: values.into_boxed_slice(),
        }
    }
}

impl<K: AsRef<str>> FromIterator<(K, f64)> for Metrics {
    fn from_iter<I: IntoIterator<Item = (K, f64)>>(iter: I) -> Metrics {
        Metrics::from_pairs(
            iter.into_iter()
                .map(|(k, v)| (intern(k.as_ref()), v))
                .collect(),
        )
    }
}

impl<'a> IntoIterator for &'a Metrics {
    type Item = (&'static str, &'a f64);
    type IntoIter = std::iter::Zip<
        std::iter::Copied<std::slice::Iter<'static, &'static str>>,
        std::slice::Iter<'a, f64>,
    >;
    fn into_iter(self) -> Self::IntoIter {
        self.names.iter().copied().zip(self.values.iter())
    }
}

impl std::ops::Index<&str> for Metrics {
    type Output = f64;
    fn index(&self, name: &str) -> &f64 {
        self.get(name)
            .unwrap_or_else(|| panic!("no metric {name} in the record"))
    }
}

impl fmt::Debug for Metrics {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

impl Serialize for Metrics {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(self.values.len()))?;
        for (k, v) in self.iter() {
            m.serialize_entry(k, v)?;
        }
        m.end()
    }
}

/// A key read from the text: `Expected` when it is the name the last record had at this
/// place (compared without allocating or hashing), else the interned name.
enum Key {
    Expected,
    Name(&'static str),
}

struct KeySeed(Option<&'static str>);

impl<'de> DeserializeSeed<'de> for KeySeed {
    type Value = Key;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Key, D::Error> {
        d.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for KeySeed {
    type Value = Key;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a metric name")
    }
    fn visit_str<E: serde::de::Error>(self, k: &str) -> Result<Key, E> {
        Ok(if self.0 == Some(k) {
            Key::Expected
        } else {
            Key::Name(intern(k))
        })
    }
}

impl<'de> Deserialize<'de> for Metrics {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Metrics, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Metrics;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a map of metric names to numbers")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Metrics, A::Error> {
                let last = LAST.with(Cell::get);
                let mut values: Vec<f64> = Vec::with_capacity(last.len());
                // Set once a key differs from the last record's list: then pairs are gathered,
                // sorted and their list interned, as for any map.
                let mut pairs: Option<Vec<(&'static str, f64)>> = None;
                let mut i = 0;
                loop {
                    let expected = if pairs.is_none() {
                        last.get(i).copied()
                    } else {
                        None
                    };
                    let Some(key) = map.next_key_seed(KeySeed(expected))? else {
                        break;
                    };
                    let x: f64 = map.next_value()?;
                    match (key, &mut pairs) {
                        (Key::Expected, _) => values.push(x),
                        (Key::Name(k), Some(p)) => p.push((k, x)),
                        (Key::Name(k), None) => {
                            let mut p: Vec<(&'static str, f64)> =
                                last[..i].iter().copied().zip(values.drain(..)).collect();
                            p.push((k, x));
                            pairs = Some(p);
                        }
                    }
                    i += 1;
                }
                let m = match pairs {
                    None if i == last.len() => Metrics {
                        names: last,
                        values: values.into_boxed_slice(),
                    },
                    None => Metrics::from_pairs(last[..i].iter().copied().zip(values).collect()),
                    Some(p) => Metrics::from_pairs(p),
                };
                LAST.with(|l| l.set(m.names));
                Ok(m)
            }
        }
        d.deserialize_map(V)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    #[test]
    fn reads_and_writes_the_same_json_object_as_a_map_in_name_order() {
        let text =
            r#"{"write_iops":4000.5,"end_fsync_ms":12.0,"cpu_sys_pct":3.25,"write_iops":4100.0}"#;
        let m: Metrics = serde_json::from_str(text).unwrap();
        let map: BTreeMap<String, f64> = serde_json::from_str(text).unwrap();
        assert_eq!(
            serde_json::to_string(&m).unwrap(),
            serde_json::to_string(&map).unwrap()
        );
        assert_eq!(
            m.get("write_iops"),
            Some(&4100.0),
            "the last of a name given twice"
        );
        assert_eq!(
            m.keys().collect::<Vec<_>>(),
            ["cpu_sys_pct", "end_fsync_ms", "write_iops"]
        );
        // an escaped name is read as its text
        let m: Metrics = serde_json::from_str(r#"{"write\u005fiops":1.0}"#).unwrap();
        assert_eq!(m["write_iops"], 1.0);
        assert!(serde_json::from_str::<Metrics>(r#"{"write_iops":"fast"}"#).is_err());
    }

    #[test]
    fn behaves_as_the_map_it_replaces() {
        let mut m: Metrics = [("b", 2.0), ("a", 1.0)].into_iter().collect();
        assert_eq!(m.insert("c".to_string(), 3.0), None);
        assert_eq!(m.insert("a".into(), 10.0), Some(1.0));
        assert!(m.contains_key("b") && !m.contains_key("d"));
        assert_eq!(m.remove("b"), Some(2.0));
        assert_eq!(m.iter().collect::<Vec<_>>(), [("a", &10.0), ("c", &3.0)]);
        assert_eq!(m.len(), 2);
        m.clear();
        assert!(m.is_empty());
    }
}
