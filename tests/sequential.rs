//! `--until-decided` through the binary, on pre-built histories (three runs a day at 08, 14
//! and 20 h UTC over the last days): where a sequence stops, with which verdict, and what
//! every format says of it.

mod common;

use chrono::{DateTime, Duration, FixedOffset, Utc};
use common::Env;

/// Three runs a day, the first `days` days ago at 08:00 UTC, the figures in MB/s in order.
fn history(env: &Env, figures: &[f64]) -> Vec<DateTime<FixedOffset>> {
    history_in(env, "/data", figures)
}

/// [`history`] for the directory `dir`.
fn history_in(env: &Env, dir: &str, figures: &[f64]) -> Vec<DateTime<FixedOffset>> {
    let (lines, times) = common::three_a_day("node1", dir, figures);
    std::fs::write(&env.history, lines).unwrap();
    times
}

/// `report --until-decided ARGS --format json`: the exit code and the JSON.
fn decide(env: &Env, args: &[&str]) -> (Option<i32>, serde_json::Value) {
    let out = env
        .cmd()
        .args([
            "report",
            "--host",
            "node1",
            "--until-decided",
            "--format",
            "json",
        ])
        .args(args)
        .output()
        .unwrap();
    let j = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&out.stderr)));
    (out.status.code(), j)
}

/// A figure in MB/s around `mb_s`, ±`spread` in a repeating pattern.
fn around(mb_s: f64, spread: f64, n: usize) -> Vec<f64> {
    (0..n)
        .map(|i| mb_s * (1.0 + spread * [0.0, 1.0, -1.0, 0.5, -0.5][i % 5]))
        .collect()
}

#[test]
fn a_clearly_passing_node_stops_at_the_policys_floor() {
    let env = Env::new();
    // About 6,100 IOPS by the formula, twice the threshold, within ±3%.
    let figures = around(24.0, 0.03, 15);
    history(&env, &figures);
    let (code, j) = decide(&env, &[]);
    assert_eq!(code, Some(0), "{j}");
    assert_eq!(j["verdict"], "pass");
    let s = &j["sequential"][0];
    assert_eq!(s["metric"], "write_iops_formula");
    assert_eq!(s["outcome"], "pass");
    // The floor is Swimlane's 6 runs over 2 days: the first 6 runs decide, the other 9 are
    // re-checks.
    assert_eq!(
        (s["n"].as_u64(), s["days"].as_u64()),
        (Some(6), Some(2)),
        "{s}"
    );
    assert_eq!(s["after"], 9);
    assert_eq!(
        (s["alpha"].as_f64(), s["beta"].as_f64()),
        (Some(0.05), Some(0.05))
    );
    let low = s["low"].as_f64().unwrap();
    let first6: Vec<f64> = figures[..6].iter().map(|m| m / 4.0 * 1024.0).collect();
    let min = first6.iter().copied().fold(f64::INFINITY, f64::min);
    // The lower bound clears the threshold and, an anytime bound of 6 runs, stays below the
    // lowest of them.
    assert!(low >= 3000.0 && low < min, "{low} {min}");
    let reason = j["reason"].as_str().unwrap();
    assert!(reason.starts_with("decided pass"), "{reason}");
}

#[test]
fn a_clearly_failing_node_stops_fail() {
    let env = Env::new();
    // About 1,500 IOPS, half the threshold.
    history(&env, &around(6.0, 0.05, 12));
    let (code, j) = decide(&env, &[]);
    assert_eq!(code, Some(1), "{j}");
    assert_eq!(j["verdict"], "fail");
    let s = &j["sequential"][0];
    assert_eq!(
        (s["outcome"].as_str(), s["n"].as_u64()),
        (Some("fail"), Some(6))
    );
    assert!(s["high"].as_f64().unwrap() < 3000.0, "{s}");
}

#[test]
fn a_node_at_the_threshold_reaches_the_budget_inconclusive() {
    let env = Env::new();
    // A mean of 11.72 MB/s (3,000 IOPS by the formula) spread ±25%: no bound can leave the
    // threshold nor close within ±10% of it in 12 runs.
    history(&env, &around(11.72, 0.25, 18));
    let (code, j) = decide(&env, &["--max-runs", "12"]);
    assert_eq!(code, Some(3), "{j}");
    assert_eq!(j["verdict"], "inconclusive");
    let s = &j["sequential"][0];
    assert_eq!(
        (s["outcome"].as_str(), s["n"].as_u64()),
        (Some("budget"), Some(12)),
        "{s}"
    );
    assert!(s["low"].as_f64().unwrap() < 3000.0 && s["high"].as_f64().unwrap() > 3000.0);
    // Without --until-decided, the fixed rule of the same runs passes, marginally or not:
    // the sequence is what refuses to call it.
    let out = env
        .cmd()
        .args(["report", "--host", "node1", "--format", "json"])
        .output()
        .unwrap();
    let fixed: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_ne!(fixed["verdict"], "inconclusive", "{fixed}");
}

