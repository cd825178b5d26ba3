//! What a command is asked to do, decided once from its flags (`crate::cli`, the low-level
//! arguments clap types) before it does anything: the settings every command sees ([`Ctx`]),
//! where its renderings go and the files they must not replace ([`outputs`]), and `run`'s
//! whole configuration ([`run`]). A check that needs more than one flag is made here, naming
//! the flag.

pub mod outputs;
pub mod run;

pub use outputs::{Input, Outputs, history_path, missing_dir, policy_input};
pub use run::RunConfig;

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
