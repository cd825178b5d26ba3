//! What makes a run not the policy's test, read from the run's record alone (its job, engine
//! and target), so `run`, `import`, `report` and `fleet` judge every record by the same rule.
//!
//! A deviation either *flatters* the disk (a smaller file, a shorter run, a target in RAM —
//! a RAM-backed filesystem, /dev/shm, a RAM disk, fio's null engine —, no end fsync where the
//! policy has one, a `ramp_time`, buffered I/O where the policy says direct): a pass on such a
//! test proves nothing, a fail still fails. Or it could go *either way* (another rw, bs, depth,
//! numjobs, sync option, an engine the policy does not list, a limit the job put on its own
//! I/O: `rate_iops`, `thinktime`…, which lowers the figures and can flatter the latencies, or
//! a longer stated runtime, where the page cache absorbs more of a file of fixed size and the
//! end fsync's cost is spread over more I/Os, or a disk on burst credits runs out of them):
//! the result says nothing about the policy's test. A record of `run --sustained` runs longer
//! by design and is judged by its own rule (docs/sustained.md): it stays the policy's test.
//! What a record does not state is unknown, never assumed: the shape fields that define the
//! test count as deviations when unknown (they cannot be confirmed, either way), and so do an
//! unstated file size, end fsync, or a runtime neither stated nor measured, which could only
//! flatter (their caveat says what would settle them). Only an unstated job option list is a
//! caveat alone: a limit such as `rate_iops` can only lower the figures.
//!
//! How long a run lasted is read from its figures as well as its job: a time-based run that
//! measured less than the policy's runtime was cut short (interrupted, or a job that ended
//! early), whatever runtime its job states. Longer is read from the job alone: fio's measured
//! runtime counts the end fsync, so a full run of the policy's job measures more than its
//! runtime. Where the policy's job is not time-based its runtime is a cap: a run that ended
//! by its size, or within the policy's cap, is the policy's test whatever cap it stated.

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
    /// "size 64 MiB instead of 4 GiB"; what the output does not state: "size not stated in
    /// the output, where the policy's test has size=4 GiB".
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // `found` is read from the record (an engine, a filesystem): shown on the line.
        let found = crate::printable::line(&self.found);
        if self.is_unknown() {
            return write!(
                f,
                "{} {found}, where the policy's test has {}={}",
                self.field, self.field, self.expected
            );
        }
        write!(f, "{} {found} instead of {}", self.field, self.expected)
    }
}

/// What a deviation's `found` says of a field the output does not state.
pub use crate::job::NOT_STATED;

/// What settles a field the output does not state, said where such a run would pass.
pub const SETTLE: &str = "fio's JSON output of the run states it, or paste the fio command line beside the output, or give the job with --assume-job";

impl Deviation {
    /// The deviation as its kind of run shows it: a runtime each run measured ("runtime 31.4 s
    /// (measured) instead of 1m", "runtime 1.2 s (measured), ended after 8 MiB of its 16 MiB
    /// instead of 1m") is "runtime shorter than 1m (measured)"; any other, as it reads.
    pub fn class(&self) -> String {
        if self.field == "runtime"
            && (self.found.contains("(measured)") || self.found.contains("ended after"))
        {
            format!("runtime shorter than {} (measured)", self.expected)
        } else {
            self.to_string()
        }
    }

    /// Whether the field is unknown (the output does not state it), not another value.
    pub fn is_unknown(&self) -> bool {
        self.found.starts_with(NOT_STATED)
    }

