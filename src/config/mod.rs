//! What a command is asked to do, decided once from its flags (`crate::cli`, the low-level
//! arguments clap types) before it does anything: the settings every command sees ([`Ctx`]),
//! where its renderings go and the files they must not replace ([`outputs`]), and each
//! command's whole configuration, one file per command, each `TryFrom` its clap struct (made
//! in `app`'s dispatch, so no command sees a clap type). A value is resolved and checked
//! here, naming the flag, in the order the command needs it; the command reads typed fields.

pub mod bundle;
pub mod compare;
pub mod fleet;
pub mod history_file;
pub mod import;
pub mod outputs;
pub mod policy;
pub mod report;
pub mod run;
pub mod verify;

pub use bundle::BundleConfig;
pub use compare::CompareConfig;
pub use fleet::FleetConfig;
pub use import::ImportConfig;
pub use outputs::{Input, Outputs, history_path, missing_dir, policy_input};
pub use policy::PolicyConfig;
pub use report::ReportConfig;
pub use run::RunConfig;
pub use verify::VerifyConfig;

/// Global settings every command sees.
#[derive(Debug, Clone)]
pub struct Ctx {
    pub quiet: bool,
    pub color: bool,
}

impl Ctx {
    /// A note for the person at the terminal (stderr), unless --quiet.
    pub fn note(&self, msg: impl std::fmt::Display) {
        if !self.quiet {
            crate::out::err_line(msg);
        }
    }
    pub fn warn(&self, msg: impl std::fmt::Display) {
        crate::out::err_line(format_args!("iopscheck: warning: {msg}"));
    }
}

/// The start of the window a command judges: `--since`, else the policy's window back from
/// `now`.
pub fn window_start(
    since: Option<&crate::select::Since>,
    now: chrono::DateTime<chrono::Utc>,
    policy: &crate::policy::Policy,
) -> chrono::DateTime<chrono::Utc> {
    match since {
        Some(s) => s.start(now),
        None => crate::select::window_start(now, policy.evidence.window.0),
    }
}
