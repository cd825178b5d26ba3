//! The few system calls iopscheck makes outside the engine, each behind a safe function: the
//! rest of the crate asks here instead of calling libc itself. The engine keeps its own, for
//! its I/O loop, in engine/sys.rs. Whole-file locks are std's `File::lock`/`try_lock` (flock
//! on Linux), never a libc call.
//!
//! Calls that stay `unsafe` where they are, and why:
//! - testfile::detach_descriptors forks: after a fork in a threaded process the child may only
//!   call async-signal-safe functions, a promise a safe wrapper could not keep for its callers.
//! - fio_runner's `pre_exec` hook runs between fork and exec, for the same reason.
//! - bundle.rs links its O_TMPFILE into place (linkat through /proc/self/fd), one call that
//!   belongs with the atomic-write code it is part of.

use std::ffi::CStr;
use std::fs::File;
use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// The effective user id.
pub fn euid() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

/// The effective group id.
pub fn egid() -> u32 {
    // SAFETY: getegid has no preconditions and cannot fail.
    unsafe { libc::getegid() }
}

/// The supplementary groups of this process (getgroups(2)); none where it cannot say.
pub fn groups() -> Vec<u32> {
    // SAFETY: with a size of 0 getgroups writes nothing and returns how many there are.
    let n = unsafe { libc::getgroups(0, std::ptr::null_mut()) };
    if n <= 0 {
        return Vec::new();
    }
    let mut list = vec![0 as libc::gid_t; n as usize];
    // SAFETY: the buffer holds `n` group ids; getgroups writes at most that many.
    let got = unsafe { libc::getgroups(n, list.as_mut_ptr()) };
    if got < 0 {
        return Vec::new();
    }
    list.truncate(got as usize);
    list
}

/// The device and inode of the regular file stdin was redirected from (`< file`), if it was.
pub fn stdin_file() -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    let fd = io::stdin().as_fd().try_clone_to_owned().ok()?;
    let m = File::from(fd).metadata().ok()?;
    m.is_file().then(|| (m.dev(), m.ino()))
}

/// The file standard output is redirected to (`>> history.jsonl`): its device and inode, where
/// it is a regular file.
pub fn stdout_file() -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    let fd = io::stdout().as_fd().try_clone_to_owned().ok()?;
    let m = File::from(fd).metadata().ok()?;
    m.is_file().then(|| (m.dev(), m.ino()))
}

/// Whether standard output is redirected to the file at `path` (the same device and inode).
pub fn stdout_is(path: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    stdout_file().is_some_and(|(dev, ino)| {
        std::fs::metadata(path).is_ok_and(|m| m.dev() == dev && m.ino() == ino)
    })
}

/// What a file is, in words, for the errors that refuse it ("a named pipe (FIFO)"): one list
/// for the history, the policy, the keys and the lock.
pub fn file_kind(m: &std::fs::Metadata) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    let t = m.file_type();
    if t.is_dir() {
        "a directory"
    } else if t.is_symlink() {
        "a symbolic link"
    } else if t.is_fifo() {
        "a named pipe (FIFO)"
    } else if t.is_char_device() {
        "a character device"
    } else if t.is_block_device() {
        "a block device"
    } else if t.is_socket() {
        "a socket"
    } else if t.is_file() {
        "a regular file"
    } else {
        "not a file"
    }
}

/// Whether we run as root (effective uid 0): root's defaults and checks differ.
pub fn is_root() -> bool {
    euid() == 0
}

