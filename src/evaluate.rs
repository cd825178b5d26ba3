//! Evaluation: records + policy → verdict, with per-rule values, statistics and warnings.
//! Pure: no I/O and no clock (the caller passes `now`), so every case is a plain unit test.
//! Every output format renders the [`Evaluation`] this module returns.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use chrono::{DateTime, Duration as ChronoDuration, FixedOffset, NaiveDate, Utc};
use serde::Serialize;

use crate::deviation::{self, Deviation, Effect};
use crate::history::Record;
use crate::job::ShapeDifference;
use crate::policy::{Aggregate, Level, Op, Policy, TestOrigin};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    Pass,
    Fail,
    Inconclusive,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Pass => "pass",
            Verdict::Fail => "fail",
            Verdict::Inconclusive => "inconclusive",
        }
    }
    /// contract.md's exit codes.
    pub fn exit_code(self) -> u8 {
        match self {
            Verdict::Pass => 0,
            Verdict::Fail => 1,
            Verdict::Inconclusive => 3,
        }
    }

    /// The verdict of several judged together (the groups of a report, the nodes of a
    /// fleet), which every one must pass: fail if any fails, else inconclusive if any is or
    /// there are none, else pass.
    pub fn worst(verdicts: impl IntoIterator<Item = Verdict>) -> Verdict {
        let mut worst = None;
        for v in verdicts {
            match v {
                Verdict::Fail => return Verdict::Fail,
                Verdict::Inconclusive => worst = Some(Verdict::Inconclusive),
                Verdict::Pass => {
                    worst.get_or_insert(Verdict::Pass);
                }
            }
        }
        worst.unwrap_or(Verdict::Inconclusive)
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What is being judged, which decides whether the evidence rule applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Scope {
    /// The runs of one `iopscheck run` invocation: judged as they are; the evidence rule is
    /// reported beside the verdict, not applied.
    Run,
    /// Outputs read by `iopscheck import`: judged as they are.
    Import,
    /// The history over a window (`iopscheck report`): too little evidence is inconclusive.
    Report,
}

#[derive(Debug, Clone)]
pub struct Options {
    pub scope: Scope,
    /// Warn-level rules decide too.
    pub strict: bool,
    pub now: DateTime<Utc>,
    /// Job-shape differences found by the caller (imports): they make the verdict inconclusive.
    pub shape_differences: Vec<ShapeDifference>,
    /// Scale differences and other caveats found by the caller, shown as warnings.
    pub notes: Vec<Warning>,
    /// Engines seen in the window outside this group (report): for the mixed-engine warning.
    pub other_engines: BTreeMap<String, usize>,
}

impl Options {
    pub fn new(scope: Scope, now: DateTime<Utc>) -> Options {
        Options {
            scope,
            strict: false,
            now,
            shape_differences: vec![],
            notes: vec![],
            other_engines: BTreeMap::new(),
        }
    }
}

/// Descriptive statistics of one metric across runs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Stats {
    pub n: usize,
    pub mean: f64,
    pub median: f64,
    pub min: f64,
    pub max: f64,
    /// Sample standard deviation (n − 1); 0 for a single run.
    pub stdev: f64,
    /// stdev / mean; 0 when the mean is 0.
    pub cv: f64,
    /// 95% confidence interval of the (arithmetic) mean, by [`ci95_of_mean`]; equal to the
    /// mean for one run.
    pub ci95_low: f64,
    pub ci95_high: f64,
}

impl Stats {
    pub fn of(values: &[f64]) -> Option<Stats> {
        let v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
        if v.is_empty() {
            return None;
        }
        let n = v.len();
        let mean = v.iter().sum::<f64>() / n as f64;
        let mut sorted = v.clone();
        sorted.sort_by(f64::total_cmp);
        let median = median_sorted(&sorted);
        let stdev = if n > 1 {
            (v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64).sqrt()
        } else {
            0.0
        };
        let (ci95_low, ci95_high) = ci95_of_mean(&v, mean, stdev);
        Some(Stats {
            n,
            mean,
            median,
            min: sorted[0],
            max: sorted[n - 1],
            stdev,
            cv: if mean != 0.0 { stdev / mean.abs() } else { 0.0 },
            ci95_low,
            ci95_high,
        })
    }

    pub fn aggregate(&self, a: Aggregate) -> f64 {
        match a {
            Aggregate::Mean => self.mean,
            Aggregate::Median => self.median,
        }
    }
}

/// The 95% interval of the arithmetic mean of positive, right-skewed figures (IOPS, MB/s,
/// latencies): the modified Cox method for lognormal data (Land 1972; Zhou & Gao 1997;
/// Olsson 2005), with ȳ and s² the mean and variance of ln x:
///
///   exp( ȳ + s²/2  ±  t(0.975, n−1) · √(s²/n + s⁴/(2(n−1))) )
///
/// It is centred on the mean the verdict uses, never goes below zero and widens upwards, as
/// the spread of such figures does. Where a figure is 0 (a latency too short to measure) the
/// logarithm does not exist: the plain Student-t interval is used, cut at 0, since no metric
/// can be negative.
pub fn ci95_of_mean(v: &[f64], mean: f64, stdev: f64) -> (f64, f64) {
    let n = v.len();
    if n < 2 {
        return (mean, mean);
    }
    let t = t_975(n - 1);
    if v.iter().all(|&x| x > 0.0) {
        let logs: Vec<f64> = v.iter().map(|x| x.ln()).collect();
        let ly = logs.iter().sum::<f64>() / n as f64;
        let s2 = logs.iter().map(|y| (y - ly).powi(2)).sum::<f64>() / (n - 1) as f64;
        if stdev == 0.0 {
            return (mean, mean);
        }
        let half = t * (s2 / n as f64 + s2 * s2 / (2.0 * (n - 1) as f64)).sqrt();
        let centre = ly + s2 / 2.0;
        return ((centre - half).exp(), (centre + half).exp());
    }
    let half = t * stdev / (n as f64).sqrt();
    ((mean - half).max(0.0), mean + half)
}

fn median_sorted(s: &[f64]) -> f64 {
    let n = s.len();
    if n % 2 == 1 {
        s[n / 2]
    } else {
        (s[n / 2 - 1] + s[n / 2]) / 2.0
    }
}

