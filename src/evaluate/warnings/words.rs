//! Each warning's sentence, the one place it is worded ([`Warning`]'s `Display`), and its
//! headline: what was found, without what follows from it or what to do (the table's short
//! form, [`Warning::headline`]).

use std::fmt;

use chrono::{DateTime, FixedOffset};

use super::{IdleRun, Warning};
use crate::numbers::short;

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.write(f, true)
    }
}

/// A warning's short form ([`Warning::headline`]).
pub struct Headline<'a>(&'a Warning);

impl fmt::Display for Headline<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.write(f, false)
    }
}

/// After what a sentence says was found, "; " and what follows from it or what to do: only
/// in the `whole` sentence.
pub(super) fn then(
    f: &mut fmt::Formatter<'_>,
    whole: bool,
    rest: fmt::Arguments<'_>,
) -> fmt::Result {
    if whole { write!(f, "; {rest}") } else { Ok(()) }
}

/// What was found, then (in the `whole` sentence) "; " and what follows from it.
fn sentence(
    f: &mut fmt::Formatter<'_>,
    whole: bool,
    found: fmt::Arguments<'_>,
    rest: fmt::Arguments<'_>,
) -> fmt::Result {
    f.write_fmt(found)?;
    then(f, whole, rest)
}

impl Warning {
    /// What was found, without what follows from it or what to do (the advice, a list of the
    /// runs it shows in): the table's short form. The whole sentence is its `Display`.
    pub fn headline(&self) -> Headline<'_> {
        Headline(self)
    }

    /// The warning's sentence, the one place it is worded; without `whole`, its headline.
    fn write(&self, f: &mut fmt::Formatter<'_>, whole: bool) -> fmt::Result {
        match self {
            Warning::HighSpread { metric, cv, limit } => sentence(
                f,
                whole,
                format_args!(
                    "runs disagree: {metric} varies by {:.0}% of its mean (limit {:.0}%)",
                    cv * 100.0,
                    limit * 100.0
                ),
                format_args!(
                    "caching and neighbours move single runs, so gather more runs before trusting the average"
                ),
            ),
            Warning::FileSmallerThanRam { size, ram } => sentence(
                f,
                whole,
                format_args!(
                    "the test file ({}) is smaller than this machine's RAM ({}): the page cache can absorb much of it and flatter buffered results (the article's caveat)",
                    crate::units::format_size(*size),
                    crate::units::format_size(*ram)
                ),
                format_args!("run several times over days, or use a larger --size"),
            ),
            Warning::FirstRunFaster {
                metric,
                first,
                rest,
            } => sentence(
                f,
                whole,
                format_args!(
                    "the first run was {:.1}× faster than the others ({metric} {} vs {}): it likely ran into an empty page cache",
                    first / rest,
                    short(*first),
                    short(*rest)
                ),
                format_args!("later runs describe the steady state better"),
            ),
            Warning::NetworkTarget { filesystem } => write!(
                f,
                "the target is on a network filesystem ({filesystem}): results describe the network and the server as much as this node's disk"
            ),
            Warning::MixedEngines { engines } => {
                let list: Vec<_> = engines.iter().map(|(e, n)| format!("{e}: {n}")).collect();
                sentence(
                    f,
                    whole,
                    format_args!(
                        "the window holds runs of several engines ({})",
                        list.join(", ")
                    ),
                    format_args!(
                        "engines give different numbers on the same disk, so each is judged on its own"
                    ),
                )
            }
            Warning::Outlier {
                metric,
                timestamp,
                value,
                score,
            } => sentence(
                f,
                whole,
                format_args!(
                    "the run of {} is far from the others ({metric} {}, modified z-score {score:.1})",
                    timestamp.format("%Y-%m-%d %H:%M"),
                    short(*value),
                ),
                format_args!("check what else the node was doing then"),
            ),
            Warning::Declining {
                metric,
                first,
                last,
            } => declining(f, whole, metric, *first, *last),
            Warning::FutureRuns { count, latest } => future_runs(f, whole, *count, latest),
            Warning::ScaledThreshold { resolution } => {
                write!(f, "threshold scaled with the machine: {resolution}")
            }
            Warning::NotPolicysTest(d) => write!(f, "{}: {d}: {}", d.headline(), d.why()),
            Warning::StaleSource { seen, url } => sentence(
                f,
                whole,
                format_args!("source seen {seen} (over a year ago): check it is current"),
                format_args!("the source: {url}"),
            ),
            Warning::IdleSignature {
                metric,
                rho,
                runs,
                longest,
                shortest,
            } => idle_signature(f, whole, metric, (*rho, *runs), longest, shortest),
            Warning::NoSeries { runs, low } => no_series(f, *runs, low, whole),
            Warning::DecisionStands {
                outcomes,
                decided_at,
                due,
                every,
            } => decision_stands(f, outcomes, *decided_at, (*due, *every), whole),
            w @ Warning::SharedRuns { .. } => shared_runs(f, whole, w),
            Warning::InputCaveat { about, caveat } => {
                write!(f, "{about}: ")?;
                caveat.write(f, whole)
            }
            Warning::EngineFallback {
                asked,
                reason,
                used,
            } => sentence(
                f,
                whole,
                format_args!("{asked} is not usable here ({reason})"),
                format_args!("fell back to {used}"),
            ),
            Warning::StepInsideRun {
                steps,
                runs,
                worst,
                before,
                after,
                at_s,
            } => sentence(
                f,
                whole,
                format_args!(
                    "IOPS fell step-wise inside {steps} of {runs} runs (the run of {}: from {before:.0} to {after:.0} IOPS after {at_s:.1} s): the page cache filling up or burst credits running out look like this",
                    worst.format(RUN_TIME),
                ),
                format_args!("the run's figure averages both parts"),
            ),
            Warning::SlowFinalFsync {
                slow,
                runs,
                worst,
                fsync_ms,
                runtime_ms,
            } => write!(
                f,
                "the final fsync took most of the time in {slow} of {runs} runs (the run of {}: {:.1} s of {:.1} s): the writes went to the page cache and the disk paid at the end, inside the measured time",
                worst.format(RUN_TIME),
                fsync_ms / 1000.0,
                runtime_ms / 1000.0
            ),
        }
    }
}

