//! context.json: the host's and each tested directory's context, and the tool's version. Typed:
//! [`Context`] is the file's schema (as JSON, in its fields' order), and each directory's
//! context is the [`TargetContext`] its records' targets are read from.

use std::path::Path;

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde::Serialize;

use super::lines::Kept;
use crate::fio::installed;
use crate::history;
use crate::machine::{self, TargetContext};
use crate::policy;
use crate::version::{TOOL, Tool};

/// Keys of /etc/os-release worth a support engineer's time; the rest (URLs, codenames for
/// other tools) is left out.
const OS_RELEASE_KEYS: [&str; 6] = [
    "NAME",
    "VERSION",
    "ID",
    "ID_LIKE",
    "VERSION_ID",
    "PRETTY_NAME",
];

/// context.json.
#[derive(Serialize)]
pub(super) struct Context<'a> {
    schema_version: u32,
    tool: Tool,
    generated: DateTime<Utc>,
    host: &'a str,
    /// Why this machine is not described: the records are of another.
    #[serde(skip_serializing_if = "Option::is_none")]
    system: Option<String>,
    /// This machine, when the records are its own.
    #[serde(flatten)]
    machine: Option<Machine>,
    history: HistoryContext,
    policy: PolicyContext<'a>,
    #[serde(flatten)]
    fio: Option<Fio>,
}

/// The machine the bundle was made on, which ran the records' tests.
#[derive(Serialize)]
struct Machine {
    /// os-release's keys of [`OS_RELEASE_KEYS`], lower-cased.
    os: BTreeMap<String, String>,
    kernel: Option<String>,
    arch: &'static str,
    cpu: Cpu,
    memory_bytes: Option<u64>,
    targets: Vec<TargetContext>,
}

#[derive(Serialize)]
struct Cpu {
    model: Option<String>,
    count: Option<usize>,
}

/// The fio `run --engine fio` would run here ([`installed::path`]).
#[derive(Serialize)]
struct Fio {
    /// What it says with `--version`.
    fio: Option<String>,
    fio_path: Option<String>,
}

#[derive(Serialize)]
struct HistoryContext {
    path: String,
    lines_kept: usize,
    lines_of_other_hosts_left_out: usize,
    unreadable_lines_left_out: usize,
    skipped: Vec<String>,
}

#[derive(Serialize)]
struct PolicyContext<'a> {
    name: &'a str,
    origin: String,
}

fn os_release() -> BTreeMap<String, String> {
    let text = std::fs::read_to_string("/etc/os-release")
        .or_else(|_| std::fs::read_to_string("/usr/lib/os-release"))
        .unwrap_or_default();
    let mut m = BTreeMap::new();
    for line in text.lines() {
        if let Some((k, v)) = line.split_once('=')
            && OS_RELEASE_KEYS.contains(&k.trim())
        {
            let v = v.trim().trim_matches('"').trim_matches('\'');
            m.insert(k.trim().to_ascii_lowercase(), v.to_string());
        }
    }
    m
}

/// CPU model and the number of logical CPUs, from /proc/cpuinfo.
fn cpu() -> Cpu {
    let text = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let model = text
        .lines()
        .find(|l| l.starts_with("model name") || l.starts_with("Model") || l.starts_with("cpu\t"))
        .and_then(|l| l.split_once(':'))
        .map(|(_, v)| v.trim().to_string());
    let count = text.lines().filter(|l| l.starts_with("processor")).count();
    let count = if count > 0 {
        Some(count)
    } else {
        std::thread::available_parallelism().ok().map(|n| n.get())
    };
    Cpu { model, count }
}

pub(super) fn context<'a>(
    host: &'a str,
    targets: &[String],
    history_path: &Path,
    kept: &Kept,
    skipped: &[history::Skipped],
    loaded: &'a policy::Loaded,
    now: DateTime<Utc>,
) -> Context<'a> {
    let history = HistoryContext {
        path: history_path.display().to_string(),
        lines_kept: kept.kept,
        lines_of_other_hosts_left_out: kept.other_hosts,
        unreadable_lines_left_out: kept.unreadable,
        skipped: skipped.iter().map(|s| s.to_string()).collect(),
    };
    let policy = PolicyContext {
        name: &loaded.policy.name,
        origin: loaded.origin.to_string(),
    };
    let mut c = Context {
        schema_version: 1,
        tool: TOOL,
        generated: now,
        host,
        system: None,
        machine: None,
        history,
        policy,
        fio: None,
    };
    // The records are of another machine than this one: nothing of this machine is written
    // beside its name (its CPU, kernel or mounts would read as the records' own).
    if !is_this_machine(host) {
        c.system = Some(format!(
            "not described: the records are of {host}, and this bundle was made on another machine; what each record states of its target is in history.jsonl"
        ));
        return c;
    }
    c.machine = Some(Machine {
        os: os_release(),
        kernel: machine::kernel(),
        arch: std::env::consts::ARCH,
        cpu: cpu(),
        memory_bytes: machine::memory_bytes(),
        targets: targets
            .iter()
            .map(|d| machine::context_of(Path::new(d)))
            .collect(),
    });
    let fio = installed::path();
    c.fio = Some(Fio {
        fio: fio.as_deref().and_then(installed::version),
        fio_path: fio.map(|p| p.display().to_string()),
    });
    c
}

/// Whether `host` names the machine this runs on (its host name, or the node
/// `IOPSCHECK_HOST` names).
fn is_this_machine(host: &str) -> bool {
    let named = machine::host_from(None).ok().flatten();
    named.as_deref() == Some(host) || machine::hostname() == host
}
