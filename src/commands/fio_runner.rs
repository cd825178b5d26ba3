//! `run --engine fio`: the installed fio runs the policy's job on our own test files (created
//! exclusively and laid out by us, so fio reuses them as they are and never touches another
//! file), with JSON output read by the same parser as `import`.
//!
//! fio is never given a test file by name: the directory may belong to another user (an
//! application's data directory, tested by root), who can rename our file and put a link to
//! any file or device under its name before fio opens it. fio opens `/proc/self/fd/N` instead,
//! a descriptor of the file we created and hold ([`ByDescriptor`]), as the native engine does.

use std::fs::File;
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use anyhow::Context as _;
use tokio::io::AsyncReadExt;

use super::run::Progress;
use super::signals::Signals;
use crate::error::RunError;
use crate::job::Job;
use crate::measure::Measurement;
use crate::testfile::TestFiles;

pub enum FioRun {
    /// The measurement and fio's version.
    Done(Box<Measurement>, Option<String>),
    /// Stopped by this signal.
    Stopped(i32),
}

/// How long fio may take beyond its runtime: layout is already done, but the end fsync of a
/// buffered run can take minutes (the Swimlane sample flushed for 97 s after 60 s of writes).
fn deadline(job: &Job) -> Duration {
    job.runtime.0 * 10 + Duration::from_secs(600)
}

