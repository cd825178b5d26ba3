//! `iopscheck run`: the policy's test, several times, on a directory. Each run is recorded in
//! the history as soon as it completes; the verdict is over this invocation's runs.
//!
//! Orchestration only: the engine runs on its own OS thread; a current-thread tokio runtime
//! waits for it while handling signals (signals.rs), the progress ticker and the waits between runs.

mod drive;
mod execute;
mod files;
mod plan;
mod progress;
mod record;
mod sequence;

pub use progress::Progress;

use std::path::{Path, PathBuf};

use anyhow::Context as _;
use chrono::Utc;

use crate::config::Ctx;
use crate::config::RunConfig;
use crate::engine::EngineRequest;
use crate::error::usage;
use crate::evaluate::{self, EvidenceCount, Group, Options, Scope, SustainedCheck, Warning};
use crate::history::{self, Record};
use crate::job::Job;
use crate::policy::Policy;
use crate::run_index::{Records, Run};
use crate::testfile::{self};
use crate::units;

use self::execute::Ended;
use self::files::{DISCARD_SLOW, REMOVAL_SILENT, release_files};
use self::plan::{Plan, Runner, choose_runner, invocation_id};
use self::sequence::{group_sequence, history_evidence, name_skipped, recheck_due, standing};
use crate::commands::lock::HostLock;
use crate::commands::signals::{self};

pub fn run(cfg: RunConfig, ctx: &Ctx) -> anyhow::Result<u8> {
    // The environment's settings, checked before anything runs.
    self::files::check_env()?;
    // Raw devices, read-only: their own flow (run_devices.rs).
    if !cfg.devices.is_empty() {
        return crate::commands::run_devices::run(cfg, ctx);
    }
    crate::commands::run_devices::needs_devices(&cfg.declared)?;
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
        devices: _,
    } = cfg;
    let declared = &declared_policy.job;

    // Decide the engine before anything touches the disk.
    let mut notes: Vec<Warning> = Vec::new();
    let mut fallback: Option<Warning> = None;
    let runner = choose_runner(engine, &policy, &mut fallback)?;
    // The record keeps the warning's sentence.
    let engine_note = fallback.as_ref().map(Warning::to_string);
    if let Some(w) = fallback {
        ctx.warn(&w);
        notes.push(w);
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
        let (mut ev, held, skipped) =
            group_sequence(p, &group, &declared_policy, &settings, strict, now, &notes)?;
        if let Some(due) = recheck_due(&ev, every)
            && now < due
        {
            name_skipped(&skipped, ctx);
            let stands = standing(&ev, due, every);
            crate::out::err_line(format_args!("iopscheck: {stands}"));
            ev.warnings.push(stands);
            outputs.emit(&ev, &held, ctx)?;
            crate::out::finish_stdout();
            return Ok(ev.verdict.exit_code());
        }
    }

    if let Some(p) = &history_path {
        history::prepare(p, records_bytes(&policy.job, runs))?;
    }
    let total_bytes = policy.job.size.0 * u64::from(policy.job.numjobs);
    let (dir, _lock) = claim_dir(&dir, total_bytes, wait, ctx)?;
    let discard = ready_dir(&dir, total_bytes, ctx);

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
    let outcome = rt.block_on(execute::execute(&plan, ctx));
    // The test files are gone and the runs recorded: from here a signal may end the process
    // the default way (a report stuck on a stalled pipe must still yield to ^C or a hangup).
    drop(rt);
    signals::restore_defaults();
    let (records, check, unlinked) = match outcome? {
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

    let sitting = Sitting {
        policy: &declared_policy,
        history: history_path.as_deref(),
        until,
        strict,
        notes,
        check,
    };
    let (ev, records) = sitting.judge(records, ctx);
    outputs.emit(&ev, &records, ctx)?;
    // The verdict is out before the test file's blocks are freed, which can take minutes: a
    // reader of stdout has all of it now (EOF), and the removal goes on after it.
    crate::out::finish_stdout();
    release_files(unlinked, discard, ctx);
    Ok(ev.verdict.exit_code())
}

