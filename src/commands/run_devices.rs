//! `iopscheck run --device DEV...`: the policy's job on each raw block device, read-only, one
//! after the other (as IBM's storage readiness tool runs its drives), each run recorded with
//! the device named as its target; then each device judged by the policy's rules and the
//! devices together by its spread rules (policy/devices.rs), printed as a set of devices in
//! every format of `fleet`.
//!
//! A device is never opened for writing: a job that writes is refused before anything is
//! opened, the device is opened O_RDONLY|O_EXCL (which the kernel refuses with EBUSY while it
//! is mounted or held by RAID, LVM or swap), and the engine opens it again read-only.

use std::fs::File;
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use chrono::{DateTime, Local, Utc};

use crate::config::RunConfig;
use crate::config::{Ctx, Outputs};
use crate::engine::EngineRequest;
use crate::engine::{self, Backend, EngineUsed, Live};
use crate::error::usage;
use crate::evaluate::{self, Evaluation, Group, Options, Scope};
use crate::fleet::{DecidingRule, Fleet, NodeRow, RowSource};
use crate::history::{self, Record, Source, Target};
use crate::job::{Job, Size};
use crate::policy::Policy;
use crate::policy::devices::DriveType;
use crate::record::RunInfo;

use super::lock::HostLock;
use super::signals::{self, Signals};

/// A policy whose job runs on raw devices cannot run on a directory.
pub fn needs_devices(policy: &Policy) -> anyhow::Result<()> {
    if policy.devices.is_some() {
        return Err(usage(format!(
            "--device: policy {} tests raw block devices, read-only: name each with --device (e.g. --device /dev/nvme0n1 /dev/nvme1n1), not a directory",
            policy.name
        )));
    }
    Ok(())
}

/// A device to test, checked and held open (exclusively, read-only) for the whole invocation.
struct Device {
    path: PathBuf,
    /// Its kernel name (`nvme0n1`), as /proc/diskstats names it.
    name: String,
    file: File,
    /// Bytes.
    size: u64,
    kind: DriveType,
    target: Target,
}

fn read_sys(p: &Path) -> Option<String> {
    std::fs::read_to_string(p)
        .ok()
        .map(|s| s.trim().to_string())
}

/// The device numbers of everything mounted (/proc/self/mountinfo's third field).
fn mounted_devices() -> Vec<(u32, u32)> {
    let text = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    text.lines()
        .filter_map(|l| {
            let (maj, min) = l.split_whitespace().nth(2)?.split_once(':')?;
            Some((maj.parse().ok()?, min.parse().ok()?))
        })
        .collect()
}