pub async fn run_fio(
    fio: &Path,
    job: &Job,
    files: &TestFiles,
    sigs: &mut Signals,
    progress: &Progress,
) -> anyhow::Result<FioRun> {
    let paths = files.paths();
    let first = paths.first().context("no test file")?;
    let dir = first.parent().context("test file has no directory")?;
    // Our files are one per job, in fio's $jobnum order.
    let given = ByDescriptor::place(&files.files()).map_err(RunError::Fio)?;
    let args = crate::fio::command_line_by_descriptor(job, given.lead);
    // fio finds no disk under /proc/self/fd/N to report (`disk_util`): the disks are read
    // here, around fio, as for a native run.
    let disks = crate::measure::disk::disks_under(dir);
    let before = crate::measure::disk::snapshot(&disks);

    let mut cmd = tokio::process::Command::new(fio);
    cmd.args(&args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        // In a group of its own, so that a terminal's ^C reaches fio only through us, and we
        // end it and its jobs together (end_fio).
        .process_group(0);
    // fio and every job process it forks keep the run lock and the test files' descriptors
    // (so their flocks): if iopscheck is killed (SIGKILL, where nothing of ours can end fio's
    // jobs, which call setsid and outlive fio itself), the next run finds the lock held by
    // them and waits, and never takes a test file they still write for a stale one.
    // The placed duplicates share the files' open descriptions, so their flocks.
    let mut inherit: Vec<i32> = given.fds.iter().map(|f| f.as_raw_fd()).collect();
    inherit.extend(crate::syscalls::run_lock_fd());
    // Stays unsafe here rather than in crate::syscalls: the hook runs between fork and exec, where
    // only async-signal-safe calls are allowed, and pre_exec is unsafe for that reason.
    // SAFETY: prctl and fcntl are async-signal-safe; nothing else runs between fork and exec.
    unsafe {
        cmd.pre_exec(move || {
            // If iopscheck dies without a chance to end fio (SIGKILL), fio hears SIGTERM and
            // stops its jobs itself.
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            for &fd in &inherit {
                // Kept across exec: FD_CLOEXEC off, in the child only.
                if libc::fcntl(fd, libc::F_SETFD, 0) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
            }
            Ok(())
        });
    }
    let mut child = cmd
        .spawn()
        .map_err(|e| RunError::Fio(format!("cannot start {}: {e}", fio.display())))?;
    let pid = child.id().map(|p| p as i32);
    let mut stdout = child.stdout.take().context("fio stdout")?;
    let mut stderr = child.stderr.take().context("fio stderr")?;
    let out_task = tokio::spawn(async move {
        let mut b = Vec::new();
        let _ = stdout.read_to_end(&mut b).await;
        b
    });
    let err_task = tokio::spawn(async move {
        let mut b = Vec::new();
        let _ = stderr.read_to_end(&mut b).await;
        b
    });

    let started = Instant::now();
    let limit = deadline(job);
    let mut tick = tokio::time::interval(Duration::from_millis(500));
    let status = loop {
        tokio::select! {
            s = child.wait() => break s.context("waiting for fio")?,
            _ = tick.tick() => {
                let e = started.elapsed();
                if e > limit {
                    end_fio(&mut child, pid).await;
                    return Err(RunError::Fio(format!(
                        "fio did not finish within {}s; it was stopped",
                        limit.as_secs()
                    ))
                    .into());
                }
                let left = job.runtime.0.saturating_sub(e).as_secs();
                progress.set(if left > 0 {
                    format!("fio running · {}s elapsed, {left}s left", e.as_secs())
                } else {
                    format!("fio finishing (drain and final fsync) · {}s elapsed", e.as_secs())
                });
            }
            sig = sigs.recv() => {
                end_fio(&mut child, pid).await;
                return Ok(FioRun::Stopped(sig));
            }
        }
    };
    let after = crate::measure::disk::snapshot(&disks);
    drop(given);
    let out = out_task.await.unwrap_or_default();
    let err = err_task.await.unwrap_or_default();
    if !status.success() {
        let tail = String::from_utf8_lossy(&err);
        let tail: Vec<&str> = tail.lines().rev().take(3).collect();
        return Err(RunError::Fio(format!(
            "fio failed ({status}): {}",
            tail.into_iter().rev().collect::<Vec<_>>().join(" / ")
        ))
        .into());
    }
    let mut parsed = crate::fio::parse(&out)
        .map_err(|e| RunError::Fio(format!("cannot read fio's output: {e}")))?;
    // With --group_reporting there is one entry per job; an fio that printed its clones one
    // by one anyway is read as its group line reads them, never as the first clone alone.
    crate::fio::combine_clones(&mut parsed);
    let fio_job = parsed
        .jobs
        .into_iter()
        .next()
        .context("fio's output has no job")?;
    if fio_job.error != 0 {
        return Err(
            RunError::Fio(format!("fio reported error {} for the job", fio_job.error)).into(),
        );
    }
    let mut m = fio_job.measurement;
    m.bs = Some(job.bs.0);
    if m.disk.is_empty()
        && let (Some(b), Some(a)) = (before, after)
    {
        m.disk = crate::measure::disk::delta(&b, &a);
    }
    Ok(FioRun::Done(Box::new(m), parsed.fio_version))
}

/// The test files placed for fio at descriptor numbers `<lead><jobnum>` (lead 1: 10, 11, …,
/// 19, then 110, …), which fio opens as `/proc/self/fd/<lead>$jobnum`
/// ([`crate::fio::command_line_by_descriptor`]): duplicates, close-on-exec here and inherited
/// by fio (its `pre_exec` clears the flag in the child), held until fio has ended. Numbers are
/// taken only where free, so nothing the process holds is displaced.
struct ByDescriptor {
    lead: u32,
    fds: Vec<OwnedFd>,
}

impl ByDescriptor {
    fn place(files: &[&File]) -> Result<ByDescriptor, String> {
        let number = |lead: u32, job: usize| -> Option<i32> { format!("{lead}{job}").parse().ok() };
        'lead: for lead in 1..=999u32 {
            // The last job's number is the highest: more digits, or the same with a higher job.
            let top = number(lead, files.len().saturating_sub(1)).ok_or("too many jobs")?;
            if !crate::syscalls::allow_descriptors(top as u64 + 1) {
                return Err(format!(
                    "fio's {} job files need descriptor numbers up to {top}, above this process's limit (ulimit -n)",
                    files.len()
                ));
            }
            let mut fds = Vec::with_capacity(files.len());
            for (job, f) in files.iter().enumerate() {
                let want = number(lead, job).ok_or("too many jobs")?;
                let fd = crate::syscalls::dup_from(*f, want)
                    .map_err(|e| format!("cannot hand the test file to fio: {e}"))?;
                if fd.as_raw_fd() != want {
                    continue 'lead; // taken: the next lead (dropping what was placed)
                }
                fds.push(fd);
            }
            for (f, fd) in files.iter().zip(&fds) {
                same_file_through_proc(f, fd.as_raw_fd())?;
            }
            return Ok(ByDescriptor { lead, fds });
        }
        Err("no free descriptor numbers to hand fio the test files".into())
    }
}

