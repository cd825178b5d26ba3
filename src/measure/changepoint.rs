//! A step inside a run: where a disk's rate fell to a lower level and stayed there, and whether
//! that is a disk whose burst credits ran out (docs/sustained.md states the method).
//!
//! The series is I/Os completed per interval (500 ms). One changepoint, piecewise constant:
//! every split of the series into a before and an after, each at least [`MIN_SIDE_MS`] long,
//! is scored by the squared error it leaves with each side at its own mean, and the best split
//! is kept when the squared error it removes exceeds the penalty `3 σ² ln n` (σ² the noise
//! variance, estimated from the median absolute difference of neighbouring intervals, which a
//! single step does not move; n the number of intervals). That is binary segmentation
//! stopped after one split, with a BIC-like penalty made a little stricter for the serial
//! correlation of real disks' series.
//!
//! The step is burst credits running out when all of these hold:
//! - the after level is under [`FALL`] × the before level;
//! - the after part is flat: its two halves' means are within [`FLAT`] of each other;
//! - the device was kept busy after the step (busy ≥ [`BUSY`] of the time, where the series
//!   says): requests waited on the disk, so the disk set the pace, not the supply of work
//!   (writeback running out of dirty pages, an application slowing down);
//! - the I/Os stayed the same size (within [`SIZE`]): merged writeback makes fewer, larger
//!   I/Os without the disk slowing;
//! - it is the disk's own series, or the application's with direct I/O: with buffered I/O the
//!   application's rate falls where dirty pages reach the kernel's throttle, whatever the disk.
//!
//! The end fsync is not in the series given here (the caller cuts the series where it began):
//! a flush of the page cache is another load, and its boundary is not a step of the disk.

/// Neither side of a step is shorter than this.
pub const MIN_SIDE_MS: u32 = 2000;
/// The after level must be under this share of the before level.
pub const FALL: f64 = 0.8;
/// The after part's halves may differ by this share of the after level.
pub const FLAT: f64 = 0.15;
/// The device must have been busy this share of the time after the step.
pub const BUSY: f64 = 0.9;
/// The I/Os' mean size after the step may differ from before by this factor at most.
pub const SIZE: f64 = 1.5;
/// The penalty's multiple of σ² ln n.
pub const PENALTY: f64 = 3.0;

/// One run's series as the analysis reads it.
#[derive(Debug, Clone, Default)]
pub struct Input<'a> {
    /// I/Os completed in each full interval before the end fsync began.
    pub counts: &'a [f64],
    pub interval_ms: u32,
    /// The device's busy time in each interval, ms (the disk's own series only).
    pub busy_ms: Option<&'a [f64]>,
    /// KiB moved in each interval (the disk's own series only).
    pub kib: Option<&'a [f64]>,
    /// The series is the disk's own (/proc/diskstats), not the application's.
    pub device: bool,
    /// The job wrote and read through the page cache.
    pub buffered: bool,
}

/// The best split of a series into two levels.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Step {
    /// Seconds from the start of the series to the step.
    pub at_s: f64,
    /// I/Os per second before and after.
    pub before: f64,
    pub after: f64,
}

impl Step {
    /// The credits spent above the after level before the step, in I/Os: (before − after) ×
    /// time to the step. For a token bucket that refills at the baseline rate while it is
    /// spent, that is the bucket's size.
    pub fn bucket(&self) -> f64 {
        (self.before - self.after) * self.at_s
    }
}

/// What makes a fall something other than burst credits running out.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Other {
    /// The after level is not clearly lower (at least FALL × before).
    Small,
    /// The after part is not flat: the halves' means, I/Os per second.
    NotFlat(f64, f64),
    /// The device was idle part of the time after the step: busy share (0–1).
    NotBusy(f64),
    /// The I/Os changed size: mean KiB per I/O before and after.
    IoSize(f64, f64),
    /// The application's series of a buffered job: the page cache stands between it and the
    /// disk.
    PageCache,
}

