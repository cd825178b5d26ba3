//! `iopscheck run`: the policy's test, several times, on a directory. Each run is recorded in
//! the history as soon as it completes; the verdict is over this invocation's runs.
//!
//! Orchestration only: the engine runs on its own OS thread; a current-thread tokio runtime
//! waits for it while handling signals (signals.rs), the progress ticker and the waits between runs.

use std::collections::BTreeMap;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::Context as _;
use chrono::{DateTime, FixedOffset, Local, Utc};

use crate::app::{Ctx, usage};
use crate::cli::{EngineRequest, RunArgs};
use crate::config::RunConfig;
use crate::engine::{self, Backend, EngineError, EngineUsed, Live, Phase};
use crate::error::RunError;
use crate::evaluate::{self, Group, Options, Scope, SustainedCheck, Warning};
use crate::history::{self, Record, Source, Target};
use crate::job::Job;
use crate::measure::Measurement;
use crate::policy::Policy;
use crate::record::RunInfo;
use crate::run_index::Records;
use crate::testfile::{self, TestFiles};
use crate::units;

use super::lock::HostLock;
use super::signals::{self, Signals};

/// The `--engine` request resolved for this invocation: the back end `auto` chose, or the fio
/// binary found. Its records name it as an [`EngineUsed`].
#[derive(Debug, Clone)]
enum Runner {
    Native(Backend),
    Fio(PathBuf),
}

impl Runner {
    /// What a record says ran `job`.
    fn used(&self, job: &Job) -> EngineUsed {
        match self {
            Runner::Native(b) => EngineUsed::Native(*b),
            Runner::Fio(_) => EngineUsed::Fio(Some(job.ioengine.clone())),
        }
    }
}

/// The signal that ended the invocation (see signals.rs).
#[derive(Debug, Clone, Copy, PartialEq)]
struct Stop(i32);

impl Stop {
    fn code(self) -> u8 {
        signals::exit_code(self.0)
    }
}

