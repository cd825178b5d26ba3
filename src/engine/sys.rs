//! Thin, checked wrappers over the system calls the engine makes outside the hot path:
//! reopening the caller's file through /proc/self/fd, fallocate, posix_fadvise, fsync,
//! pwrite-all, getrusage. Each failure becomes an [`EngineError`] whose `op` says what failed.

use std::ffi::CString;
use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::time::Duration;

use super::EngineError;
use crate::job::{Job, SyncMode};

pub fn errno() -> i32 {
    io::Error::last_os_error()
        .raw_os_error()
        .unwrap_or(libc::EIO)
}

pub fn io_err(op: impl Into<String>, errno: i32) -> EngineError {
    EngineError::Io {
        op: op.into(),
        source: io::Error::from_raw_os_error(errno),
    }
}

/// The sentence for a filesystem that refuses O_DIRECT, at open or on the first I/O.
pub fn direct_unsupported(what: &str, errno: i32) -> EngineError {
    EngineError::Unsupported(format!(
        "direct I/O (O_DIRECT) is not supported by this filesystem ({what}: {}); \
         run the job with direct=0 or test a directory on a filesystem that supports it \
         (ext4, xfs, btrfs…), and use a block size that is a multiple of the device's \
         logical block size",
        io::Error::from_raw_os_error(errno)
    ))
}

/// Opens a new descriptor on the caller's file through /proc/self/fd, so no path is resolved
/// that someone could have swapped, with the flags the job asks for (fio's
/// `generic_open_file`: O_RDWR, plus O_DIRECT for direct=1 and O_SYNC/O_DSYNC for sync=).
pub fn reopen(file: &File, flags: i32) -> Result<OwnedFd, EngineError> {
    let path = format!("/proc/self/fd/{}", file.as_raw_fd());
    let c = CString::new(path.clone()).expect("no NUL in a /proc path");
    loop {
        // SAFETY: a valid NUL-terminated path; the returned fd is owned below.
        let fd = unsafe { libc::open(c.as_ptr(), flags | libc::O_CLOEXEC) };
        if fd >= 0 {
            // SAFETY: fd was just returned by open and is owned by nobody else.
            return Ok(unsafe { OwnedFd::from_raw_fd(fd) });
        }
        let e = errno();
        match e {
            libc::EINTR => continue,
            libc::EINVAL if flags & libc::O_DIRECT != 0 => {
                return Err(direct_unsupported("open", e));
            }
            libc::ENOENT => {
                return Err(EngineError::Unsupported(format!(
                    "cannot reopen the test file through {path}: /proc is not mounted here"
                )));
            }
            _ => return Err(io_err(format!("open {path}"), e)),
        }
    }
}

/// The open flags for a job's descriptor.
pub fn job_open_flags(job: &Job) -> i32 {
    // A job that only reads opens its file read-only: a raw device under a read job is never
    // open for writing (commands/run_devices.rs).
    let mut f = if job.rw.writes() {
        libc::O_RDWR
    } else {
        libc::O_RDONLY
    };
    if job.direct {
        f |= libc::O_DIRECT;
    }
    match job.sync {
        SyncMode::None => {}
        SyncMode::Sync => f |= libc::O_SYNC,
        SyncMode::Dsync => f |= libc::O_DSYNC,
    }
    f
}

/// fallocate(fd, 0, 0, size) as fio's default `fallocate=native`. Filesystems without it
/// (EOPNOTSUPP, ENOSYS) are skipped, as fio does; anything else, above all ENOSPC, is an error.
pub fn fallocate(fd: RawFd, size: u64) -> Result<(), EngineError> {
    loop {
        // SAFETY: plain syscall on a descriptor we own.
        let r = unsafe { libc::fallocate(fd, 0, 0, size as libc::off_t) };
        if r == 0 {
            return Ok(());
        }
        match errno() {
            libc::EINTR => continue,
            libc::EOPNOTSUPP | libc::ENOSYS => return Ok(()),
            e => return Err(io_err(format!("fallocate of {size} bytes"), e)),
        }
    }
}

/// posix_fadvise over [0, len). Advice is best effort, as in fio: failures are ignored.
pub fn fadvise(fd: RawFd, len: u64, advice: i32) {
    // SAFETY: plain syscall; the result is advisory only.
    unsafe {
        libc::posix_fadvise(fd, 0, len as libc::off_t, advice);
    }
}

