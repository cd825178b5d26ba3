//! The commands: parse, validate into a configuration, do the work, map the outcome to an
//! exit code. Errors are printed once, here.

use std::process::ExitCode;

use clap::Parser;

use crate::cli::{Cli, Command};

pub const VERSION: &str = env!("CARGO_PKG_VERSION");

pub fn main() -> ExitCode {
    let cli = Cli::parse();
    let _ = cli.command;
    ExitCode::from(2)
}
