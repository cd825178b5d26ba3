//! The simulation study of `--until-decided` (bench/README.md, "The sequential decision").
//!
//! cargo run --release --example sequential [-- TRIALS]
//!
//! Seeded populations of nodes whose runs are log-normal at a CV of 10, 30 and 60%, with a
//! true (arithmetic) mean of 0.7 to 1.5 times the threshold, with and without a day-to-day
//! component (half the variance of the logs shared by a day's runs). Three runs a day at 08,
//! 14 and 20 h. For each population: the false-pass and false-fail rates and the mean number
//! of runs of the sequential rule (stopping at its first end, as `run --until-decided` does),
//! beside the fixed rule "mean of 6 runs over 2 days ≥ threshold" (what a policy's evidence
//! rule gave before), and the peeking rule (the report's 95% interval re-tested after every
//! run from the 6th, stopping at the first that clears the threshold).

use chrono::{DateTime, Duration, FixedOffset};
use iopscheck::testing::evaluate::Stats;
use iopscheck::testing::evaluate::sequential::{Floor, Outcome, Settings, first_end};
use iopscheck::testing::policy::Op;

struct Rng(u64, Option<f64>);

impl Rng {
    fn uniform(&mut self) -> f64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        ((self.0 >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    }
    fn normal(&mut self) -> f64 {
        if let Some(z) = self.1.take() {
            return z;
        }
        let (u, v) = (self.uniform(), self.uniform());
        let r = (-2.0 * u.ln()).sqrt();
        let t = std::f64::consts::TAU * v;
        self.1 = Some(r * t.sin());
        r * t.cos()
    }
}

const THRESHOLD: f64 = 3000.0;
const PER_DAY: usize = 3;

#[derive(Default)]
struct Tally {
    pass: usize,
    fail: usize,
    inconclusive: usize,
    runs: usize,
    fixed_pass: usize,
    fixed_fail: usize,
    peek_pass: usize,
}

fn main() {
    let trials: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(2000);
    let s = Settings::default();
    let floor = Floor {
        min_runs: 6,
        min_days: 2,
        min_runs_per_day: 1,
    };
    let budget = s.max_runs.min(s.max_days * PER_DAY);
    let t0: DateTime<FixedOffset> = DateTime::parse_from_rfc3339("2026-11-02T08:00:00Z").unwrap();
    let times: Vec<DateTime<FixedOffset>> = (0..budget)
        .map(|i| {
            t0 + Duration::days((i / PER_DAY) as i64) + Duration::hours(6 * (i % PER_DAY) as i64)
        })
        .collect();
    println!(
        "trials {trials} a population; α {} β {} δ {}; floor {} runs over {} days; budget {} runs or {} days; {PER_DAY} runs a day\n",
        s.alpha, s.beta, s.delta, floor.min_runs, floor.min_days, s.max_runs, s.max_days
    );
    println!(
        "| CV | day part | true mean / threshold | sequential: pass | fail | inconclusive | mean runs | fixed 6-over-2: pass | fail | peeking 95% CI: pass |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|");
    let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
    for cv in [0.1f64, 0.3, 0.6] {
        let sigma2 = (1.0 + cv * cv).ln();
        for day_part in [false, true] {
            let (sd_day, sd_run) = if day_part {
                ((sigma2 / 2.0).sqrt(), (sigma2 / 2.0).sqrt())
            } else {
                (0.0, sigma2.sqrt())
            };
            for ratio in [0.7, 0.9, 0.95, 1.0, 1.05, 1.1, 1.5] {
                // The true arithmetic mean exp(μ + σ²/2) is ratio × threshold.
                let mu = (ratio * THRESHOLD).ln() - sigma2 / 2.0;
                seed = seed.wrapping_add(0x2545_f491_4f6c_dd1d);
                let mut rng = Rng(seed, None);
                let mut t = Tally::default();
                for _ in 0..trials {
                    let mut day_effect = 0.0;
                    let points: Vec<(DateTime<FixedOffset>, f64)> = times
                        .iter()
                        .enumerate()
                        .map(|(i, &ts)| {
                            if i % PER_DAY == 0 {
                                day_effect = sd_day * rng.normal();
                            }
                            (ts, (mu + day_effect + sd_run * rng.normal()).exp())
                        })
                        .collect();
                    let q = first_end(&points, Op::Ge, THRESHOLD, floor, &s);
                    match q.outcome {
                        Outcome::Pass => t.pass += 1,
                        Outcome::Fail => t.fail += 1,
                        _ => t.inconclusive += 1,
                    }
                    t.runs += q.start + q.n;
                    let v: Vec<f64> = points.iter().map(|p| p.1).collect();
                    let fixed = v[..6].iter().sum::<f64>() / 6.0;
                    if fixed >= THRESHOLD {
                        t.fixed_pass += 1;
                    } else {
                        t.fixed_fail += 1;
                    }
                    if (6..=v.len()).any(|n| Stats::of(&v[..n]).unwrap().ci95_low >= THRESHOLD) {
                        t.peek_pass += 1;
                    }
                }
                let pct = |k: usize| format!("{:.1}%", 100.0 * k as f64 / trials as f64);
                // Which errors a population can make: a pass is false below the threshold,
                // a fail at or above it.
                let mark = |k: usize, wrong: bool| {
                    if wrong {
                        format!("**{}**", pct(k))
                    } else {
                        pct(k)
                    }
                };
                let below = ratio < 1.0;
                println!(
                    "| {:.0}% | {} | {ratio:.2} | {} | {} | {} | {:.1} | {} | {} | {} |",
                    cv * 100.0,
                    if day_part { "half" } else { "none" },
                    mark(t.pass, below),
                    mark(t.fail, !below),
                    pct(t.inconclusive),
                    t.runs as f64 / trials as f64,
                    mark(t.fixed_pass, below),
                    mark(t.fixed_fail, !below),
                    mark(t.peek_pass, below),
                );
            }
        }
    }
    println!(
        "\nbold: an error (a pass below the threshold, a fail at or above it); one standard error of a rate p over {trials} trials is √(p(1−p)/{trials}), {:.2} points at 5%",
        100.0 * (0.05f64 * 0.95 / trials as f64).sqrt()
    );
}