pub fn run(args: RunArgs, ctx: &Ctx) -> anyhow::Result<u8> {
    // Raw devices, read-only: their own flow (run_devices.rs).
    if !args.device.is_empty() {
        return super::run_devices::run(args, ctx);
    }
    let cfg = RunConfig::try_from(args)?;
    super::run_devices::needs_devices(&cfg.declared)?;
    // The policy as written judges the runs; `policy` is what this invocation runs (with
    // --size or --runtime applied), which is never the yardstick.
    let RunConfig {
        declared: declared_policy,
        policy,
        mut overrides,
        runs,
        interval,
        engine,
        dir,
        history: history_path,
        wait,
        host,
        outputs,
        strict,
        sustained,
        until,
        recheck,
    } = cfg;
    let declared = &declared_policy.job;

    // Decide the engine before anything touches the disk.
    let mut notes: Vec<Warning> = Vec::new();
    let mut engine_note: Option<String> = None;
    let runner = choose_runner(engine, &policy, &mut engine_note)?;
    if let Some(n) = &engine_note {
        ctx.warn(n);
        notes.push(Warning::Note(n.clone()));
    }
    // Recorded as an override; whether the engine is the policy's to accept, and whether a
    // smaller or shorter test flatters, is judged from each record (crate::deviation).
    if engine != EngineRequest::Auto && engine.name() != declared.ioengine.as_str() {
        overrides.insert("engine".into(), engine.name().to_string());
    }

    // --recheck-every: a decision that stands, with its newest run younger than the period,
    // is reported as it stands, and nothing is tested.
    if let (Some(settings), Some(every), Some(p)) = (until, recheck, &history_path)
        && let Ok(canonical) = std::fs::canonicalize(&dir)
    {
        let group = Group {
            host: host.clone(),
            policy: policy.name.clone(),
            dir: canonical.display().to_string(),
            engine: runner.used(&policy.job).to_string(),
        };
        let now = Utc::now();
        let (mut ev, held) = group_sequence(p, &group, &declared_policy, &settings, strict, now)?;
        if let Some(due) = recheck_due(&ev, every)
            && now < due
        {
            let line = standing_line(&ev, due, every);
            crate::out::err_line(format_args!("iopscheck: {line}"));
            ev.warnings.splice(0..0, notes.iter().cloned());
            ev.warnings.push(Warning::Note(line));
            outputs.emit(&ev, &held, ctx)?;
            crate::out::finish_stdout();
            return Ok(ev.verdict.exit_code());
        }
    }

    if let Some(p) = &history_path {
        history::prepare(p, records_bytes(&policy.job, runs))?;
    }

    let total_bytes = policy.job.size.0 * u64::from(policy.job.numjobs);
    let dir = testfile::preflight(&dir, total_bytes)?;

    let _lock = HostLock::acquire(wait, ctx)?;

    // Said before anything is written: the end of the run will be slow, not stuck.
    let discard = crate::machine::discards(&dir);
    // Only where the removal is slow enough to say at once after the verdict (a quick look's
    // few MiB are freed in a moment).
    if let Some(mount) = discard.as_ref().filter(|_| total_bytes >= DISCARD_SLOW) {
        ctx.note(crate::terminal::wrap(
            "",
            &format!(
                "{} is mounted with discard: removing the test file at the end trims its blocks, which takes minutes for gigabytes; the verdict is printed first",
                mount.display()
            ),
            crate::terminal::stderr_width(),
        ));
    }
    let discard = discard.is_some();

    let stale = {
        let dir = dir.clone();
        testfile::when_slow(
            REMOVAL_SILENT,
            || {
                ctx.note("removing test files left by an interrupted run: the filesystem is freeing their blocks, which can take minutes on a disk mounted with discard")
            },
            move || testfile::remove_stale(&dir),
        )
    };
    for s in stale {
        ctx.warn(format!(
            "removed a test file left by an interrupted run: {} ({})",
            s.path.display(),
            units::format_size(s.bytes)
        ));
    }

    if sustained.is_some() {
        if matches!(runner, Runner::Fio(_)) {
            return Err(usage(
                "--sustained: needs the native engine, which samples the disk as it runs (not --engine fio)",
            ));
        }
        if crate::measure::disk::disks_under(&dir).is_empty() {
            return Err(usage(format!(
                "--sustained: {} is on no disk that /proc/diskstats counts (tmpfs, overlay or a network filesystem): the level a disk sustains is read from its own series",
                dir.display()
            )));
        }
    }
    let target = crate::machine::target_of(&dir);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the runtime")?;
    let plan = Plan {
        job: policy.job.clone(),
        runner,
        runs,
        interval,
        dir: dir.clone(),
        target,
        engine_note,
        overrides,
        policy_name: policy.name.clone(),
        deciding: policy.deciding_rules().next().map(|r| r.metric.clone()),
        verbose: outputs.verbose,
        history: history_path.clone(),
        invocation: invocation_id(),
        host,
        sustained: sustained.map(|b| (b, declared.runtime.0)),
        until: until.map(|s| (declared_policy.clone(), s)),
    };
    let outcome = rt.block_on(execute(&plan, ctx));
    // The test files are gone and the runs recorded: from here a signal may end the process
    // the default way (a report stuck on a stalled pipe must still yield to ^C or a hangup).
    drop(rt);
    signals::restore_defaults();
    let outcome = outcome?;
    let (records, check, unlinked) = match outcome {
        Ended::Done(r, c, u) => (r, c, u),
        Ended::Stopped(stop, done) => {
            crate::out::err_line(format_args!(
                "iopscheck: interrupted by {}: the test file was removed; {} completed run{} kept in the history",
                signals::name(stop.0),
                done,
                if done == 1 { "" } else { "s" }
            ));
            return Ok(stop.code());
        }
    };

    let now = Utc::now();
    let mut opts = Options::new(Scope::Run, now);
    opts.strict = strict;
    opts.notes = notes;
    // Without a history, the policy's evidence over days is this sitting's runs of its test.
    let sitting = history_path.is_none().then(|| {
        evaluate::evaluate(
            records.clone(),
            &declared_policy,
            &Options::new(Scope::Report, now),
        )
        .evidence
    });
    opts.sustained_check = check;
    let (mut ev, mut records) =
        evaluate::evaluate_left_out(records, Vec::new(), &declared_policy, &opts);
    ev.group = ev.runs.first().map(Group::of);
    if let Some(e) = sitting {
        ev.evidence = e;
    }
    // --until-decided: the verdict is the sequence's, over the group's runs in the history.
    if let (Some(settings), Some(p), Some(g)) = (until, &history_path, ev.group.clone()) {
        match group_sequence(p, &g, &declared_policy, &settings, strict, now) {
            Ok((mut h, held)) => {
                h.warnings.splice(0..0, opts.notes.iter().cloned());
                ev = h;
                records = held;
            }
            Err(e) => ctx.warn(e),
        }
        outputs.emit(&ev, &records, ctx)?;
        crate::out::finish_stdout();
        release_files(unlinked, discard, ctx);
        return Ok(ev.verdict.exit_code());
    }

    // Where the history stands against the evidence rule, for this node and test.
    if let Some(p) = &history_path {
        let since = crate::select::window_start(now, policy.evidence.window.0);
        // This group's runs only: its host, policy, directory and engine.
        let filter = ev
            .group
            .as_ref()
            .map(|g| crate::select::Filter::group(g, since));
        let mut in_group: Vec<Record> = Vec::new();
        let read = history::scan(
            p,
            Some(since),
            |h| {
                filter
                    .as_ref()
                    .is_some_and(|f| f.keeps_head(h) && f.engine.as_ref() == Some(&h.engine))
            },
            |r| {
                if filter.as_ref().is_some_and(|f| f.keeps(&r)) {
                    in_group.push(r)
                }
            },
        );
        match read {
            Ok(skipped) => {
                // Lines of the window that are no run of this group's are named, as every
                // reader of a history names them.
                for w in history::skipped_warnings(&skipped) {
                    ctx.warn(w);
                }
                let h = evaluate::evaluate(
                    in_group,
                    &declared_policy,
                    &Options::new(Scope::Report, now),
                );
                ev.evidence = h.evidence;
            }
            Err(e) => ctx.warn(e),
        }
    }
    outputs.emit(&ev, &records, ctx)?;
    // The verdict is out before the test file's blocks are freed, which can take minutes: a
    // reader of stdout has all of it now (EOF), and the removal goes on after it.
    crate::out::finish_stdout();
    release_files(unlinked, discard, ctx);
    Ok(ev.verdict.exit_code())
}

