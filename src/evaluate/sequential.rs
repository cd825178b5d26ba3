//! The sequential decision (`--until-decided`): after every run, bounds on the policy's mean
//! that hold at every run count at once, so that looking after each run and stopping at the
//! first clear answer keeps its stated error rates (docs/sequential.md).
//!
//! The runs' figures are taken as log-normal: ln x ~ N(μ, σ²), independent. The policy's
//! statistic is the arithmetic mean of the runs, exp(μ + σ²/2):
//!
//! - **μ**: Lai's (1976) confidence sequence for a normal mean of unknown variance, from the
//!   test martingale that mixes the effect θ = (m − μ)/σ over N(0, 1/ρ) and the scale over
//!   the invariant prior dσ/σ: `M_n(μ) = √(ρ/(n+ρ)) · (V/(V − S²/(n+ρ)))^{n/2}`, with
//!   S = Σ(yᵢ − μ), V = Σ(yᵢ − μ)². Ville's inequality gives P(∃n: M_n(μ) ≥ 1/a) ≤ a, so
//!   {μ : M_n(μ) < 1/a} covers μ at every n at once with probability 1 − a. It is solved in
//!   closed form ([`mean_log_bounds`]).
//! - **σ²** (upper bound, for the upper bound of the mean): the Helmert residuals of the logs
//!   are independent N(0, σ²) as the runs come in; the average of the likelihood ratios of
//!   σ₁ = κσ₀ against σ₀ over a fixed grid of κ < 1 is a test martingale for σ₀, and the σ₀
//!   it does not reject bound σ² from above at every n ([`var_upper`]).
//!
//! The lower bound of the mean is exp(μ_low): the arithmetic mean is never below the
//! geometric one, so it is conservative. The upper bound is exp(μ_high + σ²_high/2), each at
//! half the level (a union bound). A false pass (the lower bound clears a threshold the true
//! mean misses) has probability at most α; a false fail at most β; both at every run count
//! and whatever the stopping rule, as long as the runs are independent and log-normal.

use chrono::{DateTime, FixedOffset, NaiveDate};
use serde::Serialize;

use super::over_time::latest;
use crate::numbers::short;
use crate::policy::Op;

/// What the sequence is asked for: its error rates, its indifference zone and its budget.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Settings {
    /// The chance of a false pass: passing a node whose true mean misses the threshold.
    pub alpha: f64,
    /// The chance of a false fail: failing a node whose true mean meets it.
    pub beta: f64,
    /// The indifference zone, a fraction: a node whose mean is bound within threshold
    /// ×(1 ± δ) is at the threshold, and the sequence ends inconclusive without using the
    /// rest of its budget.
    pub delta: f64,
    /// The budget: the sequence ends inconclusive after this many runs…
    pub max_runs: usize,
    /// … or once its runs span this many calendar days.
    pub max_days: usize,
}

impl Default for Settings {
    fn default() -> Settings {
        Settings {
            alpha: 0.05,
            beta: 0.05,
            delta: 0.1,
            max_runs: 30,
            max_days: 7,
        }
    }
}

/// The policy's evidence rule: the sequence may end only once it is met.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Floor {
    pub min_runs: usize,
    pub min_days: usize,
    /// Runs a day needs to count towards `min_days` (`evaluate::evidence_days`).
    pub min_runs_per_day: u32,
}

/// The mixing parameter ρ of the mean's confidence sequence, chosen from the policy alone
/// (never from the runs): the one of a fixed grid that gives the narrowest bounds at the
/// policy's minimum number of runs, where a clear node should stop.
pub fn rho_for(min_runs: usize, level: f64) -> f64 {
    const GRID: [f64; 8] = [0.05, 0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0];
    let n = min_runs.max(3) as f64;
    GRID.into_iter()
        .min_by(|a, b| width_factor(n, level, *a).total_cmp(&width_factor(n, level, *b)))
        .expect("grid not empty")
}

/// u* of the closed form: the mean of the logs, x̄, is bounded by x̄ ± √(u*·Q/n) with Q the
/// sum of squared deviations; infinite where the runs are still too few for any bound.
fn width_factor(n: f64, level: f64, rho: f64) -> f64 {
    let c = rho / (n + rho);
    let k = ((2.0 / n) * ((1.0 / level).ln() + 0.5 * ((n + rho) / rho).ln())).exp();
    if k * c >= 1.0 {
        f64::INFINITY
    } else {
        (k - 1.0) / (1.0 - k * c)
    }
}

