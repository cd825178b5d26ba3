//! Warnings: what a careful reader of a verdict should know (spread, the page cache, a first
//! run faster than the rest, a network filesystem, mixed engines, outliers, a decline), each
//! shown once and carried in every format.

use std::collections::{BTreeMap, BTreeSet};

use chrono::{DateTime, FixedOffset, NaiveDate};
use serde::Serialize;

pub mod caveat;
mod reader;
mod words;

use self::caveat::Caveat;
use super::Options;
use super::stats::{Stats, modified_z_scores, t_975};
use crate::policy::{Op, Policy};
use crate::run_index::Run;

/// Something a careful reader should know; shown once, carried in every format.
#[derive(Debug, Clone, PartialEq)]
pub enum Warning {
    HighSpread {
        metric: String,
        cv: f64,
        limit: f64,
    },
    FileSmallerThanRam {
        size: u64,
        ram: u64,
    },
    FirstRunFaster {
        metric: String,
        first: f64,
        rest: f64,
    },
    /// The target is on a network filesystem. (A target in RAM is no warning: it is a
    /// deviation from the policy's test, `crate::deviation`, named with the verdict.)
    NetworkTarget {
        filesystem: String,
    },
    MixedEngines {
        engines: BTreeMap<String, usize>,
    },
    Outlier {
        metric: String,
        timestamp: DateTime<FixedOffset>,
        value: f64,
        score: f64,
    },
    /// A steady fall: the first and the latest day, with their means.
    Declining {
        metric: String,
        first: (NaiveDate, f64),
        last: (NaiveDate, f64),
    },
    /// Runs dated in the future, not counted: a clock was wrong when they were recorded.
    FutureRuns {
        count: usize,
        latest: DateTime<FixedOffset>,
    },
    /// A rule's threshold that scales with the machine, as it was resolved (or why it could
    /// not be): `evaluate::Scaled`'s words.
    ScaledThreshold {
        resolution: String,
    },
    /// Runs that are not the policy's test, by how they differ.
    NotPolicysTest(crate::deviation::Deviation),
    /// The policy's source was read more than a year ago (`policy::Publication::is_stale`), on
    /// `seen`, from `url` (`policy show` says the same sentence: [`Warning::stale_source`]).
    StaleSource {
        seen: NaiveDate,
        url: String,
    },
    /// The figure follows the idle time before each run: burst credits refilling while idle.
    IdleSignature {
        metric: String,
        /// Spearman's rank correlation of idle time and figure, over `runs` runs.
        rho: f64,
        runs: usize,
        /// The run after the longest idle time, and the one after the shortest.
        longest: IdleRun,
        shortest: IdleRun,
    },
    /// fio's outputs give no IOPS series, only a summary per run; the runs (numbered from 1)
    /// whose lowest interval is under the step's 0.8 × their mean, with both figures.
    NoSeries {
        runs: usize,
        low: Vec<(usize, f64, f64)>,
    },
    /// A caveat of an input: `about` names the file or job block (or files) it concerns.
    InputCaveat {
        about: String,
        caveat: Caveat,
    },
    /// The engine the policy names cannot run here: which, why (the probe's words), and
    /// which ran instead.
    EngineFallback {
        asked: String,
        reason: String,
        used: String,
    },
    /// IOPS stepped down inside `steps` of `runs` runs; the deepest step: the run's start,
    /// the rate before and after it, and when in the run it came (s).
    StepInsideRun {
        steps: usize,
        runs: usize,
        worst: DateTime<FixedOffset>,
        before: f64,
        after: f64,
        at_s: f64,
    },
    /// The final fsync took most of the time in `slow` of `runs` runs; the worst: the run's
    /// start, the fsync's and the run's time (ms).
    SlowFinalFsync {
        slow: usize,
        runs: usize,
        worst: DateTime<FixedOffset>,
        fsync_ms: f64,
        runtime_ms: f64,
    },
    /// A decision that stands (`--recheck-every`): nothing was tested. The sequences'
    /// outcomes, the run that decided the last of them, when the next re-check is due, and
    /// the period.
    DecisionStands {
        outcomes: Vec<super::sequential::Outcome>,
        decided_at: Option<DateTime<FixedOffset>>,
        due: DateTime<chrono::Utc>,
        every: std::time::Duration,
    },
    /// Runs this node's evidence counts that another node's counts too (one fio run found
    /// in two nodes' evidence, `fleet::shared`): how many, the earliest's time, the other
    /// node and where its evidence is (its file, or its group in the same history).
    SharedRuns {
        runs: usize,
        earliest: DateTime<FixedOffset>,
        node: String,
        at: String,
    },
}

