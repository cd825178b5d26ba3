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
    /// The runs are too few for the interval to mean anything ([`Stats::bounded`] is false):
    /// the formats say so instead of printing it.
    pub ci95_too_few: bool,
}

/// Fewer runs than this bound nothing: two runs' 95% interval multiplies their spread by
/// t(0.975, 1) = 12.7 (two runs of 9,000 and 60,000 IOPS gave 7.94 to 494,228,133).
pub const CI_MIN_RUNS: usize = 3;
/// An interval whose top is more than this many times its bottom says nothing either.
pub const CI_MAX_SPAN: f64 = 10.0;

impl Stats {
    pub fn of(values: &[f64]) -> Option<Stats> {
        let v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
        if v.is_empty() {
            return None;
        }
        let n = v.len();
        let mean = v.iter().sum::<f64>() / n as f64;
        // The order statistics without sorting: a year of runs is 100,000 figures a metric.
        let median = median_of(&mut v.clone());
        let min = v.iter().copied().min_by(f64::total_cmp).expect("non-empty");
        let max = v.iter().copied().max_by(f64::total_cmp).expect("non-empty");
        let stdev = if n > 1 {
            (v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64).sqrt()
        } else {
            0.0
        };
        let (ci95_low, ci95_high) = ci95_of_mean(&v, mean, stdev);
        let bounded = n >= CI_MIN_RUNS
            && if ci95_low > 0.0 {
                ci95_high <= CI_MAX_SPAN * ci95_low
            } else {
                // Student's t cut at 0 (a figure of 0): at most twice the mean on top.
                ci95_high <= 2.0 * mean
            };
        Some(Stats {
            ci95_too_few: !bounded,
            n,
            mean,
            median,
            min,
            max,
            stdev,
            cv: if mean != 0.0 { stdev / mean.abs() } else { 0.0 },
            ci95_low,
            ci95_high,
        })
    }

    /// Whether the 95% interval means something: at least [`CI_MIN_RUNS`] runs and a top at
    /// most [`CI_MAX_SPAN`] times the bottom.
    pub fn bounded(&self) -> bool {
        !self.ci95_too_few
    }

    /// Runs (in all) at which the 95% interval of the mean would leave `threshold`, if the
    /// runs to come had the mean and spread of these: the distance to a decision. None where
    /// a figure is 0, the spread is 0, or even 1,000 runs would not do.
    pub fn runs_to_decide(&self, values: &[f64], threshold: f64) -> Option<usize> {
        if values.len() < 2 || values.iter().any(|&x| x.is_nan() || x <= 0.0) || threshold <= 0.0 {
            return None;
        }
        let logs: Vec<f64> = values.iter().map(|x| x.ln()).collect();
        let n = logs.len() as f64;
        let ly = logs.iter().sum::<f64>() / n;
        let s2 = logs.iter().map(|y| (y - ly).powi(2)).sum::<f64>() / (n - 1.0);
        let gap = (ly + s2 / 2.0 - threshold.ln()).abs();
        if s2 == 0.0 || gap == 0.0 {
            return None;
        }
        (self.n.max(2)..=1000).find(|&m| {
            let half = t_975(m - 1) * (s2 / m as f64 + s2 * s2 / (2.0 * (m - 1) as f64)).sqrt();
            half < gap
        })
    }

    pub fn aggregate(&self, a: Aggregate) -> f64 {
        match a {
            Aggregate::Mean => self.mean,
            Aggregate::Median => self.median,
        }
    }
}

/// What [`Stats::of`] takes of a column of finite figures, gathered in passes over figures
/// read again rather than held (`summary`): each sum a left fold in the column's order, as
/// [`Stats::of`] makes it, so the statistics are the same to the bit.
pub(super) struct Sums {
    pub n: usize,
    pub sum: f64,
    pub min: f64,
    pub max: f64,
    pub median: f64,
    /// Σ (x − mean)².
    pub squares: f64,
    /// Where every figure is above 0: Σ ln x and Σ (ln x − ȳ)², ȳ = Σ ln x / n.
    pub logs: Option<(f64, f64)>,
}

impl Stats {
    /// The statistics [`Stats::of`] gives of the column `s` was gathered from.
    pub(super) fn of_sums(s: &Sums) -> Stats {
        let n = s.n;
        let mean = s.sum / n as f64;
        let stdev = if n > 1 {
            (s.squares / (n - 1) as f64).sqrt()
        } else {
            0.0
        };
        let (ci95_low, ci95_high) = ci95_of_sums(n, mean, stdev, s.logs);
        let bounded = n >= CI_MIN_RUNS
            && if ci95_low > 0.0 {
                ci95_high <= CI_MAX_SPAN * ci95_low
            } else {
                ci95_high <= 2.0 * mean
            };
        Stats {
            ci95_too_few: !bounded,
            n,
            mean,
            median: s.median,
            min: s.min,
            max: s.max,
            stdev,
            cv: if mean != 0.0 { stdev / mean.abs() } else { 0.0 },
            ci95_low,
            ci95_high,
        }
    }
}

