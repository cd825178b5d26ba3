//! A policy's `devices` key: its job runs on each of several raw block devices, read-only, and
//! each device is judged by the policy's rules; `spread` rules bound how far the devices'
//! figures may differ (IBM Storage Scale ECE: "the performance on drives of same type must not
//! have more than 10% difference", which IBM's readiness tool computes as
//! 100 × (max − min) / max over the drives' mean IOPS and mean latencies).

use serde::{Deserialize, Serialize};

use super::schema::{FleetRule, Level};
use crate::metrics;

/// `devices:` on a policy.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Devices {
    /// The kind of drive the policy's figures are for (`nvme`, `ssd`, `hdd`, classified as
    /// IBM's tool does): a device of another kind is refused.
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    pub kind: Option<DriveType>,
    /// Bounds on the spread of a metric across the devices of one run (or one host's history).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub spread: Vec<SpreadRule>,
}

/// A drive's kind as IBM's storage readiness tool tells them apart: a name under `/dev/nvme`
/// is NVMe; otherwise a rotational device is an HDD and any other an SSD.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DriveType {
    Nvme,
    Ssd,
    Hdd,
}

impl DriveType {
    pub fn as_str(self) -> &'static str {
        match self {
            DriveType::Nvme => "nvme",
            DriveType::Ssd => "ssd",
            DriveType::Hdd => "hdd",
        }
    }
    /// "an NVMe drive", "an SSD", "an HDD".
    pub fn label(self) -> &'static str {
        match self {
            DriveType::Nvme => "an NVMe drive",
            DriveType::Ssd => "an SSD (not rotational, not NVMe)",
            DriveType::Hdd => "an HDD (rotational)",
        }
    }
    /// Classifies a block device by its kernel name (`nvme0n1`, `sda`) and whether sysfs says
    /// it is rotational.
    pub fn classify(name: &str, rotational: bool) -> DriveType {
        if name.starts_with("nvme") {
            DriveType::Nvme
        } else if rotational {
            DriveType::Hdd
        } else {
            DriveType::Ssd
        }
    }
}

/// How far apart the devices' figures may be.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Bound {
    /// The largest device's figure over the smallest's at most this (1.1: within 10%).
    MaxOverMin(f64),
    /// IBM's "difference percentage": 100 × (max − min) / max at most this.
    MaxDiffPct(f64),
}

impl Bound {
    /// The same bound as a largest-over-smallest ratio: a difference of p% is
    /// max/min ≤ 1 / (1 − p/100).
    pub fn max_over_min(self) -> f64 {
        match self {
            Bound::MaxOverMin(r) => r,
            Bound::MaxDiffPct(p) => 1.0 / (1.0 - p / 100.0),
        }
    }

    /// A spread found (the largest figure over the smallest), stated as the bound is:
    /// "max/min 1.25", or IBM's "difference 20.00%" (100 × (max − min) / max).
    pub fn state(self, ratio: f64) -> String {
        match self {
            // The least figure was 0: the ratio has no bound, said in words rather than "+Inf".
            Bound::MaxOverMin(_) if ratio.is_infinite() => "max/min unbounded".to_string(),
            Bound::MaxOverMin(_) => format!("max/min {}", crate::numbers::fmt_precise(ratio)),
            Bound::MaxDiffPct(_) => {
                let pct = if ratio.is_finite() {
                    100.0 * (1.0 - 1.0 / ratio)
                } else {
                    100.0
                };
                format!("difference {pct:.2}%")
            }
        }
    }
}

/// A spread rule: `{metric, max_over_min | max_diff_pct, level, note}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "SpreadRaw")]
pub struct SpreadRule {
    pub metric: String,
    #[serde(flatten)]
    pub bound: Bound,
    #[serde(default)]
    pub level: Level,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct SpreadRaw {
    metric: String,
    #[serde(default)]
    max_over_min: Option<f64>,
    #[serde(default)]
    max_diff_pct: Option<f64>,
    #[serde(default)]
    level: Level,
    #[serde(default)]
    note: Option<String>,
}

impl TryFrom<SpreadRaw> for SpreadRule {
    type Error = String;
    fn try_from(r: SpreadRaw) -> Result<SpreadRule, String> {
        metrics::known(&r.metric)?;
        let bound = match (r.max_over_min, r.max_diff_pct) {
            (Some(x), None) if x.is_finite() && x >= 1.0 => Bound::MaxOverMin(x),
            (Some(x), None) => {
                return Err(format!(
                    "max_over_min of {}: {x} is not a bound on the largest device's figure over the smallest's; give 1 or more (1.1: within 10%)",
                    r.metric
                ));
            }
            (None, Some(p)) if p.is_finite() && (0.0..100.0).contains(&p) => Bound::MaxDiffPct(p),
            (None, Some(p)) => {
                return Err(format!(
                    "max_diff_pct of {}: {p} is not a percentage from 0 to under 100 (IBM's 100 × (max − min) / max; 10: within 10%)",
                    r.metric
                ));
            }
            _ => {
                return Err(format!(
                    "spread rule on {}: give one bound, max_over_min (largest / smallest) or max_diff_pct (100 × (max − min) / max)",
                    r.metric
                ));
            }
        };
        Ok(SpreadRule {
            metric: r.metric,
            bound,
            level: r.level,
            note: r.note,
        })
    }
}

impl SpreadRule {
    /// The rule as a bound over rows of a set (the fleet's judge works on either).
    pub fn as_fleet_rule(&self) -> FleetRule {
        FleetRule {
            metric: self.metric.clone(),
            max_over_min: self.bound.max_over_min(),
            level: self.level,
            note: self.note.clone(),
        }
    }