/// A run of an idle signature: when, after how long idle (s), and its figure.
#[derive(Debug, Clone, PartialEq)]
pub struct IdleRun {
    pub timestamp: DateTime<FixedOffset>,
    pub idle_s: f64,
    pub value: f64,
}

/// The modified z-score above which a run is called an outlier (Iglewicz & Hoaglin, 1993).
pub const OUTLIER_Z: f64 = 3.5;
/// First run faster than the mean of the others by this factor: the page cache was empty.
pub const FIRST_RUN_FACTOR: f64 = 1.5;

impl Warning {
    /// The policy's source, when it was read more than a year before `today`: the warning a
    /// verdict carries and the line `policy show` prints.
    pub fn stale_source(source: &crate::policy::Publication, today: NaiveDate) -> Option<Warning> {
        source.is_stale(today).then(|| Warning::StaleSource {
            seen: source.seen,
            url: source.url.clone(),
        })
    }
}

impl Serialize for Warning {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_string())
    }
}

pub(super) fn dedup(w: &mut Vec<Warning>) {
    let mut seen = BTreeSet::new();
    w.retain(|x| seen.insert(x.to_string()));
}

const NETWORK_FS: &[&str] = &[
    "nfs",
    "nfs4",
    "cifs",
    "smb3",
    "smbfs",
    "9p",
    "fuse.sshfs",
    "ceph",
    "glusterfs",
    "fuse.glusterfs",
    "lustre",
    "gpfs",
    "beegfs",
    "virtiofs",
];

pub(super) fn find_warnings(
    runs: &[Run],
    policy: &Policy,
    metrics: &BTreeMap<String, Stats>,
    opts: &Options,
) -> Vec<Warning> {
    let mut out = Vec::new();
    let Some(primary) = policy.deciding_rules().next() else {
        return out;
    };
    let m = primary.metric.as_str();
    let values: Vec<(DateTime<FixedOffset>, f64)> = runs
        .iter()
        .filter_map(|r| r.metrics.get(m).map(|&v| (r.timestamp, v)))
        .collect();

    // Spread across runs.
    if let Some(s) = metrics.get(m)
        && s.n >= 2
        && s.cv > policy.evidence.max_cv
    {
        out.push(Warning::HighSpread {
            metric: m.into(),
            cv: s.cv,
            limit: policy.evidence.max_cv,
        });
    }

    // Test file smaller than RAM (the page cache can absorb it).
    if let Some(r) = runs
        .iter()
        .find(|r| matches!((r.job.size, r.target.memory_bytes), (Some(s), Some(ram)) if s < ram))
        && !policy.job.direct
    {
        out.push(Warning::FileSmallerThanRam {
            size: r.job.size.unwrap_or(0),
            ram: r.target.memory_bytes.unwrap_or(0),
        });
    }

    // First run much faster than the rest, per invocation (or over the set without ids).
    let mut by_invocation: BTreeMap<Option<&str>, Vec<f64>> = BTreeMap::new();
    for r in runs {
        if let Some(&v) = r.metrics.get(m) {
            by_invocation
                .entry(r.invocation.as_deref())
                .or_default()
                .push(v);
        }
    }
    for v in by_invocation.values() {
        if v.len() >= 3 {
            let rest = v[1..].iter().sum::<f64>() / (v.len() - 1) as f64;
            let faster = if primary.op.higher_is_better() {
                v[0] > rest * FIRST_RUN_FACTOR
            } else {
                v[0] * FIRST_RUN_FACTOR < rest
            };
            if rest > 0.0 && faster {
                out.push(Warning::FirstRunFaster {
                    metric: m.into(),
                    first: v[0],
                    rest,
                });
                break;
            }
        }
    }

    // A network filesystem. (A RAM-backed target is a deviation, crate::deviation, named with
    // the verdict and its warning; a report does not count it.)
    let filesystems: BTreeSet<&str> = runs
        .iter()
        .filter_map(|r| r.target.filesystem.as_deref())
        .collect();
    for fs in filesystems {
        let base = fs.split('.').next().unwrap_or(fs);
        if NETWORK_FS.contains(&fs) || NETWORK_FS.contains(&base) {
            out.push(Warning::NetworkTarget {
                filesystem: fs.into(),
            });
        }
    }

    // Engines mixed in the window.
    let mut engines: BTreeMap<String, usize> = opts.other_engines.clone();
    let mut counted: BTreeMap<&str, usize> = BTreeMap::new();
    for r in runs {
        *counted.entry(r.engine.as_str()).or_default() += 1;
    }
    for (e, n) in counted {
        *engines.entry(e.to_string()).or_default() += n;
    }
    if engines.len() > 1 {
        out.push(Warning::MixedEngines { engines });
    }

    // What happened inside the runs (their IOPS series, the final fsync).
    out.extend(series_warnings(runs));

    // A run far from the others: modified z-score with the median absolute deviation.
    if values.len() >= 5 {
        let v: Vec<f64> = values.iter().map(|x| x.1).collect();
        for (i, score) in modified_z_scores(&v).into_iter().enumerate() {
            if score.abs() > OUTLIER_Z {
                out.push(Warning::Outlier {
                    metric: m.into(),
                    timestamp: values[i].0,
                    value: values[i].1,
                    score,
                });
            }
        }
    }

    // Falling steadily with time.
    if let Some(w) = declining(&values, m, primary.op) {
        out.push(w);
    }
    // Figures that follow the idle time before each run.
    if let Some(w) = idle_signature(runs, m, primary.op) {
        out.push(w);
    }
    out
}

