//! `iopscheck policy list | show | check | diff`, decided: each policy named is resolved (a
//! built-in, a local one or a file), and `diff` without B has its built-in counterpart.

use std::path::PathBuf;

use crate::cli::PolicyCommand;
use crate::error::UsageError;
use crate::policy::{self, Loaded};

/// `iopscheck policy …`, decided.
// One value per process, moved once: the variants' sizes do not matter.
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
pub enum PolicyConfig {
    /// `list`; `--names`: only the names, one per line.
    List { names: bool },
    /// `show NAME`: the policy to print.
    Show(Loaded),
    /// `check FILE`: the file and the policy it holds, parsed and checked.
    Check { file: PathBuf, loaded: Loaded },
    /// `diff A [B]`: from `from` to `to` (without B, from the built-in policy of A's name).
    Diff { from: Loaded, to: Loaded },
}

impl TryFrom<PolicyCommand> for PolicyConfig {
    type Error = anyhow::Error;

    fn try_from(cmd: PolicyCommand) -> anyhow::Result<PolicyConfig> {
        Ok(match cmd {
            PolicyCommand::List { names } => PolicyConfig::List { names },
            PolicyCommand::Show { name } => PolicyConfig::Show(policy::resolve(&name)?),
            PolicyCommand::Check { file } => {
                let loaded = policy::load_file(&file)?;
                PolicyConfig::Check { file, loaded }
            }
            PolicyCommand::Diff { a, b } => {
                let (from, to) = diff_pair(&a, b.as_deref())?;
                PolicyConfig::Diff { from, to }
            }
        })
    }
}

/// `diff A [B]`'s two policies: A and B, or without B, the built-in policy of A's name and A.
fn diff_pair(a: &str, b: Option<&str>) -> anyhow::Result<(Loaded, Loaded)> {
    let first = policy::resolve(a)?;
    Ok(match b {
        Some(b) => (first, policy::resolve(b)?),
        None => {
            let name = first.policy.name.clone();
            let Some(yaml) = policy::builtin_yaml(&name) else {
                return Err(UsageError(format!(
                    "policy diff: {a} is policy '{name}', and no built-in policy has that name; give a second policy to compare with"
                ))
                .into());
            };
            let builtin = Loaded {
                policy: policy::parse(yaml, &format!("<built-in {name}>"))?,
                origin: policy::Origin::BuiltIn,
                yaml: yaml.to_string(),
            };
            (builtin, first)
        }
    })
}
