//! The schema of a policy document: what a policy file may say, field by field, and how a
//! rule's threshold given with a unit is read. A new key in policy files goes here (and, if a
//! value of it can be wrong in a way the YAML types cannot say, its check in `check.rs`).

use std::fmt;

use chrono::NaiveDate;
use serde::{Deserialize, Serialize};

use crate::engine::EngineUsed;
use crate::job::{IoEngine, Job, Secs};
use crate::metrics;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Policy {
    pub name: String,
    pub description: String,
    pub vendor: String,
    pub source: Publication,
    pub job: Job,
    /// The engines the policy's test may run on, the first being the default (the job's
    /// `ioengine`). A policy without the list accepts its job's engine only.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub engines: Vec<IoEngine>,
    /// Runs per `iopscheck run` invocation.
    #[serde(default = "default_runs")]
    pub runs: u32,
    /// Rules for one node. A policy whose requirement is only over the fleet (`fleet`) may
    /// have none.
    #[serde(default)]
    pub rules: Vec<Rule>,
    #[serde(default)]
    pub evidence: Evidence,
    /// Whether a verdict needs the level the disk sustains (`iopscheck run --sustained`): a
    /// policy for disks that run on burst credits may require it.
    #[serde(default, skip_serializing_if = "Sustained::is_optional")]
    pub sustained: Sustained,
    /// Rules over the fleet, every node together, judged by `iopscheck fleet`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fleet: Vec<FleetRule>,
    /// The job runs on each of several raw devices, read-only, each judged by `rules`, with
    /// bounds on their spread (`policy/devices.rs`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub devices: Option<super::devices::Devices>,
}

/// The policy's `sustained` key.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Sustained {
    /// A run of the job as written may pass (the default).
    #[default]
    Optional,
    /// Only a run that measured the level the disk sustains (`run --sustained`, reaching a
    /// steady state) can pass.
    Required,
}

impl Sustained {
    fn is_optional(&self) -> bool {
        *self == Sustained::Optional
    }
}

/// A rule over the fleet: the nodes' aggregates of a metric may differ by at most a factor
/// (Confluent's "identical throughput and IOPS" as max/min ≤ 1.1).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "FleetRuleRaw")]
pub struct FleetRule {
    pub metric: String,
    /// The largest node's figure over the smallest's may be at most this (1.1: within 10%).
    pub max_over_min: f64,
    #[serde(default)]
    pub level: Level,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct FleetRuleRaw {
    metric: String,
    max_over_min: f64,
    #[serde(default)]
    level: Level,
    #[serde(default)]
    note: Option<String>,
}

impl TryFrom<FleetRuleRaw> for FleetRule {
    type Error = String;
    fn try_from(r: FleetRuleRaw) -> Result<FleetRule, String> {
        metrics::known(&r.metric)?;
        if !(r.max_over_min.is_finite() && r.max_over_min >= 1.0) {
            return Err(format!(
                "max_over_min of {}: {} is not a bound on the largest node's figure over the smallest's; give 1 or more (1.1: within 10%)",
                r.metric, r.max_over_min
            ));
        }
        Ok(FleetRule {
            metric: r.metric,
            max_over_min: r.max_over_min,
            level: r.level,
            note: r.note,
        })
    }
}

fn default_runs() -> u32 {
    3
}

/// The vendor's publication this policy encodes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Publication {
    pub title: String,
    pub url: String,
    /// When the page was read (YYYY-MM-DD): a source read more than [`STALE_AFTER_DAYS`]
    /// before a verdict is noted with it, as the vendor may have changed it since.
    #[serde(deserialize_with = "date")]
    pub seen: NaiveDate,
    /// Whether the vendor prescribes the test, or only a number (the test is then ours).
    pub test: TestOrigin,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notes: Option<String>,
}

/// A source read more than this many days before a verdict (or `policy list`) is noted as
/// possibly out of date: vendors revise their published minimums.
pub const STALE_AFTER_DAYS: i64 = 365;