/// Test files this large, on a disk mounted with `discard`, take long enough to free that the
/// removal is said at once.
const DISCARD_SLOW: u64 = 256 << 20;

/// Frees the (already unlinked) test files after the verdict: at once for large files on a
/// disk mounted with `discard`, else past [`removal_silent`], a line on stderr says the
/// removal is under way, then how long it took.
fn release_files(files: testfile::Unlinked, discard: bool, ctx: &Ctx) {
    let (bytes, count) = (files.bytes(), files.count());
    let after = if discard && bytes >= DISCARD_SLOW {
        Duration::ZERO
    } else {
        removal_silent()
    };
    let started = Instant::now();
    let mut said = false;
    files.close_when_slow(after, || {
        said = true;
        ctx.note(format!(
            "{} (the verdict is already out)",
            removal_line(count, bytes)
        ));
    });
    if said {
        ctx.note(format!("removed in {}", clock(started.elapsed())));
    }
}

/// Room the history needs for `runs` records of `job`, generously: a record is under 2 KiB
/// plus its series of IOPS samples (two a second, reads and writes, a few bytes each).
fn records_bytes(job: &Job, runs: u32) -> u64 {
    let per_run = 8192 + 32 * job.runtime.0.as_secs();
    per_run * u64::from(runs)
}

/// The group's runs in the history over the policy's window, judged as `report
/// --until-decided` judges them.
fn group_sequence(
    path: &Path,
    group: &Group,
    policy: &Policy,
    settings: &evaluate::sequential::Settings,
    strict: bool,
    now: DateTime<Utc>,
) -> anyhow::Result<(evaluate::Evaluation, Records)> {
    let since = crate::select::window_start(now, policy.evidence.window.0);
    let filter = crate::select::Filter::group(group, since);
    let (all, _) = history::read_where(path, |h| {
        filter.keeps_head(h) && filter.engine.as_ref() == Some(&h.engine)
    })?;
    let in_group: Vec<Record> = all.into_iter().filter(|r| filter.keeps(r)).collect();
    let mut opts = Options::new(Scope::Report, now);
    opts.strict = strict;
    let (mut ev, records) = evaluate::evaluate_left_out(in_group, Vec::new(), policy, &opts);
    ev.group = Some(group.clone());
    evaluate::sequential::apply(&mut ev, policy, settings);
    Ok((ev, records))
}

/// When the group's next re-check is due, where its sequence has ended (every deciding rule's,
/// by a decision, at the threshold or at the budget): `every` after its newest run, the
/// decision or the latest re-check. None while the sequence goes on, or where a figure was
/// not positive (nothing was decided: test again).
fn recheck_due(ev: &evaluate::Evaluation, every: Duration) -> Option<DateTime<Utc>> {
    use evaluate::sequential::Outcome;
    let ended = !ev.sequential.is_empty()
        && ev
            .sequential
            .iter()
            .all(|d| d.sequence.outcome.ended() && d.sequence.outcome != Outcome::NotPositive);
    if !ended {
        return None;
    }
    let newest = ev.runs.iter().map(|r| r.timestamp).max()?;
    Some(newest.with_timezone(&Utc) + chrono::Duration::from_std(every).ok()?)
}

/// "no test run: the sequence ended pass at the run of …; next re-check due …".
fn standing_line(ev: &evaluate::Evaluation, due: DateTime<Utc>, every: Duration) -> String {
    let outcomes: Vec<&str> = ev
        .sequential
        .iter()
        .map(|d| d.sequence.outcome.as_str())
        .collect();
    let at = ev
        .sequential
        .iter()
        .filter_map(|d| d.sequence.decided_at)
        .max()
        .map(|t| {
            format!(
                " at the run of {}",
                t.with_timezone(&Utc).format("%Y-%m-%d %H:%M UTC")
            )
        })
        .unwrap_or_default();
    format!(
        "no test run: this node's sequence ended {}{at} and stands; next re-check due {} (--recheck-every {})",
        outcomes.join(", "),
        due.format("%Y-%m-%d %H:%M UTC"),
        units::format_duration(every)
    )
}

