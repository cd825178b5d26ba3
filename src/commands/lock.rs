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

/// Root's lock directory: made by iopscheck, 0755 and owned by root, so no other user can
/// put a file of their own (a FIFO, a file they keep flocked, a link) where root's scheduled
/// check takes its lock. Not /run/lock, which is world-writable (1777) on Debian and others.
pub const ROOT_LOCK_DIR: &str = "/run/iopscheck";

/// The run lock's path, and what named it, for messages: `IOPSCHECK_LOCK_FILE X` when the
/// environment chose it, else `the run lock X`.
pub struct LockPath {
    pub path: PathBuf,
    pub shown: String,
}

/// `$IOPSCHECK_LOCK_FILE`, else `/run/iopscheck/iopscheck.lock` for root ([`ROOT_LOCK_DIR`]),
/// else `$XDG_RUNTIME_DIR/iopscheck.lock`, else `iopscheck/run.lock` in the user's state
/// directory (`$XDG_STATE_HOME`, `~/.local/state`), created private: never a shared directory
/// such as /tmp or /run/lock, where another user could create the file first and hold it.
pub fn lock_path() -> anyhow::Result<LockPath> {
    if let Some(p) = std::env::var_os("IOPSCHECK_LOCK_FILE").filter(|v| !v.is_empty()) {
        let path = PathBuf::from(p);
        let shown = format!("IOPSCHECK_LOCK_FILE {}", path.display());
        return Ok(LockPath { path, shown });
    }
    let path = default_lock_path()?;
    let shown = format!("the run lock {}", path.display());
    Ok(LockPath { path, shown })
}

fn default_lock_path() -> anyhow::Result<PathBuf> {
    if crate::syscalls::is_root() && Path::new("/run").is_dir() {
        return Ok(root_lock_dir(Path::new(ROOT_LOCK_DIR))?.join("iopscheck.lock"));
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

/// Root's lock directory `dir`, created 0755 where it is missing; refused where it is there
/// but not as iopscheck makes it (a link, not a directory, another owner, writable by others),
/// or where the path to it could be changed by another user (crate::trust).
fn root_lock_dir(dir: &Path) -> anyhow::Result<PathBuf> {
    use std::os::unix::fs::MetadataExt;
    let shown = dir.display();
    let fix = format!(
        "remove it (iopscheck creates {shown} itself, 0755, owned by root) or set IOPSCHECK_LOCK_FILE"
    );
    match std::fs::DirBuilder::new().mode(0o755).create(dir) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => {
            return Err(lock_error(format!(
                "cannot create {shown} for the run lock: {e}"
            )));
        }
    }
    let m = std::fs::symlink_metadata(dir)
        .map_err(|e| lock_error(format!("the run lock's directory {shown}: {e}")))?;
    let why = if m.file_type().is_symlink() {
        Some("is a symbolic link".to_string())
    } else if !m.is_dir() {
        Some(format!("is {}, not a directory", kind(&m)))
    } else if m.uid() != crate::syscalls::euid() {
        Some(format!("is owned by uid {}, not root", m.uid()))
    } else if m.mode() & 0o022 != 0 {
        Some(format!(
            "is writable by others (mode {:o})",
            m.mode() & 0o7777
        ))
    } else {
        None
    };
    if let Some(why) = why {
        return Err(lock_error(format!(
            "the run lock's directory {shown} {why}: another user could put the lock there; {fix}"
        )));
    }
    crate::trust::check(&dir.join("iopscheck.lock")).map_err(|u| {
        lock_error(format!(
            "the run lock: {u}: another user could have put it there or changed it; remove it, or set IOPSCHECK_LOCK_FILE to a place only root can write"
        ))
    })?;
    Ok(dir.to_path_buf())
}

/// What a file that is not a regular file is, in words.
fn kind(m: &std::fs::Metadata) -> &'static str {
    crate::syscalls::file_kind(m)
}

/// The most a lock file holds: a process id and a newline.
const MAX_LOCK_BYTES: u64 = 32;

/// Whether `text` is what a run lock holds: nothing (just made, or being rewritten), or a
/// process id, whole or being written, with its newline.
fn is_lock_content(text: &[u8]) -> bool {
    let digits = text.strip_suffix(b"\n").unwrap_or(text);
    digits.iter().all(u8::is_ascii_digit)
}

