//! Policies: what to run (a job) and how to judge it (rules, evidence), with the vendor source
//! they encode. Built-in policies are embedded from `policies/`; `load` is the only door
//! through which YAML enters.

mod builtin;

use std::fmt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::job::{IoEngine, Job, Secs};
use crate::metrics;

pub use builtin::{BUILTIN, builtin_yaml};

/// Where local policies live, looked up by name after the built-in ones.
pub const SYSTEM_POLICY_DIR: &str = "/etc/iopscheck/policies";
/// Policy files are small; anything larger is not a policy.
const MAX_POLICY_BYTES: usize = 256 * 1024;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Policy {
    pub name: String,
    pub description: String,
    pub vendor: String,
    pub source: Source,
    pub job: Job,
    /// The engines the policy's test may run on, the first being the default (the job's
    /// `ioengine`). A policy without the list accepts its job's engine only.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub engines: Vec<IoEngine>,
    /// Runs per `iopscheck run` invocation.
    #[serde(default = "default_runs")]
    pub runs: u32,
    pub rules: Vec<Rule>,
    #[serde(default)]
    pub evidence: Evidence,
}

fn default_runs() -> u32 {
    3
}

/// The vendor's publication this policy encodes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Source {
    pub title: String,
    pub url: String,
    /// When the page was read (YYYY-MM-DD).
    pub seen: String,
    /// Whether the vendor prescribes the test, or only a number (the test is then ours).
    pub test: TestOrigin,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notes: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TestOrigin {
    Prescribed,
    Assumed,
}

