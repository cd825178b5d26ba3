//! The high-level configuration of a run, decided once from its flags (`cli::RunArgs`, the
//! low-level arguments, each already typed by clap) and the policy they name: what the
//! invocation runs, where, how often, and what it may change from the policy's test. Every
//! check that needs more than one value (an override against the policy's job, the history
//! flags against each other) is made here, naming the flag, before anything touches the disk.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use super::{Input, Outputs, history_path, policy_input};
use crate::cli::RunArgs;
use crate::engine::EngineRequest;
use crate::error::usage;
use crate::job::{JobError, Secs, Size};
use crate::policy::{self, Policy};
use crate::units;

/// `iopscheck run`, decided.
#[derive(Debug)]
pub struct RunConfig {
    /// The policy as written: the yardstick the runs are judged by, never changed.
    pub declared: Policy,
    /// What this invocation runs: the policy with --size and --runtime applied.
    pub policy: Policy,
    /// What differs from the policy's test, as records carry it (`size`, `runtime`).
    pub overrides: BTreeMap<String, String>,
    pub runs: u32,
    pub interval: Duration,
    pub engine: EngineRequest,
    pub dir: PathBuf,
    /// `--device`: raw block devices to test read-only instead of `dir` (run_devices.rs).
    pub devices: Vec<PathBuf>,
    /// The history to record in; None with --no-history.
    pub history: Option<PathBuf>,
    /// Wait for another run on this host rather than refuse.
    pub wait: bool,
    /// The node's name every record carries.
    pub host: String,
    pub outputs: Outputs,
    /// Warn-level rules decide the verdict too.
    pub strict: bool,
    /// `--sustained`: its budget (the one run's longest runtime).
    pub sustained: Option<Duration>,
    /// `--until-decided`: run until the sequential decision over the group's history ends
    /// (at most `runs` runs in this invocation).
    pub until: Option<crate::evaluate::sequential::Settings>,
    /// `--recheck-every`: once the sequence has ended, no test before its newest run is this
    /// old (with `until` only).
    pub recheck: Option<Duration>,
}

/// `--sustained-budget`'s default: longer than the common buckets last at their burst rate
/// (30 minutes, AWS's gp2 and Azure's P10: docs/sustained.md).
pub const SUSTAINED_BUDGET: Duration = Duration::from_secs(40 * 60);

impl TryFrom<RunArgs> for RunConfig {
    type Error = anyhow::Error;

