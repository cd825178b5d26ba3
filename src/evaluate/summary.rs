//! The summary's statistics of every metric the judged runs have, and the per-day figures.
//!
//! A run of a long window holds only the figures its policy's rules and the warnings read
//! (`run_index::Run::holding`); the statistics of the other metrics are taken from the runs'
//! records, read again from the history in passes over the window, holding no figure of any
//! run: the sums in the column's order (the mean, the spread, the interval: the same folds
//! as [`Stats::of`], so the same to the bit), and the median by the figures' places in
//! `f64::total_cmp`'s order, [`BITS`] more bits of it told apart each pass, until the
//! figures left around the middle are at most [`GATHER`], gathered and sorted. A few passes
//! (three or four for real figures), whatever the window; at most about 50 KiB a metric.

use std::collections::{BTreeMap, BTreeSet};

use chrono::NaiveDate;

use crate::policy::Aggregate;
use crate::run_index::{Records, Run};

use super::stats::{Stats, Sums, of_order_key, order_key};
use super::{Day, LatestDay, day_of};

/// Bits of a figure's place in order told apart in one pass: 2,048 counts for each middle
/// figure sought.
const BITS: u32 = 11;
/// Figures around the middle few enough to be gathered whole in the next pass and sorted.
const GATHER: u32 = 4096;

/// The statistics of every metric present in any of `runs`, one metric at a time from the
/// figures the runs hold, then the rest in passes over their records in `records`.
pub(super) fn metric_stats(
    runs: &[Run],
    records: &Records,
) -> std::io::Result<BTreeMap<String, Stats>> {
    // Runs of one kind share their lists of names (`Metrics::names`): a run whose lists are
    // the ones before it adds nothing.
    let mut names: Vec<&'static str> = Vec::new();
    let mut unheld: BTreeSet<&'static str> = BTreeSet::new();
    let mut last: Option<(&[&str], &[&str])> = None;
    for r in runs {
        let lists = (r.names, r.metrics.names());
        if last.is_some_and(|l| std::ptr::eq(l.0, lists.0) && std::ptr::eq(l.1, lists.1)) {
            continue;
        }
        for k in lists.0 {
            if !names.contains(k) {
                names.push(k);
            }
            if !lists.1.contains(k) {
                unheld.insert(k);
            }
        }
        last = Some(lists);
    }
    let mut metrics: BTreeMap<String, Stats> = BTreeMap::new();
    let mut column: Vec<f64> = Vec::new();
    for m in names.iter().filter(|m| !unheld.contains(*m)) {
        column.clear();
        let mut last: Option<&[&str]> = None;
        let mut slot: Option<usize> = None;
        for r in runs {
            let list = r.metrics.names();
            if !last.is_some_and(|l| std::ptr::eq(l, list)) {
                slot = list.iter().position(|k| k == m);
                last = Some(list);
            }
            if let Some(i) = slot {
                column.push(r.metrics.figures()[i]);
            }
        }
        if let Some(s) = Stats::of(&column) {
            metrics.insert(m.to_string(), s);
        }
    }
    drop(column);
    // An evaluation only judged, never listed (a fleet's node, `Records::None`): the
    // statistics of what its runs hold are all that is read of it.
    if matches!(records, Records::None) {
        return Ok(metrics);
    }
    let mut streams: Vec<Stream> = unheld.into_iter().map(Stream::new).collect();
    let mut pass = 0;
    // A run's figures, in the order of its names; and, for the runs' last list of names, the
    // streams still gathering with the place of their figure in it (worked out once a list).
    let mut figures: Vec<f64> = Vec::new();
    let mut places: Vec<(usize, usize)> = Vec::new();
    while streams.iter().any(|s| !s.done(pass)) {
        let mut reader = records.reader();
        let mut last: Option<&[&str]> = None;
        for r in runs {
            if !last.is_some_and(|l| std::ptr::eq(l, r.names)) {
                places.clear();
                for (i, s) in streams.iter().enumerate() {
                    if s.done(pass) {
                        continue;
                    }
                    if let Some(p) = r.names.iter().position(|k| *k == s.name) {
                        places.push((i, p));
                    }
                }
                last = Some(r.names);
            }
            if places.is_empty() {
                continue;
            }
            reader.figures(r, &mut figures)?;
            for &(i, p) in &places {
                streams[i].add(figures[p], pass);
            }
        }
        for s in &mut streams {
            s.settle(pass);
        }
        pass += 1;
    }
    for s in &streams {
        if let Some(stats) = s.stats() {
            metrics.insert(s.name.to_string(), stats);
        }
    }
    Ok(metrics)
}