/// [`ci95_of_mean`] from the sums of [`Sums`], step for step.
fn ci95_of_sums(n: usize, mean: f64, stdev: f64, logs: Option<(f64, f64)>) -> (f64, f64) {
    if n < 2 {
        return (mean, mean);
    }
    let t = t_975(n - 1);
    if let Some((sum, squares)) = logs {
        let ly = sum / n as f64;
        let s2 = squares / (n - 1) as f64;
        if stdev == 0.0 {
            return (mean, mean);
        }
        let half = t * (s2 / n as f64 + s2 * s2 / (2.0 * (n - 1) as f64)).sqrt();
        let centre = ly + s2 / 2.0;
        let (low, high) = ((centre - half).exp(), (centre + half).exp());
        if high.is_finite() {
            return (low, high);
        }
    }
    let half = t * stdev / (n as f64).sqrt();
    ((mean - half).max(0.0), mean + half)
}

/// The place of a figure in `f64::total_cmp`'s order, as an unsigned number: the median is
/// found by these, a few bits more each pass.
pub(super) fn order_key(x: f64) -> u64 {
    let b = x.to_bits();
    if b >> 63 == 1 { !b } else { b | 1 << 63 }
}

/// The figure of an [`order_key`].
pub(super) fn of_order_key(k: u64) -> f64 {
    f64::from_bits(if k >> 63 == 1 { k & !(1 << 63) } else { !k })
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
/// can be negative. Where the logarithms spread so far that the upper end would overflow,
/// the Student-t interval too.
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
        let (low, high) = ((centre - half).exp(), (centre + half).exp());
        // Figures spread over hundreds of orders of magnitude (a latency of 1e-300 µs beside
        // one of seconds) put the upper end past `f64::MAX`: no interval at all. Then the
        // Student-t interval below, finite for figures within their ceilings, is used.
        if high.is_finite() {
            return (low, high);
        }
    }
    let half = t * stdev / (n as f64).sqrt();
    ((mean - half).max(0.0), mean + half)
}

/// The median of `v` (not empty), as the middle of `v` sorted by `f64::total_cmp` (or the
/// mean of the two middle figures); `v` is left reordered.
fn median_of(v: &mut [f64]) -> f64 {
    let n = v.len();
    let (below, mid, _) = v.select_nth_unstable_by(n / 2, f64::total_cmp);
    let mid = *mid;
    if n % 2 == 1 {
        mid
    } else {
        // The figure just below the middle is the largest of those before it.
        let lower = below
            .iter()
            .copied()
            .max_by(f64::total_cmp)
            .expect("n is even and not 0");
        (lower + mid) / 2.0
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
    let med = median_of(&mut v.to_vec());
    let mut dev: Vec<f64> = v.iter().map(|x| (x - med).abs()).collect();
    let mad = median_of(&mut dev);
    // A score is kept finite: a MAD of a subnormal figure beside figures of millions would
    // give an infinite one (that figure is an outlier either way).
    let finite = |z: f64| z.clamp(-f64::MAX, f64::MAX);
    if mad > 0.0 {
        return v.iter().map(|x| finite(0.6745 * (x - med) / mad)).collect();
    }
    // Summed in ascending order, as always.
    dev.sort_by(f64::total_cmp);
    let mean_ad = dev.iter().sum::<f64>() / dev.len() as f64;
    if mean_ad == 0.0 {
        return vec![0.0; v.len()];
    }
    v.iter()
        .map(|x| finite((x - med) / (1.253_314 * mean_ad)))
        .collect()
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// The median as it was taken before: the middle of the figures sorted.
    pub(crate) fn median_by_sorting(v: &[f64]) -> f64 {
        let mut s = v.to_vec();
        s.sort_by(f64::total_cmp);
        let n = s.len();
        if n % 2 == 1 {
            s[n / 2]
        } else {
            (s[n / 2 - 1] + s[n / 2]) / 2.0
        }
    }

    #[test]
    fn the_median_min_and_max_are_those_of_the_sorted_figures_to_the_bit() {
        // Odd and even counts, repeated figures, signed zeros, figures far apart.
        let mut seed = 0x2545_f491_4f6c_dd1d_u64;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for n in 1..200 {
            let v: Vec<f64> = (0..n)
                .map(|_| match next() % 5 {
                    0 => 0.0,
                    1 => -0.0,
                    2 => (next() % 7) as f64,
                    3 => (next() % 1_000_000) as f64 / 7.0,
                    _ => f64::from_bits(next() >> 2),
                })
                .collect();
            let s = Stats::of(&v).unwrap();
            let mut sorted = v.clone();
            sorted.sort_by(f64::total_cmp);
            assert_eq!(s.median.to_bits(), median_by_sorting(&v).to_bits(), "{v:?}");
            assert_eq!(s.min.to_bits(), sorted[0].to_bits(), "{v:?}");
            assert_eq!(s.max.to_bits(), sorted[n - 1].to_bits(), "{v:?}");
        }
    }

    #[test]
    fn modified_z_scores_find_the_figure_far_from_the_rest() {
        let v = [100.0, 101.0, 99.0, 100.5, 99.5, 300.0];
        let z = modified_z_scores(&v);
        assert!(z[5] > super::super::warnings::OUTLIER_Z, "{z:?}");
        assert!(z[..5].iter().all(|s| s.abs() < 2.0), "{z:?}");
        // Half the figures the same: the MAD is 0 and the mean absolute deviation scales.
        let v = [100.0, 100.0, 100.0, 100.0, 50.0, 400.0];
        let z = modified_z_scores(&v);
        let mean_ad = 350.0 / 6.0;
        assert_eq!(z[5], 300.0 / (1.253_314 * mean_ad));
        assert_eq!(z[0], 0.0);
    }
}
