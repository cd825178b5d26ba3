use super::*;
use crate::policy::{Level, Op};

fn policy() -> Policy {
    crate::policy::resolve("swimlane").unwrap().policy
}

/// A Swimlane run of the policy's own test on node1 in /data at `ts`, `mb_s` decimal MB/s.
pub(crate) fn rec(ts: &str, mb_s: f64) -> Record {
    let formula = crate::metrics::iops_formula(mb_s, 4096);
    let mut r = crate::history::tests::record(ts, mb_s * 1e6 / 4096.0);
    r.job = policy().job.shape();
    r.metrics = [
        ("write_bw_mb_s".to_string(), mb_s),
        ("write_iops_formula".to_string(), formula),
        ("write_iops".to_string(), mb_s * 1e6 / 4096.0),
    ]
    .into_iter()
    .collect();
    r.target.filesystem = Some("ext4".into());
    r
}

/// A fail-level rule `metric ≥ threshold` in IOPS on the mean, not yet judged.
pub(crate) fn rule(metric: &str, threshold: f64) -> RuleResult {
    RuleResult {
        metric: metric.into(),
        op: crate::policy::Op::Ge,
        threshold,
        level: crate::policy::Level::Fail,
        value: None,
        passed: None,
        marginal: false,
        unit: "IOPS",
        aggregate: crate::policy::Aggregate::Mean,
        note: None,
        per_run: vec![],
        latest_day: None,
        fails_on: None,
        scaled: None,
        undecided: None,
    }
}

/// `records` judged as `report` judges them under Swimlane, at `now` (RFC 3339).
pub(crate) fn swimlane_report(records: Vec<Record>, now: &str) -> Evaluation {
    swimlane_report_held(records, now).0
}

/// [`swimlane_report`], with where its runs' whole records are read again (for a format that
/// prints them).
pub(crate) fn swimlane_report_held(records: Vec<Record>, now: &str) -> (Evaluation, Records) {
    let now = DateTime::parse_from_rfc3339(now).unwrap().to_utc();
    evaluate_left_out(
        records,
        Vec::new(),
        &policy(),
        &Options::new(Scope::Report, now),
    )
}

fn now() -> DateTime<Utc> {
    DateTime::parse_from_rfc3339("2026-12-02T12:00:00Z")
        .unwrap()
        .with_timezone(&Utc)
}

fn run_eval(r: &[Record]) -> Evaluation {
    evaluate(r, &policy(), &Options::new(Scope::Run, now()))
}

#[test]
fn the_articles_example_passes_and_11_6_fails() {
    let e = run_eval(&[rec("2026-12-01T10:00:00Z", 16.4)]);
    assert_eq!(e.verdict, Verdict::Pass);
    assert!((e.rules[0].value.unwrap() - 4198.4).abs() < 1e-9);
    let e = run_eval(&[rec("2026-12-01T10:00:00Z", 11.6)]);
    assert_eq!(e.verdict, Verdict::Fail);
    assert_eq!(e.verdict.exit_code(), 1);
}

#[test]
fn the_11_7_edge_fails_by_the_deciding_rule_and_shows_the_article_figure_beside_it() {
    let e = run_eval(&[rec("2026-12-01T10:00:00Z", 11.7)]);
    assert_eq!(e.verdict, Verdict::Fail);
    let bw = e
        .rules
        .iter()
        .find(|r| r.metric == "write_bw_mb_s")
        .unwrap();
    assert_eq!(bw.passed, Some(true));
    assert_eq!(bw.level, Level::Info);
    let e = run_eval(&[rec("2026-12-01T10:00:00Z", 11.71875)]);
    assert_eq!(e.verdict, Verdict::Pass);
}

