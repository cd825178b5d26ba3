//! The summary's statistics of every metric the judged runs have, and the per-day figures.
//!
//! A run of a long window holds only the figures its policy's rules and the warnings read
//! (`run_index::Run::holding`); the statistics of the other metrics are taken from the runs'
//! records, read again from the history in passes over the window, holding no figure of any
//! run: the sums in the column's order (the mean, the spread, the interval: the same folds
//! as [`Stats::of`], so the same to the bit), and the median by the figures' places in
//! `f64::total_cmp`'s order. The first pass counts the places by their top [`BITS`] bits, and
//! by the next [`BITS`] in the first [`FINER`] buckets met: the middle figure's bucket is then
//! known to 22 bits (about a thousandth of its value) for figures of one or two orders of
//! magnitude. The second pass, needed anyway for the spread, gathers that bucket's figures if
//! they are at most [`GATHER`], else tallies its different figures (a figure repeated, or a
//! few, however many times), and sorts them. Two passes for real figures and for figures that
//! repeat a few values, one where every figure is the same (the spread is then made without a
//! pass); more only where the middle figure's bucket is beyond the first [`FINER`] met, or
//! holds over [`GATHER`] figures of which over [`TALLY`] differ, each further pass counting 11
//! bits more with each bucket's least and greatest (a bucket of one figure is found in the
//! pass that picks it). Each metric holds at most about 40 KiB of counts in the first pass and
//! 80 KiB after.

