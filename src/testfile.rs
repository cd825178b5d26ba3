//! The test files: safe by construction (design.md decision 2). Each is created by us, mode
//! 0600, under a recognisable name, relative to a directory descriptor opened once; held under
//! an exclusive flock while in use; marked with an xattr where the filesystem allows; and
//! removed on drop, on error and on signals. Where the filesystem has O_TMPFILE it is created
//! unnamed, locked and marked, then linked under its name (never over an existing one), so the
//! name never exists without the marker; elsewhere it is created with
//! O_CREAT|O_EXCL|O_NOFOLLOW and marked at once. We never open a file we did not create, and
//! never a device.
//!
//! A file left by a killed run keeps its name and marker but loses its lock: the next run
//! recognises it as stale and removes it.

use std::ffi::{CStr, CString};
use std::fs::File;
use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

use crate::units::format_size;

/// Every test file's name starts with this.
pub const PREFIX: &str = "iopscheck-testfile.";
const MARKER: &CStr = c"user.iopscheck";
const MARKER_VALUE: &[u8] = b"test file; safe to delete when no iopscheck runs";

/// Why the directory cannot take the test.
#[derive(Debug, thiserror::Error)]
pub enum PreflightError {
    #[error("--dir {0}: no such directory; create it first, or choose another --dir")]
    Missing(String),
    #[error("--dir {0}: is a file, not a directory")]
    NotDir(String),
    #[error(
        "--dir {0}: is a device; iopscheck tests a directory on a filesystem and never writes to devices"
    )]
    Device(String),
    #[error("--dir {0}: read-only filesystem; choose a directory on a writable filesystem")]
    ReadOnly(String),
    #[error(
        "--dir {dir}: permission denied: {user} cannot create files there; run as a user who can, or choose another --dir"
    )]
    Permission { dir: String, user: String },
    #[error(
        "--dir {dir}: not enough free space: the test needs {needed} ({size} test file + {margin} margin), {free} is free; free some space, or lower --size (a smaller file flatters the result)"
    )]
    Space {
        dir: String,
        needed: String,
        size: String,
        margin: String,
        free: String,
    },
    #[error("--dir {dir}: {source}")]
    Io { dir: String, source: io::Error },
}

/// Space kept free beyond the test files: 64 MiB plus 5% of the files.
pub fn margin(bytes: u64) -> u64 {
    (64 << 20) + bytes / 20
}

/// Checks the directory before anything is written: it exists, is a directory, is writable.
/// Returns its canonical path. Whether it has room is [`check_space`]'s, under the run lock.
pub fn preflight(dir: &Path) -> Result<PathBuf, PreflightError> {
    use std::os::unix::fs::FileTypeExt;
    let shown = dir.display().to_string();
    let meta = match std::fs::metadata(dir) {
        Ok(m) => m,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            return Err(PreflightError::Missing(shown));
        }
        Err(e) if e.kind() == io::ErrorKind::PermissionDenied => {
            return Err(PreflightError::Permission {
                dir: shown,
                user: current_user(),
            });
        }
        Err(source) => return Err(PreflightError::Io { dir: shown, source }),
    };
    let ft = meta.file_type();
    if ft.is_block_device() || ft.is_char_device() {
        return Err(PreflightError::Device(shown));
    }
    if !meta.is_dir() {
        return Err(PreflightError::NotDir(shown));
    }
    let canonical = std::fs::canonicalize(dir).map_err(|source| PreflightError::Io {
        dir: shown.clone(),
        source,
    })?;
    let space = crate::machine::fs_space(&canonical).map_err(|source| PreflightError::Io {
        dir: shown.clone(),
        source,
    })?;
    if space.read_only {
        return Err(PreflightError::ReadOnly(shown));
    }
    if let Err(e) = crate::syscalls::can_create_in(&canonical) {
        return Err(match e.raw_os_error() {
            Some(libc::EROFS) => PreflightError::ReadOnly(shown),
            _ => PreflightError::Permission {
                dir: shown,
                user: current_user(),
            },
        });
    }
    Ok(canonical)
}

