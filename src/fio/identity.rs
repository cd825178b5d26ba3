//! What names one fio run whatever format it was written in, from what each output states.
//!
//! fio writes one run in several formats at once (`--output-format=json,terse,normal`) and a
//! customer may send more than one of them. Each states the same run to its own precision:
//! JSON gives exact counts, bytes and latency means; terse truncates the bytes to KiB and the
//! IOPS to an integer, and prints latency means in µs to six decimals; text prints 3–4
//! significant digits, the exact I/O counts on its `issued` line, and latency means and CPU
//! shares to two decimals. A [`RunIdentity`] holds, for each figure, the range of exact
//! values the output's printed figure allows; two blocks are one run when every figure both
//! state agrees within those ranges ([`RunIdentity::same_run`]).
//!
//! What makes it strong enough: the job's name, group and error and the fio version must be
//! equal where both state them, the runtime in milliseconds equal, the I/O counts and bytes of
//! every direction agree, and at least one figure that no two runs share by design (a latency
//! mean, a CPU share, each to 4–12 significant digits) agree too. A job of fixed size moves
//! the same bytes and I/Os in every run, and a fast disk may repeat a runtime to the
//! millisecond; its latency means and CPU shares still differ from run to run.

use serde::{Deserialize, Serialize};

use super::{FioFormat, FioJob};
use crate::measure::{BwBasis, DirectionStats, Latency};

/// The figures of one job block that name its run, each as the range of exact values its
/// output allows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunIdentity {
    /// fio's version, as the output states it (e.g. "3.33").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fio_version: Option<String>,
    pub job: String,
    pub groupid: u32,
    pub error: i32,
    /// Each direction that moved data.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read: Option<DirectionIdentity>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write: Option<DirectionIdentity>,
    /// What names the job's process, where the output states it (text `pid=…`, JSON
    /// `job_start=…`): two processes are two runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub process: Option<String>,
    /// The run's date as the output states it, with the format that states it ("text:SECS",
    /// "json:SECS"): compared only within one format, since the text's date has no zone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time: Option<String>,
    /// The process's CPU shares, % (least, most).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_usr_pct: Option<(f64, f64)>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_sys_pct: Option<(f64, f64)>,
}

/// One direction's figures (least, most).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DirectionIdentity {
    pub runtime_ms: u64,
    pub ios: (u64, u64),
    pub bytes: (u64, u64),
    /// Latency means, ns.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clat_mean_ns: Option<(f64, f64)>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lat_mean_ns: Option<(f64, f64)>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slat_mean_ns: Option<(f64, f64)>,
}

// How far a figure fio printed to 3–4 significant digits may be from the exact one.
use crate::numbers::PRINTED;

/// How precisely a format states each figure.
#[derive(Clone, Copy)]
struct Precision {
    format: FioFormat,
    /// The output's own I/O counts (JSON `total_ios`, the text `issued` line), not IOPS ×
    /// runtime.
    counted: bool,
}

impl RunIdentity {
    /// The identity of a job block of an output in `format`, of fio `version`.
    pub fn of(job: &FioJob, format: FioFormat, version: Option<&str>) -> RunIdentity {
        let p = Precision {
            format,
            counted: job.ios_counted,
        };
        let m = &job.measurement;
        let cpu = |v: Option<f64>| {
            v.filter(|v| v.is_finite())
                .map(|v| around(v, p.decimals_pct()))
        };
        RunIdentity {
            fio_version: version.map(str::to_string),
            job: job.name.clone(),
            groupid: job.groupid,
            error: job.error,
            read: m.read.as_ref().and_then(|d| direction(d, p)),
            write: m.write.as_ref().and_then(|d| direction(d, p)),
            process: job.process.clone(),
            time: job.timestamp.map(|t| {
                let f = if format == FioFormat::Text {
                    "text"
                } else {
                    "json"
                };
                format!("{f}:{}", t.timestamp())
            }),
            cpu_usr_pct: cpu(m.cpu_usr_pct),
            cpu_sys_pct: cpu(m.cpu_sys_pct),
        }
    }