/// The confidence sequence of μ at level `level` (its chance of ever missing μ), for `n`
/// logs of mean `mean` and sum of squared deviations `q`: M_n(μ) < 1/level ⇔
/// (1+u)/(1+u·ρ/(n+ρ)) < K with u = n(x̄−μ)²/Q, K = exp((2/n)(ln(1/level) + ½ln((n+ρ)/ρ))).
fn mu_bounds(n: usize, mean: f64, q: f64, level: f64, rho: f64) -> (f64, f64) {
    if n < 2 {
        return (f64::NEG_INFINITY, f64::INFINITY);
    }
    let u = width_factor(n as f64, level, rho);
    let half = (u * q / n as f64).sqrt();
    if !half.is_finite() {
        return (f64::NEG_INFINITY, f64::INFINITY);
    }
    (mean - half, mean + half)
}

/// The bounds of μ (mean of `logs`) at `level` (the tests' check of the closed form).
#[cfg(test)]
fn mean_log_bounds(logs: &[f64], level: f64, rho: f64) -> (f64, f64) {
    let (n, mean, q) = moments(logs);
    mu_bounds(n, mean, q, level, rho)
}

fn moments(logs: &[f64]) -> (usize, f64, f64) {
    let n = logs.len();
    let mean = logs.iter().sum::<f64>() / n.max(1) as f64;
    let q = logs.iter().map(|y| (y - mean).powi(2)).sum::<f64>();
    (n, mean, q)
}

/// The alternatives κ = σ₁/σ₀ the variance's test martingale averages over.
const KAPPAS: [f64; 9] = [0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3, 0.2, 0.1];

/// An upper bound of σ² at `level` at every n at once, from `m` = n − 1 Helmert residuals
/// whose squares sum to `q` (the sum of squared deviations): the largest σ₀² the average of
/// κ^{-m}·exp(Q(1 − κ⁻²)/(2σ₀²)) over [`KAPPAS`] does not reject at 1/level.
fn var_upper_of(m: usize, q: f64, level: f64) -> f64 {
    if m == 0 {
        return f64::INFINITY;
    }
    let e = |s0: f64| {
        KAPPAS
            .iter()
            .map(|&k| (-(m as f64) * k.ln() + q * (1.0 - 1.0 / (k * k)) / (2.0 * s0)).exp())
            .sum::<f64>()
            / KAPPAS.len() as f64
    };
    let target = 1.0 / level;
    // e(s0) increases with s0 (towards the mean of κ^{-m}); σ₀² past the crossing are rejected.
    let sup = KAPPAS.iter().map(|&k| k.powi(-(m as i32))).sum::<f64>() / KAPPAS.len() as f64;
    if sup <= target {
        return f64::INFINITY;
    }
    let (mut lo, mut hi) = (q.max(f64::MIN_POSITIVE) * 1e-6, q.max(1e-300));
    while e(hi) < target {
        hi *= 2.0;
        if !hi.is_finite() {
            return f64::INFINITY;
        }
    }
    if e(lo) >= target {
        return lo;
    }
    for _ in 0..200 {
        let mid = (lo * hi).sqrt();
        if e(mid) < target {
            lo = mid;
        } else {
            hi = mid;
        }
        if hi / lo < 1.0 + 1e-12 {
            break;
        }
    }
    lo
}

/// An upper bound of σ² of `logs` at `level`, valid at every n at once (for the tests).
#[cfg(test)]
fn var_upper(logs: &[f64], level: f64) -> f64 {
    let (n, _, q) = moments(logs);
    var_upper_of(n.saturating_sub(1), q, level)
}

/// Bounds on the arithmetic mean of log-normal figures, from `n` logs of mean `mean` and
/// sum of squared deviations `q`: the lower at `low_level`, the upper at `high_level`.
fn am_bounds_of(
    n: usize,
    mean: f64,
    q: f64,
    low_level: f64,
    high_level: f64,
    rho_low: f64,
    rho_high: f64,
) -> (f64, f64) {
    let low = mu_bounds(n, mean, q, low_level, rho_low).0.exp();
    let mu_high = mu_bounds(n, mean, q, high_level / 2.0, rho_high).1;
    let var = var_upper_of(n.saturating_sub(1), q, high_level / 2.0);
    (low, (mu_high + var / 2.0).exp())
}

/// How a sequence ended, or where it stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// The bound on the good side clears the threshold, the floor met.
    Pass,
    /// The bound on the bad side is past the threshold, the floor met.
    Fail,
    /// Bounded within threshold ×(1 ± δ): at the threshold, inconclusive.
    AtThreshold,
    /// The budget (runs or days) is used up without a decision: inconclusive.
    Budget,
    /// Not decided yet: more runs are needed.
    Undecided,
    /// A figure is 0 or missing: the log-normal bounds do not apply.
    NotPositive,
}

