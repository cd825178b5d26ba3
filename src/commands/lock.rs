//! One run per host at a time: two runs at once would disturb each other's numbers. The lock
//! is an flock on a small file of our own, released when the process ends, however it ends.
//!
//! Every process a run starts keeps the lock's descriptor (the same open file, so the same
//! flock): the flush of an interrupted run's test file (engine/sys.rs, testfile.rs) and fio
//! with its job processes (fio_runner.rs). The lock is free only when all of them have ended,
//! so no run starts while a process of an earlier one may still write on the disk.
//!
//! The holder writes its process id into the file. A run that finds the lock taken asks the
//! kernel who holds it (the `lock:` lines of /proc/PID/fdinfo, which name the process that
//! took it) and says what it is: another iopscheck run (whatever its binary is called), what
//! an interrupted run left running (its flush, fio's jobs), which it waits for, for a bounded
//! time; or another program. What a process is, is told by the binary it runs
//! (/proc/PID/exe), never by its name, which any program may choose: fio is the fio binary the
//! run uses ($IOPSCHECK_FIO, else fio on PATH) under whatever name, a flush is this binary.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::os::fd::AsRawFd;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::config::Ctx;
use crate::error::RunError;

/// A lock failure: the test cannot run now.
fn lock_error(msg: impl Into<String>) -> anyhow::Error {
    RunError::Lock(msg.into()).into()
}

/// How long a run waits, by default, for the flush of an interrupted run to finish.
pub const FLUSH_WAIT: Duration = Duration::from_secs(120);

pub struct HostLock {
    _file: File,
}

/// `$IOPSCHECK_LOCK_FILE`, else /run/lock/iopscheck.lock for root, else
/// `$XDG_RUNTIME_DIR/iopscheck.lock`, else `iopscheck/run.lock` in the user's state directory
/// (`$XDG_STATE_HOME`, `~/.local/state`), created private: never a shared directory such as
/// /tmp, where another user could create the file first and hold it.
pub fn lock_path() -> anyhow::Result<PathBuf> {
    if let Some(p) = std::env::var_os("IOPSCHECK_LOCK_FILE").filter(|v| !v.is_empty()) {
        return Ok(PathBuf::from(p));
    }
    if crate::syscalls::is_root() {
        for dir in ["/run/lock", "/run"] {
            if Path::new(dir).is_dir() {
                return Ok(PathBuf::from(dir).join("iopscheck.lock"));
            }
        }
    }
    if let Some(d) = std::env::var_os("XDG_RUNTIME_DIR").filter(|v| !v.is_empty()) {
        return Ok(PathBuf::from(d).join("iopscheck.lock"));
    }
    let state = std::env::var_os("XDG_STATE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME")
                .filter(|v| !v.is_empty())
                .map(|h| PathBuf::from(h).join(".local/state"))
        })
        .ok_or_else(|| {
            lock_error(
                "no place for the run lock: set XDG_RUNTIME_DIR, HOME or IOPSCHECK_LOCK_FILE",
            )
        })?;
    let dir = state.join("iopscheck");
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(&dir)
        .map_err(|e| {
            lock_error(format!(
                "cannot create {} for the run lock: {e}",
                dir.display()
            ))
        })?;
    Ok(dir.join("run.lock"))
}

/// A process that holds the lock: its id and its name (`comm`), which is for messages only.
#[derive(Debug, Clone, PartialEq)]
struct Proc {
    pid: i32,
    name: String,
}

impl Proc {
    fn of(pid: i32) -> Proc {
        let name = std::fs::read_to_string(format!("/proc/{pid}/comm"))
            .map(|c| printable(c.trim()))
            .unwrap_or_else(|_| "?".into());
        Proc { pid, name }
    }

    /// "fio (pid 12, /usr/bin/fio)": its name, and the binary it runs where it can be read.
    fn shown(&self) -> String {
        match program(self.pid) {
            Some(e) => format!(
                "{} (pid {}, {})",
                self.name,
                self.pid,
                printable(&e.to_string_lossy())
            ),
            None => format!("{} (pid {})", self.name, self.pid),
        }
    }
}

/// The binary `path` names, as the kernel knows it (device and inode), with its size.
fn file_id(path: &Path) -> Option<(u64, u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::metadata(path).ok()?;
    Some((m.dev(), m.ino(), m.len()))
}

