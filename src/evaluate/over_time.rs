//! The runs over time: where the latest of them stand. A window's mean can hide a node that
//! fails today (daily means 9,354 → 4,981 → 2,433 average 5,589); this finds the latest runs
//! that stand apart from the rest, by a step between two levels or by a steady fall, so that
//! the verdict judges them too (docs/sustained.md).
//!
//! - **A step**: the one split of the runs, in time order, into an earlier and a latest part
//!   (each of at least 2 runs) that leaves the least squared error with each part at its own
//!   mean, when it removes more than the penalty 3 σ² ln n (σ from the median absolute
//!   difference of neighbouring runs, as inside a run: `measure::changepoint`) and the latest
//!   part is worse by at least a fifth (under 0.8 × the earlier mean, or over 1.25 × for a
//!   figure where lower is better), each of its runs so.
//! - **A steady fall** (`warnings::declining`): a significant least-squares slope over a day
//!   or more that moved the figure by at least 10%; its latest part is the latest day's runs.

use chrono::{DateTime, FixedOffset, NaiveDate};

use crate::policy::Op;

/// A latest part holds at least this many runs to decide a verdict; fewer only make it
/// inconclusive.
pub const LATEST_MIN_RUNS: usize = 3;
/// The latest part of a step must be worse than the earlier by this factor.
pub const STEP: f64 = 0.8;

/// How the latest runs were found apart from the rest.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Kind {
    /// A step between two levels.
    Step,
    /// A steady fall, whose latest day is the latest part.
    Decline,
}

/// The latest runs that stand apart, and the earlier ones.
#[derive(Debug, Clone, PartialEq)]
pub struct Latest {
    pub kind: Kind,
    /// The first run of the latest part.
    pub since: DateTime<FixedOffset>,
    pub runs: usize,
    /// The latest part's mean.
    pub value: f64,
    /// The mean of the runs before it (a step), or of the first day (a fall).
    pub before: f64,
}

/// The latest parts that stand apart in `values` (time order), worse where `op` says worse:
/// a step's, then a steady fall's.
pub fn latest(values: &[(DateTime<FixedOffset>, f64)], op: Op) -> Vec<Latest> {
    let mut out = Vec::new();
    let worse = |after: f64, before: f64| {
        if op.higher_is_better() {
            after < STEP * before
        } else {
            after * STEP > before
        }
    };
    let x: Vec<f64> = values.iter().map(|v| v.1).collect();
    // Every run of the latest part is worse by that much: a level, not an outlier that pulls
    // a normal run along with it.
    if let Some(k) = step(&x)
        && x[k..].iter().all(|&v| worse(v, mean(&x[..k])))
    {
        out.push(Latest {
            kind: Kind::Step,
            since: values[k].0,
            runs: x.len() - k,
            value: mean(&x[k..]),
            before: mean(&x[..k]),
        });
    }
    if super::warnings::declining(values, "", op).is_some() {
        let day = |t: &DateTime<FixedOffset>| t.date_naive();
        let last: NaiveDate = day(&values[values.len() - 1].0);
        let first: NaiveDate = day(&values[0].0);
        let from = values.iter().position(|v| day(&v.0) == last).unwrap_or(0);
        let first_day: Vec<f64> = values
            .iter()
            .filter(|v| day(&v.0) == first)
            .map(|v| v.1)
            .collect();
        out.push(Latest {
            kind: Kind::Decline,
            since: values[from].0,
            runs: x.len() - from,
            value: mean(&x[from..]),
            before: mean(&first_day),
        });
    }
    out
}

fn mean(x: &[f64]) -> f64 {
    x.iter().sum::<f64>() / x.len().max(1) as f64
}

