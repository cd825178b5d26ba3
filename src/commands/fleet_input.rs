//! What `iopscheck fleet` reads, before anything is judged: files, directories of files, and
//! `-`, a stream on stdin (e.g. `kubectl logs --prefix` of many pods, each printing its result
//! with `--format jsonl`). How a stream splits and a node given twice counts once is
//! `crate::fleet::stream`'s.

use std::io::Read;
use std::path::{Path, PathBuf};

use crate::app::usage;

/// One input: a file, a file found in a directory, or stdin. A file is checked when gathered
/// and read only when its turn comes ([`Input::load`]), so that a fleet of thousands of nodes
/// holds one node's file at a time.
#[derive(Debug)]
pub struct Input {
    pub name: String,
    content: Content,
    /// Found in a directory the user named rather than named itself: a fleet's own result in
    /// it (written there by an earlier `fleet -o`) is left out with a warning, not an error.
    pub in_dir: bool,
}

#[derive(Debug)]
enum Content {
    /// Already read (stdin).
    Read(Vec<u8>),
    /// A file checked by [`check_file`], read by [`Input::load`], with the most it may hold.
    File(PathBuf, u64),
}

impl Input {
    /// The input's bytes; a file is read now. Errors name the file and exit 2.
    pub fn load(self) -> anyhow::Result<Vec<u8>> {
        match self.content {
            Content::Read(b) => Ok(b),
            Content::File(p, max_bytes) => {
                let cannot = |e: std::io::Error| cannot_read(e, &p.display());
                let mut bytes = Vec::new();
                std::fs::File::open(&p)
                    .map_err(cannot)?
                    .take(max_bytes + 1)
                    .read_to_end(&mut bytes)
                    .map_err(cannot)?;
                if bytes.len() as u64 > max_bytes {
                    return Err(anyhow::anyhow!(
                        "fleet: {}: larger than {} MiB; not a node's result or history",
                        p.display(),
                        max_bytes >> 20
                    ));
                }
                Ok(bytes)
            }
        }
    }
}

/// File names a directory is searched for.
const DIR_EXTENSIONS: [&str; 4] = ["json", "jsonl", "ndjson", "log"];

/// Reads every input named on the command line. `-` is stdin (once); a directory gives its
/// `*.json`, `*.jsonl`, `*.ndjson` and `*.log` files, sorted by name, not its subdirectories.
/// Errors name the path and exit 2.
pub fn gather(paths: &[PathBuf], max_bytes: u64) -> anyhow::Result<Vec<Input>> {
    let mut inputs = Vec::new();
    let mut stdin_read = false;
    for path in paths {
        if path.as_os_str() == "-" {
            if stdin_read {
                return Err(usage("fleet: `-` (stdin) given more than once"));
            }
            stdin_read = true;
            let mut bytes = Vec::new();
            std::io::stdin()
                .lock()
                .take(max_bytes + 1)
                .read_to_end(&mut bytes)
                .map_err(|e| cannot_read(e, &"stdin"))?;
            if bytes.len() as u64 > max_bytes {
                return Err(anyhow::anyhow!(
                    "fleet: stdin: more than {} MiB; give the results as files or a directory",
                    max_bytes >> 20
                ));
            }
            inputs.push(Input {
                name: "stdin".into(),
                content: Content::Read(bytes),
                in_dir: false,
            });
            continue;
        }
        let shown = path.display();
        let meta = std::fs::metadata(path).map_err(|e| cannot_read(e, &shown))?;
        if meta.is_dir() {
            let found = dir_files(path)?;
            if found.is_empty() {
                return Err(anyhow::anyhow!(
                    "fleet: {shown}: a directory without results: no *.{} files in it",
                    DIR_EXTENSIONS.join(", *.")
                ));
            }
            for f in found {
                inputs.push(Input {
                    name: f.display().to_string(),
                    content: check_file(&f, max_bytes)?,
                    in_dir: true,
                });
            }
        } else {
            inputs.push(Input {
                name: shown.to_string(),
                content: check_file(path, max_bytes)?,
                in_dir: false,
            });
        }
    }
    Ok(inputs)
}

fn dir_files(dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let shown = dir.display();
    let entries = std::fs::read_dir(dir).map_err(|e| cannot_read(e, &shown))?;
    let mut files = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| cannot_read(e, &shown))?;
        let path = entry.path();
        let name = entry.file_name();
        let name = name.to_string_lossy();
        let wanted = !name.starts_with('.')
            && path
                .extension()
                .and_then(|x| x.to_str())
                .is_some_and(|x| DIR_EXTENSIONS.contains(&x));
        if wanted && std::fs::metadata(&path).is_ok_and(|m| m.is_file()) {
            files.push(path);
        }
    }
    files.sort();
    Ok(files)
}

/// An input that cannot be read, named: "fleet: FILE: cannot read: <the OS's reason>".
fn cannot_read(e: std::io::Error, shown: &dyn std::fmt::Display) -> anyhow::Error {
    anyhow::Error::new(e).context(format!("fleet: {shown}: cannot read"))
}

/// Checks a node's file before it is read whole, refusing what cannot be one: exit 2, naming
/// the file.
fn check_file(path: &Path, max_bytes: u64) -> anyhow::Result<Content> {
    let shown = path.display();
    // As for a history read by report: no symlink, and as root nothing others can write.
    crate::history::check_for_reading(path).map_err(|e| anyhow::Error::new(e).context("fleet"))?;
    let meta = std::fs::metadata(path).map_err(|e| cannot_read(e, &shown))?;
    if meta.len() > max_bytes {
        return Err(anyhow::anyhow!(
            "fleet: {shown}: larger than {} MiB; not a node's result or history",
            max_bytes >> 20
        ));
    }
    Ok(Content::File(path.to_path_buf(), max_bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_are_checked_when_gathered_and_read_one_at_a_time_when_judged() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a.json"), dir.path().join("b.json"));
        std::fs::write(&a, b"{}").unwrap();
        std::fs::write(&b, b"[]").unwrap();
        let mut inputs = gather(&[dir.path().to_path_buf()], 1 << 20)
            .unwrap()
            .into_iter();
        // Nothing was read yet: a file changed after gathering is read as it is then.
        std::fs::write(&b, b"[1]").unwrap();
        assert_eq!(inputs.next().unwrap().load().unwrap(), b"{}");
        let second = inputs.next().unwrap();
        assert!(second.in_dir);
        assert_eq!(second.load().unwrap(), b"[1]");
        // A file grown past the limit after gathering is still refused, naming it.
        let big = gather(std::slice::from_ref(&a), 4).unwrap();
        std::fs::write(&a, b"0123456789").unwrap();
        let e = big
            .into_iter()
            .next()
            .unwrap()
            .load()
            .unwrap_err()
            .to_string();
        assert!(e.contains("a.json: larger than"), "{e}");
    }
}