    /// Whether `other` states the same fio run as this: the same job, group, error and (where
    /// both state it) fio version; the same directions, each with the same runtime in ms, I/O
    /// count and bytes; every latency mean and CPU share both state agreeing; and at least one
    /// of those stated by both, so that figures a job fixes by itself (its size, its count)
    /// are never the whole of the identity.
    pub fn same_run(&self, other: &RunIdentity) -> bool {
        if self.job != other.job || self.groupid != other.groupid || self.error != other.error {
            return false;
        }
        if let (Some(a), Some(b)) = (&self.fio_version, &other.fio_version)
            && a != b
        {
            return false;
        }
        // a process or a date both state the same way: another one is another run
        let kind = |s: &str| s.split([':', '=']).next().unwrap_or_default().to_string();
        for (a, b) in [(&self.process, &other.process), (&self.time, &other.time)] {
            if let (Some(a), Some(b)) = (a, b)
                && kind(a) == kind(b)
                && a != b
            {
                return false;
            }
        }
        if self.read.is_none() && self.write.is_none() {
            return false;
        }
        let mut specific = 0;
        for (a, b) in [(&self.read, &other.read), (&self.write, &other.write)] {
            match (a, b) {
                (None, None) => {}
                (Some(a), Some(b)) => {
                    if a.runtime_ms != b.runtime_ms
                        || !overlap_u(a.ios, b.ios)
                        || !overlap_u(a.bytes, b.bytes)
                    {
                        return false;
                    }
                    for (x, y) in [
                        (a.clat_mean_ns, b.clat_mean_ns),
                        (a.lat_mean_ns, b.lat_mean_ns),
                        (a.slat_mean_ns, b.slat_mean_ns),
                    ] {
                        if let (Some(x), Some(y)) = (x, y) {
                            if !overlap(x, y) {
                                return false;
                            }
                            specific += 1;
                        }
                    }
                }
                _ => return false,
            }
        }
        for (x, y) in [
            (self.cpu_usr_pct, other.cpu_usr_pct),
            (self.cpu_sys_pct, other.cpu_sys_pct),
        ] {
            if let (Some(x), Some(y)) = (x, y) {
                if !overlap(x, y) {
                    return false;
                }
                specific += 1;
            }
        }
        specific > 0
    }
}

impl Precision {
    /// Decimals of a CPU share: text prints `usr=3.19%`, JSON and terse six.
    fn decimals_pct(self) -> i32 {
        if self.format == FioFormat::Text { 2 } else { 6 }
    }
}

/// `v` printed with `decimals` decimals: the exact values it may stand for, with a margin for
/// the float it was read into.
fn around(v: f64, decimals: i32) -> (f64, f64) {
    let half = 0.5 * 10f64.powi(-decimals) + v.abs() * 1e-12;
    (v - half, v + half)
}

fn overlap((a0, a1): (f64, f64), (b0, b1): (f64, f64)) -> bool {
    a0 <= b1 && b0 <= a1
}

fn overlap_u((a0, a1): (u64, u64), (b0, b1): (u64, u64)) -> bool {
    a0 <= b1 && b0 <= a1
}

