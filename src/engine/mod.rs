//! The native engine: runs a [`Job`] on files the caller created, faithful to fio
//! (fio-semantics.md §11). One timed loop for every back end; a back end only submits and
//! reaps. The caller runs [`run`] on a dedicated OS thread; no async runtime is involved.
//!
//! The caller owns the test files (created exclusively, removed at the end: see
//! `crate::testfile`). The engine lays them out ([`layout`]) and opens its own descriptors on
//! them through `/proc/self/fd`, so it never resolves a path that someone could have swapped.

use std::fs::File;
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU64, Ordering};

use crate::job::{IoEngine, Job};
use crate::measure::Measurement;

/// The back ends iopscheck implements itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Backend {
    /// glibc `aio_write`/`aio_suspend`, as fio's posixaio.
    Posixaio,
    /// io_uring through the io-uring crate (IORING_OP_WRITE/READ, IORING_OP_FSYNC).
    IoUring,
    /// `pwrite`/`pread` in the submitting thread.
    Psync,
    /// Linux native AIO (io_setup/io_submit/io_getevents) through raw syscalls.
    Libaio,
}

impl Backend {
    pub fn as_str(self) -> &'static str {
        match self {
            Backend::Posixaio => "posixaio",
            Backend::IoUring => "io_uring",
            Backend::Psync => "psync",
            Backend::Libaio => "libaio",
        }
    }

    /// The back end for a job's `ioengine`, if iopscheck implements it.
    pub fn for_engine(e: &IoEngine) -> Option<Backend> {
        match e {
            IoEngine::Posixaio => Some(Backend::Posixaio),
            IoEngine::IoUring => Some(Backend::IoUring),
            IoEngine::Psync | IoEngine::Sync => Some(Backend::Psync),
            IoEngine::Libaio => Some(Backend::Libaio),
            IoEngine::Other(_) => None,
        }
    }
}

impl std::fmt::Display for Backend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What the engine is doing, for the progress display.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Phase {
    Idle = 0,
    LayingOut = 1,
    Running = 2,
    Draining = 3,
    FinalFsync = 4,
    Done = 5,
}

impl Phase {
    pub fn label(self) -> &'static str {
        match self {
            Phase::Idle => "starting",
            Phase::LayingOut => "laying out",
            Phase::Running => "running",
            Phase::Draining => "draining",
            Phase::FinalFsync => "final fsync",
            Phase::Done => "done",
        }
    }
    fn from_u8(v: u8) -> Phase {
        match v {
            1 => Phase::LayingOut,
            2 => Phase::Running,
            3 => Phase::Draining,
            4 => Phase::FinalFsync,
            5 => Phase::Done,
            _ => Phase::Idle,
        }
    }
}

/// Counters the engine updates as it goes, read by the progress display from another thread.
#[derive(Debug, Default)]
pub struct Live {
    phase: AtomicU8,
    /// I/Os completed so far in the timed phase (all jobs).
    pub ios: AtomicU64,
    /// Bytes laid out so far, and the total, during layout.
    pub layout_done: AtomicU64,
    pub layout_total: AtomicU64,
}

impl Live {
    pub fn phase(&self) -> Phase {
        Phase::from_u8(self.phase.load(Ordering::Relaxed))
    }
    pub fn set_phase(&self, p: Phase) {
        self.phase.store(p as u8, Ordering::Relaxed);
    }
}

#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// The cancel flag was raised (SIGINT/SIGTERM); nothing measured is valid.
    #[error("interrupted")]
    Interrupted,
    /// A system call failed; `op` says which and where, e.g. "write at offset 4096".
    #[error("{op}: {source}")]
    Io {
        op: String,
        #[source]
        source: std::io::Error,
    },
    /// The kernel or filesystem refuses what the job needs (io_uring disabled, O_DIRECT on
    /// tmpfs, …). The reason is one sentence for the user.
    #[error("{0}")]
    Unsupported(String),
}

impl EngineError {
    /// The errno behind an I/O error, e.g. ENOSPC for a full disk.
    pub fn raw_os_error(&self) -> Option<i32> {
        match self {
            EngineError::Io { source, .. } => source.raw_os_error(),
            _ => None,
        }
    }
}

/// Checks that io_uring can be used here (kernel support, `kernel.io_uring_disabled`,
/// seccomp in containers). Err carries the reason in one sentence.
pub fn probe_io_uring() -> Result<(), String> {
    todo!("engine helper")
}

/// Prepares a freshly created, empty test file for the job, outside the timed interval:
/// fallocate to `job.size` and fadvise(DONTNEED) for write jobs (fio writes no data); for
/// jobs that read, writes the whole file with incompressible data first and fsyncs it, as fio
/// lays out files for reads. Updates `live.layout_*`; stops early when `cancel` is raised.
pub fn layout(file: &File, job: &Job, live: &Live, cancel: &AtomicBool) -> Result<(), EngineError> {
    let _ = (file, job, live, cancel);
    todo!("engine helper")
}

/// Runs the job's timed phase on `files` (one per `numjobs`, already laid out) and returns
/// the group's measurement (fio's group_reporting: bytes and I/Os summed, runtime the
/// longest). Blocks until done; call it on a dedicated thread.
pub fn run(
    job: &Job,
    files: &[File],
    backend: Backend,
    live: &Live,
    cancel: &AtomicBool,
) -> Result<Measurement, EngineError> {
    let _ = (job, files, backend, live, cancel);
    todo!("engine helper")
}
