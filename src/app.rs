//! The commands: parse, validate into a configuration, do the work, map the outcome to an
//! exit code (contract.md). Errors are printed once, here, with their context.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context as _;
use clap::{CommandFactory, FromArgMatches};

use crate::cli::{Cli, Command, OutputArgs};
use crate::commands;
use crate::evaluate::Evaluation;
use crate::exit::Exit;
use crate::report::{self, Format, Style};
use crate::run_index::Records;

pub use crate::error::UsageError;

/// A [`UsageError`]: bad flags, printed as they are.
pub fn usage(msg: impl Into<String>) -> anyhow::Error {
    UsageError(msg.into()).into()
}

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
    match cmd {
        Command::Run(a) => commands::run::run(a, ctx),
        Command::Import(a) => commands::import::run(a, ctx),
        Command::Report(a) => commands::report::run(a, ctx),
        Command::Policy(p) => commands::policy::run(p, ctx),
        Command::Fleet(a) => commands::fleet::run(a, ctx),
        Command::Bundle(a) => commands::bundle::run(a, ctx),
        Command::Compare(a) => commands::compare::run(a, ctx),
        Command::Verify(a) => commands::verify::run(a, ctx),
        Command::Completions { shell } => {
            // Rendered in memory, printed through ours (a closed pipe is no panic).
            crate::out::stdout().write_all(&crate::completions::script(shell))?;
            Ok(Exit::Pass.code())
        }
        Command::Man { command, out_dir } => man(command, out_dir),
    }
}

/// Parsed `--format`, `-o` and `--export`: where each rendering goes.
#[derive(Debug)]
pub struct Outputs {
    pub stdout: Option<Format>,
    pub files: Vec<(Format, PathBuf)>,
    /// The flag that named each file, as given (`-o/--output X`, `--export json=X`).
    flags: Vec<String>,
    /// Each file, opened before the command works (see [`report::OutputFile`]).
    opened: Vec<report::OutputFile>,
    /// `--verbose`.
    pub verbose: bool,
}

/// A file a command reads, which none of its outputs may replace: what it is to the command
/// (`the history`, `--policy`, `input`) and its path; `-` is stdin.
pub struct Input {
    pub what: String,
    pub path: PathBuf,
}

impl Input {
    pub fn new(what: impl Into<String>, path: impl Into<PathBuf>) -> Input {
        Input {
            what: what.into(),
            path: path.into(),
        }
    }
}

impl Outputs {
    pub fn from_args(a: &OutputArgs) -> anyhow::Result<Outputs> {
        let mut files = Vec::new();
        let mut flags = Vec::new();
        // `-o -` and `--export FORMAT=-` are stdout, never a file named "-" (nor
        // /dev/stdout, a link: see below); one output at most goes there, named by `by`.
        let (mut stdout, mut by) = match &a.output {
            Some(path) if path.as_os_str() == "-" => (
                Some(a.format),
                format!("-o - (--format {})", a.format.as_str()),
            ),
            Some(path) => {
                files.push((a.format, path.clone()));
                flags.push(format!("-o/--output {}", path.display()));
                (None, String::new())
            }
            None => (
                Some(a.format),
                format!("--format {} (stdout, as no -o is given)", a.format.as_str()),
            ),
        };
        for e in &a.export {
            if e.file.as_os_str() == "-" {
                if stdout.is_some() {
                    return Err(usage(format!(
                        "--export {} and {by} both write to stdout; give one of them a file (-o FILE or --export FORMAT=FILE)",
                        e.given
                    )));
                }
                stdout = Some(e.format);
                by = format!("--export {}", e.given);
                continue;
            }
            files.push((e.format, e.file.clone()));
            flags.push(format!("--export {}", e.given));
        }
        for ((_, p), flag) in files.iter().zip(&flags) {
            check_output_path(p, flag)?;
        }
        for (i, (_, p)) in files.iter().enumerate() {
            if let Some(j) = files[..i].iter().position(|(_, q)| same_output(p, q)) {
                return Err(usage(format!(
                    "{} and {} both write {}: one would overwrite the other; give each output its own file",
                    flags[j],
                    flags[i],
                    p.display()
                )));
            }
        }
        let mut opened = Vec::new();
        for ((_, p), flag) in files.iter().zip(&flags) {
            opened.push(report::OutputFile::open(p).map_err(|e| {
                anyhow::anyhow!("{flag}: cannot write a file in its directory: {e}")
            })?);
        }
        Ok(Outputs {
            stdout,
            files,
            flags,
            opened,
            verbose: a.verbose,
        })
    }

    /// Refuses, before anything runs, an output that is one of the command's inputs: the same
    /// file (device and inode, through links and hard links) as the history, the policy, a
    /// file read, or what stdin was redirected from; or, where one of them does not exist
    /// yet, the same name in the same directory. Writing it would replace what was read.
    pub fn refuse_inputs(&self, inputs: &[Input]) -> anyhow::Result<()> {
        for input in inputs {
            if let Some(i) = self.replaces(input) {
                let shown = if input.path.as_os_str() == "-" {
                    "stdin".to_string()
                } else {
                    input.path.display().to_string()
                };
                return Err(usage(format!(
                    "{} is {} ({shown}): writing it would replace what this command reads; give the output another file",
                    self.flags[i], input.what
                )));
            }
        }
        Ok(())
    }

