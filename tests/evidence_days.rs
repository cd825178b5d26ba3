//! The policy's days of evidence are days apart, not dates: runs minutes apart across midnight
//! are one sitting on one cache state, whatever their dates, and a day counts only with the
//! policy's runs for a day (`min_runs_per_day`, default one) made 12 h or more after the day
//! counted before it. `report` and `run` (its count of the history's evidence) count alike; a record written
//! twice is one run in both.

mod common;

use chrono::{DateTime, Duration, FixedOffset, Utc};
use common::{Env, swimlane_record, three_a_day};
use serde_json::Value;

/// Midnight UTC `days_ago` days back.
fn midnight(days_ago: i64) -> DateTime<FixedOffset> {
    (Utc::now().date_naive() - Duration::days(days_ago))
        .and_hms_opt(0, 0, 0)
        .unwrap()
        .and_utc()
        .fixed_offset()
}

/// Swimlane runs (16.4 MB/s: a pass) of `host` in `dir` at `times`, as history lines.
fn lines(host: &str, dir: &str, times: &[DateTime<FixedOffset>]) -> String {
    let mut text = String::new();
    for &t in times {
        text.push_str(&serde_json::to_string(&swimlane_record(host, dir, t, 16.4)).unwrap());
        text.push('\n');
    }
    text
}

/// Five runs at 23:50–23:58 the day before yesterday and one at 00:01 yesterday (UTC).
fn five_before_midnight_one_after() -> Vec<DateTime<FixedOffset>> {
    let mut t: Vec<_> = (0..5)
        .map(|i| midnight(1) - Duration::minutes(10 - 2 * i))
        .collect();
    t.push(midnight(1) + Duration::minutes(1));
    t
}

fn report(env: &Env, args: &[&str]) -> (Option<i32>, String) {
    let out = env.cmd().arg("report").args(args).output().unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

fn report_json(env: &Env, args: &[&str]) -> (Option<i32>, Value) {
    let (code, out) = report(env, &[args, &["--format", "json"]].concat());
    (code, serde_json::from_str(&out).unwrap())
}

#[test]
fn six_runs_minutes_apart_across_midnight_are_one_day_and_inconclusive() {
    let env = Env::new();
    std::fs::write(
        &env.history,
        lines("node1", "/data", &five_before_midnight_one_after()),
    )
    .unwrap();
    let (code, j) = report_json(&env, &["--host", "node1"]);
    assert_eq!(code, Some(3), "{j}");
    assert_eq!(j["verdict"], "inconclusive", "{}", j["reason"]);
    let e = &j["evidence"];
    assert_eq!((&e["runs"], &e["days"]), (&6.into(), &1.into()), "{e}");
    assert_eq!(e["calendar_days"], 2, "{e}");
    assert_eq!(e["min_runs_per_day"], 1, "{e}");
    assert_eq!(j["summary"]["days"], 1, "{}", j["summary"]);

    // The table says why the second date is no day of evidence, and what makes one.
    let (code, text) = report(&env, &["--host", "node1"]);
    assert_eq!(code, Some(3), "{text}");
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        flat.contains(
            "6 of 6 runs over 1 of 2 days (the runs fall on 2 calendar days, 1 of them not counted: a day counts with a run made 12 h or more after the last run of the day counted before it) — run again on 1 more day"
        ),
        "{text}"
    );
    assert!(!flat.contains("PASS"), "{text}");
}