/// Everything decided before the first byte is written.
struct Plan {
    job: Job,
    runner: Runner,
    runs: u32,
    interval: Duration,
    dir: PathBuf,
    target: Target,
    engine_note: Option<String>,
    overrides: BTreeMap<String, String>,
    policy_name: String,
    /// The metric of the policy's first deciding rule: the figure each run's line leads with,
    /// as the runs table shows it.
    deciding: Option<String>,
    /// `--verbose`: each run's internals on stderr too.
    verbose: bool,
    history: Option<PathBuf>,
    invocation: String,
    /// The node's name every record carries.
    host: String,
    /// `--sustained`: the budget of its one run, and the policy's own runtime, which it runs
    /// at least.
    sustained: Option<(Duration, Duration)>,
    /// `--until-decided`: the policy as written and the sequence's settings; the runs stop
    /// once the group's sequence has ended.
    until: Option<(Policy, evaluate::sequential::Settings)>,
}

enum Ended {
    /// The runs' records, and the test files, unlinked already, to be freed after the verdict.
    Done(Vec<Record>, Option<SustainedCheck>, testfile::Unlinked),
    Stopped(Stop, usize),
}

fn choose_runner(
    request: EngineRequest,
    policy: &Policy,
    note: &mut Option<String>,
) -> anyhow::Result<Runner> {
    let backend = match request {
        EngineRequest::Fio => return find_fio().map(Runner::Fio),
        EngineRequest::Native(Backend::IoUring) => {
            engine::probe_io_uring()
                .map_err(|reason| usage(format!("--engine io_uring: {reason}")))?;
            Backend::IoUring
        }
        EngineRequest::Native(b) => b,
        EngineRequest::Auto => {
            let Some(b) = Backend::for_engine(&policy.job.ioengine) else {
                return Err(usage(format!(
                    "policy {}: ioengine {} is not one iopscheck runs itself; use --engine fio to run it with fio",
                    policy.name, policy.job.ioengine
                )));
            };
            if b == Backend::IoUring
                && let Err(reason) = engine::probe_io_uring()
            {
                *note = Some(format!(
                    "io_uring is not usable here ({reason}); fell back to posixaio"
                ));
                Backend::Posixaio
            } else {
                b
            }
        }
    };
    Ok(Runner::Native(backend))
}

