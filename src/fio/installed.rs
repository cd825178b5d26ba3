//! Which fio: the one binary every part of iopscheck means by "the installed fio" — what
//! `run --engine fio` runs and what a bundle's context.json describes. `$IOPSCHECK_FIO` when
//! set (a build of one's own, a wrapper), else `fio` on PATH.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The variable that names the fio binary.
pub const VAR: &str = "IOPSCHECK_FIO";

/// The fio binary: `$IOPSCHECK_FIO` when set and not empty (as given: whether it runs is
/// found when it is run), else the first regular file named `fio` on PATH, else `None`.
pub fn path() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os(VAR).filter(|v| !v.is_empty()) {
        return Some(PathBuf::from(p));
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .map(|dir| dir.join("fio"))
        .find(|p| p.is_file())
}

/// What the fio at `fio` ([`path`]) says of itself with `--version` ("fio-3.36"), if it runs
/// and says anything.
pub fn version(fio: &Path) -> Option<String> {
    let out = Command::new(fio)
        .arg("--version")
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
        .filter(|s| !s.is_empty())
}
