//! IOPS over time inside one run, as fio's `iops`/`bw` samples (default 500 ms averaging),
//! and the disks' own account of the run (fio's `Disk stats`).

use serde::{Deserialize, Serialize};

/// fio's default averaging interval (`iopsavgtime`/`bwavgtime`), in ms.
pub const INTERVAL_MS: u32 = 500;

/// I/Os completed in each interval of the timed loop, per direction. The last interval ends
/// when the last I/O completed (after the drain), so it is usually shorter than the others;
/// the end fsync follows it as its own phase.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Series {
    pub interval_ms: u32,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub write: Vec<u32>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub read: Vec<u32>,
    /// Length of the last interval, ms.
    pub last_ms: u32,
    /// The end fsync, after the last interval, ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end_fsync_ms: Option<f64>,
}

impl Series {
    /// The counts of one direction ("write" or "read").
    pub fn counts(&self, dir: &str) -> &[u32] {
        if dir == "read" {
            &self.read
        } else {
            &self.write
        }
    }

    /// I/Os per second in each interval, the last one over its own length.
    pub fn rates(&self, dir: &str) -> Vec<f64> {
        let c = self.counts(dir);
        c.iter()
            .enumerate()
            .map(|(i, &n)| {
                let ms = if i + 1 == c.len() {
                    self.last_ms
                } else {
                    self.interval_ms
                };
                if ms == 0 {
                    0.0
                } else {
                    n as f64 * 1000.0 / ms as f64
                }
            })
            .collect()
    }

    /// The direction the series is about: writes when there are any.
    pub fn main_dir(&self) -> &'static str {
        if self.write.is_empty() && !self.read.is_empty() {
            "read"
        } else {
            "write"
        }
    }

    /// fio's sample statistics of one direction: full intervals only, as fio samples at
    /// each tick.
    pub fn samples(&self, dir: &str) -> Option<IopsSamples> {
        let c = self.counts(dir);
        let full = if self.last_ms >= self.interval_ms {
            c.len()
        } else {
            c.len().saturating_sub(1)
        };
        let rates: Vec<f64> = c[..full]
            .iter()
            .map(|&n| n as f64 * 1000.0 / self.interval_ms.max(1) as f64)
            .collect();
        IopsSamples::from_rates(&rates)
    }
}

/// fio's `iops : min=946, max=56850, avg=10411.00, stdev=13678.61, samples=120`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct IopsSamples {
    pub min: f64,
    pub max: f64,
    pub mean: f64,
    pub stdev: f64,
    pub samples: u64,
}

