//! When `iopscheck run --sustained` has measured what the disk keeps up (docs/sustained.md).
//!
//! The run reads the disk's own series as it goes (I/Os completed per 500 ms, from
//! /proc/diskstats) and stops when both hold:
//!
//! 1. **The burst is spent**: the series shows a step down that is burst credits running out,
//!    as `changepoint::analyse` judges a finished run's (after level under 0.8 × before, flat,
//!    the disk busy, the I/Os of the same size). A burst is as flat as a baseline, so a steady
//!    rate alone says nothing until the step: without one, the run goes on to its budget.
//! 2. **Steady after it**: over the last [`WINDOW_MS`] after the step, the least-squares
//!    line of the series moves by at most [`SLOPE`] of its mean across the window (fio's
//!    `ss=iops_slope:10%` over `ss_dur=10s`, on the disk's I/Os rather than the
//!    application's).
//!
//! A run that reaches its budget is judged at the end: steady over its last window (no step,
//! or steady after one), or not, and then the level it sustains is not known.

use super::changepoint::{self, Input, Step};

/// The window a steady state is judged over.
pub const WINDOW_MS: u32 = 10_000;
/// How far the window's least-squares line may move across it, as a share of its mean.
pub const SLOPE: f64 = 0.10;

/// Where a `--sustained` run stands.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum State {
    /// No step yet: the disk may still be spending credits.
    NoStep,
    /// A step, and not yet a steady window after it: seconds of window still to run.
    Settling { step: Step, left_s: f64 },
    /// A step, and the window after it held steady at `level` I/Os a second.
    Steady { step: Step, level: f64 },
}

/// The disk's series so far: I/Os, busy ms and KiB per interval.
#[derive(Debug, Clone, Default)]
pub struct Watched {
    pub interval_ms: u32,
    pub ios: Vec<f64>,
    pub busy_ms: Vec<f64>,
    pub kib: Vec<f64>,
}

impl Watched {
    fn window(&self) -> usize {
        WINDOW_MS.div_ceil(self.interval_ms.max(1)) as usize
    }

    /// Where the run stands after the intervals so far.
    pub fn state(&self, buffered: bool) -> State {
        let found = changepoint::analyse(&Input {
            counts: &self.ios,
            interval_ms: self.interval_ms,
            busy_ms: Some(&self.busy_ms),
            kib: Some(&self.kib),
            device: true,
            buffered,
        });
        let Some(step) = found.exhausted() else {
            return State::NoStep;
        };
        let per_s = 1000.0 / self.interval_ms.max(1) as f64;
        let from = ((step.at_s * per_s).ceil() as usize + 1).min(self.ios.len());
        let after = &self.ios[from..];
        let w = self.window();
        if after.len() < w {
            return State::Settling {
                step,
                left_s: (w - after.len()) as f64 / per_s,
            };
        }
        match level(&after[after.len() - w..]) {
            Some(l) => State::Steady {
                step,
                level: l * per_s,
            },
            None => State::Settling { step, left_s: 0.0 },
        }
    }

    /// The last window's level in I/Os a second when it held steady, whatever came before
    /// (the judgement at the budget's end).
    pub fn steady_at_end(&self) -> Option<f64> {
        let w = self.window();
        let per_s = 1000.0 / self.interval_ms.max(1) as f64;
        (self.ios.len() >= w)
            .then(|| level(&self.ios[self.ios.len() - w..]))
            .flatten()
            .map(|l| l * per_s)
    }

    /// The mean I/Os a second over the last `secs` seconds.
    pub fn recent(&self, secs: f64) -> f64 {
        let per_s = 1000.0 / self.interval_ms.max(1) as f64;
        let n = ((secs * per_s) as usize).clamp(1, self.ios.len().max(1));
        let tail = &self.ios[self.ios.len().saturating_sub(n)..];
        tail.iter().sum::<f64>() / tail.len().max(1) as f64 * per_s
    }
}

/// The mean of `x` when its least-squares line moves by at most SLOPE of it across `x`.
fn level(x: &[f64]) -> Option<f64> {
    let n = x.len() as f64;
    if x.len() < 2 {
        return None;
    }
    let mean = x.iter().sum::<f64>() / n;
    if mean <= 0.0 {
        return None;
    }
    let tm = (n - 1.0) / 2.0;
    let (mut sxy, mut sxx) = (0.0, 0.0);
    for (i, &v) in x.iter().enumerate() {
        let t = i as f64 - tm;
        sxy += t * (v - mean);
        sxx += t * t;
    }
    let slope = sxy / sxx;
    (slope.abs() * (n - 1.0) <= SLOPE * mean).then_some(mean)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A token bucket's series at 500 ms: `burst` I/Os a second for `empty_s`, then `base`,
    /// for `secs`, with the disk busy throughout and 4 KiB I/Os.
    fn watched(burst: f64, base: f64, empty_s: f64, secs: f64) -> Watched {
        let n = (secs * 2.0) as usize;
        let ios: Vec<f64> = (0..n)
            .map(|i| {
                let (t0, t1) = (i as f64 * 0.5, (i + 1) as f64 * 0.5);
                let b = (empty_s.min(t1) - t0).clamp(0.0, 0.5);
                let wobble = [0.0, 0.02, -0.02, 0.01, -0.01][i % 5];
                ((burst * b + base * (0.5 - b)) * (1.0 + wobble)).round()
            })
            .collect();
        Watched {
            interval_ms: 500,
            busy_ms: vec![500.0; n],
            kib: ios.iter().map(|v| v * 4.0).collect(),
            ios,
        }
    }

    #[test]
    fn a_burst_is_not_a_steady_state_however_flat() {
        assert_eq!(
            watched(1000.0, 250.0, 60.0, 30.0).state(false),
            State::NoStep
        );
    }

    #[test]
    fn after_the_step_the_run_settles_for_a_window_then_is_steady_at_the_baseline() {
        let w = watched(1000.0, 250.0, 3.0, 8.0);
        match w.state(false) {
            State::Settling { left_s, .. } => assert!(left_s > 4.0 && left_s <= 10.0, "{left_s}"),
            s => panic!("{s:?}"),
        }
        let w = watched(1000.0, 250.0, 3.0, 15.0);
        match w.state(false) {
            State::Steady { step, level } => {
                assert!((level - 250.0).abs() < 10.0, "{level}");
                assert!((step.at_s - 3.0).abs() < 0.5, "{step:?}");
            }
            s => panic!("{s:?}"),
        }
    }

    #[test]
    fn a_rate_still_falling_is_not_steady() {
        // Falls from 400 to 200 over the last 10 s.
        let ios: Vec<f64> = (0..20).map(|i| 200.0 - 5.0 * i as f64).collect();
        assert_eq!(level(&ios), None);
        let flat: Vec<f64> = (0..20).map(|i| 125.0 + (i % 2) as f64 * 4.0).collect();
        assert!(level(&flat).is_some());
    }
}