/// What the analysis found in one series.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Finding {
    /// Too few intervals for a step with MIN_SIDE_MS on either side.
    TooShort,
    /// No change passes the penalty, or the best split is a rise.
    NoStep,
    /// A fall that something other than the disk's credits explains.
    Other(Step, Other),
    /// The disk's rate fell to a flat lower level: burst credits ran out.
    Exhausted(Step),
}

impl Finding {
    pub fn exhausted(&self) -> Option<Step> {
        match self {
            Finding::Exhausted(s) => Some(*s),
            _ => None,
        }
    }
}

/// Finds the step in `input` and judges it.
pub fn analyse(input: &Input<'_>) -> Finding {
    let x = input.counts;
    let per_s = 1000.0 / input.interval_ms.max(1) as f64;
    let min_side = MIN_SIDE_MS.div_ceil(input.interval_ms.max(1)).max(2) as usize;
    if x.len() < 2 * min_side {
        return Finding::TooShort;
    }
    let Some((k, j)) = best_split(x, min_side) else {
        return Finding::NoStep;
    };
    let before = mean(&x[..k]);
    let after = mean(&x[j..]);
    if after >= before {
        return Finding::NoStep;
    }
    let step = Step {
        at_s: crossing(x, k, j, before, after) / per_s,
        before: before * per_s,
        after: after * per_s,
    };
    if after >= FALL * before {
        return Finding::Other(step, Other::Small);
    }
    let tail = &x[j..];
    let (h1, h2) = (mean(&tail[..tail.len() / 2]), mean(&tail[tail.len() / 2..]));
    if (h1 - h2).abs() > FLAT * after {
        return Finding::Other(step, Other::NotFlat(h1 * per_s, h2 * per_s));
    }
    if input.device {
        if let Some(busy) = input.busy_ms {
            let share =
                busy[j..].iter().sum::<f64>() / ((x.len() - j) as f64 * input.interval_ms as f64);
            if share < BUSY {
                return Finding::Other(step, Other::NotBusy(share.min(1.0)));
            }
        }
        if let Some(kib) = input.kib {
            let size = |r: std::ops::Range<usize>| {
                let ios: f64 = x[r.clone()].iter().sum();
                (ios > 0.0).then(|| kib[r].iter().sum::<f64>() / ios)
            };
            if let (Some(a), Some(b)) = (size(0..k), size(j..x.len()))
                && (b / a > SIZE || a / b > SIZE)
            {
                return Finding::Other(step, Other::IoSize(a, b));
            }
        }
    } else if input.buffered {
        return Finding::Other(step, Other::PageCache);
    }
    Finding::Exhausted(step)
}

/// The step of one run: on the disk's own series where it was sampled, else on the
/// application's; both cut where the end fsync began (only whole intervals before it).
/// `buffered`: the job went through the page cache.
pub fn of_run(m: &super::Measurement, buffered: bool) -> Finding {
    let Some(app) = &m.series else {
        return Finding::TooShort;
    };
    let counts = |c: &[u32]| c.iter().map(|&n| n as f64).collect::<Vec<f64>>();
    let dir = app.main_dir();
    let app_counts = app.counts(dir);
    // The application's series ends where the drain did, which is where the fsync began.
    let timed_ms =
        (app_counts.len().saturating_sub(1)) as u64 * app.interval_ms as u64 + app.last_ms as u64;
    let whole = |interval_ms: u32| (timed_ms / interval_ms.max(1) as u64) as usize;
    match &m.device {
        Some(d) => {
            let n = whole(d.interval_ms).min(d.write.len());
            let ios = d.ios();
            let busy = counts(&d.busy_ms[..n]);
            let kib = counts(&d.kib[..n]);
            analyse(&Input {
                counts: &ios[..n],
                interval_ms: d.interval_ms,
                busy_ms: Some(&busy),
                kib: Some(&kib),
                device: true,
                buffered,
            })
        }
        None => {
            let n = whole(app.interval_ms).min(app_counts.len());
            let x = counts(&app_counts[..n]);
            analyse(&Input {
                counts: &x,
                interval_ms: app.interval_ms,
                buffered,
                ..Input::default()
            })
        }
    }
}