/// Checks that `/proc/self/fd/<fd>` opens `file`: never a name another user could swap.
fn same_file_through_proc(file: &File, fd: i32) -> Result<(), String> {
    let path = format!("/proc/self/fd/{fd}");
    let ours = file
        .metadata()
        .map_err(|e| format!("cannot read the test file: {e}"))?;
    match std::fs::metadata(&path) {
        Ok(m) if m.dev() == ours.dev() && m.ino() == ours.ino() => Ok(()),
        _ => Err(format!(
            "cannot hand fio the test file as {path}: /proc is not mounted here, and fio is never given the test file by name (whoever can write the directory could swap the name for a link to another file or a device); mount /proc"
        )),
    }
}

/// How long to wait for fio's processes once killed: a job in the middle of a flush ends only
/// when the kernel lets it (uninterruptible sleep).
const GRACE: Duration = Duration::from_secs(20);

/// Kills fio and every process below it, and waits until none is left (bounded), so that no
/// fio job goes on writing after iopscheck has exited and a next run never measures alongside
/// it. fio's job processes call setsid(), so its process group does not hold them: they are
/// found as its descendants while fio is stopped (a stopped fio forks no more jobs).
async fn end_fio(child: &mut tokio::process::Child, pid: Option<i32>) {
    let mut procs = Vec::new();
    if let Some(p) = pid {
        // Our own child, not yet reaped (we hold its status): the id is still fio's.
        let _ = crate::syscalls::send_signal(p, libc::SIGSTOP);
        procs.push(p);
        procs.extend(descendants(p));
        for &q in procs.iter().rev() {
            // fio and the processes it forked, found just now.
            let _ = crate::syscalls::send_signal(q, libc::SIGKILL);
        }
    }
    let _ = child.start_kill();
    let _ = child.wait().await;
    let t = Instant::now();
    while procs.iter().any(|&p| alive(p)) {
        if t.elapsed() > GRACE {
            crate::out::err_line(format_args!(
                "iopscheck: warning: fio's job processes have not ended {}s after being killed; they may be stuck in a flush",
                GRACE.as_secs()
            ));
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// (state, parent) of each process, from /proc/PID/stat.
fn processes() -> Vec<(i32, char, i32)> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return vec![];
    };
    dir.flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter_map(|pid| {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
            // pid (comm) state ppid ...: the comm may contain spaces and parentheses.
            let mut f = stat.rsplit_once(')')?.1.split_whitespace();
            let state = f.next()?.chars().next()?;
            let ppid = f.next()?.parse().ok()?;
            Some((pid, state, ppid))
        })
        .collect()
}

fn descendants(root: i32) -> Vec<i32> {
    let all = processes();
    let mut out = Vec::new();
    let mut todo = vec![root];
    while let Some(p) = todo.pop() {
        for &(pid, _, ppid) in &all {
            if ppid == p && !out.contains(&pid) {
                out.push(pid);
                todo.push(pid);
            }
        }
    }
    out
}

/// Whether `pid` is a live process (not a zombie waiting for its reaper).
fn alive(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        let state = stat
            .rsplit_once(')')
            .map(|(_, r)| r.trim_start())
            .unwrap_or("");
        !state.starts_with('Z') && !state.starts_with('X')
    })
}
