//! `iopscheck report`, decided: the history (a file, or a bundle opened as its own report
//! read it: its history, its policy unless another is named, its host, its time), the
//! policy, the outputs, and what to do: list the groups, or judge a selection over a window.

use std::path::PathBuf;

use chrono::{DateTime, Utc};

use super::{Input, Outputs, history_path, policy_input};
use crate::bundle_input::{self, Opened};
use crate::cli::{DEFAULT_POLICY, ReportArgs};
use crate::error::usage;
use crate::evaluate::sequential::Settings;
use crate::policy::{self, Policy};
use crate::select::Filter;

/// `iopscheck report`, decided.
pub struct ReportConfig {
    /// The history's path (a bundle's, when it is one).
    pub history: PathBuf,
    /// The bundle the history is, opened.
    pub bundle: Option<Opened>,
    pub policy: Policy,
    /// The moment judged at: now, or a bundle's when it was made.
    pub now: DateTime<Utc>,
    pub strict: bool,
    pub outputs: Outputs,
    pub task: ReportTask,
}

/// What `report` is asked to do.
pub enum ReportTask {
    /// `--list`: the groups the history holds, with counts.
    List,
    /// Judge the runs the filter keeps (its window from `--since` or the policy's), by the
    /// sequential decision with `--until-decided`.
    Judge {
        filter: Filter,
        until: Option<Settings>,
    },
}

impl TryFrom<ReportArgs> for ReportConfig {
    type Error = anyhow::Error;

    fn try_from(args: ReportArgs) -> anyhow::Result<ReportConfig> {
        let path = history_path(&args.history.history);
        // A bundle is judged as its own report was: its history, its policy (unless another
        // is named), its host, at the time it was made.
        let bundle = if bundle_input::is_gzip(&path) {
            // A bundle given as the history is the history: as root, refused where others
            // could write it, as fleet, compare and bundle refuse it (import BUNDLE too).
            crate::history::check_for_reading(&path)?;
            Some(bundle_input::open(&path)?)
        } else {
            None
        };
        let bundled = match (&bundle, &args.policy) {
            (Some(b), None) => b
                .policy(&path)?
                .map(|p| published_or_own(p, &path))
                .transpose()?,
            _ => None,
        };
        let outputs = Outputs::from_args(&args.out)?;
        let mut inputs = vec![Input::new("the history", &path)];
        let policy = match bundled {
            Some(p) => p,
            None => {
                let loaded = policy::resolve(args.policy.as_deref().unwrap_or(DEFAULT_POLICY))?;
                inputs.extend(policy_input(&loaded, "-p/--policy"));
                loaded.policy
            }
        };
        outputs.refuse_inputs(&inputs)?;
        let now = bundle
            .as_ref()
            .and_then(|b| b.generated())
            .unwrap_or_else(Utc::now);
        let task = if args.list {
            ReportTask::List
        } else {
            ReportTask::Judge {
                filter: filter(&args, bundle.as_ref(), &policy, now)?,
                until: args.decide.settings(),
            }
        };
        Ok(ReportConfig {
            history: path,
            bundle,
            policy,
            now,
            strict: args.out.strict,
            outputs,
            task,
        })
    }
}

/// A bundle's own policy, to judge it by where no other is named. One that takes the name of
/// a policy iopscheck publishes must judge as that one does: a copy edited to a smaller file,
/// a shorter run or fewer runs, still called "swimlane", is refused, naming what differs and
/// how to choose (it is never the published requirement).
fn published_or_own(own: Policy, bundle: &std::path::Path) -> anyhow::Result<Policy> {
    let Some(yaml) = policy::builtin_yaml(&own.name) else {
        return Ok(own);
    };
    let published = policy::parse(yaml, &format!("<built-in {}>", own.name))?;
    let differs: Vec<String> = policy::diff(&published, &own)
        .into_iter()
        .flat_map(|s| s.lines)
        .collect();
    if differs.is_empty() {
        return Ok(own);
    }
    let shown: Vec<&str> = differs.iter().take(3).map(String::as_str).collect();
    Err(usage(format!(
        "{}: its policy.yaml is named {:?} but does not judge as iopscheck's published {} policy ({}{}); name the policy to judge by: -p {} for the published one, or -p FILE with the bundle's own (tar xzf the bundle for its policy.yaml)",
        bundle.display(),
        own.name,
        own.name,
        shown.join("; "),
        if differs.len() > 3 { "; …" } else { "" },
        own.name
    )))
}

/// The runs a report judges: `--host` (`all` for every host; default this host, or a
/// bundle's), `--dir`, `--engine`, the policy's, since `--since` or the policy's window.
fn filter(
    args: &ReportArgs,
    bundle: Option<&Opened>,
    policy: &Policy,
    now: DateTime<Utc>,
) -> anyhow::Result<Filter> {
    let since = super::window_start(args.since.as_ref(), now, policy);
    let host = match args.host.as_deref() {
        Some("all") => None,
        Some(h) => Some(
            crate::machine::check_name(h)
                .map_err(|e| usage(format!("--host: {e}")))?
                .to_string(),
        ),
        None if bundle.is_some() => bundle.and_then(|b| b.host()),
        // $IOPSCHECK_HOST names this node where the host name is not its own (a pod).
        None => Some(
            crate::machine::host_from(None)
                .map_err(usage)?
                .unwrap_or_else(crate::machine::hostname),
        ),
    };
    let dir = args.dir.as_ref().map(|d| {
        std::fs::canonicalize(d)
            .map(|p| p.display().to_string())
            .unwrap_or_else(|_| d.clone())
    });
    Ok(Filter {
        host,
        dir,
        engine: args.engine.clone(),
        policy: policy.name.clone(),
        since,
    })
}
