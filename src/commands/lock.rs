//! One run per host at a time: two runs at once would disturb each other's numbers. The lock
//! is an flock on a small file of our own, released when the process ends, however it ends.

use std::fs::{File, OpenOptions};
use std::os::unix::fs::OpenOptionsExt;
use std::path::PathBuf;

use crate::app::{Ctx, usage};

pub struct HostLock {
    _file: File,
}

/// `$IOPSCHECK_LOCK_FILE`, else /run/lock/iopscheck.lock for root, else
/// `$XDG_RUNTIME_DIR/iopscheck.lock`, else /tmp/iopscheck-<uid>.lock.
pub fn lock_path() -> PathBuf {
    if let Some(p) = std::env::var_os("IOPSCHECK_LOCK_FILE").filter(|v| !v.is_empty()) {
        return PathBuf::from(p);
    }
    // SAFETY: geteuid has no preconditions.
    let uid = unsafe { libc::geteuid() };
    if uid == 0 {
        for dir in ["/run/lock", "/run"] {
            if std::path::Path::new(dir).is_dir() {
                return PathBuf::from(dir).join("iopscheck.lock");
            }
        }
    }
    if let Some(d) = std::env::var_os("XDG_RUNTIME_DIR").filter(|v| !v.is_empty()) {
        return PathBuf::from(d).join("iopscheck.lock");
    }
    PathBuf::from(format!("/tmp/iopscheck-{uid}.lock"))
}

impl HostLock {
    pub fn acquire(wait: bool, ctx: &Ctx) -> anyhow::Result<HostLock> {
        let path = lock_path();
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .mode(0o644)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(&path)
            .map_err(|e| usage(format!("cannot open the run lock {}: {e}", path.display())))?;
        match file.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) if wait => {
                ctx.note("waiting for another iopscheck run on this host to finish…");
                file.lock()
                    .map_err(|e| usage(format!("run lock {}: {e}", path.display())))?;
            }
            Err(std::fs::TryLockError::WouldBlock) => {
                return Err(usage(format!(
                    "another iopscheck run is testing this host right now (lock {}); two runs at once disturb each other's numbers: let it finish, or pass --wait to queue behind it",
                    path.display()
                )));
            }
            Err(std::fs::TryLockError::Error(e)) => {
                return Err(usage(format!("run lock {}: {e}", path.display())));
            }
        }
        Ok(HostLock { _file: file })
    }
}
