//! context.json: the host's and each tested directory's context, and the tool's version.

use std::path::Path;

use chrono::{DateTime, Utc};
use serde_json::{Value, json};

use super::lines::Kept;
use crate::fio::installed;
use crate::history;
use crate::machine;
use crate::policy;
use crate::version::TOOL;

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

fn os_release() -> Value {
    let text = std::fs::read_to_string("/etc/os-release")
        .or_else(|_| std::fs::read_to_string("/usr/lib/os-release"))
        .unwrap_or_default();
    let mut m = serde_json::Map::new();
    for line in text.lines() {
        if let Some((k, v)) = line.split_once('=')
            && OS_RELEASE_KEYS.contains(&k.trim())
        {
            let v = v.trim().trim_matches('"').trim_matches('\'');
            m.insert(k.trim().to_ascii_lowercase(), Value::from(v));
        }
    }
    Value::Object(m)
}

/// CPU model and the number of logical CPUs, from /proc/cpuinfo.
fn cpu() -> Value {
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
    json!({ "model": model, "count": count })
}

/// The mount, options and device under a directory: what decides its numbers.
fn target_context(dir: &str) -> Value {
    let path = Path::new(dir);
    let mount = machine::mount_of(path);
    let device = mount
        .as_ref()
        .map(|m| machine::device_of(m.dev))
        .unwrap_or_default();
    let space = machine::fs_space(path).ok();
    json!({
        "dir": dir,
        "exists": path.is_dir(),
        "mount_point": mount.as_ref().map(|m| m.mount_point.display().to_string()),
        "filesystem": mount.as_ref().map(|m| m.fstype.clone()),
        "mount_source": mount.as_ref().map(|m| m.source.clone()),
        "mount_options": mount.as_ref().map(|m| m.options.clone()),
        "device": device.name,
        "model": device.model,
        "rotational": device.rotational,
        "scheduler": device.scheduler,
        "write_cache": device.write_cache,
        "free_bytes": space.map(|s| s.available),
        "read_only": space.map(|s| s.read_only),
    })
}

pub(super) fn context(
    host: &str,
    targets: &[String],
    history_path: &Path,
    kept: &Kept,
    skipped: &[history::Skipped],
    loaded: &policy::Loaded,
    now: DateTime<Utc>,
) -> Value {
    let history = json!({
        "path": history_path.display().to_string(),
        "lines_kept": kept.kept,
        "lines_of_other_hosts_left_out": kept.other_hosts,
        "unreadable_lines_left_out": kept.unreadable,
        "skipped": skipped.iter().map(|s| s.to_string()).collect::<Vec<_>>(),
    });
    let policy = json!({ "name": loaded.policy.name, "origin": loaded.origin.to_string() });
    // The records are of another machine than this one: nothing of this machine is written
    // beside its name (its CPU, kernel or mounts would read as the records' own).
    if !is_this_machine(host) {
        return json!({
            "schema_version": 1,
            "tool": TOOL,
            "generated": now,
            "host": host,
            "system": format!(
                "not described: the records are of {host}, and this bundle was made on another machine; what each record states of its target is in history.jsonl"
            ),
            "history": history,
            "policy": policy,
        });
    }
    // The fio a run with `--engine fio` would run here.
    let fio = installed::path();
    json!({
        "schema_version": 1,
        "tool": TOOL,
        "generated": now,
        "host": host,
        "os": os_release(),
        "kernel": machine::kernel(),
        "arch": std::env::consts::ARCH,
        "cpu": cpu(),
        "memory_bytes": machine::memory_bytes(),
        "targets": targets.iter().map(|d| target_context(d)).collect::<Vec<_>>(),
        "history": history,
        "policy": policy,
        "fio": fio.as_deref().and_then(installed::version),
        "fio_path": fio.map(|p| p.display().to_string()),
    })
}

/// Whether `host` names the machine this runs on (its host name, or the node
/// `IOPSCHECK_HOST` names).
fn is_this_machine(host: &str) -> bool {
    let named = machine::host_from(None).ok().flatten();
    named.as_deref() == Some(host) || machine::hostname() == host
}
