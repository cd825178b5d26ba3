//! What makes a run not the policy's test, read from the run's record alone (its job, engine
//! and target), so `run`, `import`, `report` and `fleet` judge every record by the same rule.
//!
//! A deviation either *flatters* the disk (a smaller file, a shorter run, a target in RAM —
//! a RAM-backed filesystem, /dev/shm, a RAM disk, fio's null engine —, no end fsync where the
//! policy has one, a `ramp_time`, buffered I/O where the policy says direct): a pass on such a
//! test proves nothing, a fail still fails. Or it could go *either way* (another rw, bs, depth,
//! numjobs, sync option, an engine the policy does not list, or a limit the job put on its own
//! I/O: `rate_iops`, `thinktime`…, which lowers the figures and can flatter the latencies):
//! the result says nothing about the policy's test. What a record does not state is neither:
//! the shape fields that define the test count as deviations when unknown (they cannot be
//! confirmed), while an unstated end fsync, file size or job option list is a caveat shown
//! with the verdict.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;

use crate::engine::EngineUsed;
use crate::history::Source;
use crate::job::{JobShape, ShapeDifference};
use crate::policy::Policy;
use crate::run_index::{Run, RunFields, RunInfo};
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
                "a target in RAM (tmpfs, ramfs, a RAM disk, /dev/null) measures memory, not the disk the vendor asks about"
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
            "ioengine" if self.effect == Effect::Flatters => {
                "fio's null engine does no I/O: it measures fio itself, not a disk"
            }
            "ioengine" => "engines give different numbers on the same disk",
            f if crate::job::reshape(f).is_some() => crate::job::reshape(f).map_or("", |r| r.why),
            f if is_limit(f) => {
                "a job that holds back its own I/O (a rate cap, think time, flow control, a latency target) measures that limit, not the disk"
            }
            _ => "a job of another shape measures something else",
        }
    }
}

/// Filesystems that live in RAM.
pub const RAM_FS: &[&str] = &["tmpfs", "ramfs", "devtmpfs"];

/// fio's engine that does no I/O at all.
const NULL_ENGINE: &str = "null";

/// Whether a deviation's field is one of the job's own limits ([`crate::job::LIMITS`]).
fn is_limit(field: &str) -> bool {
    crate::job::LIMITS.iter().any(|(name, _)| *name == field)
}

/// What a path is when it is in RAM on every Linux system, whatever its mounts: /dev/shm (and
/// /run/shm, /run/user/UID), the kernel's RAM disks, the null and zero devices. Other tmpfs
/// or ramfs mounts are known only where the filesystem was seen (a native run's target).
pub fn ram_path(path: &str) -> Option<&'static str> {
    let p = std::path::Path::new(path.trim());
    if !p.is_absolute() {
        return None;
    }
    let under = |dir: &str| p.starts_with(dir);
    if under("/dev/shm") || under("/run/shm") || under("/run/user") {
        return Some("tmpfs, in RAM");
    }
    let name = p.strip_prefix("/dev").ok()?.to_str()?;
    let numbered = |prefix: &str| {
        name.strip_prefix(prefix)
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
    };
    if numbered("ram") {
        Some("a RAM disk")
    } else if numbered("zram") {
        Some("a compressed RAM disk")
    } else if name == "null" || name == "zero" {
        Some("a device that stores nothing")
    } else {
        None
    }
}

/// Where a job says it wrote: its `filename`s (fio separates several with ':'; a relative one
/// is under each `directory`), its `directory`s, and the record's target directory.
fn stated_paths(r: &impl RunFields) -> Vec<String> {
    let job = r.job();
    let dirs: Vec<&str> = job
        .directory
        .as_deref()
        .map(|d| d.split(':').filter(|d| !d.is_empty()).collect())
        .unwrap_or_default();
    let mut out = Vec::new();
    for f in job
        .filename
        .as_deref()
        .unwrap_or("")
        .split(':')
        .filter(|f| !f.is_empty())
    {
        if f.starts_with('/') {
            out.push(f.to_string());
        } else {
            out.extend(
                dirs.iter()
                    .map(|d| format!("{}/{f}", d.trim_end_matches('/'))),
            );
        }
    }
    out.extend(dirs.iter().map(|d| d.to_string()));
    out.push(r.target().dir.clone());
    out
}

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

    /// Which way the deviations can move the figures: either way if any can, else flatters;
    /// None for the policy's test.
    pub fn effect(&self) -> Option<Effect> {
        effect_of(&self.deviations)
    }
}

fn secs(s: f64) -> String {
    units::format_duration(Duration::from_secs_f64(s.max(0.0)))
}

/// The engine a record ran on, in fio's words ("fio/posixaio" → "posixaio").
pub fn engine_of(r: &impl RunFields) -> Option<String> {
    match EngineUsed::ioengine_of(r.engine()) {
        Some(e) => Some(e.to_string()),
        None => r.job().ioengine.clone(),
    }
}

