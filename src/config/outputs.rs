//! Where a command's renderings go (`--format`, `-o`, `--export`), checked and opened before
//! the command works, and the files it reads that none of them may replace.

use std::io::Write;
use std::path::{Path, PathBuf};

use super::Ctx;
use crate::cli::OutputArgs;
use crate::error::usage;
use crate::evaluate::Evaluation;
use crate::report::{self, Format, Style};
use crate::run_index::Records;

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
            if self.stdout.is_some() && input.path.as_os_str() != "-" {
                refuse_stdout(input)?;
            }
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

/// Refuses standard output redirected to an input (`report --format jsonl >> history.jsonl`,
/// `bundle -o - >> history.jsonl`): the rendering would be appended to what is read.
pub fn refuse_stdout(input: &Input) -> anyhow::Result<()> {
    if crate::syscalls::stdout_is(&input.path) {
        return Err(usage(format!(
            "standard output is {} ({}): writing there would change what this command reads; redirect it to another file",
            input.what,
            input.path.display()
        )));
    }
    Ok(())
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

/// An output file must not be a device, a directory (nor a name ending in `/`, which can only
/// be one) or a symbolic link: it is replaced by
/// rename, which would put a regular file where the link was (as root, `-o /dev/stdout` would
/// turn the host's /dev/stdout into a file until reboot). A link is refused rather than
/// followed: where it leads is not where the user said, and `-o -` writes to stdout.
fn check_output_path(p: &Path, flag: &str) -> anyhow::Result<()> {
    // `new/` or `dir/.` names a directory, existing or not; Path drops the slash, so the
    // name as given is looked at (else the command worked, then failed writing it).
    use std::os::unix::ffi::OsStrExt as _;
    let given = p.as_os_str().as_bytes();
    if given.ends_with(b"/")
        || given.ends_with(b"/.")
        || given.ends_with(b"/..")
        || p.file_name().is_none()
    {
        return Err(usage(format!(
            "{flag}: names a directory (it ends in {}), not a file: give a file name, such as {}",
            if given.ends_with(b"/") { "/" } else { "a dot" },
            p.join("report.json").display()
        )));
    }
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
