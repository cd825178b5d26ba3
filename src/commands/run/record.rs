//! Each run's record and its line on stderr.

use chrono::{DateTime, FixedOffset};

use crate::evaluate::SustainedCheck;
use crate::history::{Record, Source};
use crate::measure::Measurement;
use crate::record::{RunInfo, SustainedRun};

use super::plan::{Plan, Runner};

/// "run 1/3: write_iops_formula 19001 IOPS (fio's IOPS=18121), 77.8 MB/s, 60.0 s" (the
/// engine is in the group line under the runs): the policy's deciding figure first, named and
/// rounded as the runs table shows it, then fio's own IOPS figure labelled as such, so the two
/// never look like one figure that changed. fio's figures are read from the run's measurement.
pub(super) fn run_line(
    i: u32,
    n: u32,
    m: &Measurement,
    r: &Record,
    deciding: Option<&str>,
) -> Option<String> {
    let (dir, d) = match (&m.write, &m.read) {
        (Some(w), _) => ("write", w),
        (None, Some(r)) => ("read", r),
        (None, None) => return None,
    };
    let iops = d.iops;
    let mbs = d.bw_mb_s_printed.unwrap_or(d.bw_bytes / 1e6);
    let rt = d.runtime_ms as f64;
    let fio = crate::numbers::fmt_value(iops);
    // The policy's deciding figure, by the name its rule gives.
    let head = match deciding.and_then(|d| r.metrics.get(d).map(|v| (d, *v))) {
        Some((d, v)) if d.strip_suffix("_iops") != Some(dir) => {
            let unit = crate::metrics::unit(d);
            let unit = if unit.is_empty() {
                String::new()
            } else {
                format!(" {unit}")
            };
            format!(
                "{d} {}{unit} (fio's IOPS={fio})",
                crate::numbers::fmt_value(v)
            )
        }
        _ => format!("{dir} {fio} IOPS"),
    };
    Some(format!(
        "run {i}/{n}: {head}, {mbs:.1} MB/s, {:.1} s",
        rt / 1000.0,
    ))
}

/// The record of a run of the plan that started at `started`.
pub(super) fn make_record(
    plan: &Plan,
    started: DateTime<FixedOffset>,
    m: &Measurement,
    fio_version: Option<String>,
    check: Option<&SustainedCheck>,
) -> Record {
    let source = match &plan.runner {
        Runner::Native(_) => Source::Native,
        Runner::Fio(_) => Source::Fio,
    };
    let mut info = RunInfo::new(
        plan.host.clone(),
        source,
        plan.runner.used(&plan.job).to_string(),
        plan.job.shape(),
        plan.target.clone(),
        plan.policy_name.clone(),
    );
    info.engine_note = plan.engine_note.clone();
    info.overrides = plan.overrides.clone();
    info.bw_basis = Some(crate::measure::BwBasis::Exact);
    info.fio_version = fio_version;
    let mut record = Record::measured(info, started, m);
    record.invocation = Some(plan.invocation.clone());
    // What `--sustained` found of the level the disk sustains, with the run that looked.
    record.sustained = check.map(|c| match c {
        SustainedCheck::Reached(how) => SustainedRun {
            reached: true,
            how: how.clone(),
        },
        SustainedCheck::NotReached(why) => SustainedRun {
            reached: false,
            how: why.clone(),
        },
    });
    record
}