impl fmt::Display for TestOrigin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            TestOrigin::Prescribed => "prescribed",
            TestOrigin::Assumed => "assumed",
        })
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "RuleRaw")]
pub struct Rule {
    pub metric: String,
    pub op: Op,
    /// In the metric's unit. The YAML may give it with a unit of the same kind ("10ms" for a
    /// latency in µs, "250MB/s", "7.5k" IOPS); it is converted and checked on load.
    pub threshold: f64,
    /// `fail` decides the verdict; `warn` is a soft limit (changes the exit code only with
    /// `--strict`); `info` is shown beside the others and never decides.
    #[serde(default)]
    pub level: Level,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// A rule as written in YAML, before its threshold is converted to the metric's unit.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RuleRaw {
    metric: String,
    op: Op,
    threshold: RawThreshold,
    #[serde(default)]
    level: Level,
    #[serde(default)]
    note: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum RawThreshold {
    Number(f64),
    Text(String),
}

impl TryFrom<RuleRaw> for Rule {
    type Error = String;
    fn try_from(r: RuleRaw) -> Result<Rule, String> {
        let Some(info) = metrics::lookup(&r.metric) else {
            return Err(format!(
                "unknown metric '{}'; known metrics: {}",
                r.metric,
                metrics::known_names().join(", ")
            ));
        };
        let threshold = match r.threshold {
            RawThreshold::Number(n) => n,
            RawThreshold::Text(t) => convert_threshold(&t, info.unit)
                .map_err(|e| format!("threshold of {}: {e}", r.metric))?,
        };
        Ok(Rule {
            metric: r.metric,
            op: r.op,
            threshold,
            level: r.level,
            note: r.note,
        })
    }
}

/// Converts "10ms", "250MB/s", "7.5k" into the unit of a metric, refusing a unit of another
/// kind (a duration for an IOPS metric, say).
pub fn convert_threshold(text: &str, unit: &str) -> Result<f64, String> {
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, suffix) = t.split_at(split);
    let v: f64 = num
        .parse()
        .map_err(|_| format!("'{text}' is not a number with a unit"))?;
    let suffix = suffix.trim();
    let wrong = |kind: &str| Err(format!("'{text}' is {kind}, but the metric is in {unit}"));
    let rate = |s: &str| -> Option<f64> {
        // bytes per second for a rate suffix
        Some(match s {
            "B/s" => 1.0,
            "kB/s" | "KB/s" => 1e3,
            "MB/s" => 1e6,
            "GB/s" => 1e9,
            "KiB/s" => 1024.0,
            "MiB/s" => 1_048_576.0,
            "GiB/s" => 1_073_741_824.0,
            _ => return None,
        })
    };
    match unit {
        "µs" | "ms" => {
            let d = crate::units::parse_duration(t).map_err(|e| e.to_string())?;
            if suffix.is_empty() {
                return Ok(v);
            }
            let us = d.as_secs_f64() * 1e6;
            Ok(if unit == "ms" { us / 1000.0 } else { us })
        }
        "MB/s" | "MiB/s" | "B/s" => {
            if suffix.is_empty() {
                return Ok(v);
            }
            let Some(bps) = rate(suffix) else {
                return wrong("not a rate such as 250MB/s");
            };
            let per = match unit {
                "MB/s" => 1e6,
                "MiB/s" => 1_048_576.0,
                _ => 1.0,
            };
            Ok(v * bps / per)
        }
        "IOPS" | "I/Os" | "%" => match suffix {
            "" => Ok(v),
            "k" | "K" if unit != "%" => Ok(v * 1000.0),
            "M" if unit != "%" => Ok(v * 1e6),
            s if rate(s).is_some() => wrong("a rate"),
            _ if crate::units::parse_duration(t).is_ok() => wrong("a duration"),
            _ => Err(format!(
                "'{text}': unknown unit '{suffix}' for a metric in {unit}"
            )),
        },
        _ => Err(format!("'{text}': give a plain number in {unit}")),
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Op {
    #[serde(rename = ">=")]
    Ge,
    #[serde(rename = ">")]
    Gt,
    #[serde(rename = "<=")]
    Le,
    #[serde(rename = "<")]
    Lt,
}

impl Op {
    pub fn holds(self, value: f64, threshold: f64) -> bool {
        match self {
            Op::Ge => value >= threshold,
            Op::Gt => value > threshold,
            Op::Le => value <= threshold,
            Op::Lt => value < threshold,
        }
    }
    pub fn as_str(self) -> &'static str {
        match self {
            Op::Ge => ">=",
            Op::Gt => ">",
            Op::Le => "<=",
            Op::Lt => "<",
        }
    }
    /// Whether a larger value is better for this rule.
    pub fn higher_is_better(self) -> bool {
        matches!(self, Op::Ge | Op::Gt)
    }
}

impl fmt::Display for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Op::Ge => "≥",
            Op::Gt => ">",
            Op::Le => "≤",
            Op::Lt => "<",
        })
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    #[default]
    Fail,
    Warn,
    Info,
}

impl Level {
    pub fn as_str(self) -> &'static str {
        match self {
            Level::Fail => "fail",
            Level::Warn => "warn",
            Level::Info => "info",
        }
    }
}

/// How much evidence makes a verdict, and over which window.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Evidence {
    #[serde(default = "default_min_runs")]
    pub min_runs: u32,
    #[serde(default = "default_min_days")]
    pub min_days: u32,
    #[serde(default = "default_window")]
    pub window: Secs,
    #[serde(default)]
    pub aggregate: Aggregate,
    /// Coefficient of variation across runs above which a warning says the runs disagree.
    #[serde(default = "default_max_cv")]
    pub max_cv: f64,
}

fn default_min_runs() -> u32 {
    6
}
fn default_min_days() -> u32 {
    2
}
fn default_window() -> Secs {
    Secs(std::time::Duration::from_secs(7 * 86400))
}
fn default_max_cv() -> f64 {
    0.25
}