impl Publication {
    /// Whether the source was read more than [`STALE_AFTER_DAYS`] before `today` (said in
    /// `evaluate::Warning::StaleSource`'s words).
    pub fn is_stale(&self, today: NaiveDate) -> bool {
        (today - self.seen).num_days() > STALE_AFTER_DAYS
    }
}

/// A calendar date written YYYY-MM-DD, with a message that says so.
fn date<'de, D: serde::Deserializer<'de>>(d: D) -> Result<NaiveDate, D::Error> {
    let s = String::deserialize(d)?;
    NaiveDate::parse_from_str(s.trim(), "%Y-%m-%d").map_err(|_| {
        serde::de::Error::custom(format!(
            "'{s}' is not a date: write the day the source was read as YYYY-MM-DD"
        ))
    })
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
    /// latency in µs, "250MB/s", "7.5k" IOPS); it is converted and checked on load. For a rule
    /// that scales with the machine (`per`), the figure per unit (500 IOPS per vCPU).
    pub threshold: f64,
    /// What the threshold scales with (`threshold: {per_cpu: 500}`): resolved against the host
    /// facts recorded with the runs, never assumed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub per: Option<Per>,
    /// `fail` decides the verdict; `warn` is a soft limit (changes the exit code only with
    /// `--strict`); `info` is shown beside the others and never decides.
    #[serde(default)]
    pub level: Level,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// What a rule's threshold scales with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Per {
    /// Each of the machine's logical CPUs (vCPUs): `per_cpu`.
    Cpu,
    /// Each GiB of the machine's memory: `per_gib_memory`.
    GibMemory,
    /// Each TiB of the target filesystem's capacity: `per_tib_capacity`.
    TibCapacity,
}

impl Per {
    /// The YAML key under `threshold:`.
    pub fn key(self) -> &'static str {
        match self {
            Per::Cpu => "per_cpu",
            Per::GibMemory => "per_gib_memory",
            Per::TibCapacity => "per_tib_capacity",
        }
    }
    /// "vCPU", "GiB of memory", "TiB of capacity".
    pub fn unit(self) -> &'static str {
        match self {
            Per::Cpu => "vCPU",
            Per::GibMemory => "GiB of memory",
            Per::TibCapacity => "TiB of target capacity",
        }
    }
    /// What a record must state for the rule to be resolved.
    pub fn fact(self) -> &'static str {
        match self {
            Per::Cpu => "the machine's CPU count",
            Per::GibMemory => "the machine's memory",
            Per::TibCapacity => "the target filesystem's capacity",
        }
    }
    /// The count of units a target's host facts give (8 vCPUs, 15.6 GiB), if they state it.
    pub fn count(self, t: &crate::history::Target) -> Option<f64> {
        match self {
            Per::Cpu => t.cpus.map(f64::from),
            Per::GibMemory => t.memory_bytes.map(|b| b as f64 / (1u64 << 30) as f64),
            Per::TibCapacity => t.capacity_bytes.map(|b| b as f64 / (1u64 << 40) as f64),
        }
        .filter(|c| c.is_finite() && *c > 0.0)
    }
    /// "8 vCPUs", "15.6 GiB of memory", "0.5 TiB of target capacity".
    pub fn describe(self, count: f64) -> String {
        match self {
            Per::Cpu => format!("{count} vCPU{}", if count == 1.0 { "" } else { "s" }),
            _ => format!("{} {}", crate::numbers::fmt_precise(count), self.unit()),
        }
    }
}

