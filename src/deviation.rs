//! What makes a run not the policy's test, read from the run's record alone (its job, engine
//! and target), so `run`, `import`, `report` and `fleet` judge every record by the same rule.
//!
//! A deviation either *flatters* the disk (a smaller file, a shorter run, a RAM-backed target,
//! no end fsync where the policy has one, a `ramp_time`, buffered I/O where the policy says
//! direct): a pass on such a test proves nothing, a fail still fails. Or it could go *either
//! way* (another rw, bs, depth, numjobs, sync option, or an engine the policy does not list):
//! the result says nothing about the policy's test. What a record does not state is neither:
//! the shape fields that define the test count as deviations when unknown (they cannot be
//! confirmed), while an unstated end fsync or file size is a caveat shown with the verdict.

use std::fmt;
use std::time::Duration;

use serde::Serialize;

use crate::engine::EngineUsed;
use crate::history::Record;
use crate::job::JobShape;
use crate::policy::Policy;
use crate::units;

/// Which way a deviation can move the result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Effect {
    /// Can only make the disk look faster: never a pass.
    Flatters,
    /// Could make the result better or worse: never a verdict.
    EitherWay,
}

/// One way a run's test differs from the policy's.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct Deviation {
    /// The job option (fio's name) or `target`.
    pub field: &'static str,
    pub expected: String,
    pub found: String,
    pub effect: Effect,
}

impl fmt::Display for Deviation {
    /// "size 64 MiB instead of 4 GiB".
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} {} instead of {}",
            self.field, self.found, self.expected
        )
    }
}

impl Deviation {
    /// Why it matters, for the warnings.
    pub fn why(&self) -> &'static str {
        match self.field {
            "size" => {
                "a smaller file fits more of itself in the page cache, which flatters buffered results"
            }
            "runtime" => {
                "a shorter run leaves less dirty data to flush and may never exhaust burst credits"
            }
            "target" => {
                "a RAM-backed filesystem measures memory, not the disk the vendor asks about"
            }
            "end_fsync" => {
                "without the end fsync, data still in the page cache was never counted, which flatters buffered writes"
            }
            "ramp_time" => {
                "ramp_time drops the start of the run from the figures, where a disk is often slowest to settle"
            }
            "direct" if self.effect == Effect::Flatters => {
                "buffered I/O lets the page cache absorb writes the policy sends to the disk"
            }
            "ioengine" => "engines give different numbers on the same disk",
            _ => "a job of another shape measures something else",
        }
    }
}

/// Filesystems that live in RAM.
pub const RAM_FS: &[&str] = &["tmpfs", "ramfs", "devtmpfs"];

/// A run's deviations from the policy's test, and its caveats (what its record does not
/// state, where a deviation could hide).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Check {
    pub deviations: Vec<Deviation>,
    pub caveats: Vec<String>,
}

impl Check {
    pub fn is_policy_test(&self) -> bool {
        self.deviations.is_empty()
    }
}

fn secs(s: f64) -> String {
    units::format_duration(Duration::from_secs_f64(s.max(0.0)))
}

/// The engine a record ran on, in fio's words ("fio/posixaio" → "posixaio").
pub fn engine_of(r: &Record) -> Option<String> {
    match EngineUsed::ioengine_of(&r.engine) {
        Some(e) => Some(e.to_string()),
        None => r.job.ioengine.clone(),
    }
}

/// Checks one record against the policy's test.
pub fn check(r: &Record, policy: &Policy) -> Check {
    let want = policy.job.shape();
    let job: &JobShape = &r.job;
    let mut out = Check::default();
    let mut push = |field: &'static str, expected: String, found: String, effect: Effect| {
        out.deviations.push(Deviation {
            field,
            expected,
            found,
            effect,
        })
    };

    // What the test is: any difference could go either way.
    let mut shape = job.clone();
    // The engine is judged against the policy's list below, not its default alone.
    shape.ioengine = want.ioengine.clone();
    // Buffered where the policy says direct flatters; judged below.
    if want.direct == Some(true) {
        shape.direct = Some(true);
    }
    for d in shape.shape_differences(&want) {
        push(d.field, d.expected, d.found, Effect::EitherWay);
    }
    match engine_of(r) {
        Some(e) if policy.accepts_engine(&e) => {}
        found => {
            let list: Vec<String> = policy
                .accepted_engines()
                .iter()
                .map(|e| e.to_string())
                .collect();
            push(
                "ioengine",
                list.join(" or "),
                found.unwrap_or_else(|| "not stated".into()),
                Effect::EitherWay,
            );
        }
    }
    if want.direct == Some(true) && job.direct != Some(true) {
        let found = match job.direct {
            Some(false) => "0 (buffered)".to_string(),
            _ => "not stated (fio's default is buffered)".to_string(),
        };
        push("direct", "1".into(), found, Effect::Flatters);
    }

    // How much of it ran: less flatters.
    match (job.size, want.size) {
        (Some(found), Some(w)) if found < w => push(
            "size",
            units::format_size(w),
            units::format_size(found),
            Effect::Flatters,
        ),
        (None, Some(w)) => out.caveats.push(format!(
            "file size not stated (the policy's test uses {})",
            units::format_size(w)
        )),
        _ => {}
    }
    let measured = ["write_runtime_ms", "read_runtime_ms"]
        .iter()
        .filter_map(|m| r.metrics.get(*m))
        .copied()
        .fold(None, |a: Option<f64>, v| Some(a.map_or(v, |a| a.max(v))));
    match (job.runtime_s, want.runtime_s) {
        (Some(found), Some(w)) if found + 1e-9 < w => {
            push("runtime", secs(w), secs(found), Effect::Flatters)
        }
        // Not stated: the measured runtime still shows how long the job ran.
        (None, Some(w)) => match measured {
            Some(ms) if ms / 1000.0 + 0.5 < w => push(
                "runtime",
                secs(w),
                format!("{:.1} s (measured)", ms / 1000.0),
                Effect::Flatters,
            ),
            Some(_) => {}
            None => out.caveats.push(format!(
                "runtime not stated (the policy's test runs {})",
                secs(w)
            )),
        },
        _ => {}
    }
    if want.end_fsync == Some(true) {
        match job.end_fsync {
            Some(true) => {}
            Some(false) => push("end_fsync", "1".into(), "0".into(), Effect::Flatters),
            None => out
                .caveats
                .push("end fsync not stated: the output does not show whether the job ended with an fsync, as the policy's test does".into()),
        }
    }
    if let Some(ramp) = job.ramp_time_s.filter(|&s| s > 0.0) {
        push("ramp_time", "none".into(), secs(ramp), Effect::Flatters);
    }
    if let Some(fs) = r.target.filesystem.as_deref()
        && RAM_FS.contains(&fs)
    {
        push(
            "target",
            "a disk".into(),
            format!("{fs} (in RAM)"),
            Effect::Flatters,
        );
    }
    out
}