#[test]
fn a_node_whose_figures_step_down_restarts_its_sequence() {
    let env = Env::new();
    let mut figures = around(24.0, 0.03, 9);
    figures.extend(around(6.0, 0.03, 9));
    let times = history(&env, &figures);
    let (code, j) = decide(&env, &[]);
    assert_eq!(code, Some(1), "{j}");
    let s = &j["sequential"][0];
    // Passed on the first 6 runs; the step at run 10 drops that and starts again there.
    let restarted = DateTime::parse_from_rfc3339(s["restarted"].as_str().unwrap()).unwrap();
    assert_eq!(restarted, times[9]);
    assert_eq!(
        (s["outcome"].as_str(), s["n"].as_u64()),
        (Some("fail"), Some(6)),
        "{s}"
    );
    assert!(j["reason"].as_str().unwrap().contains("restarted"), "{j}");
}

#[test]
fn every_format_states_n_alpha_beta_delta_and_the_bounds_with_the_verdict() {
    let env = Env::new();
    history(&env, &around(24.0, 0.03, 15));
    let (_, j) = decide(
        &env,
        &["--alpha", "0.01", "--beta", "0.1", "--delta", "0.2"],
    );
    let s = &j["sequential"][0];
    assert_eq!(
        (s["alpha"].as_f64(), s["beta"].as_f64(), s["delta"].as_f64()),
        (Some(0.01), Some(0.1), Some(0.2))
    );
    let low = format!("{:.0}", s["low"].as_f64().unwrap());
    let high = format!("{:.0}", s["high"].as_f64().unwrap());
    for format in [
        "table",
        "markdown",
        "csv",
        "summary",
        "html",
        "junit",
        "prometheus",
    ] {
        let out = env
            .cmd()
            .args(["report", "--host", "node1", "--until-decided"])
            .args(["--alpha", "0.01", "--beta", "0.1", "--delta", "0.2"])
            .args(["--format", format])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{format}");
        // Lines wrapped to the terminal's width join again.
        let text = String::from_utf8(out.stdout).unwrap();
        let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
        for want in [
            "decided pass".to_string(),
            format!("n {} over", s["n"]),
            "α 0.01".into(),
            "β 0.1".into(),
            "δ 20%".into(),
            format!("{low}–{high}"),
        ] {
            assert!(text.contains(&want), "{format} lacks {want:?}:\n{text}");
        }
    }
}

#[test]
fn bad_settings_name_their_flag_and_need_until_decided() {
    let env = Env::new();
    history(&env, &around(24.0, 0.03, 6));
    for (args, flag) in [
        (vec!["--until-decided", "--alpha", "0"], "--alpha"),
        (vec!["--until-decided", "--beta", "0.7"], "--beta"),
        (vec!["--until-decided", "--delta", "1"], "--delta"),
        (vec!["--until-decided", "--max-runs", "0"], "--max-runs"),
        (vec!["--alpha", "0.01"], "--until-decided"),
    ] {
        let out = env.cmd().arg("report").args(&args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(flag), "{args:?}: {err}");
    }
}

#[test]
fn run_until_decided_stops_at_the_floor_on_a_clear_node_and_records_every_run() {
    let env = Env::new();
    // Swimlane's job at a test's scale, its floor 3 runs on 1 day, a threshold any disk
    // clears: the sequence may end at the third run although its budget is 30.
    let policy = env.swimlane_policy("small.yaml", |y| {
        y.replace("size: 4g", "size: 8m")
            .replace("runtime: 60s", "runtime: 1s")
            .replace("threshold: 3000\n", "threshold: 1\n")
            .replace("min_runs: 6", "min_runs: 3")
            .replace("min_days: 2", "min_days: 1")
    });
    let out = env
        .cmd()
        .args([
            "run",
            "--until-decided",
            "--engine",
            "posixaio",
            "--format",
            "json",
        ])
        .arg("--policy")
        .arg(&policy)
        .arg("--dir")
        .arg(&env.dir)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    let j: serde_json::Value =
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("not JSON ({e}): {err}"));
    assert_eq!(out.status.code(), Some(0), "{j}\n{err}");
    let s = &j["sequential"][0];
    assert_eq!(
        (s["outcome"].as_str(), s["n"].as_u64()),
        (Some("pass"), Some(3)),
        "{s}"
    );
    assert_eq!(
        env.history_lines().len(),
        3,
        "every run recorded, none after the decision"
    );
    assert!(err.contains("sequence: pass"), "{err}");
    assert_eq!(env.dir_listing(), Vec::<String>::new(), "no test file left");
}

