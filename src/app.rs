//! The entry point: parse the command line, hand it to its command (`crate::commands`, each
//! given its configuration from `crate::config`), print an error once with its context, and
//! map the outcome to an exit code (`crate::exit`, contract.md).

use std::io::{IsTerminal, Write};
use std::process::ExitCode;

use clap::{CommandFactory, FromArgMatches};

use crate::cli::{Cli, Command};
use crate::commands;
use crate::config::Ctx;
use crate::error::usage;
use crate::exit::Exit;

pub fn main() -> ExitCode {
    let parsed = Cli::command()
        .try_get_matches()
        .and_then(|m| Cli::from_arg_matches(&m).map(|c| (c, m)));
    let (cli, matches) = match parsed {
        Ok(c) => c,
        Err(mut e) => {
            let code = if e.use_stderr() {
                Exit::Error
            } else {
                Exit::Pass
            };
            did_you_mean(&mut e);
            if e.use_stderr() {
                // Through ours: a value echoed back is shown, never obeyed by the terminal.
                crate::out::err_line(e.render().to_string().trim_end());
            } else {
                let _ = e.print();
            }
            return code.into();
        }
    };
    if let Err(e) = conflicting_flags(&matches) {
        crate::out::err_line(format_args!("iopscheck: error: {e}"));
        return Exit::Error.into();
    }
    let ctx = Ctx {
        quiet: cli.quiet,
        color: std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
            && std::io::stdout().is_terminal(),
    };
    crate::out::set_colour(ctx.color);
    match dispatch(cli.command, &ctx) {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            crate::out::err_line(format_args!("iopscheck: error: {}", chain(&e)));
            ExitCode::from(crate::error::exit_code(&e))
        }
    }
}

/// Puts our did-you-mean into clap's error for a misspelt subcommand or value: a fragment
/// (`--engine aio`) or a near miss (`rn`), where clap's own suggestion may be another word.
fn did_you_mean(e: &mut clap::Error) {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    let word = |k| match e.get(k) {
        Some(ContextValue::String(s)) => Some(s.clone()),
        _ => None,
    };
    match e.kind() {
        ErrorKind::InvalidSubcommand => {
            let Some(bad) = word(ContextKind::InvalidSubcommand) else {
                return;
            };
            let cmd = Cli::command();
            let mut names: Vec<String> = Vec::new();
            for s in cmd.get_subcommands() {
                names.push(s.get_name().to_string());
                names.extend(s.get_subcommands().map(|x| x.get_name().to_string()));
            }
            let names: Vec<&str> = names.iter().map(String::as_str).collect();
            if let Some(s) = crate::suggest::closest(&bad, &names) {
                e.insert(
                    ContextKind::SuggestedSubcommand,
                    ContextValue::Strings(vec![s.to_string()]),
                );
            }
        }
        ErrorKind::InvalidValue => {
            let Some(bad) = word(ContextKind::InvalidValue) else {
                return;
            };
            let valid = match e.get(ContextKind::ValidValue) {
                Some(ContextValue::Strings(v)) => v.clone(),
                _ => return,
            };
            let valid: Vec<&str> = valid.iter().map(String::as_str).collect();
            if let Some(s) = crate::suggest::closest(&bad, &valid) {
                e.insert(
                    ContextKind::SuggestedValue,
                    ContextValue::String(s.to_string()),
                );
            }
        }
        _ => {}
    }
}

/// Flags that contradict each other where clap cannot see it: `--history` given on the
/// command line with `--no-history` (IOPSCHECK_HISTORY in the environment is no contradiction:
/// it is a default that --no-history overrides).
fn conflicting_flags(m: &clap::ArgMatches) -> Result<(), String> {
    if let Some(("run", run)) = m.subcommand()
        && run.get_flag("no_history")
        && run.value_source("history") == Some(clap::parser::ValueSource::CommandLine)
    {
        return Err(
            "--history and --no-history contradict each other: give one of them".to_string(),
        );
    }
    Ok(())
}

fn chain(e: &anyhow::Error) -> String {
    let mut parts: Vec<String> = Vec::new();
    for c in e.chain() {
        let s = c.to_string();
        if !parts.iter().any(|p| p.contains(&s)) {
            parts.push(s);
        }
    }
    parts.join(": ")
}

