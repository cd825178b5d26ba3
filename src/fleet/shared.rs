//! One fio run is one machine's: a run found in two nodes' evidence is no node's evidence.
//! Neither node passes on it: each is inconclusive, its reason naming the other node and the
//! run. A run is found by what names it across histories (`record::ImportedRun`): the same
//! imported output (its `source_digest`), or the same fio run imported from another of its
//! outputs (its JSON on one node, its text or terse line on another: `fio::IdentityKey`,
//! the figures `RunIdentity::same_run` compares, within the precision each format prints).
//!
//! What is held is a key per imported run counted (its digest's hash, its fio run's
//! fixed-size summary, its row and time), never the runs. The summaries are compared once
//! every input is read: ordered by what two outputs of one run share exactly (job, group,
//! error, runtimes) and then by their ranges of I/O counts, each is compared only with those
//! whose ranges overlap its own.

use std::collections::{BTreeMap, HashMap};
use std::num::NonZeroU64;
use std::sync::Arc;

use chrono::{DateTime, FixedOffset};

use super::NodeRow;
use crate::evaluate::{Evaluation, Verdict, Warning};
use crate::fio::IdentityKey;
use crate::record::ImportedRun;

/// An imported run a history row counts: the row's index, what names the run and its time.
pub type Counted = (usize, Arc<ImportedRun>, DateTime<FixedOffset>);

/// Two rows (the lesser first).
pub type Pair = (usize, usize);

/// What two rows share: how many runs, the earliest's time.
pub type Shared = (usize, DateTime<FixedOffset>);

/// A counted run's fio identity, to be compared with the others'.
struct Summary {
    row: usize,
    at: DateTime<FixedOffset>,
    run: Arc<ImportedRun>,
}

impl Summary {
    fn key(&self) -> &IdentityKey {
        self.run
            .fio
            .as_ref()
            .expect("a summary is of a run with a fio identity")
    }
}

/// The imported runs counted so far, and the rows found sharing one.
#[derive(Default)]
pub struct SharedRuns {
    first: HashMap<NonZeroU64, (usize, DateTime<FixedOffset>)>,
    summaries: Vec<Summary>,
    /// (row, other row) → (runs shared, the earliest's time).
    pairs: BTreeMap<Pair, Shared>,
}

impl SharedRuns {
    /// One input's imported runs, their rows' indices shifted by `base` (the rows before its
    /// input's).
    pub fn add(&mut self, base: usize, runs: Vec<Counted>) {
        for (row, run, at) in runs {
            let row = base + row;
            if let Some(key) = run.digest {
                match self.first.get(&key) {
                    None => {
                        self.first.insert(key, (row, at));
                    }
                    Some(&(other, _)) if other != row => self.pair(other, row, at),
                    Some(_) => {}
                }
            }
            if run.fio.as_ref().is_some_and(|k| k.ios().is_some()) {
                self.summaries.push(Summary { row, at, run });
            }
        }
    }

    fn pair(&mut self, a: usize, b: usize, at: DateTime<FixedOffset>) {
        let e = self.pairs.entry((a.min(b), a.max(b))).or_insert((0, at));
        e.0 += 1;
        e.1 = e.1.min(at);
    }

    /// The same fio run counted in two rows from two outputs (two digests): each summary is
    /// compared with the earlier ones of its coarse key whose I/O counts reach its own.
    fn compare(&mut self) {
        let mut s = std::mem::take(&mut self.summaries);
        // (coarse key, least and most I/O counts): every summary added has counts
        let order = |x: &Summary| (x.key().coarse(), x.key().ios().unwrap_or_default());
        s.sort_unstable_by_key(order);
        let mut open: Vec<usize> = Vec::new();
        for i in 0..s.len() {
            let (coarse, (lo, _)) = order(&s[i]);
            open.retain(|&j| {
                let (c, (_, hi)) = order(&s[j]);
                c == coarse && hi >= lo
            });
            for &j in &open {
                let (a, b) = (&s[j], &s[i]);
                // one output in two rows is found by its digest
                let same_output = a.run.digest.is_some() && a.run.digest == b.run.digest;
                if a.row != b.row && !same_output && a.key().same_run(b.key()) {
                    let (ra, rb, at) = (a.row, b.row, a.at.min(b.at));
                    self.pair(ra, rb, at);
                }
            }
            open.push(i);
        }
    }

