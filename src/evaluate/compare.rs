//! `iopscheck compare`: the ratio of the policy's statistic (the mean of the deciding rule's
//! metric) between two selections of runs, with its 95% interval and whether the difference
//! is real at α = 0.05.
//!
//! Each side's runs are taken as log-normal, as the report's interval takes them: the log of a
//! side's mean is estimated by ȳ + s²/2 with variance s²/n + s⁴/(2(n−1)) (the modified Cox
//! method, `stats::ci95_of_mean`). The log of the ratio is the difference of the two, with the
//! sum of their variances; its degrees of freedom are Welch–Satterthwaite's over the two
//! variances (each with n − 1), rounded down. The interval is exp(d ± t(0.975, df)·√v); the
//! difference is real when it does not hold 1.

use serde::Serialize;

use super::t_975;

/// The level at which a difference is called real.
pub const ALPHA: f64 = 0.05;

/// One side of the comparison.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Side {
    /// What the side is ("node7", "/data", "before 2026-11-20").
    pub label: String,
    pub n: usize,
    pub days: usize,
    /// The arithmetic mean of the metric over the side's runs.
    pub mean: f64,
}

/// The comparison of side `a` with side `b`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Comparison {
    pub metric: String,
    pub unit: &'static str,
    pub a: Side,
    pub b: Side,
    /// a.mean / b.mean.
    pub ratio: f64,
    /// The 95% interval of the ratio of the means.
    pub ci95_low: f64,
    pub ci95_high: f64,
    pub df: usize,
    pub alpha: f64,
    /// The interval leaves out 1: the difference is real at `alpha`.
    pub real: bool,
}

impl Comparison {
    /// "node7 is 0.62× node3 (95% CI 0.55–0.70): a real difference at α 0.05".
    pub fn sentence(&self) -> String {
        format!(
            "{} is {:.2}× {} in mean {} (95% CI {:.2}–{:.2}): {}",
            self.a.label,
            self.ratio,
            self.b.label,
            self.metric,
            self.ci95_low,
            self.ci95_high,
            if self.real {
                format!("a real difference at α {}", self.alpha)
            } else {
                format!(
                    "not a real difference at α {} (the interval holds 1)",
                    self.alpha
                )
            }
        )
    }
}

/// Why two selections cannot be compared.
#[derive(Debug, Clone, PartialEq)]
pub enum Refused {
    /// A side has fewer than 2 runs: no spread, no interval.
    TooFew { label: String, n: usize },
    /// A figure is 0 or negative: the log-normal interval does not apply.
    NotPositive { label: String },
}

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refused::TooFew { label, n } => write!(
                f,
                "{label} has {n} run{} of the policy's test: at least 2 a side are needed for an interval",
                if *n == 1 { "" } else { "s" }
            ),
            Refused::NotPositive { label } => {
                write!(
                    f,
                    "{label} has a figure of 0: no ratio of means can be bounded"
                )
            }
        }
    }
}

/// The log of the mean (Cox) and its variance, for one side's figures.
fn log_mean(v: &[f64]) -> (f64, f64) {
    let n = v.len() as f64;
    let logs: Vec<f64> = v.iter().map(|x| x.ln()).collect();
    let ly = logs.iter().sum::<f64>() / n;
    let s2 = logs.iter().map(|y| (y - ly).powi(2)).sum::<f64>() / (n - 1.0);
    (ly + s2 / 2.0, s2 / n + s2 * s2 / (2.0 * (n - 1.0)))
}

/// Compares the figures `a` with `b` (each a side's runs of one metric, with its days).
pub fn compare(
    metric: &str,
    (a_label, a, a_days): (&str, &[f64], usize),
    (b_label, b, b_days): (&str, &[f64], usize),
) -> Result<Comparison, Refused> {
    for (label, v) in [(a_label, a), (b_label, b)] {
        if v.len() < 2 {
            return Err(Refused::TooFew {
                label: label.into(),
                n: v.len(),
            });
        }
        if v.iter().any(|&x| x.is_nan() || x <= 0.0) {
            return Err(Refused::NotPositive {
                label: label.into(),
            });
        }
    }
    let (la, va) = log_mean(a);
    let (lb, vb) = log_mean(b);
    let v = va + vb;
    let (dfa, dfb) = ((a.len() - 1) as f64, (b.len() - 1) as f64);
    let df = if v > 0.0 {
        (v * v / (va * va / dfa + vb * vb / dfb)).floor().max(1.0) as usize
    } else {
        a.len() + b.len() - 2
    };
    let half = t_975(df) * v.sqrt();
    let d = la - lb;
    let mean = |x: &[f64]| x.iter().sum::<f64>() / x.len() as f64;
    let (low, high) = ((d - half).exp(), (d + half).exp());
    Ok(Comparison {
        metric: metric.into(),
        unit: crate::metrics::unit(metric),
        a: Side {
            label: a_label.into(),
            n: a.len(),
            days: a_days,
            mean: mean(a),
        },
        b: Side {
            label: b_label.into(),
            n: b.len(),
            days: b_days,
            mean: mean(b),
        },
        ratio: mean(a) / mean(b),
        ci95_low: low,
        ci95_high: high,
        df,
        alpha: ALPHA,
        real: low > 1.0 || high < 1.0,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_figures_are_no_difference_and_a_halving_is_a_real_one() {
        let a = [4000.0, 4100.0, 3900.0, 4050.0];
        let c = compare("write_iops", ("a", &a, 2), ("b", &a, 2)).unwrap();
        assert_eq!(c.ratio, 1.0);
        assert!(c.ci95_low < 1.0 && c.ci95_high > 1.0 && !c.real);
        let half: Vec<f64> = a.iter().map(|x| x / 2.0).collect();
        let c = compare("write_iops", ("a", &half, 2), ("b", &a, 2)).unwrap();
        assert!((c.ratio - 0.5).abs() < 1e-12);
        assert!(c.real && c.ci95_high < 1.0 && c.ci95_low < 0.5);
        assert!(c.sentence().contains("a is 0.50× b"), "{}", c.sentence());
    }

    #[test]
    fn one_run_a_side_is_refused() {
        let e = compare("write_iops", ("a", &[1.0], 1), ("b", &[1.0, 2.0], 1)).unwrap_err();
        assert_eq!(
            e,
            Refused::TooFew {
                label: "a".into(),
                n: 1
            }
        );
    }
}