/// Runs at least this many (each after an idle time) before an idle signature is looked for.
const IDLE_MIN_RUNS: usize = 6;

/// A burst signature: each run's figure rises with the time the disk was idle before it (from
/// the end of the run before, its start plus its runtime). Spearman's rank correlation of at
/// least 0.8 over 6 runs or more (about the 5% one-sided critical value at 6 runs, stricter
/// beyond), idle times that differ at least fourfold, and the runs after the longest third of
/// the idle times at least 1.25 × the figure of those after the shortest third.
pub(super) fn idle_signature(runs: &[Run], metric: &str, op: Op) -> Option<Warning> {
    let mut pairs: Vec<(f64, f64, DateTime<FixedOffset>)> = Vec::new();
    for w in runs.windows(2) {
        let (prev, run) = (&w[0], &w[1]);
        let Some(&v) = run.metrics.get(metric) else {
            continue;
        };
        let ran_ms = ["write_runtime_ms", "read_runtime_ms"]
            .iter()
            .filter_map(|k| prev.metrics.get(*k).copied())
            .fold(0.0, f64::max);
        let idle =
            (run.timestamp - prev.timestamp).num_milliseconds() as f64 / 1000.0 - ran_ms / 1000.0;
        pairs.push((idle.max(0.0), v, run.timestamp));
    }
    let n = pairs.len();
    if n < IDLE_MIN_RUNS {
        return None;
    }
    let idle: Vec<f64> = pairs.iter().map(|p| p.0).collect();
    let fig: Vec<f64> = pairs.iter().map(|p| p.1).collect();
    let (lo, hi) = (
        idle.iter().copied().fold(f64::INFINITY, f64::min),
        idle.iter().copied().fold(0.0, f64::max),
    );
    if hi < 4.0 * lo.max(1.0) {
        return None;
    }
    let rho = spearman(&idle, &fig);
    let rho = if op.higher_is_better() { rho } else { -rho };
    let mut by_idle: Vec<usize> = (0..n).collect();
    by_idle.sort_by(|&a, &b| idle[a].total_cmp(&idle[b]));
    let third = n / 3;
    let mean = |ix: &[usize]| ix.iter().map(|&i| fig[i]).sum::<f64>() / ix.len() as f64;
    let (short_idle, long_idle) = (mean(&by_idle[..third]), mean(&by_idle[n - third..]));
    let ratio = if op.higher_is_better() {
        long_idle / short_idle
    } else {
        short_idle / long_idle
    };
    // A ratio that is not a number (no figure after the shortest idles) is no signature.
    if rho < 0.8 || ratio.is_nan() || ratio < 1.25 {
        return None;
    }
    let (a, b) = (by_idle[n - 1], by_idle[0]);
    let run = |i: usize| IdleRun {
        timestamp: pairs[i].2,
        idle_s: idle[i],
        value: fig[i],
    };
    Some(Warning::IdleSignature {
        metric: metric.to_string(),
        rho,
        runs: n,
        longest: run(a),
        shortest: run(b),
    })
}