/// Checks one `--device` and opens it: a block device, not mounted (nor any of its
/// partitions), not held by another device (RAID, LVM, dm), of the policy's drive type.
fn open_device(given: &Path, policy: &Policy) -> anyhow::Result<Device> {
    let shown = given.display();
    let meta = std::fs::metadata(given).map_err(|e| {
        usage(match e.kind() {
            std::io::ErrorKind::NotFound => format!("--device {shown}: no such device"),
            _ => format!("--device {shown}: {e}"),
        })
    })?;
    if !meta.file_type().is_block_device() {
        return Err(usage(format!(
            "--device {shown}: not a block device{}; iopscheck reads raw block devices with --device, and tests a directory on a filesystem with --dir",
            if meta.is_dir() { " (a directory)" } else { "" }
        )));
    }
    if policy.job.rw.writes() {
        return Err(usage(format!(
            "--device {shown}: policy {}'s job writes (rw={}), and iopscheck never writes to a device; only a job that reads runs on a raw device",
            policy.name, policy.job.rw
        )));
    }
    let path = std::fs::canonicalize(given).unwrap_or_else(|_| given.to_path_buf());
    let rdev = meta.rdev();
    let (maj, min) = (libc::major(rdev), libc::minor(rdev));
    let sys = PathBuf::from(format!("/sys/dev/block/{maj}:{min}"));
    let real = std::fs::canonicalize(&sys).unwrap_or(sys.clone());
    // Itself or any of its partitions mounted.
    let mut numbers = vec![(maj, min)];
    if let Ok(entries) = std::fs::read_dir(&real) {
        for e in entries.flatten() {
            if e.path().join("partition").exists()
                && let Some((a, b)) = read_sys(&e.path().join("dev"))
                    .as_deref()
                    .and_then(|d| d.split_once(':'))
                    .and_then(|(a, b)| Some((a.parse().ok()?, b.parse().ok()?)))
            {
                numbers.push((a, b));
            }
        }
    }
    if mounted_devices().iter().any(|d| numbers.contains(d)) {
        return Err(usage(format!(
            "--device {shown}: is mounted (it or one of its partitions): iopscheck tests only a device no filesystem is using; unmount it, or test the filesystem with --dir"
        )));
    }
    let holders: Vec<String> = std::fs::read_dir(real.join("holders"))
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    if !holders.is_empty() {
        return Err(usage(format!(
            "--device {shown}: is in use by {} (RAID, LVM or device-mapper): iopscheck tests only a device nothing else holds",
            holders.join(", ")
        )));
    }
    // O_EXCL on a block device: the kernel refuses it while the device is mounted or claimed
    // (and nobody can mount it while we hold it). Read-only: never a write.
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_EXCL)
        .open(&path)
        .map_err(|e| {
            usage(match e.raw_os_error() {
                Some(libc::EBUSY) => format!(
                    "--device {shown}: is in use (mounted, swap, or held by RAID, LVM or another program): iopscheck tests only a device nothing else holds"
                ),
                Some(libc::EACCES) | Some(libc::EPERM) => format!(
                    "--device {shown}: permission denied: reading a raw device needs root (or the disk group)"
                ),
                _ => format!("--device {shown}: cannot open it read-only: {e}"),
            })
        })?;
    let size = read_sys(&sys.join("size"))
        .and_then(|s| s.parse::<u64>().ok())
        .map(|sectors| sectors * 512)
        .unwrap_or(0);
    let least = policy.job.size.0.max(policy.job.bs.0);
    if size < least {
        return Err(usage(format!(
            "--device {shown}: holds {}, less than the {} policy {}'s job.size asks of a device",
            crate::units::format_size(size),
            crate::units::format_size(least),
            policy.name
        )));
    }
    let d = crate::machine::device_of((maj, min));
    let name = d.name.clone().unwrap_or_else(|| {
        path.file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    });
    let kind = DriveType::classify(&name, d.rotational == Some(true));
    if let Some(want) = policy.devices.as_ref().and_then(|d| d.kind)
        && want != kind
    {
        return Err(usage(format!(
            "--device {shown}: is {}; policy {} is for {} (its figures are for drives of that type)",
            kind.label(),
            policy.name,
            want.label()
        )));
    }
    // A loop device reads a file: the filesystem holding that file is what is measured (a
    // loop over tmpfs is a RAM disk, which flatters, as every reader judges it). A loop over
    // a device node reads that device, not /dev's devtmpfs.
    let backing = read_sys(&real.join("loop/backing_file"))
        .map(std::path::PathBuf::from)
        .filter(|f| {
            use std::os::unix::fs::FileTypeExt;
            !std::fs::metadata(f).is_ok_and(|m| m.file_type().is_block_device())
        })
        .and_then(|f| f.parent().map(crate::machine::target_of))
        .and_then(|t| t.filesystem);
    let target = Target {
        dir: path.display().to_string(),
        filesystem: backing,
        device: Some(name.clone()),
        mount_point: None,
        mount_options: None,
        model: d.model,
        rotational: d.rotational,
        scheduler: d.scheduler,
        in_ram: crate::machine::ram::device_in_ram(&name),
        kernel: crate::machine::target_of(Path::new("/")).kernel,
        memory_bytes: None,
        cpus: None,
        os: None,
        capacity_bytes: Some(size),
    };
    Ok(Device {
        path,
        name,
        file,
        size,
        kind,
        target,
    })
}

/// The native back end for the policy's job (fio never reads a device here); an engine other
/// than the policy's is recorded as an override.
fn choose_backend(
    request: EngineRequest,
    declared: &Policy,
    policy: &Policy,
    overrides: &mut std::collections::BTreeMap<String, String>,
) -> anyhow::Result<Backend> {
    let backend = match request {
        EngineRequest::Fio => {
            return Err(usage(
                "--engine fio: not with --device; iopscheck reads raw devices with its own engine, which never opens them for writing",
            ));
        }
        EngineRequest::Native(b) => b,
        EngineRequest::Auto => Backend::for_engine(&policy.job.ioengine).ok_or_else(|| {
            usage(format!(
                "policy {}: ioengine {} is not one iopscheck runs itself",
                policy.name, policy.job.ioengine
            ))
        })?,
    };
    if backend == Backend::IoUring {
        engine::probe_io_uring().map_err(|r| usage(format!("--engine io_uring: {r}")))?;
    }
    if request != EngineRequest::Auto && request.name() != declared.job.ioengine.as_str() {
        overrides.insert("engine".into(), request.name().to_string());
    }

    Ok(backend)
}

