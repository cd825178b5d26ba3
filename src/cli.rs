//! Command-line definitions (clap derive): the low-level arguments, each value typed by its
//! `value_parser` (sizes, durations, counts, engines, formats, exports), so a malformed value
//! is refused by clap with the flag named, exit 2. What needs more than one flag, or the
//! policy, to decide (the run's limits, the job with its overrides) is `crate::config`'s.

use std::path::PathBuf;
use std::time::Duration;

use clap::builder::PossibleValue;
use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::engine::{Backend, EngineRequest};
use crate::report::Format;
use crate::select::Since;

const ABOUT: &str = "Checks whether a machine's storage meets a vendor's published minimum, with evidence kept over days.";

/// The top-level help's end: the exit codes ([`crate::exit`]), then examples.
fn after_help() -> String {
    format!("{}\n\n{EXAMPLES}", crate::exit::help_text())
}

const EXAMPLES: &str = "\
Examples:
  iopscheck run                          the Swimlane check in the current directory
  iopscheck run --dir /var/lib/data      on the disk that will hold the data
  iopscheck import fio-output.txt        judge a fio output a customer sent
  iopscheck report                       the verdict over the last days' runs
  iopscheck policy show swimlane         the policy, to copy and edit";

#[derive(Debug, Parser)]
#[command(name = "iopscheck", version = crate::version::VERSION, about = ABOUT, after_help = after_help())]
pub struct Cli {
    /// Print only the result and errors: no progress, no notes.
    #[arg(short, long, global = true)]
    pub quiet: bool,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the policy's test several times on a directory, record each run, judge them.
    Run(RunArgs),
    /// Read fio outputs (JSON, json+, text of any version, terse; `-` for stdin) and judge them.
    Import(ImportArgs),
    /// Judge what the history holds over a window.
    Report(ReportArgs),
    /// The policy library: list, show, check.
    #[command(subcommand)]
    Policy(PolicyCommand),
    /// Merge the results of many nodes into one verdict.
    Fleet(FleetArgs),
    /// Write a support bundle (.tar.gz) with the history, the policy, reports and the context.
    Bundle(BundleArgs),
    /// Compare two nodes, directories or engines, or a node before and after a date, from the
    /// history: the ratio of the policy's mean with its 95% interval.
    Compare(CompareArgs),
    /// Check a bundle (its manifest, its history's chain, its signature) or a history's chain,
    /// and say what was altered, by line (exit 0 verified, 1 altered or unverifiable).
    Verify(VerifyArgs),
    /// Print shell completions.
    Completions {
        /// The shell to complete for.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print the man page (roff), or write every page into a directory.
    Man {
        /// The page of one command, e.g. `run` or `policy-show` (default: iopscheck(1)).
        #[arg(value_name = "COMMAND")]
        command: Option<String>,
        /// Write every page (iopscheck.1, iopscheck-run.1, …) into DIR instead of printing.
        #[arg(long = "out-dir", value_name = "DIR", value_hint = clap::ValueHint::DirPath)]
        out_dir: Option<PathBuf>,
    },
}

#[derive(Debug, Args, Clone)]
pub struct OutputArgs {
    /// Output format on stdout (or in --output).
    #[arg(long, value_enum, default_value = "table")]
    pub format: Format,
    /// Write the output to FILE instead of stdout (atomically, by rename; never over a link
    /// or an input); `-` is stdout.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Also write FORMAT to FILE; repeatable, e.g. --export json=r.json --export html=r.html;
    /// FILE `-` is stdout (with -o FILE, as only one output may go there).
    #[arg(long, value_name = "FORMAT=FILE", value_parser = export_value)]
    pub export: Vec<Export>,
    /// Warn-level rules decide the verdict too.
    #[arg(long)]
    pub strict: bool,
    /// The table shows each run's internals too (fio's samples, slat, the final fsync, the
    /// disks, what limited the disk) and the per-rule statistics; machine formats always
    /// have them.
    #[arg(long)]
    pub verbose: bool,
}

/// The policy of `--policy` when none is named.
pub const DEFAULT_POLICY: &str = "swimlane";

#[derive(Debug, Args, Clone)]
pub struct HistoryArgs {
    /// History file (JSON Lines). Default: /var/lib/iopscheck/history.jsonl for root, else
    /// $XDG_STATE_HOME/iopscheck/history.jsonl.
    #[arg(long, value_name = "FILE", env = "IOPSCHECK_HISTORY")]
    pub history: Option<PathBuf>,
}

impl ValueEnum for EngineRequest {
    fn value_variants<'a>() -> &'a [Self] {
        &[
            EngineRequest::Auto,
            EngineRequest::Native(Backend::Posixaio),
            EngineRequest::Native(Backend::IoUring),
            EngineRequest::Native(Backend::Psync),
            EngineRequest::Native(Backend::Sync),
            EngineRequest::Native(Backend::Libaio),
            EngineRequest::Fio,
        ]
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        let help = match self {
            EngineRequest::Auto => {
                "The policy's engine; io_uring falls back to posixaio where the kernel refuses it"
            }
            EngineRequest::Native(Backend::Posixaio) => {
                "glibc POSIX AIO, as fio's posixaio (the Swimlane job's engine)"
            }
            EngineRequest::Native(Backend::IoUring) => "io_uring, as fio's io_uring",
            EngineRequest::Native(Backend::Psync) => "pwrite/pread in one thread, as fio's psync",
            EngineRequest::Native(Backend::Sync) => {
                "lseek, then write/read, in one thread, as fio's sync (etcd's test)"
            }
            EngineRequest::Native(Backend::Libaio) => "Linux native AIO, as fio's libaio",
            EngineRequest::Fio => "The installed fio, with the policy's job",
        };
        Some(PossibleValue::new(self.name()).help(help))
    }
}

#[derive(Debug, Args)]
pub struct RunArgs {
    /// Policy name (built-in or in /etc/iopscheck/policies) or YAML file.
    #[arg(short, long, default_value = "swimlane", value_name = "NAME|FILE")]
    pub policy: String,
    /// Directory to test (on the disk the vendor's software will use).
    #[arg(short, long, default_value = ".", value_name = "DIR", value_hint = clap::ValueHint::DirPath)]
    pub dir: PathBuf,
    /// A raw block device to test read-only instead of a directory (repeat it, or give several:
    /// `--device /dev/nvme*n1`); each is judged alone, the policy's spread rules across them.
    #[arg(long, value_name = "DEVICE", num_args = 1.., conflicts_with_all = ["dir", "size", "sustained", "until_decided"], value_hint = clap::ValueHint::FilePath)]
    pub device: Vec<PathBuf>,
    /// Runs in this invocation (default: the policy's).
    #[arg(short = 'n', long, value_name = "N", allow_hyphen_values = true, value_parser = runs_value)]
    pub runs: Option<u32>,
    /// Wait this long between runs (e.g. 10m).
    #[arg(long, value_name = "DURATION", allow_hyphen_values = true, value_parser = duration_value)]
    pub interval: Option<Duration>,
    /// The engine that does the I/O.
    #[arg(short, long, value_enum, default_value = "auto")]
    pub engine: EngineRequest,
    /// Test file size, overriding the policy's (e.g. 64m). Smaller files flatter the disk.
    #[arg(long, value_name = "SIZE", allow_hyphen_values = true, value_parser = size_value)]
    pub size: Option<u64>,
    /// Runtime of each run, overriding the policy's (e.g. 10s). Another runtime is not the
    /// policy's test: a shorter run flatters the disk, a longer one could go either way.
    #[arg(long, value_name = "DURATION", allow_hyphen_values = true, value_parser = runtime_value)]
    pub runtime: Option<Duration>,
    /// Measure the level the disk sustains: one run of the policy's job that goes on until
    /// the disk's own rate holds steady after its burst credits run out, or until
    /// --sustained-budget (docs/sustained.md).
    #[arg(long, conflicts_with_all = ["runtime", "runs", "interval"])]
    pub sustained: bool,
    /// The longest a --sustained run goes on (default 40m: the common buckets, a gp2 volume's
    /// or an Azure P10's, last 30 minutes at their burst rate).
    #[arg(long, value_name = "DURATION", requires = "sustained", allow_hyphen_values = true, value_parser = runtime_value)]
    pub sustained_budget: Option<Duration>,
    /// Do not record the runs in the history.
    #[arg(long)]
    pub no_history: bool,
    /// If another iopscheck run is testing this host, wait for it instead of refusing.
    #[arg(long)]
    pub wait: bool,
    /// The node's name to record (default: $IOPSCHECK_HOST, else this machine's host name),
    /// e.g. the Kubernetes node a pod runs on.
    #[arg(long, value_name = "NAME")]
    pub host: Option<String>,
    #[command(flatten)]
    pub decide: DecideArgs,
    /// With --until-decided: once this node's sequence has ended, test again only when its
    /// newest run is this old (7d); until then print the standing decision without testing.
    #[arg(long, value_name = "DURATION", requires = "until_decided", value_parser = recheck_value)]
    pub recheck_every: Option<Duration>,
    #[command(flatten)]
    pub history: HistoryArgs,
    #[command(flatten)]
    pub out: OutputArgs,
}

#[derive(Debug, Args)]
pub struct ImportArgs {
    /// fio output files; `-` reads stdin.
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// Policy name (built-in or in /etc/iopscheck/policies) or YAML file.
    ///
    /// Default: swimlane; for a bundle, the policy it holds.
    #[arg(short, long, value_name = "NAME|FILE")]
    pub policy: Option<String>,
    /// Append the imported runs to the history, with the output's own timestamps.
    #[arg(long)]
    pub record: bool,
    /// Whose node the output came from. A fio output does not name its machine: without it the
    /// target reads "host not stated", and `--record` needs it.
    #[arg(long, value_name = "NAME")]
    pub host: Option<String>,
    /// Directory the output was measured on, when known (recorded with --record).
    #[arg(long, value_name = "DIR")]
    pub dir: Option<String>,
    /// For outputs that do not state their job (terse, stripped text): assert that it was this
    /// policy's job (a name or a YAML file). Fields the output does state still win, and
    /// every contradiction is named; the result says the shape was assumed.
    #[arg(long, value_name = "POLICY|FILE")]
    pub assume_job: Option<String>,
    #[command(flatten)]
    pub history: HistoryArgs,
    #[command(flatten)]
    pub out: OutputArgs,
}

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// Policy name (built-in or in /etc/iopscheck/policies) or YAML file.
    ///
    /// Default: swimlane; for a bundle given as the history, the policy it holds.
    #[arg(short, long, value_name = "NAME|FILE")]
    pub policy: Option<String>,
    /// Only runs newer than this: a duration back from now (7d, 36h) or a date (2026-11-28).
    /// Default: the policy's window.
    #[arg(long, value_name = "DURATION|DATE", value_parser = Since::parse)]
    pub since: Option<Since>,
    /// Host to report on (default: this host); `all` for every host.
    #[arg(long, value_name = "NAME")]
    pub host: Option<String>,
    /// Only runs on this directory.
    #[arg(long, value_name = "DIR")]
    pub dir: Option<String>,
    /// Only runs of this engine.
    #[arg(long, value_name = "ENGINE")]
    pub engine: Option<String>,
    /// List the groups (host, policy, directory, engine) the history holds, with counts.
    #[arg(long)]
    pub list: bool,
    #[command(flatten)]
    pub decide: DecideArgs,
    #[command(flatten)]
    pub history: HistoryArgs,
    #[command(flatten)]
    pub out: OutputArgs,
}