/// Opens the run lock without ever opening for writing what is not a lock iopscheck made:
/// anything that is not a regular file is refused before it is opened (a device's first bytes,
/// a FIFO that would hang), and again from the open descriptor (O_NOFOLLOW, O_NONBLOCK: a
/// link is not followed, a FIFO swapped in meanwhile does not block); a regular file is taken
/// only if it has one name and holds nothing but a process id, and, as root, if root owns it.
fn open_lock(lp: &LockPath) -> anyhow::Result<File> {
    use std::os::unix::fs::MetadataExt;
    let shown = &lp.shown;
    let refuse = |why: String| {
        lock_error(format!(
            "{shown}: {why}; the run lock is a small file of iopscheck's own, holding a process id, and iopscheck writes into nothing else: remove it or name another file"
        ))
    };
    if let Ok(m) = std::fs::symlink_metadata(&lp.path)
        && !m.is_file()
    {
        return Err(refuse(format!("is {}", kind(&m))));
    }
    let mut file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o644)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC | libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(&lp.path)
        .map_err(|e| match e.raw_os_error() {
            Some(libc::ELOOP) => refuse("is a symbolic link".into()),
            _ => lock_error(format!("{shown}: cannot open it: {e}")),
        })?;
    let m = file
        .metadata()
        .map_err(|e| lock_error(format!("{shown}: {e}")))?;
    if !m.is_file() {
        return Err(refuse(format!("is {}", kind(&m))));
    }
    // Root writes only into a lock of its own; a user may share one another user made
    // writable for it (contract.md), which holds a process id and nothing else all the same.
    if crate::syscalls::is_root() && m.uid() != crate::syscalls::euid() {
        return Err(refuse(format!("is owned by uid {}, not by root", m.uid())));
    }
    if m.nlink() != 1 {
        return Err(refuse(format!(
            "has {} names (hard links): it is another file's too",
            m.nlink()
        )));
    }
    if !lock_content(&mut file) {
        return Err(refuse(
            "holds something other than a process id, so it is not a run lock".into(),
        ));
    }
    // Back to blocking, as a regular file is anyway, for the processes that inherit it.
    // SAFETY: fcntl on a descriptor we own, with flags read from it.
    unsafe {
        let fd = file.as_raw_fd();
        let fl = libc::fcntl(fd, libc::F_GETFL);
        if fl >= 0 {
            libc::fcntl(fd, libc::F_SETFL, fl & !libc::O_NONBLOCK);
        }
    }
    Ok(file)
}

/// Whether the open lock file holds what a run lock holds (read at most a few bytes).
fn lock_content(file: &mut File) -> bool {
    let mut text = Vec::new();
    file.seek(SeekFrom::Start(0)).is_ok()
        && (&mut *file)
            .take(MAX_LOCK_BYTES + 1)
            .read_to_end(&mut text)
            .is_ok()
        && text.len() as u64 <= MAX_LOCK_BYTES
        && is_lock_content(&text)
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
    file.take(MAX_LOCK_BYTES).read_to_string(&mut text).ok()?;
    text.trim().parse::<i32>().ok()
}

impl HostLock {
    pub fn acquire(wait: bool, ctx: &Ctx) -> anyhow::Result<HostLock> {
        let lp = lock_path()?;
        let shown = lp.path.display();
        let mut file = open_lock(&lp)?;
        let flush_wait = flush_wait()?;
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
        // Ours now: say who holds it, for the next run's message; cut only once it is seen,
        // under the lock, to hold no more than a process id (a file the lock's holder could
        // change meanwhile is its own, but is checked again all the same).
        if !lock_content(&mut file) {
            return Err(lock_error(format!(
                "{}: came to hold something other than a process id while this run waited; iopscheck writes into nothing but its own lock: remove it or name another file",
                lp.shown
            )));
        }
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

/// `$IOPSCHECK_FLUSH_WAIT` (a duration: 30s, 5m), else [`FLUSH_WAIT`]; a value that is not a
/// duration is an error that names the variable (`run` checks it before anything runs).
pub fn flush_wait() -> anyhow::Result<Duration> {
    env_duration("IOPSCHECK_FLUSH_WAIT", FLUSH_WAIT)
}

/// The duration `$name` gives, else `default` (unset or empty, as the scheduled script's env
/// file leaves a key it does not set); a value that is not a duration, or not UTF-8, is a
/// usage error naming the variable and the value, never the default in silence.
pub fn env_duration(name: &str, default: Duration) -> anyhow::Result<Duration> {
    let v = match std::env::var(name) {
        Ok(v) if v.trim().is_empty() => return Ok(default),
        Ok(v) => v,
        Err(std::env::VarError::NotPresent) => return Ok(default),
        Err(std::env::VarError::NotUnicode(_)) => {
            return Err(crate::error::usage(format!("{name}: not valid UTF-8")));
        }
    };
    crate::units::parse_duration(&v).map_err(|_| {
        crate::error::usage(format!(
            "{name}: '{}' is not a duration (e.g. 30s, 5m; 0 for none)",
            crate::printable::line(v.trim())
        ))
    })
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
