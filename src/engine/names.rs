//! Which engine, in three words that are never interchanged (see docs/design.md, "Names"):
//!
//! - what the user asks for: [`EngineRequest`] (`--engine auto|posixaio|…|fio`);
//! - what fio's job calls an engine: `job::IoEngine` (`ioengine=`, in policies and imported
//!   outputs, any name fio knows);
//! - what ran, as a record's `engine` says: [`EngineUsed`], a native [`Backend`] or fio with its
//!   ioengine.
//!
//! Every conversion between them is here: a back end is named as fio names the engine it
//! follows, and a record's `engine` string is written and read back only by [`EngineUsed`].

use std::fmt;

use crate::job::IoEngine;

/// What `--engine` asks for: the policy's engine (`auto`, resolved by `run`), one of the
/// native engine's back ends, or the installed fio. What then ran is `engine::EngineUsed`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EngineRequest {
    Auto,
    Native(Backend),
    Fio,
}

impl EngineRequest {
    /// The value as `--engine` takes it.
    pub fn name(self) -> &'static str {
        match self {
            EngineRequest::Auto => "auto",
            EngineRequest::Native(b) => b.as_str(),
            EngineRequest::Fio => "fio",
        }
    }
}

/// The back ends the native engine implements.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Backend {
    /// glibc `aio_write`/`aio_suspend`, as fio's posixaio.
    Posixaio,
    /// io_uring through the io-uring crate (IORING_OP_WRITE/READ, IORING_OP_FSYNC).
    IoUring,
    /// `pwrite`/`pread` in the submitting thread.
    Psync,
    /// `lseek` then `write`/`read` in the submitting thread, as fio's sync.
    Sync,
    /// Linux native AIO (io_setup/io_submit/io_getevents) through raw syscalls.
    Libaio,
}

impl Backend {
    pub const ALL: [Backend; 5] = [
        Backend::Posixaio,
        Backend::IoUring,
        Backend::Psync,
        Backend::Sync,
        Backend::Libaio,
    ];

    /// fio's name of the engine this back end follows (as `--engine` and records write it).
    pub fn as_str(self) -> &'static str {
        match self {
            Backend::Posixaio => "posixaio",
            Backend::IoUring => "io_uring",
            Backend::Psync => "psync",
            Backend::Sync => "sync",
            Backend::Libaio => "libaio",
        }
    }

    /// The back end for a job's `ioengine`, if iopscheck implements it.
    pub fn for_engine(e: &IoEngine) -> Option<Backend> {
        match e {
            IoEngine::Posixaio => Some(Backend::Posixaio),
            IoEngine::IoUring => Some(Backend::IoUring),
            IoEngine::Psync => Some(Backend::Psync),
            IoEngine::Sync => Some(Backend::Sync),
            IoEngine::Libaio => Some(Backend::Libaio),
            IoEngine::Other(_) => None,
        }
    }

    /// One line for the user: how this back end does its I/O.
    pub fn describe(self) -> &'static str {
        match self {
            Backend::Posixaio => {
                "glibc POSIX AIO (aio_write/aio_suspend; one helper thread per file, as fio's posixaio)"
            }
            Backend::IoUring => {
                "io_uring (IORING_OP_WRITE/READ, one submit per I/O, as fio's io_uring)"
            }
            Backend::Psync => "pwrite/pread in the job's thread (as fio's psync)",
            Backend::Sync => "lseek, then write/read, in the job's thread (as fio's sync)",
            Backend::Libaio => "Linux native AIO (io_submit/io_getevents, as fio's libaio)",
        }
    }

    /// Whether the back end reports submission latency (slat), as fio's async engines do.
    pub fn is_async(self) -> bool {
        !matches!(self, Backend::Psync | Backend::Sync)
    }
}

impl fmt::Display for Backend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// fio's engine that a back end follows.
impl From<Backend> for IoEngine {
    fn from(b: Backend) -> IoEngine {
        match b {
            Backend::Posixaio => IoEngine::Posixaio,
            Backend::IoUring => IoEngine::IoUring,
            Backend::Psync => IoEngine::Psync,
            Backend::Sync => IoEngine::Sync,
            Backend::Libaio => IoEngine::Libaio,
        }
    }
}

/// What ran a test, as the record's `engine` field writes it: a native back end
/// (`posixaio`), or fio with the job's ioengine (`fio/posixaio`; `fio/unknown` when an
/// imported output does not say). Records keep the string as written: older records, and
/// imports of engines iopscheck does not know, are read back through [`EngineUsed::ioengine_of`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EngineUsed {
    Native(Backend),
    Fio(Option<IoEngine>),
}

/// How a record marks a run that fio did.
const FIO_PREFIX: &str = "fio/";
/// A fio run whose output does not name its engine.
const UNKNOWN: &str = "unknown";

impl EngineUsed {
    /// fio's name of the engine in a record's `engine` ("fio/posixaio" → "posixaio",
    /// "psync" → "psync"), or None where the record does not say ("", "fio/unknown").
    pub fn ioengine_of(recorded: &str) -> Option<&str> {
        let e = recorded.strip_prefix(FIO_PREFIX).unwrap_or(recorded);
        (!e.is_empty() && e != UNKNOWN).then_some(e)
    }
}

impl fmt::Display for EngineUsed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EngineUsed::Native(b) => b.fmt(f),
            EngineUsed::Fio(Some(e)) => write!(f, "{FIO_PREFIX}{e}"),
            EngineUsed::Fio(None) => write!(f, "{FIO_PREFIX}{UNKNOWN}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_back_end_is_named_as_fio_names_its_engine() {
        for b in Backend::ALL {
            let e = IoEngine::from(b);
            assert_eq!(b.as_str(), e.as_str());
            assert_eq!(IoEngine::from(b.as_str()), e);
            assert_eq!(Backend::for_engine(&e), Some(b));
        }
        assert_eq!(Backend::for_engine(&IoEngine::from("windowsaio")), None);
    }

    #[test]
    fn every_built_in_policy_runs_on_its_own_engine_under_auto() {
        // `--engine auto` runs `for_engine(job.ioengine)`; the record names that back end,
        // and the policy must accept it, or its own runs are never its test.
        for (name, _) in crate::policy::BUILTIN {
            let policy = crate::policy::resolve(name).unwrap().policy;
            let b = Backend::for_engine(&policy.job.ioengine)
                .unwrap_or_else(|| panic!("{name}: no back end for {}", policy.job.ioengine));
            let recorded = EngineUsed::Native(b).to_string();
            assert!(
                policy.accepts_engine(&recorded),
                "{name}: ioengine {} runs as {recorded}, which the policy does not accept",
                policy.job.ioengine
            );
        }
    }

    #[test]
    fn a_record_s_engine_reads_back_as_fio_s_name() {
        let cases = [
            (
                EngineUsed::Native(Backend::IoUring),
                "io_uring",
                Some("io_uring"),
            ),
            (
                EngineUsed::Fio(Some(IoEngine::Libaio)),
                "fio/libaio",
                Some("libaio"),
            ),
            (
                EngineUsed::Fio(Some(IoEngine::from("windowsaio"))),
                "fio/windowsaio",
                Some("windowsaio"),
            ),
            (EngineUsed::Fio(None), "fio/unknown", None),
        ];
        for (used, written, read) in cases {
            assert_eq!(used.to_string(), written);
            assert_eq!(EngineUsed::ioengine_of(written), read, "{written}");
        }
        assert_eq!(EngineUsed::ioengine_of(""), None);
    }
}
