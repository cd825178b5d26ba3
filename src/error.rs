//! The errors a command ends with, kept typed (with `anyhow` context) until the edge, and the
//! one place they become an exit code ([`exit_code`], contract.md "Exit codes").

use crate::engine::EngineError;

/// Bad usage: a flag's value, or flags together, that cannot work. The user's to correct.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct UsageError(pub String);

/// A [`UsageError`]: bad flags, printed as they are.
pub fn usage(msg: impl Into<String>) -> anyhow::Error {
    UsageError(msg.into()).into()
}

/// The test could not run, or stopped before its end: nothing was recorded for the run, and
/// the test file was removed.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The test file could not be created in --dir.
    #[error("--dir {dir}: {why}")]
    TestFile { dir: String, why: String },
    /// The filesystem filled up during the test (another process may be filling it).
    #[error(
        "disk full: {source} in {dir}: the filesystem ran out of space during the test (another process may be filling it); the test file was removed, nothing was recorded for this run"
    )]
    DiskFull { dir: String, source: EngineError },
    /// The engine failed, or the kernel refused what the job needs.
    #[error("the test could not run in {dir}: {source}")]
    Engine { dir: String, source: EngineError },
    /// Another run holds this host, or the run lock cannot be taken.
    #[error("{0}")]
    Lock(String),
    /// fio (`--engine fio`) could not be started, failed, or left no output to read.
    #[error("--engine fio: {0}")]
    Fio(String),
}

/// What kind of error ended a command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Bad flags ([`UsageError`]).
    Usage,
    /// The test could not run ([`RunError`]).
    CouldNotRun,
    /// What iopscheck was given, or asked to write, cannot be used: a policy, a fio output, a
    /// history, a node's result, a file to read or write. Any error not typed otherwise.
    Input,
}

/// The kind of an error, from the first typed error in its chain.
pub fn kind(e: &anyhow::Error) -> Kind {
    for c in e.chain() {
        if c.is::<UsageError>() {
            return Kind::Usage;
        }
        if c.is::<RunError>() {
            return Kind::CouldNotRun;
        }
    }
    Kind::Input
}

/// The exit code of a command that ended with `e`. contract.md gives every error the same
/// code, 2 ("bad usage, invalid input, the test could not run"); a kind that ever needs its own
/// code gets it here and nowhere else.
pub fn exit_code(e: &anyhow::Error) -> u8 {
    match kind(e) {
        Kind::Usage | Kind::CouldNotRun | Kind::Input => crate::exit::Exit::Error.code(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_disk_filling_mid_run_is_a_test_that_could_not_run_not_bad_usage() {
        let full = EngineError::Io {
            op: "write at offset 4096".into(),
            source: std::io::Error::from_raw_os_error(libc::ENOSPC),
        };
        let e = anyhow::Error::from(RunError::DiskFull {
            dir: "/data".into(),
            source: full,
        })
        .context("run 2 of 3");
        assert_eq!(kind(&e), Kind::CouldNotRun);
        assert_eq!(exit_code(&e), 2);
        assert!(format!("{e:#}").contains("disk full: write at offset 4096"));
    }

    #[test]
    fn bad_flags_are_usage_and_what_was_read_is_input() {
        let e = anyhow::Error::from(UsageError("--runs: must be 1 to 1000".into()));
        assert_eq!(kind(&e), Kind::Usage);
        let e: anyhow::Error = std::io::Error::from(std::io::ErrorKind::NotFound).into();
        let e = e.context("history h.jsonl");
        assert_eq!(kind(&e), Kind::Input);
        assert_eq!(exit_code(&e), 2);
    }
}