impl Default for Evidence {
    fn default() -> Self {
        Evidence {
            min_runs: default_min_runs(),
            min_days: default_min_days(),
            window: default_window(),
            aggregate: Aggregate::Mean,
            max_cv: default_max_cv(),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Aggregate {
    #[default]
    Mean,
    Median,
}

impl Aggregate {
    pub fn as_str(self) -> &'static str {
        match self {
            Aggregate::Mean => "mean",
            Aggregate::Median => "median",
        }
    }
}

/// A policy that could not be loaded: where, and what to do about it.
#[derive(Debug, thiserror::Error)]
pub enum PolicyError {
    #[error(
        "no policy named '{0}'{1}: `iopscheck policy list` shows the built-in and local ones; give a path to load a file"
    )]
    UnknownName(String, String),
    #[error("{path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
    #[error("{path}: larger than {max} bytes; a policy is a short YAML file", max = MAX_POLICY_BYTES)]
    TooLarge { path: String },
    #[error("{path}:{line}:{column}: {msg}")]
    Syntax {
        path: String,
        line: u64,
        column: u64,
        msg: String,
    },
    #[error("{path}: {msg}")]
    Invalid { path: String, msg: String },
    #[error(
        "{path}: refusing a policy file that other users can write (mode {mode:o}); fix its permissions"
    )]
    Unsafe { path: String, mode: u32 },
}

/// A loaded policy and where it came from.
#[derive(Debug, Clone)]
pub struct Loaded {
    pub policy: Policy,
    pub origin: Origin,
    pub yaml: String,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Origin {
    BuiltIn,
    File(PathBuf),
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Origin::BuiltIn => f.write_str("built-in"),
            Origin::File(p) => write!(f, "{}", p.display()),
        }
    }
}

/// Resolves `--policy NAME|FILE`: a path (anything with a `/` or a `.yaml`/`.yml` ending, or
/// an existing file) is loaded; otherwise a built-in name; otherwise
/// `/etc/iopscheck/policies/NAME.yaml`.
pub fn resolve(spec: &str) -> Result<Loaded, PolicyError> {
    resolve_in(spec, Path::new(SYSTEM_POLICY_DIR))
}

pub fn resolve_in(spec: &str, system_dir: &Path) -> Result<Loaded, PolicyError> {
    let looks_like_path = spec.contains('/') || spec.ends_with(".yaml") || spec.ends_with(".yml");
    if looks_like_path || (Path::new(spec).is_file() && builtin_yaml(spec).is_none()) {
        return load_file(Path::new(spec));
    }
    if let Some(yaml) = builtin_yaml(spec) {
        let policy = parse(yaml, &format!("<built-in {spec}>"))?;
        return Ok(Loaded {
            policy,
            origin: Origin::BuiltIn,
            yaml: yaml.to_string(),
        });
    }
    for ext in ["yaml", "yml"] {
        let p = system_dir.join(format!("{spec}.{ext}"));
        if p.is_file() {
            return load_file(&p);
        }
    }
    let names = crate::suggest::policy_names(system_dir);
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    let hint = crate::suggest::closest(spec, &names)
        .map(|n| format!(" (did you mean '{n}'?)"))
        .unwrap_or_default();
    Err(PolicyError::UnknownName(spec.to_string(), hint))
}

/// Loads a policy file, refusing files others can write when running as root.
pub fn load_file(path: &Path) -> Result<Loaded, PolicyError> {
    let shown = path.display().to_string();
    let meta = std::fs::metadata(path).map_err(|source| PolicyError::Io {
        path: shown.clone(),
        source,
    })?;
    if meta.len() > MAX_POLICY_BYTES as u64 {
        return Err(PolicyError::TooLarge { path: shown });
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let root = crate::sys::is_root();
        if root && meta.mode() & 0o002 != 0 {
            return Err(PolicyError::Unsafe {
                path: shown,
                mode: meta.mode() & 0o7777,
            });
        }
        // A directory anyone can write (without the sticky bit) lets anyone swap the file.
        if root
            && let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty())
            && let Ok(d) = std::fs::metadata(dir)
            && d.mode() & 0o002 != 0
            && d.mode() & 0o1000 == 0
        {
            return Err(PolicyError::Unsafe {
                path: dir.display().to_string(),
                mode: d.mode() & 0o7777,
            });
        }
    }
    let bytes = std::fs::read(path).map_err(|source| PolicyError::Io {
        path: shown.clone(),
        source,
    })?;
    let yaml = String::from_utf8(bytes).map_err(|_| PolicyError::Invalid {
        path: shown.clone(),
        msg: "not UTF-8 text; a policy is a YAML file".into(),
    })?;
    let policy = parse(&yaml, &shown).map_err(|e| without_content(e, path, &yaml))?;
    Ok(Loaded {
        policy,
        origin: Origin::File(path.to_path_buf()),
        yaml,
    })
}