/// The test directory, canonical, with the host lock held and room for `total_bytes` under
/// it. What the arguments say is checked before the lock (a bad --dir is told at once, not
/// after waiting for another run); the room under it, where a concurrent run's test file is
/// gone and a test file no run holds is stale.
fn claim_dir(
    dir: &Path,
    total_bytes: u64,
    wait: bool,
    ctx: &Ctx,
) -> anyhow::Result<(PathBuf, HostLock)> {
    let canonical = testfile::preflight(dir)?;
    let lock = HostLock::acquire(wait, ctx)?;
    testfile::check_space(dir, &canonical, total_bytes)?;
    Ok((canonical, lock))
}

/// Readies the test directory (under the host lock): says at once when the test files'
/// removal will be slow (a large file on a disk mounted with `discard`: the end of the run
/// will be slow, not stuck), and removes the test files an interrupted run left. Whether the
/// disk is mounted with `discard`.
fn ready_dir(dir: &Path, total_bytes: u64, ctx: &Ctx) -> bool {
    let discard = crate::machine::discards(dir);
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
    let stale = {
        let dir = dir.to_path_buf();
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
    discard.is_some()
}

/// What judges a sitting's runs once they are recorded.
struct Sitting<'a> {
    /// The policy as written.
    policy: &'a Policy,
    history: Option<&'a Path>,
    until: Option<evaluate::sequential::Settings>,
    strict: bool,
    /// What the invocation said before the runs (the engine it fell back to).
    notes: Vec<Warning>,
    /// What `--sustained` found of the level the disk sustains.
    check: Option<SustainedCheck>,
}

impl Sitting<'_> {
    /// The verdict, in one evaluation: with `--until-decided` and a history, the sequence's
    /// over the group's runs in the history; else this sitting's runs', with where the node
    /// stands against the evidence rule beside it (the group's runs of the policy's test in
    /// the history, or without one, this sitting's), counted as they are read.
    fn judge(self, records: Vec<Record>, ctx: &Ctx) -> (evaluate::Evaluation, Records) {
        let now = Utc::now();
        // The runs of one sitting are one group: one host, policy, directory and engine.
        let group = records.first().map(Group::of);
        if let (Some(settings), Some(p), Some(g)) = (&self.until, self.history, &group) {
            match group_sequence(p, g, self.policy, settings, self.strict, now, &self.notes) {
                Ok((ev, records, skipped)) => {
                    name_skipped(&skipped, ctx);
                    return (ev, records);
                }
                Err(e) => ctx.warn(e),
            }
        }
        let evidence = match self.history {
            // --until-decided judges its runs alone where the history cannot be read.
            Some(_) if self.until.is_some() => None,
            Some(p) => history_evidence(p, group.as_ref(), self.policy, now, ctx),
            None => {
                let mut count = EvidenceCount::new(self.policy, now);
                for (i, r) in records.iter().enumerate() {
                    count.add(&Run::of(r, i));
                }
                Some(count.status())
            }
        };
        let mut opts = Options::new(Scope::Run, now);
        opts.strict = self.strict;
        opts.notes = self.notes;
        opts.sustained_check = self.check;
        opts.evidence = evidence;
        let (mut ev, records) =
            evaluate::evaluate_left_out(records, Vec::new(), self.policy, &opts);
        ev.group = group;
        (ev, records)
    }
}

/// Room the history needs for `runs` records of `job`, generously: a record is under 2 KiB
/// plus its series of IOPS samples (two a second, reads and writes, a few bytes each).
fn records_bytes(job: &Job, runs: u32) -> u64 {
    let per_run = 8192 + 32 * job.runtime.0.as_secs();
    per_run * u64::from(runs)
}