/// A run whose burst credits ran out, and what its throughput kept up after the step. A
/// record keeps it (`burst`), so that a report judges the run as the run did.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Sustained {
    pub step: Step,
    /// The step was found in the disk's own series (else the application's, direct I/O).
    pub device: bool,
    /// Per direction (`[read, write]`, [`super::Direction`]'s index): the run's throughput of
    /// that direction after the step ÷ its mean over the run (what fio's figures report).
    /// Every throughput figure of the run (IOPS, MB/s, the formula's IOPS) times this is its
    /// sustained level. None where the run did not move that direction.
    pub ratio: [Option<f64>; 2],
}

/// The sustained level of a run whose burst credits ran out ([`of_run`]), None otherwise.
///
/// On the disk's own series the throughput after the step is in bytes: the KiB the disk
/// moved from the first interval wholly after the step to where the end fsync began, shared
/// between reads and writes as its I/Os were. In bytes, because with buffered I/O the page
/// cache merges and splits the application's I/Os on their way to the disk, and over time an
/// application writes no faster than its disk does. On the application's own series (direct
/// I/O) the I/Os after the step are the run's own.
pub fn sustained(m: &super::Measurement, buffered: bool) -> Option<Sustained> {
    let step = of_run(m, buffered).exhausted()?;
    let app = m.series.as_ref()?;
    let dirs = [&m.read, &m.write];
    let mut ratio = [None, None];
    match &m.device {
        Some(d) => {
            let per_s = 1000.0 / d.interval_ms.max(1) as f64;
            let n = timed_intervals(app, d.interval_ms).min(d.write.len());
            let from = (step.at_s * per_s).ceil() as usize + 1;
            if from >= n {
                return None;
            }
            let sum = |v: &[u32]| v[from..n].iter().map(|&x| x as f64).sum::<f64>();
            let ios = [sum(&d.read), sum(&d.write)];
            let total = ios[0] + ios[1];
            let secs = (n - from) as f64 / per_s;
            for (i, stats) in dirs.iter().enumerate() {
                if let Some(s) = stats.as_ref().filter(|s| s.bw_bytes > 0.0)
                    && total > 0.0
                {
                    let bytes = sum(&d.kib) * 1024.0 * ios[i] / total / secs;
                    ratio[i] = Some(bytes / s.bw_bytes);
                }
            }
        }
        None => {
            let i = match app.main_dir() {
                "read" => 0,
                _ => 1,
            };
            if let Some(s) = dirs[i].as_ref().filter(|s| s.iops > 0.0) {
                ratio[i] = Some(step.after / s.iops);
            }
        }
    }
    Some(Sustained {
        step,
        device: m.device.is_some(),
        ratio,
    })
}

/// Whole intervals of `interval_ms` from the first timed I/O to where the end fsync began.
fn timed_intervals(app: &super::Series, interval_ms: u32) -> usize {
    let c = app.counts(app.main_dir());
    let timed_ms = (c.len().saturating_sub(1)) as u64 * app.interval_ms as u64 + app.last_ms as u64;
    (timed_ms / interval_ms.max(1) as u64) as usize
}

fn mean(x: &[f64]) -> f64 {
    x.iter().sum::<f64>() / x.len().max(1) as f64
}

/// The split that removes the most squared error, when it removes more than the penalty: the
/// before part is x[..k] and the after part x[j..], where j is k, k + 1 or k + 2. The
/// intervals between are the ones the step fell in, part before and part after, and belong
/// to neither level: a step rarely falls on an interval's edge, and a sampler woken late (a
/// loaded machine) spreads it over two.
fn best_split(x: &[f64], min_side: usize) -> Option<(usize, usize)> {
    let n = x.len();
    // Prefix sums: the squared error of x[a..b] around its mean in O(1).
    let mut s = vec![0.0; n + 1];
    let mut q = vec![0.0; n + 1];
    for i in 0..n {
        s[i + 1] = s[i] + x[i];
        q[i + 1] = q[i] + x[i] * x[i];
    }
    let sse = |a: usize, b: usize| {
        let (sum, m) = (s[b] - s[a], (b - a) as f64);
        (q[b] - q[a]) - sum * sum / m
    };
    let mut best: Option<(usize, usize, f64)> = None;
    for k in min_side..n {
        for j in [k, k + 1, k + 2] {
            if n < j + min_side {
                continue;
            }
            let e = sse(0, k) + sse(j, n);
            if best.is_none_or(|(_, _, b)| e < b) {
                best = Some((k, j, e));
            }
        }
    }
    let (k, j, e) = best?;
    let gain = sse(0, n) - e;
    (gain > 0.0 && gain > PENALTY * noise_variance(x) * (n as f64).ln()).then_some((k, j))
}

