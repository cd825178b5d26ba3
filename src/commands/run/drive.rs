//! The engine on its own thread, waited for while progress is drawn and signals answered.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::engine::{EngineError, Live, Phase};
use crate::error::RunError;
use crate::testfile::{self};

use super::progress::Progress;
use crate::commands::signals::{self, Signals};

/// The signal that ended the invocation (see signals.rs).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Stop(pub(super) i32);

impl Stop {
    pub(super) fn code(self) -> u8 {
        signals::exit_code(self.0)
    }
}

pub(super) fn create_error(dir: &Path, e: std::io::Error) -> anyhow::Error {
    let why = match e.raw_os_error() {
        Some(libc::EACCES) | Some(libc::EPERM) => {
            "permission denied creating the test file".to_string()
        }
        Some(libc::EROFS) => "read-only filesystem".to_string(),
        Some(libc::ENOSPC) => "no space left for the test file".to_string(),
        _ => format!("cannot create the test file: {e}"),
    };
    RunError::TestFile {
        dir: dir.display().to_string(),
        why,
    }
    .into()
}

pub(super) fn engine_error(e: EngineError, dir: &Path) -> anyhow::Error {
    let dir = dir.display().to_string();
    match e.raw_os_error() {
        Some(libc::ENOSPC) | Some(libc::EDQUOT) => RunError::DiskFull { dir, source: e },
        _ => RunError::Engine { dir, source: e },
    }
    .into()
}

pub(super) type EngineResult<T> = Result<T, EngineError>;

pub(super) fn spawn_engine<T: Send + 'static>(
    work: impl FnOnce() -> EngineResult<T> + Send + 'static,
) -> tokio::sync::oneshot::Receiver<EngineResult<T>> {
    let (tx, rx) = tokio::sync::oneshot::channel();
    std::thread::Builder::new()
        .name("iopscheck-io".into())
        .spawn(move || {
            let _ = tx.send(work());
        })
        .expect("cannot start the I/O thread");
    rx
}

pub(super) enum Driven<T> {
    Done(EngineResult<T>),
    Stopped(Stop),
}

/// Waits for the engine thread, updating progress and answering signals: on a signal the test
/// files are removed at once, the engine is told to stop, and we give it a moment to drain.
pub(super) async fn drive<T>(
    mut rx: tokio::sync::oneshot::Receiver<EngineResult<T>>,
    live: &Live,
    cancel: &AtomicBool,
    progress: &Progress,
    sigs: &mut Signals,
    run: u32,
) -> Driven<T> {
    let mut tick = tokio::time::interval(Duration::from_millis(250));
    let started = Instant::now();
    loop {
        let stop = tokio::select! {
            r = &mut rx => return Driven::Done(r.unwrap_or(Err(EngineError::Interrupted))),
            _ = tick.tick() => { progress.update(run, live, started); continue; }
            sig = sigs.recv() => Stop(sig),
        };
        cancel.store(true, Ordering::SeqCst);
        testfile::remove_registered();
        testfile::detach_descriptors();
        progress.clear();
        // The I/O loop sees the flag within an I/O and drains; a write held up by dirty-page
        // throttling is ended by the process exit anyway, so the wait is short. The final
        // fsync runs in a child process that cannot be stopped and need not be waited for: it
        // finishes flushing the unlinked file on its own.
        if live.phase() != Phase::FinalFsync {
            let _ = tokio::time::timeout(Duration::from_millis(300), rx).await;
        }
        return Driven::Stopped(stop);
    }
}