/// Whether process `pid` runs the program at `path`: the same file (under any name, through
/// any link, even one since removed or replaced on disk: /proc/PID/exe follows the file the
/// process runs, not its name), or a copy of it byte for byte.
fn runs(pid: i32, path: &Path) -> bool {
    let exe = PathBuf::from(format!("/proc/{pid}/exe"));
    let (Some(a), Some(b)) = (file_id(&exe), file_id(path)) else {
        return false;
    };
    if a == b {
        return true;
    }
    // A copy: the same size, then the same bytes (a binary of a few MiB, read only when the
    // lock is found held by what a run left behind).
    a.2 == b.2
        && a.2 <= 256 << 20
        && matches!(
            (std::fs::read(&exe), std::fs::read(path)),
            (Ok(x), Ok(y)) if x == y
        )
}

/// This process's binary, as the kernel knows it.
const OWN: &str = "/proc/self/exe";

/// What an interrupted run left holding the lock.
#[derive(Debug, PartialEq)]
enum Left {
    /// fio or its job processes: the fio binary this run uses, whatever they are called.
    Fio,
    /// The flush of its test file: processes running this very binary.
    Flush,
    /// Something else it started (a fio this run does not use, an older iopscheck binary).
    Unrecognised,
}

fn left(procs: &[Proc]) -> Left {
    // A process whose binary is no longer there is ending (the kernel lets go of it before it
    // closes the process's files, the lock last; a binary hidden from this user is not that): it says nothing of what the rest are. The
    // run's own detached child is often seen so, in the moment between its parent's exit and
    // its own.
    let ending = |p: &&Proc| {
        std::fs::read_link(format!("/proc/{}/exe", p.pid))
            .is_err_and(|e| e.kind() == std::io::ErrorKind::NotFound)
    };
    let live: Vec<&Proc> = procs.iter().filter(|p| !ending(p)).collect();
    let fio = crate::fio::installed::path();
    if let Some(f) = &fio
        && live.iter().any(|p| runs(p.pid, f))
    {
        return Left::Fio;
    }
    if live.iter().all(|p| runs(p.pid, Path::new(OWN))) {
        Left::Flush
    } else {
        Left::Unrecognised
    }
}

/// What holds the lock.
#[derive(Debug, PartialEq)]
enum Holder {
    /// A live iopscheck run: the process that wrote its id holds the lock, whatever its binary
    /// is called.
    Run(Proc),
    /// The run that took the lock (this id) is gone; processes it started still hold it: the
    /// flush of its test file, or fio's jobs.
    Leftover(i32, Vec<Proc>),
    /// A program that is not an iopscheck run took the lock; the one that took it first.
    Other(Vec<Proc>),
    /// Processes this user cannot see hold it.
    Unknown,
}

/// Who holds the flock of the file `lock`, from the kernel: each process (not this one) with a
/// descriptor of that file whose fdinfo shows the flock, and the id of the process that took
/// it (the kernel keeps the taker's id, even once it has ended).
fn lock_holders(lock: &File) -> (Option<i32>, Vec<i32>) {
    use std::os::unix::fs::MetadataExt;
    let Ok(me) = lock.metadata() else {
        return (None, vec![]);
    };
    let own = std::process::id() as i32;
    let mut taker = None;
    let mut holding = Vec::new();
    let Ok(procs) = std::fs::read_dir("/proc") else {
        return (None, vec![]);
    };
    for p in procs.flatten() {
        let Some(pid) = p.file_name().to_str().and_then(|n| n.parse::<i32>().ok()) else {
            continue;
        };
        if pid == own {
            continue;
        }
        // Another user's processes are not ours to see (EACCES): passed over.
        let Ok(fds) = std::fs::read_dir(format!("/proc/{pid}/fd")) else {
            continue;
        };
        for fd in fds.flatten() {
            let same = std::fs::metadata(fd.path())
                .is_ok_and(|m| m.dev() == me.dev() && m.ino() == me.ino());
            if !same {
                continue;
            }
            let info = std::fs::read_to_string(format!(
                "/proc/{pid}/fdinfo/{}",
                fd.file_name().to_string_lossy()
            ))
            .unwrap_or_default();
            // "lock:\t1: FLOCK  ADVISORY  WRITE 1234 fe:00:5457816 0 EOF"
            let took = info.lines().find_map(|l| {
                let f: Vec<&str> = l.strip_prefix("lock:")?.split_whitespace().collect();
                (f.get(1) == Some(&"FLOCK")).then(|| f.get(4)?.parse::<i32>().ok())?
            });
            if let Some(t) = took {
                taker = Some(t);
                if !holding.contains(&pid) {
                    holding.push(pid);
                }
            }
        }
    }
    holding.sort_unstable();
    (taker, holding)
}

/// A name any process may have chosen, with its control characters (an escape sequence for
/// the terminal) shown as `?`.
fn printable(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_control() { '?' } else { c })
        .collect()
}

/// The path of the binary a process runs (its /proc/PID/exe), for messages.
fn program(pid: i32) -> Option<PathBuf> {
    std::fs::read_link(format!("/proc/{pid}/exe")).ok()
}