/// Checks that `canonical` (the directory given as `dir`, checked by [`preflight`]) has room
/// for `bytes` of test files plus a margin. Called under the run lock: a test file there that
/// no run holds is stale, will be removed, and its space counts as free; a concurrent run's
/// is gone by then, so what is measured is the room this run will have.
pub fn check_space(dir: &Path, canonical: &Path, bytes: u64) -> Result<(), PreflightError> {
    let shown = dir.display().to_string();
    let space = crate::machine::fs_space(canonical).map_err(|source| PreflightError::Io {
        dir: shown.clone(),
        source,
    })?;
    let m = margin(bytes);
    let reclaim: u64 = stale_files(canonical).iter().map(|s| s.bytes).sum();
    if space.sized && space.available + reclaim < bytes + m {
        return Err(PreflightError::Space {
            dir: shown,
            needed: format_size(bytes + m),
            size: format_size(bytes),
            margin: format_size(m),
            free: format_size(space.available + reclaim),
        });
    }
    Ok(())
}

fn current_user() -> String {
    let uid = crate::syscalls::euid();
    std::env::var("USER")
        .ok()
        .filter(|u| !u.is_empty())
        .map(|u| format!("user {u} (uid {uid})"))
        .unwrap_or_else(|| format!("uid {uid}"))
}

/// A directory opened once; files are created and removed relative to it.
#[derive(Debug)]
struct Dir {
    fd: OwnedFd,
    path: PathBuf,
}

impl Dir {
    fn open(path: &Path) -> io::Result<Dir> {
        let dir = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_DIRECTORY)
            .open(path)?;
        Ok(Dir {
            fd: dir.into(),
            path: path.to_path_buf(),
        })
    }
}

/// Files registered for removal by the signal path, which cannot wait for drops.
static REGISTRY: Mutex<Vec<(PathBuf, u64, u64)>> = Mutex::new(Vec::new());

/// The test files of one invocation, one per job. Removed when dropped.
#[derive(Debug)]
pub struct TestFiles {
    dir: Dir,
    files: Vec<(CString, File)>,
}

impl TestFiles {
    /// Creates `count` new, empty test files in `dir` (exclusively, 0600, never through a
    /// symlink, never over an existing name), each under an exclusive lock and marked. Where
    /// the filesystem has O_TMPFILE a file is locked and marked before it gets its name, so
    /// that no run, however it ends, leaves a test file without its marker (see
    /// [`create_one`]).
    pub fn create(dir: &Path, count: u32) -> io::Result<TestFiles> {
        let dir = Dir::open(dir)?;
        let mut out = TestFiles {
            dir,
            files: Vec::new(),
        };
        let tag = unique_tag();
        for job in 0..count {
            let name = CString::new(format!("{PREFIX}{}.{tag}.{job}", std::process::id()))
                .expect("no NUL");
            let (file, made) = create_one(&out.dir, &name)?;
            let meta = file.metadata()?;
            register(&out.dir.path.join(name.to_str().unwrap_or("")), &meta);
            // Held while the file is in use; a file whose lock is free is stale (stale_files).
            let locked = match made {
                Made::Unnamed => Ok(()),
                Made::Named => {
                    let locked = file.try_lock();
                    mark(&file);
                    locked
                }
            };
            out.files.push((name, file));
            locked.map_err(io::Error::from)?;
        }
        Ok(out)
    }

    pub fn files(&self) -> Vec<&File> {
        self.files.iter().map(|(_, f)| f).collect()
    }

    /// The files as a slice of owned handles, for the engine.
    pub fn handles(&self) -> io::Result<Vec<File>> {
        self.files.iter().map(|(_, f)| f.try_clone()).collect()
    }

    pub fn paths(&self) -> Vec<PathBuf> {
        self.files
            .iter()
            .map(|(n, _)| self.dir.path.join(n.to_str().unwrap_or("")))
            .collect()
    }

    /// Removes the files now (also done on drop).
    pub fn remove(mut self) -> io::Result<()> {
        self.remove_all()
    }

    /// The space the files take on disk, in bytes.
    pub fn bytes(&self) -> u64 {
        self.files
            .iter()
            .filter_map(|(_, f)| f.metadata().ok())
            .map(|m| m.blocks() * 512)
            .sum()
    }

    /// Removes the files now, as [`remove`](Self::remove), calling `slow` first when that
    /// takes longer than `after`: freeing the blocks of a large file can take minutes (ext4
    /// mounted with `discard` trims every extent), and the person waiting should know why.
    pub fn remove_when_slow(self, after: Duration, slow: impl FnOnce()) -> io::Result<()> {
        when_slow(after, slow, move || self.remove())
    }