/// The 97.5th percentile of Student's t distribution with `df` degrees of freedom: the
/// multiplier of a two-sided 95% interval. Exact table to 30, then the Cornish–Fisher series.
pub fn t_975(df: usize) -> f64 {
    const T: [f64; 30] = [
        12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
        2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
        2.052, 2.048, 2.045, 2.042,
    ];
    if df == 0 {
        return f64::INFINITY;
    }
    if df <= 30 {
        return T[df - 1];
    }
    let z: f64 = 1.959_963_985;
    let v = df as f64;
    z + (z.powi(3) + z) / (4.0 * v)
        + (5.0 * z.powi(5) + 16.0 * z.powi(3) + 3.0 * z) / (96.0 * v * v)
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RuleResult {
    pub metric: String,
    pub op: Op,
    pub threshold: f64,
    pub level: Level,
    /// The aggregate (mean or median) across runs; absent when no run has the metric.
    pub value: Option<f64>,
    pub passed: Option<bool>,
    /// The 95% interval of the mean straddles the threshold: more runs could change the verdict.
    pub marginal: bool,
    pub unit: &'static str,
    pub aggregate: Aggregate,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// Per-run pass marks, in run order (None: the run lacks the metric).
    pub per_run: Vec<Option<bool>>,
}

/// The evidence rule: how many runs over how many days make a verdict.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EvidenceStatus {
    pub runs: usize,
    pub days: usize,
    pub min_runs: u32,
    pub min_days: u32,
    pub enough: bool,
    pub more_runs: usize,
    pub more_days: usize,
    pub window: String,
}

impl EvidenceStatus {
    /// "4 of 6 runs over 1 of 2 days — run again tomorrow".
    pub fn advice(&self) -> String {
        let head = format!(
            "{} of {} runs over {} of {} days",
            self.runs, self.min_runs, self.days, self.min_days
        );
        if self.enough {
            return format!("{head}: enough evidence for a verdict");
        }
        let todo = match (self.more_runs, self.more_days) {
            (0, d) => format!("run again on {d} more day{}", if d == 1 { "" } else { "s" }),
            (r, 0) => format!("{r} more run{}", if r == 1 { "" } else { "s" }),
            (r, 1) => format!(
                "{r} more run{}, at least one of them tomorrow or later",
                if r == 1 { "" } else { "s" }
            ),
            (r, d) => format!(
                "{r} more run{} over {d} more days",
                if r == 1 { "" } else { "s" }
            ),
        };
        format!("{head} — {todo}")
    }
}

/// One day of runs, for the per-day table.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Day {
    pub date: NaiveDate,
    pub runs: usize,
    pub mean: f64,
    pub min: f64,
    pub max: f64,
}

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
    VolatileTarget {
        filesystem: String,
        network: bool,
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
    Declining {
        metric: String,
        per_day_pct: f64,
        total_pct: f64,
    },
    /// A caveat found by the caller (smaller test than the policy's, printed figures, fallback…).
    Note(String),
}

/// The modified z-score above which a run is called an outlier (Iglewicz & Hoaglin, 1993).
pub const OUTLIER_Z: f64 = 3.5;
/// First run faster than the mean of the others by this factor: the page cache was empty.
pub const FIRST_RUN_FACTOR: f64 = 1.5;

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Warning::HighSpread { metric, cv, limit } => write!(
                f,
                "runs disagree: {metric} varies by {:.0}% of its mean (limit {:.0}%); caching and neighbours move single runs, so gather more runs before trusting the average",
                cv * 100.0,
                limit * 100.0
            ),
            Warning::FileSmallerThanRam { size, ram } => write!(
                f,
                "the test file ({}) is smaller than this machine's RAM ({}): the page cache can absorb much of it and flatter buffered results (the article's caveat); run several times over days, or use a larger --size",
                crate::units::format_size(*size),
                crate::units::format_size(*ram)
            ),
            Warning::FirstRunFaster {
                metric,
                first,
                rest,
            } => write!(
                f,
                "the first run was {:.1}× faster than the others ({metric} {} vs {}): it likely ran into an empty page cache; later runs describe the steady state better",
                first / rest,
                short(*first),
                short(*rest)
            ),
            Warning::VolatileTarget {
                filesystem,
                network,
            } => {
                if *network {
                    write!(
                        f,
                        "the target is on a network filesystem ({filesystem}): results describe the network and the server as much as this node's disk"
                    )
                } else {
                    write!(
                        f,
                        "the target is on {filesystem}, which lives in RAM: this measures memory, not the disk the vendor asks about"
                    )
                }
            }
            Warning::MixedEngines { engines } => {
                let list: Vec<_> = engines.iter().map(|(e, n)| format!("{e}: {n}")).collect();
                write!(
                    f,
                    "the window holds runs of several engines ({}); engines give different numbers on the same disk, so each is judged on its own",
                    list.join(", ")
                )
            }
            Warning::Outlier {
                metric,
                timestamp,
                value,
                score,
            } => write!(
                f,
                "the run of {} is far from the others ({metric} {}, modified z-score {:.1}); check what else the node was doing then",
                timestamp.format("%Y-%m-%d %H:%M"),
                short(*value),
                score
            ),
            Warning::Declining {
                metric,
                per_day_pct,
                total_pct,
            } => write!(
                f,
                "{metric} is falling steadily with time ({per_day_pct:.1}% a day, {total_pct:.0}% over the window): burst credits of a cloud disk running out look like this; judge the later runs"
            ),
            Warning::Note(s) => f.write_str(s),
        }
    }
}

impl Serialize for Warning {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_string())
    }
}

fn short(v: f64) -> String {
    if v.abs() >= 100.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.2}")
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Summary {
    pub n: usize,
    pub days: usize,
    pub metrics: BTreeMap<String, Stats>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PolicyInfo {
    pub name: String,
    pub description: String,
    pub vendor: String,
    pub source: String,
    pub url: String,
    pub seen: String,
    pub test: String,
    pub aggregate: Aggregate,
}

/// The group a report judges: one host, policy, directory and engine.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct Group {
    pub host: String,
    pub policy: String,
    pub dir: String,
    pub engine: String,
}

impl Group {
    pub fn of(r: &Record) -> Group {
        Group {
            host: r.host.clone(),
            policy: r.policy.clone(),
            dir: r.target.dir.clone(),
            engine: r.engine.clone(),
        }
    }
}