/// The top-level keys of a policy document.
const POLICY_KEYS: [&str; 8] = [
    "name",
    "description",
    "vendor",
    "source",
    "job",
    "runs",
    "rules",
    "evidence",
];

/// An error about a file's content quotes that content (a key, a value) only where the file is
/// a policy document and one the user could read anyway: a regular file, not reached through a
/// symbolic link, owned by the user or readable by everyone. Otherwise (`policy check` on a
/// link to /etc/shadow, as root) the error says where and why, without the content.
fn without_content(e: PolicyError, path: &Path, yaml: &str) -> PolicyError {
    use std::os::unix::fs::MetadataExt;
    let shown = path.display().to_string();
    let is_policy_document = yaml.lines().any(|l| {
        l.split_once(':')
            .is_some_and(|(k, _)| POLICY_KEYS.contains(&k) && !k.starts_with(' '))
    });
    if !is_policy_document {
        return match e {
            PolicyError::Syntax { .. } | PolicyError::Invalid { .. } => PolicyError::Invalid {
                path: shown,
                msg: format!(
                    "not a policy document: it has none of a policy's top-level keys ({}); its content is not shown",
                    POLICY_KEYS.join(", ")
                ),
            },
            other => other,
        };
    }
    let euid = crate::sys::euid();
    let readable_anyway = std::fs::symlink_metadata(path)
        .is_ok_and(|m| m.file_type().is_file() && (m.uid() == euid || m.mode() & 0o004 != 0));
    if readable_anyway {
        return e;
    }
    let why = "its content is not shown, as the file is a symbolic link or neither yours nor readable by everyone";
    match e {
        PolicyError::Syntax {
            path, line, column, ..
        } => PolicyError::Syntax {
            path,
            line,
            column,
            msg: format!("does not parse as a policy here; {why}"),
        },
        PolicyError::Invalid { path, .. } => PolicyError::Invalid {
            path,
            msg: format!("not a valid policy; {why}"),
        },
        other => other,
    }
}

/// Parses and checks a policy. The only place YAML is read.
pub fn parse(yaml: &str, path: &str) -> Result<Policy, PolicyError> {
    if yaml.len() > MAX_POLICY_BYTES {
        return Err(PolicyError::TooLarge { path: path.into() });
    }
    let mut budget = serde_saphyr::Budget::default();
    // A policy has a few dozen keys; these bounds stop alias bombs and deep nesting early.
    budget.max_events = 20_000;
    budget.max_aliases = 100;
    budget.max_anchors = 100;
    budget.max_depth = 32;
    budget.max_nodes = 10_000;
    budget.max_total_scalar_bytes = MAX_POLICY_BYTES;
    budget.max_recorded_anchor_events = 10_000;
    let mut options = serde_saphyr::Options::default();
    options.budget = Some(budget);
    let policy: Policy = serde_saphyr::from_str_with_options(yaml, options).map_err(|e| {
        let (line, column) = e
            .location()
            .map(|l| (l.line(), l.column()))
            .unwrap_or((0, 0));
        let mut msg = clean_message(&e.to_string());
        if let Some(key) = key_path_at(yaml, line as usize)
            && !msg.starts_with("missing field")
        {
            // An unknown key is reported at the key itself: name the mapping it is in.
            let key = if msg.starts_with("unknown field") {
                key.rsplit_once('.').map(|(p, _)| p.to_string())
            } else {
                Some(key)
            };
            if let Some(k) = key {
                msg = format!("{k}: {msg}");
            }
        }
        if line == 0 {
            PolicyError::Invalid {
                path: path.into(),
                msg,
            }
        } else {
            PolicyError::Syntax {
                path: path.into(),
                line,
                column,
                msg,
            }
        }
    })?;
    check(&policy).map_err(|msg| PolicyError::Invalid {
        path: path.into(),
        msg,
    })?;
    Ok(policy)
}