#[test]
fn run_until_decided_names_an_unreadable_history_line_as_report_does() {
    let env = Env::new();
    // Swimlane's job at a test's scale, a floor of 4 runs: the sequence goes on.
    let policy = env.swimlane_policy("small.yaml", |y| {
        y.replace("size: 4g", "size: 8m")
            .replace("runtime: 60s", "runtime: 1s")
            .replace("min_runs: 6", "min_runs: 4")
            .replace("min_days: 2", "min_days: 1")
    });
    let run = || {
        env.cmd()
            .args([
                "run",
                "--until-decided",
                "--runs",
                "1",
                "--engine",
                "posixaio",
            ])
            .args(["--format", "json", "--policy"])
            .arg(&policy)
            .arg("--dir")
            .arg(&env.dir)
            .output()
            .unwrap()
    };
    for _ in 0..2 {
        let out = run();
        assert!(
            [0, 1, 3].contains(&out.status.code().unwrap()),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    // A line damaged between the two runs' records.
    let text = std::fs::read_to_string(&env.history).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2, "{text}");
    let damaged = format!(
        "{}\n{{\"schema_version\":1,\"timestamp\": cut\n{}\n",
        lines[0], lines[1]
    );
    std::fs::write(&env.history, &damaged).unwrap();

    // What report says of it: the file and line, and why.
    let report = env
        .cmd()
        .args(["report", "--format", "json", "--policy"])
        .arg(&policy)
        .output()
        .unwrap();
    let report_err = String::from_utf8_lossy(&report.stderr);
    let named = format!("{}:2: skipped: ", env.history.display());
    let said = report_err
        .lines()
        .find(|l| l.contains(&named))
        .unwrap_or_else(|| panic!("report does not name line 2: {report_err}"));

    // run --until-decided says the same, and judges the two readable runs and its own.
    let out = run();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!([0, 1, 3].contains(&out.status.code().unwrap()), "{err}");
    assert_eq!(
        err.lines()
            .filter(|l| l.contains(&named))
            .collect::<Vec<_>>(),
        vec![said],
        "named once, as report names it: {err}"
    );
    let j: serde_json::Value =
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("not JSON ({e}): {err}"));
    assert_eq!(j["sequential"][0]["n"].as_u64(), Some(3), "{j}");
    // The history is appended to, never rewritten: the damaged line stays where it was.
    let after = std::fs::read_to_string(&env.history).unwrap();
    assert!(after.starts_with(&damaged), "{after}");
    assert_eq!(after.lines().count(), 4);
}

#[test]
fn run_until_decided_refuses_what_would_never_decide() {
    let env = Env::new();
    for (args, flag) in [
        (vec!["--no-history"], "--no-history"),
        (vec!["--size", "8m"], "--size"),
        (vec!["--runtime", "1"], "--runtime"),
    ] {
        let out = env
            .cmd()
            .args(["run", "--until-decided", "--dir"])
            .arg(&env.dir)
            .args(&args)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.contains(flag) && err.contains("--until-decided"),
            "{err}"
        );
        assert!(env.history_lines().is_empty() && env.dir_listing().is_empty());
    }
}

#[test]
fn two_runs_say_they_are_too_few_for_an_interval_instead_of_printing_one() {
    let env = Env::new();
    // 9,000 and 60,000 IOPS by the formula: their 95% interval ran from 7.94 to 494 million.
    history(&env, &[9000.0 * 4.0 / 1024.0, 60000.0 * 4.0 / 1024.0]);
    let out = env
        .cmd()
        .args(["report", "--host", "node1", "--format", "json"])
        .output()
        .unwrap();
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let s = &j["summary"]["metrics"]["write_iops_formula"];
    assert_eq!(s["ci95_too_few"], true, "{s}");
    let high = s["ci95_high"].as_f64().unwrap();
    assert!(high > 1e6, "the interval itself stays as it was: {s}");
    for format in ["table", "markdown", "html"] {
        let out = env
            .cmd()
            .args(["report", "--host", "node1", "--format", format])
            .output()
            .unwrap();
        let text = String::from_utf8(out.stdout).unwrap();
        let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(text.contains("too few runs"), "{format}: {text}");
        let shown = format!("{:.0}", high);
        assert!(!text.contains(&shown), "{format} prints {shown}");
    }
}

