//! What `iopscheck fleet` reads, before anything is judged: files, directories of files, and
//! `-`, a stream on stdin (e.g. `kubectl logs --prefix` of many pods, each printing its result
//! with `--format jsonl`). How a stream splits and a node given twice counts once is
//! `crate::fleet::stream`'s.

use std::io::BufRead;
use std::path::{Path, PathBuf};

use crate::error::usage;

/// One input: a file, a file found in a directory, or stdin. A file is checked when gathered
/// and opened only when its turn comes ([`Input::open`]); every input is read as it streams
/// in, so that a fleet of thousands of nodes, or a history of years, is never held whole.
#[derive(Debug)]
pub struct Input {
    pub name: String,
    source: Source,
    /// Found in a directory the user named rather than named itself: a fleet's own result in
    /// it (written there by an earlier `fleet -o`) is left out with a warning, not an error.
    pub in_dir: bool,
}

#[derive(Debug)]
enum Source {
    Stdin,
    /// A file checked by [`check_file`].
    File(PathBuf),
}

impl Input {
    /// Whether the input is stdin (`-`).
    pub fn is_stdin(&self) -> bool {
        matches!(self.source, Source::Stdin)
    }

    /// The input to read; a file is opened now. Errors name the file and exit 2.
    pub fn open(&self) -> anyhow::Result<Box<dyn BufRead>> {
        Ok(match &self.source {
            Source::Stdin => Box::new(std::io::BufReader::with_capacity(
                crate::history::READ_BUFFER,
                std::io::stdin(),
            )),
            // a bundle: its history, judged as any node's history is
            Source::File(p) if crate::bundle_input::is_gzip(p) => {
                Box::new(std::io::BufReader::with_capacity(
                    crate::history::READ_BUFFER,
                    crate::bundle_input::open(p)?.history,
                ))
            }
            Source::File(p) => {
                let f = std::fs::File::open(p).map_err(|e| cannot_read(e, &p.display()))?;
                Box::new(std::io::BufReader::with_capacity(
                    crate::history::READ_BUFFER,
                    f,
                ))
            }
        })
    }
}

/// File names a directory is searched for.
const DIR_EXTENSIONS: [&str; 4] = ["json", "jsonl", "ndjson", "log"];

/// Reads every input named on the command line. `-` is stdin (once); a directory gives its
/// `*.json`, `*.jsonl`, `*.ndjson` and `*.log` files, sorted by name, not its subdirectories.
/// Errors name the path and exit 2.
pub fn gather(paths: &[PathBuf]) -> anyhow::Result<Vec<Input>> {
    let mut inputs = Vec::new();
    let mut stdin_read = false;
    for path in paths {
        if path.as_os_str() == "-" {
            if stdin_read {
                return Err(usage("fleet: `-` (stdin) given more than once"));
            }
            stdin_read = true;
            inputs.push(Input {
                name: "stdin".into(),
                source: Source::Stdin,
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
                    source: check_file(&f)?,
                    in_dir: true,
                });
            }
        } else {
            inputs.push(Input {
                name: shown.to_string(),
                source: check_file(path)?,
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

/// Checks a node's file before it is read, refusing what cannot be one: exit 2, naming the
/// file.
fn check_file(path: &Path) -> anyhow::Result<Source> {
    let shown = path.display();
    // As for a history read by report: no symlink, and as root nothing others can write.
    crate::history::check_for_reading(path).map_err(|e| anyhow::Error::new(e).context("fleet"))?;
    let meta = std::fs::metadata(path).map_err(|e| cannot_read(e, &shown))?;
    if !meta.is_file() {
        return Err(anyhow::anyhow!(
            "fleet: {shown}: not a regular file; give the nodes' result or history files"
        ));
    }
    Ok(Source::File(path.to_path_buf()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    fn read(i: &Input) -> Vec<u8> {
        let mut v = Vec::new();
        i.open().unwrap().read_to_end(&mut v).unwrap();
        v
    }

    #[test]
    fn files_are_checked_when_gathered_and_opened_one_at_a_time_when_judged() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a.json"), dir.path().join("b.json"));
        std::fs::write(&a, b"{}").unwrap();
        std::fs::write(&b, b"[]").unwrap();
        let inputs = gather(&[dir.path().to_path_buf()]).unwrap();
        // Nothing was read yet: a file changed after gathering is read as it is then.
        std::fs::write(&b, b"[1]").unwrap();
        assert_eq!(read(&inputs[0]), b"{}");
        assert!(inputs[1].in_dir && !inputs[1].is_stdin());
        assert_eq!(read(&inputs[1]), b"[1]");
        // A file removed after gathering is an error naming it.
        std::fs::remove_file(&a).unwrap();
        let e = inputs[0].open().err().unwrap().to_string();
        assert!(e.contains("a.json: cannot read"), "{e}");
    }
}