/// Closes every descriptor except those in `keep`, with only async-signal-safe calls (for a
/// child between fork and _exit).
///
/// # Safety
/// Only for a freshly forked child: descriptors owned by Rust objects are closed under them.
pub unsafe fn close_all_but(keep: &[RawFd]) {
    let close_range = |first: u32, last: u32| -> bool {
        // SAFETY: plain syscall; the range may be empty.
        unsafe { libc::syscall(libc::SYS_close_range, first, last, 0) == 0 }
    };
    // The kept descriptors in order, without allocating: at most two are ever kept.
    let (a, b) = match keep {
        [] => (u32::MAX, u32::MAX),
        [x] => (*x as u32, u32::MAX),
        [x, y, ..] => ((*x).min(*y) as u32, (*x).max(*y) as u32),
    };
    let mut ok = true;
    let mut from = 0u32;
    for k in [a, b] {
        if k == u32::MAX {
            break;
        }
        if k > from {
            ok &= close_range(from, k - 1);
        }
        from = k + 1;
    }
    ok &= close_range(from, u32::MAX);
    if !ok {
        // Linux before 5.9: close what a process like ours can have open.
        for fd in 0..65_536 {
            if !keep.contains(&fd) {
                // SAFETY: closing a descriptor number; EBADF is harmless here.
                unsafe { libc::close(fd) };
            }
        }
    }
}

/// The end fsync, done by a forked child that this thread waits for. The kernel does the same
/// work as an fsync on this thread (vfs_fsync of the same file, timed the same way, to within
/// the fork's fraction of a millisecond), but a flush of gigabytes can take minutes in
/// uninterruptible sleep, and a process cannot exit while one of its threads is in it. With
/// the flush in a child, SIGINT during the final fsync ends iopscheck at once; the orphaned
/// child finishes the flush of the already unlinked file and exits.
///
/// The child keeps the run lock (crate::syscalls::run_lock_fd) until the file is closed: the next
/// run waits for a flush left running by an interrupted one rather than measure beside it.
pub fn fsync_in_child(fd: RawFd) -> io::Result<()> {
    // Read before the fork: the child only uses the number.
    let lock = crate::syscalls::run_lock_fd().unwrap_or(fd);
    // SAFETY: the child calls only async-signal-safe functions (fsync, _exit) before exiting.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(io::Error::last_os_error());
    }
    if pid == 0 {
        // SAFETY: child: close, fsync and _exit only; errno values fit in an exit status.
        unsafe {
            // Keep nothing but the file and the run lock: an orphaned child must not hold the
            // parent's stdout pipe (a `| tee` would wait for the flush).
            close_all_but(&[fd, lock]);
            let code = if libc::fsync(fd) == 0 {
                0
            } else {
                *libc::__errno_location() & 0xff
            };
            // The file first (its last close may wait for writeback), the lock last, at exit.
            libc::close(fd);
            libc::_exit(code);
        }
    }
    let mut status = 0;
    loop {
        // SAFETY: waiting for our own child.
        let r = unsafe { libc::waitpid(pid, &mut status, 0) };
        if r == pid {
            break;
        }
        let e = io::Error::last_os_error();
        if e.raw_os_error() != Some(libc::EINTR) {
            return Err(e);
        }
    }
    match (libc::WIFEXITED(status), libc::WEXITSTATUS(status)) {
        (true, 0) => Ok(()),
        (true, code) => Err(io::Error::from_raw_os_error(code)),
        _ => Err(io::Error::other("the fsync child ended abnormally")),
    }
}

pub fn fsync(fd: RawFd, data_only: bool) -> io::Result<()> {
    loop {
        // SAFETY: plain syscall on a descriptor we own.
        let r = unsafe {
            if data_only {
                libc::fdatasync(fd)
            } else {
                libc::fsync(fd)
            }
        };
        if r == 0 {
            return Ok(());
        }
        let e = errno();
        if e != libc::EINTR {
            return Err(io::Error::from_raw_os_error(e));
        }
    }
}

/// pwrite until all of `buf` is written (a short write is re-issued for the rest).
pub fn pwrite_all(fd: RawFd, buf: &[u8], offset: u64) -> io::Result<()> {
    let mut done = 0usize;
    while done < buf.len() {
        // SAFETY: the pointer and length stay within `buf`.
        let r = unsafe {
            libc::pwrite(
                fd,
                buf[done..].as_ptr().cast(),
                buf.len() - done,
                (offset + done as u64) as libc::off_t,
            )
        };
        if r < 0 {
            let e = errno();
            if e == libc::EINTR {
                continue;
            }
            return Err(io::Error::from_raw_os_error(e));
        }
        if r == 0 {
            return Err(io::Error::from_raw_os_error(libc::EIO));
        }
        done += r as usize;
    }
    Ok(())
}

/// User and system CPU time of the whole process (all threads, glibc's AIO helpers included).
pub fn cpu_times() -> (Duration, Duration) {
    // SAFETY: getrusage fills the struct we pass.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe {
        libc::getrusage(libc::RUSAGE_SELF, &mut ru);
    }
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    (tv(ru.ru_utime), tv(ru.ru_stime))
}