/// The deviations in one line: "size 64 MiB instead of 4 GiB; runtime 3s instead of 60s".
pub fn list(d: &[Deviation]) -> String {
    d.iter()
        .map(|d| d.to_string())
        .collect::<Vec<_>>()
        .join("; ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy() -> Policy {
        crate::policy::resolve("swimlane").unwrap().policy
    }

    fn record(job: JobShape, engine: &str) -> Record {
        let mut r = crate::evaluate::tests::rec("2026-12-01T10:00:00Z", 16.0);
        r.job = job;
        r.engine = engine.into();
        r.metrics.clear();
        r
    }

    #[test]
    fn the_policys_own_job_on_either_listed_engine_is_the_test() {
        let p = policy();
        for e in ["posixaio", "io_uring", "fio/posixaio", "fio/io_uring"] {
            let c = check(&record(p.job.shape(), e), &p);
            assert!(c.is_policy_test(), "{e}: {:?}", c.deviations);
            assert!(c.caveats.is_empty());
        }
        let c = check(&record(p.job.shape(), "libaio"), &p);
        assert_eq!(c.deviations.len(), 1);
        assert_eq!(c.deviations[0].effect, Effect::EitherWay);
        assert_eq!(
            c.deviations[0].to_string(),
            "ioengine libaio instead of posixaio or io_uring"
        );
    }

    #[test]
    fn a_quick_look_flatters_and_says_how() {
        let p = policy();
        let mut job = p.job.shape();
        job.size = Some(64 << 20);
        job.runtime_s = Some(3.0);
        job.end_fsync = Some(false);
        job.ramp_time_s = Some(2.0);
        let mut r = record(job, "posixaio");
        r.target.filesystem = Some("tmpfs".into());
        let c = check(&r, &p);
        let fields: Vec<_> = c.deviations.iter().map(|d| d.field).collect();
        assert_eq!(
            fields,
            vec!["size", "runtime", "end_fsync", "ramp_time", "target"]
        );
        assert!(c.deviations.iter().all(|d| d.effect == Effect::Flatters));
        assert_eq!(c.deviations[0].to_string(), "size 64 MiB instead of 4 GiB");
    }

    #[test]
    fn what_an_output_does_not_state_is_a_caveat_or_unknown() {
        let p = policy();
        let mut job = p.job.shape();
        job.end_fsync = None;
        job.size = None;
        let c = check(&record(job, "fio/posixaio"), &p);
        assert!(c.is_policy_test(), "{:?}", c.deviations);
        assert_eq!(c.caveats.len(), 2, "{:?}", c.caveats);
        assert!(
            c.caveats
                .iter()
                .any(|c| c.starts_with("end fsync not stated"))
        );
        let mut job = p.job.shape();
        job.bs = None;
        let c = check(&record(job, "fio/posixaio"), &p);
        assert_eq!(c.deviations[0].found, "not stated in the output");
        assert_eq!(c.deviations[0].effect, Effect::EitherWay);
    }

    #[test]
    fn a_measured_runtime_shorter_than_the_policys_flatters_when_none_is_stated() {
        let p = policy();
        let mut job = p.job.shape();
        job.runtime_s = None;
        let mut r = record(job, "fio/posixaio");
        r.metrics.insert("write_runtime_ms".into(), 3000.0);
        let c = check(&r, &p);
        assert_eq!(c.deviations.len(), 1);
        assert_eq!(c.deviations[0].field, "runtime");
        r.metrics.insert("write_runtime_ms".into(), 60001.0);
        assert!(check(&r, &p).is_policy_test());
    }
}