/// serde-saphyr appends its own location to messages; ours goes in front instead.
fn clean_message(msg: &str) -> String {
    let mut m = msg.lines().next().unwrap_or(msg).trim();
    m = m.strip_prefix("error: ").unwrap_or(m);
    // "line 38 column 5: …"
    if let Some(rest) = m.strip_prefix("line ")
        && let Some((_, after)) = rest.split_once(": ")
    {
        m = after;
    }
    let m = match m.rfind(" at line ") {
        Some(i) => &m[..i],
        None => m,
    };
    match m {
        "invalid u32" | "invalid u64" | "invalid u8" => "expected a whole number".to_string(),
        "invalid f64" => "expected a number".to_string(),
        "externally tagged enum expected scalar or mapping" => {
            "expected a single value, not a list".to_string()
        }
        other => other.to_string(),
    }
}

/// The dotted key path of the mapping key on a 1-based line ("job.numjobs", "rules[].op"),
/// found from indentation: enough to tell a policy author which key is wrong.
fn key_path_at(yaml: &str, line: usize) -> Option<String> {
    let lines: Vec<&str> = yaml.lines().collect();
    let key_of = |l: &str| -> Option<(usize, String, bool)> {
        let indent = l.len() - l.trim_start().len();
        let t = l.trim_start();
        let (item, t) = match t.strip_prefix("- ") {
            Some(rest) => (true, rest),
            None => (false, t),
        };
        if t.starts_with('#') {
            return None;
        }
        let (k, _) = t.split_once(':')?;
        let k = k.trim();
        (!k.is_empty() && !k.contains(' '))
            .then(|| (indent + if item { 2 } else { 0 }, k.to_string(), item))
    };
    let (mut indent, key, mut item) = key_of(lines.get(line.checked_sub(1)?)?)?;
    let mut path = vec![key];
    for l in lines[..line - 1].iter().rev() {
        if let Some((i, k, it)) = key_of(l) {
            if i < indent {
                let k = if item { format!("{k}[]") } else { k };
                path.push(k);
                indent = i;
                item = it;
            } else if i == indent && it && !item {
                item = true;
            }
        }
        if indent == 0 {
            break;
        }
    }
    path.reverse();
    let mut msg = path.join(".");
    msg = msg.replace(".[", "[");
    Some(msg)
}

/// Checks what the YAML schema alone cannot: each message names the key.
pub fn check(p: &Policy) -> Result<(), String> {
    if p.name.trim().is_empty() {
        return Err("name: must not be empty".into());
    }
    p.job.validate().map_err(|e| format!("job.{e}"))?;
    if let Some(first) = p.engines.first()
        && *first != p.job.ioengine
    {
        return Err(format!(
            "engines: the first engine is the default and must be the job's ioengine ({}), not {first}",
            p.job.ioengine
        ));
    }
    crate::config::check_runs(p.runs).map_err(|e| format!("runs: {e}"))?;
    if p.rules.is_empty() {
        return Err("rules: a policy needs at least one rule".into());
    }
    for (i, r) in p.rules.iter().enumerate() {
        let Some(info) = metrics::lookup(&r.metric) else {
            return Err(format!(
                "rules[{i}].metric: unknown metric '{}'; known metrics: {}",
                r.metric,
                metrics::known_names().join(", ")
            ));
        };
        if !r.threshold.is_finite() || r.threshold < 0.0 {
            return Err(format!(
                "rules[{i}].threshold: must be a positive number in {}",
                info.unit
            ));
        }
        if let Some(dir) = info.direction
            && !((dir == metrics::Direction::Read && p.job.rw.reads())
                || (dir == metrics::Direction::Write && p.job.rw.writes()))
        {
            return Err(format!(
                "rules[{i}].metric: '{}' can never be measured by a job with rw={}",
                r.metric, p.job.rw
            ));
        }
        if info.needs_sync && p.job.fsync == 0 && p.job.fdatasync == 0 {
            return Err(format!(
                "rules[{i}].metric: '{}' needs a job that syncs (job.fsync or job.fdatasync)",
                r.metric
            ));
        }
    }
    if !p.rules.iter().any(|r| r.level == Level::Fail) {
        return Err("rules: at least one rule must have level fail, or nothing decides".into());
    }
    let e = &p.evidence;
    if e.min_runs == 0 {
        return Err("evidence.min_runs: must be at least 1".into());
    }
    if e.min_days == 0 {
        return Err("evidence.min_days: must be at least 1".into());
    }
    if e.window.0.as_secs() < 3600 {
        return Err("evidence.window: must be at least 1h".into());
    }
    if e.min_days as u64 > e.window.0.as_secs().div_ceil(86400) {
        return Err(format!(
            "evidence.min_days: {} days cannot fit in a window of {}",
            e.min_days,
            crate::units::format_duration(e.window.0)
        ));
    }
    if !(e.max_cv.is_finite() && e.max_cv > 0.0) {
        return Err("evidence.max_cv: must be a positive fraction such as 0.25".into());
    }
    Ok(())
}