/// [`check`] of runs met one after another, done once for the runs of one context: what
/// `check` reads of a run is its context (job, engine, target: what the runs of a
/// [`RunInfo`] share), and its figures only for a job that does not state its runtime. A
/// year of runs of one context is checked once, not a hundred thousand times.
pub struct Checker<'p> {
    policy: &'p Policy,
    last: Option<(Arc<RunInfo>, Checked)>,
}

/// A run's [`Check`] and its deviations in one line ([`list`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Checked {
    pub check: Check,
    pub list: String,
}

impl<'p> Checker<'p> {
    pub fn new(policy: &'p Policy) -> Checker<'p> {
        Checker { policy, last: None }
    }

    pub fn policy(&self) -> &'p Policy {
        self.policy
    }

    /// What [`check`] says of `r`, and its deviations in one line.
    pub fn check(&mut self, r: &Run) -> &Checked {
        // The measured runtime stands in for an unstated one: then the figures are read.
        let reads_figures = r.job.runtime_s.is_none();
        let fresh = match &self.last {
            Some((info, _)) => reads_figures || !Arc::ptr_eq(info, r.context()),
            None => true,
        };
        if fresh {
            let check = check(r, self.policy);
            let list = list(&check.deviations);
            self.last = Some((r.context().clone(), Checked { check, list }));
        }
        &self.last.as_ref().expect("set above").1
    }
}