/// [`Warning::SharedRuns`]'s sentence: its runs, the earliest's time, the other node and
/// where its evidence is.
fn shared_runs(f: &mut fmt::Formatter<'_>, whole: bool, w: &Warning) -> fmt::Result {
    let Warning::SharedRuns {
        runs,
        earliest,
        node,
        at,
    } = w
    else {
        return Ok(());
    };
    let runs = *runs;
    sentence(
        f,
        whole,
        format_args!(
            "{runs} of its runs (the earliest at {}) {} also counted for node {node} ({at})",
            earliest.format("%Y-%m-%d %H:%M"),
            if runs == 1 { "is" } else { "are" },
        ),
        format_args!("one fio run is one machine's, so neither node's verdict may rest on it"),
    )
}

/// [`Warning::FutureRuns`]'s sentence.
fn future_runs(
    f: &mut fmt::Formatter<'_>,
    whole: bool,
    count: usize,
    latest: &DateTime<FixedOffset>,
) -> fmt::Result {
    let one = count == 1;
    sentence(
        f,
        whole,
        format_args!(
            "{count} run{} dated in the future (the latest {}) {} not counted: a clock was wrong when {} recorded",
            if one { "" } else { "s" },
            latest.format("%Y-%m-%d %H:%M %:z"),
            if one { "is" } else { "are" },
            if one { "it was" } else { "they were" },
        ),
        format_args!("fix the clock, the runs stay in the history"),
    )
}