/// The best split k (earlier = x[..k]) with at least 2 runs either side, when it removes
/// more squared error than the penalty. Linear in the runs: a split removes
/// k·(n−k)/n·(m₁−m₂)² of the squared error, with the parts' means from running sums (of the
/// figures less their mean, which keeps the sums small).
fn step(x: &[f64]) -> Option<usize> {
    let n = x.len();
    if n < 4 {
        return None;
    }
    let m = mean(x);
    let total: f64 = x.iter().map(|a| a - m).sum();
    let mut before = 0.0;
    let mut best: Option<(usize, f64)> = None;
    for (i, a) in x.iter().enumerate().take(n - 2) {
        before += a - m;
        let k = i + 1;
        if k < 2 {
            continue;
        }
        let (m1, m2) = (before / k as f64, (total - before) / (n - k) as f64);
        let removed = (k * (n - k)) as f64 / n as f64 * (m1 - m2).powi(2);
        if best.is_none_or(|(_, b)| removed > b) {
            best = Some((k, removed));
        }
    }
    let (k, gain) = best?;
    let mut d: Vec<f64> = x.windows(2).map(|w| (w[1] - w[0]).abs()).collect();
    d.sort_by(f64::total_cmp);
    let med = if d.len() % 2 == 1 {
        d[d.len() / 2]
    } else {
        (d[d.len() / 2 - 1] + d[d.len() / 2]) / 2.0
    };
    let sigma = med / 0.6745 / std::f64::consts::SQRT_2;
    (gain > 0.0 && gain > 3.0 * sigma * sigma * (n as f64).ln()).then_some(k)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(day: u32, hour: u32) -> DateTime<FixedOffset> {
        DateTime::parse_from_rfc3339(&format!("2026-11-{day:02}T{hour:02}:00:00Z")).unwrap()
    }

    /// Three runs a day at 08, 14 and 20 h, from Nov 20, the figures given.
    fn daily(figures: &[f64]) -> Vec<(DateTime<FixedOffset>, f64)> {
        figures
            .iter()
            .enumerate()
            .map(|(i, &v)| (at(20 + i as u32 / 3, 8 + 6 * (i as u32 % 3)), v))
            .collect()
    }

    #[test]
    fn three_falling_days_give_the_latest_day_and_a_step_to_the_lower_days() {
        let v = daily(&[
            9300.0, 9400.0, 9362.0, 5000.0, 4950.0, 4993.0, 2400.0, 2450.0, 2449.0,
        ]);
        let l = latest(&v, Op::Ge);
        let fall = l.iter().find(|l| l.kind == Kind::Decline).expect("a fall");
        assert_eq!((fall.since, fall.runs), (at(22, 8), 3));
        assert!((fall.value - 2433.0).abs() < 1.0 && (fall.before - 9354.0).abs() < 1.0);
        let step = l.iter().find(|l| l.kind == Kind::Step).expect("a step");
        assert!(step.value < 0.8 * step.before, "{step:?}");
    }

    #[test]
    fn a_noisy_but_stable_node_has_no_latest_part() {
        // ±25% around 4,000 over four days, the last day lowest by chance.
        let noisy = daily(&[
            4800.0, 3300.0, 4500.0, 3600.0, 5000.0, 3400.0, 4700.0, 3200.0, 4400.0, 3500.0, 3800.0,
            3300.0,
        ]);
        assert_eq!(latest(&noisy, Op::Ge), vec![]);
    }

    #[test]
    fn a_step_is_found_with_two_runs_after_it_and_only_a_worse_one_counts() {
        let mut f = vec![5000.0, 5100.0, 4950.0, 5050.0, 5000.0, 4980.0];
        f.extend([2000.0, 2050.0]);
        let l = latest(&daily(&f), Op::Ge);
        let step = l.iter().find(|l| l.kind == Kind::Step).expect("a step");
        assert_eq!((step.runs, step.since), (2, at(22, 8)));
        // The same step in a latency is better, not worse.
        assert_eq!(latest(&daily(&f), Op::Le), vec![]);
        // One low run at the end is no step.
        let mut one = vec![5000.0, 5100.0, 4950.0, 5050.0, 5000.0, 4980.0];
        one.push(2000.0);
        assert_eq!(latest(&daily(&one), Op::Ge), vec![]);
    }
}