/// The one value every format renders.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Evaluation {
    pub scope: Scope,
    pub policy: PolicyInfo,
    pub verdict: Verdict,
    /// One line saying why: the deciding rule, marginality, missing evidence, differences.
    pub reason: String,
    pub runs: Vec<Record>,
    pub summary: Summary,
    pub rules: Vec<RuleResult>,
    pub warnings: Vec<Warning>,
    pub evidence: EvidenceStatus,
    pub days: Vec<Day>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub group: Option<Group>,
    pub differences: Vec<ShapeDifference>,
    /// How the judged runs' test differs from the policy's (run, import): each named in the
    /// verdict; a flattering one turns a pass into inconclusive.
    pub deviations: Vec<Deviation>,
    /// What the judged runs' outputs do not state, where a deviation could hide ("end fsync
    /// not stated"): shown with the verdict.
    pub caveats: Vec<String>,
    /// Runs left out of the verdict, by reason (report: not the policy's test; any scope:
    /// dated in the future).
    pub not_counted: Vec<NotCounted>,
    /// The runs left out, each with its reason, for the formats that list runs.
    #[serde(skip)]
    pub excluded: Vec<(Record, String)>,
    /// Each judged run's deviations in one line ("" for the policy's test), in run order.
    #[serde(skip)]
    pub run_deviations: Vec<String>,
    pub strict: bool,
    pub generated: DateTime<Utc>,
}

/// Runs left out of the verdict for one reason.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NotCounted {
    pub reason: String,
    pub runs: usize,
}

impl fmt::Display for NotCounted {
    /// "4 runs not counted: size 64 MiB instead of 4 GiB".
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} run{} not counted: {}",
            self.runs,
            if self.runs == 1 { "" } else { "s" },
            self.reason
        )
    }
}

/// A record dated later than this after the evaluation's time is dated in the future: the
/// margin absorbs clocks a little apart between the nodes and the machine reading them.
pub const FUTURE_MARGIN_SECS: i64 = 300;

/// Whether a record is dated in the future of `now` (beyond [`FUTURE_MARGIN_SECS`]).
pub fn is_future(r: &Record, now: DateTime<Utc>) -> bool {
    r.timestamp.with_timezone(&Utc) > now + ChronoDuration::seconds(FUTURE_MARGIN_SECS)
}

/// A run's result against the deciding rules alone: "pass", "fail" or "not measured".
pub fn run_result(ev: &Evaluation, index: usize) -> &'static str {
    let mut result = "pass";
    for r in ev
        .rules
        .iter()
        .filter(|r| r.level == Level::Fail || (ev.strict && r.level == Level::Warn))
    {
        match r.per_run.get(index).copied().flatten() {
            Some(true) => {}
            Some(false) => return "fail",
            None => result = "not measured",
        }
    }
    result
}

impl Evaluation {
    /// The metric of the first deciding rule: what charts and per-day tables show.
    pub fn primary_metric(&self) -> Option<&str> {
        self.rules
            .iter()
            .find(|r| r.level == Level::Fail)
            .map(|r| r.metric.as_str())
    }
    pub fn primary_rule(&self) -> Option<&RuleResult> {
        self.rules.iter().find(|r| r.level == Level::Fail)
    }
}

/// Local calendar day of a record, in the offset it was recorded with: "several runs a day"
/// means the node's day, wherever the report is read.
pub fn day_of(r: &Record) -> NaiveDate {
    r.timestamp.date_naive()
}

