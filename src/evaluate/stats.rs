//! Descriptive statistics of a metric across runs: mean, median, spread, the 95% interval of
//! the mean, Student's t and the modified z-scores outliers are found by.

use serde::Serialize;

use crate::policy::Aggregate;

/// Descriptive statistics of one metric across runs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Stats {
    pub n: usize,
    pub mean: f64,
    pub median: f64,
    pub min: f64,
    pub max: f64,
    /// Sample standard deviation (n − 1); 0 for a single run.
    pub stdev: f64,
    /// stdev / mean; 0 when the mean is 0.
    pub cv: f64,
    /// 95% confidence interval of the (arithmetic) mean, by [`ci95_of_mean`]; equal to the
    /// mean for one run.
    pub ci95_low: f64,
    pub ci95_high: f64,
}

impl Stats {
    pub fn of(values: &[f64]) -> Option<Stats> {
        let v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
        if v.is_empty() {
            return None;
        }
        let n = v.len();
        let mean = v.iter().sum::<f64>() / n as f64;
        let mut sorted = v.clone();
        sorted.sort_by(f64::total_cmp);
        let median = median_sorted(&sorted);
        let stdev = if n > 1 {
            (v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64).sqrt()
        } else {
            0.0
        };
        let (ci95_low, ci95_high) = ci95_of_mean(&v, mean, stdev);
        Some(Stats {
            n,
            mean,
            median,
            min: sorted[0],
            max: sorted[n - 1],
            stdev,
            cv: if mean != 0.0 { stdev / mean.abs() } else { 0.0 },
            ci95_low,
            ci95_high,
        })
    }

    pub fn aggregate(&self, a: Aggregate) -> f64 {
        match a {
            Aggregate::Mean => self.mean,
            Aggregate::Median => self.median,
        }
    }
}

/// The 95% interval of the arithmetic mean of positive, right-skewed figures (IOPS, MB/s,
/// latencies): the modified Cox method for lognormal data (Land 1972; Zhou & Gao 1997;
/// Olsson 2005), with ȳ and s² the mean and variance of ln x:
///
///   exp( ȳ + s²/2  ±  t(0.975, n−1) · √(s²/n + s⁴/(2(n−1))) )
///
/// It is centred on the mean the verdict uses, never goes below zero and widens upwards, as
/// the spread of such figures does. Where a figure is 0 (a latency too short to measure) the
/// logarithm does not exist: the plain Student-t interval is used, cut at 0, since no metric
/// can be negative.
pub fn ci95_of_mean(v: &[f64], mean: f64, stdev: f64) -> (f64, f64) {
    let n = v.len();
    if n < 2 {
        return (mean, mean);
    }
    let t = t_975(n - 1);
    if v.iter().all(|&x| x > 0.0) {
        let logs: Vec<f64> = v.iter().map(|x| x.ln()).collect();
        let ly = logs.iter().sum::<f64>() / n as f64;
        let s2 = logs.iter().map(|y| (y - ly).powi(2)).sum::<f64>() / (n - 1) as f64;
        if stdev == 0.0 {
            return (mean, mean);
        }
        let half = t * (s2 / n as f64 + s2 * s2 / (2.0 * (n - 1) as f64)).sqrt();
        let centre = ly + s2 / 2.0;
        return ((centre - half).exp(), (centre + half).exp());
    }
    let half = t * stdev / (n as f64).sqrt();
    ((mean - half).max(0.0), mean + half)
}

fn median_sorted(s: &[f64]) -> f64 {
    let n = s.len();
    if n % 2 == 1 {
        s[n / 2]
    } else {
        (s[n / 2 - 1] + s[n / 2]) / 2.0
    }
}

/// The 97.5th percentile of Student's t distribution with `df` degrees of freedom: the
/// multiplier of a two-sided 95% interval. Exact table to 30, then the Cornish–Fisher series.
pub fn t_975(df: usize) -> f64 {
    const T: [f64; 30] = [
        12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
        2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
        2.052, 2.048, 2.045, 2.042,
    ];
    if df == 0 {
        return f64::INFINITY;
    }
    if df <= 30 {
        return T[df - 1];
    }
    let z: f64 = 1.959_963_985;
    let v = df as f64;
    z + (z.powi(3) + z) / (4.0 * v)
        + (5.0 * z.powi(5) + 16.0 * z.powi(3) + 3.0 * z) / (96.0 * v * v)
}

/// Modified z-scores, 0.6745 × (x − median) / MAD (Iglewicz & Hoaglin, "How to Detect and
/// Handle Outliers", 1993). When half the runs are identical the MAD is 0; the usual fallback
/// then scales by the mean absolute deviation, (x − median) / (1.253314 × MeanAD).
pub fn modified_z_scores(v: &[f64]) -> Vec<f64> {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    let med = median_sorted(&s);
    let mut dev: Vec<f64> = v.iter().map(|x| (x - med).abs()).collect();
    dev.sort_by(f64::total_cmp);
    let mad = median_sorted(&dev);
    if mad > 0.0 {
        return v.iter().map(|x| 0.6745 * (x - med) / mad).collect();
    }
    let mean_ad = dev.iter().sum::<f64>() / dev.len() as f64;
    if mean_ad == 0.0 {
        return vec![0.0; v.len()];
    }
    v.iter()
        .map(|x| (x - med) / (1.253_314 * mean_ad))
        .collect()
}