/// Checks and opens every `--device`, each once.
fn open_all(given: &[PathBuf], policy: &Policy) -> anyhow::Result<Vec<Device>> {
    let mut devices: Vec<Device> = Vec::new();
    for g in given {
        let d = open_device(g, policy)?;
        if let Some(other) = devices.iter().find(|o| {
            o.file.metadata().ok().map(|m| m.rdev()) == d.file.metadata().ok().map(|m| m.rdev())
        }) {
            return Err(usage(format!(
                "--device {}: is {} again: give each device once",
                g.display(),
                other.path.display()
            )));
        }
        devices.push(d);
    }
    Ok(devices)
}

pub fn run(cfg: RunConfig, ctx: &Ctx) -> anyhow::Result<u8> {
    let RunConfig {
        declared,
        policy,
        overrides,
        runs,
        interval,
        engine: request,
        history: history_path,
        wait,
        host,
        outputs,
        strict,
        devices: given,
        ..
    } = cfg;

    let mut overrides = overrides;
    let backend = choose_backend(request, &declared, &policy, &mut overrides)?;
    // Every device checked before any is read.
    let devices = open_all(&given, &policy)?;
    if let Some(p) = &history_path {
        history::prepare(
            p,
            (8192 + 32 * policy.job.runtime.0.as_secs()) * u64::from(runs) * devices.len() as u64,
        )?;
    }
    let _lock = HostLock::acquire(wait, ctx)?;

    let invocation = format!("{:x}-{:x}", Utc::now().timestamp(), std::process::id());
    let used = EngineUsed::Native(backend).to_string();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let mut by_device: Vec<Vec<Record>> = vec![Vec::new(); devices.len()];
    let stopped = rt.block_on(async {
        let mut sigs = Signals::watch()?;
        for i in 0..runs {
            if i > 0 && !interval.is_zero() {
                tokio::select! {
                    _ = tokio::time::sleep(interval) => {}
                    sig = sigs.recv() => return Ok::<Option<i32>, anyhow::Error>(Some(sig)),
                }
            }
            for (k, d) in devices.iter().enumerate() {
                let mut job: Job = policy.job.clone();
                // The whole device, in whole blocks (fio reads a device to its end).
                job.size = Size(d.size / job.bs.0 * job.bs.0);
                let files: Vec<File> = (0..job.numjobs)
                    .map(|_| d.file.try_clone())
                    .collect::<Result<_, _>>()?;
                let cancel = Arc::new(AtomicBool::new(false));
                let live = Arc::new(Live::default());
                let (tx, rx) = tokio::sync::oneshot::channel();
                let started = Local::now().fixed_offset();
                {
                    let (job, cancel, live, name) =
                        (job.clone(), cancel.clone(), live.clone(), d.name.clone());
                    std::thread::Builder::new()
                        .name("iopscheck-engine".into())
                        .spawn(move || {
                            let _ = tx.send(engine::run(&job, &files, backend, &live, &cancel, Some(&name)));
                        })?;
                }
                let m = tokio::select! {
                    r = rx => r.map_err(|_| anyhow::anyhow!("the engine thread ended without a result"))?,
                    sig = sigs.recv() => {
                        // Nothing was written: the engine stops at its next I/O.
                        cancel.store(true, Ordering::Relaxed);
                        return Ok(Some(sig));
                    }
                };
                let m = m.map_err(|e| anyhow::anyhow!("--device {}: {e}", d.path.display()))?;
                let mut info = RunInfo::new(
                    host.clone(),
                    Source::Native,
                    used.clone(),
                    job.shape(),
                    d.target.clone(),
                    policy.name.clone(),
                );
                info.overrides = overrides.clone();
                info.bw_basis = Some(crate::measure::BwBasis::Exact);
                let mut record = Record::measured(info, started, &m);
                record.invocation = Some(invocation.clone());
                if let Some(p) = &history_path {
                    history::append(p, std::slice::from_ref(&record)).map_err(|e| {
                        anyhow::anyhow!("the run completed but could not be recorded: {e}")
                    })?;
                }
                let iops = record.metrics.get("read_iops").copied().unwrap_or(0.0);
                ctx.note(format!(
                    "run {}/{runs} {} ({}): read {} IOPS",
                    i + 1,
                    d.path.display(),
                    d.kind.as_str(),
                    crate::numbers::fmt_value(iops)
                ));
                by_device[k].push(record);
            }
        }
        Ok(None)
    })?;
    drop(rt);
    signals::restore_defaults();
    if let Some(sig) = stopped {
        crate::out::err_line(format_args!(
            "iopscheck: interrupted by {}: nothing was written to any device; the completed runs are kept in the history",
            signals::name(sig)
        ));
        return Ok(signals::exit_code(sig));
    }

    let now = Utc::now();
    let evs: Vec<Evaluation> = by_device
        .into_iter()
        .map(|records| {
            let mut opts = Options::new(Scope::Run, now);
            opts.strict = strict;
            let group = records.first().map(Group::of);
            let mut ev = evaluate::evaluate(records, &declared, &opts);
            ev.group = group;
            ev
        })
        .collect();
    let since = crate::select::window_start(now, declared.evidence.window.0);
    let set = device_set(&evs, &declared, since, now, strict, "run");
    emit(&outputs, &set, ctx)?;
    crate::out::finish_stdout();
    Ok(set.verdict.exit_code())
}