fn dispatch(cmd: Command, ctx: &Ctx) -> anyhow::Result<u8> {
    // What a window may hold (`hold`), read before anything of the window is.
    if matches!(
        cmd,
        Command::Report(_) | Command::Bundle(_) | Command::Fleet(_)
    ) {
        crate::hold::init()?;
    }
    match cmd {
        Command::Run(a) => commands::run::run(a.try_into()?, ctx),
        Command::Import(a) => commands::import::run(a.try_into()?, ctx),
        Command::Report(a) => commands::report::run(a.try_into()?, ctx),
        Command::Policy(p) => commands::policy::run(p.try_into()?, ctx),
        Command::Fleet(a) => commands::fleet::run(a.try_into()?, ctx),
        Command::Bundle(a) => commands::bundle::run(a.try_into()?, ctx),
        Command::Compare(a) => commands::compare::run(a.try_into()?, ctx),
        Command::Verify(a) => commands::verify::run(a.try_into()?, ctx),
        Command::Completions { shell } => {
            // Rendered in memory, printed through ours (a closed pipe is no panic).
            crate::out::stdout().write_all(&crate::completions::script(shell))?;
            Ok(Exit::Pass.code())
        }
        Command::Man { command, out_dir } => man(command, out_dir),
    }
}

/// `iopscheck man [COMMAND] [--out-dir DIR]`.
fn man(command: Option<String>, out_dir: Option<std::path::PathBuf>) -> anyhow::Result<u8> {
    use std::io::Write as _;
    let pages = crate::manpage::pages();
    if let Some(dir) = out_dir {
        write_pages(&dir, &pages)?;
        return Ok(Exit::Pass.code());
    }
    let want = match &command {
        None => "iopscheck".to_string(),
        Some(c) => format!("iopscheck-{}", c.trim().replace(' ', "-")),
    };
    let Some((_, roff)) = pages.iter().find(|(n, _)| n.trim_end_matches(".1") == want) else {
        let names: Vec<String> = crate::manpage::names()
            .into_iter()
            .filter_map(|n| n.strip_prefix("iopscheck-").map(str::to_string))
            .collect();
        return Err(usage(format!(
            "man: no page for '{}'; pages: {}",
            command.unwrap_or_default(),
            names.join(", ")
        )));
    };
    crate::out::stdout().write_all(roff)?;
    Ok(Exit::Pass.code())
}

/// `man --out-dir DIR`: each page written as `-o` writes a report (crate::report::OutputFile:
/// whole or not at all, put in place by rename), after every page's name in DIR is checked: a
/// symbolic link, a directory or a device there is refused, exit 2, and nothing is written, so
/// a link planted in DIR never leads a write (as root) to the file it names. A regular file
/// there is replaced, as packaging/build.sh's rebuilds expect.
fn write_pages(dir: &std::path::Path, pages: &[(String, Vec<u8>)]) -> anyhow::Result<()> {
    let shown = dir.display();
    match std::fs::metadata(dir) {
        Ok(m) if m.is_dir() => {}
        Ok(_) => return Err(usage(format!("--out-dir {shown}: not a directory"))),
        Err(e) => return Err(usage(format!("--out-dir {shown}: {e}"))),
    }
    for (name, _) in pages {
        let p = dir.join(name);
        let Ok(m) = std::fs::symlink_metadata(&p) else {
            continue;
        };
        let why = if m.file_type().is_symlink() {
            let to = std::fs::read_link(&p)
                .map(|t| format!(" (to {})", t.display()))
                .unwrap_or_default();
            format!(
                "is a symbolic link{to}; a page never replaces a link, nor writes where one leads"
            )
        } else if m.is_dir() {
            "is a directory".to_string()
        } else if !m.is_file() {
            "is not a regular file (a device, a FIFO or a socket)".to_string()
        } else {
            continue;
        };
        return Err(usage(format!(
            "--out-dir {shown}: the page {name} {why}: remove it, or give another directory; nothing was written"
        )));
    }
    let mut opened = Vec::new();
    for (name, _) in pages {
        opened.push(
            crate::report::OutputFile::open(&dir.join(name)).map_err(|e| {
                anyhow::anyhow!("--out-dir {shown}: cannot write the page {name} there: {e}")
            })?,
        );
    }
    for ((name, roff), out) in pages.iter().zip(&opened) {
        out.publish(roff)
            .map_err(|e| anyhow::anyhow!("--out-dir {shown}: the page {name}: {e}"))?;
    }
    Ok(())
}
