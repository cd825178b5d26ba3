//! `iopscheck import`, decided: a bundle is judged as its report was (a report's
//! configuration); fio outputs are read against the policy, with the node they came from, the
//! job assumed for outputs that do not state theirs, and where `--record` appends them.

use std::path::PathBuf;

use anyhow::Context as _;
use chrono::{DateTime, Utc};

use super::{Input, Outputs, ReportConfig, history_path, policy_input};
use crate::cli::{DEFAULT_POLICY, DecideArgs, HistoryArgs, ImportArgs, ReportArgs};
use crate::error::usage;
use crate::job::JobShape;
use crate::policy::{self, Policy};

/// `iopscheck import`, decided.
// One value per process, moved once: the variants' sizes do not matter.
#[allow(clippy::large_enum_variant)]
pub enum ImportConfig {
    /// A bundle, given alone: judged as its own report was.
    Bundle(ReportConfig),
    /// fio outputs.
    Outputs(ImportOutputs),
}

/// `iopscheck import FILE…` of fio outputs, decided.
pub struct ImportOutputs {
    /// The fio outputs; `-` is stdin.
    pub files: Vec<PathBuf>,
    pub policy: Policy,
    /// The node every record names: `--host`, else [`crate::machine::HOST_NOT_STATED`].
    pub host: String,
    /// `--dir`: the directory every record names.
    pub dir: Option<String>,
    /// `--assume-job`: as given, and its job's shape.
    pub assumed: Option<(String, JobShape)>,
    /// `--record`: the history the runs are appended to.
    pub record: Option<PathBuf>,
    pub now: DateTime<Utc>,
    pub strict: bool,
    pub outputs: Outputs,
}

impl TryFrom<ImportArgs> for ImportConfig {
    type Error = anyhow::Error;

    fn try_from(args: ImportArgs) -> anyhow::Result<ImportConfig> {
        // A bundle holds its own history, policy and host: it is judged as its report was.
        if let Some(b) = args.files.iter().find(|f| crate::bundle_input::is_gzip(f)) {
            return bundle(&args, b.clone()).map(ImportConfig::Bundle);
        }
        let loaded = policy::resolve(args.policy.as_deref().unwrap_or(DEFAULT_POLICY))?;
        let outputs = Outputs::from_args(&args.out)?;
        let history = history_path(&args.history.history);
        let mut inputs: Vec<Input> = args
            .files
            .iter()
            .map(|f| Input::new("an input", f))
            .collect();
        inputs.push(Input::new("the history", &history));
        inputs.extend(policy_input(&loaded, "-p/--policy"));
        // A customer's output is not this machine's: without --host the node is unknown.
        let host = match &args.host {
            Some(h) => crate::machine::check_host(h)
                .map_err(|e| usage(format!("--host: {e}")))?
                .to_string(),
            None if args.record => {
                return Err(usage(
                    "--record: name the node the output came from with --host (a fio output does not say); nothing was recorded",
                ));
            }
            None => crate::machine::HOST_NOT_STATED.to_string(),
        };
        let now = Utc::now();
        let assumed = match &args.assume_job {
            Some(spec) => {
                let a = policy::resolve(spec).context("--assume-job")?;
                inputs.extend(policy_input(&a, "--assume-job"));
                Some((spec.clone(), a.policy.job.shape()))
            }
            None => None,
        };
        outputs.refuse_inputs(&inputs)?;
        if args.record {
            super::history_file::refuse_foreign(&history)?;
        }
        Ok(ImportConfig::Outputs(ImportOutputs {
            files: args.files,
            policy: loaded.policy,
            host,
            dir: args.dir,
            assumed,
            record: args.record.then_some(history),
            now,
            strict: args.out.strict,
            outputs,
        }))
    }
}

/// A bundle given to import: read alone, never recorded, its job its records' own.
fn bundle(args: &ImportArgs, b: PathBuf) -> anyhow::Result<ReportConfig> {
    if args.files.len() > 1 {
        return Err(usage(format!(
            "{}: a bundle is read alone (it holds its own history, policy and host); give it as the only file",
            b.display()
        )));
    }
    if args.record {
        return Err(usage(format!(
            "--record: {} is a bundle, whose records are a history already; nothing was recorded",
            b.display()
        )));
    }
    if args.assume_job.is_some() {
        return Err(usage(format!(
            "--assume-job: {} is a bundle, whose records state their own job",
            b.display()
        )));
    }
    ReportConfig::try_from(ReportArgs {
        policy: args.policy.clone(),
        since: None,
        host: args.host.clone(),
        dir: None,
        engine: None,
        list: false,
        decide: DecideArgs {
            until_decided: false,
            alpha: 0.05,
            beta: 0.05,
            delta: 0.1,
            max_runs: 30,
            max_days: 7,
        },
        history: HistoryArgs { history: Some(b) },
        out: args.out.clone(),
    })
}