/// The installed fio: $IOPSCHECK_FIO, else `fio` on PATH.
fn find_fio() -> anyhow::Result<PathBuf> {
    if let Some(p) = std::env::var_os("IOPSCHECK_FIO").filter(|v| !v.is_empty()) {
        return Ok(PathBuf::from(p));
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    for dir in std::env::split_paths(&path) {
        let p = dir.join("fio");
        if p.is_file() {
            return Ok(p);
        }
    }
    Err(usage(
        "--engine fio: fio is not installed (apt-get install fio, dnf install fio); or use the built-in engine with --engine auto",
    ))
}

fn invocation_id() -> String {
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    format!("{:x}-{:x}", t.as_secs(), std::process::id())
}

async fn execute(plan: &Plan, ctx: &Ctx) -> anyhow::Result<Ended> {
    let mut sigs = Signals::watch()?;
    let progress = Progress::new(ctx, plan);
    let files =
        TestFiles::create(&plan.dir, plan.job.numjobs).map_err(|e| create_error(&plan.dir, e))?;
    let ended = lay_out_and_run(plan, ctx, &files, &mut sigs, &progress).await;
    progress.clear();
    let ended = match ended {
        // All done: the names go now, the blocks after the verdict (`release_files`).
        Ok(Done::All(records, check)) => {
            let unlinked = files.unlink().context("cannot remove the test file")?;
            return Ok(Ended::Done(records, check, unlinked));
        }
        Ok(Done::Stopped(s, n)) => Ok(Ended::Stopped(s, n)),
        Err(e) => Err(e),
    };
    // However else the runs ended (an error, a signal), the files are removed here, and the
    // terminal is told when that is slow. After a signal while the engine wrote they are
    // unlinked already and a detached child holds their descriptors (`drive`): quick here.
    // What stopped the runs is what the user is told; a file left behind is worth a word.
    if let Err(e) = remove_files(files, ctx) {
        ctx.warn(format!("{e:#}"));
    }
    ended
}

/// How the runs on the test files ended.
enum Done {
    All(Vec<Record>, Option<SustainedCheck>),
    Stopped(Stop, usize),
}

/// Lays out the test files and runs the test on them, recording each run as it completes.
async fn lay_out_and_run(
    plan: &Plan,
    ctx: &Ctx,
    files: &TestFiles,
    sigs: &mut Signals,
    progress: &Progress,
) -> anyhow::Result<Done> {
    let cancel = Arc::new(AtomicBool::new(false));
    let live = Arc::new(Live::default());

    // Layout once per invocation; its runs reuse the files.
    let handles = files.handles()?;
    for f in &handles {
        engine::check_open_flags(f, &plan.job).map_err(|e| engine_error(e, &plan.dir))?;
    }
    let layout = {
        let (job, live, cancel) = (plan.job.clone(), live.clone(), cancel.clone());
        move || -> Result<(), EngineError> {
            for f in &handles {
                engine::layout(f, &job, &live, &cancel)?;
            }
            Ok(())
        }
    };
    ctx.note(crate::terminal::wrap(
        "",
        &progress.estimate_line(),
        crate::terminal::stderr_width(),
    ));
    // A disk whose provider documents burst credits: say so before the runs.
    for name in crate::measure::disk::disks_under(&plan.dir) {
        if let Some(c) = crate::disk_class::classify(Path::new("/sys"), &name).burst_caveat() {
            ctx.note(crate::terminal::wrap(
                "note: ",
                &format!(
                    "{c}. A test of minutes spends little of such a bucket: it measures the burst, not the rate the disk keeps up (docs/sustained.md)."
                ),
                crate::terminal::stderr_width(),
            ));
        }
    }
    progress.start(0, "laying out");
    match drive(spawn_engine(layout), &live, &cancel, progress, sigs, 0).await {
        Driven::Done(Ok(())) => {}
        Driven::Done(Err(e)) => return Err(engine_error(e, &plan.dir)),
        Driven::Stopped(s) => return Ok(Done::Stopped(s, 0)),
    }

    // The disks under the target, for fio's `Disk stats` of native runs.
    let disks = crate::measure::disk::disks_under(&plan.dir);
    let mut records = Vec::new();
    let mut check = None;
    for i in 0..plan.runs {
        if i > 0 && !plan.interval.is_zero() {
            progress.waiting(plan.interval);
            tokio::select! {
                _ = tokio::time::sleep(plan.interval) => {}
                sig = sigs.recv() => return Ok(Done::Stopped(Stop(sig), records.len())),
            }
        }
        let started: DateTime<FixedOffset> = Local::now().fixed_offset();
        live.ios.store(0, Ordering::Relaxed);
        live.set_phase(Phase::Idle);
        progress.start(i + 1, "running");
        let result = match &plan.runner {
            Runner::Native(backend) => {
                let (job, live2, cancel2, handles, backend) = (
                    plan.job.clone(),
                    live.clone(),
                    cancel.clone(),
                    files.handles()?,
                    *backend,
                );
                let disks = disks.clone();
                let watcher = plan
                    .sustained
                    .zip(disks.first())
                    .map(|((budget, least), d)| {
                        super::sustained::Watcher::spawn(
                            d.clone(),
                            live.clone(),
                            !plan.job.direct,
                            budget,
                            least,
                        )
                    });
                let work = move || {
                    let before = crate::measure::disk::snapshot(&disks);
                    // The device's own series is the disk the filesystem is on.
                    let device = disks.first().map(String::as_str);
                    let mut m = engine::run(&job, &handles, backend, &live2, &cancel2, device)?;
                    if let (Some(b), Some(a)) = (before, crate::measure::disk::snapshot(&disks)) {
                        m.disk = crate::measure::disk::delta(&b, &a);
                    }
                    Ok(m)
                };
                let driven = drive(spawn_engine(work), &live, &cancel, progress, sigs, i + 1).await;
                if let Some(w) = watcher {
                    check = Some(w.finish());
                }
                match driven {
                    Driven::Done(r) => r.map(|m| (m, None)).map_err(|e| engine_error(e, &plan.dir)),
                    Driven::Stopped(s) => return Ok(Done::Stopped(s, records.len())),
                }
            }
            Runner::Fio(fio) => {
                match super::fio_runner::run_fio(fio, &plan.job, files, sigs, progress).await {
                    Ok(super::fio_runner::FioRun::Done(m, version)) => Ok((*m, version)),
                    Ok(super::fio_runner::FioRun::Stopped(sig)) => {
                        return Ok(Done::Stopped(Stop(sig), records.len()));
                    }
                    Err(e) => Err(e),
                }
            }
        };
        progress.clear();
        progress.finished_run();
        let (measurement, fio_version) = result?;
        let mut record = make_record(plan, started, &measurement, fio_version);
        record.sustained = check.as_ref().map(|c| match c {
            SustainedCheck::Reached(how) => crate::record::SustainedRun {
                reached: true,
                how: how.clone(),
            },
            SustainedCheck::NotReached(why) => crate::record::SustainedRun {
                reached: false,
                how: why.clone(),
            },
        });
        if let Some(p) = &plan.history {
            history::append(p, std::slice::from_ref(&record))
                .with_context(|| "the run completed but could not be recorded")?;
        }
        if let Some(line) = run_line(i + 1, plan.runs, &record, plan.deciding.as_deref()) {
            ctx.note(crate::terminal::wrap(
                "",
                &line,
                crate::terminal::stderr_width(),
            ));
        }
        // What limited the disk, from the disk's own series beside the run's (native runs):
        // one of the run's internals, said with --verbose.
        if let Some(s) = crate::measure::limits::sentence(&measurement, !plan.job.direct)
            .filter(|_| plan.verbose)
        {
            ctx.note(crate::terminal::wrap(
                "  ",
                &s,
                crate::terminal::stderr_width(),
            ));
        }
        let group = Group::of(&record);
        records.push(record);
        if let (Some((policy, settings)), Some(p)) = (&plan.until, &plan.history) {
            let (ev, _) = group_sequence(p, &group, policy, settings, false, Utc::now())?;
            let ended = ev.sequential.iter().all(|d| d.sequence.outcome.ended())
                && !ev.sequential.is_empty();
            let line = ev
                .sequential
                .first()
                .map(|d| {
                    format!(
                        "  sequence: {} ({})",
                        d.sequence.outcome.as_str(),
                        d.figures()
                    )
                })
                .unwrap_or_else(|| format!("  sequence: {}", ev.reason));
            ctx.note(crate::terminal::wrap(
                "",
                &line,
                crate::terminal::stderr_width(),
            ));
            if ev.sequential.is_empty() || ended || ev.verdict == evaluate::Verdict::Fail {
                break;
            }
        }
    }
    Ok(Done::All(records, check))
}

/// How long removing the test files may take before the terminal says what is happening.
const REMOVAL_SILENT: Duration = Duration::from_secs(1);

/// How long removing this run's test files may take before the terminal says so:
/// `$IOPSCHECK_REMOVAL_NOTE_AFTER` (a duration; 0 says it at once), else [`REMOVAL_SILENT`].
/// Not for the files left by an interrupted run: at 0, its note would name files that may
/// not be there.
fn removal_silent() -> Duration {
    std::env::var("IOPSCHECK_REMOVAL_NOTE_AFTER")
        .ok()
        .and_then(|v| units::parse_duration(&v).ok())
        .unwrap_or(REMOVAL_SILENT)
}

/// Removes the test files, however the runs ended, saying so on stderr when it takes longer
/// than [`removal_silent`] (freeing a large file's blocks on a disk mounted with `discard`
/// can take minutes), and how long it took.
fn remove_files(files: TestFiles, ctx: &Ctx) -> anyhow::Result<()> {
    let (bytes, count) = (files.bytes(), files.files().len());
    let started = Instant::now();
    let mut said = false;
    files
        .remove_when_slow(removal_silent(), || {
            said = true;
            ctx.note(removal_line(count, bytes));
        })
        .context("cannot remove the test file")?;
    if said {
        ctx.note(format!("removed in {}", clock(started.elapsed())));
    }
    Ok(())
}

/// What the terminal says while the test files are being removed.
fn removal_line(count: usize, bytes: u64) -> String {
    format!(
        "removing the test file{} ({}): the filesystem is freeing its blocks, which can take minutes on a disk mounted with discard",
        if count == 1 { "" } else { "s" },
        units::format_size(bytes)
    )
}

/// "run 1/3: write_iops_formula 19001 IOPS (fio's IOPS=18121), 77.8 MB/s, 60.0 s" (the
/// engine is in the group line under the runs): the policy's deciding figure first, named and rounded as the runs table shows
/// it, then fio's own IOPS figure labelled as such, so the two never look like one figure that
/// changed.
fn run_line(i: u32, n: u32, r: &Record, deciding: Option<&str>) -> Option<String> {
    let m = &r.metrics;
    let (dir, iops) = if let Some(v) = m.get("write_iops") {
        ("write", *v)
    } else {
        ("read", *m.get("read_iops")?)
    };
    let mbs = m.get(&format!("{dir}_bw_mb_s")).copied().unwrap_or(0.0);
    let rt = m.get(&format!("{dir}_runtime_ms")).copied().unwrap_or(0.0);
    let fio = crate::report::fmt_value(iops);
    let head = match deciding.and_then(|d| m.get(d).map(|v| (d, *v))) {
        Some((d, v)) if d != format!("{dir}_iops") => {
            let unit = crate::metrics::unit(d);
            let unit = if unit.is_empty() {
                String::new()
            } else {
                format!(" {unit}")
            };
            format!(
                "{d} {}{unit} (fio's IOPS={fio})",
                crate::report::fmt_value(v)
            )
        }
        _ => format!("{dir} {fio} IOPS"),
    };
    Some(format!(
        "run {i}/{n}: {head}, {mbs:.1} MB/s, {:.1} s",
        rt / 1000.0,
    ))
}

fn make_record(
    plan: &Plan,
    started: DateTime<FixedOffset>,
    m: &Measurement,
    fio_version: Option<String>,
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
    record
}

fn create_error(dir: &Path, e: std::io::Error) -> anyhow::Error {
    let why = match e.raw_os_error() {
        Some(libc::EACCES) | Some(libc::EPERM) => {
            "permission denied creating the test file".to_string()
        }
        Some(libc::EROFS) => "read-only filesystem".to_string(),
        Some(libc::ENOSPC) => "no space left for the test file".to_string(),
        _ => format!("cannot create the test file: {e}"),
    };
    RunError::TestFile {
        dir: dir.display().to_string(),
        why,
    }
    .into()
}

fn engine_error(e: EngineError, dir: &Path) -> anyhow::Error {
    let dir = dir.display().to_string();
    match e.raw_os_error() {
        Some(libc::ENOSPC) | Some(libc::EDQUOT) => RunError::DiskFull { dir, source: e },
        _ => RunError::Engine { dir, source: e },
    }
    .into()
}

type EngineResult<T> = Result<T, EngineError>;

fn spawn_engine<T: Send + 'static>(
    work: impl FnOnce() -> EngineResult<T> + Send + 'static,
) -> tokio::sync::oneshot::Receiver<EngineResult<T>> {
    let (tx, rx) = tokio::sync::oneshot::channel();
    std::thread::Builder::new()
        .name("iopscheck-io".into())
        .spawn(move || {
            let _ = tx.send(work());
        })
        .expect("cannot start the I/O thread");
    rx
}