#[test]
fn a_straddling_interval_is_undecided_with_the_runs_a_decision_would_take() {
    let env = Env::new();
    // Six runs over two days alternating about 2,820 and 3,840 IOPS: a mean over 3,000
    // whose interval straddles it.
    history(&env, &[11.0, 15.0, 11.0, 15.0, 11.0, 15.0]);
    let out = env
        .cmd()
        .args(["report", "--host", "node1", "--format", "json"])
        .output()
        .unwrap();
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(j["rules"][0]["marginal"], true, "the key stays");
    let reason = j["reason"].as_str().unwrap();
    assert!(reason.contains("undecided: the 95% interval"), "{reason}");
    // The distance, computed here from the Cox interval's half-width on the logs.
    let logs: Vec<f64> = [11.0f64, 15.0, 11.0, 15.0, 11.0, 15.0]
        .iter()
        .map(|m| (m / 4.0 * 1024.0).ln())
        .collect();
    let n = logs.len() as f64;
    let ly = logs.iter().sum::<f64>() / n;
    let s2 = logs.iter().map(|y| (y - ly).powi(2)).sum::<f64>() / (n - 1.0);
    let gap = (ly + s2 / 2.0 - 3000f64.ln()).abs();
    let t = |df: usize| -> f64 {
        // Student's t 97.5% from the same table the tool uses, to 30 degrees of freedom.
        [
            12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179,
            2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064,
            2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
        ][df - 1]
    };
    let m = (6..=31)
        .find(|&m| t(m - 1) * (s2 / m as f64 + s2 * s2 / (2.0 * (m - 1) as f64)).sqrt() < gap)
        .expect("within 31 runs");
    assert!(
        reason.contains(&format!("about {} more runs", m - 6)),
        "{reason}"
    );
    let table = env
        .cmd()
        .args(["report", "--host", "node1"])
        .output()
        .unwrap();
    let text = String::from_utf8(table.stdout).unwrap();
    assert!(
        text.contains("(undecided)") && !text.contains("marginal"),
        "{text}"
    );
}

/// `run --until-decided --recheck-every EVERY` of Swimlane's own test on node1 in `env.dir`.
fn recheck_run(env: &Env, every: &str) -> std::process::Output {
    env.cmd()
        .args(["run", "--until-decided", "--recheck-every", every])
        .args([
            "--host", "node1", "--engine", "posixaio", "--format", "json",
        ])
        .arg("--dir")
        .arg(&env.dir)
        .output()
        .unwrap()
}

#[test]
fn a_standing_decision_is_reported_without_a_test_until_its_recheck_is_due() {
    // Clear pass and clear fail, decided at Swimlane's floor: with the newest run less than
    // two days old, `run` tests nothing, exits with the decision's verdict and says when the
    // next re-check is due (two days after the newest run).
    for (mb_s, code, verdict) in [(24.0, 0, "pass"), (6.0, 1, "fail")] {
        let env = Env::new();
        let dir = std::fs::canonicalize(&env.dir).unwrap();
        let times = history_in(&env, &dir.display().to_string(), &around(mb_s, 0.03, 6));
        let before = env.history_lines();
        let out = recheck_run(&env, "2d");
        let err = String::from_utf8_lossy(&out.stderr);
        let j: serde_json::Value =
            serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("not JSON ({e}): {err}"));
        assert_eq!(out.status.code(), Some(code), "{j}\n{err}");
        assert_eq!(j["verdict"], verdict);
        assert_eq!(j["sequential"][0]["outcome"], verdict, "{j}");
        assert_eq!(env.history_lines(), before, "no run, no record");
        assert_eq!(env.dir_listing(), Vec::<String>::new(), "no test file");
        let due = (times.last().unwrap().with_timezone(&Utc) + Duration::days(2))
            .format("%Y-%m-%d %H:%M UTC")
            .to_string();
        assert!(
            err.contains("no test run") && err.contains(&format!("next re-check due {due}")),
            "{err}"
        );
        // Every format says it: the JSON carries the same line.
        assert!(j.to_string().contains(&due), "{j}");
    }
}