impl Outcome {
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Pass => "pass",
            Outcome::Fail => "fail",
            Outcome::AtThreshold => "at_threshold",
            Outcome::Budget => "budget",
            Outcome::Undecided => "undecided",
            Outcome::NotPositive => "not_positive",
        }
    }
    /// Whether the sequence is over.
    pub fn ended(self) -> bool {
        !matches!(self, Outcome::Undecided)
    }
}

/// The state of the sequence after the runs given.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Sequence {
    pub outcome: Outcome,
    /// Runs and calendar days of the current sequence (since its start or restart).
    pub n: usize,
    pub days: usize,
    /// Bounds on the mean at the decision (or now): `low`, `high`; absent before 2 runs or
    /// where the runs are still too few for a finite bound.
    pub low: Option<f64>,
    pub high: Option<f64>,
    pub alpha: f64,
    pub beta: f64,
    pub delta: f64,
    pub max_runs: usize,
    pub max_days: usize,
    pub min_runs: usize,
    pub min_days: usize,
    /// The index (in the runs given) of the current sequence's first run.
    #[serde(skip)]
    pub start: usize,
    /// When the current sequence started, where a step or fall restarted it.
    pub restarted: Option<DateTime<FixedOffset>>,
    /// Runs given after the decision (re-checks): they are watched for a step or fall only.
    pub after: usize,
    /// Runs still needed for a decision, estimated from the spread seen so far (undecided).
    pub more_runs: Option<usize>,
    /// The time of the run the sequence ended at (a decision or the budget).
    #[serde(skip)]
    pub decided_at: Option<DateTime<FixedOffset>>,
}

fn day(t: &DateTime<FixedOffset>) -> NaiveDate {
    t.date_naive()
}

/// The days the points of `seg` are over, counted as the evidence rule counts them
/// (`evaluate::run_days`): `seg` starts at the sequence's point `from`, and the points at
/// `undated` (the sequence's positions, in order) count towards no day, their time assumed.
fn days_of(
    seg: &[(DateTime<FixedOffset>, f64)],
    from: usize,
    undated: &[usize],
    per_day: u32,
) -> usize {
    let stated = seg
        .iter()
        .enumerate()
        .filter(|(i, _)| undated.binary_search(&(from + i)).is_err())
        .map(|(_, p)| p.0);
    super::evidence_days(stated, per_day).counted
}

/// Calendar days from the first run to the last, both counted, in the last one's zone.
fn span_days(points: &[(DateTime<FixedOffset>, f64)]) -> usize {
    match (points.first(), points.last()) {
        (Some(a), Some(b)) => {
            let zone = *b.0.offset();
            (day(&b.0) - day(&a.0.with_timezone(&zone))).num_days() as usize + 1
        }
        _ => 0,
    }
}

/// The sequence over `points` (the runs' figures of the deciding rule, in time order),
/// judged against `op threshold` after each run as `run --until-decided` does: the first
/// decision once the floor is met ends it; a step down or a steady fall (over_time.rs)
/// restarts it on the newest runs, even after a decision (the runs after it are re-checks).
/// The points at `undated` (positions, in order) have a time their output did not state: it
/// places them, and they count towards no day of the floor.
pub fn sequence(
    points: &[(DateTime<FixedOffset>, f64)],
    undated: &[usize],
    op: Op,
    threshold: f64,
    floor: Floor,
    s: &Settings,
) -> Sequence {
    walk(points, undated, op, threshold, floor, s, true)
}

/// The sequence over `points` as far as its first end (a decision or the budget), as
/// `run --until-decided` stops there: the runs after it are not looked at.
pub fn first_end(
    points: &[(DateTime<FixedOffset>, f64)],
    op: Op,
    threshold: f64,
    floor: Floor,
    s: &Settings,
) -> Sequence {
    walk(points, &[], op, threshold, floor, s, false)
}