/// Judges records against a policy.
pub fn evaluate(records: impl Into<Vec<Record>>, policy: &Policy, opts: &Options) -> Evaluation {
    let mut runs: Vec<Record> = records.into();
    runs.sort_by_key(|r| r.timestamp);
    let agg = policy.evidence.aggregate;

    // Which runs count. A run dated in the future never does (its clock is wrong); in a
    // report, only runs of the policy's test do. A run or an import judges what it was given,
    // and the deviations decide what its verdict can be.
    let mut future: Vec<Record> = Vec::new();
    let mut excluded: Vec<(Record, String)> = Vec::new();
    // In the order found, each once.
    let mut deviations: Vec<Deviation> = Vec::new();
    let mut caveats: Vec<String> = Vec::new();
    let mut judged: Vec<Record> = Vec::with_capacity(runs.len());
    let mut run_deviations: Vec<String> = Vec::new();
    for r in runs {
        if is_future(&r, opts.now) {
            future.push(r);
            continue;
        }
        let c = deviation::check(&r, policy);
        if opts.scope == Scope::Report && !c.is_policy_test() {
            let reason = deviation::list(&c.deviations);
            excluded.push((r, reason));
            continue;
        }
        run_deviations.push(deviation::list(&c.deviations));
        for d in c.deviations {
            if !deviations.contains(&d) {
                deviations.push(d);
            }
        }
        for c in c.caveats {
            if !caveats.contains(&c) {
                caveats.push(c);
            }
        }
        judged.push(r);
    }
    let runs = judged;
    let mut not_counted: BTreeMap<String, usize> = BTreeMap::new();
    for (_, reason) in &excluded {
        *not_counted.entry(reason.clone()).or_default() += 1;
    }
    let mut future_warning = None;
    if !future.is_empty() {
        let latest = future.iter().map(|r| r.timestamp).max().expect("non-empty");
        not_counted.insert(
            "dated in the future (check the node's clock)".into(),
            future.len(),
        );
        future_warning = Some(Warning::Note(format!(
            "{} run{} dated in the future (the latest {}) {} not counted: a clock was wrong when {} recorded; fix the clock, the runs stay in the history",
            future.len(),
            if future.len() == 1 { "" } else { "s" },
            latest.format("%Y-%m-%d %H:%M %:z"),
            if future.len() == 1 { "is" } else { "are" },
            if future.len() == 1 {
                "it was"
            } else {
                "they were"
            },
        )));
        for r in future {
            excluded.push((r, "dated in the future".into()));
        }
    }
    let not_counted: Vec<NotCounted> = not_counted
        .into_iter()
        .map(|(reason, runs)| NotCounted { reason, runs })
        .collect();

    // Statistics of every metric present in any run, gathered in one pass over the runs.
    let mut columns: std::collections::HashMap<&str, Vec<f64>> = Default::default();
    for r in &runs {
        for (k, &v) in &r.metrics {
            columns.entry(k.as_str()).or_default().push(v);
        }
    }
    let metrics: BTreeMap<String, Stats> = columns
        .into_iter()
        .filter_map(|(m, v)| Stats::of(&v).map(|s| (m.to_string(), s)))
        .collect();
    let day_set: BTreeSet<NaiveDate> = runs.iter().map(day_of).collect();

    let rules: Vec<RuleResult> = policy
        .rules
        .iter()
        .map(|rule| {
            let stats = metrics.get(&rule.metric);
            let value = stats.map(|s| s.aggregate(agg));
            let passed = value.map(|v| rule.op.holds(v, rule.threshold));
            let marginal = stats.is_some_and(|s| straddles(s, rule.op, rule.threshold));
            RuleResult {
                metric: rule.metric.clone(),
                op: rule.op,
                threshold: rule.threshold,
                level: rule.level,
                value,
                passed,
                marginal,
                unit: crate::metrics::unit(&rule.metric),
                aggregate: agg,
                note: rule.note.clone(),
                per_run: runs
                    .iter()
                    .map(|r| {
                        r.metrics
                            .get(&rule.metric)
                            .map(|&v| rule.op.holds(v, rule.threshold))
                    })
                    .collect(),
            }
        })
        .collect();

    let e = &policy.evidence;
    let more_runs = (e.min_runs as usize).saturating_sub(runs.len());
    let more_days = (e.min_days as usize).saturating_sub(day_set.len());
    let evidence = EvidenceStatus {
        runs: runs.len(),
        days: day_set.len(),
        min_runs: e.min_runs,
        min_days: e.min_days,
        enough: more_runs == 0 && more_days == 0,
        more_runs,
        more_days,
        window: crate::units::format_duration(e.window.0),
    };

    let primary = policy
        .deciding_rules()
        .next()
        .map(|r| (r.metric.clone(), r.op));
    let days = primary
        .as_ref()
        .map(|(m, _)| per_day(&runs, m))
        .unwrap_or_default();

    let mut warnings = opts.notes.clone();
    warnings.extend(find_warnings(&runs, policy, &metrics, opts));

    // The interval says something only once the evidence rule is met.
    let mut rules = rules;
    for r in &mut rules {
        r.marginal &= evidence.enough;
    }
    warnings.extend(future_warning);
    for d in &deviations {
        warnings.push(Warning::Note(format!(
            "not the policy's test: {d}: {}",
            d.why()
        )));
    }
    dedup(&mut warnings);

    let judged = Judged {
        rules: &rules,
        evidence: &evidence,
        opts,
        runs: &runs,
        metrics: &metrics,
        deviations: &deviations,
        not_counted: &not_counted,
    };
    let (verdict, reason) = decide(&judged);
    let differences: Vec<ShapeDifference> = opts
        .shape_differences
        .iter()
        .cloned()
        .chain(
            deviations
                .iter()
                .filter(|d| d.effect == Effect::EitherWay)
                .map(|d| ShapeDifference {
                    field: d.field,
                    expected: d.expected.clone(),
                    found: d.found.clone(),
                }),
        )
        .collect();

    Evaluation {
        scope: opts.scope,
        policy: PolicyInfo {
            name: policy.name.clone(),
            description: policy.description.clone(),
            vendor: policy.vendor.clone(),
            source: policy.source.title.clone(),
            url: policy.source.url.clone(),
            seen: policy.source.seen.clone(),
            test: match policy.source.test {
                TestOrigin::Prescribed => "prescribed".into(),
                TestOrigin::Assumed => "assumed".into(),
            },
            aggregate: agg,
        },
        verdict,
        reason,
        summary: Summary {
            n: runs.len(),
            days: day_set.len(),
            metrics,
        },
        group: None,
        rules,
        warnings,
        evidence,
        days,
        differences,
        deviations,
        caveats,
        not_counted,
        excluded,
        run_deviations,
        strict: opts.strict,
        generated: opts.now,
        runs,
    }
}

/// Everything the verdict is decided from.
struct Judged<'a> {
    rules: &'a [RuleResult],
    evidence: &'a EvidenceStatus,
    opts: &'a Options,
    runs: &'a [Record],
    metrics: &'a BTreeMap<String, Stats>,
    deviations: &'a [Deviation],
    not_counted: &'a [NotCounted],
}

/// Whether the 95% interval of the mean lies on both sides of the threshold.
fn straddles(s: &Stats, op: Op, threshold: f64) -> bool {
    s.n > 1 && op.holds(s.ci95_low, threshold) != op.holds(s.ci95_high, threshold)
}

