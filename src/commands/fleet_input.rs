//! What `iopscheck fleet` reads, before anything is judged: files, directories of files, and
//! `-`, a stream on stdin (e.g. `kubectl logs --prefix` of many pods, each printing its result
//! with `--format jsonl`). How a stream splits and a node given twice counts once is
//! `crate::fleet::stream`'s.

use std::io::Read;
use std::path::{Path, PathBuf};

use crate::app::usage;

/// One input: a file, a file found in a directory, or stdin.
#[derive(Debug)]
pub struct Input {
    pub name: String,
    pub bytes: Vec<u8>,
    /// Found in a directory the user named rather than named itself: a fleet's own result in
    /// it (written there by an earlier `fleet -o`) is left out with a warning, not an error.
    pub in_dir: bool,
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
                .map_err(|e| usage(format!("fleet: stdin: cannot read: {e}")))?;
            if bytes.len() as u64 > max_bytes {
                return Err(usage(format!(
                    "fleet: stdin: more than {} MiB; give the results as files or a directory",
                    max_bytes >> 20
                )));
            }
            inputs.push(Input {
                name: "stdin".into(),
                bytes,
                in_dir: false,
            });
            continue;
        }
        let shown = path.display();
        let meta = std::fs::metadata(path)
            .map_err(|e| usage(format!("fleet: {shown}: cannot read: {e}")))?;
        if meta.is_dir() {
            let found = dir_files(path)?;
            if found.is_empty() {
                return Err(usage(format!(
                    "fleet: {shown}: a directory without results: no *.{} files in it",
                    DIR_EXTENSIONS.join(", *.")
                )));
            }
            for f in found {
                inputs.push(Input {
                    name: f.display().to_string(),
                    bytes: read_file(&f, max_bytes)?,
                    in_dir: true,
                });
            }
        } else {
            inputs.push(Input {
                name: shown.to_string(),
                bytes: read_file(path, max_bytes)?,
                in_dir: false,
            });
        }
    }
    Ok(inputs)
}

fn dir_files(dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let shown = dir.display();
    let entries =
        std::fs::read_dir(dir).map_err(|e| usage(format!("fleet: {shown}: cannot read: {e}")))?;
    let mut files = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| usage(format!("fleet: {shown}: cannot read: {e}")))?;
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

/// Reads a node's file whole, refusing what cannot be one: exit 2, naming the file.
fn read_file(path: &Path, max_bytes: u64) -> anyhow::Result<Vec<u8>> {
    let shown = path.display();
    // As for a history read by report: no symlink, and as root nothing others can write.
    crate::history::check_for_reading(path).map_err(|e| usage(format!("fleet: {e}")))?;
    let meta =
        std::fs::metadata(path).map_err(|e| usage(format!("fleet: {shown}: cannot read: {e}")))?;
    if meta.len() > max_bytes {
        return Err(usage(format!(
            "fleet: {shown}: larger than {} MiB; not a node's result or history",
            max_bytes >> 20
        )));
    }
    std::fs::read(path).map_err(|e| usage(format!("fleet: {shown}: cannot read: {e}")))
}