/// Spearman's rank correlation (average ranks for ties).
fn spearman(x: &[f64], y: &[f64]) -> f64 {
    let rank = |v: &[f64]| {
        let mut ix: Vec<usize> = (0..v.len()).collect();
        ix.sort_by(|&a, &b| v[a].total_cmp(&v[b]));
        let mut r = vec![0.0; v.len()];
        let mut i = 0;
        while i < ix.len() {
            let mut j = i;
            while j + 1 < ix.len() && v[ix[j + 1]] == v[ix[i]] {
                j += 1;
            }
            for &k in &ix[i..=j] {
                r[k] = (i + j) as f64 / 2.0;
            }
            i = j + 1;
        }
        r
    };
    let (rx, ry) = (rank(x), rank(y));
    let n = x.len() as f64;
    let (mx, my) = (rx.iter().sum::<f64>() / n, ry.iter().sum::<f64>() / n);
    let cov: f64 = rx.iter().zip(&ry).map(|(a, b)| (a - mx) * (b - my)).sum();
    let (sx, sy) = (
        rx.iter().map(|a| (a - mx).powi(2)).sum::<f64>().sqrt(),
        ry.iter().map(|b| (b - my).powi(2)).sum::<f64>().sqrt(),
    );
    if sx == 0.0 || sy == 0.0 {
        0.0
    } else {
        cov / (sx * sy)
    }
}

/// A steady decline: at least 5 runs spanning a day or more, a least-squares slope whose
/// t-statistic is significant at about 5% and a fall of at least 10% of the mean over the span.
pub(super) fn declining(
    values: &[(DateTime<FixedOffset>, f64)],
    metric: &str,
    op: Op,
) -> Option<Warning> {
    let n = values.len();
    if n < 5 {
        return None;
    }
    let t0 = values[0].0;
    let xs: Vec<f64> = values
        .iter()
        .map(|(t, _)| (*t - t0).num_seconds() as f64 / 86400.0)
        .collect();
    let span = xs[n - 1] - xs[0];
    if span < 1.0 {
        return None;
    }
    let ys: Vec<f64> = values.iter().map(|x| x.1).collect();
    let (mx, my) = (
        xs.iter().sum::<f64>() / n as f64,
        ys.iter().sum::<f64>() / n as f64,
    );
    let sxx: f64 = xs.iter().map(|x| (x - mx).powi(2)).sum();
    let sxy: f64 = xs.iter().zip(&ys).map(|(x, y)| (x - mx) * (y - my)).sum();
    if sxx == 0.0 || my == 0.0 {
        return None;
    }
    let slope = sxy / sxx;
    let resid: f64 = xs
        .iter()
        .zip(&ys)
        .map(|(x, y)| (y - (my + slope * (x - mx))).powi(2))
        .sum();
    let se = (resid / (n - 2) as f64 / sxx).sqrt();
    let worse = if op.higher_is_better() {
        slope < 0.0
    } else {
        slope > 0.0
    };
    let significant = se == 0.0 || (slope / se).abs() > t_975(n - 2);
    let total = (slope * span / my).abs();
    let day_mean = |d: NaiveDate| {
        let v: Vec<f64> = values
            .iter()
            .filter(|(t, _)| t.date_naive() == d)
            .map(|x| x.1)
            .collect();
        (d, v.iter().sum::<f64>() / v.len().max(1) as f64)
    };
    (worse && significant && total >= 0.10).then(|| Warning::Declining {
        metric: metric.into(),
        first: day_mean(values[0].0.date_naive()),
        last: day_mean(values[n - 1].0.date_naive()),
    })
}