/// [`Warning::Declining`]'s sentence.
fn declining(
    f: &mut fmt::Formatter<'_>,
    whole: bool,
    metric: &str,
    first: (chrono::NaiveDate, f64),
    last: (chrono::NaiveDate, f64),
) -> fmt::Result {
    let change = if first.1 != 0.0 {
        (last.1 / first.1 - 1.0) * 100.0
    } else {
        0.0
    };
    sentence(
        f,
        whole,
        format_args!(
            "{metric} is falling steadily with time: its daily mean went from {} on {} to {} on {} ({change:+.0}%)",
            short(first.1),
            first.0,
            short(last.1),
            last.0,
        ),
        format_args!(
            "burst credits of a cloud disk running out look like this, and the verdict judges the latest day too"
        ),
    )
}

/// [`Warning::IdleSignature`]'s sentence: the correlation over the runs, and the run after
/// the longest idle time and the one after the shortest.
fn idle_signature(
    f: &mut fmt::Formatter<'_>,
    whole: bool,
    metric: &str,
    (rho, runs): (f64, usize),
    a: &IdleRun,
    b: &IdleRun,
) -> fmt::Result {
    sentence(
        f,
        whole,
        format_args!(
            "{metric} follows the idle time before each run (rank correlation {rho:.2} over {runs} runs): the run of {} after {} idle measured {}, the run of {} after {} measured {}",
            a.timestamp.format("%Y-%m-%d %H:%M"),
            idle_words(a.idle_s),
            short(a.value),
            b.timestamp.format("%Y-%m-%d %H:%M"),
            idle_words(b.idle_s),
            short(b.value),
        ),
        format_args!(
            "a disk whose burst credits refill while idle looks like this, and its figure then says when the test ran more than what the disk keeps up"
        ),
    )
}

/// [`Warning::NoSeries`]'s sentence.
fn no_series(
    f: &mut fmt::Formatter<'_>,
    runs: usize,
    low: &[(usize, f64, f64)],
    whole: bool,
) -> fmt::Result {
    f.write_str("fio's output gives each run's IOPS per interval only as a summary, not a series: whether a disk's burst credits ran out inside a run cannot be told from it (a native `iopscheck run` samples the disk every 500 ms and judges the level it sustained)")?;
    if !low.is_empty() {
        let each: Vec<String> = low
            .iter()
            .map(|(i, min, mean)| {
                format!(
                    "run {i}: lowest {} IOPS, mean {}",
                    crate::numbers::fmt_value(*min),
                    crate::numbers::fmt_value(*mean)
                )
            })
            .collect();
        then(
            f,
            whole,
            format_args!(
                "in {} of {runs} runs the lowest interval is under 0.8 × the mean, as a step down would make it ({})",
                low.len(),
                each.join("; ")
            ),
        )?;
    }
    Ok(())
}

/// [`Warning::DecisionStands`]'s sentence: the outcomes, when the last was decided, and when
/// the next re-check is due, every so often.
fn decision_stands(
    f: &mut fmt::Formatter<'_>,
    outcomes: &[crate::evaluate::sequential::Outcome],
    decided_at: Option<DateTime<FixedOffset>>,
    (due, every): (DateTime<chrono::Utc>, std::time::Duration),
    whole: bool,
) -> fmt::Result {
    let outcomes: Vec<&str> = outcomes.iter().map(|o| o.as_str()).collect();
    write!(
        f,
        "no test run: this node's sequence ended {}",
        outcomes.join(", ")
    )?;
    if let Some(t) = decided_at {
        write!(
            f,
            " at the run of {}",
            t.with_timezone(&chrono::Utc).format("%Y-%m-%d %H:%M UTC")
        )?;
    }
    f.write_str(" and stands")?;
    then(
        f,
        whole,
        format_args!(
            "next re-check due {} (--recheck-every {})",
            due.format("%Y-%m-%d %H:%M UTC"),
            crate::units::format_duration(every)
        ),
    )
}

/// How a run is named in the warnings about what happened inside it.
const RUN_TIME: &str = "%Y-%m-%d %H:%M:%S";

/// "8.0 h", "25 min", "40 s".
fn idle_words(s: f64) -> String {
    if s >= 5400.0 {
        format!("{:.1} h", s / 3600.0)
    } else if s >= 90.0 {
        format!("{:.0} min", s / 60.0)
    } else {
        format!("{s:.0} s")
    }
}