impl IopsSamples {
    /// Statistics of per-interval rates (stdev over n − 1, as fio).
    pub fn from_rates(rates: &[f64]) -> Option<IopsSamples> {
        if rates.is_empty() {
            return None;
        }
        let n = rates.len() as f64;
        let mean = rates.iter().sum::<f64>() / n;
        let stdev = if rates.len() > 1 {
            (rates.iter().map(|r| (r - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt()
        } else {
            0.0
        };
        Some(IopsSamples {
            min: rates.iter().copied().fold(f64::INFINITY, f64::min),
            max: rates.iter().copied().fold(f64::NEG_INFINITY, f64::max),
            mean,
            stdev,
            samples: rates.len() as u64,
        })
    }

    /// As fio's text prints it.
    pub fn fio_line(&self) -> String {
        format!(
            "iops : min={:.0}, max={:.0}, avg={:.2}, stdev={:.2}, samples={}",
            self.min, self.max, self.mean, self.stdev, self.samples
        )
    }
}

/// One disk's account of a run, as fio's `Disk stats (read/write)` line: deltas of
/// /proc/diskstats over the run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DiskStat {
    pub name: String,
    pub read_ios: u64,
    pub write_ios: u64,
    pub read_merges: u64,
    pub write_merges: u64,
    pub read_ticks_ms: u64,
    pub write_ticks_ms: u64,
    pub in_queue_ms: u64,
    /// Share of the run's wall time the disk was busy, %.
    pub util_pct: f64,
}

impl DiskStat {
    /// As fio prints it: `sda: ios=453/460952, merge=0/1823, ticks=…/…, in_queue=…, util=92.87%`.
    pub fn fio_line(&self) -> String {
        format!(
            "{}: ios={}/{}, merge={}/{}, ticks={}/{}, in_queue={}, util={:.2}%",
            self.name,
            self.read_ios,
            self.write_ios,
            self.read_merges,
            self.write_merges,
            self.read_ticks_ms,
            self.write_ticks_ms,
            self.in_queue_ms,
            self.util_pct
        )
    }
}

/// A step-wise fall inside a run: the split of the full-interval rates into a before and an
/// after that explains them best, when the after is at most half the before.
/// Returns (seconds into the run, rate before, rate after).
pub fn step_down(s: &Series, dir: &str) -> Option<(f64, f64, f64)> {
    let c = s.counts(dir);
    let full = if s.last_ms >= s.interval_ms {
        c.len()
    } else {
        c.len().saturating_sub(1)
    };
    let r: Vec<f64> = c[..full].iter().map(|&n| n as f64).collect();
    // At least 2 s on either side of the step.
    let min_side = (2000 / s.interval_ms.max(1)).max(2) as usize;
    if r.len() < 2 * min_side {
        return None;
    }
    let total: f64 = r.iter().sum();
    let sq: f64 = r.iter().map(|x| x * x).sum();
    let mut best: Option<(usize, f64)> = None;
    let mut left = 0.0;
    let mut left_sq = 0.0;
    for k in 1..r.len() {
        left += r[k - 1];
        left_sq += r[k - 1] * r[k - 1];
        if k < min_side || r.len() - k < min_side {
            continue;
        }
        let (nl, nr) = (k as f64, (r.len() - k) as f64);
        let right = total - left;
        let sse = (left_sq - left * left / nl) + ((sq - left_sq) - right * right / nr);
        if best.is_none_or(|(_, b)| sse < b) {
            best = Some((k, sse));
        }
    }
    let (k, _) = best?;
    let per_s = 1000.0 / s.interval_ms.max(1) as f64;
    let before = r[..k].iter().sum::<f64>() / k as f64 * per_s;
    let after = r[k..].iter().sum::<f64>() / (r.len() - k) as f64 * per_s;
    (before > 0.0 && after <= before * 0.5).then_some((
        k as f64 * s.interval_ms as f64 / 1000.0,
        before,
        after,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn series(write: Vec<u32>, last_ms: u32) -> Series {
        Series {
            interval_ms: 500,
            write,
            last_ms,
            ..Series::default()
        }
    }

    #[test]
    fn samples_use_full_intervals_only() {
        let s = series(vec![100, 300, 7], 100);
        let x = s.samples("write").unwrap();
        assert_eq!(x.samples, 2);
        assert_eq!((x.min, x.max, x.mean), (200.0, 600.0, 400.0));
        assert!((x.stdev - 282.842_712).abs() < 1e-3);
        assert_eq!(s.rates("write"), vec![200.0, 600.0, 70.0]);
    }

    #[test]
    fn a_step_down_is_found_where_it_happens_and_a_flat_run_has_none() {
        let mut c = vec![1000; 10];
        c.extend(vec![200; 10]);
        let (at, before, after) = step_down(&series(c, 500), "write").unwrap();
        assert_eq!(at, 5.0);
        assert_eq!((before, after), (2000.0, 400.0));
        let flat: Vec<u32> = (0..20).map(|i| 1000 + (i % 3) * 50).collect();
        assert!(step_down(&series(flat, 500), "write").is_none());
        // A rise is not a fall.
        let mut up = vec![200; 10];
        up.extend(vec![1000; 10]);
        assert!(step_down(&series(up, 500), "write").is_none());
    }
}