impl Policy {
    /// The engines whose runs are the policy's test: `engines`, or the job's engine alone.
    pub fn accepted_engines(&self) -> Vec<IoEngine> {
        if self.engines.is_empty() {
            vec![self.job.ioengine.clone()]
        } else {
            self.engines.clone()
        }
    }

    /// Whether a run on `engine` (fio's name; "fio/posixaio" as records write fio's runs)
    /// is the policy's test.
    pub fn accepts_engine(&self, engine: &str) -> bool {
        let e = IoEngine::from(engine.strip_prefix("fio/").unwrap_or(engine));
        self.accepted_engines().contains(&e)
    }

    /// The rules that decide the verdict.
    pub fn deciding_rules(&self) -> impl Iterator<Item = &Rule> {
        self.rules.iter().filter(|r| r.level == Level::Fail)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_builtin_policy_parses_and_checks() {
        for (name, yaml) in BUILTIN {
            let p = parse(yaml, name).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(&p.name, name);
        }
    }

    #[test]
    fn swimlane_holds_the_articles_job_and_rules() {
        let p = resolve("swimlane").unwrap().policy;
        assert_eq!(p.job.bs.0, 4096);
        assert_eq!(p.job.size.0, 4 << 30);
        assert_eq!(p.job.runtime.0.as_secs(), 60);
        assert_eq!(p.job.ioengine.as_str(), "posixaio");
        assert!(p.job.end_fsync && p.job.time_based);
        assert_eq!(p.runs, 3);
        let deciding: Vec<_> = p.deciding_rules().collect();
        assert_eq!(deciding.len(), 1);
        assert_eq!(deciding[0].metric, "write_iops_formula");
        assert_eq!(deciding[0].threshold, 3000.0);
        let bw = p
            .rules
            .iter()
            .find(|r| r.metric == "write_bw_mb_s")
            .unwrap();
        assert_eq!((bw.threshold, bw.level), (11.7, Level::Info));
    }

    #[test]
    fn unknown_keys_are_located_errors() {
        let yaml = builtin_yaml("swimlane")
            .unwrap()
            .replace("iodepth: 1", "iodepht: 1");
        let e = parse(&yaml, "p.yaml").unwrap_err().to_string();
        assert!(e.starts_with("p.yaml:"), "{e}");
        assert!(e.contains("iodepht"), "{e}");
        assert!(matches!(
            parse(&yaml, "p.yaml"),
            Err(PolicyError::Syntax { line, .. }) if line > 1
        ));
    }

    #[test]
    fn a_wrong_type_names_the_key_path() {
        let yaml = builtin_yaml("swimlane")
            .unwrap()
            .replace("numjobs: 1", "numjobs: many");
        let e = parse(&yaml, "p.yaml").unwrap_err().to_string();
        assert!(e.contains("job.numjobs: expected a whole number"), "{e}");
        let yaml = builtin_yaml("swimlane")
            .unwrap()
            .replacen("op: \">=\"", "op: \"=>\"", 1);
        let e = parse(&yaml, "p.yaml").unwrap_err().to_string();
        assert!(
            e.contains("rules[].op:") && e.contains("expected one of"),
            "{e}"
        );
    }

    #[test]
    fn a_bad_size_names_the_value() {
        let yaml = builtin_yaml("swimlane")
            .unwrap()
            .replace("size: 4g", "size: 4q");
        let e = parse(&yaml, "p.yaml").unwrap_err().to_string();
        assert!(e.contains("4q"), "{e}");
    }

    #[test]
    fn thresholds_with_units_are_converted_and_checked() {
        assert_eq!(convert_threshold("10ms", "µs"), Ok(10_000.0));
        assert_eq!(convert_threshold("500us", "µs"), Ok(500.0));
        assert_eq!(convert_threshold("250MB/s", "MB/s"), Ok(250.0));
        assert!((convert_threshold("100MiB/s", "MB/s").unwrap() - 104.857_6).abs() < 1e-9);
        assert_eq!(convert_threshold("7.5k", "IOPS"), Ok(7500.0));
        assert!(
            convert_threshold("10ms", "IOPS")
                .unwrap_err()
                .contains("duration")
        );
        assert!(
            convert_threshold("5MB/s", "IOPS")
                .unwrap_err()
                .contains("rate")
        );
        assert!(convert_threshold("10ms", "MB/s").is_err());
        let yaml =
            builtin_yaml("swimlane")
                .unwrap()
                .replacen("threshold: 3000", "threshold: 3s", 1);
        let e = parse(&yaml, "p.yaml").unwrap_err().to_string();
        assert!(e.contains("duration") && e.contains("IOPS"), "{e}");
    }

    #[test]
    fn an_unknown_metric_is_named() {
        let yaml = builtin_yaml("swimlane")
            .unwrap()
            .replace("metric: write_iops_formula", "metric: write_ipos");
        let e = parse(&yaml, "p.yaml").unwrap_err().to_string();
        assert!(
            e.starts_with("p.yaml:44:")
                && e.contains("rules[].metric: unknown metric 'write_ipos'"),
            "{e}"
        );
    }

    #[test]
    fn a_yaml_alias_bomb_is_refused_quickly() {
        let mut y = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
        for i in 1..12 {
            let p = i - 1;
            y.push_str(&format!(
                "a{i}: &a{i} [*a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}]\n"
            ));
        }
        let t = std::time::Instant::now();
        assert!(parse(&y, "bomb.yaml").is_err());
        assert!(t.elapsed().as_secs() < 5);
    }

    #[test]
    #[cfg_attr(not(have_root), ignore = "needs root (the rule applies to root)")]
    fn as_root_a_policy_file_others_can_write_is_refused() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("open.yaml");
        std::fs::write(&p, builtin_yaml("swimlane").unwrap()).unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o666)).unwrap();
        assert!(matches!(load_file(&p), Err(PolicyError::Unsafe { .. })));
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o644)).unwrap();
        assert!(load_file(&p).is_ok());
        // a directory anyone can write is refused too, unless sticky like /tmp
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
        assert!(matches!(load_file(&p), Err(PolicyError::Unsafe { .. })));
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o1777)).unwrap();
        assert!(load_file(&p).is_ok());
    }

    #[test]
    fn names_resolve_in_the_system_dir_after_builtins() {
        let dir = tempfile::tempdir().unwrap();
        let yaml = builtin_yaml("swimlane")
            .unwrap()
            .replace("name: swimlane", "name: local");
        std::fs::write(dir.path().join("local.yaml"), yaml).unwrap();
        let l = resolve_in("local", dir.path()).unwrap();
        assert_eq!(l.policy.name, "local");
        assert!(matches!(
            resolve_in("nope", dir.path()),
            Err(PolicyError::UnknownName(..))
        ));
        assert_eq!(
            resolve_in("swimlane", dir.path()).unwrap().origin,
            Origin::BuiltIn
        );
    }
}