/// `metric` over the runs of the latest day that measured it (runs are in time order).
pub(super) fn latest_day(runs: &[Run], metric: &str, agg: Aggregate) -> Option<LatestDay> {
    let date = runs
        .iter()
        .rev()
        .find(|r| r.metrics.get(metric).is_some())
        .map(day_of)?;
    let v: Vec<f64> = runs
        .iter()
        .rev()
        .take_while(|r| day_of(*r) >= date)
        .filter(|r| day_of(*r) == date)
        .filter_map(|r| r.metrics.get(metric).copied())
        .collect();
    Some(LatestDay {
        date,
        runs: v.len(),
        value: Stats::of(&v)?.aggregate(agg),
    })
}

pub(super) fn per_day(runs: &[Run], metric: &str) -> Vec<Day> {
    let mut by_day: BTreeMap<NaiveDate, Vec<f64>> = BTreeMap::new();
    for r in runs {
        if let Some(&v) = r.metrics.get(metric) {
            by_day.entry(day_of(r)).or_default().push(v);
        }
    }
    by_day
        .into_iter()
        .map(|(date, v)| {
            let s = Stats::of(&v).expect("non-empty");
            Day {
                date,
                runs: v.len(),
                mean: s.mean,
                min: s.min,
                max: s.max,
            }
        })
        .collect()
}

/// The figures a judged run must hold for `policy`: its rules' metrics (the fleet's and a
/// device set's too) and what the warnings and the tables read of every run (runtimes, the
/// end fsync). A stored list, one per
/// distinct set (see `Metrics::only`).
pub fn held_metrics(policy: &crate::policy::Policy) -> &'static [&'static str] {
    thread_local! {
        static LISTS: std::cell::RefCell<Vec<&'static [&'static str]>> =
            const { std::cell::RefCell::new(Vec::new()) };
    }
    let mut want: Vec<&str> = ["write_runtime_ms", "read_runtime_ms", "end_fsync_ms"].to_vec();
    let spread = policy
        .devices
        .iter()
        .flat_map(|d| &d.spread)
        .map(|s| &s.metric);
    let fleet = policy.fleet.iter().map(|f| &f.metric);
    for m in policy
        .rules
        .iter()
        .map(|r| &r.metric)
        .chain(fleet)
        .chain(spread)
    {
        if !want.contains(&m.as_str()) {
            want.push(m);
        }
    }
    want.sort_unstable();
    LISTS.with(|l| {
        let mut l = l.borrow_mut();
        if let Some(k) = l.iter().find(|k| **k == want.as_slice()) {
            return *k;
        }
        let k: &'static [&'static str] = Box::leak(
            want.iter()
                .map(|m| &*Box::leak(m.to_string().into_boxed_str()))
                .collect::<Vec<&'static str>>()
                .into_boxed_slice(),
        );
        l.push(k);
        k
    })
}

/// One metric's statistics, gathered in passes over figures read again.
struct Stream {
    name: &'static str,
    n: usize,
    sum: f64,
    min: f64,
    max: f64,
    positive: bool,
    sum_ln: f64,
    squares: f64,
    squares_ln: f64,
    /// The first pass's counts of the figures by the top bits of their places in order.
    first: Vec<u32>,
    /// The middle figures sought (one, or two for an even count), once the count is known.
    middle: Vec<Middle>,
}

/// A figure sought by its rank in order.
struct Middle {
    /// Its rank among the figures of the bucket it is known to be in.
    rank: usize,
    /// The top `known` bits of its place in order.
    prefix: u64,
    known: u32,
    /// This pass's counts of the bucket's figures by their next bits.
    counts: Vec<u32>,
    /// The bucket's figures, once they are few.
    gathered: Option<Vec<f64>>,
    found: Option<f64>,
}

impl Middle {
    /// Where a figure's place `key` falls in this pass's counts, if in the bucket.
    fn slot(&self, key: u64) -> Option<usize> {
        if self.known > 0 && key >> (64 - self.known) != self.prefix {
            return None;
        }
        let bits = self.counts.len().trailing_zeros();
        Some(((key << self.known) >> (64 - bits)) as usize)
    }

    /// After a pass: the figure, or the narrower bucket it is in.
    fn settle(&mut self, counts: &[u32]) {
        if let Some(mut g) = self.gathered.take() {
            g.sort_by(f64::total_cmp);
            self.found = Some(g[self.rank]);
            return;
        }
        let bits = counts.len().trailing_zeros();
        let mut before = 0usize;
        for (b, &c) in counts.iter().enumerate() {
            if self.rank < before + c as usize {
                self.prefix = if self.known == 0 {
                    b as u64
                } else {
                    (self.prefix << bits) | b as u64
                };
                self.known += bits;
                self.rank -= before;
                if self.known == 64 {
                    self.found = Some(of_order_key(self.prefix));
                } else if c <= GATHER {
                    self.gathered = Some(Vec::with_capacity(c as usize));
                    self.counts = Vec::new();
                } else {
                    self.counts = vec![0; 1 << BITS.min(64 - self.known)];
                }
                return;
            }
            before += c as usize;
        }
        unreachable!("the rank is within the figures counted");
    }
}

