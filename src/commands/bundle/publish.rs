//! Writing the bundle: never over an existing file, and never half-written.

use std::path::Path;

pub(super) enum Published {
    Exists,
    Io(std::io::Error),
}

/// Writes what `write` writes to `path` all at once or not at all, and never over an existing file: the
/// data goes to an unnamed temporary file (O_TMPFILE) that is linked in under its name when
/// complete, so an interruption leaves nothing behind (tempfile's `NamedTempFile` always has a
/// name, which a kill would leave behind, hence the linkat here). Where the filesystem has no
/// O_TMPFILE, a named temporary file is moved in without replacing anything
/// (`persist_noclobber`: renameat2's NOREPLACE, or a hard link).
pub(super) fn publish(
    path: &Path,
    mut write: impl FnMut(&mut std::fs::File) -> std::io::Result<()>,
) -> Result<(), Published> {
    use std::os::unix::ffi::OsStrExt;
    use std::os::unix::fs::OpenOptionsExt;
    use std::os::unix::io::AsRawFd;

    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let exists = |e: &std::io::Error| e.kind() == std::io::ErrorKind::AlreadyExists;

    if let Ok(mut f) = std::fs::OpenOptions::new()
        .write(true)
        .mode(0o644)
        .custom_flags(libc::O_TMPFILE)
        .open(dir)
    {
        write(&mut f).map_err(Published::Io)?;
        f.sync_all().map_err(Published::Io)?;
        let from = std::ffi::CString::new(format!("/proc/self/fd/{}", f.as_raw_fd()))
            .expect("no NUL in a number");
        let to = std::ffi::CString::new(path.as_os_str().as_bytes())
            .map_err(|e| Published::Io(std::io::Error::other(e)))?;
        // Stays unsafe here rather than in crate::syscalls: one call, part of this atomic publish.
        // SAFETY: both paths are NUL-terminated C strings that outlive the call.
        let rc = unsafe {
            libc::linkat(
                libc::AT_FDCWD,
                from.as_ptr(),
                libc::AT_FDCWD,
                to.as_ptr(),
                libc::AT_SYMLINK_FOLLOW,
            )
        };
        if rc == 0 {
            return Ok(());
        }
        let e = std::io::Error::last_os_error();
        if exists(&e) {
            return Err(Published::Exists);
        }
        // No /proc, say: fall back to a named temporary file.
    }
    publish_named(dir, path, write)
}

/// [`publish`] through a named temporary file in `dir`, moved in without replacing anything.
fn publish_named(
    dir: &Path,
    path: &Path,
    mut write: impl FnMut(&mut std::fs::File) -> std::io::Result<()>,
) -> Result<(), Published> {
    use std::os::unix::fs::PermissionsExt;
    let exists = |e: &std::io::Error| e.kind() == std::io::ErrorKind::AlreadyExists;
    let name = path
        .file_name()
        .ok_or_else(|| Published::Io(std::io::Error::other("not a file name")))?;
    // Removed when dropped: an error before it is linked in leaves nothing behind.
    let mut tmp = tempfile::Builder::new()
        .prefix(&format!(".{}.", name.to_string_lossy()))
        .suffix(".tmp")
        .permissions(std::fs::Permissions::from_mode(0o644))
        .tempfile_in(dir)
        .map_err(Published::Io)?;
    write(tmp.as_file_mut()).map_err(Published::Io)?;
    tmp.as_file().sync_all().map_err(Published::Io)?;
    match tmp.persist_noclobber(path) {
        Ok(_) => Ok(()),
        Err(e) if exists(&e.error) => Err(Published::Exists),
        // A filesystem without hard links: rename, having checked the name is free.
        Err(_) if std::fs::symlink_metadata(path).is_ok() => Err(Published::Exists),
        Err(e) => e
            .file
            .persist(path)
            .map(drop)
            .map_err(|e| Published::Io(e.error)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn a_named_temporary_file_is_published_once_and_never_left_behind() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("b.tar.gz");
        assert!(publish_named(dir.path(), &p, |f| f.write_all(b"one")).is_ok());
        assert!(matches!(
            publish_named(dir.path(), &p, |f| f.write_all(b"two")),
            Err(Published::Exists)
        ));
        let failed = publish_named(dir.path(), &dir.path().join("c"), |_| {
            Err(std::io::Error::other("disk full"))
        });
        assert!(matches!(failed, Err(Published::Io(_))));
        assert_eq!(std::fs::read(&p).unwrap(), b"one");
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["b.tar.gz"]);
    }

    #[test]
    fn publishing_never_replaces_a_file() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("b.tar.gz");
        publish(&p, |f| f.write_all(b"one")).ok().unwrap();
        assert!(matches!(
            publish(&p, |f| f.write_all(b"two")),
            Err(Published::Exists)
        ));
        assert_eq!(std::fs::read(&p).unwrap(), b"one");
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(names.len(), 1, "no temporary file is left behind");
    }
}