/// What holds the lock, from the id its holder wrote (`recorded`) and the kernel's view.
fn holder(recorded: Option<i32>, taker: Option<i32>, holding: &[i32]) -> Holder {
    if holding.is_empty() {
        return Holder::Unknown;
    }
    let procs = |first: Option<i32>| -> Vec<Proc> {
        let mut v: Vec<Proc> = first.into_iter().map(Proc::of).collect();
        v.extend(
            holding
                .iter()
                .filter(|&&p| Some(p) != first)
                .map(|&p| Proc::of(p)),
        );
        v
    };
    if let Some(r) = recorded.filter(|r| holding.contains(r)) {
        return Holder::Run(Proc::of(r));
    }
    match taker {
        Some(t) if holding.contains(&t) => {
            // Our own binary that has not yet written its id (it took the lock an instant ago).
            if runs(t, Path::new(OWN)) {
                Holder::Run(Proc::of(t))
            } else {
                Holder::Other(procs(Some(t)))
            }
        }
        // The taker is gone: what holds the lock now inherited it. Left by our run when the
        // taker is the run that wrote its id.
        Some(t) if Some(t) == recorded => Holder::Leftover(t, procs(None)),
        _ => Holder::Other(procs(None)),
    }
}

/// "pid 12" or "pids 12, 13".
fn pids(procs: &[Proc]) -> String {
    let ids: Vec<String> = procs.iter().map(|p| p.pid.to_string()).collect();
    format!(
        "pid{} {}",
        if ids.len() == 1 { "" } else { "s" },
        ids.join(", ")
    )
}

/// "fio (pid 12, /tmp/fio), sleep (pid 13, /usr/bin/sleep)".
fn described(procs: &[Proc]) -> String {
    procs.iter().map(Proc::shown).collect::<Vec<_>>().join(", ")
}