#[test]
fn run_until_decided_then_rechecks_once_per_period() {
    let env = Env::new();
    let policy = env.swimlane_policy("small.yaml", |y| {
        y.replace("size: 4g", "size: 8m")
            .replace("runtime: 60s", "runtime: 1s")
            .replace("threshold: 3000\n", "threshold: 1\n")
            .replace("min_runs: 6", "min_runs: 3")
            .replace("min_days: 2", "min_days: 1")
    });
    let run = |every: &str| {
        let out = env
            .cmd()
            .args(["run", "--until-decided", "--recheck-every", every])
            .args(["--engine", "posixaio", "--format", "json"])
            .arg("--policy")
            .arg(&policy)
            .arg("--dir")
            .arg(&env.dir)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        let j: serde_json::Value =
            serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("not JSON ({e}): {err}"));
        (out.status.code(), j, err)
    };
    // Undecided at first (no runs): tests until decided, not before the floor, and stops
    // there. How many runs real figures take to decide is the disk's (on a loaded machine
    // their spread can leave the bound short at the floor): the runs recorded are those the
    // decision says it took, never one more.
    let (code, j, err) = run("1d");
    assert_eq!(code, Some(0), "{j}\n{err}");
    let s = &j["sequential"][0];
    assert_eq!(s["outcome"].as_str(), Some("pass"), "{s}");
    // `n`: the runs the decision took; `after`: runs given after it.
    let took = s["n"].as_u64().unwrap() as usize;
    assert!(took >= 3, "not before the floor: {s}");
    assert_eq!(s["after"].as_u64(), Some(0), "stopped once decided: {s}");
    assert!(s["restarted"].is_null(), "{s}");
    assert_eq!(env.history_lines().len(), took, "{err}");
    assert!(!err.contains("no test run"), "{err}");
    // Decided seconds ago: nothing is tested.
    let (code, j, err) = run("1d");
    assert_eq!(
        (code, j["verdict"].as_str()),
        (Some(0), Some("pass")),
        "{err}"
    );
    assert_eq!(env.history_lines().len(), took, "{err}");
    assert!(err.contains("next re-check due"), "{err}");
    // The same runs two days older: the re-check is due, and it is one run, watched for a
    // step or a fall. A figure that steps away from the others (a loaded machine) restarts
    // the sequence, which then tests until decided again: one run cannot be shown then, and
    // is said to be skipped.
    let older: Vec<String> = env
        .history_lines()
        .iter()
        .map(|l| {
            let mut v = l.clone();
            let t = DateTime::parse_from_rfc3339(v["timestamp"].as_str().unwrap()).unwrap()
                - Duration::days(2);
            v["timestamp"] = serde_json::Value::String(t.to_rfc3339());
            v.to_string()
        })
        .collect();
    std::fs::write(&env.history, older.join("\n") + "\n").unwrap();
    let (code, j, err) = run("1d");
    assert_eq!(code, Some(0), "{j}\n{err}");
    assert!(!err.contains("no test run"), "{err}");
    let s = &j["sequential"][0];
    assert_eq!(s["outcome"].as_str(), Some("pass"), "{s}");
    if s["restarted"].is_null() {
        assert_eq!(s["after"].as_u64(), Some(1), "{s}");
        assert_eq!(
            env.history_lines().len(),
            took + 1,
            "one re-check run: {err}"
        );
    } else {
        assert!(env.history_lines().len() > took, "{err}");
        common::skip(&format!(
            "the re-check's figure stepped away from the earlier runs' (a loaded machine), so the sequence restarted and one re-check run cannot be shown: {s}"
        ));
    }
    assert_eq!(env.dir_listing(), Vec::<String>::new(), "no test file left");
}

#[test]
fn recheck_every_needs_until_decided_and_a_period() {
    let env = Env::new();
    for (args, says) in [
        (vec!["--recheck-every", "7d"], "--until-decided"),
        (
            vec!["--until-decided", "--recheck-every", "10s"],
            "--recheck-every",
        ),
        (
            vec!["--until-decided", "--recheck-every", "soon"],
            "--recheck-every",
        ),
    ] {
        let out = env
            .cmd()
            .args(["run", "--dir"])
            .arg(&env.dir)
            .args(&args)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
        assert!(env.history_lines().is_empty() && env.dir_listing().is_empty());
    }
}