/// Checks one record against the policy's test. What it reads of a run beyond its context
/// must be known to [`Checker`].
pub fn check(r: &impl RunFields, policy: &Policy) -> Check {
    let want = policy.job.shape();
    let job: &JobShape = r.job();
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
            // fio's null engine completes every I/O without doing it.
            let effect = if found.as_deref() == Some(NULL_ENGINE) {
                Effect::Flatters
            } else {
                Effect::EitherWay
            };
            push(
                "ioengine",
                list.join(" or "),
                found.unwrap_or_else(|| "not stated".into()),
                effect,
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

    // The job's own limits: the figures are the limit's, whichever way it moved them.
    match &job.limits {
        Some(limits) => {
            for (name, value) in limits {
                if let Some((field, _)) = crate::job::LIMITS.iter().find(|(n, _)| n == name) {
                    push(field, "none".into(), value.clone(), Effect::EitherWay);
                } else if let Some(r) = crate::job::reshape(name) {
                    push(r.names[0], r.expected.into(), value.clone(), Effect::EitherWay);
                }
            }
        }
        // An output that lists no options (text, terse) cannot show them; our own runs have
        // none.
        None if r.source() == Source::Imported => out.caveats.push(
            "job options not stated: the output does not list them, so a limit such as rate_iops or thinktime cannot be ruled out (fio's JSON output lists them)".into(),
        ),
        None => {}
    }

    // How much of it ran: less flatters. A device policy's job reads each whole device.
    let whole = crate::policy::devices::reads_whole_device(policy, r.target(), job.size, job.bs);
    match (job.size, want.size) {
        _ if whole => {}
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
        .filter_map(|m| r.metrics().get(*m))
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
    if let Some(fs) = r.target().filesystem.as_deref()
        && RAM_FS.contains(&fs)
    {
        push(
            "target",
            "a disk".into(),
            format!("{fs} (in RAM)"),
            Effect::Flatters,
        );
    } else if let Some((path, what)) = stated_paths(r)
        .into_iter()
        .find_map(|p| ram_path(&p).map(|what| (p, what)))
    {
        push(
            "target",
            "a disk".into(),
            format!("{path} ({what})"),
            Effect::Flatters,
        );
    }
    out
}

/// The fields in which a job, as its output states it, is another job than the policy's:
/// its stated shape differences ([`JobShape::stated_differences`]), the engine judged against
/// the policy's list of engines. What the output does not state is left to [`check`] (it
/// cannot be confirmed, and is no contradiction): `import` chooses among an output's blocks
/// by this before any record is judged.
pub fn stated_differences(job: &JobShape, policy: &Policy) -> Vec<ShapeDifference> {
    job.stated_differences(&policy.job.shape())
        .into_iter()
        .filter(|d| !(d.field == "ioengine" && policy.accepts_engine(&d.found)))
        .collect()
}

/// A field of the job stated beside an output (a pasted fio command line, `--assume-job`)
/// that the output contradicts, named as the output shows it, in the block that shows it:
/// whatever the record's own shape, such a run is not the policy's test, and its verdict is
/// inconclusive (`evaluate`), with each one named.
#[derive(Debug, Clone, PartialEq)]
pub struct Contradiction {
    pub difference: ShapeDifference,
    /// The block it was found in ("out.json", "out.json job 2 (write)").
    pub run: String,
    /// The place of the block's record among the records judged (`run_index::At::Index`):
    /// its record carries the value the figures show, so the deviation the record shows of
    /// the same field is this one, said once.
    pub record: Option<usize>,
}

impl Contradiction {
    /// As the evaluation lists its differences: the block named after what it shows.
    pub fn shape_difference(&self) -> ShapeDifference {
        ShapeDifference {
            field: self.difference.field,
            expected: self.difference.expected.clone(),
            found: format!("{} in {}", self.difference.found, self.run),
        }
    }
}

/// The strongest effect among `d`: [`Effect::EitherWay`] over [`Effect::Flatters`]; None when
/// there are none.
pub fn effect_of(d: &[Deviation]) -> Option<Effect> {
    d.iter().map(|d| d.effect).max()
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
    use crate::history::Record;

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
    fn stated_differences_are_what_the_output_states_of_another_job() {
        let p = policy();
        let mut job = p.job.shape();
        // unstated: no contradiction (the record's check names them as unknown)
        job.bs = None;
        job.ioengine = Some("io_uring".into());
        assert!(stated_differences(&job, &p).is_empty());
        assert!(!check(&record(job.clone(), "fio/io_uring"), &p).is_policy_test());
        job.ioengine = Some("libaio".into());
        job.iodepth = Some(32);
        let d = stated_differences(&job, &p);
        let fields: Vec<_> = d.iter().map(|d| d.field).collect();
        assert_eq!(fields, vec!["ioengine", "iodepth"]);
        assert_eq!(d[1].found, "32");
    }

    #[test]
    fn only_paths_in_ram_on_every_system_are_taken_for_ram() {
        for (p, want) in [
            ("/dev/shm", Some("tmpfs, in RAM")),
            ("//dev/shm/x", Some("tmpfs, in RAM")),
            ("/run/shm/x", Some("tmpfs, in RAM")),
            ("/dev/ram12", Some("a RAM disk")),
            ("/dev/zram0", Some("a compressed RAM disk")),
            ("/dev/null", Some("a device that stores nothing")),
            ("/dev/shmem", None),
            ("/dev/ram", None),
            ("/dev/ramx1", None),
            ("/dev/sdb", None),
            ("dev/shm", None),
            // tmpfs on some systems, a disk on others: not stated
            ("/tmp/x", None),
            ("/run/media/u/disk", None),
        ] {
            assert_eq!(ram_path(p), want, "{p}");
        }
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

    #[test]
    fn the_checker_says_what_check_says_of_every_run_of_a_history() {
        // Runs read from a history share their context; a context without a stated runtime
        // is judged by each run's measured one.
        let p = policy();
        let mut records = Vec::new();
        for (i, (runtime, measured, size)) in [
            (Some(60.0), 3000.0, 4u64 << 30),
            (Some(60.0), 60000.0, 4 << 30),
            (None, 3000.0, 4 << 30),
            (None, 60001.0, 4 << 30),
            (None, 2000.0, 4 << 30),
            (Some(60.0), 60000.0, 64 << 20),
            (Some(60.0), 60000.0, 4 << 30),
        ]
        .into_iter()
        .enumerate()
        {
            let mut job = p.job.shape();
            job.runtime_s = runtime;
            job.size = Some(size);
            let mut r = record(job, "fio/posixaio");
            r.timestamp =
                chrono::DateTime::parse_from_rfc3339(&format!("2026-12-01T1{i}:00:00Z")).unwrap();
            r.metrics.insert("write_runtime_ms".into(), measured);
            records.push(r);
        }
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("h.jsonl");
        crate::history::append(&path, &records).unwrap();
        let mut runs = Vec::new();
        crate::history::scan_runs(
            std::io::BufReader::new(std::fs::File::open(&path).unwrap()),
            &path,
            crate::history::MAX_LINE,
            None,
            |_| true,
            |r| runs.push(r),
        )
        .unwrap();
        assert!(
            Arc::ptr_eq(runs[0].context(), runs[1].context()),
            "one context"
        );
        let mut checker = Checker::new(&p);
        let mut lists = Vec::new();
        for (run, rec) in runs.iter().zip(&records) {
            let want = check(rec, &p);
            let got = checker.check(run);
            assert_eq!(got.check, want, "{}", rec.timestamp);
            assert_eq!(got.list, list(&want.deviations));
            lists.push(got.list.clone());
        }
        for i in [0, 1, 3, 6] {
            assert_eq!(lists[i], "", "run {i}");
        }
        assert!(
            lists[2].starts_with("runtime 3.0 s (measured) instead of "),
            "{lists:?}"
        );
        assert!(
            lists[4].starts_with("runtime 2.0 s (measured) instead of "),
            "{lists:?}"
        );
        assert_eq!(lists[5], "size 64 MiB instead of 4 GiB");
    }
}