    /// Unlinks the files now and hands over their descriptors: nothing is left under a name,
    /// whatever happens next, while the slow part (the filesystem freeing the blocks, which
    /// happens when the last descriptor closes: minutes for a large file on a disk mounted
    /// with `discard`) waits until the descriptors are closed, after the verdict.
    pub fn unlink(mut self) -> io::Result<Unlinked> {
        let bytes = self.bytes();
        let mut first_err = None;
        let mut files = Vec::new();
        for (name, file) in self.files.drain(..) {
            if let Err(e) = unlink_if_same(self.dir.fd.as_fd(), &name, &file) {
                first_err.get_or_insert(e);
            }
            if let Ok(m) = file.metadata() {
                unregister(m.dev(), m.ino());
            }
            files.push(file);
        }
        match first_err {
            Some(e) => Err(e),
            None => Ok(Unlinked { files, bytes }),
        }
    }

    fn remove_all(&mut self) -> io::Result<()> {
        let mut first_err = None;
        for (name, file) in self.files.drain(..) {
            if let Err(e) = unlink_if_same(self.dir.fd.as_fd(), &name, &file) {
                first_err.get_or_insert(e);
            }
            if let Ok(m) = file.metadata() {
                unregister(m.dev(), m.ino());
            }
        }
        first_err.map_or(Ok(()), Err)
    }
}

impl Drop for TestFiles {
    fn drop(&mut self) {
        let _ = self.remove_all();
    }
}

/// Test files already unlinked ([`TestFiles::unlink`]), still open: closing them frees their
/// blocks. Closed when dropped.
#[derive(Debug)]
pub struct Unlinked {
    files: Vec<File>,
    bytes: u64,
}

impl Unlinked {
    /// The space the files take until they are closed, in bytes.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    pub fn count(&self) -> usize {
        self.files.len()
    }

    /// Closes the files, calling `slow` first when that takes longer than `after` (as
    /// [`TestFiles::remove_when_slow`]).
    pub fn close_when_slow(self, after: Duration, slow: impl FnOnce()) {
        when_slow(after, slow, move || drop(self));
    }
}

/// Runs `work` on a thread of its own and waits for it; when it has not finished after
/// `after`, calls `slow` (on this thread, once) and goes on waiting. With `after` zero, `slow`
/// is called before `work` starts. A panic in `work` goes on here.
pub fn when_slow<T: Send + 'static>(
    after: Duration,
    slow: impl FnOnce(),
    work: impl FnOnce() -> T + Send + 'static,
) -> T {
    let (tx, rx) = std::sync::mpsc::channel();
    let slow = if after.is_zero() {
        slow();
        None
    } else {
        Some(slow)
    };
    let worker = std::thread::spawn(move || {
        let _ = tx.send(work());
    });
    let first = match &slow {
        Some(_) => rx.recv_timeout(after),
        None => Err(std::sync::mpsc::RecvTimeoutError::Timeout),
    };
    let done = match first {
        Ok(v) => Ok(v),
        Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
            if let Some(say) = slow {
                say();
            }
            rx.recv().map_err(|_| ())
        }
        Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => Err(()),
    };
    match (done, worker.join()) {
        (Ok(v), _) => v,
        (Err(()), Err(panic)) => std::panic::resume_unwind(panic),
        (Err(()), Ok(())) => unreachable!("the worker sends its result before it ends"),
    }
}

/// How a test file came to have its name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Made {
    /// Created unnamed (O_TMPFILE), locked and marked, then linked under its name: the name
    /// never exists without the marker.
    Unnamed,
    /// Created under its name (O_CREAT|O_EXCL), where the filesystem has no O_TMPFILE; the
    /// caller locks and marks it at once.
    Named,
}