/// σ² of the noise around the levels: from the median absolute difference of neighbouring
/// intervals (MAD / 0.6745 estimates σ·√2 for independent normal noise), which one step
/// changes by one difference only.
fn noise_variance(x: &[f64]) -> f64 {
    let mut d: Vec<f64> = x.windows(2).map(|w| (w[1] - w[0]).abs()).collect();
    d.sort_by(f64::total_cmp);
    let med = if d.is_empty() {
        0.0
    } else if d.len() % 2 == 1 {
        d[d.len() / 2]
    } else {
        (d[d.len() / 2 - 1] + d[d.len() / 2]) / 2.0
    };
    let sigma = med / 0.6745 / std::f64::consts::SQRT_2;
    sigma * sigma
}

/// When the step happened, in intervals from the start: each interval near the split counts
/// as the share of it spent at the before level (where its count lies between the two
/// levels), those further before as wholly before.
fn crossing(x: &[f64], k: usize, j: usize, before: f64, after: f64) -> f64 {
    let lo = k.saturating_sub(2);
    let hi = (j + 2).min(x.len());
    let share = |v: f64| ((v - after) / (before - after)).clamp(0.0, 1.0);
    lo as f64 + x[lo..hi].iter().map(|&v| share(v)).sum::<f64>()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn device<'a>(counts: &'a [f64], busy: &'a [f64]) -> Input<'a> {
        Input {
            counts,
            interval_ms: 500,
            busy_ms: Some(busy),
            kib: None,
            device: true,
            buffered: false,
        }
    }

    /// A token bucket's series: `burst` I/Os a second until `empty_s`, `base` after, each
    /// interval's count rounded, with a deterministic ±`jitter` wobble.
    fn bucket_series(burst: f64, base: f64, empty_s: f64, secs: f64, jitter: f64) -> Vec<f64> {
        let n = (secs * 2.0) as usize;
        (0..n)
            .map(|i| {
                let (t0, t1) = (i as f64 * 0.5, (i + 1) as f64 * 0.5);
                let at_burst = (empty_s.min(t1) - t0).clamp(0.0, 0.5);
                let ios = burst * at_burst + base * (0.5 - at_burst);
                let wobble = [0.0, 1.0, -1.0, 0.5, -0.5][i % 5] * jitter;
                (ios * (1.0 + wobble)).round()
            })
            .collect()
    }

    #[test]
    fn a_bucket_running_dry_is_found_where_it_did_at_its_levels_and_size() {
        for (empty_s, jitter) in [(3.0, 0.0), (3.3, 0.05), (2.2, 0.08), (4.7, 0.03)] {
            let x = bucket_series(2000.0, 400.0, empty_s, 7.0, jitter);
            let busy = vec![500.0; x.len()];
            let s = analyse(&device(&x, &busy))
                .exhausted()
                .unwrap_or_else(|| panic!("{empty_s} {jitter}: {x:?}"));
            assert!((s.at_s - empty_s).abs() < 0.15, "{empty_s}: {s:?}");
            assert!((s.after - 400.0).abs() < 0.05 * 400.0, "{s:?}");
            assert!((s.before - 2000.0).abs() < 0.05 * 2000.0, "{s:?}");
            let bucket = 1600.0 * empty_s;
            assert!((s.bucket() - bucket).abs() < 0.1 * bucket, "{s:?}");
        }
    }

    #[test]
    fn a_dip_before_the_step_and_a_step_spread_over_two_intervals_still_find_it() {
        // The emulated disk (burst 1,000, baseline 250) on a loaded machine: a dip at 1.5 s,
        // and the step spread over the intervals at 3 and 3.5 s.
        let x = [
            491.0, 497.0, 421.0, 292.0, 431.0, 433.0, 502.0, 182.0, 125.0, 125.0, 124.0, 124.0,
        ];
        let busy = [500.0; 12];
        let s = analyse(&device(&x, &busy)).exhausted().expect("the step");
        assert!((s.after - 250.0).abs() < 5.0, "{s:?}");
        assert!((3.3..3.9).contains(&s.at_s), "{s:?}");
    }

    #[test]
    fn a_flat_or_noisy_series_has_no_step_and_a_rise_is_not_a_fall() {
        let flat: Vec<f64> = (0..20)
            .map(|i| 1000.0 + [0.0, 30.0, -30.0][i % 3])
            .collect();
        let busy = vec![500.0; 20];
        assert_eq!(analyse(&device(&flat, &busy)), Finding::NoStep);
        // ±25% noise around one level: whatever split is best, it is not a clear fall.
        let noisy: Vec<f64> = (0..24)
            .map(|i| 1000.0 * (1.0 + [0.25, -0.2, 0.1, -0.25, 0.2, -0.1, 0.0][i % 7]))
            .collect();
        let busy = vec![500.0; 24];
        assert!(analyse(&device(&noisy, &busy)).exhausted().is_none());
        let mut up = vec![200.0; 10];
        up.extend([1000.0; 10]);
        assert_eq!(analyse(&device(&up, &busy[..20])), Finding::NoStep);
    }

    #[test]
    fn a_fall_is_burst_only_when_large_flat_busy_and_of_the_same_io() {
        let busy = vec![500.0; 16];
        // Only 15% lower: not a clear fall.
        let mut x = vec![1000.0; 8];
        x.extend([850.0; 8]);
        assert!(matches!(
            analyse(&device(&x, &busy)),
            Finding::Other(_, Other::Small)
        ));
        // Still falling after the step: no steady level.
        let mut x = vec![1000.0; 8];
        x.extend([600.0, 550.0, 500.0, 450.0, 300.0, 250.0, 200.0, 150.0]);
        assert!(matches!(
            analyse(&device(&x, &busy)),
            Finding::Other(_, Other::NotFlat(..))
        ));
        // Lower and flat, but the device idled half the time after: less work arrived.
        let mut x = vec![1000.0; 8];
        x.extend([300.0; 8]);
        let mut half = vec![500.0; 8];
        half.extend([250.0; 8]);
        assert!(matches!(
            analyse(&device(&x, &half)),
            Finding::Other(_, Other::NotBusy(b)) if (b - 0.5).abs() < 1e-9
        ));
        // Busy all along: the disk's credits.
        assert!(analyse(&device(&x, &busy)).exhausted().is_some());
        // Fewer I/Os of four times the size: merged writeback, not a slower disk.
        let mut kib = vec![4000.0; 8];
        kib.extend([4800.0; 8]);
        let mut inp = device(&x, &busy);
        inp.kib = Some(&kib);
        assert!(matches!(
            analyse(&inp),
            Finding::Other(_, Other::IoSize(a, b)) if a == 4.0 && b == 16.0
        ));
    }

    #[test]
    fn the_applications_series_of_buffered_io_cannot_tell_the_cache_from_the_disk() {
        let mut x = vec![20000.0; 8];
        x.extend([900.0; 8]);
        let app = |buffered| Input {
            counts: &x,
            interval_ms: 500,
            buffered,
            ..Input::default()
        };
        assert!(matches!(
            analyse(&app(true)),
            Finding::Other(_, Other::PageCache)
        ));
        // Direct I/O: what the application completed, the disk completed.
        let s = analyse(&app(false)).exhausted().unwrap();
        assert_eq!((s.at_s, s.before, s.after), (4.0, 40000.0, 1800.0));
    }

    #[test]
    fn a_series_too_short_for_two_seconds_either_side_is_not_judged() {
        let x = vec![1000.0, 1000.0, 1000.0, 200.0, 200.0, 200.0, 200.0];
        let busy = vec![500.0; 7];
        assert_eq!(analyse(&device(&x, &busy)), Finding::TooShort);
    }
}
