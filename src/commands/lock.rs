//! One run per host at a time: two runs at once would disturb each other's numbers. The lock
//! is an flock on a small file of our own, released when the process ends, however it ends.
//!
//! The holder writes its process id into the file. After an interrupted run the lock is held
//! a little longer by the process that finishes flushing the run's (already removed) test file
//! (testfile::detach_descriptors): the run itself is gone. A new run then says so and waits for
//! that flush, for a bounded time, rather than claim another run is testing the host.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::app::Ctx;
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
    if crate::sys::is_root() {
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

/// What holds the lock, from the process id its holder wrote.
enum Holder {
    /// A live iopscheck run.
    Run(i32),
    /// The run that wrote its id is gone: what holds the lock is its flush.
    Flushing(i32),
    Unknown,
}

fn holder(file: &mut File) -> Holder {
    let mut text = String::new();
    if file.seek(SeekFrom::Start(0)).is_err() || file.read_to_string(&mut text).is_err() {
        return Holder::Unknown;
    }
    let Ok(pid) = text.trim().parse::<i32>() else {
        return Holder::Unknown;
    };
    match std::fs::read_to_string(format!("/proc/{pid}/comm")) {
        Ok(comm) if comm.trim() == "iopscheck" => Holder::Run(pid),
        Ok(_) => Holder::Flushing(pid),
        Err(_) if Path::new("/proc/self").exists() => Holder::Flushing(pid),
        Err(_) => Holder::Unknown,
    }
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
        match file.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => match holder(&mut file) {
                Holder::Flushing(pid) if !wait => {
                    ctx.note(format!(
                        "the previous run (pid {pid}) was interrupted and its test data is still being flushed to disk; waiting up to {}s for the flush to finish…",
                        flush_wait.as_secs()
                    ));
                    if !lock_within(&file, flush_wait) {
                        return Err(lock_error(format!(
                            "the previous run's test data is still being flushed to disk after {}s (lock {shown}); measuring now would measure alongside that flush: try again later, or pass --wait",
                            flush_wait.as_secs()
                        )));
                    }
                }
                _ if wait => {
                    ctx.note("waiting for another iopscheck run on this host to finish…");
                    file.lock()
                        .map_err(|e| lock_error(format!("run lock {shown}: {e}")))?;
                }
                h => {
                    let who = match h {
                        Holder::Run(pid) => format!("pid {pid}, lock {shown}"),
                        _ => format!("lock {shown}"),
                    };
                    return Err(lock_error(format!(
                        "another iopscheck run is testing this host right now ({who}); two runs at once disturb each other's numbers: let it finish, or pass --wait to queue behind it"
                    )));
                }
            },
            Err(std::fs::TryLockError::Error(e)) => {
                return Err(lock_error(format!("run lock {shown}: {e}")));
            }
        }
        // Ours now: say who holds it, for the next run's message.
        let _ = file.set_len(0);
        let _ = file.seek(SeekFrom::Start(0));
        let _ = writeln!(file, "{}", std::process::id());
        Ok(HostLock { _file: file })
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
