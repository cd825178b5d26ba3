//! `iopscheck fleet`, decided: the policy, the window, the hosts expected (each a valid name),
//! and the outputs, none of them an input named on the command line.

use std::path::PathBuf;

use chrono::{DateTime, Utc};

use super::{Input, Outputs, policy_input};
use crate::cli::FleetArgs;
use crate::error::usage;
use crate::evaluate::sequential::Settings;
use crate::policy::{self, Policy};

/// `iopscheck fleet`, decided.
#[derive(Debug)]
pub struct FleetConfig {
    /// The inputs as given: files, directories, `-` (gathered by the command).
    pub files: Vec<PathBuf>,
    pub policy: Policy,
    pub now: DateTime<Utc>,
    /// The window's start: `--since`, else the policy's window back from now.
    pub since: DateTime<Utc>,
    /// `--expect`, trimmed, without empty names, each a valid host name.
    pub expect: Vec<String>,
    pub require_evidence: bool,
    /// `--until-decided`'s settings.
    pub until: Option<Settings>,
    pub strict: bool,
    pub outputs: Outputs,
}

impl TryFrom<FleetArgs> for FleetConfig {
    type Error = anyhow::Error;

    fn try_from(args: FleetArgs) -> anyhow::Result<FleetConfig> {
        let loaded = policy::resolve(&args.policy)?;
        let outputs = Outputs::from_args(&args.out)?;
        let mut named: Vec<Input> = policy_input(&loaded, "-p/--policy").into_iter().collect();
        named.extend(args.files.iter().map(|f| Input::new("an input", f)));
        outputs.refuse_inputs(&named)?;
        let policy = loaded.policy;
        let now = Utc::now();
        let since = super::window_start(args.since.as_ref(), now, &policy);
        let mut expect = Vec::new();
        for h in args
            .expect
            .iter()
            .map(|h| h.trim())
            .filter(|h| !h.is_empty())
        {
            crate::machine::check_name(h).map_err(|e| usage(format!("--expect: {e}")))?;
            expect.push(h.to_string());
        }
        Ok(FleetConfig {
            files: args.files,
            policy,
            now,
            since,
            expect,
            require_evidence: args.require_evidence,
            until: args.decide.settings(),
            strict: args.out.strict,
            outputs,
        })
    }
}
