//! `iopscheck bundle`, decided: the policy, the host and the window, where the bundle goes
//! (never over an existing file, never to a terminal), the signing key's file (read by the
//! command once every cheaper argument is checked), the fio outputs to keep, the history and
//! the directory judged.

use std::path::{Path, PathBuf};

use chrono::{DateTime, Utc};

use super::history_path;
use crate::cli::BundleArgs;
use crate::error::usage;
use crate::machine;
use crate::policy::{self, Loaded};

/// `iopscheck bundle`, decided.
pub struct BundleConfig {
    pub policy: Loaded,
    pub now: DateTime<Utc>,
    /// Whose records to include and judge.
    pub host: String,
    /// The report's window's start.
    pub since: DateTime<Utc>,
    pub output: Destination,
    /// `--sign`: the key file, read by the command after the bundle's name, the fio outputs
    /// and the history are checked, so that a bad argument is told without reading a key.
    pub sign: Option<PathBuf>,
    /// The fio outputs to keep under fio/, as given (read by the command).
    pub fio_outputs: Vec<PathBuf>,
    pub history: PathBuf,
    /// `--dir`, canonical where it exists.
    pub dir: Option<String>,
}

/// Where the bundle goes.
pub enum Destination {
    /// `-o -`: standard output, which is not a terminal.
    Stdout,
    /// `-o FILE`, which does not exist yet.
    File(PathBuf),
    /// iopscheck-bundle-HOST-DATE.tar.gz in the current directory.
    Default,
}

impl TryFrom<BundleArgs> for BundleConfig {
    type Error = anyhow::Error;

    fn try_from(args: BundleArgs) -> anyhow::Result<BundleConfig> {
        let loaded = policy::resolve(&args.policy)?;
        let now = Utc::now();
        let host = match &args.host {
            Some(h) => machine::check_name(h)
                .map_err(|e| usage(format!("--host: {e}")))?
                .to_string(),
            None => machine::host_from(None)
                .map_err(usage)?
                .unwrap_or_else(machine::hostname),
        };
        let since = super::window_start(args.since.as_ref(), now, &loaded.policy);
        let output = match args.output {
            Some(p) if p.as_os_str() == "-" => {
                if std::io::IsTerminal::is_terminal(&std::io::stdout()) {
                    return Err(usage(
                        "bundle: -o -: standard output is a terminal; redirect it to a file or a pipe",
                    ));
                }
                super::outputs::refuse_stdout(&super::Input::new(
                    "the history",
                    history_path(&args.history.history),
                ))?;
                Destination::Stdout
            }
            Some(p) => {
                check_destination(&p)?;
                Destination::File(p)
            }
            None => Destination::Default,
        };
        let dir = args.dir.as_ref().map(|d| {
            std::fs::canonicalize(d)
                .map(|p| p.display().to_string())
                .unwrap_or_else(|_| d.display().to_string())
        });
        Ok(BundleConfig {
            policy: loaded,
            now,
            host,
            since,
            output,
            sign: args.sign,
            fio_outputs: args.outputs,
            history: history_path(&args.history.history),
            dir,
        })
    }
}

/// A bundle's file must not exist yet, and its directory must.
pub fn check_destination(p: &Path) -> anyhow::Result<()> {
    if std::fs::symlink_metadata(p).is_ok() {
        return Err(usage(format!(
            "bundle: {} already exists; remove it or choose another name with -o",
            p.display()
        )));
    }
    if let Some(dir) = super::missing_dir(p) {
        return Err(usage(format!(
            "bundle: -o {}: directory {} does not exist",
            p.display(),
            dir.display()
        )));
    }
    Ok(())
}