/// What the series of the runs show, as warnings: a step-wise fall inside a run, and a final
/// fsync that took most of a run's time. One warning each, naming the worst run.
fn series_warnings(runs: &[Run]) -> Vec<Warning> {
    let mut out = Vec::new();
    // Each run's step down was found as its record was read (`run_index::Run::series_step`).
    let steps: Vec<_> = runs
        .iter()
        .filter_map(|r| r.series_step.as_deref().map(|&x| (r, x)))
        .collect();
    if let Some((r, (at, before, after))) = steps
        .iter()
        .min_by(|a, b| (a.1.2 / a.1.1).total_cmp(&(b.1.2 / b.1.1)))
    {
        out.push(Warning::StepInsideRun {
            steps: steps.len(),
            runs: runs.len(),
            worst: r.timestamp,
            before: *before,
            after: *after,
            at_s: *at,
        });
    }
    let fsyncs: Vec<_> = runs
        .iter()
        .filter_map(|r| {
            let f = *r.metrics.get("end_fsync_ms")?;
            let t = *r
                .metrics
                .get("write_runtime_ms")
                .or_else(|| r.metrics.get("read_runtime_ms"))?;
            (t > 0.0 && f > 0.5 * t).then_some((r, f, t))
        })
        .collect();
    if let Some((r, f, t)) = fsyncs
        .iter()
        .max_by(|a, b| (a.1 / a.2).total_cmp(&(b.1 / b.2)))
    {
        out.push(Warning::SlowFinalFsync {
            slow: fsyncs.len(),
            runs: runs.len(),
            worst: r.timestamp,
            fsync_ms: *f,
            runtime_ms: *t,
        });
    }
    out
}