/// A direction's identity; None where it moved nothing.
fn direction(d: &DirectionStats, p: Precision) -> Option<DirectionIdentity> {
    if d.ios == 0 && d.bytes == 0 {
        return None;
    }
    let r = d.runtime_ms;
    let ios = if p.counted {
        (d.ios, d.ios)
    } else {
        match p.format {
            // an integer IOPS, truncated: ios × 1000 / runtime lies in [iops, iops + 1)
            FioFormat::Terse => (
                (d.iops * r as f64 / 1000.0).floor() as u64,
                ((d.iops + 1.0) * r as f64 / 1000.0).ceil() as u64,
            ),
            // printed to 3–4 significant digits (`27.8k`, `110MiB`: half a unit of the last
            // one is up to 0.5%), or an estimate where fio gave no count
            _ => (
                (d.iops * (1.0 - PRINTED) * r as f64 / 1000.0).floor() as u64,
                ((d.iops * (1.0 + PRINTED) + 1.0) * r as f64 / 1000.0).ceil() as u64,
            ),
        }
    };
    let bytes = match (d.bw_basis, p.format) {
        (BwBasis::Exact, _) => (d.bytes, d.bytes),
        // truncated to KiB (terse, fio ≤ 2.20 JSON)
        (BwBasis::Printed, FioFormat::Terse | FioFormat::Json | FioFormat::JsonPlus) => {
            (d.bytes, d.bytes.saturating_add(1023))
        }
        // 3–4 significant digits
        (BwBasis::Printed, FioFormat::Text) => (
            (d.bytes as f64 * (1.0 - PRINTED)) as u64,
            (d.bytes as f64 * (1.0 + PRINTED)).ceil() as u64 + 1024,
        ),
    };
    let mean = |l: &Option<Latency>| {
        let l = l
            .as_ref()
            .filter(|l| l.mean_ns > 0.0 && l.mean_ns.is_finite())?;
        Some(match p.format {
            // ns to six decimals; old JSON µs to six: a thousandth of a ns either way
            FioFormat::Json | FioFormat::JsonPlus => around(l.mean_ns, 3),
            // µs to six decimals
            FioFormat::Terse => around(l.mean_ns, 3),
            // two decimals in the unit fio chose (ns, µs or ms; fio 3.x chooses µs from 2 µs
            // and ms from 2 ms, fio 2.x µs always): half a hundredth of a µs at least
            FioFormat::Text => {
                let half = (l.mean_ns * 0.005).max(5.0) + 0.005;
                (l.mean_ns - half, l.mean_ns + half)
            }
        })
    };
    Some(DirectionIdentity {
        runtime_ms: r,
        ios,
        bytes,
        clat_mean_ns: mean(&d.clat),
        lat_mean_ns: mean(&d.lat),
        slat_mean_ns: mean(&d.slat),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::job::JobShape;
    use crate::measure::Measurement;

    /// A job of 1000 writes of 4 KiB in 1000 ms, its clat mean and CPU share as given.
    fn job(clat_mean_ns: Option<f64>, usr: Option<f64>) -> FioJob {
        let mut w = DirectionStats::from_counts(1000, 4_096_000, 1000);
        w.clat = clat_mean_ns.map(|m| Latency {
            n: 1000,
            mean_ns: m,
            ..Latency::default()
        });
        let m = Measurement {
            write: Some(w),
            cpu_usr_pct: usr,
            ..Measurement::default()
        };
        let mut j = FioJob::new("w".into(), 0, JobShape::default(), m, 0);
        j.ios_counted = true;
        j
    }

    #[test]
    fn equal_counts_and_runtime_alone_are_not_one_run() {
        let a = RunIdentity::of(&job(None, None), FioFormat::Json, Some("3.33"));
        let b = RunIdentity::of(&job(None, None), FioFormat::Terse, Some("3.33"));
        assert!(!a.same_run(&b));
        let a = RunIdentity::of(&job(Some(1234.5678), None), FioFormat::Json, Some("3.33"));
        let b = RunIdentity::of(&job(Some(1234.568), None), FioFormat::Terse, Some("3.33"));
        assert!(a.same_run(&b));
        // the same figures with another mean, another version, another process: another run
        let c = RunIdentity::of(&job(Some(1234.58), None), FioFormat::Terse, Some("3.33"));
        assert!(!a.same_run(&c));
        let d = RunIdentity::of(&job(Some(1234.568), None), FioFormat::Terse, Some("3.36"));
        assert!(!a.same_run(&d));
        let (mut x, mut y) = (job(None, Some(3.19)), job(None, Some(3.19)));
        x.process = Some("pid=1".into());
        y.process = Some("pid=2".into());
        let (x, y) = (
            RunIdentity::of(&x, FioFormat::Text, None),
            RunIdentity::of(&y, FioFormat::Text, None),
        );
        assert!(!x.same_run(&y));
    }

    #[test]
    fn printed_figures_match_the_exact_ones_they_round() {
        // text prints a CPU share to two decimals
        let a = RunIdentity::of(&job(None, Some(3.190429)), FioFormat::Json, None);
        let b = RunIdentity::of(&job(None, Some(3.19)), FioFormat::Text, None);
        let c = RunIdentity::of(&job(None, Some(3.20)), FioFormat::Text, None);
        assert!(a.same_run(&b));
        assert!(!a.same_run(&c));
    }
}