enum Driven<T> {
    Done(EngineResult<T>),
    Stopped(Stop),
}

/// Waits for the engine thread, updating progress and answering signals: on a signal the test
/// files are removed at once, the engine is told to stop, and we give it a moment to drain.
async fn drive<T>(
    mut rx: tokio::sync::oneshot::Receiver<EngineResult<T>>,
    live: &Live,
    cancel: &AtomicBool,
    progress: &Progress,
    sigs: &mut Signals,
    run: u32,
) -> Driven<T> {
    let mut tick = tokio::time::interval(Duration::from_millis(250));
    let started = Instant::now();
    loop {
        let stop = tokio::select! {
            r = &mut rx => return Driven::Done(r.unwrap_or(Err(EngineError::Interrupted))),
            _ = tick.tick() => { progress.update(run, live, started); continue; }
            sig = sigs.recv() => Stop(sig),
        };
        cancel.store(true, Ordering::SeqCst);
        testfile::remove_registered();
        testfile::detach_descriptors();
        progress.clear();
        // The I/O loop sees the flag within an I/O and drains; a write held up by dirty-page
        // throttling is ended by the process exit anyway, so the wait is short. The final
        // fsync runs in a child process that cannot be stopped and need not be waited for: it
        // finishes flushing the unlinked file on its own.
        if live.phase() != Phase::FinalFsync {
            let _ = tokio::time::timeout(Duration::from_millis(300), rx).await;
        }
        return Driven::Stopped(stop);
    }
}