fn decide(j: &Judged) -> (Verdict, String) {
    let (rules, evidence, opts, runs) = (j.rules, j.evidence, j.opts, j.runs);
    let not_counted = if j.not_counted.is_empty() {
        String::new()
    } else {
        let l: Vec<String> = j.not_counted.iter().map(|n| n.to_string()).collect();
        format!(" ({})", l.join("; "))
    };
    if runs.is_empty() {
        if !j.not_counted.is_empty() {
            return (
                Verdict::Inconclusive,
                format!(
                    "no runs of the policy's test to judge{not_counted}: run `iopscheck run` without --size or --runtime on the node's disk"
                ),
            );
        }
        return (
            Verdict::Inconclusive,
            "no runs to judge: run `iopscheck run`, or widen the window with --since".into(),
        );
    }
    if !opts.shape_differences.is_empty() {
        let d: Vec<String> = opts
            .shape_differences
            .iter()
            .map(|d| d.to_string())
            .collect();
        return (
            Verdict::Inconclusive,
            format!("not the policy's test: {}", d.join("; ")),
        );
    }
    let deciding =
        |r: &&RuleResult| r.level == Level::Fail || (opts.strict && r.level == Level::Warn);
    let missing: Vec<&str> = rules
        .iter()
        .filter(deciding)
        .filter(|r| r.value.is_none())
        .map(|r| r.metric.as_str())
        .collect();
    let either: Vec<Deviation> = j
        .deviations
        .iter()
        .filter(|d| d.effect == Effect::EitherWay)
        .cloned()
        .collect();
    let flatters: Vec<Deviation> = j
        .deviations
        .iter()
        .filter(|d| d.effect == Effect::Flatters)
        .cloned()
        .collect();
    if !either.is_empty() {
        let first = rules
            .iter()
            .find(deciding)
            .filter(|r| r.value.is_some())
            .map(|r| {
                format!(
                    "{} {} {} {}",
                    r.aggregate.as_str(),
                    r.metric,
                    r.value.map(short).unwrap_or_default(),
                    r.unit
                )
            })
            .map(|m| format!("; its runs measured {m}, which says nothing about the policy's test"))
            .unwrap_or_default();
        return (
            Verdict::Inconclusive,
            format!("not the policy's test: {}{first}", deviation::list(&either)),
        );
    }
    if !missing.is_empty() {
        return (
            Verdict::Inconclusive,
            format!(
                "the runs do not measure {}, which the policy judges",
                missing.join(", ")
            ),
        );
    }
    let failed: Vec<&RuleResult> = rules
        .iter()
        .filter(deciding)
        .filter(|r| r.passed == Some(false))
        .collect();
    let describe = |r: &RuleResult| {
        format!(
            "{} {} is {} {}, {} {} {}",
            r.aggregate.as_str(),
            r.metric,
            r.value.map(short).unwrap_or_default(),
            r.unit,
            if r.passed == Some(true) {
                "meeting"
            } else {
                "missing"
            },
            r.op,
            short(r.threshold),
        )
    };
    if opts.scope == Scope::Report && !evidence.enough {
        let leaning = if failed.is_empty() { "pass" } else { "fail" };
        return (
            Verdict::Inconclusive,
            format!(
                "not enough evidence yet ({}){not_counted}; so far the runs lean towards {leaning}",
                evidence.advice()
            ),
        );
    }
    // Marginal only where the evidence rule is met; before that, the runs are too few to
    // bound the mean at all.
    let marg = if rules.iter().filter(deciding).any(|r| r.marginal) {
        "; marginal: the 95% interval of the mean straddles the threshold, so more runs could change the verdict".to_string()
    } else if !evidence.enough {
        let straddling = rules.iter().filter(deciding).any(|r| {
            j.metrics
                .get(&r.metric)
                .is_some_and(|s| straddles(s, r.op, r.threshold))
        });
        format!(
            "; {} run{} {} too few to bound the mean{} (the evidence rule asks for {} runs over {} days)",
            runs.len(),
            if runs.len() == 1 { "" } else { "s" },
            if runs.len() == 1 { "is" } else { "are" },
            if straddling {
                ", and their 95% interval straddles the threshold"
            } else {
                ""
            },
            evidence.min_runs,
            evidence.min_days
        )
    } else {
        String::new()
    };
    if failed.is_empty() {
        let first = rules
            .iter()
            .find(deciding)
            .map(describe)
            .unwrap_or_default();
        // Soft limits missed do not change the verdict (without --strict), but the line says so.
        let soft: Vec<String> = rules
            .iter()
            .filter(|r| r.level == Level::Warn && r.passed == Some(false))
            .map(describe)
            .collect();
        let soft = if soft.is_empty() {
            String::new()
        } else {
            format!("; soft limit missed: {}", soft.join("; "))
        };
        if !flatters.is_empty() {
            return (
                Verdict::Inconclusive,
                format!(
                    "passed only on a test that flatters the disk ({}): {first}{soft}; only the policy's own test can pass",
                    deviation::list(&flatters)
                ),
            );
        }
        (Verdict::Pass, format!("{first}{soft}{marg}{not_counted}"))
    } else {
        let d: Vec<String> = failed.iter().map(|r| describe(r)).collect();
        let even = if flatters.is_empty() {
            String::new()
        } else {
            format!(
                "; failed even on a test that flatters the disk ({})",
                deviation::list(&flatters)
            )
        };
        (
            Verdict::Fail,
            format!("{}{even}{marg}{not_counted}", d.join("; ")),
        )
    }
}

