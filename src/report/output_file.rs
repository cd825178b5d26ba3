//! A report file written by `-o`/`--export`: all of it or nothing, and nothing left behind
//! however the command ends.
//!
//! The file is opened when the flags are checked, before the command's work: an unnamed file
//! (O_TMPFILE) in the target's directory, which has no name to leave behind if a signal, a
//! crash or an error ends the command. When the report is rendered it is written there,
//! fsynced, given a hidden name and renamed over the target, with every catchable signal held
//! for those two calls, so a reader (node_exporter, CI) never sees half a file and a signal
//! never finds the hidden name. Where the filesystem has no O_TMPFILE, a named temporary file
//! is written at the end with the signals held from its creation to its rename.

use std::cell::RefCell;
use std::ffi::CString;
use std::fs::File;
use std::io::{self, Seek, Write};
use std::os::fd::AsFd;
use std::path::{Path, PathBuf};

#[derive(Debug)]
pub struct OutputFile {
    path: PathBuf,
    dir: PathBuf,
    /// The unnamed file, until it is published.
    unnamed: RefCell<Option<(File, File)>>,
}

/// Mode of the report (less the umask), as std::fs::write would make it: readable by a
/// collector running as another user.
const MODE: u32 = 0o644;

impl OutputFile {
    /// Opens the unnamed file for `path` in its directory; errors are the directory's (it
    /// cannot take files), found before the command works. A filesystem without O_TMPFILE
    /// is no error: the file is made at the end instead.
    pub fn open(path: &Path) -> io::Result<OutputFile> {
        let dir = path
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or(Path::new("."))
            .to_path_buf();
        let d = File::open(&dir)?;
        let unnamed = match crate::syscalls::create_unnamed_in(d.as_fd(), MODE) {
            Ok(f) => Some((d, f)),
            Err(e)
                if matches!(
                    e.raw_os_error(),
                    Some(libc::EOPNOTSUPP | libc::EISDIR | libc::EINVAL)
                ) =>
            {
                None
            }
            Err(e) => return Err(e),
        };
        Ok(OutputFile {
            path: path.to_path_buf(),
            dir,
            unnamed: RefCell::new(unnamed),
        })
    }

    /// Writes `bytes` as the file's whole content and puts it in place of the target.
    pub fn publish(&self, bytes: &[u8]) -> io::Result<()> {
        self.publish_with(|w| w.write_all(bytes))
    }

    /// Writes what `write` writes as the file's whole content, as it is written (a report of
    /// a year of runs is never held in memory), and puts it in place of the target.
    pub fn publish_with(
        &self,
        write: impl FnOnce(&mut dyn Write) -> io::Result<()>,
    ) -> io::Result<()> {
        let name = self
            .path
            .file_name()
            .ok_or_else(|| io::Error::other(format!("{}: not a file name", self.path.display())))?;
        let Some((dir, file)) = self.unnamed.borrow_mut().take() else {
            // No O_TMPFILE here: written to an unnamed spool first (in the temporary
            // directory), then copied into the named file with the signals held.
            let mut spool = tempfile::tempfile()?;
            write_shown(&spool, write)?;
            spool.seek(io::SeekFrom::Start(0))?;
            return self.publish_named(name, &mut spool);
        };
        write_shown(&file, write)?;
        file.sync_all()?;
        let _held = crate::syscalls::hold_signals();
        for n in 0u32.. {
            let hidden = format!(".{}.{}.{n}.tmp", name.to_string_lossy(), std::process::id());
            let c = CString::new(hidden.as_bytes()).map_err(io::Error::other)?;
            match crate::syscalls::link_unnamed_at(&file, dir.as_fd(), &c) {
                Ok(()) => {}
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists && n < 100 => continue,
                Err(e) => return Err(e),
            }
            let from = self.dir.join(&hidden);
            return std::fs::rename(&from, &self.path).inspect_err(|_| {
                let _ = std::fs::remove_file(&from);
            });
        }
        unreachable!("the loop returns")
    }

    /// [`Self::publish`] where the filesystem has no O_TMPFILE: a named temporary file,
    /// created, written and renamed with the signals held, so none can leave it behind.
    fn publish_named(&self, name: &std::ffi::OsStr, content: &mut File) -> io::Result<()> {
        use std::os::unix::fs::PermissionsExt;
        let _held = crate::syscalls::hold_signals();
        // Removed when dropped, so on any error before the rename nothing is left behind.
        let mut tmp = tempfile::Builder::new()
            .prefix(&format!(".{}.", name.to_string_lossy()))
            .suffix(".tmp")
            .permissions(std::fs::Permissions::from_mode(MODE))
            .tempfile_in(&self.dir)?;
        io::copy(content, &mut tmp)?;
        tmp.as_file().sync_all()?;
        tmp.persist(&self.path).map_err(|e| e.error)?;
        Ok(())
    }
}

/// Bytes taken in before they are filtered and written: the renderers write in small pieces.
const CHUNK: usize = 1 << 16;

/// Writes what `write` writes to `file` with nothing from an input reaching a terminal raw
/// (from a file `cat` shows either): through [`crate::printable::Filter`], a chunk at a time,
/// which gives the bytes filtering the whole would.
fn write_shown(
    mut file: &File,
    write: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> io::Result<()> {
    let mut w = Shown {
        file,
        filter: crate::printable::Filter::new(false),
        input: Vec::with_capacity(CHUNK),
        output: Vec::new(),
    };
    write(&mut w)?;
    w.pass()?;
    w.filter.finish(&mut w.output);
    file.write_all(&w.output)
}

struct Shown<'a> {
    file: &'a File,
    filter: crate::printable::Filter,
    input: Vec<u8>,
    output: Vec<u8>,
}

impl Shown<'_> {
    /// Filters and writes what was taken in.
    fn pass(&mut self) -> io::Result<()> {
        self.output.clear();
        self.filter.feed(&self.input, &mut self.output);
        self.input.clear();
        let mut f = self.file;
        f.write_all(&self.output)?;
        self.output.clear();
        Ok(())
    }
}

impl Write for Shown<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        // Taken a chunk at a time, so that one large write is never held twice over.
        for part in buf.chunks(CHUNK) {
            self.input.extend_from_slice(part);
            if self.input.len() >= CHUNK {
                self.pass()?;
            }
        }
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn an_output_opened_and_dropped_leaves_nothing_and_a_published_one_replaces_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("r.prom");
        drop(OutputFile::open(&p).unwrap());
        assert!(names(dir.path()).is_empty());
        std::fs::write(&p, "old").unwrap();
        let o = OutputFile::open(&p).unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "old");
        o.publish(b"new").unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "new");
        assert_eq!(names(dir.path()), vec!["r.prom"]);
        // Published twice (a second file for one path): the named way, still atomic.
        o.publish(b"newer").unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "newer");
        assert_eq!(names(dir.path()), vec!["r.prom"]);
    }
}