#[derive(Debug, Subcommand)]
pub enum PolicyCommand {
    /// The built-in and local policies: name, vendor, what it checks, prescribed or assumed.
    List {
        /// Only the names, one per line (for scripts and shell completion).
        #[arg(long)]
        names: bool,
    },
    /// Print a policy's YAML, to copy and edit.
    Show {
        /// Policy name (built-in or in /etc/iopscheck/policies) or YAML file.
        #[arg(value_name = "NAME|FILE")]
        name: String,
    },
    /// Check a policy file; errors give file:line:column and the key.
    Check {
        /// The policy's YAML file.
        #[arg(value_name = "FILE", value_hint = clap::ValueHint::FilePath)]
        file: PathBuf,
    },
    /// What changed from policy A to policy B in rules, thresholds, job, engines, evidence and
    /// source; without B, how A departs from the built-in policy of the same name.
    Diff {
        /// The first policy (name or YAML file).
        #[arg(value_name = "A")]
        a: String,
        /// The second policy (name or YAML file); default: the built-in named as A's `name`.
        #[arg(value_name = "B")]
        b: Option<String>,
    },
}

#[derive(Debug, Args)]
#[command(after_help = "\
Each file is a node's `--format json` or `jsonl` output (of run, report or import), judged
again here from the runs it carries (never better than its own verdict), or a history file
(JSON Lines), judged here per host, directory and engine over the window. `-` reads a stream
on stdin: results one per line (`--format jsonl`) or one after another, history records, and
`kubectl logs --prefix --timestamps` lines; other lines are named in warnings. A directory
gives its *.json, *.jsonl, *.ndjson and *.log files.