/// Creates the test file `name` in `dir`, unnamed first: locked and marked, then linked under
/// its name, which fails on an existing name (EEXIST) as O_EXCL does, so nothing is replaced.
/// Where the filesystem refuses O_TMPFILE (EOPNOTSUPP; EISDIR or EINVAL on old kernels) or the
/// link (no /proc and no privilege), under its name as before: a kill between the creation
/// and the marker then leaves a file that `stale_files` does not recognise.
fn create_one(dir: &Dir, name: &CStr) -> io::Result<(File, Made)> {
    if let Ok(file) = crate::syscalls::create_unnamed_in(dir.fd.as_fd(), 0o600) {
        file.try_lock().map_err(io::Error::from)?;
        mark(&file);
        match crate::syscalls::link_unnamed_at(&file, dir.fd.as_fd(), name) {
            Ok(()) => return Ok((file, Made::Unnamed)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => return Err(e),
            // Named below; an error that is the directory's (no space, read-only) comes
            // again from there, in the words users know.
            Err(_) => {}
        }
    }
    let file = crate::syscalls::create_new_at(dir.fd.as_fd(), name, 0o600)?;
    Ok((file, Made::Named))
}

/// Sets the ownership marker. Best effort: tmpfs before 6.6 and some filesystems have no user
/// xattrs (then the name, owner, mode and lock decide what is stale).
fn mark(file: &File) {
    let _ = crate::syscalls::set_xattr(file, MARKER, MARKER_VALUE);
}

fn unique_tag() -> String {
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    format!("{:08x}", t ^ (std::process::id().rotate_left(16)))
}

fn register(path: &Path, meta: &std::fs::Metadata) {
    if let Ok(mut r) = REGISTRY.lock() {
        r.push((path.to_path_buf(), meta.dev(), meta.ino()));
    }
}

fn unregister(dev: u64, ino: u64) {
    if let Ok(mut r) = REGISTRY.lock() {
        r.retain(|(_, d, i)| !(*d == dev && *i == ino));
    }
}

/// Removes every test file this process still has, at once: for SIGINT/SIGTERM, while the
/// engine may still be writing (the space is freed when its descriptors close).
pub fn remove_registered() {
    let Ok(mut r) = REGISTRY.lock() else { return };
    for (path, dev, ino) in r.drain(..) {
        if let Ok(m) = std::fs::symlink_metadata(&path)
            && m.dev() == dev
            && m.ino() == ino
        {
            let _ = std::fs::remove_file(&path);
        }
    }
}

/// Lets this process exit at once after a signal, although the test file may still have
/// pages under writeback. Whoever closes the last descriptor of an unlinked file waits for
/// that writeback (seconds on a busy disk), so a child inherits every descriptor and holds
/// them until this process is gone; the wait then happens in the orphaned child, not here.
/// The child closes the files first and the run lock last (its exit): the next run waits for
/// that writeback instead of measuring beside it.
pub fn detach_descriptors() {
    // Stays unsafe here rather than in crate::syscalls: after a fork in a threaded process the child
    // may call only async-signal-safe functions, which this code keeps to and a wrapper could
    // not promise for its callers.
    let parent = std::process::id() as libc::pid_t;
    let lock = crate::syscalls::run_lock_fd();
    // SAFETY: the child calls only async-signal-safe functions (close, close_range, getppid,
    // nanosleep, _exit).
    let pid = unsafe { libc::fork() };
    if pid == 0 {
        // SAFETY: as above.
        unsafe {
            // Not the terminal or the pipes: a reader waiting for EOF must not wait for us.
            for fd in 0..3 {
                libc::close(fd);
            }
            // Until the parent is gone (reparented): it may still be using the files.
            let tick = libc::timespec {
                tv_sec: 0,
                tv_nsec: 10_000_000,
            };
            while libc::getppid() == parent {
                libc::nanosleep(&tick, std::ptr::null_mut());
            }
            // Each close of an unlinked file may wait for its writeback; the lock goes last.
            match lock {
                Some(l) => crate::engine::close_all_but(&[l]),
                None => crate::engine::close_all_but(&[]),
            }
            libc::_exit(0);
        }
    }
}

/// Unlinks `name` in `dir` only if it is still the file we hold. Where someone renamed our
/// file (whoever can write the directory can), the entry that is still our file is found in
/// the directory and unlinked; what stands under our name instead is not ours and stays.
/// Where our file is under no name in the directory any more, its blocks are freed
/// (truncated through our descriptor), so that nothing of the test is left wherever it went.
fn unlink_if_same(dir: BorrowedFd<'_>, name: &CStr, file: &File) -> io::Result<()> {
    let ours = file.metadata()?;
    let ours = (ours.dev(), ours.ino());
    match crate::syscalls::id_at(dir, name) {
        Ok(id) if id == ours => return crate::syscalls::unlink_at(dir, name),
        Ok(_) => {}
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => return Err(e),
    }
    if ours_elsewhere(dir, ours)? {
        return Ok(());
    }
    if ours_linked(file) {
        file.set_len(0)?;
    }
    Ok(())
}

/// Unlinks every entry of `dir` that is our file (dev, ino), never following a link: true if
/// one was found.
fn ours_elsewhere(dir: BorrowedFd<'_>, ours: (u64, u64)) -> io::Result<bool> {
    use std::os::fd::AsRawFd;
    let Ok(entries) = std::fs::read_dir(format!("/proc/self/fd/{}", dir.as_raw_fd())) else {
        return Ok(false);
    };
    let mut found = false;
    for e in entries.flatten() {
        let Ok(name) = CString::new(e.file_name().as_bytes()) else {
            continue;
        };
        if crate::syscalls::id_at(dir, &name).is_ok_and(|id| id == ours) {
            crate::syscalls::unlink_at(dir, &name)?;
            found = true;
        }
    }
    Ok(found)
}

/// Whether our file still has a name somewhere (moved out of the directory): its link count.
fn ours_linked(file: &File) -> bool {
    file.metadata().is_ok_and(|m| m.nlink() > 0)
}

/// A test file left behind by a run that was killed.
#[derive(Debug, Clone, PartialEq)]
pub struct Stale {
    pub path: PathBuf,
    pub bytes: u64,
}

/// Finds stale test files in `dir`: our name, a regular file owned by us with mode 0600, our
/// marker where the filesystem keeps xattrs, and no process holding its lock.
pub fn stale_files(dir: &Path) -> Vec<Stale> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return vec![];
    };
    let uid = crate::syscalls::euid();
    let mut out = Vec::new();
    for e in entries.flatten() {
        let name = e.file_name();
        if !name.as_bytes().starts_with(PREFIX.as_bytes()) {
            continue;
        }
        let path = e.path();
        let Ok(meta) = std::fs::symlink_metadata(&path) else {
            continue;
        };
        if !meta.file_type().is_file() || meta.uid() != uid || meta.mode() & 0o777 != 0o600 {
            continue;
        }
        // Never a device or a FIFO that could block: O_NONBLOCK, and no symlink followed.
        let Ok(f) = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
            .open(&path)
        else {
            continue;
        };
        if !has_marker(&f) {
            continue;
        }
        // Free when no run holds it; held here until `f` closes, at the end of the loop.
        if f.try_lock().is_ok() {
            out.push(Stale {
                path,
                bytes: meta.blocks() * 512,
            });
        }
    }
    out
}

