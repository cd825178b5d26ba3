//! The runs themselves: the test files laid out once, the policy's test run on them, each run
//! recorded as it completes.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::Context as _;
use chrono::{DateTime, FixedOffset, Local, Utc};

use crate::config::Ctx;
use crate::engine::{self, EngineError, Live, Phase};
use crate::evaluate::{self, Group, SustainedCheck};
use crate::history::{self, Record};
use crate::measure::Measurement;
use crate::testfile::{self, TestFiles};

use super::drive::{Driven, Stop, create_error, drive, engine_error, spawn_engine};
use super::files::remove_files;
use super::plan::{Plan, Runner};
use super::progress::Progress;
use super::record::{make_record, run_line};
use super::sequence::group_sequence;
use crate::commands::signals::Signals;

pub(super) enum Ended {
    /// The runs' records, and the test files, unlinked already, to be freed after the verdict.
    Done(Vec<Record>, Option<SustainedCheck>, testfile::Unlinked),
    Stopped(Stop, usize),
}

pub(super) async fn execute(plan: &Plan, ctx: &Ctx) -> anyhow::Result<Ended> {
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
pub(super) enum Done {
    All(Vec<Record>, Option<SustainedCheck>),
    Stopped(Stop, usize),
}

/// Lays out the test files and runs the test on them, recording each run as it completes.
pub(super) async fn lay_out_and_run(
    plan: &Plan,
    ctx: &Ctx,
    files: &TestFiles,
    sigs: &mut Signals,
    progress: &Progress,
) -> anyhow::Result<Done> {
    let cancel = Arc::new(AtomicBool::new(false));
    let live = Arc::new(Live::default());

    if let Some(s) = lay_out(plan, ctx, files, sigs, progress, &live, &cancel).await? {
        return Ok(Done::Stopped(s, 0));
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
                        crate::commands::sustained::Watcher::spawn(
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
                match crate::commands::fio_runner::run_fio(fio, &plan.job, files, sigs, progress)
                    .await
                {
                    Ok(crate::commands::fio_runner::FioRun::Done(m, version)) => Ok((*m, version)),
                    Ok(crate::commands::fio_runner::FioRun::Stopped(sig)) => {
                        return Ok(Done::Stopped(Stop(sig), records.len()));
                    }
                    Err(e) => Err(e),
                }
            }
        };
        progress.clear();
        progress.finished_run();
        let (measurement, fio_version) = result?;
        let record = make_record(plan, started, &measurement, fio_version, check.as_ref());
        if let Some(p) = &plan.history {
            history::append(p, std::slice::from_ref(&record))
                .with_context(|| "the run completed but could not be recorded")?;
        }
        say_run(plan, ctx, i + 1, &measurement, &record);
        let group = Group::of(&record);
        records.push(record);
        if sequence_ended(plan, &group, ctx)? {
            break;
        }
    }
    Ok(Done::All(records, check))
}

/// Lays out the test files, once per invocation (its runs reuse them), after saying how long
/// the check takes and which disks document burst credits. The signal that stopped it, if one
/// did.
async fn lay_out(
    plan: &Plan,
    ctx: &Ctx,
    files: &TestFiles,
    sigs: &mut Signals,
    progress: &Progress,
    live: &Arc<Live>,
    cancel: &Arc<AtomicBool>,
) -> anyhow::Result<Option<Stop>> {
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
    match drive(spawn_engine(layout), live, cancel, progress, sigs, 0).await {
        Driven::Done(Ok(())) => {}
        Driven::Done(Err(e)) => return Err(engine_error(e, &plan.dir)),
        Driven::Stopped(s) => return Ok(Some(s)),
    }
    Ok(None)
}

/// The run's line on stderr, and with --verbose, what limited the disk.
fn say_run(plan: &Plan, ctx: &Ctx, run: u32, measurement: &Measurement, record: &Record) {
    if let Some(line) = run_line(
        run,
        plan.runs,
        measurement,
        record,
        plan.deciding.as_deref(),
    ) {
        ctx.note(crate::terminal::wrap(
            "",
            &line,
            crate::terminal::stderr_width(),
        ));
    }
    // What limited the disk, from the disk's own series beside the run's (native runs):
    // one of the run's internals, said with --verbose.
    if let Some(s) =
        crate::measure::limits::sentence(measurement, !plan.job.direct).filter(|_| plan.verbose)
    {
        ctx.note(crate::terminal::wrap(
            "  ",
            &s,
            crate::terminal::stderr_width(),
        ));
    }
}

/// `--until-decided`: the group's sequence after a run, said on stderr; whether the runs stop
/// (the sequence ended, failed, or cannot go on).
fn sequence_ended(plan: &Plan, group: &Group, ctx: &Ctx) -> anyhow::Result<bool> {
    let (Some((policy, settings)), Some(p)) = (&plan.until, &plan.history) else {
        return Ok(false);
    };
    // The lines it cannot read are named once, with the verdict (Sitting::judge).
    let (ev, _, _) = group_sequence(p, group, policy, settings, false, Utc::now(), &[])?;
    let ended =
        ev.sequential.iter().all(|d| d.sequence.outcome.ended()) && !ev.sequential.is_empty();
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
    Ok(ev.sequential.is_empty() || ended || ev.verdict == evaluate::Verdict::Fail)
}