use std::collections::{BTreeMap, BTreeSet, HashMap};

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
/// Different figures tallied in a bucket of more than [`GATHER`] before they are counted by
/// their bits instead (a tally of at most 1,024 takes about 34 KiB).
const TALLY: usize = 1024;
/// Buckets of the first pass (figures of the same sign and about the same order of magnitude:
/// the same top [`BITS`] bits of their places) whose next [`BITS`] bits are counted too, the
/// first met: figures of one or two orders of magnitude, as most metrics' are, are then known
/// to 22 bits after the first pass and gathered in the second.
const FINER: usize = 4;

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
    // For the runs' last list of names: the places in it of the figures this pass reads, in
    // order, and the stream each goes to (worked out once a list); a run's figures at them.
    let mut places: Vec<usize> = Vec::new();
    let mut to: Vec<usize> = Vec::new();
    let mut figures: Vec<f64> = Vec::new();
    while streams.iter().any(|s| s.wants(pass)) {
        let mut reader = records.reader();
        let mut last: Option<&[&str]> = None;
        for r in runs {
            if !last.is_some_and(|l| std::ptr::eq(l, r.names)) {
                let mut sought: Vec<(usize, usize)> = streams
                    .iter()
                    .enumerate()
                    .filter(|(_, s)| s.wants(pass))
                    .filter_map(|(i, s)| Some((r.names.iter().position(|k| *k == s.name)?, i)))
                    .collect();
                sought.sort_unstable();
                (places, to) = sought.into_iter().unzip();
                last = Some(r.names);
            }
            if places.is_empty() {
                continue;
            }
            reader.figures_at(r, &places, &mut figures)?;
            for (&i, &x) in to.iter().zip(&figures) {
                streams[i].add(x, pass);
            }
        }
        for s in &mut streams {
            if s.wants(pass) {
                s.settle(pass);
            }
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
/// device set's too) and what the deviation check, the warnings and the tables read of every
/// run (the runtimes: a run that measured less than the policy's runtime is not its test,
/// whatever its job states; the end fsync). A stored list, one per
/// distinct set (see `Metrics::only`).
pub fn held_metrics(policy: &crate::policy::Policy) -> &'static [&'static str] {
    thread_local! {
        static LISTS: std::cell::RefCell<Vec<&'static [&'static str]>> =
            const { std::cell::RefCell::new(Vec::new()) };
    }
    let mut want: Vec<&str> = ["write_runtime_ms", "read_runtime_ms", "end_fsync_ms"].to_vec();
    // a job that is not time-based is judged by the bytes it moved (deviation.rs)
    if !policy.job.time_based {
        want.extend(["write_ios", "read_ios"]);
    }
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

/// Counts of figures by [`BITS`] bits of their places in order after a prefix they share,
/// held in pieces of [`PIECE`] buckets, each made when a figure first falls in it (figures of
/// one or two orders of magnitude touch a few). With `bounds`, also the least and the greatest
/// place counted in each bucket: a bucket whose least and greatest are the same holds one
/// figure (repeated), and the figures of any other share the bits its least and greatest
/// share.
struct Hist {
    /// The top `known` bits every place counted here has.
    prefix: u64,
    known: u32,
    /// The bits of a place told apart here (after `known`).
    bits: u32,
    counts: Vec<Option<Box<[u32; PIECE]>>>,
    /// Per piece, each bucket's least and greatest place (empty without bounds).
    bounds: Vec<Option<Box<Bounds>>>,
}

/// A piece's buckets' least and greatest places.
type Bounds = [(u64, u64); PIECE];

/// Buckets of a [`Hist`] made at once.
const PIECE: usize = 64;

/// What a histogram tells of the figure of a rank: its bucket (its place's bits after the
/// histogram's prefix, and how many), the rank within it and, with bounds, its least and
/// greatest place.
struct Bucket {
    prefix: u64,
    known: u32,
    count: u32,
    rank: usize,
    bounds: Option<(u64, u64)>,
}

impl Hist {
    fn new(prefix: u64, known: u32, bounds: bool) -> Hist {
        let bits = BITS.min(64 - known);
        let pieces = (1usize << bits).div_ceil(PIECE);
        let mut h = Hist {
            prefix,
            known,
            bits,
            counts: Vec::new(),
            bounds: Vec::new(),
        };
        h.counts.resize_with(pieces, || None);
        if bounds {
            h.bounds.resize_with(pieces, || None);
        }
        h
    }

    /// Counts place `key` `n` times, if it has the prefix.
    fn add(&mut self, key: u64, n: u32) {
        if self.known > 0 && key >> (64 - self.known) != self.prefix {
            return;
        }
        let b = ((key << self.known) >> (64 - self.bits)) as usize;
        let (p, i) = (b / PIECE, b % PIECE);
        self.counts[p].get_or_insert_with(|| Box::new([0; PIECE]))[i] += n;
        if let Some(bounds) = self.bounds.get_mut(p) {
            let (least, greatest) =
                &mut bounds.get_or_insert_with(|| Box::new([(u64::MAX, 0); PIECE]))[i];
            *least = key.min(*least);
            *greatest = key.max(*greatest);
        }
    }

    /// The bucket of the figure of `rank` (from 0) among those counted.
    fn find(&self, rank: usize) -> Bucket {
        let mut before = 0usize;
        for (p, counts) in self.counts.iter().enumerate() {
            let Some(counts) = counts else {
                continue;
            };
            for (i, &c) in counts.iter().enumerate() {
                if rank < before + c as usize {
                    let b = (p * PIECE + i) as u64;
                    return Bucket {
                        prefix: if self.known == 0 {
                            b
                        } else {
                            self.prefix << self.bits | b
                        },
                        known: self.known + self.bits,
                        count: c,
                        rank: rank - before,
                        bounds: self
                            .bounds
                            .get(p)
                            .map(|b| b.as_ref().expect("counted, so bounded")[i]),
                    };
                }
                before += c as usize;
            }
        }
        unreachable!("the rank is within the figures counted");
    }
}

/// A figure sought by its rank in order, as far as it is known.
enum Middle {
    Found(f64),
    /// Among the places with the top `known` bits `prefix`, at `rank` among them: this pass
    /// gathers them whole (they are `count`, at most [`GATHER`]; room for them is made at the
    /// first, once the first pass's counts of every metric are freed) ...
    Gathering {
        rank: usize,
        prefix: u64,
        known: u32,
        count: u32,
        places: Vec<u64>,
    },
    /// ... or each different one with how many times it comes (they are more: a figure
    /// repeated, or a few, are found in one pass however many times they come), until more
    /// than [`TALLY`] differ: then counted by their next bits, with bounds.
    Tallying {
        rank: usize,
        prefix: u64,
        known: u32,
        tally: HashMap<u64, u32>,
    },
    /// In the bucket counted by `hist` at `rank` among its figures.
    Counting {
        rank: usize,
        hist: Hist,
    },
}

impl Middle {
    /// The figure at `b.rank` of bucket `b`: found if the bucket holds one figure, else
    /// sought in the next pass among the places sharing the bits its least and greatest share
    /// (where they are known), or its own.
    fn of_bucket(b: Bucket) -> Middle {
        let (prefix, known) = match b.bounds {
            Some((least, greatest)) if least == greatest => {
                return Middle::Found(of_order_key(least));
            }
            Some((least, greatest)) => {
                let known = (least ^ greatest).leading_zeros();
                (least >> (64 - known), known)
            }
            None => (b.prefix, b.known),
        };
        if b.count <= GATHER {
            Middle::Gathering {
                rank: b.rank,
                prefix,
                known,
                count: b.count,
                places: Vec::new(),
            }
        } else {
            Middle::Tallying {
                rank: b.rank,
                prefix,
                known,
                tally: HashMap::new(),
            }
        }
    }

    fn found(&self) -> Option<f64> {
        match self {
            Middle::Found(x) => Some(*x),
            _ => None,
        }
    }

    fn add(&mut self, key: u64) {
        match self {
            Middle::Found(_) => {}
            Middle::Counting { hist, .. } => hist.add(key, 1),
            Middle::Gathering {
                prefix,
                known,
                count,
                places,
                ..
            } => {
                if key >> (64 - *known) == *prefix {
                    if places.capacity() == 0 {
                        places.reserve_exact(*count as usize);
                    }
                    places.push(key);
                }
            }
            Middle::Tallying {
                rank,
                prefix,
                known,
                tally,
            } => {
                if key >> (64 - *known) != *prefix {
                    return;
                }
                *tally.entry(key).or_default() += 1;
                if tally.len() > TALLY {
                    let mut hist = Hist::new(*prefix, *known, true);
                    for (&k, &n) in tally.iter() {
                        hist.add(k, n);
                    }
                    *self = Middle::Counting { rank: *rank, hist };
                }
            }
        }
    }

    /// After a pass: the figure, or the narrower bucket it is in.
    fn settle(&mut self) {
        *self = match std::mem::replace(self, Middle::Found(f64::NAN)) {
            Middle::Found(x) => Middle::Found(x),
            Middle::Counting { rank, hist } => Middle::of_bucket(hist.find(rank)),
            Middle::Gathering {
                rank, mut places, ..
            } => {
                places.sort_unstable();
                Middle::Found(of_order_key(places[rank]))
            }
            Middle::Tallying { rank, tally, .. } => {
                let mut tally: Vec<(u64, u32)> = tally.into_iter().collect();
                tally.sort_unstable();
                let mut before = 0usize;
                let (key, _) = tally
                    .into_iter()
                    .find(|&(_, n)| {
                        before += n as usize;
                        rank < before
                    })
                    .expect("the rank is within the figures tallied");
                Middle::Found(of_order_key(key))
            }
        };
    }
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
    /// The sums of squares are complete (after the second pass, or the first where every
    /// figure is the same).
    squared: bool,
    /// The first pass's counts of the figures by the top bits of their places in order, and
    /// by their next bits in the first [`FINER`] buckets met (each bucket's top bits).
    top: Option<Hist>,
    finer: Vec<(u64, Hist)>,
    /// The middle figures sought (one, or two for an even count), once the count is known.
    middle: Vec<Middle>,
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
            squared: false,
            top: Some(Hist::new(0, 0, false)),
            finer: Vec::new(),
            middle: Vec::new(),
        }
    }

    /// Whether pass `pass` is wanted: the first always, the second for the sums of squares,
    /// the others while a middle figure is still sought.
    fn wants(&self, pass: usize) -> bool {
        pass == 0
            || self.n > 0 && (!self.squared || self.middle.iter().any(|m| m.found().is_none()))
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
            if let Some(top) = &mut self.top {
                top.add(key, 1);
            }
            let t = key >> (64 - BITS);
            match self.finer.iter().position(|f| f.0 == t) {
                Some(f) => self.finer[f].1.add(key, 1),
                None if self.finer.len() < FINER => {
                    let mut h = Hist::new(t, BITS, false);
                    h.add(key, 1);
                    self.finer.push((t, h));
                }
                None => {}
            }
            return;
        }
        if !self.squared {
            let mean = self.sum / self.n as f64;
            self.squares += (x - mean).powi(2);
            if self.positive {
                let ly = self.sum_ln / self.n as f64;
                self.squares_ln += (x.ln() - ly).powi(2);
            }
        }
        for m in &mut self.middle {
            m.add(key);
        }
    }

    /// After pass `pass`: the middle figures sought, or nearer.
    fn settle(&mut self, pass: usize) {
        if pass > 0 {
            self.squared = true;
            for m in &mut self.middle {
                m.settle();
            }
            return;
        }
        let top = self.top.take().expect("the first pass counts");
        let finer = std::mem::take(&mut self.finer);
        if self.n == 0 {
            return;
        }
        let ranks = if self.n % 2 == 1 {
            vec![self.n / 2]
        } else {
            vec![self.n / 2 - 1, self.n / 2]
        };
        // Every figure the same (the same bits): that is the median, and the sums of squares
        // are the same fold of one term, made here rather than in a pass.
        if self.min.to_bits() == self.max.to_bits() {
            let x = self.min;
            self.middle = ranks.iter().map(|_| Middle::Found(x)).collect();
            let mean = self.sum / self.n as f64;
            let ly = self.sum_ln / self.n as f64;
            for _ in 0..self.n {
                self.squares += (x - mean).powi(2);
                if self.positive {
                    self.squares_ln += (x.ln() - ly).powi(2);
                }
            }
            self.squared = true;
            return;
        }
        for rank in ranks {
            let b = top.find(rank);
            let b = match finer.iter().find(|f| f.0 == b.prefix) {
                Some(f) => f.1.find(b.rank),
                None => b,
            };
            self.middle.push(Middle::of_bucket(b));
        }
    }

    fn stats(&self) -> Option<Stats> {
        if self.n == 0 {
            return None;
        }
        let found = |i: usize| self.middle[i].found().expect("every pass made");
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

    /// The statistics of `column` gathered as `metric_stats` gathers them, a pass a reading
    /// of the column, and the passes made.
    fn in_passes(column: &[f64]) -> (Option<Stats>, usize) {
        let mut s = Stream::new("m");
        let mut pass = 0;
        while s.wants(pass) {
            for &x in column {
                s.add(x, pass);
            }
            s.settle(pass);
            pass += 1;
        }
        (s.stats(), pass)
    }

    /// The median of the finite figures of `column` sorted by `f64::total_cmp`.
    fn sorted_median(column: &[f64]) -> f64 {
        let finite: Vec<f64> = column.iter().copied().filter(|x| x.is_finite()).collect();
        crate::evaluate::stats::tests::median_by_sorting(&finite)
    }

    /// Checks the statistics in passes against the column held whole (every field to the
    /// bit) and the median against the sorted column's; the passes made.
    fn check(column: &[f64], what: &str) -> usize {
        let (got, passes) = in_passes(column);
        assert_eq!(
            format!("{got:?}"),
            format!("{:?}", Stats::of(column)),
            "{what}: {} figures",
            column.len()
        );
        if let Some(got) = got {
            assert_eq!(
                got.median.to_bits(),
                sorted_median(column).to_bits(),
                "{what}: median"
            );
        }
        passes
    }

    fn xorshift(mut seed: u64) -> impl FnMut() -> u64 {
        move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        }
    }

    /// The statistics gathered in passes are those of the column held whole, to the bit,
    /// for columns of repeated, negative, zero, tiny and huge figures and counts odd and even.
    #[test]
    fn statistics_in_passes_are_those_of_the_whole_column() {
        let mut next = xorshift(0x9e37_79b9_7f4a_7c15);
        let mut columns: Vec<Vec<f64>> = vec![
            vec![5.0],
            vec![2.0, 1.0],
            vec![0.0, -0.0, 0.0, 3.0],
            vec![7.0; 10_001],
            vec![-3.5, 1e-300, 1e300, 4.0, f64::NAN, f64::INFINITY, 2.0],
            vec![f64::NAN, f64::NEG_INFINITY],
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
            let passes = check(c, "mixed");
            assert!(passes <= 8, "{passes} passes");
        }
    }

    /// The columns a median is easiest to get wrong on: one run, every figure the same
    /// (zeros of both signs too), two figures, figures a last bit apart (more of them than are
    /// ever gathered, so that they are told apart by counting), the greatest and least finite
    /// figures and the subnormal ones, with the middle figures of an even count in different
    /// buckets; each against the column sorted.
    #[test]
    fn the_median_in_passes_is_the_sorted_columns_on_adversarial_columns() {
        let up = |x: f64, k: u64| f64::from_bits(x.to_bits() + k);
        let tiny = f64::from_bits(1);
        let mut next = xorshift(0x2545_f491_4f6c_dd1d);
        let mut columns: Vec<(&str, Vec<f64>)> = vec![
            ("one run", vec![4123.25]),
            ("one run of 0", vec![-0.0]),
            ("all equal", vec![0.1; 100_001]),
            ("all equal, even", vec![0.1; 100_000]),
            ("all 0", vec![0.0; 9_000]),
            ("all -0", vec![-0.0; 9_001]),
            ("zeros of both signs", [0.0, -0.0].repeat(5_000)),
            ("two values", vec![1.0, 2.0]),
            ("two values, many", [1.0, 2.0].repeat(50_000)),
            (
                "two values, odd",
                [[1.0, 2.0].repeat(50_000), vec![2.0]].concat(),
            ),
            ("a last bit apart", vec![1.0, up(1.0, 1)]),
            (
                "a last bit apart, many",
                (0..30_000).map(|i| up(4000.0, i % 3)).collect(),
            ),
            (
                "a last bit apart, all different, many",
                (0..50_001)
                    .map(|i| up(4000.0, (i * 7919) % 50_001))
                    .collect(),
            ),
            (
                "a few last bits apart, more than are tallied",
                (0..60_000).map(|_| up(4000.0, next() % 5_000)).collect(),
            ),
            (
                "a last bit apart, even, split at the middle",
                [vec![4000.0; 10_000], vec![up(4000.0, 1); 10_000]].concat(),
            ),
            (
                "extremes",
                vec![
                    f64::MAX,
                    -f64::MAX,
                    f64::MIN_POSITIVE,
                    tiny,
                    -tiny,
                    0.0,
                    -0.0,
                ],
            ),
            ("extremes, even", vec![f64::MAX, -f64::MAX, tiny, -tiny]),
            (
                "the middle pair far apart",
                [vec![-f64::MAX; 5_000], vec![f64::MAX; 5_000]].concat(),
            ),
            (
                "subnormal",
                (0..10_000).map(|_| f64::from_bits(next() % 4096)).collect(),
            ),
        ];
        for n in [1usize, 2, 3, 4, 5] {
            columns.push((
                "few, random bits",
                (0..n).map(|_| f64::from_bits(next())).collect(),
            ));
        }
        for (what, c) in &columns {
            check(c, what);
        }
    }

    /// Figures that repeat a few values (a synthetic history's, or fio's percentiles, which
    /// take a few values) are found in the first pass and need one more only for their
    /// spread (none where all are the same); figures that vary within one or two orders of
    /// magnitude, as real runs' do, in two: at most two passes over the window either way.
    #[test]
    fn repeated_and_real_figures_take_at_most_two_passes() {
        let mut next = xorshift(0x1234_5678_9abc_def1);
        assert_eq!(check(&vec![53.89349478355895; 100_000], "constant"), 1);
        let seven: Vec<f64> = (0..100_000)
            .map(|i| 37600.0 * (0.9 + (i % 7) as f64 / 30.0))
            .collect();
        assert_eq!(check(&seven, "seven values"), 2);
        let percentiles: Vec<f64> = (0..100_000)
            .map(|_| [3.824, 4.08, 4.32, 47.872][(next() % 4) as usize])
            .collect();
        assert_eq!(check(&percentiles, "fio's percentiles"), 2);
        for n in [100_000usize, 400_000] {
            let iops: Vec<f64> = (0..n)
                .map(|_| 4000.0 * (0.9 + (next() % 1_000_000) as f64 / 5e6))
                .collect();
            assert_eq!(check(&iops, "IOPS of one magnitude"), 2, "{n}");
        }
        let latency: Vec<f64> = (0..100_000)
            .map(|_| 50.0 * (1.0 + (next() % 1_000_000) as f64 / 1e5))
            .collect();
        assert_eq!(check(&latency, "latencies over two orders of magnitude"), 2);
    }
}