#[test]
fn a_policys_runs_per_day_make_a_day_count() {
    // A policy asking for three runs a day: five one day and one the next day, a day apart,
    // are one day of its evidence; one run a day is enough under Swimlane's own rule.
    let env = Env::new();
    let policy = env.swimlane_policy("three-a-day.yaml", |s| {
        s.replace("  min_days: 2\n", "  min_days: 2\n  min_runs_per_day: 3\n")
    });
    let mut times: Vec<_> = (0..5)
        .map(|i| midnight(2) + Duration::hours(8 + i))
        .collect();
    times.push(midnight(1) + Duration::hours(12));
    std::fs::write(&env.history, lines("node1", "/data", &times)).unwrap();
    let p = policy.to_str().unwrap();
    let (code, j) = report_json(&env, &["-p", p, "--host", "node1"]);
    assert_eq!(code, Some(3), "{j}");
    assert_eq!(j["evidence"]["days"], 1, "{}", j["evidence"]);
    assert_eq!(j["evidence"]["calendar_days"], 2, "{}", j["evidence"]);
    assert_eq!(j["evidence"]["min_runs_per_day"], 3, "{}", j["evidence"]);
    let (_, text) = report(&env, &["-p", p, "--host", "node1"]);
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        flat.contains("a day counts with 3 runs made 12 h or more after the last run of the day counted before it"),
        "{text}"
    );
    let (code, j) = report_json(&env, &["--host", "node1"]);
    assert_eq!(code, Some(0), "{}", j["reason"]);
    assert_eq!(j["evidence"]["days"], 2, "{}", j["evidence"]);
}

#[test]
fn three_runs_a_day_on_two_days_still_pass() {
    let env = Env::new();
    let (text, _) = three_a_day("node1", "/data", &[16.4; 6]);
    std::fs::write(&env.history, text).unwrap();
    let (code, j) = report_json(&env, &["--host", "node1"]);
    assert_eq!(code, Some(0), "{}", j["reason"]);
    assert_eq!(j["verdict"], "pass");
    assert_eq!(j["evidence"]["days"], 2, "{}", j["evidence"]);
    assert_eq!(j["evidence"]["calendar_days"], 2, "{}", j["evidence"]);
    let (_, text) = report(&env, &["--host", "node1"]);
    assert!(
        text.contains("6 of 6 runs over 2 of 2 days: enough evidence"),
        "{text}"
    );
}

/// `iopscheck run` of a small test (not the policy's: it never counts itself) on `env.dir`
/// as `host`, in JSON; None where the engine cannot run here (said).
fn run_json(env: &Env, host: &str) -> Option<Value> {
    let out = env
        .cmd()
        .args([
            "run",
            "--quiet",
            "--size",
            "4m",
            "--runtime",
            "1",
            "--runs",
            "1",
        ])
        .args([
            "--engine", "posixaio", "--host", host, "--format", "json", "--dir",
        ])
        .arg(&env.dir)
        .output()
        .unwrap();
    if !common::engine_ran(&out) {
        return None;
    }
    Some(serde_json::from_slice(&out.stdout).unwrap())
}

#[test]
fn run_counts_the_historys_days_as_report_does() {
    let env = Env::new();
    let dir = std::fs::canonicalize(&env.dir).unwrap();
    let dir = dir.to_str().unwrap();
    std::fs::write(
        &env.history,
        lines("node1", dir, &five_before_midnight_one_after()),
    )
    .unwrap();
    let (_, rep) = report_json(&env, &["--host", "node1", "--dir", dir]);
    assert_eq!(rep["evidence"]["days"], 1, "{}", rep["evidence"]);
    let Some(j) = run_json(&env, "node1") else {
        return;
    };
    let e = &j["evidence"];
    assert_eq!((&e["runs"], &e["days"]), (&6.into(), &1.into()), "{e}");
    assert_eq!(e["calendar_days"], 2, "{e}");
    assert!(
        j["judged_on"]
            .as_str()
            .unwrap()
            .contains("6 of 6 runs, 1 of 2 days (2 calendar days, 1 not counted)"),
        "{}",
        j["judged_on"]
    );
}

#[test]
fn run_counts_a_record_written_twice_once_as_report_does() {
    let env = Env::new();
    let dir = std::fs::canonicalize(&env.dir).unwrap();
    let dir = dir.to_str().unwrap();
    // three runs a day over two days, the history concatenated with itself
    let (once, _) = three_a_day("node1", dir, &[16.4; 6]);
    std::fs::write(&env.history, format!("{once}{once}")).unwrap();
    let (_, rep) = report_json(&env, &["--host", "node1", "--dir", dir]);
    assert_eq!(rep["evidence"]["runs"], 6, "{}", rep["evidence"]);
    let Some(j) = run_json(&env, "node1") else {
        return;
    };
    assert_eq!(j["evidence"]["runs"], 6, "{}", j["evidence"]);
    assert_eq!(j["evidence"]["days"], 2, "{}", j["evidence"]);
}