#[test]
fn the_verdict_is_on_the_mean_of_the_runs() {
    // 10 and 14 MB/s: each alone would fail/pass; the mean (12) passes.
    let e = run_eval(&[
        rec("2026-12-01T10:00:00Z", 10.0),
        rec("2026-12-01T11:00:00Z", 14.0),
    ]);
    let s = &e.summary.metrics["write_bw_mb_s"];
    assert_eq!((s.n, s.mean, s.min, s.max), (2, 12.0, 10.0, 14.0));
    assert!((s.stdev - 8f64.sqrt()).abs() < 1e-12);
    assert_eq!(e.verdict, Verdict::Pass);
    assert_eq!(e.rules[0].per_run, vec![Some(false), Some(true)]);
    // The interval of two such runs straddles 3000, but two runs are too few to bound the
    // mean at all: that is what the verdict says, not "marginal".
    assert!(!e.rules[0].marginal);
    assert!(!e.reason.contains("marginal"), "{}", e.reason);
    assert!(
        e.reason.contains("2 runs are too few to bound the mean"),
        "{}",
        e.reason
    );
}

#[test]
fn marginal_only_once_the_evidence_rule_is_met() {
    // Six runs over two days, alternating below and above 3000 by the formula.
    let recs: Vec<Record> = (0..6)
        .map(|i| {
            rec(
                &format!("2026-12-0{}T0{i}:00:00Z", 1 + i / 3),
                if i % 2 == 0 { 10.5 } else { 13.5 },
            )
        })
        .collect();
    let e = evaluate(
        recs.as_slice(),
        &policy(),
        &Options::new(Scope::Report, now()),
    );
    assert!(e.evidence.enough);
    assert_eq!(e.verdict, Verdict::Pass);
    assert!(e.rules[0].marginal);
    // "marginal" gave way to "undecided", with the distance to a decision in runs.
    assert!(
        e.reason.contains("undecided: the 95% interval"),
        "{}",
        e.reason
    );
    let values: Vec<f64> = e
        .runs
        .iter()
        .map(|r| r.metrics["write_iops_formula"])
        .collect();
    let s = &e.summary.metrics["write_iops_formula"];
    let more = s.runs_to_decide(&values, 3000.0).unwrap() - s.n;
    assert!(
        e.reason.contains(&format!("about {more} more runs")),
        "{}",
        e.reason
    );
    assert!(!e.reason.contains("too few"), "{}", e.reason);
}

#[test]
fn the_interval_of_positive_figures_stays_positive() {
    // Two runs averaging 57904 IOPS: Student's t gave −57,297 to 167,591.
    let s = Stats::of(&[55147.0, 55147.0 * 1.1]).unwrap();
    assert!(s.ci95_low > 0.0, "{s:?}");
    assert!(s.ci95_low < s.mean && s.mean < s.ci95_high, "{s:?}");
    // The modified Cox interval, computed independently (Python, t(1) = 12.706).
    assert!((s.ci95_low - 31596.59376).abs() < 0.01, "{s:?}");
    assert!((s.ci95_high - 106357.66015).abs() < 0.01, "{s:?}");
    // Identical runs: no spread, an interval of one point.
    let s = Stats::of(&[3000.0, 3000.0, 3000.0]).unwrap();
    assert_eq!((s.ci95_low, s.ci95_high), (3000.0, 3000.0));
    // A zero (a latency too short to measure): Student's t, cut at 0.
    let s = Stats::of(&[0.0, 10.0]).unwrap();
    assert_eq!(s.ci95_low, 0.0);
    assert!((s.ci95_high - (5.0 + 12.706 * 50f64.sqrt() / 2f64.sqrt())).abs() < 1e-9);
}

