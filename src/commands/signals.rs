//! The signals that end a run. Every signal whose default action would end the process is
//! answered the same way: the test file is removed at once, the engine (or fio) is stopped,
//! nothing is recorded for the interrupted run, and the exit code is 128 + the signal's
//! number, as a shell reports a process killed by it.
//!
//! Not in the list: SIGPIPE (ignored, so that a closed stdout is an EPIPE on the write that
//! met it, see `crate::out`), SIGKILL and SIGSTOP (cannot be caught), and the signals of a
//! program fault (SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGTRAP, SIGSYS), which no cleanup could
//! trust itself to survive; a file they leave is removed by the next run (testfile.rs).
//!
//! A signal the check was started with ignored stays ignored: `nohup` ignores SIGHUP, and a
//! shell ignores SIGINT and SIGQUIT for a job it starts in the background, so that closing
//! the terminal or a ^C meant for the foreground does not end it. A handler of ours in their
//! place would end such a run anyway.

use std::sync::OnceLock;

use anyhow::Context as _;
use tokio::signal::unix::{SignalKind, signal};
use tokio::sync::mpsc;

/// The catchable signals whose default action is to terminate (signal(7)), real-time ones
/// included.
pub fn terminating() -> Vec<i32> {
    let mut v = vec![
        libc::SIGHUP,
        libc::SIGINT,
        libc::SIGQUIT,
        libc::SIGTERM,
        libc::SIGUSR1,
        libc::SIGUSR2,
        libc::SIGALRM,
        libc::SIGVTALRM,
        libc::SIGPROF,
        libc::SIGXCPU,
        libc::SIGXFSZ,
        libc::SIGIO,
        libc::SIGPWR,
        libc::SIGSTKFLT,
    ];
    v.extend(libc::SIGRTMIN()..=libc::SIGRTMAX());
    v
}

/// The terminating signals this process was started with ignored. Read once, before any
/// handler of ours exists (`Signals::watch` and `restore_defaults` both ask here first).
fn ignored_at_start() -> &'static [i32] {
    static IGNORED: OnceLock<Vec<i32>> = OnceLock::new();
    IGNORED.get_or_init(|| {
        terminating()
            .into_iter()
            .filter(|&sig| crate::syscalls::signal_ignored(sig))
            .collect()
    })
}

/// The terminating signals a run answers: all but those it was started with ignored.
fn answered() -> Vec<i32> {
    let ignored = ignored_at_start();
    terminating()
        .into_iter()
        .filter(|sig| !ignored.contains(sig))
        .collect()
}

/// The name of a signal for messages: "SIGHUP", or "signal 40".
pub fn name(sig: i32) -> String {
    let known = [
        (libc::SIGHUP, "SIGHUP"),
        (libc::SIGINT, "SIGINT"),
        (libc::SIGQUIT, "SIGQUIT"),
        (libc::SIGTERM, "SIGTERM"),
        (libc::SIGUSR1, "SIGUSR1"),
        (libc::SIGUSR2, "SIGUSR2"),
        (libc::SIGALRM, "SIGALRM"),
        (libc::SIGVTALRM, "SIGVTALRM"),
        (libc::SIGPROF, "SIGPROF"),
        (libc::SIGXCPU, "SIGXCPU"),
        (libc::SIGXFSZ, "SIGXFSZ"),
        (libc::SIGIO, "SIGIO"),
        (libc::SIGPWR, "SIGPWR"),
        (libc::SIGSTKFLT, "SIGSTKFLT"),
    ];
    known
        .iter()
        .find(|(n, _)| *n == sig)
        .map(|(_, s)| s.to_string())
        .unwrap_or_else(|| format!("signal {sig}"))
}

/// Watches every terminating signal it answers from the moment it is created; `recv` returns the next
/// one's number. Must be created inside the tokio runtime.
pub struct Signals {
    rx: mpsc::UnboundedReceiver<i32>,
}

impl Signals {
    pub fn watch() -> anyhow::Result<Signals> {
        let (tx, rx) = mpsc::unbounded_channel();
        for sig in answered() {
            let mut s = signal(SignalKind::from_raw(sig))
                .with_context(|| format!("cannot watch {}", name(sig)))?;
            let tx = tx.clone();
            tokio::spawn(async move {
                while s.recv().await.is_some() {
                    if tx.send(sig).is_err() {
                        break;
                    }
                }
            });
        }
        Ok(Signals { rx })
    }

    /// The next signal received (pending ones first).
    pub async fn recv(&mut self) -> i32 {
        self.rx.recv().await.unwrap_or(libc::SIGTERM)
    }
}

/// Gives every terminating signal it answers its default action back, once nothing is left
/// to clean up (one it was started with ignored stays ignored).
pub fn restore_defaults() {
    for sig in answered() {
        // No handler of ours runs any more.
        crate::syscalls::default_signal_action(sig);
    }
}

/// The exit code for a run ended by `sig`.
pub fn exit_code(sig: i32) -> u8 {
    crate::exit::Exit::Signal(sig).code()
}