/// The sequence over `points` ([`sequence`]); as far as its first end unless `watch_after`.
fn walk(
    points: &[(DateTime<FixedOffset>, f64)],
    undated: &[usize],
    op: Op,
    threshold: f64,
    floor: Floor,
    s: &Settings,
    watch_after: bool,
) -> Sequence {
    let higher = op.higher_is_better();
    // The good side's bound is held to α, the bad side's to β.
    let (low_level, high_level) = if higher {
        (s.alpha, s.beta)
    } else {
        (s.beta, s.alpha)
    };
    let rho_low = rho_for(floor.min_runs, low_level);
    let rho_high = rho_for(floor.min_runs, high_level / 2.0);
    let mut start = 0;
    let mut restarted = None;
    let mut decided: Option<(usize, Outcome, f64, f64)> = None;
    for i in 0..points.len() {
        if decided.is_some() && !watch_after {
            break;
        }
        let seg = &points[start..=i];
        if let Some(l) = latest(seg, op).into_iter().max_by_key(|l| l.runs) {
            start = i + 1 - l.runs;
            restarted = Some(l.since);
            decided = None;
        }
        if decided.is_some() {
            continue;
        }
        let seg = &points[start..=i];
        if seg.iter().any(|p| !(p.1 > 0.0 && p.1.is_finite())) {
            decided = Some((i, Outcome::NotPositive, f64::NAN, f64::NAN));
            continue;
        }
        let logs: Vec<f64> = seg.iter().map(|p| p.1.ln()).collect();
        let (n, mean, q) = moments(&logs);
        let (low, high) = am_bounds_of(n, mean, q, low_level, high_level, rho_low, rho_high);
        let floor_met = n >= floor.min_runs
            && days_of(seg, start, undated, floor.min_runs_per_day) >= floor.min_days;
        let (good, bad) = if higher {
            (op.holds(low, threshold), !op.holds(high, threshold))
        } else {
            (op.holds(high, threshold), !op.holds(low, threshold))
        };
        let zone = low >= threshold / (1.0 + s.delta) && high <= threshold * (1.0 + s.delta);
        let outcome = if !floor_met {
            None
        } else if good {
            Some(Outcome::Pass)
        } else if bad {
            Some(Outcome::Fail)
        } else if zone {
            Some(Outcome::AtThreshold)
        } else if n >= s.max_runs || span_days(seg) >= s.max_days {
            Some(Outcome::Budget)
        } else {
            None
        };
        if let Some(o) = outcome {
            decided = Some((i, o, low, high));
        }
    }
    let end = match decided {
        Some((i, ..)) if !watch_after => i,
        _ => points.len().saturating_sub(1),
    };
    let (last, outcome, low, high) = match decided {
        Some(d) => d,
        None if points.is_empty() => (0, Outcome::Undecided, f64::INFINITY, f64::INFINITY),
        None => {
            let logs: Vec<f64> = points[start..].iter().map(|p| p.1.ln()).collect();
            let (n, mean, q) = moments(&logs);
            let (l, h) = am_bounds_of(n, mean, q, low_level, high_level, rho_low, rho_high);
            (end, Outcome::Undecided, l, h)
        }
    };
    let seg = if points.is_empty() {
        points
    } else {
        &points[start..=last]
    };
    let finite = |v: f64| (v.is_finite() && v > 0.0).then_some(v);
    let more_runs = (outcome == Outcome::Undecided && seg.len() >= 2)
        .then(|| {
            more_runs(
                seg,
                op,
                threshold,
                floor,
                s,
                (low_level, high_level, rho_low, rho_high),
            )
        })
        .flatten();
    Sequence {
        outcome,
        n: seg.len(),
        days: days_of(seg, start, undated, floor.min_runs_per_day),
        low: finite(low),
        high: finite(high),
        alpha: s.alpha,
        beta: s.beta,
        delta: s.delta,
        max_runs: s.max_runs,
        max_days: s.max_days,
        min_runs: floor.min_runs,
        min_days: floor.min_days,
        start,
        restarted,
        after: if outcome == Outcome::Undecided || points.is_empty() {
            0
        } else {
            end - last
        },
        more_runs,
        decided_at: (outcome != Outcome::Undecided)
            .then(|| points.get(last).map(|p| p.0))
            .flatten(),
    }
}

/// Runs still needed to decide, if the runs to come have the mean and spread of those seen:
/// the first count, within the budget, at which the bounds would clear the threshold or the
/// indifference zone; None where even the budget would not do.
fn more_runs(
    seg: &[(DateTime<FixedOffset>, f64)],
    op: Op,
    threshold: f64,
    floor: Floor,
    s: &Settings,
    (low_level, high_level, rho_low, rho_high): (f64, f64, f64, f64),
) -> Option<usize> {
    let logs: Vec<f64> = seg.iter().map(|p| p.1.ln()).collect();
    let (n, mean, q) = moments(&logs);
    let s2 = q / (n - 1) as f64;
    let first = (n + 1).max(floor.min_runs);
    (first..=s.max_runs.max(first)).find_map(|m| {
        let (low, high) = am_bounds_of(
            m,
            mean,
            s2 * (m - 1) as f64,
            low_level,
            high_level,
            rho_low,
            rho_high,
        );
        let decides = if op.higher_is_better() {
            op.holds(low, threshold) || !op.holds(high, threshold)
        } else {
            op.holds(high, threshold) || !op.holds(low, threshold)
        };
        let zone = low >= threshold / (1.0 + s.delta) && high <= threshold * (1.0 + s.delta);
        (m <= s.max_runs && (decides || zone)).then_some(m - n)
    })
}