/// One warning of each kind (each caveat of an input, each reader's note among them), with
/// facts that stand out: what the tests of their sentences and of the table's short form go
/// through. The match in `kind_of` has no catch-all, so a new kind fails to compile there
/// until it is given an example here.
#[cfg(test)]
pub(crate) fn examples() -> Vec<Warning> {
    use caveat::{Figures, Statement};
    let at = |s: &str| DateTime::parse_from_rfc3339(s).unwrap();
    let day = |s: &str| NaiveDate::parse_from_str(s, "%Y-%m-%d").unwrap();
    let by = Statement::CommandLine { line: 3 };
    let contradicted = |figures| Caveat::Contradicted {
        by: by.clone(),
        figures,
    };
    let mut caveats = vec![
        Caveat::NoTimestamp { file_time: true },
        Caveat::Assumed {
            spec: "swimlane".into(),
        },
        Caveat::CommandLine {
            line: 3,
            complete: false,
        },
        Caveat::StatedOtherwise {
            by: Statement::AssumedJob {
                spec: "swimlane".into(),
            },
            field: "bs".into(),
            output: "8k".into(),
            given: "4k".into(),
        },
        contradicted(Figures::Directions {
            did: "reads only",
            rw: "randwrite".into(),
        }),
        contradicted(Figures::Mix {
            reads: 0.5,
            rwmixread: 70,
        }),
        contradicted(Figures::BlockSize {
            per_io: 8192.0,
            bs: 4096,
        }),
        contradicted(Figures::Runtime {
            ran_s: 5.0,
            runtime_s: 60.0,
        }),
        contradicted(Figures::Size {
            per_job: 1 << 20,
            size: 1 << 30,
        }),
    ];
    caveats.extend(reader::examples().into_iter().map(Caveat::Reader));
    let run = |ts: &str, idle_s, value| IdleRun {
        timestamp: at(ts),
        idle_s,
        value,
    };
    let mut out = vec![
        Warning::HighSpread {
            metric: "write_iops".into(),
            cv: 0.42,
            limit: 0.1,
        },
        Warning::FileSmallerThanRam {
            size: 1 << 30,
            ram: 16 << 30,
        },
        Warning::FirstRunFaster {
            metric: "write_iops".into(),
            first: 9000.0,
            rest: 3000.0,
        },
        Warning::NetworkTarget {
            filesystem: "nfs4".into(),
        },
        Warning::MixedEngines {
            engines: [("fio/libaio".to_string(), 2), ("posixaio".to_string(), 3)].into(),
        },
        Warning::Outlier {
            metric: "write_iops".into(),
            timestamp: at("2026-11-02T10:00:00Z"),
            value: 120.0,
            score: 7.5,
        },
        Warning::Declining {
            metric: "write_iops".into(),
            first: (day("2026-11-01"), 4000.0),
            last: (day("2026-11-20"), 2000.0),
        },
        Warning::FutureRuns {
            count: 2,
            latest: at("2027-01-01T00:00:00Z"),
        },
        Warning::ScaledThreshold {
            resolution: "write_iops: 500 IOPS × 8 vCPUs = 4,000 IOPS".into(),
        },
        // Not judged is what was found, not advice: the headline keeps it.
        Warning::ScaledThreshold {
            resolution: "write_iops 500 IOPS per vCPU: the threshold cannot be resolved, as 1 of 1 run do not state the vCPUs; this rule is not judged".into(),
        },
        Warning::NotPolicysTest(crate::deviation::Deviation {
            field: "size",
            expected: "4 GiB".into(),
            found: "64 MiB".into(),
            effect: crate::deviation::Effect::Flatters,
        }),
        Warning::StaleSource {
            seen: day("2024-05-01"),
            url: "https://example.com/requirements".into(),
        },
        Warning::IdleSignature {
            metric: "write_iops".into(),
            rho: 0.93,
            runs: 8,
            longest: run("2026-11-03T08:00:00Z", 28800.0, 9000.0),
            shortest: run("2026-11-03T09:00:00Z", 40.0, 3000.0),
        },
        Warning::NoSeries {
            runs: 3,
            low: Vec::new(),
        },
        Warning::NoSeries {
            runs: 3,
            low: vec![(2, 1000.0, 3000.0)],
        },
        Warning::EngineFallback {
            asked: "io_uring".into(),
            reason: "the kernel refused io_uring_setup".into(),
            used: "posixaio".into(),
        },
        Warning::StepInsideRun {
            steps: 1,
            runs: 3,
            worst: at("2026-11-03T08:00:00Z"),
            before: 9000.0,
            after: 3000.0,
            at_s: 12.5,
        },
        Warning::SlowFinalFsync {
            slow: 2,
            runs: 3,
            worst: at("2026-11-03T08:00:00Z"),
            fsync_ms: 40000.0,
            runtime_ms: 60000.0,
        },
        Warning::DecisionStands {
            outcomes: vec![super::sequential::Outcome::Pass],
            decided_at: Some(at("2026-11-03T08:00:00Z")),
            due: at("2026-12-03T08:00:00Z").to_utc(),
            every: std::time::Duration::from_secs(30 * 86400),
        },
        Warning::SharedRuns {
            runs: 2,
            earliest: at("2026-11-03T08:00:00Z"),
            node: "node2".into(),
            at: "node2.jsonl".into(),
        },
    ];
    out.extend(caveats.into_iter().map(|caveat| Warning::InputCaveat {
        about: "out.txt".into(),
        caveat,
    }));
    out
}

#[cfg(test)]
mod tests {
    use super::Warning;
    use crate::evaluate::{Options, Scope, evaluate};