impl Rule {
    /// "≥ 3000 IOPS", or "≥ 500 IOPS per vCPU" for a rule that scales.
    pub fn describe_threshold(&self) -> String {
        let unit = crate::metrics::unit(&self.metric);
        let figure = crate::numbers::fmt_precise(self.threshold);
        match self.per {
            None => format!("{} {figure} {unit}", self.op),
            Some(p) => format!("{} {figure} {unit} per {}", self.op, p.unit()),
        }
    }
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

/// A threshold as written: a number, a number with a unit, or a mapping of one `per_…` key to
/// either (`{per_cpu: 500}`, `{per_cpu: 30MB/s}`).
#[derive(Debug)]
enum RawThreshold {
    Number(f64),
    Text(String),
    Scaled(Per, Box<RawThreshold>),
}

impl<'de> Deserialize<'de> for RawThreshold {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = RawThreshold;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str(
                    "a number, a number with a unit (10ms, 250MB/s, 7.5k), or one of per_cpu, per_gib_memory, per_tib_capacity with such a value ({per_cpu: 500})",
                )
            }
            fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<RawThreshold, E> {
                Ok(RawThreshold::Number(v))
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<RawThreshold, E> {
                Ok(RawThreshold::Number(v as f64))
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<RawThreshold, E> {
                Ok(RawThreshold::Number(v as f64))
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<RawThreshold, E> {
                Ok(RawThreshold::Text(v.to_string()))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<RawThreshold, A::Error> {
                use serde::de::Error;
                let keys = [Per::Cpu, Per::GibMemory, Per::TibCapacity];
                let mut found: Option<RawThreshold> = None;
                while let Some(k) = map.next_key::<String>()? {
                    let Some(per) = keys.iter().copied().find(|p| p.key() == k) else {
                        return Err(A::Error::custom(format!(
                            "unknown key '{k}' under threshold: expected one of per_cpu, per_gib_memory, per_tib_capacity"
                        )));
                    };
                    let v: RawThreshold = map.next_value()?;
                    if matches!(v, RawThreshold::Scaled(..)) {
                        return Err(A::Error::custom(format!(
                            "{k}: give a number (500) or a number with a unit (30MB/s), not another mapping"
                        )));
                    }
                    if found.is_some() {
                        return Err(A::Error::custom(
                            "a threshold scales with one thing: give one of per_cpu, per_gib_memory, per_tib_capacity",
                        ));
                    }
                    found = Some(RawThreshold::Scaled(per, Box::new(v)));
                }
                found.ok_or_else(|| {
                    A::Error::custom(
                        "an empty mapping: give one of per_cpu, per_gib_memory, per_tib_capacity",
                    )
                })
            }
        }
        d.deserialize_any(V)
    }
}

impl TryFrom<RuleRaw> for Rule {
    type Error = String;
    fn try_from(r: RuleRaw) -> Result<Rule, String> {
        let info = metrics::known(&r.metric)?;
        let (per, raw) = match r.threshold {
            RawThreshold::Scaled(p, v) => (Some(p), *v),
            other => (None, other),
        };
        let threshold = match raw {
            RawThreshold::Number(n) => n,
            RawThreshold::Text(t) => convert_threshold(&t, info.unit)
                .map_err(|e| format!("threshold of {}: {e}", r.metric))?,
            RawThreshold::Scaled(..) => unreachable!("refused while reading"),
        };
        if per.is_some() && !(threshold.is_finite() && threshold > 0.0) {
            return Err(format!(
                "threshold of {}: a figure per unit must be more than 0",
                r.metric
            ));
        }
        Ok(Rule {
            metric: r.metric,
            op: r.op,
            threshold,
            per,
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
    /// Runs a day needs to count towards `min_days` (`evaluate::evidence_days`).
    #[serde(default = "default_min_runs_per_day")]
    pub min_runs_per_day: u32,
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
fn default_min_runs_per_day() -> u32 {
    1
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
            min_runs_per_day: default_min_runs_per_day(),
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
        EngineUsed::ioengine_of(engine)
            .is_some_and(|e| self.accepted_engines().contains(&IoEngine::from(e)))
    }

    /// The rules that decide the verdict.
    pub fn deciding_rules(&self) -> impl Iterator<Item = &Rule> {
        self.rules.iter().filter(|r| r.level == Level::Fail)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::{builtin_yaml, parse};

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
}