/// One deciding rule's sequence, as the outputs show it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Decision {
    pub metric: String,
    pub op: Op,
    pub threshold: f64,
    #[serde(flatten)]
    pub sequence: Sequence,
}

impl Decision {
    /// "n 6 over 2 days, α 0.05, β 0.05, δ 10%, bounds 4012–6640 IOPS": what every format
    /// prints beside the verdict.
    pub fn figures(&self) -> String {
        let q = &self.sequence;
        let unit = crate::metrics::unit(&self.metric);
        let bounds = match (q.low, q.high) {
            (Some(l), Some(h)) => format!("anytime bounds {}–{} {unit}", short(l), short(h)),
            (Some(l), None) => format!("anytime bounds {}–∞ {unit}", short(l)),
            _ => "no finite bound yet".to_string(),
        };
        format!(
            "n {} over {} day{}, α {}, β {}, δ {}%, {bounds}",
            q.n,
            q.days,
            if q.days == 1 { "" } else { "s" },
            q.alpha,
            q.beta,
            q.delta * 100.0
        )
    }

    /// The rule's part of the reason.
    fn reason(&self) -> String {
        let q = &self.sequence;
        let rule = format!("{} {} {}", self.metric, self.op, short(self.threshold));
        let head = match q.outcome {
            Outcome::Pass => format!("decided pass: {rule} is met"),
            Outcome::Fail => format!("decided fail: {rule} is missed"),
            Outcome::AtThreshold => format!(
                "inconclusive: the mean is within ±{}% of {} {}, too close to decide",
                q.delta * 100.0,
                short(self.threshold),
                crate::metrics::unit(&self.metric)
            ),
            Outcome::Budget => format!(
                "inconclusive: the budget ({} runs or {} days) is used up without deciding {rule}",
                q.max_runs, q.max_days
            ),
            Outcome::NotPositive => {
                format!(
                    "inconclusive: a figure of {} is 0, no bound applies",
                    self.metric
                )
            }
            Outcome::Undecided => {
                let floor = if q.n < q.min_runs || q.days < q.min_days {
                    format!(
                        "the policy's floor is {} runs over {} days; ",
                        q.min_runs, q.min_days
                    )
                } else {
                    String::new()
                };
                let more = match q.more_runs {
                    Some(m) => format!(
                        "about {m} more run{} at the spread seen",
                        if m == 1 { "" } else { "s" }
                    ),
                    None if q.n < 2 => "too few runs to estimate how many more".to_string(),
                    None => format!(
                        "not within the budget of {} runs at the spread seen",
                        q.max_runs
                    ),
                };
                format!("undecided on {rule}: {floor}{more}")
            }
        };
        let restarted = q
            .restarted
            .map(|t| {
                format!(
                    "; restarted {} after the figures stepped down or fell",
                    t.format("%Y-%m-%d %H:%M")
                )
            })
            .unwrap_or_default();
        let after = if q.after > 0 {
            format!(
                "; {} later run{} re-checked, no step or fall",
                q.after,
                if q.after == 1 { "" } else { "s" }
            )
        } else {
            String::new()
        };
        format!("{head} ({}){restarted}{after}", self.figures())
    }
}

/// A rule's figures, run by run, in time order, each at its run's time; `undated`: the
/// positions of the runs whose time was assumed (`Run::stated_time`), in order.
#[derive(Debug, Clone, PartialEq)]
struct Points {
    at: Vec<(DateTime<FixedOffset>, f64)>,
    undated: Vec<usize>,
}

/// What the sequential decision needs of an evaluation: each deciding rule's figures in time
/// order, the policy's floor, and what the evaluation left out. Kept where the settings are
/// known only later (the fleet's error rates, divided by its number of nodes).
#[derive(Debug, Clone, PartialEq)]
pub struct Pending {
    rules: Vec<(String, Op, f64, Points)>,
    floor: Floor,
    not_counted: String,
}

impl Pending {
    /// Where `ev`'s runs can be judged by the sequence: the policy's own test, every deciding
    /// rule measured. None otherwise (the evaluation's own, inconclusive, verdict stands).
    pub fn of(ev: &super::Evaluation, policy: &crate::policy::Policy) -> Option<Pending> {
        let unlike = !ev.deviations.is_empty() || !ev.differences.is_empty();
        Pending::from_parts(
            &ev.runs,
            &ev.rules,
            unlike,
            ev.strict,
            &ev.not_counted,
            policy,
        )
    }

