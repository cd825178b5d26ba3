//! One fio run is one machine's: a run found in two nodes' evidence (the same imported output,
//! by its `source_digest`, recorded in two hosts' histories) is no node's evidence. Neither
//! node passes on it: each is inconclusive, its reason naming the other node and the run.
//! What is held is a key per imported run counted (its digest's hash, its row and time),
//! never the runs.

use std::collections::{BTreeMap, HashMap};
use std::num::NonZeroU64;

use chrono::{DateTime, FixedOffset};

use super::NodeRow;
use crate::evaluate::Verdict;

/// An imported run a history row counts: the row's index, the run's key and its time.
pub type Counted = (usize, NonZeroU64, DateTime<FixedOffset>);

/// The imported runs counted so far, by key, and the rows found sharing one.
#[derive(Default)]
pub struct SharedRuns {
    first: HashMap<NonZeroU64, (usize, DateTime<FixedOffset>)>,
    /// (row, other row) → (runs shared, the earliest's time).
    pairs: BTreeMap<(usize, usize), (usize, DateTime<FixedOffset>)>,
}

impl SharedRuns {
    /// One row's imported runs, its index shifted by `base` (the rows before its input's).
    pub fn add(&mut self, base: usize, runs: &[Counted]) {
        for &(row, key, at) in runs {
            let row = base + row;
            match self.first.get(&key) {
                None => {
                    self.first.insert(key, (row, at));
                }
                Some(&(other, _)) if other != row => {
                    let e = self.pairs.entry((other, row)).or_insert((0, at));
                    e.0 += 1;
                    e.1 = e.1.min(at);
                }
                Some(_) => {}
            }
        }
    }

    /// Rows of two hosts that count the same runs: a pass on them is inconclusive, and
    /// every such row says which node and run it shares.
    pub fn mark(self, rows: &mut [NodeRow]) {
        for ((a, b), (n, at)) in self.pairs {
            if rows[a].host == rows[b].host {
                continue;
            }
            let (ha, hb) = (rows[a].host.clone(), rows[b].host.clone());
            let (fa, fb) = (rows[a].file.clone(), rows[b].file.clone());
            for (row, other, file) in [(a, hb, fb), (b, ha, fa)] {
                let r = &mut rows[row];
                let what = format!(
                    "{n} of its run{} (the earliest at {}) {} also counted for node {other} ({file}): one fio run is one machine's, so neither node's verdict may rest on it",
                    if n == 1 { "" } else { "s" },
                    at.format("%Y-%m-%d %H:%M"),
                    if n == 1 { "is" } else { "are" },
                );
                if r.verdict == Verdict::Pass {
                    r.verdict = Verdict::Inconclusive;
                    r.reason = format!("{what} (on them it would pass: {})", r.reason);
                }
                r.warnings.push(what);
            }
        }
    }
}
