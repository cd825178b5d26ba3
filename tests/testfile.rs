//! The test file's name never exists without its ownership marker: a run killed at any moment
//! leaves either nothing or a file the next run recognises as its own and removes. Watched
//! with inotify on the real filesystems (ext4, tmpfs): the kernel queues each event before the
//! call that caused it returns, so what the watch reads after `TestFiles::create` is the whole
//! story, with no timing to race. Where the filesystem refuses O_TMPFILE (a FUSE mount), the
//! file is still created, under its name.

mod common;

use std::ffi::CString;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::process::Command;

use common::skip;
use iopscheck::testing::testfile::{TestFiles, stale_files};

/// An inotify watch on `dir` for names created in it and changes to their attributes (an
/// xattr set is one).
fn watch(dir: &Path) -> OwnedFd {
    // SAFETY: no pointer; the result is checked.
    let fd = unsafe { libc::inotify_init1(libc::IN_NONBLOCK | libc::IN_CLOEXEC) };
    assert!(
        fd >= 0,
        "inotify_init1: {}",
        std::io::Error::last_os_error()
    );
    // SAFETY: a fresh descriptor that nothing else owns.
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    let path = CString::new(dir.as_os_str().as_bytes()).unwrap();
    // SAFETY: valid descriptor and NUL-terminated path.
    let wd = unsafe {
        libc::inotify_add_watch(
            fd.as_raw_fd(),
            path.as_ptr(),
            libc::IN_CREATE | libc::IN_ATTRIB,
        )
    };
    assert!(
        wd >= 0,
        "inotify_add_watch: {}",
        std::io::Error::last_os_error()
    );
    fd
}

/// Every event queued on the watch: its mask and the name it is about.
fn events(fd: &OwnedFd) -> Vec<(u32, String)> {
    let mut out = Vec::new();
    let mut buf = vec![0u8; 1 << 16];
    loop {
        // SAFETY: valid descriptor, and a buffer with its length.
        let n = unsafe { libc::read(fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
        if n <= 0 {
            // EAGAIN: nothing more queued
            return out;
        }
        let mut i = 0;
        while i < n as usize {
            // struct inotify_event: wd, mask, cookie, len (4 bytes each), then len bytes of
            // name padded with NULs
            let word = |at: usize| u32::from_ne_bytes(buf[i + at..i + at + 4].try_into().unwrap());
            let (mask, len) = (word(4), word(12) as usize);
            let name = &buf[i + 16..i + 16 + len];
            let name = name.split(|&b| b == 0).next().unwrap_or_default();
            out.push((mask, String::from_utf8_lossy(name).into_owned()));
            i += 16 + len;
        }
    }
}

/// Whether the file at `path` carries the marker.
fn marked(path: &Path) -> bool {
    let p = CString::new(path.as_os_str().as_bytes()).unwrap();
    let mut buf = [0u8; 64];
    // SAFETY: NUL-terminated path and name, and a buffer with its length.
    let n = unsafe {
        libc::getxattr(
            p.as_ptr(),
            c"user.iopscheck".as_ptr(),
            buf.as_mut_ptr().cast(),
            buf.len(),
        )
    };
    n > 0
}

fn filesystem(dir: &Path) -> String {
    iopscheck::testing::machine::target_of(dir)
        .filesystem
        .unwrap_or_default()
}

/// Creates two test files in `dir` under an inotify watch: each name appears once, already
/// marked (no attribute change follows its creation). Created under its name and marked
/// after, a name would show IN_CREATE then IN_ATTRIB: the moment a kill leaves an unmarked
/// file that later runs refuse to remove.
fn names_appear_marked(dir: &Path) {
    let fs = filesystem(dir);
    let w = watch(dir);
    let files = TestFiles::create(dir, 2).unwrap();
    let paths = files.paths();
    if !marked(&paths[0]) {
        return skip(&format!(
            "{} ({fs}) keeps no user xattrs: no marker to set",
            dir.display()
        ));
    }
    let seen = events(&w);
    for p in &paths {
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        let of: Vec<u32> = seen
            .iter()
            .filter(|(_, n)| *n == name)
            .map(|(m, _)| *m)
            .collect();
        assert_eq!(
            of,
            [libc::IN_CREATE],
            "{fs}: {name} appeared once, marked; events: {seen:?}"
        );
        assert!(marked(p), "{fs}: {name}");
        let m = std::fs::symlink_metadata(p).unwrap();
        assert_eq!(m.mode() & 0o777, 0o600, "{fs}");
        assert_eq!(m.nlink(), 1, "{fs}");
    }
    // in use: not stale; removed on drop
    assert!(stale_files(dir).is_empty());
    drop(files);
    assert!(common::listing(dir).is_empty(), "{fs}");
}

#[test]
fn on_ext4_and_tmpfs_a_test_file_name_never_exists_without_its_marker() {
    // the temporary directory (ext4 on CI's machine), then /dev/shm (tmpfs)
    let d = tempfile::tempdir().unwrap();
    names_appear_marked(d.path());
    if Path::new("/dev/shm").is_dir() {
        let d = tempfile::tempdir_in("/dev/shm").unwrap();
        names_appear_marked(d.path());
    } else {
        skip("no /dev/shm: tmpfs not tested");
    }
}

/// A FUSE mount (bindfs) of a temporary directory, unmounted on drop.
struct Fuse {
    at: PathBuf,
}

impl Drop for Fuse {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.at).status();
    }
}

#[test]
#[cfg_attr(not(have_root), ignore = "needs root (mounting a FUSE filesystem)")]
fn where_the_filesystem_refuses_o_tmpfile_the_file_is_created_under_its_name() {
    if Command::new("bindfs").arg("--version").output().is_err() {
        return skip(
            "bindfs is not installed (apt-get install bindfs): the fallback is not tested",
        );
    }
    let tmp = tempfile::tempdir().unwrap();
    let (under, at) = (tmp.path().join("under"), tmp.path().join("fuse"));
    std::fs::create_dir(&under).unwrap();
    std::fs::create_dir(&at).unwrap();
    let mounted = Command::new("bindfs")
        .arg(&under)
        .arg(&at)
        .status()
        .is_ok_and(|s| s.success());
    if !mounted {
        return skip("bindfs could not mount (no /dev/fuse?)");
    }
    let _fuse = Fuse { at: at.clone() };
    // What this test is about: O_TMPFILE is refused there.
    match std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .mode(0o600)
        .custom_flags(libc::O_TMPFILE)
        .open(&at)
    {
        Ok(_) => return skip("this FUSE mount accepts O_TMPFILE: the fallback is not reached"),
        Err(e) => assert!(
            matches!(
                e.raw_os_error(),
                Some(libc::EOPNOTSUPP | libc::EISDIR | libc::EINVAL)
            ),
            "{e}"
        ),
    }
    let files = TestFiles::create(&at, 1).unwrap();
    let p = files.paths()[0].clone();
    let m = std::fs::symlink_metadata(&p).unwrap();
    assert!(m.file_type().is_file());
    assert_eq!(m.mode() & 0o777, 0o600);
    // it is the file underneath, and held: not stale
    assert_eq!(common::listing(&under).len(), 1);
    assert!(stale_files(&at).is_empty());
    drop(files);
    assert!(common::listing(&at).is_empty());
    assert!(common::listing(&under).is_empty());
}