    /// Which kind of warning (of caveat, of reader's note) `w` is, numbered; no catch-all.
    fn kind_of(w: &Warning) -> usize {
        use super::caveat::{Caveat, Figures};
        match w {
            Warning::HighSpread { .. } => 0,
            Warning::FileSmallerThanRam { .. } => 1,
            Warning::FirstRunFaster { .. } => 2,
            Warning::NetworkTarget { .. } => 3,
            Warning::MixedEngines { .. } => 4,
            Warning::Outlier { .. } => 5,
            Warning::Declining { .. } => 6,
            Warning::FutureRuns { .. } => 7,
            Warning::ScaledThreshold { .. } => 8,
            Warning::NotPolicysTest(_) => 9,
            Warning::StaleSource { .. } => 10,
            Warning::IdleSignature { .. } => 11,
            Warning::NoSeries { .. } => 12,
            Warning::EngineFallback { .. } => 13,
            Warning::StepInsideRun { .. } => 14,
            Warning::SlowFinalFsync { .. } => 15,
            Warning::DecisionStands { .. } => 16,
            Warning::SharedRuns { .. } => 27,
            Warning::InputCaveat { caveat, .. } => match caveat {
                Caveat::Reader(_) => 17,
                Caveat::NoTimestamp { .. } => 18,
                Caveat::Assumed { .. } => 19,
                Caveat::CommandLine { .. } => 20,
                Caveat::StatedOtherwise { .. } => 21,
                Caveat::Contradicted { figures, .. } => match figures {
                    Figures::Directions { .. } => 22,
                    Figures::Mix { .. } => 23,
                    Figures::BlockSize { .. } => 24,
                    Figures::Runtime { .. } => 25,
                    Figures::Size { .. } => 26,
                },
            },
        }
    }

    #[test]
    fn each_warnings_headline_is_its_sentence_up_to_what_follows_from_it() {
        let mut kinds = std::collections::BTreeSet::new();
        let mut shortened = 0;
        for w in super::examples() {
            kinds.insert(kind_of(&w));
            let (whole, headline) = (w.to_string(), w.headline().to_string());
            assert!(headline.chars().count() > 20, "{w:?}: {headline}");
            // The headline is the sentence's start, and what it leaves out comes after "; ".
            let rest = whole
                .strip_prefix(&headline)
                .unwrap_or_else(|| panic!("{whole}"));
            assert!(rest.is_empty() || rest.starts_with("; "), "{whole}");
            // A rule not judged is a fact, not advice: said in the short form too.
            if matches!(w, Warning::ScaledThreshold { .. }) {
                assert_eq!(headline, whole);
            }
            shortened += usize::from(!rest.is_empty());
        }
        assert_eq!(kinds, (0..28).collect(), "an example of each kind");
        assert!(shortened > 20, "{shortened}");
    }

    /// The warnings and the reason of one run on `filesystem`, judged as `run` judges it.
    fn on(filesystem: &str) -> (Vec<String>, String) {
        let mut r = crate::evaluate::tests::rec("2026-12-01T10:00:00Z", 16.0);
        r.target.filesystem = Some(filesystem.into());
        let policy = crate::policy::resolve("swimlane").unwrap().policy;
        let now = chrono::DateTime::parse_from_rfc3339("2026-12-02T12:00:00Z")
            .unwrap()
            .to_utc();
        let e = evaluate(vec![r], &policy, &Options::new(Scope::Run, now));
        (e.warnings.iter().map(|w| w.to_string()).collect(), e.reason)
    }

    #[test]
    fn a_network_target_is_a_warning_and_a_target_in_ram_is_said_once_as_a_deviation() {
        for fs in ["nfs4", "fuse.sshfs"] {
            let (w, _) = on(fs);
            assert!(
                w.iter().any(
                    |w| w.starts_with(&format!("the target is on a network filesystem ({fs})"))
                ),
                "{fs}: {w:?}"
            );
        }
        for fs in ["tmpfs", "ramfs"] {
            let (w, reason) = on(fs);
            assert!(
                reason.contains(&format!("target {fs} (in RAM) instead of a disk")),
                "{reason}"
            );
            let ram: Vec<&String> = w.iter().filter(|w| w.contains("measures memory")).collect();
            assert_eq!(ram.len(), 1, "{fs}: one warning says it: {w:?}");
            assert!(
                ram[0].starts_with("not the policy's test: target"),
                "{ram:?}"
            );
            assert!(!w.iter().any(|w| w.contains("network")), "{w:?}");
        }
    }
}
