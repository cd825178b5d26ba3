//! `iopscheck compare`: the ratio of the policy's statistic (the mean of the deciding rule's
//! metric) between two selections of runs, with its 1 − α interval and whether the difference
//! is real at α (`--alpha`, default 0.05: the 95% interval).
//!
//! Each side's runs are taken as log-normal, as the report's interval takes them: the log of a
//! side's mean is estimated by ȳ + s²/2 with variance s²/n + s⁴/(2(n−1)) (the modified Cox
//! method, `stats::ci95_of_mean`). The log of the ratio is the difference of the two, with the
//! sum of their variances; its degrees of freedom are Welch–Satterthwaite's over the two
//! variances (each with n − 1), rounded down. The interval is exp(d ± t(1 − α/2, df)·√v); the
//! difference is real when it does not hold 1. At α = 0.05 t is the report's table
//! (`stats::t_975`), so the interval is the one the report's figures imply; at any other α it
//! is Student's quantile, found by inverting the distribution's closed form for whole degrees
//! of freedom (Abramowitz & Stegun 26.7.3–4).

use serde::Serialize;

use super::t_975;

/// The level at which a difference is called real, unless `--alpha` says otherwise.
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
    /// The interval of the ratio of the means at `confidence`.
    pub ci_low: f64,
    pub ci_high: f64,
    /// 1 − `alpha`: 0.95 by default.
    pub confidence: f64,
    /// The same interval under its earlier names, where it is the 95% one (α 0.05).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ci95_low: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ci95_high: Option<f64>,
    pub df: usize,
    pub alpha: f64,
    /// The interval leaves out 1: the difference is real at `alpha`.
    pub real: bool,
}

impl Comparison {
    /// The interval's level in percent, as people write it: "95", "99", "99.9".
    pub fn level(&self) -> String {
        let pct = (self.confidence * 100.0 * 1e6).round() / 1e6;
        format!("{pct}")
    }

    /// "node7 is 0.62× node3 (95% CI 0.55–0.70): a real difference at α 0.05".
    pub fn sentence(&self) -> String {
        format!(
            "{} is {:.2}× {} in mean {} ({}% CI {:.2}–{:.2}): {}",
            self.a.label,
            self.ratio,
            self.b.label,
            self.metric,
            self.level(),
            self.ci_low,
            self.ci_high,
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

/// P(|T| ≤ t) for Student's t with `df` (≥ 1) degrees of freedom: the closed form for whole
/// degrees of freedom (Abramowitz & Stegun 26.7.3 for odd, 26.7.4 for even), with
/// θ = atan(t/√df).
fn t_central(t: f64, df: usize) -> f64 {
    let theta = (t / (df as f64).sqrt()).atan();
    let (s, c) = theta.sin_cos();
    let c2 = c * c;
    if df % 2 == 1 {
        // 2/π (θ + sin θ cos θ (1 + 2/3 cos²θ + … + (2·4…(df−3))/(3·5…(df−2)) cos^(df−3)θ))
        let mut sum = 0.0;
        if df > 1 {
            let mut term = 1.0;
            sum = 1.0;
            let mut k = 2;
            while k + 1 < df {
                term *= k as f64 / (k + 1) as f64 * c2;
                sum += term;
                k += 2;
            }
        }
        2.0 / std::f64::consts::PI * (theta + s * c * sum)
    } else {
        // sin θ (1 + 1/2 cos²θ + … + (1·3…(df−3))/(2·4…(df−2)) cos^(df−2)θ)
        let mut term = 1.0;
        let mut sum = 1.0;
        let mut k = 1;
        while k + 1 < df {
            term *= k as f64 / (k + 1) as f64 * c2;
            sum += term;
            k += 2;
        }
        s * sum
    }
}

/// The multiplier of a two-sided interval at level 1 − `alpha` (0 < α < 1): Student's
/// t(1 − α/2, df). At α 0.05 the report's table, so both name one 95% interval.
pub fn t_two_sided(alpha: f64, df: usize) -> f64 {
    if alpha == ALPHA || df == 0 {
        return t_975(df);
    }
    let target = 1.0 - alpha;
    let mut high = 1.0;
    while t_central(high, df) < target && high < 1e300 {
        high *= 2.0;
    }
    let mut low = 0.0;
    for _ in 0..200 {
        let mid = (low + high) / 2.0;
        if t_central(mid, df) < target {
            low = mid;
        } else {
            high = mid;
        }
        if high - low <= 1e-13 * high {
            break;
        }
    }
    (low + high) / 2.0
}

/// Compares the figures `a` with `b` (each a side's runs of one metric, with its days) at the
/// level `alpha`.
pub fn compare(
    metric: &str,
    (a_label, a, a_days): (&str, &[f64], usize),
    (b_label, b, b_days): (&str, &[f64], usize),
    alpha: f64,
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
    let half = t_two_sided(alpha, df) * v.sqrt();
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
        ci_low: low,
        ci_high: high,
        confidence: 1.0 - alpha,
        ci95_low: (alpha == ALPHA).then_some(low),
        ci95_high: (alpha == ALPHA).then_some(high),
        df,
        alpha,
        real: low > 1.0 || high < 1.0,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_figures_are_no_difference_and_a_halving_is_a_real_one() {
        let a = [4000.0, 4100.0, 3900.0, 4050.0];
        let c = compare("write_iops", ("a", &a, 2), ("b", &a, 2), ALPHA).unwrap();
        assert_eq!(c.ratio, 1.0);
        assert!(c.ci_low < 1.0 && c.ci_high > 1.0 && !c.real);
        let half: Vec<f64> = a.iter().map(|x| x / 2.0).collect();
        let c = compare("write_iops", ("a", &half, 2), ("b", &a, 2), ALPHA).unwrap();
        assert!((c.ratio - 0.5).abs() < 1e-12);
        assert!(c.real && c.ci_high < 1.0 && c.ci_low < 0.5);
        assert!(c.sentence().contains("a is 0.50× b"), "{}", c.sentence());
    }

    #[test]
    fn one_run_a_side_is_refused() {
        let e = compare("write_iops", ("a", &[1.0], 1), ("b", &[1.0, 2.0], 1), ALPHA).unwrap_err();
        assert_eq!(
            e,
            Refused::TooFew {
                label: "a".into(),
                n: 1
            }
        );
    }

    #[test]
    fn the_quantile_agrees_with_the_printed_table_at_the_95_level() {
        // Student's table, 97.5th percentile, to three decimals: the closed form gives the
        // same figures, so it is the same distribution the report's table is taken from.
        for (df, t) in [
            (1, 12.706),
            (2, 4.303),
            (5, 2.571),
            (10, 2.228),
            (30, 2.042),
        ] {
            let mut x = 0.0;
            let mut hi = 100.0;
            for _ in 0..200 {
                let mid = (x + hi) / 2.0;
                if t_central(mid, df) < 0.95 {
                    x = mid
                } else {
                    hi = mid
                }
            }
            assert!((x - t).abs() < 5e-4, "df {df}: {x} against {t}");
        }
        // At α 0.05 the multiplier is the table's figure itself.
        assert_eq!(t_two_sided(0.05, 7), t_975(7));
        // A wider level, a larger multiplier; one degree of freedom is Cauchy's: tan(π/2 (1−α)).
        assert!(t_two_sided(0.01, 7) > t_975(7) && t_two_sided(0.1, 7) < t_975(7));
        let cauchy = (std::f64::consts::FRAC_PI_2 * 0.8).tan();
        assert!((t_two_sided(0.2, 1) - cauchy).abs() < 1e-9 * cauchy);
    }
}