/// The progress line on stderr: the current run's phase and time, live IOPS, and the whole
/// check's progress and time left. One line, replaced in place and cleared when a run ends or
/// a signal stops the check. Hidden when stderr is not a terminal or with --quiet.
pub struct Progress {
    show: bool,
    bar: std::sync::Mutex<Option<indicatif::ProgressBar>>,
    runtime: Duration,
    runs: u32,
    interval: Duration,
    /// Whether each run ends with an fsync whose length depends on the disk.
    end_fsync: bool,
    last: std::sync::Mutex<(Instant, u64)>,
    /// When the current run started, and how long the finished ones took.
    run_started: std::sync::Mutex<Option<Instant>>,
    done: std::sync::Mutex<Vec<Duration>>,
}

impl Progress {
    fn new(ctx: &Ctx, plan: &Plan) -> Progress {
        Progress {
            show: !ctx.quiet && std::io::stderr().is_terminal(),
            bar: std::sync::Mutex::new(None),
            runtime: plan.job.runtime.0,
            runs: plan.runs,
            interval: plan.interval,
            end_fsync: plan.job.end_fsync && plan.job.rw.writes(),
            last: std::sync::Mutex::new((Instant::now(), 0)),
            run_started: std::sync::Mutex::new(None),
            done: std::sync::Mutex::new(Vec::new()),
        }
    }

    /// Before the first run: how long the whole check will take.
    fn estimate_line(&self) -> String {
        let runs = self.runs;
        let waits = runs.saturating_sub(1);
        let total = self.runtime * runs + self.interval * waits;
        let mut parts = vec![format!(
            "{runs} run{} of {}",
            if runs == 1 { "" } else { "s" },
            units::format_duration(self.runtime)
        )];
        if waits > 0 && !self.interval.is_zero() {
            parts.push(format!(
                "{waits} wait{} of {}",
                if waits == 1 { "" } else { "s" },
                units::format_duration(self.interval)
            ));
        }
        let mut line = format!(
            "the check takes about {} ({})",
            clock(total),
            parts.join(" + ")
        );
        if self.end_fsync {
            line.push_str(" plus each run's final fsync");
        }
        line
    }