    /// The pairs of rows of two hosts (`host_of` a row's) that count the same runs, each
    /// pair once (the lesser row first), with how many runs they share and the earliest's
    /// time: what a fleet's rows (`mark`) and a report's groups (`mark_groups`) are judged by.
    pub fn pairs<'h>(mut self, host_of: impl Fn(usize) -> &'h str) -> Vec<(Pair, Shared)> {
        self.compare();
        self.pairs
            .into_iter()
            .filter(|((a, b), _)| host_of(*a) != host_of(*b))
            .collect()
    }

    /// Rows of two hosts that count the same runs: a pass on them is inconclusive, and
    /// every such row says which node and run it shares.
    pub fn mark(self, rows: &mut [NodeRow]) {
        let hosts: Vec<String> = rows.iter().map(|r| r.host.clone()).collect();
        for ((a, b), (n, at)) in self.pairs(|i| hosts[i].as_str()) {
            let (ha, hb) = (rows[a].host.clone(), rows[b].host.clone());
            let (fa, fb) = (rows[a].file.clone(), rows[b].file.clone());
            for (row, other, file) in [(a, hb, fb), (b, ha, fa)] {
                let r = &mut rows[row];
                let what = shared(n, at, other, file).to_string();
                if r.verdict == Verdict::Pass {
                    r.verdict = Verdict::Inconclusive;
                    r.reason = format!("{what} (on them it would pass: {})", r.reason);
                }
                r.warnings.push(what);
            }
        }
    }

    /// A report's groups (of one history, judged each on its own) of two hosts that count
    /// the same runs: as a fleet's rows, a pass on them is inconclusive (a fail stays a
    /// fail), and each such group says which hosts and runs it shares, its reason naming
    /// every other host.
    pub fn mark_groups(self, evs: &mut [Evaluation]) {
        let hosts: Vec<String> = evs
            .iter()
            .map(|e| e.group.as_ref().map(|g| g.host.clone()).unwrap_or_default())
            .collect();
        let mut found: Vec<Vec<Warning>> = vec![Vec::new(); evs.len()];
        for ((a, b), (n, at)) in self.pairs(|i| hosts[i].as_str()) {
            for (row, other) in [(a, b), (b, a)] {
                let where_ = evs[other]
                    .group
                    .as_ref()
                    .map(|g| format!("dir {}, engine {}, in this history", g.dir, g.engine))
                    .unwrap_or_default();
                found[row].push(shared(n, at, hosts[other].clone(), where_));
            }
        }
        for (ev, shares) in evs.iter_mut().zip(found) {
            if shares.is_empty() {
                continue;
            }
            if ev.verdict == Verdict::Pass {
                let what: Vec<String> = shares.iter().map(|w| w.to_string()).collect();
                ev.verdict = Verdict::Inconclusive;
                ev.reason = format!("{} (on them it would pass: {})", what.join("; "), ev.reason);
            }
            ev.warnings.extend(shares);
        }
    }
}

/// What a row or group sharing `n` runs (the earliest at `at`) with node `other` says, the
/// other's evidence being `at_other` (its file, or its group).
fn shared(n: usize, at: DateTime<FixedOffset>, other: String, at_other: String) -> Warning {
    Warning::SharedRuns {
        runs: n,
        earliest: at,
        node: other,
        at: at_other,
    }
}

/// The imported runs `ev` counts, as row `row`'s, taken from its runs (a node or group
/// judged needs them no more: only the formats that list runs read them, and not this).
pub fn counted(row: usize, ev: &mut Evaluation) -> impl Iterator<Item = Counted> + '_ {
    ev.runs
        .iter_mut()
        .filter_map(move |r| r.imported.take().map(|k| (row, k, r.timestamp)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fio::RunIdentity;

    /// A run's identity: `ios` as the output states it, its clat mean `clat` ns (± `half`).
    fn run(ios: (u64, u64), clat: f64, half: f64, digest: u64) -> Arc<ImportedRun> {
        let id: RunIdentity = serde_json::from_value(serde_json::json!({
            "job": "random-write", "groupid": 0, "error": 0,
            "write": {"runtime_ms": 60000, "ios": [ios.0, ios.1],
                "bytes": [ios.0 * 4096, ios.1 * 4096 + 1023],
                "clat_mean_ns": [clat - half, clat + half]}
        }))
        .unwrap();
        Arc::new(ImportedRun {
            digest: NonZeroU64::new(digest),
            fio: Some(IdentityKey::of(&id)),
        })
    }

    #[test]
    fn a_run_is_found_among_runs_whose_counts_overlap_its_own() {
        let at = DateTime::parse_from_rfc3339("2026-12-01T00:00:00Z").unwrap();
        let mut s = SharedRuns::default();
        // node 0: many runs of its own, their counts apart; one of them (i = 7) is the run
        // node 2 imported from its terse line (a range of counts, a mean to the µs)
        let own: Vec<Counted> = (0..20)
            .map(|i| {
                (
                    0,
                    run(
                        (180_000 + 50 * i, 180_000 + 50 * i),
                        32_000.0 + i as f64,
                        0.001,
                        100 + i,
                    ),
                    at,
                )
            })
            .collect();
        s.add(0, own);
        // node 1: a run whose counts overlap run 7's, another mean: another run
        s.add(
            1,
            vec![(0, run((180_340, 180_360), 31_000.0, 0.001, 1), at)],
        );
        // node 2: run 7 again, from another output (another digest)
        s.add(
            2,
            vec![(0, run((180_320, 180_390), 32_007.0, 0.0015, 2), at)],
        );
        // node 3: the very output of run 3 (the same digest): found once, by its digest
        s.add(
            3,
            vec![(0, run((180_150, 180_150), 32_003.0, 0.001, 103), at)],
        );
        s.compare();
        let pairs: Vec<_> = s.pairs.iter().map(|(k, v)| (*k, v.0)).collect();
        assert_eq!(pairs, [((0, 2), 1), ((0, 3), 1)]);
    }
}