fn per_day(runs: &[Record], metric: &str) -> Vec<Day> {
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

fn dedup(w: &mut Vec<Warning>) {
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

fn find_warnings(
    runs: &[Record],
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

    // tmpfs or a network filesystem.
    let filesystems: BTreeSet<&str> = runs
        .iter()
        .filter_map(|r| r.target.filesystem.as_deref())
        .collect();
    for fs in filesystems {
        let base = fs.split('.').next().unwrap_or(fs);
        // A RAM-backed target is a deviation (crate::deviation), named with the verdict.
        if NETWORK_FS.contains(&fs) || NETWORK_FS.contains(&base) {
            out.push(Warning::VolatileTarget {
                filesystem: fs.into(),
                network: true,
            });
        }
    }

    // Engines mixed in the window.
    let mut engines: BTreeMap<String, usize> = opts.other_engines.clone();
    for r in runs {
        *engines.entry(r.engine.clone()).or_default() += 1;
    }
    if engines.len() > 1 {
        out.push(Warning::MixedEngines { engines });
    }

    // What happened inside the runs (their IOPS series, the final fsync).
    out.extend(
        crate::measure::series::warnings(runs)
            .into_iter()
            .map(Warning::Note),
    );

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
    out
}

/// Modified z-scores, 0.6745 × (x − median) / MAD (Iglewicz & Hoaglin, "How to Detect and
/// Handle Outliers", 1993). When half the runs are identical the MAD is 0; the usual fallback
/// then scales by the mean absolute deviation, (x − median) / (1.253314 × MeanAD).
pub fn modified_z_scores(v: &[f64]) -> Vec<f64> {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    let med = median_sorted(&s);
    let mut dev: Vec<f64> = v.iter().map(|x| (x - med).abs()).collect();
    dev.sort_by(f64::total_cmp);
    let mad = median_sorted(&dev);
    if mad > 0.0 {
        return v.iter().map(|x| 0.6745 * (x - med) / mad).collect();
    }
    let mean_ad = dev.iter().sum::<f64>() / dev.len() as f64;
    if mean_ad == 0.0 {
        return vec![0.0; v.len()];
    }
    v.iter()
        .map(|x| (x - med) / (1.253_314 * mean_ad))
        .collect()
}

/// A steady decline: at least 5 runs spanning a day or more, a least-squares slope whose
/// t-statistic is significant at about 5% and a fall of at least 10% of the mean over the span.
fn declining(values: &[(DateTime<FixedOffset>, f64)], metric: &str, op: Op) -> Option<Warning> {
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
    (worse && significant && total >= 0.10).then(|| Warning::Declining {
        metric: metric.into(),
        per_day_pct: (slope / my).abs() * 100.0,
        total_pct: total * 100.0,
    })
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::history::{SCHEMA_VERSION, Source, Target};

    fn policy() -> Policy {
        crate::policy::resolve("swimlane").unwrap().policy
    }

    /// A Swimlane run of the policy's own test on node1 in /data at `ts`, `mb_s` decimal MB/s.
    pub(crate) fn rec(ts: &str, mb_s: f64) -> Record {
        let formula = crate::metrics::iops_formula(mb_s, 4096);
        Record {
            schema_version: SCHEMA_VERSION,
            timestamp: DateTime::parse_from_rfc3339(ts).unwrap(),
            host: "node1".into(),
            source: Source::Native,
            source_file: None,
            source_digest: None,
            engine: "posixaio".into(),
            engine_note: None,
            job_assumed: None,
            job: policy().job.shape(),
            metrics: [
                ("write_bw_mb_s".to_string(), mb_s),
                ("write_iops_formula".to_string(), formula),
                ("write_iops".to_string(), mb_s * 1e6 / 4096.0),
            ]
            .into_iter()
            .collect(),
            target: Target {
                dir: "/data".into(),
                filesystem: Some("ext4".into()),
                ..Target::default()
            },
            tool_version: "0.1.0".into(),
            policy: "swimlane".into(),
            overrides: BTreeMap::new(),
            bw_basis: None,
            fio_version: None,
            invocation: None,
            iops_series: None,
            disk_stats: Vec::new(),
        }
    }

    fn now() -> DateTime<Utc> {
        DateTime::parse_from_rfc3339("2026-12-02T12:00:00Z")
            .unwrap()
            .with_timezone(&Utc)
    }

    fn run_eval(r: &[Record]) -> Evaluation {
        evaluate(r, &policy(), &Options::new(Scope::Run, now()))
    }

    #[test]
    fn the_articles_example_passes_and_11_6_fails() {
        let e = run_eval(&[rec("2026-12-01T10:00:00Z", 16.4)]);
        assert_eq!(e.verdict, Verdict::Pass);
        assert!((e.rules[0].value.unwrap() - 4198.4).abs() < 1e-9);
        let e = run_eval(&[rec("2026-12-01T10:00:00Z", 11.6)]);
        assert_eq!(e.verdict, Verdict::Fail);
        assert_eq!(e.verdict.exit_code(), 1);
    }

    #[test]
    fn the_11_7_edge_fails_by_the_deciding_rule_and_shows_the_article_figure_beside_it() {
        let e = run_eval(&[rec("2026-12-01T10:00:00Z", 11.7)]);
        assert_eq!(e.verdict, Verdict::Fail);
        let bw = e
            .rules
            .iter()
            .find(|r| r.metric == "write_bw_mb_s")
            .unwrap();
        assert_eq!(bw.passed, Some(true));
        assert_eq!(bw.level, Level::Info);
        let e = run_eval(&[rec("2026-12-01T10:00:00Z", 11.71875)]);
        assert_eq!(e.verdict, Verdict::Pass);
    }

    #[test]
    fn the_verdict_is_on_the_mean_of_the_runs() {
        // 10 and 14 MB/s: each alone would fail/pass; the mean (12) passes.
        let e = run_eval(&[
            rec("2026-12-01T10:00:00Z", 10.0),
            rec("2026-12-01T11:00:00Z", 14.0),
        ]);
        let s = &e.summary.metrics["write_bw_mb_s"];
        assert_eq!((s.n, s.mean, s.min, s.max), (2, 12.0, 10.0, 14.0));
        assert!((s.stdev - 8f64.sqrt()).abs() < 1e-12);
        assert_eq!(e.verdict, Verdict::Pass);
        assert_eq!(e.rules[0].per_run, vec![Some(false), Some(true)]);
        // The interval of two such runs straddles 3000, but two runs are too few to bound the
        // mean at all: that is what the verdict says, not "marginal".
        assert!(!e.rules[0].marginal);
        assert!(!e.reason.contains("marginal"), "{}", e.reason);
        assert!(
            e.reason.contains("2 runs are too few to bound the mean"),
            "{}",
            e.reason
        );
    }

    #[test]
    fn marginal_only_once_the_evidence_rule_is_met() {
        // Six runs over two days, alternating below and above 3000 by the formula.
        let recs: Vec<Record> = (0..6)
            .map(|i| {
                rec(
                    &format!("2026-12-0{}T0{i}:00:00Z", 1 + i / 3),
                    if i % 2 == 0 { 10.5 } else { 13.5 },
                )
            })
            .collect();
        let e = evaluate(
            recs.as_slice(),
            &policy(),
            &Options::new(Scope::Report, now()),
        );
        assert!(e.evidence.enough);
        assert_eq!(e.verdict, Verdict::Pass);
        assert!(e.rules[0].marginal);
        assert!(e.reason.contains("marginal"), "{}", e.reason);
        assert!(!e.reason.contains("too few"), "{}", e.reason);
    }

    #[test]
    fn the_interval_of_positive_figures_stays_positive() {
        // Two runs averaging 57904 IOPS: Student's t gave −57,297 to 167,591.
        let s = Stats::of(&[55147.0, 55147.0 * 1.1]).unwrap();
        assert!(s.ci95_low > 0.0, "{s:?}");
        assert!(s.ci95_low < s.mean && s.mean < s.ci95_high, "{s:?}");
        // The modified Cox interval, computed independently (Python, t(1) = 12.706).
        assert!((s.ci95_low - 31596.59376).abs() < 0.01, "{s:?}");
        assert!((s.ci95_high - 106357.66015).abs() < 0.01, "{s:?}");
        // Identical runs: no spread, an interval of one point.
        let s = Stats::of(&[3000.0, 3000.0, 3000.0]).unwrap();
        assert_eq!((s.ci95_low, s.ci95_high), (3000.0, 3000.0));
        // A zero (a latency too short to measure): Student's t, cut at 0.
        let s = Stats::of(&[0.0, 10.0]).unwrap();
        assert_eq!(s.ci95_low, 0.0);
        assert!((s.ci95_high - (5.0 + 12.706 * 50f64.sqrt() / 2f64.sqrt())).abs() < 1e-9);
    }

    /// A small deterministic generator for the coverage check (SplitMix64).
    fn normal(state: &mut u64) -> f64 {
        let mut next = || {
            *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = *state;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
        };
        let (u1, u2) = (next().max(1e-300), next());
        (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
    }

    #[test]
    fn the_interval_covers_the_true_mean_of_skewed_figures_95_times_in_100() {
        // Lognormal runs (σ = 0.3 on the log scale: a CV of about 30%, as cached runs vary):
        // the interval should hold the true mean, exp(σ²/2), in about 95% of samples.
        let sigma = 0.3f64;
        let truth = (sigma * sigma / 2.0).exp();
        let mut state = 42u64;
        for n in [3usize, 6, 12] {
            let trials = 4000;
            let mut covered = 0;
            for _ in 0..trials {
                let v: Vec<f64> = (0..n).map(|_| (sigma * normal(&mut state)).exp()).collect();
                let s = Stats::of(&v).unwrap();
                assert!(s.ci95_low > 0.0);
                if s.ci95_low <= truth && truth <= s.ci95_high {
                    covered += 1;
                }
            }
            let rate = covered as f64 / trials as f64;
            assert!((0.93..=0.97).contains(&rate), "n = {n}: coverage {rate}");
        }
    }

    #[test]
    fn stats_match_known_values() {
        let s = Stats::of(&[2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]).unwrap();
        assert_eq!(s.mean, 5.0);
        assert_eq!(s.median, 4.5);
        assert!((s.stdev - 2.138_089_935).abs() < 1e-9);
        // The modified Cox interval with t(7) = 2.365, computed independently (Python).
        assert!((s.ci95_low - 3.430_191_902).abs() < 1e-6, "{s:?}");
        assert!((s.ci95_high - 7.537_507_570).abs() < 1e-6, "{s:?}");
        assert!((s.cv - 0.427_617_987).abs() < 1e-6);
        assert!((t_975(100) - 1.984).abs() < 0.001);
        assert!((t_975(1000) - 1.962).abs() < 0.001);
    }

    #[test]
    fn report_needs_the_evidence_rule() {
        let p = policy();
        let recs: Vec<Record> = (0..6)
            .map(|i| rec(&format!("2026-12-01T0{i}:00:00Z"), 16.0))
            .collect();
        let o = Options::new(Scope::Report, now());
        let e = evaluate(recs.as_slice(), &p, &o);
        assert_eq!(e.verdict, Verdict::Inconclusive);
        assert_eq!((e.evidence.runs, e.evidence.days), (6, 1));
        assert_eq!(e.evidence.more_days, 1);
        assert!(
            e.evidence.advice().contains("6 of 6 runs over 1 of 2 days"),
            "{}",
            e.evidence.advice()
        );
        let mut two_days = recs.clone();
        two_days[5] = rec("2026-12-02T09:00:00Z", 16.0);
        let e = evaluate(two_days.as_slice(), &p, &o);
        assert_eq!(e.verdict, Verdict::Pass);
        assert_eq!(e.days.len(), 2);
        assert_eq!(e.days[0].runs, 5);
    }

    #[test]
    fn days_are_the_nodes_local_days() {
        // 23:30 at UTC−5 is the next day in UTC; it still counts as the node's 1 December.
        let a = rec("2026-12-01T23:30:00-05:00", 16.0);
        let b = rec("2026-12-01T08:00:00-05:00", 16.0);
        assert_eq!(day_of(&a), day_of(&b));
        let c = rec("2026-12-02T00:30:00+01:00", 16.0); // 23:30 UTC on 1 December
        assert_eq!(day_of(&c).to_string(), "2026-12-02");
    }

    #[test]
    fn warnings_for_spread_first_run_outlier_and_tmpfs() {
        let mut recs = vec![
            rec("2026-12-01T10:00:00Z", 40.0),
            rec("2026-12-01T10:05:00Z", 12.0),
            rec("2026-12-01T10:10:00Z", 12.5),
        ];
        for r in &mut recs {
            r.invocation = Some("a".into());
        }
        let e = run_eval(&recs);
        let text: Vec<String> = e.warnings.iter().map(|w| w.to_string()).collect();
        assert!(
            text.iter().any(|w| w.starts_with("runs disagree")),
            "{text:?}"
        );
        assert!(
            text.iter().any(|w| w.starts_with("the first run was")),
            "{text:?}"
        );

        let mut recs: Vec<Record> = (0..7)
            .map(|i| {
                rec(
                    &format!("2026-12-01T1{i}:00:00Z"),
                    15.0 + (i % 2) as f64 * 0.2,
                )
            })
            .collect();
        recs[3].metrics.insert("write_iops_formula".into(), 900.0);
        let e = run_eval(&recs);
        assert!(
            e.warnings
                .iter()
                .any(|w| matches!(w, Warning::Outlier { .. }))
        );
    }

    #[test]
    fn a_pass_on_a_flattering_test_is_inconclusive_and_a_fail_still_fails() {
        let mut quick = rec("2026-12-01T10:00:00Z", 100.0);
        quick.job.size = Some(64 << 20);
        quick.job.runtime_s = Some(3.0);
        let e = run_eval(std::slice::from_ref(&quick));
        assert_eq!(e.verdict, Verdict::Inconclusive);
        assert!(
            e.reason.starts_with("passed only on a test that flatters the disk (size 64 MiB instead of 4 GiB; runtime 3s instead of 1m)"),
            "{}",
            e.reason
        );
        // the figures are still there
        assert!(e.rules[0].value.unwrap() > 25000.0);
        let mut slow = quick.clone();
        slow.metrics.insert("write_iops_formula".into(), 2554.0);
        let e = run_eval(&[slow]);
        assert_eq!(e.verdict, Verdict::Fail);
        assert!(
            e.reason
                .contains("failed even on a test that flatters the disk (size 64 MiB"),
            "{}",
            e.reason
        );
        let mut tmpfs = rec("2026-12-01T10:00:00Z", 100.0);
        tmpfs.target.filesystem = Some("tmpfs".into());
        let e = run_eval(&[tmpfs]);
        assert_eq!(e.verdict, Verdict::Inconclusive);
        assert!(
            e.reason.contains("target tmpfs (in RAM) instead of a disk"),
            "{}",
            e.reason
        );
        // io_uring is the policy's to accept; psync is not, and could go either way
        let mut uring = rec("2026-12-01T10:00:00Z", 16.0);
        uring.engine = "io_uring".into();
        assert_eq!(run_eval(&[uring.clone()]).verdict, Verdict::Pass);
        uring.engine = "psync".into();
        uring.metrics.insert("write_iops_formula".into(), 100.0);
        let e = run_eval(&[uring]);
        assert_eq!(e.verdict, Verdict::Inconclusive);
        assert!(
            e.reason
                .contains("ioengine psync instead of posixaio or io_uring"),
            "{}",
            e.reason
        );
    }

    #[test]
    fn a_report_counts_only_the_policys_test_and_lists_the_rest() {
        let mut recs: Vec<Record> = (0..6)
            .map(|i| rec(&format!("2026-12-0{}T0{i}:00:00Z", 1 + i / 3), 16.0))
            .collect();
        for i in 0..4 {
            let mut q = rec(&format!("2026-12-02T0{i}:00:00Z"), 90.0);
            q.job.size = Some(64 << 20);
            recs.push(q);
        }
        let e = evaluate(
            recs.as_slice(),
            &policy(),
            &Options::new(Scope::Report, now()),
        );
        assert_eq!(e.verdict, Verdict::Pass);
        assert_eq!(e.runs.len(), 6);
        assert_eq!(e.evidence.runs, 6);
        assert_eq!(e.not_counted.len(), 1);
        assert_eq!(
            e.not_counted[0].to_string(),
            "4 runs not counted: size 64 MiB instead of 4 GiB"
        );
        assert!(e.reason.contains("4 runs not counted"), "{}", e.reason);
        assert_eq!(e.excluded.len(), 4);
        // quick looks alone are no evidence
        let e = evaluate(&recs[6..], &policy(), &Options::new(Scope::Report, now()));
        assert_eq!(e.verdict, Verdict::Inconclusive);
        assert!(
            e.reason.starts_with("no runs of the policy's test"),
            "{}",
            e.reason
        );
    }

    #[test]
    fn records_dated_in_the_future_never_count_and_are_named() {
        let mut recs: Vec<Record> = (0..6)
            .map(|i| rec(&format!("2026-12-0{}T0{i}:00:00Z", 1 + i / 3), 16.0))
            .collect();
        recs.push(rec("9999-12-31T23:59:59Z", 1.0));
        recs.push(rec("2026-12-02T12:30:00Z", 1.0));
        let e = evaluate(
            recs.as_slice(),
            &policy(),
            &Options::new(Scope::Report, now()),
        );
        assert_eq!(e.verdict, Verdict::Pass);
        assert_eq!(e.runs.len(), 6);
        assert!(
            e.days
                .iter()
                .all(|d| d.date.to_string().as_str() < "2026-12-03")
        );
        let w: Vec<String> = e.warnings.iter().map(|w| w.to_string()).collect();
        assert!(
            w.iter()
                .any(|w| w.starts_with("2 runs dated in the future (the latest 9999-12-31 23:59")),
            "{w:?}"
        );
        assert!(
            e.not_counted
                .iter()
                .any(|n| n.runs == 2 && n.reason.contains("future"))
        );
    }

    #[test]
    fn a_steady_decline_is_flagged_and_noise_is_not() {
        let recs: Vec<Record> = (0..8)
            .map(|i| {
                rec(
                    &format!("2026-11-2{}T10:00:00Z", i + 1),
                    30.0 - 2.0 * i as f64,
                )
            })
            .collect();
        let e = run_eval(&recs);
        assert!(
            e.warnings
                .iter()
                .any(|w| matches!(w, Warning::Declining { .. })),
            "{:?}",
            e.warnings
        );
        let flat: Vec<Record> = (0..8)
            .map(|i| {
                rec(
                    &format!("2026-11-2{}T10:00:00Z", i + 1),
                    20.0 + [0.3, -0.2, 0.1, -0.3, 0.2, 0.0, -0.1, 0.25][i],
                )
            })
            .collect();
        let e = run_eval(&flat);
        assert!(
            !e.warnings
                .iter()
                .any(|w| matches!(w, Warning::Declining { .. }))
        );
    }

    #[test]
    fn mixed_engines_and_small_files_warn_once() {
        let mut recs = vec![
            rec("2026-12-01T10:00:00Z", 16.0),
            rec("2026-12-01T11:00:00Z", 16.0),
        ];
        for r in &mut recs {
            r.target.memory_bytes = Some(24 << 30);
        }
        let mut o = Options::new(Scope::Report, now());
        o.other_engines.insert("psync".into(), 3);
        let e = evaluate(recs.as_slice(), &policy(), &o);
        let n_small = e
            .warnings
            .iter()
            .filter(|w| matches!(w, Warning::FileSmallerThanRam { .. }))
            .count();
        assert_eq!(n_small, 1);
        assert!(
            e.warnings
                .iter()
                .any(|w| matches!(w, Warning::MixedEngines { .. }))
        );
    }

    #[test]
    fn differences_in_shape_are_inconclusive() {
        let mut o = Options::new(Scope::Import, now());
        o.shape_differences.push(ShapeDifference {
            field: "bs",
            expected: "4k".into(),
            found: "8k".into(),
        });
        let e = evaluate(&[rec("2026-12-01T10:00:00Z", 16.0)], &policy(), &o);
        assert_eq!(e.verdict, Verdict::Inconclusive);
        assert!(e.reason.contains("bs is 8k"), "{}", e.reason);
    }

    #[test]
    fn no_runs_is_inconclusive() {
        assert_eq!(run_eval(&[]).verdict, Verdict::Inconclusive);
    }

    #[test]
    fn warn_rules_decide_only_when_strict() {
        let mut p = policy();
        p.rules.push(crate::policy::Rule {
            metric: "write_iops".into(),
            op: Op::Ge,
            threshold: 1e9,
            level: Level::Warn,
            note: None,
        });
        let recs = [rec("2026-12-01T10:00:00Z", 16.0)];
        let mut o = Options::new(Scope::Run, now());
        assert_eq!(evaluate(recs.as_slice(), &p, &o).verdict, Verdict::Pass);
        o.strict = true;
        assert_eq!(evaluate(recs.as_slice(), &p, &o).verdict, Verdict::Fail);
    }
}
