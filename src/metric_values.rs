//! The figures of one record, by metric name: what `Record::metrics` holds. A year of records
//! is held in memory by a report, so this is a sorted list of (name, value) pairs with the
//! names interned (each name's text is stored once for the process), not a map with a string
//! per entry: a tenth of the heap blocks and a third of the bytes. It reads like the map it
//! replaces (`get`, `contains_key`, `iter`, `metrics["write_iops"]`) and serialises to the
//! same JSON object, in name order.

use std::cell::RefCell;
use std::collections::HashSet;
use std::fmt;

use serde::de::{MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

thread_local! {
    /// Every metric name met, stored once (leaked): the names are a small set in practice,
    /// and at most as many as a history's distinct keys.
    static NAMES: RefCell<HashSet<&'static str>> = RefCell::new(HashSet::new());
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

/// A record's metrics: name → value, in name order, each name once.
#[derive(Clone, Default, PartialEq)]
pub struct Metrics(Vec<(&'static str, f64)>);

impl Metrics {
    pub fn new() -> Metrics {
        Metrics(Vec::new())
    }

    fn find(&self, name: &str) -> Result<usize, usize> {
        self.0.binary_search_by(|(k, _)| (*k).cmp(name))
    }

    /// The value of `name` (a `str` or a `String`, as the map took).
    pub fn get<Q: AsRef<str> + ?Sized>(&self, name: &Q) -> Option<&f64> {
        self.find(name.as_ref()).ok().map(|i| &self.0[i].1)
    }

    pub fn contains_key<Q: AsRef<str> + ?Sized>(&self, name: &Q) -> bool {
        self.find(name.as_ref()).is_ok()
    }

    /// Sets `name` to `value`, returning the value it replaces. Takes a `String` as the
    /// map's `insert` did, so that `"name".into()` stays unambiguous.
    pub fn insert(&mut self, name: String, value: f64) -> Option<f64> {
        match self.find(&name) {
            Ok(i) => Some(std::mem::replace(&mut self.0[i].1, value)),
            Err(i) => {
                self.0.insert(i, (intern(&name), value));
                None
            }
        }
    }

    pub fn remove(&mut self, name: &str) -> Option<f64> {
        self.find(name).ok().map(|i| self.0.remove(i).1)
    }

    pub fn clear(&mut self) {
        self.0.clear();
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// (name, value) in name order.
    pub fn iter(&self) -> impl Iterator<Item = (&'static str, &f64)> + '_ {
        self.0.iter().map(|(k, v)| (*k, v))
    }

    pub fn keys(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.0.iter().map(|(k, _)| *k)
    }

    pub fn values(&self) -> impl Iterator<Item = &f64> + '_ {
        self.0.iter().map(|(_, v)| v)
    }

    /// From pairs in any order; a name given twice keeps its last value, as a map would.
    fn from_pairs(mut v: Vec<(&'static str, f64)>) -> Metrics {
        // Stable: of equal names the last given ends last, and is the one kept.
        v.sort_by(|a, b| a.0.cmp(b.0));
        let mut out: Vec<(&'static str, f64)> = Vec::with_capacity(v.len());
        for (k, x) in v {
            match out.last_mut() {
                Some(last) if last.0 == k => last.1 = x,
                _ => out.push((k, x)),
            }
        }
        out.shrink_to_fit();
        Metrics(out)
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
    type IntoIter = std::iter::Map<
        std::slice::Iter<'a, (&'static str, f64)>,
        fn(&'a (&'static str, f64)) -> (&'static str, &'a f64),
    >;
    fn into_iter(self) -> Self::IntoIter {
        self.0.iter().map(|(k, v)| (*k, v))
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
        let mut m = s.serialize_map(Some(self.0.len()))?;
        for (k, v) in &self.0 {
            m.serialize_entry(k, v)?;
        }
        m.end()
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
                let mut v = Vec::with_capacity(map.size_hint().unwrap_or(0));
                // Borrowed where the text allows (no escapes), else owned: interned either way.
                while let Some(k) = map.next_key::<std::borrow::Cow<'de, str>>()? {
                    let x: f64 = map.next_value()?;
                    v.push((intern(&k), x));
                }
                Ok(Metrics::from_pairs(v))
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
