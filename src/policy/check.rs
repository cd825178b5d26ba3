//! Checking a parsed policy for what the YAML schema alone cannot say: a rule's metric that
//! the job can never measure, a window too short for its days, no deciding rule. A new rule
//! about what a valid policy is goes here; each message names the key.

use super::schema::{Level, Policy};
use crate::metrics;

/// How many runs one invocation may make, from a policy's `runs` or `run --runs`.
pub const RUNS: std::ops::RangeInclusive<u32> = 1..=1000;

/// Checks a number of runs against [`RUNS`].
pub fn check_runs(n: u32) -> Result<(), String> {
    if RUNS.contains(&n) {
        Ok(())
    } else {
        Err(format!("must be {} to {}", RUNS.start(), RUNS.end()))
    }
}

/// Checks what the YAML schema alone cannot: each message names the key.
pub fn check(p: &Policy) -> Result<(), String> {
    if p.name.trim().is_empty() {
        return Err("name: must not be empty".into());
    }
    p.job.validate().map_err(|e| format!("job.{e}"))?;
    if let Some(first) = p.engines.first()
        && *first != p.job.ioengine
    {
        return Err(format!(
            "engines: the first engine is the default and must be the job's ioengine ({}), not {first}",
            p.job.ioengine
        ));
    }
    check_runs(p.runs).map_err(|e| format!("runs: {e}"))?;
    if let Some(d) = &p.devices {
        super::devices::check(d, &p.job)?;
    }
    if p.rules.is_empty() && p.fleet.is_empty() {
        return Err("rules: a policy needs at least one rule (or a fleet rule)".into());
    }
    for (i, r) in p.fleet.iter().enumerate() {
        let info = metrics::lookup(&r.metric).expect("checked on load");
        if let Some(dir) = info.direction
            && !((dir == crate::measure::Direction::Read && p.job.rw.reads())
                || (dir == crate::measure::Direction::Write && p.job.rw.writes()))
        {
            return Err(format!(
                "fleet[{i}].metric: '{}' can never be measured by a job with rw={}",
                r.metric, p.job.rw
            ));
        }
    }
    for (i, r) in p.rules.iter().enumerate() {
        let info = metrics::known(&r.metric).map_err(|e| format!("rules[{i}].metric: {e}"))?;
        if !r.threshold.is_finite() || r.threshold < 0.0 {
            return Err(format!(
                "rules[{i}].threshold: must be a positive number in {}",
                info.unit
            ));
        }
        if let Some(dir) = info.direction
            && !((dir == crate::measure::Direction::Read && p.job.rw.reads())
                || (dir == crate::measure::Direction::Write && p.job.rw.writes()))
        {
            return Err(format!(
                "rules[{i}].metric: '{}' can never be measured by a job with rw={}",
                r.metric, p.job.rw
            ));
        }
        if info.needs_sync && p.job.fsync == 0 && p.job.fdatasync == 0 {
            return Err(format!(
                "rules[{i}].metric: '{}' needs a job that syncs (job.fsync or job.fdatasync)",
                r.metric
            ));
        }
    }
    if !p.rules.iter().any(|r| r.level == Level::Fail)
        && !p.fleet.iter().any(|r| r.level == Level::Fail)
    {
        return Err(
            "rules: at least one rule (or fleet rule) must have level fail, or nothing decides"
                .into(),
        );
    }
    if p.sustained == super::schema::Sustained::Required
        && !p
            .deciding_rules()
            .any(|r| metrics::throughput(&r.metric).is_some() && r.op.higher_is_better())
    {
        return Err("sustained: required needs a deciding rule on a throughput figure (IOPS or bandwidth, with \">=\"): only those have a level the disk sustains".into());
    }
    let e = &p.evidence;
    if e.min_runs == 0 {
        return Err("evidence.min_runs: must be at least 1".into());
    }
    if e.min_days == 0 {
        return Err("evidence.min_days: must be at least 1".into());
    }
    if e.min_runs_per_day == 0 {
        return Err("evidence.min_runs_per_day: must be at least 1".into());
    }
    if e.window.0.as_secs() < 3600 {
        return Err("evidence.window: must be at least 1h".into());
    }
    if e.min_days as u64 > e.window.0.as_secs().div_ceil(86400) {
        return Err(format!(
            "evidence.min_days: {} days cannot fit in a window of {}",
            e.min_days,
            crate::units::format_duration(e.window.0)
        ));
    }
    if !(e.max_cv.is_finite() && e.max_cv > 0.0) {
        return Err("evidence.max_cv: must be a positive fraction such as 0.25".into());
    }
    Ok(())
}