/// True when the marker is present, or when the filesystem keeps no user xattrs (then the
/// name, owner, mode and lock decide).
fn has_marker(f: &File) -> bool {
    let mut buf = [0u8; 64];
    match crate::syscalls::get_xattr(f, MARKER, &mut buf) {
        Ok(_) => true,
        Err(e) => e.raw_os_error() != Some(libc::ENODATA),
    }
}

/// Removes stale test files; returns what was removed.
pub fn remove_stale(dir: &Path) -> Vec<Stale> {
    stale_files(dir)
        .into_iter()
        .filter(|s| std::fs::remove_file(&s.path).is_ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsRawFd;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn files_are_created_exclusively_0600_and_removed_on_drop() {
        let d = tempfile::tempdir().unwrap();
        let files = TestFiles::create(d.path(), 2).unwrap();
        let paths = files.paths();
        assert_eq!(paths.len(), 2);
        for p in &paths {
            let m = std::fs::symlink_metadata(p).unwrap();
            assert_eq!(m.permissions().mode() & 0o777, 0o600);
            assert!(p.file_name().unwrap().to_str().unwrap().starts_with(PREFIX));
        }
        // in use: not stale
        assert!(stale_files(d.path()).is_empty());
        drop(files);
        assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 0);
    }

    #[test]
    fn a_file_left_without_its_lock_is_stale_and_removed() {
        let d = tempfile::tempdir().unwrap();
        let files = TestFiles::create(d.path(), 1).unwrap();
        let p = files.paths()[0].clone();
        let fd = files.files[0].1.as_raw_fd();
        // Simulate SIGKILL: no drop runs; the lock goes with the descriptor.
        std::mem::forget(files);
        // SAFETY: the forgotten File owned this fd and will never close it.
        unsafe { libc::close(fd) };
        let stale = stale_files(d.path());
        assert_eq!(stale.len(), 1);
        assert_eq!(remove_stale(d.path()).len(), 1);
        assert!(!p.exists());
    }

    #[test]
    fn other_files_with_our_prefix_are_left_alone() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join(format!("{PREFIX}123.x.0"));
        std::fs::write(&p, b"user data").unwrap();
        // mode 0644, not ours
        assert!(stale_files(d.path()).is_empty());
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o600)).unwrap();
        // right mode, but no marker where xattrs work: still left alone
        let f = File::open(&p).unwrap();
        if !has_marker(&f) {
            assert!(stale_files(d.path()).is_empty());
        }
        assert!(p.exists());
    }

    #[test]
    fn an_existing_name_is_never_replaced_nor_followed() {
        let d = tempfile::tempdir().unwrap();
        let dir = Dir::open(d.path()).unwrap();
        let taken = d.path().join(format!("{PREFIX}1.x.0"));
        std::fs::write(&taken, b"user data").unwrap();
        // a dangling symbolic link under our name: its target must not come to exist
        let link = d.path().join(format!("{PREFIX}1.x.1"));
        let target = d.path().join("elsewhere");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        for p in [&taken, &link] {
            let name = CString::new(p.file_name().unwrap().as_bytes()).unwrap();
            let e = create_one(&dir, &name).unwrap_err();
            assert_eq!(e.kind(), io::ErrorKind::AlreadyExists, "{}", p.display());
        }
        assert_eq!(std::fs::read(&taken).unwrap(), b"user data");
        assert!(!target.exists());
        // nothing else left behind
        assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 2);
    }

    #[test]
    fn on_ext4_and_tmpfs_the_file_is_marked_before_it_has_a_name() {
        let mut dirs = vec![tempfile::tempdir().unwrap()];
        if Path::new("/dev/shm").is_dir() {
            dirs.push(tempfile::tempdir_in("/dev/shm").unwrap());
        }
        for d in &dirs {
            let fs = crate::machine::target_of(d.path()).filesystem;
            let dir = Dir::open(d.path()).unwrap();
            let name = CString::new(format!("{PREFIX}1.y.0")).unwrap();
            let (file, made) = create_one(&dir, &name).unwrap();
            if matches!(fs.as_deref(), Some("ext4" | "tmpfs")) {
                assert_eq!(made, Made::Unnamed, "{fs:?}");
                assert!(has_marker(&file), "{fs:?}");
            } else {
                eprintln!("{}: {fs:?}, neither ext4 nor tmpfs", d.path().display());
            }
            let m = std::fs::symlink_metadata(d.path().join("iopscheck-testfile.1.y.0")).unwrap();
            assert_eq!(m.permissions().mode() & 0o777, 0o600);
            assert_eq!(
                (m.dev(), m.ino()),
                (
                    file.metadata().unwrap().dev(),
                    file.metadata().unwrap().ino()
                )
            );
        }
    }

    #[test]
    fn slow_work_is_announced_once_and_quick_work_is_not() {
        // The work cannot end before `slow` has been called: announced, whatever the timing.
        let (tx, rx) = std::sync::mpsc::channel::<()>();
        let mut calls = 0;
        let v = when_slow(
            Duration::from_millis(10),
            || {
                calls += 1;
                tx.send(()).unwrap();
            },
            move || rx.recv_timeout(Duration::from_secs(60)).map(|()| 7),
        );
        assert_eq!(v, Ok(7));
        assert_eq!(calls, 1);
        // Work that ends at once, with an hour to spare: nothing said.
        let mut said = false;
        assert_eq!(
            when_slow(Duration::from_secs(3600), || said = true, || 5),
            5
        );
        assert!(!said);
        // With no time at all to spare, said before the work starts, however quick it is.
        let (tx, rx) = std::sync::mpsc::channel::<&str>();
        let said = tx.clone();
        when_slow(
            Duration::ZERO,
            move || said.send("said").unwrap(),
            move || tx.send("worked").unwrap(),
        );
        assert_eq!(rx.try_iter().collect::<Vec<_>>(), ["said", "worked"]);
        // the files are removed all the same
        let d = tempfile::tempdir().unwrap();
        let files = TestFiles::create(d.path(), 2).unwrap();
        assert!(files.bytes() < 1 << 20);
        files
            .remove_when_slow(Duration::from_secs(3600), || panic!("said"))
            .unwrap();
        assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 0);
    }

    #[test]
    fn preflight_names_what_is_wrong() {
        let d = tempfile::tempdir().unwrap();
        let missing = d.path().join("nope");
        assert!(matches!(
            preflight(&missing),
            Err(PreflightError::Missing(_))
        ));
        let file = d.path().join("f");
        std::fs::write(&file, b"x").unwrap();
        assert!(matches!(preflight(&file), Err(PreflightError::NotDir(_))));
        assert!(matches!(
            preflight(Path::new("/dev/null")),
            Err(PreflightError::Device(_))
        ));
        let canonical = preflight(d.path()).unwrap();
        let e = check_space(d.path(), &canonical, u64::MAX / 4)
            .unwrap_err()
            .to_string();
        assert!(e.contains("not enough free space"), "{e}");
        assert!(check_space(d.path(), &canonical, 1 << 20).is_ok());
    }
}
