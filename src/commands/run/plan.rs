//! What `run` decides before the first byte is written: the engine, the test, the records' context.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use crate::engine::EngineRequest;
use crate::engine::{self, Backend, EngineUsed};
use crate::error::usage;
use crate::evaluate::{self, Warning};
use crate::history::Target;
use crate::job::Job;
use crate::policy::Policy;

/// The `--engine` request resolved for this invocation: the back end `auto` chose, or the fio
/// binary found. Its records name it as an [`EngineUsed`].
#[derive(Debug, Clone)]
pub(super) enum Runner {
    Native(Backend),
    Fio(PathBuf),
}

impl Runner {
    /// What a record says ran `job`.
    pub(super) fn used(&self, job: &Job) -> EngineUsed {
        match self {
            Runner::Native(b) => EngineUsed::Native(*b),
            Runner::Fio(_) => EngineUsed::Fio(Some(job.ioengine.clone())),
        }
    }
}

/// Everything decided before the first byte is written.
pub(super) struct Plan {
    pub(super) job: Job,
    pub(super) runner: Runner,
    pub(super) runs: u32,
    pub(super) interval: Duration,
    pub(super) dir: PathBuf,
    pub(super) target: Target,
    pub(super) engine_note: Option<String>,
    pub(super) overrides: BTreeMap<String, String>,
    pub(super) policy_name: String,
    /// The metric of the policy's first deciding rule: the figure each run's line leads with,
    /// as the runs table shows it.
    pub(super) deciding: Option<String>,
    /// `--verbose`: each run's internals on stderr too.
    pub(super) verbose: bool,
    pub(super) history: Option<PathBuf>,
    pub(super) invocation: String,
    /// The node's name every record carries.
    pub(super) host: String,
    /// `--sustained`: the budget of its one run, and the policy's own runtime, which it runs
    /// at least.
    pub(super) sustained: Option<(Duration, Duration)>,
    /// `--until-decided`: the policy as written and the sequence's settings; the runs stop
    /// once the group's sequence has ended.
    pub(super) until: Option<(Policy, evaluate::sequential::Settings)>,
}

pub(super) fn choose_runner(
    request: EngineRequest,
    policy: &Policy,
    note: &mut Option<Warning>,
) -> anyhow::Result<Runner> {
    let backend = match request {
        EngineRequest::Fio => return find_fio().map(Runner::Fio),
        EngineRequest::Native(Backend::IoUring) => {
            engine::probe_io_uring()
                .map_err(|reason| usage(format!("--engine io_uring: {reason}")))?;
            Backend::IoUring
        }
        EngineRequest::Native(b) => b,
        EngineRequest::Auto => {
            let Some(b) = Backend::for_engine(&policy.job.ioengine) else {
                return Err(usage(format!(
                    "policy {}: ioengine {} is not one iopscheck runs itself; use --engine fio to run it with fio",
                    policy.name, policy.job.ioengine
                )));
            };
            if b == Backend::IoUring
                && let Err(reason) = engine::probe_io_uring()
            {
                *note = Some(Warning::EngineFallback {
                    asked: "io_uring".into(),
                    reason,
                    used: "posixaio".into(),
                });
                Backend::Posixaio
            } else {
                b
            }
        }
    };
    Ok(Runner::Native(backend))
}

/// The installed fio: $IOPSCHECK_FIO, else `fio` on PATH.
pub(super) fn find_fio() -> anyhow::Result<PathBuf> {
    crate::fio::installed::path().ok_or_else(|| usage(
        "--engine fio: fio is not installed (apt-get install fio, dnf install fio); or use the built-in engine with --engine auto",
    ))
}

pub(super) fn invocation_id() -> String {
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    format!("{:x}-{:x}", t.as_secs(), std::process::id())
}