impl Stream {
    fn new(name: &'static str) -> Stream {
        // Each sum starts where `Iterator::sum` starts, so that it is the same fold.
        let zero = || std::iter::empty::<f64>().sum::<f64>();
        Stream {
            name,
            n: 0,
            sum: zero(),
            min: f64::NAN,
            max: f64::NAN,
            positive: true,
            sum_ln: zero(),
            squares: zero(),
            squares_ln: zero(),
            first: vec![0; 1 << BITS],
            middle: Vec::new(),
        }
    }

    /// Whether the statistics are complete before pass `pass`.
    fn done(&self, pass: usize) -> bool {
        pass >= 2 && self.middle.iter().all(|m| m.found.is_some()) || pass >= 1 && self.n == 0
    }

    /// A figure of this metric, in pass `pass` (the runs in the column's order).
    fn add(&mut self, x: f64, pass: usize) {
        // As `Stats::of`, finite figures only.
        if !x.is_finite() {
            return;
        }
        let key = order_key(x);
        if pass == 0 {
            if self.n == 0 {
                (self.min, self.max) = (x, x);
            }
            self.n += 1;
            self.sum += x;
            if x.total_cmp(&self.min).is_lt() {
                self.min = x;
            }
            if x.total_cmp(&self.max).is_ge() {
                self.max = x;
            }
            self.positive &= x > 0.0;
            self.sum_ln += x.ln();
            self.first[(key >> (64 - BITS)) as usize] += 1;
            return;
        }
        if pass == 1 {
            let mean = self.sum / self.n as f64;
            self.squares += (x - mean).powi(2);
            if self.positive {
                let ly = self.sum_ln / self.n as f64;
                self.squares_ln += (x.ln() - ly).powi(2);
            }
        }
        for m in self.middle.iter_mut().filter(|m| m.found.is_none()) {
            let Some(slot) = m.slot(key) else {
                continue;
            };
            match &mut m.gathered {
                Some(g) => g.push(x),
                None => m.counts[slot] += 1,
            }
        }
    }

    /// After pass `pass`: the middle figures sought, or nearer.
    fn settle(&mut self, pass: usize) {
        if pass == 0 {
            if self.n == 0 {
                return;
            }
            let ranks = if self.n % 2 == 1 {
                vec![self.n / 2]
            } else {
                vec![self.n / 2 - 1, self.n / 2]
            };
            let first = std::mem::take(&mut self.first);
            for rank in ranks {
                let mut m = Middle {
                    rank,
                    prefix: 0,
                    known: 0,
                    counts: Vec::new(),
                    gathered: None,
                    found: None,
                };
                m.settle(&first);
                self.middle.push(m);
            }
            return;
        }
        for m in self.middle.iter_mut().filter(|m| m.found.is_none()) {
            let counts = std::mem::take(&mut m.counts);
            m.settle(&counts);
        }
    }

    fn stats(&self) -> Option<Stats> {
        if self.n == 0 {
            return None;
        }
        let found = |i: usize| self.middle[i].found.expect("every pass made");
        let median = match self.middle.len() {
            1 => found(0),
            _ => (found(0) + found(1)) / 2.0,
        };
        Some(Stats::of_sums(&Sums {
            n: self.n,
            sum: self.sum,
            min: self.min,
            max: self.max,
            median,
            squares: self.squares,
            logs: self.positive.then_some((self.sum_ln, self.squares_ln)),
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The statistics gathered in passes are those of the column held whole, to the bit,
    /// for columns of repeated, negative, zero, tiny and huge figures and counts odd and even.
    #[test]
    fn statistics_in_passes_are_those_of_the_whole_column() {
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let mut columns: Vec<Vec<f64>> = vec![
            vec![5.0],
            vec![2.0, 1.0],
            vec![0.0, -0.0, 0.0, 3.0],
            vec![7.0; 10_001],
            vec![-3.5, 1e-300, 1e300, 4.0, f64::NAN, f64::INFINITY, 2.0],
        ];
        for n in [3usize, 4, 4096, 4097, 20_000, 20_001] {
            columns.push(
                (0..n)
                    .map(|_| 4000.0 + (next() % 1000) as f64 / 7.0)
                    .collect(),
            );
            columns.push((0..n).map(|_| f64::from_bits(next() >> 2)).collect());
            columns.push((0..n).map(|_| (next() % 5) as f64).collect());
        }
        for c in &columns {
            let mut s = Stream::new("m");
            let mut pass = 0;
            while !s.done(pass) {
                for &x in c {
                    s.add(x, pass);
                }
                s.settle(pass);
                pass += 1;
            }
            let want = Stats::of(c);
            let got = s.stats();
            assert_eq!(
                format!("{got:?}"),
                format!("{want:?}"),
                "{} figures",
                c.len()
            );
            assert!(pass <= 8, "{pass} passes");
        }
    }
}