/// "flock (pid 12), sleep (pid 13)".
fn named(procs: &[Proc]) -> String {
    procs
        .iter()
        .map(|p| format!("{} (pid {})", p.name, p.pid))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The id the lock's last holder wrote.
fn recorded(file: &mut File) -> Option<i32> {
    let mut text = String::new();
    file.seek(SeekFrom::Start(0)).ok()?;
    file.read_to_string(&mut text).ok()?;
    text.trim().parse::<i32>().ok()
}

impl HostLock {
    pub fn acquire(wait: bool, ctx: &Ctx) -> anyhow::Result<HostLock> {
        let path = lock_path()?;
        let shown = path.display();
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .mode(0o644)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(&path)
            .map_err(|e| lock_error(format!("cannot open the run lock {shown}: {e}")))?;
        let flush_wait = flush_wait();
        let mut unseen = 0;
        loop {
            match file.try_lock() {
                Ok(()) => break,
                Err(std::fs::TryLockError::WouldBlock) => {}
                Err(std::fs::TryLockError::Error(e)) => {
                    return Err(lock_error(format!("run lock {shown}: {e}")));
                }
            }
            let (taker, holding) = lock_holders(&file);
            let h = holder(recorded(&mut file), taker, &holding);
            match h {
                Holder::Leftover(run, procs) => {
                    let kind = left(&procs);
                    let what = match kind {
                        Left::Fio => format!("its fio job is still running ({})", pids(&procs)),
                        Left::Flush => format!(
                            "its test data is still being flushed to disk ({})",
                            pids(&procs)
                        ),
                        Left::Unrecognised => format!(
                            "processes it started still hold the run lock: {}",
                            described(&procs)
                        ),
                    };
                    if wait {
                        ctx.note(format!(
                            "the previous run (pid {run}) was interrupted and {what}; waiting for it to end…"
                        ));
                        block(&file, &shown)?;
                        break;
                    }
                    ctx.note(format!(
                        "the previous run (pid {run}) was interrupted and {what}; waiting up to {}s for it to end…",
                        flush_wait.as_secs()
                    ));
                    if lock_within(&file, flush_wait) {
                        break;
                    }
                    // Said as it stands now, not as it stood a wait ago.
                    let (taker, holding) = lock_holders(&file);
                    let (procs, kind) = match holder(recorded(&mut file), taker, &holding) {
                        Holder::Leftover(_, now) if !now.is_empty() => {
                            let k = left(&now);
                            (now, k)
                        }
                        _ => (procs, kind),
                    };
                    let secs = flush_wait.as_secs();
                    return Err(lock_error(match kind {
                        Left::Fio => format!(
                            "fio ({}), started by the interrupted run (pid {run}), is still running after {secs}s and holds the run lock {shown}; measuring now would measure alongside it: end it (kill {}) and run again, or pass --wait",
                            pids(&procs),
                            procs
                                .iter()
                                .map(|p| p.pid.to_string())
                                .collect::<Vec<_>>()
                                .join(" ")
                        ),
                        Left::Flush => format!(
                            "the previous run's test data is still being flushed to disk after {secs}s ({}, lock {shown}); measuring now would measure alongside that flush: try again later, or pass --wait",
                            pids(&procs)
                        ),
                        Left::Unrecognised => format!(
                            "processes started by the interrupted run (pid {run}) still hold the run lock {shown} after {secs}s: {}; measuring now could measure alongside them: let them end, or end them, and run again, or pass --wait",
                            described(&procs)
                        ),
                    }));
                }
                Holder::Run(p) => {
                    let prog = program(p.pid)
                        .map(|e| format!(", {}", printable(&e.to_string_lossy())))
                        .unwrap_or_default();
                    if wait {
                        ctx.note(format!(
                            "waiting for another iopscheck run on this host (pid {}{prog}) to finish…",
                            p.pid
                        ));
                        block(&file, &shown)?;
                        break;
                    }
                    return Err(lock_error(format!(
                        "another iopscheck run is testing this host right now (pid {}{prog}; lock {shown}); two runs at once disturb each other's numbers: let it finish, or pass --wait to queue behind it",
                        p.pid
                    )));
                }
                Holder::Other(procs) => {
                    if wait {
                        ctx.note(format!(
                            "the run lock {shown} is held by another program, not an iopscheck run: {}; waiting for it to let go…",
                            named(&procs)
                        ));
                        block(&file, &shown)?;
                        break;
                    }
                    return Err(lock_error(format!(
                        "the run lock {shown} is held by another program, not an iopscheck run: {}; iopscheck does not test while it is held: end that program, or pass --wait to queue behind it",
                        named(&procs)
                    )));
                }
                Holder::Unknown => {
                    // Let go between the try and the look (then the next try takes it), or
                    // held out of this user's sight.
                    if unseen < 3 {
                        unseen += 1;
                        std::thread::sleep(Duration::from_millis(50));
                        continue;
                    }
                    if wait {
                        ctx.note(format!(
                            "waiting for whatever holds the run lock {shown} to let go…"
                        ));
                        block(&file, &shown)?;
                        break;
                    }
                    return Err(lock_error(format!(
                        "the run lock {shown} is held by a process this user cannot see (another user's iopscheck run, or another program); two runs at once disturb each other's numbers: let it finish, or pass --wait to queue behind it"
                    )));
                }
            }
        }
        // Ours now: say who holds it, for the next run's message.
        let _ = file.set_len(0);
        let _ = file.seek(SeekFrom::Start(0));
        let _ = writeln!(file, "{}", std::process::id());
        crate::syscalls::set_run_lock_fd(file.as_raw_fd());
        Ok(HostLock { _file: file })
    }
}

/// Waits for the lock for as long as it takes (`--wait`).
fn block(file: &File, shown: &std::path::Display<'_>) -> anyhow::Result<()> {
    file.lock()
        .map_err(|e| lock_error(format!("run lock {shown}: {e}")))
}

impl Drop for HostLock {
    fn drop(&mut self) {
        crate::syscalls::set_run_lock_fd(-1);
    }
}

/// `$IOPSCHECK_FLUSH_WAIT` (a duration: 30s, 5m), else [`FLUSH_WAIT`].
fn flush_wait() -> Duration {
    std::env::var("IOPSCHECK_FLUSH_WAIT")
        .ok()
        .and_then(|v| crate::units::parse_duration(&v).ok())
        .unwrap_or(FLUSH_WAIT)
}

/// Tries to take the lock until `limit` has passed.
fn lock_within(file: &File, limit: Duration) -> bool {
    let t = Instant::now();
    loop {
        match file.try_lock() {
            Ok(()) => return true,
            Err(std::fs::TryLockError::WouldBlock) if t.elapsed() < limit => {
                std::thread::sleep(Duration::from_millis(100));
            }
            Err(_) => return false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_holder_that_is_ending_does_not_make_a_flush_unrecognised() {
        // This test process runs its own binary, as a run's flush child does; a process that
        // has ended is what an ending one looks like from /proc (no binary to read).
        let mut gone = std::process::Command::new("true").spawn().unwrap();
        let pid = gone.id() as i32;
        gone.wait().unwrap();
        let me = Proc::of(std::process::id() as i32);
        let ending = Proc {
            pid,
            name: "iopscheck".into(),
        };
        assert_eq!(left(std::slice::from_ref(&me)), Left::Flush);
        assert_eq!(left(&[me, ending.clone()]), Left::Flush);
        assert_eq!(left(&[ending]), Left::Flush);
    }
}