/// Whether this process may create and remove files in `dir` (write and search permission),
/// as the kernel decides for the real user, without creating anything.
pub fn can_create_in(dir: &Path) -> io::Result<()> {
    let c = std::ffi::CString::new(dir.as_os_str().as_bytes())
        .map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
    // SAFETY: a valid NUL-terminated path; access reads nothing else.
    if unsafe { libc::access(c.as_ptr(), libc::W_OK | libc::X_OK) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Creates `name` in the directory `dir` exclusively (O_CREAT|O_EXCL), never through a
/// symbolic link, read-write, with `mode`.
pub fn create_new_at(dir: BorrowedFd<'_>, name: &CStr, mode: u32) -> io::Result<File> {
    // SAFETY: dir is an open descriptor for the call's length; name is NUL-terminated.
    let fd = unsafe {
        libc::openat(
            dir.as_raw_fd(),
            name.as_ptr(),
            libc::O_RDWR | libc::O_CREAT | libc::O_EXCL | libc::O_NOFOLLOW | libc::O_CLOEXEC,
            mode as libc::c_uint,
        )
    };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: fd is a fresh descriptor nobody else owns.
    Ok(unsafe { File::from_raw_fd(fd) })
}

/// Creates an unnamed file in the directory `dir` (O_TMPFILE), read-write, with `mode`: it has
/// no name until [`link_unnamed_at`] gives it one, and vanishes with its last descriptor
/// before that. Filesystems without O_TMPFILE refuse it (EOPNOTSUPP; EISDIR or EINVAL on
/// kernels without it).
pub fn create_unnamed_in(dir: BorrowedFd<'_>, mode: u32) -> io::Result<File> {
    // SAFETY: dir is an open descriptor for the call's length; "." is NUL-terminated.
    let fd = unsafe {
        libc::openat(
            dir.as_raw_fd(),
            c".".as_ptr(),
            libc::O_TMPFILE | libc::O_RDWR | libc::O_CLOEXEC,
            mode as libc::c_uint,
        )
    };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: fd is a fresh descriptor nobody else owns.
    Ok(unsafe { File::from_raw_fd(fd) })
}

/// Gives the unnamed file `file` (from [`create_unnamed_in`]) the name `name` in `dir`. An
/// existing name is never replaced: EEXIST. Linked through /proc/self/fd, which needs no
/// privilege; where /proc is missing, with AT_EMPTY_PATH (which older kernels allow only
/// with CAP_DAC_READ_SEARCH).
pub fn link_unnamed_at(file: &File, dir: BorrowedFd<'_>, name: &CStr) -> io::Result<()> {
    let proc = std::ffi::CString::new(format!("/proc/self/fd/{}", file.as_raw_fd()))
        .expect("no NUL in a number");
    // SAFETY: valid descriptors and NUL-terminated paths that outlive the call.
    let rc = unsafe {
        libc::linkat(
            libc::AT_FDCWD,
            proc.as_ptr(),
            dir.as_raw_fd(),
            name.as_ptr(),
            libc::AT_SYMLINK_FOLLOW,
        )
    };
    if rc == 0 {
        return Ok(());
    }
    let e = io::Error::last_os_error();
    if e.raw_os_error() != Some(libc::ENOENT) {
        return Err(e);
    }
    // SAFETY: as above; "" with AT_EMPTY_PATH names the file itself.
    let rc = unsafe {
        libc::linkat(
            file.as_raw_fd(),
            c"".as_ptr(),
            dir.as_raw_fd(),
            name.as_ptr(),
            libc::AT_EMPTY_PATH,
        )
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// The (device, inode) of `name` in `dir`, without following a symbolic link.
pub fn id_at(dir: BorrowedFd<'_>, name: &CStr) -> io::Result<(u64, u64)> {
    let mut st = std::mem::MaybeUninit::<libc::stat>::uninit();
    // SAFETY: valid descriptor, NUL-terminated name, and a stat buffer fstatat fills.
    let rc = unsafe {
        libc::fstatat(
            dir.as_raw_fd(),
            name.as_ptr(),
            st.as_mut_ptr(),
            libc::AT_SYMLINK_NOFOLLOW,
        )
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: fstatat succeeded, so it filled the buffer.
    let st = unsafe { st.assume_init() };
    Ok((st.st_dev, st.st_ino))
}

/// Removes the file `name` in `dir`.
pub fn unlink_at(dir: BorrowedFd<'_>, name: &CStr) -> io::Result<()> {
    // SAFETY: valid descriptor and NUL-terminated name.
    if unsafe { libc::unlinkat(dir.as_raw_fd(), name.as_ptr(), 0) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Sets the extended attribute `name` of an open file.
pub fn set_xattr(f: &impl AsFd, name: &CStr, value: &[u8]) -> io::Result<()> {
    // SAFETY: valid descriptor, NUL-terminated name, and a value pointer with its length.
    let rc = unsafe {
        libc::fsetxattr(
            f.as_fd().as_raw_fd(),
            name.as_ptr(),
            value.as_ptr().cast(),
            value.len(),
            0,
        )
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Reads the extended attribute `name` of an open file into `buf`; returns its length.
pub fn get_xattr(f: &impl AsFd, name: &CStr, buf: &mut [u8]) -> io::Result<usize> {
    // SAFETY: valid descriptor, NUL-terminated name, and a buffer with its length.
    let n = unsafe {
        libc::fgetxattr(
            f.as_fd().as_raw_fd(),
            name.as_ptr(),
            buf.as_mut_ptr().cast(),
            buf.len(),
        )
    };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(n as usize)
}

/// The extended attribute `name` of the file at `path`, a symbolic link itself not followed
/// (lgetxattr); `None` where it has none or the filesystem keeps none.
pub fn path_xattr(path: &Path, name: &CStr) -> io::Result<Option<Vec<u8>>> {
    let c = std::ffi::CString::new(path.as_os_str().as_bytes())
        .map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
    let mut buf = vec![0u8; 1024];
    loop {
        // SAFETY: NUL-terminated path and name, and a buffer with its length.
        let n = unsafe {
            libc::lgetxattr(
                c.as_ptr(),
                name.as_ptr(),
                buf.as_mut_ptr().cast(),
                buf.len(),
            )
        };
        if n >= 0 {
            buf.truncate(n as usize);
            return Ok(Some(buf));
        }
        let e = io::Error::last_os_error();
        match e.raw_os_error() {
            Some(libc::ENODATA) | Some(libc::ENOTSUP) => return Ok(None),
            Some(libc::ERANGE) if buf.len() < 1 << 20 => buf.resize(buf.len() * 8, 0),
            _ => return Err(e),
        }
    }
}

/// This machine's host name, as the kernel has it (None if it cannot say).
pub fn hostname() -> Option<String> {
    let mut buf = [0u8; 256];
    // SAFETY: the buffer is valid for its length; gethostname NUL-terminates within it or
    // truncates, and we stop at the first NUL.
    let rc = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
    if rc != 0 {
        return None;
    }
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    Some(String::from_utf8_lossy(&buf[..end]).into_owned())
}

/// The size of a memory page, bytes (the unit of /proc/vmstat's page counts).
pub fn page_size() -> u64 {
    // SAFETY: sysconf has no preconditions.
    let n = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if n > 0 { n as u64 } else { 4096 }
}

/// What statvfs says of the filesystem holding `path`.
pub fn statvfs(path: &Path) -> io::Result<libc::statvfs> {
    let c = std::ffi::CString::new(path.as_os_str().as_bytes()).map_err(io::Error::other)?;
    let mut s = std::mem::MaybeUninit::<libc::statvfs>::uninit();
    // SAFETY: a NUL-terminated path and a struct statvfs fills.
    if unsafe { libc::statvfs(c.as_ptr(), s.as_mut_ptr()) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: statvfs succeeded, so it filled the struct.
    Ok(unsafe { s.assume_init() })
}

/// The run lock's descriptor while a run holds it, else -1 (commands/lock.rs). The processes
/// a run starts keep it open (the flush of its test file, fio and fio's jobs), so the lock is
/// free only when every one of them has ended.
static RUN_LOCK_FD: std::sync::atomic::AtomicI32 = std::sync::atomic::AtomicI32::new(-1);

pub fn set_run_lock_fd(fd: std::os::fd::RawFd) {
    RUN_LOCK_FD.store(fd, std::sync::atomic::Ordering::SeqCst);
}

/// The run lock's descriptor, if a run holds it (read before a fork: the child keeps it).
pub fn run_lock_fd() -> Option<std::os::fd::RawFd> {
    let fd = RUN_LOCK_FD.load(std::sync::atomic::Ordering::SeqCst);
    (fd >= 0).then_some(fd)
}

/// Points standard output at /dev/null (closing what it was: a pipe's reader sees its end).
/// Best effort.
pub fn stdout_to_null() {
    if let Ok(null) = std::fs::OpenOptions::new().write(true).open("/dev/null") {
        // SAFETY: dup2 of a descriptor `null` owns onto 1; no memory arguments.
        unsafe { libc::dup2(null.as_raw_fd(), 1) };
    }
}

/// Clears O_NONBLOCK on `f` (opened with it so that opening could not block).
pub fn set_blocking(f: &File) -> io::Result<()> {
    let fd = f.as_raw_fd();
    // SAFETY: fcntl on a descriptor `f` owns for the call's length; no memory arguments.
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    // SAFETY: as above.
    if flags < 0 || unsafe { libc::fcntl(fd, libc::F_SETFL, flags & !libc::O_NONBLOCK) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// The columns of the terminal on `fd`, if it is one and says.
pub fn terminal_columns(fd: BorrowedFd<'_>) -> Option<u16> {
    let mut ws = std::mem::MaybeUninit::<libc::winsize>::zeroed();
    // SAFETY: TIOCGWINSZ fills a winsize struct, which is ours.
    let r = unsafe { libc::ioctl(fd.as_raw_fd(), libc::TIOCGWINSZ, ws.as_mut_ptr()) };
    // SAFETY: zero-initialised, and filled by the ioctl where it succeeded.
    let ws = unsafe { ws.assume_init() };
    (r == 0 && ws.ws_col > 0).then_some(ws.ws_col)
}

/// Sends `sig` to the process `pid`. The caller names a process of its own (a child it has
/// not reaped, or one found below it), so the id cannot have been reused by a stranger.
pub fn send_signal(pid: i32, sig: i32) -> io::Result<()> {
    // SAFETY: kill has no memory arguments.
    if unsafe { libc::kill(pid, sig) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Every catchable signal held (blocked) in this thread until the guard is dropped: one
/// that arrives meanwhile is delivered then. For the few calls that must not be cut in two.
pub struct SignalsHeld(libc::sigset_t);

pub fn hold_signals() -> SignalsHeld {
    let mut all = std::mem::MaybeUninit::<libc::sigset_t>::uninit();
    let mut old = std::mem::MaybeUninit::<libc::sigset_t>::uninit();
    // SAFETY: sigfillset fills the set it is given; pthread_sigmask reads one set and fills
    // the other. SIGKILL and SIGSTOP in the set are ignored by the kernel.
    unsafe {
        libc::sigfillset(all.as_mut_ptr());
        libc::pthread_sigmask(libc::SIG_BLOCK, all.as_ptr(), old.as_mut_ptr());
        SignalsHeld(old.assume_init())
    }
}

impl Drop for SignalsHeld {
    fn drop(&mut self) {
        // SAFETY: restores the mask saved by hold_signals.
        unsafe { libc::pthread_sigmask(libc::SIG_SETMASK, &self.0, std::ptr::null_mut()) };
    }
}

/// Whether `sig` is ignored (SIG_IGN) in this process now.
pub fn signal_ignored(sig: i32) -> bool {
    let mut old = std::mem::MaybeUninit::<libc::sigaction>::zeroed();
    // SAFETY: with a null new action, sigaction only fills `old`, which is ours and zeroed.
    let r = unsafe { libc::sigaction(sig, std::ptr::null(), old.as_mut_ptr()) };
    // SAFETY: zero-initialised, and filled by sigaction where it succeeded.
    r == 0 && unsafe { old.assume_init() }.sa_sigaction == libc::SIG_IGN
}

/// Gives `sig` its default action back.
pub fn default_signal_action(sig: i32) {
    // SAFETY: resetting a disposition to SIG_DFL installs no handler of ours.
    unsafe { libc::signal(sig, libc::SIG_DFL) };
}

/// A duplicate of `f`'s descriptor (close-on-exec) at the lowest free number at least
/// `min`: the caller checks whether it got `min` itself.
pub fn dup_from(f: &impl AsFd, min: i32) -> io::Result<std::os::fd::OwnedFd> {
    // SAFETY: fcntl on a descriptor `f` owns for the call's length; no memory arguments.
    let fd = unsafe { libc::fcntl(f.as_fd().as_raw_fd(), libc::F_DUPFD_CLOEXEC, min) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: fd was just returned by fcntl and is owned by nobody else.
    Ok(unsafe { std::os::fd::OwnedFd::from_raw_fd(fd) })
}

/// Raises the soft limit on open descriptors to at least `n` (within the hard limit): true
/// when descriptors up to `n - 1` may be opened.
pub fn allow_descriptors(n: u64) -> bool {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes the struct we own.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) } != 0 {
        return false;
    }
    if lim.rlim_cur >= n as libc::rlim_t {
        return true;
    }
    if lim.rlim_max < n as libc::rlim_t {
        return false;
    }
    lim.rlim_cur = n as libc::rlim_t;
    // SAFETY: setrlimit reads the struct we own.
    unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &lim) == 0 }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::MetadataExt;

    #[test]
    fn a_file_is_created_once_found_by_its_id_and_removed() {
        let d = tempfile::tempdir().unwrap();
        let dir = File::open(d.path()).unwrap();
        let f = create_new_at(dir.as_fd(), c"x", 0o600).unwrap();
        let m = f.metadata().unwrap();
        assert_eq!(m.mode() & 0o777, 0o600);
        assert_eq!(id_at(dir.as_fd(), c"x").unwrap(), (m.dev(), m.ino()));
        let again = create_new_at(dir.as_fd(), c"x", 0o600).unwrap_err();
        assert_eq!(again.kind(), io::ErrorKind::AlreadyExists);
        unlink_at(dir.as_fd(), c"x").unwrap();
        assert_eq!(
            id_at(dir.as_fd(), c"x").unwrap_err().kind(),
            io::ErrorKind::NotFound
        );
    }

    #[test]
    fn a_symlink_is_never_created_through() {
        let d = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(d.path().join("target"), d.path().join("l")).unwrap();
        let dir = File::open(d.path()).unwrap();
        assert!(create_new_at(dir.as_fd(), c"l", 0o600).is_err());
        assert!(!d.path().join("target").exists());
    }

    #[test]
    fn the_host_name_and_a_filesystem_are_described() {
        assert!(hostname().is_some_and(|h| !h.is_empty()));
        let d = tempfile::tempdir().unwrap();
        assert!(statvfs(d.path()).unwrap().f_bsize > 0);
        assert!(statvfs(&d.path().join("missing")).is_err());
    }

    #[test]
    fn a_missing_directory_cannot_take_files() {
        let d = tempfile::tempdir().unwrap();
        assert!(can_create_in(d.path()).is_ok());
        let e = can_create_in(&d.path().join("missing")).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::NotFound);
    }
}
