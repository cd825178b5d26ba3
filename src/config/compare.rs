//! `iopscheck compare`, decided: the policy, the history, the two sides (each a selection of
//! the history's runs, named by what sets it apart), the level and the outputs.

use std::path::PathBuf;

use chrono::{DateTime, Utc};

use super::{Input, Outputs, history_path, policy_input};
use crate::cli::{CompareArgs, OutputArgs};
use crate::error::usage;
use crate::policy::{self, Policy};
use crate::select::Filter;

/// `iopscheck compare`, decided.
pub struct CompareConfig {
    pub policy: Policy,
    pub history: PathBuf,
    pub now: DateTime<Utc>,
    /// Side a and side b.
    pub a: Side,
    pub b: Side,
    /// `--at`: side a is the runs from it on, side b those before it.
    pub at: Option<DateTime<Utc>>,
    /// The level at which a difference is called real.
    pub alpha: f64,
    pub outputs: Outputs,
}

/// One side of a comparison: the runs it selects, and its name in the outputs.
pub struct Side {
    pub filter: Filter,
    pub label: String,
}

impl TryFrom<CompareArgs> for CompareConfig {
    type Error = anyhow::Error;

    fn try_from(args: CompareArgs) -> anyhow::Result<CompareConfig> {
        let loaded = policy::resolve(&args.policy)?;
        let path = history_path(&args.history.history);
        // Where the comparison goes, checked before anything is read: never over an input.
        let outputs = Outputs::from_args(&OutputArgs {
            format: args.format,
            output: args.output.clone(),
            export: args.export.clone(),
            strict: false,
            verbose: false,
        })?;
        let mut inputs: Vec<Input> = policy_input(&loaded, "-p/--policy").into_iter().collect();
        inputs.push(Input::new("the history", &path));
        outputs.refuse_inputs(&inputs)?;
        let policy = loaded.policy;
        let now = Utc::now();
        let since = match (&args.since, args.at) {
            (Some(s), _) => s.start(now),
            (None, Some(_)) => DateTime::<Utc>::UNIX_EPOCH,
            (None, None) => crate::select::window_start(now, policy.evidence.window.0),
        };
        let host = match args.host.clone() {
            Some(h) => h,
            None => crate::machine::host_from(None)
                .map_err(usage)?
                .unwrap_or_else(crate::machine::hostname),
        };
        let (a, b) = sides(&args, host, &policy.name, since);
        Ok(CompareConfig {
            policy,
            history: path,
            now,
            a,
            b,
            at: args.at,
            alpha: args.alpha,
            outputs,
        })
    }
}

/// Side a (what --host, --dir and --engine select) and side b (the same with --vs-host,
/// --vs-dir or --vs-engine in their place), each named by what sets it apart.
fn sides(args: &CompareArgs, host: String, policy: &str, since: DateTime<Utc>) -> (Side, Side) {
    let canonical = |d: &String| {
        std::fs::canonicalize(d)
            .map(|p| p.display().to_string())
            .unwrap_or_else(|_| d.clone())
    };
    let a = Filter {
        host: Some(host.clone()),
        dir: args.dir.as_ref().map(canonical),
        engine: args.engine.clone(),
        policy: policy.to_string(),
        since,
    };
    let b = Filter {
        host: Some(args.vs_host.clone().unwrap_or_else(|| host.clone())),
        dir: args.vs_dir.as_ref().map(canonical).or(a.dir.clone()),
        engine: args.vs_engine.clone().or(a.engine.clone()),
        policy: policy.to_string(),
        since,
    };
    let mut a_label = Vec::new();
    let mut b_label = Vec::new();
    if args.vs_host.is_some() || (args.vs_dir.is_none() && args.vs_engine.is_none()) {
        a_label.push(host);
        b_label.push(b.host.clone().unwrap_or_default());
    }
    if let Some(d) = &b.dir
        && args.vs_dir.is_some()
    {
        a_label.push(a.dir.clone().unwrap_or_else(|| "any directory".into()));
        b_label.push(d.clone());
    }
    if let Some(e) = &args.vs_engine {
        a_label.push(a.engine.clone().unwrap_or_else(|| "any engine".into()));
        b_label.push(e.clone());
    }
    if let Some(at) = args.at {
        a_label.push(format!("since {}", at.format("%Y-%m-%d %H:%M UTC")));
        b_label.push(format!("before {}", at.format("%Y-%m-%d %H:%M UTC")));
    }
    (
        Side {
            filter: a,
            label: a_label.join(" "),
        },
        Side {
            filter: b,
            label: b_label.join(" "),
        },
    )
}