    /// The index of the file output that is `input`, if one is.
    pub fn replaces(&self, input: &Input) -> Option<usize> {
        if input.path.as_os_str() == "-" {
            let (dev, ino) = crate::syscalls::stdin_file()?;
            return self.files.iter().position(|(_, p)| {
                use std::os::unix::fs::MetadataExt;
                std::fs::metadata(p).is_ok_and(|m| m.dev() == dev && m.ino() == ino)
            });
        }
        self.files
            .iter()
            .position(|(_, p)| same_output(p, &input.path))
    }

    /// The flag that named the `i`th file output.
    pub fn flag(&self, i: usize) -> &str {
        &self.flags[i]
    }

    /// The file of the `i`th file output, to publish a rendering in.
    pub fn opened(&self, i: usize) -> &report::OutputFile {
        &self.opened[i]
    }

    /// Renders the evaluation everywhere it was asked for.
    /// Writes `ev` to stdout and the files asked for; `records` is where its runs' whole
    /// records are read from (`report::render`).
    pub fn emit(&self, ev: &Evaluation, records: &Records, ctx: &Ctx) -> anyhow::Result<()> {
        let style = Style {
            color: ctx.color,
            verbose: self.verbose,
        };
        if let Some(f) = self.stdout {
            let mut out = crate::out::stdout();
            let style = if f == Format::Table {
                style.clone()
            } else {
                Style::default()
            };
            report::render(f, ev, records, &style, &mut out)?;
            out.flush()?;
        }
        for ((f, path), out) in self.files.iter().zip(&self.opened) {
            let style = Style {
                verbose: self.verbose,
                ..Style::default()
            };
            report::write_file(*f, ev, records, &style, out).map_err(|e| {
                anyhow::anyhow!("cannot write {} to {}: {e}", f.as_str(), path.display())
            })?;
        }
        Ok(())
    }
}

/// Whether two output paths name one file: the same inode where both exist, else the same
/// name in the same (canonical) directory.
fn same_output(a: &Path, b: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    if let (Ok(x), Ok(y)) = (std::fs::metadata(a), std::fs::metadata(b)) {
        return x.dev() == y.dev() && x.ino() == y.ino();
    }
    let key = |p: &Path| {
        let dir = p
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        let dir = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
        dir.join(p.file_name().unwrap_or_default())
    };
    key(a) == key(b)
}

/// The directory an output path names, when it does not exist (a bare file name is in the
/// current directory, which does).
pub fn missing_dir(p: &Path) -> Option<&Path> {
    p.parent()
        .filter(|d| !d.as_os_str().is_empty() && !d.is_dir())
}

/// An output file must not be a device, a directory or a symbolic link: it is replaced by
/// rename, which would put a regular file where the link was (as root, `-o /dev/stdout` would
/// turn the host's /dev/stdout into a file until reboot). A link is refused rather than
/// followed: where it leads is not where the user said, and `-o -` writes to stdout.
fn check_output_path(p: &Path, flag: &str) -> anyhow::Result<()> {
    if let Ok(m) = std::fs::symlink_metadata(p) {
        if m.is_dir() {
            return Err(usage(format!("{flag}: is a directory")));
        }
        if m.file_type().is_symlink() {
            let to = std::fs::read_link(p)
                .map(|t| format!(" (to {})", t.display()))
                .unwrap_or_default();
            return Err(usage(format!(
                "{flag}: is a symbolic link{to}; an output never replaces a link: name the file itself, or give -o - for stdout"
            )));
        }
        if !m.is_file() {
            return Err(usage(format!(
                "{flag}: not a regular file; iopscheck writes reports only to files (-o - for stdout)"
            )));
        }
    }
    if let Some(dir) = missing_dir(p) {
        return Err(usage(format!(
            "{flag}: directory {} does not exist",
            dir.display()
        )));
    }
    Ok(())
}

/// A policy read from a file, as an input no output may replace (none for a built-in one).
pub fn policy_input(loaded: &crate::policy::Loaded, flag: &str) -> Option<Input> {
    match &loaded.origin {
        crate::policy::Origin::File(p) => {
            Some(Input::new(format!("the policy given to {flag}"), p))
        }
        crate::policy::Origin::BuiltIn => None,
    }
}

/// The history path: --history, else the default (contract.md).
pub fn history_path(arg: &Option<PathBuf>) -> PathBuf {
    arg.clone().unwrap_or_else(crate::history::default_path)
}

/// `iopscheck man [COMMAND] [--out-dir DIR]`.
fn man(command: Option<String>, out_dir: Option<std::path::PathBuf>) -> anyhow::Result<u8> {
    use std::io::Write as _;
    let pages = crate::manpage::pages();
    if let Some(dir) = out_dir {
        for (name, roff) in &pages {
            let p = dir.join(name);
            std::fs::write(&p, roff).with_context(|| format!("--out-dir {}", p.display()))?;
        }
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