/// A device's evaluation as a row of the set.
fn row_of(ev: &Evaluation, policy: &Policy, scope: &str) -> NodeRow {
    let head = DecidingRule::of(policy);
    let g = ev.group.clone().unwrap_or(Group {
        host: String::new(),
        policy: policy.name.clone(),
        dir: String::new(),
        engine: String::new(),
    });
    let source = if scope == "report" {
        RowSource::History
    } else {
        RowSource::Result
    };
    NodeRow::of_evaluation(ev, policy, head.as_ref(), g, String::new(), source, scope)
}

/// The devices' evaluations as one set: each device judged by the policy's rules, the set by
/// its spread rules; the worse decides.
pub fn device_set(
    evs: &[Evaluation],
    policy: &Policy,
    since: DateTime<Utc>,
    now: DateTime<Utc>,
    strict: bool,
    scope: &str,
) -> Fleet {
    let rows: Vec<NodeRow> = evs.iter().map(|ev| row_of(ev, policy, scope)).collect();
    let mut set = Fleet::new(
        evaluate::PolicyInfo::of(policy),
        DecidingRule::of(policy),
        since,
        rows,
        Vec::new(),
        strict,
        now,
    )
    .with_evidence(policy.evidence.min_runs, policy.evidence.min_days, false)
    .for_devices();
    let results = policy
        .devices
        .iter()
        .flat_map(|d| &d.spread)
        .map(|r| crate::fleet::devices::judge(r, &set.rows))
        .collect();
    set.apply_rules(results);
    set
}

/// `report` of a policy with `devices`: the host's devices in the window, as one set.
pub fn report(
    evs: Vec<Evaluation>,
    policy: &Policy,
    since: DateTime<Utc>,
    now: DateTime<Utc>,
    strict: bool,
    outputs: &Outputs,
    ctx: &Ctx,
) -> anyhow::Result<u8> {
    let hosts: std::collections::BTreeSet<String> = evs
        .iter()
        .filter_map(|e| e.group.as_ref().map(|g| g.host.clone()))
        .collect();
    if hosts.len() > 1 {
        return Err(usage(format!(
            "--host: policy {} judges one host's devices together, and the history holds {} hosts ({}): pick one with --host",
            policy.name,
            hosts.len(),
            hosts.into_iter().collect::<Vec<_>>().join(", ")
        )));
    }
    let set = device_set(&evs, policy, since, now, strict, "report");
    emit(outputs, &set, ctx)?;
    Ok(set.verdict.exit_code())
}

fn emit(outputs: &Outputs, set: &Fleet, ctx: &Ctx) -> anyhow::Result<()> {
    super::fleet::emit(outputs, set, ctx)
}