/// A small deterministic generator for the coverage check (SplitMix64).
fn normal(state: &mut u64) -> f64 {
    let mut next = || {
        *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = *state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
    };
    let (u1, u2) = (next().max(1e-300), next());
    (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
}

#[test]
fn the_interval_covers_the_true_mean_of_skewed_figures_95_times_in_100() {
    // Lognormal runs (σ = 0.3 on the log scale: a CV of about 30%, as cached runs vary):
    // the interval should hold the true mean, exp(σ²/2), in about 95% of samples.
    let sigma = 0.3f64;
    let truth = (sigma * sigma / 2.0).exp();
    let mut state = 42u64;
    for n in [3usize, 6, 12] {
        let trials = 4000;
        let mut covered = 0;
        for _ in 0..trials {
            let v: Vec<f64> = (0..n).map(|_| (sigma * normal(&mut state)).exp()).collect();
            let s = Stats::of(&v).unwrap();
            assert!(s.ci95_low > 0.0);
            if s.ci95_low <= truth && truth <= s.ci95_high {
                covered += 1;
            }
        }
        let rate = covered as f64 / trials as f64;
        assert!((0.93..=0.97).contains(&rate), "n = {n}: coverage {rate}");
    }
}

#[test]
fn stats_match_known_values() {
    let s = Stats::of(&[2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]).unwrap();
    assert_eq!(s.mean, 5.0);
    assert_eq!(s.median, 4.5);
    assert!((s.stdev - 2.138_089_935).abs() < 1e-9);
    // The modified Cox interval with t(7) = 2.365, computed independently (Python).
    assert!((s.ci95_low - 3.430_191_902).abs() < 1e-6, "{s:?}");
    assert!((s.ci95_high - 7.537_507_570).abs() < 1e-6, "{s:?}");
    assert!((s.cv - 0.427_617_987).abs() < 1e-6);
    assert!((t_975(100) - 1.984).abs() < 0.001);
    assert!((t_975(1000) - 1.962).abs() < 0.001);
}

#[test]
fn report_needs_the_evidence_rule() {
    let p = policy();
    let recs: Vec<Record> = (0..6)
        .map(|i| rec(&format!("2026-12-01T0{i}:00:00Z"), 16.0))
        .collect();
    let o = Options::new(Scope::Report, now());
    let e = evaluate(recs.as_slice(), &p, &o);
    assert_eq!(e.verdict, Verdict::Inconclusive);
    assert_eq!((e.evidence.runs, e.evidence.days), (6, 1));
    assert_eq!(e.evidence.more_days, 1);
    assert!(
        e.evidence.advice().contains("6 of 6 runs over 1 of 2 days"),
        "{}",
        e.evidence.advice()
    );
    let mut two_days = recs.clone();
    two_days[5] = rec("2026-12-02T09:00:00Z", 16.0);
    let e = evaluate(two_days.as_slice(), &p, &o);
    assert_eq!(e.verdict, Verdict::Pass);
    assert_eq!(e.days.len(), 2);
    assert_eq!(e.days[0].runs, 5);
    // Past the rule, the counts are not written as "8 of 6 runs over 3 of 2 days".
    let mut more = two_days.clone();
    more.insert(0, rec("2026-11-30T09:00:00Z", 16.0));
    more.insert(0, rec("2026-11-30T08:00:00Z", 16.0));
    let e = evaluate(more.as_slice(), &p, &o);
    assert_eq!(
        e.evidence.advice(),
        "8 runs (6 needed) over 3 days (2 needed): enough evidence for a verdict"
    );
}

#[test]
fn days_are_the_nodes_local_days() {
    // 23:30 at UTC−5 is the next day in UTC; it still counts as the node's 1 December.
    let a = rec("2026-12-01T23:30:00-05:00", 16.0);
    let b = rec("2026-12-01T08:00:00-05:00", 16.0);
    assert_eq!(day_of(&a), day_of(&b));
    let c = rec("2026-12-02T00:30:00+01:00", 16.0); // 23:30 UTC on 1 December
    assert_eq!(day_of(&c).to_string(), "2026-12-02");
}

#[test]
fn warnings_for_spread_first_run_outlier_and_tmpfs() {
    let mut recs = vec![
        rec("2026-12-01T10:00:00Z", 40.0),
        rec("2026-12-01T10:05:00Z", 12.0),
        rec("2026-12-01T10:10:00Z", 12.5),
    ];
    for r in &mut recs {
        r.invocation = Some("a".into());
    }
    let e = run_eval(&recs);
    let text: Vec<String> = e.warnings.iter().map(|w| w.to_string()).collect();
    assert!(
        text.iter().any(|w| w.starts_with("runs disagree")),
        "{text:?}"
    );
    assert!(
        text.iter().any(|w| w.starts_with("the first run was")),
        "{text:?}"
    );

    let mut recs: Vec<Record> = (0..7)
        .map(|i| {
            rec(
                &format!("2026-12-01T1{i}:00:00Z"),
                15.0 + (i % 2) as f64 * 0.2,
            )
        })
        .collect();
    recs[3].metrics.insert("write_iops_formula".into(), 900.0);
    let e = run_eval(&recs);
    assert!(
        e.warnings
            .iter()
            .any(|w| matches!(w, Warning::Outlier { .. }))
    );
}

#[test]
fn a_pass_on_a_flattering_test_is_inconclusive_and_a_fail_still_fails() {
    let mut quick = rec("2026-12-01T10:00:00Z", 100.0);
    quick.job.size = Some(64 << 20);
    quick.job.runtime_s = Some(3.0);
    let e = run_eval(std::slice::from_ref(&quick));
    assert_eq!(e.verdict, Verdict::Inconclusive);
    assert!(
        e.reason.starts_with("passed only on a test that flatters the disk (size 64 MiB instead of 4 GiB; runtime 3s instead of 1m)"),
        "{}",
        e.reason
    );
    // the figures are still there
    assert!(e.rules[0].value.unwrap() > 25000.0);
    let mut slow = quick.clone();
    slow.metrics.insert("write_iops_formula".into(), 2554.0);
    let e = run_eval(&[slow]);
    assert_eq!(e.verdict, Verdict::Fail);
    assert!(
        e.reason
            .contains("failed even on a test that flatters the disk (size 64 MiB"),
        "{}",
        e.reason
    );
    let mut tmpfs = rec("2026-12-01T10:00:00Z", 100.0);
    tmpfs.target.filesystem = Some("tmpfs".into());
    let e = run_eval(&[tmpfs]);
    assert_eq!(e.verdict, Verdict::Inconclusive);
    assert!(
        e.reason.contains("target tmpfs (in RAM) instead of a disk"),
        "{}",
        e.reason
    );
    // io_uring is the policy's to accept; psync is not, and could go either way
    let mut uring = rec("2026-12-01T10:00:00Z", 16.0);
    uring.engine = "io_uring".into();
    assert_eq!(run_eval(&[uring.clone()]).verdict, Verdict::Pass);
    uring.engine = "psync".into();
    uring.metrics.insert("write_iops_formula".into(), 100.0);
    let e = run_eval(&[uring]);
    assert_eq!(e.verdict, Verdict::Inconclusive);
    assert!(
        e.reason
            .contains("ioengine psync instead of posixaio or io_uring"),
        "{}",
        e.reason
    );
}

#[test]
fn a_report_counts_only_the_policys_test_and_lists_the_rest() {
    let mut recs: Vec<Record> = (0..6)
        .map(|i| rec(&format!("2026-12-0{}T0{i}:00:00Z", 1 + i / 3), 16.0))
        .collect();
    for i in 0..4 {
        let mut q = rec(&format!("2026-12-02T0{i}:00:00Z"), 90.0);
        q.job.size = Some(64 << 20);
        recs.push(q);
    }
    let e = evaluate(
        recs.as_slice(),
        &policy(),
        &Options::new(Scope::Report, now()),
    );
    assert_eq!(e.verdict, Verdict::Pass);
    assert_eq!(e.runs.len(), 6);
    assert_eq!(e.evidence.runs, 6);
    assert_eq!(e.not_counted.len(), 1);
    assert_eq!(
        e.not_counted[0].to_string(),
        "4 runs not counted: size 64 MiB instead of 4 GiB"
    );
    assert!(e.reason.contains("4 runs not counted"), "{}", e.reason);
    assert_eq!(e.excluded.len(), 4);
    // quick looks alone are no evidence
    let e = evaluate(&recs[6..], &policy(), &Options::new(Scope::Report, now()));
    assert_eq!(e.verdict, Verdict::Inconclusive);
    assert!(
        e.reason.starts_with("no runs of the policy's test"),
        "{}",
        e.reason
    );
}

#[test]
fn records_dated_in_the_future_never_count_and_are_named() {
    let mut recs: Vec<Record> = (0..6)
        .map(|i| rec(&format!("2026-12-0{}T0{i}:00:00Z", 1 + i / 3), 16.0))
        .collect();
    recs.push(rec("9999-12-31T23:59:59Z", 1.0));
    recs.push(rec("2026-12-02T12:30:00Z", 1.0));
    let e = evaluate(
        recs.as_slice(),
        &policy(),
        &Options::new(Scope::Report, now()),
    );
    assert_eq!(e.verdict, Verdict::Pass);
    assert_eq!(e.runs.len(), 6);
    assert!(
        e.days
            .iter()
            .all(|d| d.date.to_string().as_str() < "2026-12-03")
    );
    let w: Vec<String> = e.warnings.iter().map(|w| w.to_string()).collect();
    assert!(
        w.iter()
            .any(|w| w.starts_with("2 runs dated in the future (the latest 9999-12-31 23:59")),
        "{w:?}"
    );
    assert!(
        e.not_counted
            .iter()
            .any(|n| n.runs == 2 && n.reason.contains("future"))
    );
}

#[test]
fn a_steady_decline_is_flagged_and_noise_is_not() {
    let recs: Vec<Record> = (0..8)
        .map(|i| {
            rec(
                &format!("2026-11-2{}T10:00:00Z", i + 1),
                30.0 - 2.0 * i as f64,
            )
        })
        .collect();
    let e = run_eval(&recs);
    assert!(
        e.warnings
            .iter()
            .any(|w| matches!(w, Warning::Declining { .. })),
        "{:?}",
        e.warnings
    );
    let flat: Vec<Record> = (0..8)
        .map(|i| {
            rec(
                &format!("2026-11-2{}T10:00:00Z", i + 1),
                20.0 + [0.3, -0.2, 0.1, -0.3, 0.2, 0.0, -0.1, 0.25][i],
            )
        })
        .collect();
    let e = run_eval(&flat);
    assert!(
        !e.warnings
            .iter()
            .any(|w| matches!(w, Warning::Declining { .. }))
    );
}

#[test]
fn mixed_engines_and_small_files_warn_once() {
    let mut recs = vec![
        rec("2026-12-01T10:00:00Z", 16.0),
        rec("2026-12-01T11:00:00Z", 16.0),
    ];
    for r in &mut recs {
        r.target.memory_bytes = Some(24 << 30);
    }
    let mut o = Options::new(Scope::Report, now());
    o.other_engines.insert("psync".into(), 3);
    let e = evaluate(recs.as_slice(), &policy(), &o);
    let n_small = e
        .warnings
        .iter()
        .filter(|w| matches!(w, Warning::FileSmallerThanRam { .. }))
        .count();
    assert_eq!(n_small, 1);
    assert!(
        e.warnings
            .iter()
            .any(|w| matches!(w, Warning::MixedEngines { .. }))
    );
}

#[test]
fn differences_in_shape_are_inconclusive() {
    let mut o = Options::new(Scope::Import, now());
    o.contradicted.push(crate::deviation::Contradiction {
        difference: ShapeDifference {
            field: "bs",
            expected: "4k".into(),
            found: "about 8 KiB per I/O (the output's bytes ÷ I/Os)".into(),
        },
        run: "out.txt".into(),
        record: None,
    });
    let e = evaluate(&[rec("2026-12-01T10:00:00Z", 16.0)], &policy(), &o);
    assert_eq!(e.verdict, Verdict::Inconclusive);
    assert!(
        e.reason.starts_with(
            "not the policy's test: bs is about 8 KiB per I/O (the output's bytes ÷ I/Os) in out.txt (the policy's test uses 4k)"
        ),
        "{}",
        e.reason
    );
    assert_eq!(e.differences.len(), 1);
}

#[test]
fn no_runs_is_inconclusive() {
    assert_eq!(run_eval(&[]).verdict, Verdict::Inconclusive);
}

#[test]
fn warn_rules_decide_only_when_strict() {
    let mut p = policy();
    p.rules.push(crate::policy::Rule {
        metric: "write_iops".into(),
        op: Op::Ge,
        threshold: 1e9,
        per: None,
        level: Level::Warn,
        note: None,
    });
    let recs = [rec("2026-12-01T10:00:00Z", 16.0)];
    let mut o = Options::new(Scope::Run, now());
    assert_eq!(evaluate(recs.as_slice(), &p, &o).verdict, Verdict::Pass);
    o.strict = true;
    assert_eq!(evaluate(recs.as_slice(), &p, &o).verdict, Verdict::Fail);
}

#[test]
fn a_pass_names_every_deciding_rule_it_met_as_a_fail_names_every_rule_missed() {
    let mut p = policy();
    p.rules.push(crate::policy::Rule {
        metric: "write_bw_mb_s".into(),
        op: Op::Ge,
        threshold: 11.7,
        per: None,
        level: Level::Fail,
        note: None,
    });
    let recs = [rec("2026-12-01T10:00:00Z", 16.0)];
    let e = evaluate(recs.as_slice(), &p, &Options::new(Scope::Run, now()));
    assert_eq!(e.verdict, Verdict::Pass);
    assert!(
        e.reason
            .contains("mean write_iops_formula is 4096 IOPS, meeting ≥ 3000")
            && e.reason
                .contains("mean write_bw_mb_s is 16.00 MB/s, meeting ≥ 11.70"),
        "{}",
        e.reason
    );
}

#[test]
fn figures_that_follow_the_idle_time_before_each_run_are_named_and_others_are_not() {
    // A burst disk: after a night idle the run measures 9,000; 10 minutes after another run,
    // 2,500; in between, in between. (MB/s = IOPS × 4 / 1024 for the formula.)
    let times_and_iops = [
        ("2026-11-28T08:00:00Z", 9000.0),
        ("2026-11-28T08:10:00Z", 2500.0),
        ("2026-11-28T14:00:00Z", 7000.0),
        ("2026-11-28T14:10:00Z", 2600.0),
        ("2026-11-29T08:00:00Z", 9100.0),
        ("2026-11-29T08:10:00Z", 2400.0),
        ("2026-11-29T11:00:00Z", 6000.0),
        ("2026-11-29T11:10:00Z", 2550.0),
    ];
    let recs: Vec<Record> = times_and_iops
        .iter()
        .map(|(t, iops)| rec(t, iops * 4.0 / 1024.0))
        .collect();
    let e = run_eval(&recs);
    let w: Vec<String> = e.warnings.iter().map(|w| w.to_string()).collect();
    let idle = w
        .iter()
        .find(|w| w.contains("follows the idle time before each run"))
        .unwrap_or_else(|| panic!("{w:?}"));
    assert!(
        idle.contains("the run of 2026-11-29 08:00 after 17.8 h idle measured 9100"),
        "{idle}"
    );
    assert!(idle.contains("after 10 min measured 2"), "{idle}");
    // The same figures in another order: nothing to do with the idle time.
    let shuffled: Vec<Record> = times_and_iops
        .iter()
        .zip([
            2500.0, 9000.0, 2600.0, 7000.0, 2400.0, 9100.0, 2550.0, 6000.0,
        ])
        .map(|((t, _), iops)| rec(t, iops * 4.0 / 1024.0))
        .collect();
    let e = run_eval(&shuffled);
    assert!(
        !e.warnings
            .iter()
            .any(|w| w.to_string().contains("follows the idle time")),
        "{:?}",
        e.warnings
    );
}

/// Figures within their ceilings (`metrics::ceiling`), drawn to stress every aggregate: 0,
/// subnormal and tiny figures beside the ceiling itself, and anything between. No statistic,
/// interval, per-day figure, latest day, rule value or outlier score of them is infinite or
/// NaN, however they mix.
#[test]
fn no_aggregate_of_figures_within_their_ceilings_is_infinite_or_nan() {
    let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let names = [
        "write_iops_formula",
        "write_iops",
        "write_clat_p99_us",
        "write_bw_bytes",
        "write_bw_mb_s",
        "write_ios",
        "end_fsync_ms",
        "a_metric_not_known",
    ];
    let finite = |what: &str, v: f64, case: &str| {
        assert!(v.is_finite(), "{what} is {v}: {case}");
    };
    for _ in 0..120 {
        let n = 1 + (next() % 40) as usize;
        let mut records = Vec::with_capacity(n);
        for i in 0..n {
            // Three days of runs, the latest an hour before `now()`.
            let ts = now() - chrono::Duration::hours(1 + (i as i64 * 71) / n as i64);
            let mut r = rec(&ts.to_rfc3339(), 16.4);
            r.metrics = names
                .iter()
                .map(|m| {
                    let top = crate::metrics::ceiling(m).max;
                    let v = match next() % 6 {
                        0 => 0.0,
                        1 => f64::from_bits(1 + next() % 1000),
                        2 => 10f64.powi(-((next() % 308) as i32)),
                        3 => top,
                        _ => top * (next() >> 11) as f64 / (1u64 << 53) as f64,
                    };
                    (m.to_string(), v)
                })
                .collect();
            assert_eq!(crate::history::check_metrics(&r.metrics), Ok(()));
            records.push(r);
        }
        let case = format!(
            "{:?}",
            records.iter().map(|r| &r.metrics).collect::<Vec<_>>()
        );
        for scope in [Scope::Report, Scope::Run] {
            let e = evaluate(records.clone(), &policy(), &Options::new(scope, now()));
            for (m, s) in &e.summary.metrics {
                for (what, v) in [
                    ("mean", s.mean),
                    ("median", s.median),
                    ("min", s.min),
                    ("max", s.max),
                    ("stdev", s.stdev),
                    ("cv", s.cv),
                    ("ci95_low", s.ci95_low),
                    ("ci95_high", s.ci95_high),
                ] {
                    finite(&format!("{m} {what}"), v, &case);
                }
            }
            for r in &e.rules {
                finite(&r.metric, r.value.expect("measured"), &case);
                if let Some(l) = &r.latest_day {
                    finite("latest day", l.value, &case);
                }
            }
            for d in &e.days {
                for v in [d.mean, d.min, d.max] {
                    finite("a day's figure", v, &case);
                }
            }
            for w in &e.warnings {
                if let Warning::Outlier { score, .. } = w {
                    finite("an outlier's score", *score, &case);
                }
            }
        }
        for m in names {
            let v: Vec<f64> = records.iter().map(|r| r.metrics[m]).collect();
            for z in super::stats::modified_z_scores(&v) {
                finite("a modified z-score", z, &case);
            }
        }
    }
}

#[test]
fn a_sustained_run_whose_budget_ended_before_a_steady_state_passes_nothing() {
    let runs = [rec("2026-12-01T10:00:00Z", 16.4)];
    let mut opts = Options::new(Scope::Run, now());
    opts.sustained_check = Some(SustainedCheck::NotReached("the budget of 40m ended".into()));
    let e = evaluate(runs.as_slice(), &policy(), &opts);
    assert_eq!(e.verdict, Verdict::Inconclusive);
    assert!(
        e.reason
            .starts_with("the level the disk sustains is not known: the budget of 40m ended"),
        "{}",
        e.reason
    );
    // A fail stays a fail, with the reason beside it.
    let e = evaluate(&[rec("2026-12-01T10:00:00Z", 11.6)], &policy(), &opts);
    assert_eq!(e.verdict, Verdict::Fail);
    assert!(
        e.reason.ends_with("; the budget of 40m ended"),
        "{}",
        e.reason
    );
    // Reached: the verdict is the figures', and says how it was reached.
    opts.sustained_check = Some(SustainedCheck::Reached("held steady".into()));
    let e = evaluate(runs.as_slice(), &policy(), &opts);
    assert_eq!(e.verdict, Verdict::Pass);
    assert!(e.reason.ends_with("; held steady"), "{}", e.reason);
    // A policy that requires it withholds a pass from runs that did not measure it.
    let mut required = policy();
    required.sustained = crate::policy::Sustained::Required;
    let e = evaluate(runs.as_slice(), &required, &Options::new(Scope::Run, now()));
    assert_eq!(e.verdict, Verdict::Inconclusive);
    let e = evaluate(runs.as_slice(), &required, &opts);
    assert_eq!(e.verdict, Verdict::Pass);
}