    /// [`Pending::of`], from the parts of an evaluation: its runs and rules, whether its runs
    /// are unlike the policy's test (a deviation, a contradiction), and the runs not counted.
    fn from_parts(
        runs: &[crate::run_index::Run],
        rules: &[super::RuleResult],
        unlike: bool,
        strict: bool,
        not_counted: &[super::NotCounted],
        policy: &crate::policy::Policy,
    ) -> Option<Pending> {
        use crate::policy::Level;
        if runs.is_empty() || unlike {
            return None;
        }
        let deciding: Vec<&super::RuleResult> = rules
            .iter()
            .filter(|r| r.level == Level::Fail || (strict && r.level == Level::Warn))
            .collect();
        // A threshold the host facts cannot resolve judges nothing, sequentially or not.
        if deciding.is_empty() || deciding.iter().any(|r| r.value.is_none() || !r.resolved()) {
            return None;
        }
        let rules = deciding
            .iter()
            .map(|r| {
                let measured = runs
                    .iter()
                    .filter_map(|run| run.metrics.get(&r.metric).map(|&v| (run, v)));
                let mut points = Points {
                    at: Vec::new(),
                    undated: Vec::new(),
                };
                for (i, (run, v)) in measured.enumerate() {
                    if run.stated_time().is_none() {
                        points.undated.push(i);
                    }
                    points.at.push((run.timestamp, v));
                }
                (r.metric.clone(), r.op, r.threshold, points)
            })
            .collect();
        let not_counted = if not_counted.is_empty() {
            String::new()
        } else {
            let l: Vec<String> = not_counted.iter().map(|n| n.to_string()).collect();
            format!(" ({})", l.join("; "))
        };
        Some(Pending {
            rules,
            floor: Floor {
                min_runs: policy.evidence.min_runs as usize,
                min_days: policy.evidence.min_days as usize,
                min_runs_per_day: policy.evidence.min_runs_per_day,
            },
            not_counted,
        })
    }

    /// The decision under `s`: pass only if every rule's sequence passed, fail if any failed,
    /// else inconclusive; with the reason every format prints and one decision per rule.
    pub fn decide(&self, s: &Settings) -> (super::Verdict, String, Vec<Decision>) {
        use super::Verdict;
        let decisions: Vec<Decision> = self
            .rules
            .iter()
            .map(|(metric, op, threshold, points)| Decision {
                metric: metric.clone(),
                op: *op,
                threshold: *threshold,
                sequence: sequence(&points.at, &points.undated, *op, *threshold, self.floor, s),
            })
            .collect();
        let outcomes: Vec<Outcome> = decisions.iter().map(|d| d.sequence.outcome).collect();
        let verdict = if outcomes.contains(&Outcome::Fail) {
            Verdict::Fail
        } else if outcomes.iter().all(|o| *o == Outcome::Pass) {
            Verdict::Pass
        } else {
            Verdict::Inconclusive
        };
        let parts: Vec<String> = decisions.iter().map(Decision::reason).collect();
        (
            verdict,
            format!("{}{}", parts.join("; "), self.not_counted),
            decisions,
        )
    }
}

/// The verdict under `--until-decided` (`Options::sequential`), decided with the evaluation:
/// one sequence per deciding rule, the verdict pass only if every one passed, fail if any
/// failed, else inconclusive, with the sequences. Where the runs are not the policy's test, do
/// not measure a deciding rule, or a deciding rule's threshold scales with a machine they do
/// not state (and without `--until-decided`), the evaluation's own verdict and reason stand
/// and no sequence is kept.
pub(super) struct Settled {
    pub(super) verdict: super::Verdict,
    pub(super) reason: String,
    pub(super) decisions: Vec<Decision>,
}