    /// How a list of deviations is introduced: "not the policy's test", or, where the output
    /// only leaves the field unknown, "not shown to be the policy's test".
    pub fn headline(&self) -> &'static str {
        if self.is_unknown() {
            "not shown to be the policy's test"
        } else {
            "not the policy's test"
        }
    }

    /// Why it matters, for the warnings.
    pub fn why(&self) -> &'static str {
        match self.field {
            "size" => {
                "a smaller file fits more of itself in the page cache, which flatters buffered results"
            }
            "runtime" if self.effect == Effect::EitherWay => {
                "a longer run is another test: with buffered I/O the page cache absorbs more of a file of fixed size and the end fsync's cost is spread over more I/Os, while a disk on burst credits may run out of them"
            }
            "runtime" => {
                "a shorter run leaves less dirty data to flush and may never exhaust burst credits"
            }
            "target" => {
                "a target in RAM (tmpfs, ramfs, a RAM disk, zram, a loop device over a file in RAM, /dev/null) measures memory, not the disk the vendor asks about"
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

/// Why a run's target is in RAM, as its `found`: its filesystem ("tmpfs (in RAM)"), its
/// device ([`device_in_ram`]), or a path it states ("/dev/shm/x (tmpfs, in RAM)").
fn in_ram(r: &impl RunFields) -> Option<String> {
    if let Some(fs) = r.target().filesystem.as_deref()
        && RAM_FS.contains(&fs)
    {
        return Some(format!("{fs} (in RAM)"));
    }
    device_in_ram(r.target()).or_else(|| {
        stated_paths(r)
            .into_iter()
            .find_map(|p| ram_path(&p).map(|what| format!("{p} ({what})")))
    })
}

/// Why a record's target device keeps its data in RAM: as the record states it (found when
/// the run was made, [`crate::history::Target`]'s `in_ram`: a loop device over tmpfs, a device
/// mapper over a RAM disk), else by the device's name, which means a RAM disk on every system
/// (`zram0`, `ram1`), so a record made before `in_ram` existed is judged the same anywhere.
fn device_in_ram(t: &crate::history::Target) -> Option<String> {
    if let Some(why) = t.in_ram.as_deref().filter(|w| !w.trim().is_empty()) {
        return Some(why.to_string());
    }
    let dev = t.device.as_deref()?.trim();
    let path = if dev.starts_with('/') {
        dev.to_string()
    } else {
        format!("/dev/{dev}")
    };
    ram_path(&path).map(|what| format!("{dev} ({what})"))
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

/// [`check`] of runs met one after another, the part a run shares with its context done once
/// for the runs of one context: what `check` reads of a run is its context (job, engine,
/// target: what the runs of a [`RunInfo`] share), checked once for a year of runs of one
/// context, and its measured runtime ([`runtime`]), two figures read for every run.
pub struct Checker<'p> {
    policy: &'p Policy,
    /// The policy's runtime and whether its job is time-based.
    want: Want,
    last: Option<Last>,
}

/// The context last checked: its check without the runtime, the runtime's finding last
/// met, and the two together.
struct Last {
    info: Arc<RunInfo>,
    context: Context,
    runtime: Option<Deviation>,
    checked: Checked,
}

/// A run's [`Check`] and its deviations in one line ([`list`]), and that line without what is
/// this run's own ([`class_list`]): what runs not counted are tallied by.
#[derive(Debug, Clone, PartialEq)]
pub struct Checked {
    pub check: Check,
    pub list: String,
    pub class: String,
}

impl<'p> Checker<'p> {
    pub fn new(policy: &'p Policy) -> Checker<'p> {
        Checker {
            policy,
            want: Want::of(policy),
            last: None,
        }
    }

    pub fn policy(&self) -> &'p Policy {
        self.policy
    }

    /// What [`check`] says of `r`, and its deviations in one line.
    pub fn check(&mut self, r: &Run) -> &Checked {
        let rt = runtime(r.job(), r.metrics(), &self.want, r.is_sustained());
        let same = self
            .last
            .as_ref()
            .is_some_and(|l| Arc::ptr_eq(&l.info, r.context()));
        if !same {
            let context = context_check(r, self.policy);
            let checked = context.with(rt.clone());
            self.last = Some(Last {
                info: r.context().clone(),
                context,
                runtime: rt,
                checked,
            });
        } else if let Some(l) = self.last.as_mut()
            && l.runtime != rt
        {
            l.checked = l.context.with(rt.clone());
            l.runtime = rt;
        }
        &self.last.as_ref().expect("set above").checked
    }
}

/// What [`runtime`] reads of the policy.
struct Want {
    runtime_s: Option<f64>,
    time_based: bool,
    /// The policy's file size: what a job that is not time-based writes before it ends.
    size: u64,
}

impl Want {
    fn of(policy: &Policy) -> Want {
        Want {
            runtime_s: Some(policy.job.runtime.0.as_secs_f64()),
            time_based: policy.job.time_based,
            size: policy.job.size.0,
        }
    }
}

/// How much shorter than the policy's runtime a run may measure before it ran less: fio and
/// iopscheck's engine stop a time-based job at its runtime or after it (fio 3.33 records
/// 60000–60009 ms for `runtime=60`, 2001–2009 ms for `runtime=2`; the engine rounds up to the
/// millisecond), so 1% of the runtime, at least 50 ms (fio's clock) and at most half a second.
pub fn runtime_slack_s(runtime_s: f64) -> f64 {
    (runtime_s * 0.01).clamp(0.05, 0.5)
}

/// The runtime's deviation, from the job's stated runtime and the run's measured one (the
/// longest of its directions): a stated runtime shorter than the policy's; a measured one
/// shorter than the policy's beyond [`runtime_slack_s`], whatever the job states, where the
/// policy's job is time-based (it runs its whole runtime) or the job states none (a job
/// capped by its runtime ends by its size, sooner); no runtime stated nor measured: unknown.
/// Either way: a stated runtime longer than the policy's, unless the record is a `run
/// --sustained`'s (`sustained`), longer by design. Where the policy's job is not time-based,
/// its runtime only caps a job that ends at its size: a run is judged by the bytes it moved
/// ([`size_bounded`]), and only where those are not known by the runtimes; a longer cap is
/// the policy's test where the run ended at its size or within the policy's cap.
fn runtime(
    job: &JobShape,
    metrics: &crate::metrics::Metrics,
    want: &Want,
    sustained: bool,
) -> Option<Deviation> {
    let stated = job.runtime_s;
    let w = want.runtime_s?;
    let deviation = |expected: String, found: String| {
        Some(Deviation {
            field: "runtime",
            expected,
            found,
            effect: Effect::Flatters,
        })
    };
    let measured = ["write_runtime_ms", "read_runtime_ms"]
        .iter()
        .filter_map(|m| metrics.get(*m))
        .copied()
        .fold(None, |a: Option<f64>, v| Some(a.map_or(v, |a| a.max(v))));
    // A longer run is another test, whichever way it moves the figures; a sustained run's
    // budget is longer by design, and judged by its own rule.
    let longer = stated.filter(|&found| found > w + 1e-9 && !sustained);
    let either = |found: f64| {
        Some(Deviation {
            field: "runtime",
            expected: secs(w),
            found: secs(found),
            effect: Effect::EitherWay,
        })
    };
    if !want.time_based
        && let Some(ended) = size_bounded(job, metrics, want)
    {
        return match (ended, measured) {
            // It wrote its whole size: whatever cap it stated, the policy's test ends so too
            // (its measured runtime counts the end fsync, so it cannot say the writes took
            // longer than the policy's cap).
            (Ended::AtSize, _) => None,
            // Its own runtime ended it: the policy's test does the same where that runtime is
            // the policy's; a longer one ran on past the policy's cap.
            (Ended::Short { .. }, Some(ms)) if ms / 1000.0 + runtime_slack_s(w) >= w => {
                longer.and_then(either)
            }
            (Ended::Short { moved, size }, ms) => deviation(
                secs(w),
                format!(
                    "{}ended after {} of its {}",
                    ms.map_or(String::new(), |ms| format!(
                        "{:.1} s (measured), ",
                        ms / 1000.0
                    )),
                    units::format_size(moved),
                    units::format_size(size)
                ),
            ),
        };
    }
    if let Some(found) = stated
        && found + 1e-9 < w
    {
        return deviation(secs(w), secs(found));
    }
    match measured {
        Some(ms)
            if (want.time_based || stated.is_none()) && ms / 1000.0 + runtime_slack_s(w) < w =>
        {
            deviation(secs(w), format!("{:.1} s (measured)", ms / 1000.0))
        }
        // A cap the job ended within (by its size), whatever cap it stated: the policy's test
        // ends the same way.
        Some(ms) if !want.time_based && ms / 1000.0 <= w + runtime_slack_s(w) => None,
        None if stated.is_none() => deviation(secs(w), format!("{NOT_STATED}, nor measured")),
        // Longer: only as stated, as fio's measured runtime counts the end fsync.
        _ => longer.and_then(either),
    }
}

/// How a run of a job that is not time-based ended, from the bytes it moved.
enum Ended {
    /// It wrote (or read) its whole size: it ran as long as its test takes.
    AtSize,
    /// It moved less: cut by a shorter runtime, or interrupted.
    Short { moved: u64, size: u64 },
}

/// A policy whose job is not time-based ends when each of its jobs has moved its file's size
/// (the job's stated size, else the policy's): its runtime is only a cap. Judged by the bytes
/// the run moved (its I/Os × its block size), whatever runtime it states or measured; fio
/// stops at the last whole block (`size=2m`, `bs=2300` moves 911 blocks, 2095300 bytes), so
/// one block short of the size per job is the whole size. None where the bytes are not known
/// (a variable block size, no I/O count).
fn size_bounded(job: &JobShape, metrics: &crate::metrics::Metrics, want: &Want) -> Option<Ended> {
    let bs = job.bs.filter(|&b| b > 0)?;
    let ios = ["write_ios", "read_ios"]
        .iter()
        .filter_map(|m| metrics.get(*m))
        .copied()
        .fold(None, |a: Option<f64>, v| Some(a.unwrap_or(0.0) + v))?;
    let jobs = u64::from(job.numjobs.unwrap_or(1).max(1));
    let size = job.size.unwrap_or(want.size);
    let moved = (ios.max(0.0) as u64).saturating_mul(bs);
    if moved.saturating_add(jobs.saturating_mul(bs)) > size.saturating_mul(jobs) {
        Some(Ended::AtSize)
    } else {
        Some(Ended::Short {
            moved,
            size: size.saturating_mul(jobs),
        })
    }
}

/// A run's check without its runtime, and where the runtime's deviation (and its caveat)
/// goes among its deviations (and caveats).
#[derive(Debug, Clone)]
struct Context {
    check: Check,
    deviation_at: usize,
    caveat_at: usize,
}

impl Context {
    /// The whole check, with the run's runtime deviation in its place.
    fn with(&self, runtime: Option<Deviation>) -> Checked {
        let mut check = self.check.clone();
        if let Some(d) = runtime {
            if d.is_unknown() {
                check.caveats.insert(
                    self.caveat_at,
                    format!(
                        "runtime not stated: how long the test ran (the policy's test runs {})",
                        d.expected
                    ),
                );
            }
            check.deviations.insert(self.deviation_at, d);
        }
        let list = list(&check.deviations);
        let class = class_list(&check.deviations);
        Checked { check, list, class }
    }
}

/// Checks one record against the policy's test. What it reads of a run beyond its context
/// is its measured runtime ([`runtime`]), as [`Checker`] does (which the commands use).
#[cfg(test)]
pub fn check(r: &impl RunFields, policy: &Policy) -> Check {
    let rt = runtime(r.job(), r.metrics(), &Want::of(policy), r.is_sustained());
    context_check(r, policy).with(rt).check
}

/// [`check`] of what a run shares with its context: all but its runtime.
fn context_check(r: &impl RunFields, policy: &Policy) -> Context {
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
                found.unwrap_or_else(|| NOT_STATED.into()),
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
        // Unknown: a smaller file could only flatter.
        (None, Some(w)) => {
            push(
                "size",
                units::format_size(w),
                NOT_STATED.into(),
                Effect::Flatters,
            );
            out.caveats.push(format!(
                "file size not stated: the size of the test file (the policy's test uses {})",
                units::format_size(w)
            ));
        }
        _ => {}
    }
    // The runtime is the run's own (its measured runtime): [`runtime`] puts it here.
    let deviation_at = out.deviations.len();
    let caveat_at = out.caveats.len();
    let mut push = |field: &'static str, expected: String, found: String, effect: Effect| {
        out.deviations.push(Deviation {
            field,
            expected,
            found,
            effect,
        })
    };
    if want.end_fsync == Some(true) {
        match job.end_fsync {
            Some(true) => {}
            Some(false) => push("end_fsync", "1".into(), "0".into(), Effect::Flatters),
            // Unknown: without it, writes still in the page cache were never counted.
            None => {
                push("end_fsync", "1".into(), NOT_STATED.into(), Effect::Flatters);
                out.caveats.push("end fsync not stated: the output does not show whether the job ended with an fsync, as the policy's test does".into());
            }
        }
    }
    if let Some(ramp) = job.ramp_time_s.filter(|&s| s > 0.0) {
        push("ramp_time", "none".into(), secs(ramp), Effect::Flatters);
    }
    if let Some(found) = in_ram(r) {
        push("target", "a disk".into(), found, Effect::Flatters);
    }
    Context {
        check: out,
        deviation_at,
        caveat_at,
    }
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

/// The deviations in one line, as [`list`], with what each run measures of its own left out
/// ([`Deviation::class`]): the line the runs left out for the same reason are counted under,
/// where a runtime each run measured apart would make a reason of each run.
pub fn class_list(d: &[Deviation]) -> String {
    d.iter().map(|d| d.class()).collect::<Vec<_>>().join("; ")
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
    fn a_device_in_ram_is_judged_from_the_record_on_any_machine() {
        let p = policy();
        let target = |device: &str, in_ram: Option<&str>| {
            let mut r = record(p.job.shape(), "posixaio");
            r.target.filesystem = Some("ext4".into());
            r.target.device = Some(device.into());
            r.target.in_ram = in_ram.map(str::to_string);
            check(&r, &p)
                .deviations
                .iter()
                .map(|d| (d.to_string(), d.effect))
                .collect::<Vec<_>>()
        };
        let flatters = |s: &str| vec![(format!("target {s} instead of a disk"), Effect::Flatters)];
        // as the run found it, whatever the device is called
        let why = "loop3 backed by a file on tmpfs (in RAM)";
        assert_eq!(target("loop3", Some(why)), flatters(why));
        // a record made before it was looked for: the kernel's RAM disks by name
        assert_eq!(
            target("zram0", None),
            flatters("zram0 (a compressed RAM disk)")
        );
        assert_eq!(
            target("/dev/ram2", None),
            flatters("/dev/ram2 (a RAM disk)")
        );
        for disk in [
            "sda1",
            "nvme0n1",
            "loop3",
            "dm-0",
            "pmem0",
            "/dev/ram",
            "server:/x",
        ] {
            assert_eq!(target(disk, None), vec![], "{disk}");
        }
    }

    #[test]
    fn what_an_output_does_not_state_is_unknown_and_could_only_flatter() {
        let p = policy();
        let mut job = p.job.shape();
        job.end_fsync = None;
        job.size = None;
        let c = check(&record(job, "fio/posixaio"), &p);
        let fields: Vec<_> = c.deviations.iter().map(|d| d.field).collect();
        assert_eq!(fields, vec!["size", "end_fsync"], "{:?}", c.deviations);
        assert!(c.deviations.iter().all(|d| d.is_unknown()));
        assert_eq!(c.effect(), Some(Effect::Flatters));
        assert_eq!(
            list(&c.deviations),
            "size not stated in the output, where the policy's test has size=4 GiB; \
             end_fsync not stated in the output, where the policy's test has end_fsync=1"
        );
        assert_eq!(
            c.deviations[0].headline(),
            "not shown to be the policy's test"
        );
        // each says what it is, for what would settle it
        assert_eq!(c.caveats.len(), 2, "{:?}", c.caveats);
        assert!(c.caveats[0].starts_with("file size not stated: "));
        assert!(c.caveats[1].starts_with("end fsync not stated"));
        // neither stated nor measured: the runtime too
        let mut job = p.job.shape();
        job.runtime_s = None;
        let c = check(&record(job, "fio/posixaio"), &p);
        assert_eq!(
            list(&c.deviations),
            "runtime not stated in the output, nor measured, where the policy's test has runtime=1m"
        );
        assert_eq!(c.deviations[0].effect, Effect::Flatters);
        let mut job = p.job.shape();
        job.bs = None;
        let c = check(&record(job, "fio/posixaio"), &p);
        assert_eq!(c.deviations[0].found, "not stated in the output");
        assert_eq!(c.deviations[0].effect, Effect::EitherWay);
        // job options not listed: a caveat alone (a limit can only lower the figures)
        let mut r = record(p.job.shape(), "fio/posixaio");
        r.source = crate::history::Source::Imported;
        r.job.limits = None;
        let c = check(&r, &p);
        assert!(c.is_policy_test(), "{:?}", c.deviations);
        assert!(
            c.caveats[0].starts_with("job options not stated"),
            "{:?}",
            c.caveats
        );
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
    fn a_measured_runtime_shorter_than_the_policys_flatters_whatever_the_job_states() {
        let p = policy();
        for stated in [None, Some(60.0), Some(120.0)] {
            let mut job = p.job.shape();
            job.runtime_s = stated;
            let mut r = record(job, "fio/posixaio");
            // fio 3.33 interrupted after 1.2 s; a job that ended by its size after 12 s
            for ms in [1245.0, 12000.0, 59400.0] {
                r.metrics.insert("write_runtime_ms".into(), ms);
                let c = check(&r, &p);
                assert_eq!(c.deviations.len(), 1, "{stated:?} {ms}: {:?}", c.deviations);
                assert_eq!(c.deviations[0].effect, Effect::Flatters);
                assert_eq!(
                    c.deviations[0].to_string(),
                    format!("runtime {:.1} s (measured) instead of 1m", ms / 1000.0)
                );
            }
            // what fio and the engine record of a full run of runtime=60 (a job that states
            // a longer runtime is another test: below)
            let full = |r: &Record| match stated {
                Some(s) if s > 60.0 => list(&check(r, &p).deviations) == "runtime 2m instead of 1m",
                _ => check(r, &p).is_policy_test(),
            };
            for ms in [59600.0, 60000.0, 60001.0, 60009.0] {
                r.metrics.insert("write_runtime_ms".into(), ms);
                assert!(full(&r), "{stated:?} {ms}");
            }
            // the longest direction is the run's
            r.metrics.insert("write_runtime_ms".into(), 100.0);
            r.metrics.insert("read_runtime_ms".into(), 60000.0);
            assert!(full(&r), "{stated:?}");
        }
        // a stated runtime shorter than the policy's is said as stated
        let mut job = p.job.shape();
        job.runtime_s = Some(3.0);
        let mut r = record(job, "fio/posixaio");
        r.metrics.insert("write_runtime_ms".into(), 3000.0);
        assert_eq!(list(&check(&r, &p).deviations), "runtime 3s instead of 1m");
    }

    #[test]
    fn a_stated_runtime_longer_than_the_policys_could_go_either_way() {
        let p = policy();
        let mut job = p.job.shape();
        job.runtime_s = Some(120.0);
        let mut r = record(job, "fio/posixaio");
        // measured or not, as stated: another test, never a verdict
        for measured in [None, Some(120004.0), Some(60000.0)] {
            match measured {
                Some(ms) => r.metrics.insert("write_runtime_ms".into(), ms),
                None => r.metrics.remove("write_runtime_ms"),
            };
            let c = check(&r, &p);
            assert_eq!(c.deviations.len(), 1, "{measured:?}: {:?}", c.deviations);
            let d = &c.deviations[0];
            assert_eq!(d.effect, Effect::EitherWay);
            assert_eq!(c.effect(), Some(Effect::EitherWay));
            assert_eq!(d.to_string(), "runtime 2m instead of 1m");
            assert_eq!(d.class(), "runtime 2m instead of 1m");
            assert_eq!(d.headline(), "not the policy's test");
            assert!(
                d.why().starts_with("a longer run is another test"),
                "{}",
                d.why()
            );
            assert!(c.caveats.is_empty(), "{:?}", c.caveats);
        }
        // cut short of the policy's runtime, whatever it stated: what it ran flatters
        r.metrics.insert("write_runtime_ms".into(), 1245.0);
        let c = check(&r, &p);
        assert_eq!(
            list(&c.deviations),
            "runtime 1.2 s (measured) instead of 1m"
        );
        assert_eq!(c.effect(), Some(Effect::Flatters));
        // the policy's runtime, as a float may state it
        r.job.runtime_s = Some(60.0 + 1e-12);
        r.metrics.insert("write_runtime_ms".into(), 60003.0);
        assert!(check(&r, &p).is_policy_test());
    }

    #[test]
    fn a_measured_runtime_longer_than_the_policys_is_its_end_fsync_not_another_test() {
        // fio's measured runtime counts the end fsync: a buffered run of runtime=60 measures
        // more, and so may one that states no runtime.
        let p = policy();
        for stated in [Some(60.0), None] {
            let mut job = p.job.shape();
            job.runtime_s = stated;
            let mut r = record(job, "fio/posixaio");
            for ms in [60500.0, 75000.0, 300000.0] {
                r.metrics.insert("write_runtime_ms".into(), ms);
                let c = check(&r, &p);
                assert!(c.is_policy_test(), "{stated:?} {ms}: {:?}", c.deviations);
            }
        }
    }

    #[test]
    fn a_sustained_run_is_longer_by_design_and_stays_the_policys_test() {
        // `run --sustained` records the job it ran: the policy's, time based, its runtime the
        // budget (config::run), and how it ended.
        let p = policy();
        let mut job = p.job.shape();
        job.runtime_s = Some(2400.0);
        job.time_based = Some(true);
        for reached in [true, false] {
            let mut r = record(job.clone(), "posixaio");
            r.sustained = Some(crate::record::SustainedRun {
                reached,
                how: "held steady".into(),
            });
            r.metrics.insert("write_runtime_ms".into(), 312000.0);
            let c = check(&r, &p);
            assert!(c.is_policy_test(), "{reached}: {:?}", c.deviations);
            let run = Run::of(&r, 0);
            assert!(Checker::new(&p).check(&run).check.is_policy_test());
            // never shorter than the policy's test: one cut short still flatters
            r.metrics.insert("write_runtime_ms".into(), 1245.0);
            let run = Run::of(&r, 0);
            assert_eq!(
                Checker::new(&p).check(&run).list,
                "runtime 1.2 s (measured) instead of 1m"
            );
        }
        // the same job without the record of a sustained run: another test
        let mut r = record(job, "posixaio");
        r.metrics.insert("write_runtime_ms".into(), 312000.0);
        let run = Run::of(&r, 0);
        assert_eq!(
            Checker::new(&p).check(&run).list,
            "runtime 40m instead of 1m"
        );
    }

    #[test]
    fn a_longer_cap_on_a_job_that_ends_by_its_size_is_the_same_test() {
        // The policy's job is not time-based: its runtime caps a job that writes its size.
        let mut p = policy();
        p.job.time_based = false;
        p.job.size = crate::job::Size(64 << 20);
        let mut job = p.job.shape();
        job.runtime_s = Some(120.0);
        let mut r = record(job, "fio/posixaio");
        let ios = |r: &mut Record, ios: Option<f64>, ms: Option<f64>| {
            r.metrics.clear();
            if let Some(n) = ios {
                r.metrics.insert("write_ios".into(), n);
            }
            if let Some(ms) = ms {
                r.metrics.insert("write_runtime_ms".into(), ms);
            }
        };
        // it wrote its 64 MiB (16384 blocks): the policy's cap would not have stopped it
        ios(&mut r, Some(16384.0), Some(90000.0));
        assert!(check(&r, &p).is_policy_test());
        // bytes unknown: it ended within the policy's cap
        ios(&mut r, None, Some(12000.0));
        assert!(check(&r, &p).is_policy_test());
        // its own longer cap ended it after the policy's would have: another test
        ios(&mut r, Some(9000.0), Some(120000.0));
        assert_eq!(list(&check(&r, &p).deviations), "runtime 2m instead of 1m");
        assert_eq!(check(&r, &p).effect(), Some(Effect::EitherWay));
        // bytes unknown, past the policy's cap, or not measured: not shown to be the same
        for ms in [Some(90000.0), None] {
            ios(&mut r, None, ms);
            assert_eq!(
                list(&check(&r, &p).deviations),
                "runtime 2m instead of 1m",
                "{ms:?}"
            );
        }
        // cut short by something else: flatters, as before
        ios(&mut r, Some(9000.0), Some(12000.0));
        assert_eq!(check(&r, &p).effect(), Some(Effect::Flatters));
    }

    #[test]
    fn the_slack_keeps_full_runs_of_short_policies_and_catches_their_cut_ones() {
        assert_eq!(runtime_slack_s(60.0), 0.5);
        assert_eq!(runtime_slack_s(1.0), 0.05);
        let mut p = policy();
        p.job.runtime = crate::job::Secs(Duration::from_secs(2));
        let mut r = record(p.job.shape(), "fio/posixaio");
        // fio 3.33's runtime=2 runs record 2001–2009 ms; one cut at 1.2 s, or at 1.6 s
        for (ms, full) in [
            (2001.0, true),
            (2009.0, true),
            (1245.0, false),
            (1600.0, false),
        ] {
            r.metrics.insert("write_runtime_ms".into(), ms);
            assert_eq!(check(&r, &p).is_policy_test(), full, "{ms}");
        }
    }

    #[test]
    fn a_job_capped_by_its_runtime_may_end_sooner_by_its_size() {
        // A policy whose job is not time-based ends when it has written its size: a shorter
        // measured runtime is its own test where the job states the policy's runtime.
        let mut p = policy();
        p.job.time_based = false;
        let mut r = record(p.job.shape(), "fio/posixaio");
        r.metrics.insert("write_runtime_ms".into(), 12000.0);
        assert!(check(&r, &p).is_policy_test());
    }

    #[test]
    fn the_checker_says_what_check_says_of_every_run_of_a_history() {
        // Runs read from a history share their context; each is judged by its measured
        // runtime, whatever its context states.
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
            (Some(60.0), 1245.0, 4 << 30),
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
            // a figure judging does not read: not held by a long window's runs
            r.metrics.insert("cpu_sys_pct".into(), 1.0);
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
            Arc::ptr_eq(runs[0].context(), runs[1].context())
                && Arc::ptr_eq(runs[6].context(), runs[8].context()),
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
        for i in [1, 3, 6, 8] {
            assert_eq!(lists[i], "", "run {i}");
        }
        assert!(
            lists[0].starts_with("runtime 3.0 s (measured) instead of "),
            "{lists:?}"
        );
        assert!(
            lists[7].starts_with("runtime 1.2 s (measured) instead of "),
            "{lists:?}"
        );
        assert!(
            lists[2].starts_with("runtime 3.0 s (measured) instead of "),
            "{lists:?}"
        );
        assert!(
            lists[4].starts_with("runtime 2.0 s (measured) instead of "),
            "{lists:?}"
        );
        assert_eq!(lists[5], "size 64 MiB instead of 4 GiB");
        // A long window's runs hold only the figures judging reads: the runtimes among them.
        let held = crate::evaluate::held_metrics(&p);
        let run = runs[7].clone().holding(held);
        assert!(!run.holds_all());
        assert_eq!(checker.check(&run).list, lists[7]);
    }
}