    fn try_from(args: RunArgs) -> anyhow::Result<RunConfig> {
        let loaded = policy::resolve(&args.policy)?;
        let policy_input = policy_input(&loaded, "-p/--policy");
        let declared = loaded.policy;
        let mut policy = declared.clone();
        let mut overrides = BTreeMap::new();
        if let Some(v) = args.size {
            policy.job.size = Size(v);
            overrides.insert("size".into(), units::format_size_fio(v));
        }
        if let Some(d) = args.runtime {
            policy.job.runtime = Secs(d);
            overrides.insert("runtime".into(), units::format_duration(d));
        }
        // One run of the job, for as long as the budget at most: longer than the policy's
        // runtime, never shorter (a shorter budget is refused below).
        let sustained = args
            .sustained
            .then(|| args.sustained_budget.unwrap_or(SUSTAINED_BUDGET));
        if let Some(b) = sustained {
            if b < policy.job.runtime.0 {
                return Err(usage(format!(
                    "--sustained-budget: {} is shorter than the policy's runtime ({}): a sustained run goes on at least as long as the policy's test",
                    units::format_duration(b),
                    units::format_duration(policy.job.runtime.0)
                )));
            }
            policy.job.runtime = Secs(b);
            policy.job.time_based = true;
        }
        // An override may break the job (a size smaller than a block): name the flag, not the
        // policy, when it did.
        if let Err(e) = policy.job.validate() {
            let JobError::Invalid { field, msg } = &e;
            return Err(match *field {
                "size" if args.size.is_some() => usage(format!("--size: {msg}")),
                "runtime" if args.runtime.is_some() => usage(format!("--runtime: {msg}")),
                _ => anyhow::anyhow!("policy {}: job.{e}", policy.name),
            });
        }
        let outputs = Outputs::from_args(&args.out)?;
        let host = crate::machine::host_from(args.host.as_deref())
            .map_err(usage)?
            .unwrap_or_else(crate::machine::hostname);
        let history = (!args.no_history).then(|| history_path(&args.history.history));
        let mut inputs: Vec<Input> = policy_input.into_iter().collect();
        inputs.extend(history.iter().map(|h| Input::new("the history", h)));
        outputs.refuse_inputs(&inputs)?;
        if let Some(h) = &history {
            super::history_file::refuse_foreign(h)?;
        }
        let until = args.decide.settings();
        if until.is_some() {
            // The sequence is the history's runs of the policy's own test: without either
            // it would run to its budget and decide nothing.
            if history.is_none() {
                return Err(usage(
                    "--until-decided decides over the history's runs: drop --no-history",
                ));
            }
            if let Some(flag) = [("size", "--size"), ("runtime", "--runtime")]
                .into_iter()
                .find(|(k, _)| overrides.contains_key(*k))
                .map(|(_, f)| f)
            {
                return Err(usage(format!(
                    "--until-decided counts only runs of the policy's own test: drop {flag}"
                )));
            }
        }
        let runs = match (args.runs, until) {
            (Some(n), _) => n,
            (None, Some(s)) => s.max_runs as u32,
            (None, None) => policy.runs,
        };
        if until.is_some() && sustained.is_some() {
            return Err(usage(
                "--sustained is one run until the disk holds steady; --until-decided is a sequence of runs of the policy's test: give one of them",
            ));
        }
        // --sustained is one run.
        let runs = if sustained.is_some() { 1 } else { runs };
        Ok(RunConfig {
            until,
            recheck: args.recheck_every,
            runs,
            interval: args.interval.unwrap_or(Duration::ZERO),
            declared,
            policy,
            overrides,
            engine: args.engine,
            dir: args.dir,
            devices: args.device,
            history,
            wait: args.wait,
            host,
            outputs,
            strict: args.out.strict,
            sustained,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    fn config(args: &[&str]) -> anyhow::Result<RunConfig> {
        let mut argv = vec!["iopscheck", "run", "--no-history"];
        argv.extend_from_slice(args);
        match crate::cli::Cli::try_parse_from(argv)?.command {
            crate::cli::Command::Run(a) => RunConfig::try_from(a),
            _ => unreachable!("a run"),
        }
    }

    #[test]
    fn overrides_change_what_runs_never_the_yardstick() {
        let c = config(&["--size", "64m", "--runtime", "5s", "--runs", "2"]).unwrap();
        assert_eq!(c.policy.job.size, Size(64 << 20));
        assert_eq!(c.policy.job.runtime, Secs(Duration::from_secs(5)));
        assert_eq!(c.declared.job.size, Size(4 << 30), "the policy as written");
        assert_eq!(c.runs, 2);
        assert_eq!(
            c.overrides.keys().collect::<Vec<_>>(),
            ["runtime", "size"],
            "{:?}",
            c.overrides
        );
        assert!(c.history.is_none());
        let c = config(&[]).unwrap();
        assert_eq!(c.runs, c.declared.runs, "the policy's runs by default");
        assert!(c.overrides.is_empty());
    }

    #[test]
    fn an_override_that_breaks_the_job_names_its_flag() {
        let e = config(&["--size", "2k"]).unwrap_err().to_string();
        assert!(e.starts_with("--size: "), "{e}");
        assert!(e.contains("smaller than the block size"), "{e}");
    }

    #[test]
    fn the_limit_on_runs_is_one_to_a_thousand() {
        assert!(crate::policy::check_runs(1).is_ok() && crate::policy::check_runs(1000).is_ok());
        assert_eq!(
            crate::policy::check_runs(0).unwrap_err(),
            "must be 1 to 1000"
        );
        assert_eq!(
            crate::policy::check_runs(1001).unwrap_err(),
            "must be 1 to 1000"
        );
        let e = config(&["--runs", "1001"]).unwrap_err().to_string();
        assert!(
            e.contains("--runs") && e.contains("must be 1 to 1000"),
            "{e}"
        );
    }
}