    /// How long one run takes: the mean of the finished ones, else the runtime.
    fn per_run(&self) -> Duration {
        let done = self.done.lock().map(|d| d.clone()).unwrap_or_default();
        if done.is_empty() {
            self.runtime
        } else {
            done.iter().sum::<Duration>() / done.len() as u32
        }
    }

    /// The whole check's share done and time left, during run `run` (1-based) `elapsed` in.
    fn overall(&self, run: u32, elapsed: Duration) -> (f64, Duration) {
        let per = self.per_run();
        let total = per * self.runs + self.interval * self.runs.saturating_sub(1);
        let finished: Duration = self.done.lock().map(|d| d.iter().sum()).unwrap_or_default();
        let before = finished + self.interval * run.saturating_sub(1);
        // The current run counts as at most its expected length until it is done.
        let so_far = before + elapsed.min(per);
        let left = total.saturating_sub(so_far);
        let pct = if total.is_zero() {
            0.0
        } else {
            (so_far.as_secs_f64() / total.as_secs_f64() * 100.0).min(99.0)
        };
        (pct, left)
    }

    fn start(&self, run: u32, what: &str) {
        if let Ok(mut l) = self.last.lock() {
            *l = (Instant::now(), 0);
        }
        if run > 0
            && let Ok(mut s) = self.run_started.lock()
        {
            *s = Some(Instant::now());
        }
        if !self.show {
            return;
        }
        // The previous line goes first, so the new one is drawn where it was.
        self.clear();
        let b = indicatif::ProgressBar::with_draw_target(
            None,
            indicatif::ProgressDrawTarget::term_like_with_hz(
                Box::new(crate::terminal::ProgressTerm),
                20,
            ),
        );
        b.set_style(
            indicatif::ProgressStyle::with_template("{spinner} {msg}").expect("valid template"),
        );
        b.set_message(if run == 0 {
            what.to_string()
        } else {
            format!("run {run}/{}: {what}", self.runs)
        });
        b.enable_steady_tick(Duration::from_millis(120));
        if let Ok(mut slot) = self.bar.lock() {
            *slot = Some(b);
        }
    }

    /// A run completed: its length refines the estimate of the others.
    fn finished_run(&self) {
        if let Ok(mut s) = self.run_started.lock()
            && let Some(t) = s.take()
            && let Ok(mut d) = self.done.lock()
        {
            d.push(t.elapsed());
        }
    }

    pub fn set(&self, msg: String) {
        if let Ok(slot) = self.bar.lock()
            && let Some(b) = slot.as_ref()
        {
            b.set_message(msg);
        }
    }

    fn waiting(&self, d: Duration) {
        self.start(
            0,
            &format!("waiting {} before the next run", units::format_duration(d)),
        );
    }

    fn update(&self, run: u32, live: &Live, started: Instant) {
        if !self.show {
            return;
        }
        let phase = live.phase();
        if phase == Phase::LayingOut {
            let (done, total) = (
                live.layout_done.load(Ordering::Relaxed),
                live.layout_total.load(Ordering::Relaxed),
            );
            self.set(format!(
                "laying out the test file: {} of {}",
                units::format_size(done),
                units::format_size(total)
            ));
            return;
        }
        let elapsed = started.elapsed();
        let ios = live.ios.load(Ordering::Relaxed);
        let rate = match self.last.lock() {
            Ok(mut l) => {
                let dt = l.0.elapsed().as_secs_f64();
                let r = if dt > 0.0 {
                    ios.saturating_sub(l.1) as f64 / dt
                } else {
                    0.0
                };
                *l = (Instant::now(), ios);
                r
            }
            Err(_) => 0.0,
        };
        let head = format!("run {run}/{}", self.runs);
        let (pct, left) = self.overall(run, elapsed);
        let whole = if self.runs > 1 {
            format!(" · check {pct:.0}%, {} left", clock(left))
        } else {
            String::new()
        };
        self.set(match phase {
            Phase::Running => format!(
                "{head}: running {}s of {}s · {:.0} IOPS{whole}",
                elapsed.as_secs(),
                self.runtime.as_secs(),
                rate
            ),
            Phase::Draining => format!("{head}: draining in-flight I/O{whole}"),
            Phase::FinalFsync => format!(
                "{head}: final fsync (flushing the page cache) · {}s{whole}",
                elapsed.as_secs()
            ),
            other => format!("{head}: {}", other.label()),
        });
    }

    fn clear(&self) {
        if let Ok(mut slot) = self.bar.lock()
            && let Some(b) = slot.take()
        {
            b.finish_and_clear();
        }
    }
}

/// A duration as a person reads it on a progress line: 45s, 3m10s, 1h05m.
fn clock(d: Duration) -> String {
    let s = d.as_secs();
    if s < 60 {
        format!("{s}s")
    } else if s < 3600 {
        format!("{}m{:02}s", s / 60, s % 60)
    } else {
        format!("{}h{:02}m", s / 3600, (s % 3600) / 60)
    }
}