/// See [`Settled`]: `own` is the evaluation's own verdict and reason.
pub(super) fn settle(
    own: (super::Verdict, String),
    runs: &[crate::run_index::Run],
    rules: &[super::RuleResult],
    unlike: bool,
    not_counted: &[super::NotCounted],
    policy: &crate::policy::Policy,
    opts: &super::Options,
) -> Settled {
    let pending = opts.sequential.as_ref().and_then(|s| {
        Pending::from_parts(runs, rules, unlike, opts.strict, not_counted, policy).map(|p| (p, s))
    });
    match pending {
        Some((p, s)) => {
            let (verdict, reason, decisions) = p.decide(s);
            Settled {
                verdict,
                reason,
                decisions,
            }
        }
        None => Settled {
            verdict: own.0,
            reason: own.1,
            decisions: Vec::new(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A seeded log-normal stream: ln x ~ N(ln median, σ²), by Box–Muller on xorshift.
    pub(crate) struct Lognormal {
        state: u64,
        spare: Option<f64>,
    }

    impl Lognormal {
        pub(crate) fn new(seed: u64) -> Lognormal {
            Lognormal {
                state: seed | 1,
                spare: None,
            }
        }
        fn uniform(&mut self) -> f64 {
            self.state ^= self.state << 13;
            self.state ^= self.state >> 7;
            self.state ^= self.state << 17;
            ((self.state >> 11) as f64 + 0.5) / (1u64 << 53) as f64
        }
        pub(crate) fn normal(&mut self) -> f64 {
            if let Some(z) = self.spare.take() {
                return z;
            }
            let (u, v) = (self.uniform(), self.uniform());
            let r = (-2.0 * u.ln()).sqrt();
            let t = std::f64::consts::TAU * v;
            self.spare = Some(r * t.sin());
            r * t.cos()
        }
    }

    fn at(i: usize) -> DateTime<FixedOffset> {
        // Three runs a day at 08, 14 and 20 h from 2026-11-01.
        DateTime::parse_from_rfc3339(&format!(
            "2026-11-{:02}T{:02}:00:00Z",
            1 + i / 3,
            8 + 6 * (i % 3)
        ))
        .unwrap()
    }

    fn points(v: &[f64]) -> Vec<(DateTime<FixedOffset>, f64)> {
        v.iter().enumerate().map(|(i, &x)| (at(i), x)).collect()
    }

    const FLOOR: Floor = Floor {
        min_runs: 6,
        min_days: 2,
        min_runs_per_day: 1,
    };

    #[test]
    fn the_mean_bounds_solve_the_martingale_at_its_boundary() {
        // At the bound, M_n(μ) = 1/level exactly: computed here from its definition.
        let logs = [8.1, 8.3, 7.9, 8.25, 8.0, 8.15, 8.05];
        let rho = 0.25;
        let (lo, hi) = mean_log_bounds(&logs, 0.05, rho);
        let m = |mu: f64| {
            let n = logs.len() as f64;
            let s: f64 = logs.iter().map(|y| y - mu).sum();
            let v: f64 = logs.iter().map(|y| (y - mu).powi(2)).sum();
            (rho / (n + rho)).sqrt() * (v / (v - s * s / (n + rho))).powf(n / 2.0)
        };
        assert!((m(lo) - 20.0).abs() < 1e-6, "{}", m(lo));
        assert!((m(hi) - 20.0).abs() < 1e-6, "{}", m(hi));
        assert!(m((lo + hi) / 2.0) < 20.0);
        // Wider than the ordinary 95% t interval: the price of looking after every run.
        let (n, mean, q) = moments(&logs);
        let t_half = super::super::t_975(n - 1) * (q / (n - 1) as f64 / n as f64).sqrt();
        assert!(hi - mean > t_half, "{} vs {t_half}", hi - mean);
    }

    #[test]
    fn one_or_two_runs_bound_nothing() {
        assert_eq!(
            mean_log_bounds(&[8.0], 0.05, 0.25),
            (f64::NEG_INFINITY, f64::INFINITY)
        );
        assert_eq!(
            mean_log_bounds(&[8.0, 8.1], 0.05, 0.25),
            (f64::NEG_INFINITY, f64::INFINITY)
        );
    }

    #[test]
    fn the_variance_bound_is_where_its_martingale_reaches_1_over_level() {
        let logs = [0.1, -0.2, 0.05, 0.3, -0.1, 0.0, 0.15, -0.25];
        let up = var_upper(&logs, 0.025);
        let (n, _, q) = moments(&logs);
        let e = |s0: f64| {
            KAPPAS
                .iter()
                .map(|&k| k.powi(-(n as i32 - 1)) * (q * (1.0 - 1.0 / (k * k)) / (2.0 * s0)).exp())
                .sum::<f64>()
                / KAPPAS.len() as f64
        };
        assert!((e(up) - 40.0).abs() < 1e-6, "{}", e(up));
        assert!(up > q / (n - 1) as f64, "above the sample variance");
    }

    /// Looking after every run: across many seeded sequences at a true mean just below the
    /// threshold, the share ever passing stays under α (the peeking error would exceed it).
    #[test]
    fn looking_after_every_run_keeps_the_false_pass_rate_under_alpha() {
        let s = Settings::default();
        let sigma = 0.3f64; // CV about 31%
        // True arithmetic mean exactly at the threshold: any pass is false.
        let threshold: f64 = 3000.0;
        let mu = threshold.ln() - sigma * sigma / 2.0;
        let mut rng = Lognormal::new(7);
        let trials = 2000;
        let (mut passes, mut naive) = (0, 0);
        for _ in 0..trials {
            let v: Vec<f64> = (0..s.max_runs)
                .map(|_| (mu + sigma * rng.normal()).exp())
                .collect();
            if sequence(&points(&v), &[], Op::Ge, threshold, FLOOR, &s).outcome == Outcome::Pass {
                passes += 1;
            }
            // The peeking error: the ordinary 95% interval re-tested after each run.
            if (6..=v.len()).any(|n| {
                let st = super::super::Stats::of(&v[..n]).unwrap();
                st.ci95_low >= threshold
            }) {
                naive += 1;
            }
        }
        let rate = passes as f64 / trials as f64;
        let naive = naive as f64 / trials as f64;
        // Three standard errors of a proportion at α.
        let se = (s.alpha * (1.0 - s.alpha) / trials as f64).sqrt();
        assert!(rate <= s.alpha + 3.0 * se, "false passes {rate}");
        assert!(naive > s.alpha / 2.0, "the peeking rule passes {naive}");
        assert!(naive > rate, "peeking {naive} vs sequence {rate}");
    }

    #[test]
    fn a_clear_node_stops_at_the_floor_and_a_clearly_failing_one_fails() {
        let s = Settings::default();
        let good: Vec<f64> = (0..12).map(|i| 6000.0 + 100.0 * (i % 3) as f64).collect();
        let q = sequence(&points(&good), &[], Op::Ge, 3000.0, FLOOR, &s);
        assert_eq!((q.outcome, q.n, q.after), (Outcome::Pass, 6, 6));
        assert!(q.low.unwrap() >= 3000.0);
        let bad: Vec<f64> = (0..12).map(|i| 1500.0 + 50.0 * (i % 3) as f64).collect();
        let q = sequence(&points(&bad), &[], Op::Ge, 3000.0, FLOOR, &s);
        assert_eq!((q.outcome, q.n), (Outcome::Fail, 6));
        assert!(q.high.unwrap() < 3000.0);
        // Before the floor's second day, nothing ends however clear.
        let q = sequence(&points(&good[..3]), &[], Op::Ge, 3000.0, FLOOR, &s);
        assert_eq!(q.outcome, Outcome::Undecided);
        assert!(q.more_runs.is_some_and(|m| m >= 3), "{q:?}");
    }

    #[test]
    fn a_run_whose_time_was_assumed_counts_towards_no_day_of_the_floor() {
        let s = Settings::default();
        let good: Vec<f64> = (0..6).map(|i| 6000.0 + 100.0 * (i % 3) as f64).collect();
        let p = points(&good);
        // the second day's runs state no time: one day, the floor unmet
        let q = sequence(&p, &[3, 4, 5], Op::Ge, 3000.0, FLOOR, &s);
        assert_eq!(
            (q.outcome, q.n, q.days),
            (Outcome::Undecided, 6, 1),
            "{q:?}"
        );
        // none states its time: no day at all
        let q = sequence(&p, &[0, 1, 2, 3, 4, 5], Op::Ge, 3000.0, FLOOR, &s);
        assert_eq!((q.outcome, q.days), (Outcome::Undecided, 0), "{q:?}");
        // each day with one run that states its time: two days, the floor met
        let q = sequence(&p, &[1, 2, 4, 5], Op::Ge, 3000.0, FLOOR, &s);
        assert_eq!((q.outcome, q.days), (Outcome::Pass, 2), "{q:?}");
    }

    #[test]
    fn a_node_at_the_threshold_with_a_wide_spread_ends_at_the_budget() {
        let s = Settings::default();
        let v: Vec<f64> = (0..40)
            .map(|i| [2000.0, 4300.0, 2900.0, 3600.0][i % 4])
            .collect();
        let q = sequence(&points(&v), &[], Op::Ge, 3000.0, FLOOR, &s);
        assert_eq!(q.outcome, Outcome::Budget, "{q:?}");
        assert!(q.n == s.max_runs || q.days >= s.max_days, "{q:?}");
    }

    #[test]
    fn a_step_down_restarts_the_sequence_on_the_newest_runs() {
        let s = Settings::default();
        let mut v: Vec<f64> = (0..9).map(|i| 6000.0 + 100.0 * (i % 3) as f64).collect();
        v.extend((0..9).map(|i| 2000.0 + 50.0 * (i % 3) as f64));
        let p = points(&v);
        let q = sequence(&p, &[], Op::Ge, 3000.0, FLOOR, &s);
        assert_eq!(q.restarted, Some(p[9].0), "{q:?}");
        assert_eq!((q.outcome, q.start), (Outcome::Fail, 9));
        assert!(q.n >= FLOOR.min_runs);
    }

    #[test]
    fn rho_is_chosen_from_the_floor_alone() {
        assert_eq!(rho_for(6, 0.05), rho_for(6, 0.05));
        assert!(rho_for(6, 0.05) < 1.0);
        assert!(rho_for(30, 0.05) > rho_for(6, 0.05));
    }
}