Each node (host, directory, engine) counts once: given more than once, the input with its
newest run decides and a warning names the others. Every node must pass: exit 0 when all
pass, 1 when any fails, 3 when none fails but some are inconclusive or missing, 2 when an
input cannot be read.

Examples:
  iopscheck fleet results/                           the nodes' results in a directory
  iopscheck fleet --since 7d histories/*.jsonl       the nodes' histories over a week
  iopscheck fleet --expect node1,node2,node3 *.json  a node without a file is inconclusive
  kubectl logs -n iopscheck -l app.kubernetes.io/name=iopscheck --prefix --tail=-1 \\
    | iopscheck fleet -                              the pods' results, one verdict")]
pub struct FleetArgs {
    /// Results (`--format json`/`jsonl`), history files, directories of them, or `-` (stdin).
    #[arg(required_unless_present = "expect", value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// Policy name (built-in or in /etc/iopscheck/policies) or YAML file.
    #[arg(short, long, default_value = "swimlane", value_name = "NAME|FILE")]
    pub policy: String,
    /// Judge history files over runs newer than this: a duration back from now (7d, 36h) or a
    /// date. Results older than it are stale. Default: the policy's window.
    #[arg(long, value_name = "DURATION|DATE", value_parser = Since::parse)]
    pub since: Option<Since>,
    /// Hosts that must be in the fleet (repeatable or comma-separated): one without a file is
    /// an inconclusive row, so a node that did not report cannot pass unseen.
    #[arg(long, value_name = "HOST,...", value_delimiter = ',')]
    pub expect: Vec<String>,
    /// Judge every node on its evidence over days (a history, or `report`'s result): a node
    /// whose result is of one sitting (`run`, `import`) is inconclusive, whatever it gave.
    #[arg(long)]
    pub require_evidence: bool,
    #[command(flatten)]
    pub decide: DecideArgs,
    #[command(flatten)]
    pub out: OutputArgs,
}

#[derive(Debug, Args)]
#[command(after_help = "\
The bundle holds README.txt (what is inside and how to read it), history.jsonl (this host's
history lines, verbatim), policy.yaml, report.json and report.html (the verdict over the
window), context.json (OS, kernel, CPU, memory, the target's mount, options and device) and
version.txt. No environment variables, no other hosts' records. It is never written over an
existing file. Exit 0 when the bundle is written, whatever the verdict; 2 on an error.")]
pub struct BundleArgs {
    /// fio outputs to keep in the bundle byte for byte, under fio/ (the raw files the records
    /// were imported from, or a customer's).
    #[arg(value_name = "FIO_OUTPUT", value_hint = clap::ValueHint::FilePath)]
    pub outputs: Vec<PathBuf>,
    /// Where to write the bundle (default: iopscheck-bundle-HOST-DATE.tar.gz here); `-` for
    /// stdout.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Policy name (built-in or in /etc/iopscheck/policies) or YAML file.
    #[arg(short, long, default_value = "swimlane", value_name = "NAME|FILE")]
    pub policy: String,
    /// Directory whose mount and device to describe, and whose runs the report judges
    /// (default: the directories in this host's history, else .).
    #[arg(short, long, value_name = "DIR", value_hint = clap::ValueHint::DirPath)]
    pub dir: Option<PathBuf>,
    /// Whose records to include and judge (default: this host).
    #[arg(long, value_name = "NAME")]
    pub host: Option<String>,
    /// The report's window: a duration back from now (7d, 36h) or a date. Default: the
    /// policy's window.
    #[arg(long, value_name = "DURATION|DATE", value_parser = Since::parse)]
    pub since: Option<Since>,
    /// Sign the manifest (which covers every file by its hash) with this unencrypted Ed25519
    /// OpenSSH private key: an SSH signature, manifest.json.sig, that `verify --key` and
    /// `ssh-keygen -Y verify -n iopscheck-bundle` check.
    #[arg(long, value_name = "KEY", value_hint = clap::ValueHint::FilePath)]
    pub sign: Option<PathBuf>,

    #[command(flatten)]
    pub history: HistoryArgs,
}

#[derive(Debug, Args)]
#[command(group(
    clap::ArgGroup::new("other")
        .required(true)
        .multiple(true)
        .args(["vs_host", "vs_dir", "vs_engine", "at"])
))]
#[command(after_help = "\
Side a is what --host, --dir and --engine select (default: this host, any directory and
engine); side b is the same with --vs-host, --vs-dir or --vs-engine in their place, or, with
--at DATE, side a is the runs from DATE on and side b those before it. Only runs of the
policy's test count. The ratio is a's mean over b's, of the policy's first deciding rule;
the difference is real at alpha (--alpha, 0.05) when its 1 - alpha interval (95%) leaves out 1.
Exit 0 when compared (real difference or not), 3 when a side has fewer than 2 runs, 2 on an
error (a side holding runs of several directories or engines: choose with --dir, --engine).

Examples:
  iopscheck compare --host node7 --vs-host node3
  iopscheck compare --dir /data --vs-dir /scratch
  iopscheck compare --at 2026-11-20              after a storage change, against before")]
pub struct CompareArgs {
    /// Policy name (built-in or in /etc/iopscheck/policies) or YAML file.
    #[arg(short, long, default_value = "swimlane", value_name = "NAME|FILE")]
    pub policy: String,
    /// Side a's host (default: this host).
    #[arg(long, value_name = "NAME")]
    pub host: Option<String>,
    /// Side b's host.
    #[arg(long, value_name = "NAME")]
    pub vs_host: Option<String>,
    /// Side a's directory.
    #[arg(long, value_name = "DIR")]
    pub dir: Option<String>,
    /// Side b's directory.
    #[arg(long, value_name = "DIR")]
    pub vs_dir: Option<String>,
    /// Side a's engine.
    #[arg(long, value_name = "ENGINE")]
    pub engine: Option<String>,
    /// Side b's engine.
    #[arg(long, value_name = "ENGINE")]
    pub vs_engine: Option<String>,
    /// Split one selection at this date (2026-11-20) or time: a is from it on, b before it.
    #[arg(long, value_name = "DATE", value_parser = at_value)]
    pub at: Option<chrono::DateTime<chrono::Utc>>,
    /// Only runs newer than this (default: the policy's window; with --at, every run).
    #[arg(long, value_name = "DURATION|DATE", value_parser = Since::parse)]
    pub since: Option<Since>,
    /// The level at which a difference is called real: the interval is the 1 − P one (0.05:
    /// 95%); above 0 and at most 0.5, as run's --alpha.
    #[arg(long, value_name = "P", default_value = "0.05", value_parser = probability_value)]
    pub alpha: f64,
    #[command(flatten)]
    pub history: HistoryArgs,
    /// Output format on stdout (or in --output).
    #[arg(long, value_enum, default_value = "table")]
    pub format: Format,
    /// Write the output to FILE instead of stdout (atomically, by rename; never over a link
    /// or an input); `-` is stdout.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Also write FORMAT to FILE; repeatable, e.g. --export json=c.json --export html=c.html;
    /// FILE `-` is stdout (with -o FILE, as only one output may go there).
    #[arg(long, value_name = "FORMAT=FILE", value_parser = export_value)]
    pub export: Vec<Export>,
}

/// `--at`: a date or a time, not a duration.
fn at_value(s: &str) -> Result<chrono::DateTime<chrono::Utc>, String> {
    match Since::parse(s)? {
        Since::At(t) => Ok(t),
        Since::Back(_) => Err(format!(
            "'{s}' is a duration; give a date such as 2026-11-20"
        )),
    }
}

/// The sequential decision's settings (docs/sequential.md), for `run` and `report`.
#[derive(Debug, Clone, Args)]
pub struct DecideArgs {
    /// Decide by a rule that stays valid however often it is looked at: pass when an
    /// anytime-valid lower bound of the mean clears the threshold, fail when the upper bound
    /// misses it, after the policy's minimum runs and days; inconclusive at the budget.
    #[arg(long)]
    pub until_decided: bool,
    /// The chance of a false pass (with --until-decided).
    #[arg(long, value_name = "P", default_value = "0.05", requires = "until_decided", value_parser = probability_value)]
    pub alpha: f64,
    /// The chance of a false fail (with --until-decided).
    #[arg(long, value_name = "P", default_value = "0.05", requires = "until_decided", value_parser = probability_value)]
    pub beta: f64,
    /// The indifference zone around the threshold, a fraction (0.1: ±10%): a mean bound
    /// within it ends inconclusive, at the threshold (with --until-decided).
    #[arg(long, value_name = "FRACTION", default_value = "0.1", requires = "until_decided", value_parser = fraction_value)]
    pub delta: f64,
    /// The budget: at most this many runs in the sequence (with --until-decided).
    #[arg(long, value_name = "N", default_value = "30", requires = "until_decided", value_parser = budget_value)]
    pub max_runs: usize,
    /// The budget: at most this many calendar days in the sequence (with --until-decided).
    #[arg(long, value_name = "DAYS", default_value = "7", requires = "until_decided", value_parser = budget_value)]
    pub max_days: usize,
}

impl DecideArgs {
    /// The settings, where `--until-decided` was given.
    pub fn settings(&self) -> Option<crate::evaluate::sequential::Settings> {
        self.until_decided
            .then_some(crate::evaluate::sequential::Settings {
                alpha: self.alpha,
                beta: self.beta,
                delta: self.delta,
                max_runs: self.max_runs,
                max_days: self.max_days,
            })
    }
}

/// `--alpha`, `--beta`: a probability above 0 and at most 0.5.
fn probability_value(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(p) if p > 0.0 && p <= 0.5 => Ok(p),
        _ => Err(format!(
            "'{s}' must be a probability above 0 and at most 0.5 (e.g. 0.05)"
        )),
    }
}

/// `--delta`: a fraction from 0 to under 1.
fn fraction_value(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(p) if (0.0..1.0).contains(&p) => Ok(p),
        _ => Err(format!(
            "'{s}' must be a fraction from 0 to under 1 (e.g. 0.1)"
        )),
    }
}

/// `--max-runs`, `--max-days`: a whole number from 1 to 1000.
fn budget_value(s: &str) -> Result<usize, String> {
    match s.trim().parse::<usize>() {
        Ok(n) if (1..=1000).contains(&n) => Ok(n),
        _ => Err(format!("'{s}' must be a whole number from 1 to 1000")),
    }
}

#[derive(Debug, Args)]
pub struct VerifyArgs {
    /// The bundle (.tar.gz made by `iopscheck bundle`) or history to check.
    #[arg(value_name = "BUNDLE|HISTORY", value_hint = clap::ValueHint::FilePath)]
    pub file: PathBuf,
    /// The Ed25519 OpenSSH public key (.pub) the bundle must be signed by (`bundle --sign`):
    /// a bundle not signed, or signed by another key, is altered.
    #[arg(long, value_name = "PUB", value_hint = clap::ValueHint::FilePath)]
    pub key: Option<PathBuf>,
}

/// One `--export FORMAT=FILE`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Export {
    pub format: Format,
    pub file: PathBuf,
    /// As given, for messages that name it.
    pub given: String,
}

// The value parsers. clap puts the flag in front of their message: "invalid value 'x' for
// '--size <SIZE>': …", so the messages do not name it again.

/// `--size`: a size as fio reads it, more than 0 bytes.
fn size_value(s: &str) -> Result<u64, String> {
    match crate::units::parse_size(s).map_err(|e| e.to_string())? {
        0 => Err("must be more than 0 bytes (e.g. 64m)".into()),
        v => Ok(v),
    }
}

/// `--runtime`: a duration, more than 0 seconds.
fn runtime_value(s: &str) -> Result<Duration, String> {
    match duration_value(s)? {
        d if d.is_zero() => Err("must be more than 0 seconds (e.g. 10s)".into()),
        d => Ok(d),
    }
}

/// A duration (`60`, `60s`, `10m`, `2h`).
fn duration_value(s: &str) -> Result<Duration, String> {
    crate::units::parse_duration(s).map_err(|e| e.to_string())
}

/// `--recheck-every`: a duration of at least a minute.
fn recheck_value(s: &str) -> Result<Duration, String> {
    let d = crate::units::parse_duration(s).map_err(|e| e.to_string())?;
    if d < Duration::from_secs(60) {
        return Err(format!(
            "'{s}' is under a minute: give the re-check period, e.g. 7d"
        ));
    }
    Ok(d)
}

/// `--runs`: a whole number within the policy's limits on runs.
fn runs_value(s: &str) -> Result<u32, String> {
    let n: u32 = s
        .trim()
        .parse()
        .map_err(|_| format!("'{s}' is not a whole number of runs"))?;
    crate::policy::check_runs(n)?;
    Ok(n)
}

/// `--export FORMAT=FILE`. The file name may itself contain `=`: only the first one separates.
fn export_value(s: &str) -> Result<Export, String> {
    const HINT: &str = "expected FORMAT=FILE, e.g. json=result.json";
    let Some((name, file)) = s.split_once('=') else {
        return Err(format!("{HINT} (got '{s}')"));
    };
    let format = <Format as ValueEnum>::from_str(name.trim(), true).map_err(|_| {
        let names: Vec<&str> = Format::ALL.iter().map(|f| f.as_str()).collect();
        format!(
            "unknown format '{name}' in '{s}'; use one of {}",
            names.join(", ")
        )
    })?;
    if file.is_empty() {
        return Err(format!("no file after '=' in '{s}'; {HINT}"));
    }
    Ok(Export {
        format,
        file: PathBuf::from(file),
        given: s.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_export_is_a_format_and_a_file_split_at_the_first_equals_sign() {
        let e = export_value("json=result.json").unwrap();
        assert_eq!(
            (e.format, e.file),
            (Format::Json, PathBuf::from("result.json"))
        );
        let e = export_value("JUnit=out/a=b.xml").unwrap();
        assert_eq!(
            (e.format, e.file),
            (Format::Junit, PathBuf::from("out/a=b.xml"))
        );
        let e = export_value("result.json").unwrap_err();
        assert!(e.contains("expected FORMAT=FILE"), "{e}");
        let e = export_value("xml=r.xml").unwrap_err();
        assert!(
            e.contains("unknown format 'xml'") && e.contains("junit"),
            "{e}"
        );
        let e = export_value("csv=").unwrap_err();
        assert!(e.contains("no file after '='"), "{e}");
    }

    #[test]
    fn sizes_runtimes_and_runs_are_refused_with_their_reason() {
        assert_eq!(size_value("64m"), Ok(64 << 20));
        assert!(size_value("0").unwrap_err().contains("more than 0 bytes"));
        assert!(size_value("abc").unwrap_err().contains("not a size"));
        assert_eq!(runtime_value("10s"), Ok(Duration::from_secs(10)));
        assert!(
            runtime_value("0")
                .unwrap_err()
                .contains("more than 0 seconds")
        );
        assert_eq!(runs_value(" 3 "), Ok(3));
        assert!(
            runs_value("many")
                .unwrap_err()
                .contains("not a whole number")
        );
        assert_eq!(runs_value("0").unwrap_err(), "must be 1 to 1000");
        assert_eq!(runs_value("1001").unwrap_err(), "must be 1 to 1000");
    }
}