    /// "100 × (max − min) / max ≤ 10%" or "max/min ≤ 1.1".
    pub fn describe(&self) -> String {
        match self.bound {
            Bound::MaxOverMin(r) => format!("max/min ≤ {}", crate::numbers::fmt_precise(r)),
            Bound::MaxDiffPct(p) => format!(
                "100 × (max − min) / max ≤ {}%",
                crate::numbers::fmt_precise(p)
            ),
        }
    }
}

/// Checks what the types cannot: a spread metric the job measures, a job that never writes.
pub fn check(d: &Devices, job: &crate::job::Job) -> Result<(), String> {
    if job.rw.writes() {
        return Err(format!(
            "devices: the job writes (rw={}), and iopscheck never writes to a device: a policy with devices runs a job that only reads",
            job.rw
        ));
    }
    for (i, r) in d.spread.iter().enumerate() {
        let info = metrics::lookup(&r.metric).expect("checked on load");
        if info.direction == Some(crate::measure::Direction::Write) {
            return Err(format!(
                "devices.spread[{i}].metric: '{}' can never be measured by a job with rw={}",
                r.metric, job.rw
            ));
        }
    }
    Ok(())
}

/// Whether a record's target is a raw block device (`run --device`): its `dir` is the device's
/// path, a device is named and nothing is mounted there (a loop device's `filesystem` is its
/// backing file's).
pub fn is_raw_device(t: &crate::history::Target) -> bool {
    t.mount_point.is_none() && t.dir.starts_with("/dev/") && t.device.is_some()
}

/// Whether a record read a whole device, as a policy with `devices` asks: its job's size is
/// then the device's (its capacity, in whole blocks), not the policy's `job.size`.
pub fn reads_whole_device(
    policy: &super::Policy,
    t: &crate::history::Target,
    size: Option<u64>,
    bs: Option<u64>,
) -> bool {
    let (Some(cap), Some(size)) = (t.capacity_bytes, size) else {
        return false;
    };
    let bs = bs.filter(|&b| b > 0).unwrap_or(1);
    policy.devices.is_some() && is_raw_device(t) && size == cap / bs * bs
}

/// `policy diff`'s lines for the `devices` key: its drive type, and its spread rules paired
/// by metric.
pub fn diff(a: Option<&Devices>, b: Option<&Devices>) -> Vec<String> {
    let mut lines = Vec::new();
    let kind = |d: Option<&Devices>| match d {
        None => "none (a directory)".to_string(),
        Some(d) => d.kind.map_or("any", DriveType::as_str).to_string(),
    };
    if a.is_none() != b.is_none() || a.map(|d| d.kind) != b.map(|d| d.kind) {
        lines.push(format!("type: {} → {}", kind(a), kind(b)));
    }
    let show = |r: &SpreadRule| {
        format!(
            "spread of {}: {} (level {})",
            r.metric,
            r.describe(),
            r.level.as_str()
        )
    };
    let (ra, rb) = (
        a.map(|d| d.spread.as_slice()).unwrap_or_default(),
        b.map(|d| d.spread.as_slice()).unwrap_or_default(),
    );
    for x in ra {
        match rb.iter().find(|y| y.metric == x.metric) {
            None => lines.push(format!("removed: {}", show(x))),
            Some(y) if y != x => {
                let wider = y.bound.max_over_min() > x.bound.max_over_min();
                let narrower = y.bound.max_over_min() < x.bound.max_over_min();
                let how = if wider {
                    " (easier to pass)"
                } else if narrower {
                    " (harder to pass)"
                } else {
                    ""
                };
                lines.push(format!("{} → {}{how}", show(x), show(y)))
            }
            Some(_) => {}
        }
    }
    for y in rb {
        if !ra.iter().any(|x| x.metric == y.metric) {
            lines.push(format!("added: {}", show(y)));
        }
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ibms_difference_percentage_is_a_ratio_bound() {
        // 100 × (max − min) / max ≤ 10 ⟺ min/max ≥ 0.9 ⟺ max/min ≤ 1/0.9.
        let b = Bound::MaxDiffPct(10.0);
        assert!((b.max_over_min() - 1.0 / 0.9).abs() < 1e-12);
        // 20,000 and 18,100 IOPS: 9.5% apart by IBM's measure, within it.
        assert!(20_000.0 / 18_100.0 <= b.max_over_min());
        assert!(20_000.0 / 17_900.0 > b.max_over_min());
    }

    #[test]
    fn a_drive_is_classified_as_ibms_tool_does() {
        assert_eq!(DriveType::classify("nvme0n1", false), DriveType::Nvme);
        assert_eq!(DriveType::classify("sda", true), DriveType::Hdd);
        assert_eq!(DriveType::classify("sdb", false), DriveType::Ssd);
    }

    #[test]
    fn a_wider_spread_bound_is_easier_to_pass() {
        let d = |p: f64| Devices {
            kind: Some(DriveType::Nvme),
            spread: vec![SpreadRule {
                metric: "read_iops_mean".into(),
                bound: Bound::MaxDiffPct(p),
                level: Level::Fail,
                note: None,
            }],
        };
        assert_eq!(
            diff(Some(&d(10.0)), Some(&d(20.0))),
            [
                "spread of read_iops_mean: 100 × (max − min) / max ≤ 10% (level fail) → spread of read_iops_mean: 100 × (max − min) / max ≤ 20% (level fail) (easier to pass)"
            ]
        );
        assert!(diff(Some(&d(10.0)), Some(&d(10.0))).is_empty());
        assert_eq!(
            diff(None, Some(&d(10.0)))[0],
            "type: none (a directory) → nvme"
        );
    }
}
