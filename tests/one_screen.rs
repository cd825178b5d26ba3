//! One screen by default: the default Swimlane run, at 80 columns, prints its runs, rules,
//! the warnings that matter and the verdict in about 40 lines (stdout and stderr together, as
//! a terminal shows them); each run's internals and the per-rule statistics come with
//! `--verbose`, and every machine format keeps them.

mod common;

use assert_cmd::Command;
use serde_json::Value;

fn run(tmp: &std::path::Path, extra: &[&str]) -> Option<(String, String)> {
    let out = Command::new(assert_cmd::cargo::cargo_bin!("iopscheck"))
        .env("NO_COLOR", "1")
        .env("COLUMNS", "80")
        .env_remove("IOPSCHECK_HISTORY")
        .env("IOPSCHECK_LOCK_FILE", tmp.join("run.lock"))
        // The default three runs, on a small file for a second each.
        .args(["run", "--no-history", "--size", "8m", "--runtime", "1"])
        .args(["--interval", "0", "--dir"])
        .arg(tmp)
        .args(extra)
        .output()
        .unwrap();
    if !common::engine_ran(&out) {
        return None;
    }
    Some((
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    ))
}

#[test]
fn the_default_run_fits_one_screen_and_verbose_shows_the_runs_internals() {
    let tmp = tempfile::tempdir().unwrap();
    let Some((stdout, stderr)) = run(tmp.path(), &[]) else {
        return;
    };
    let all = format!("{stderr}{stdout}");
    let lines: Vec<&str> = all.lines().collect();
    assert!(
        lines.len() <= 40,
        "{} lines at 80 columns:\n{all}",
        lines.len()
    );
    assert!(
        lines.iter().all(|l| l.chars().count() <= 80),
        "a line wider than 80 columns:\n{all}"
    );
    // What the screen holds: each run, the runs table, the deciding rule, the verdict last.
    for i in 1..=3 {
        assert!(stderr.contains(&format!("run {i}/3: ")), "{stderr}");
    }
    assert!(stdout.contains("│ mean "), "{stdout}");
    assert!(stdout.contains("decides  write_iops_formula"), "{stdout}");
    assert!(
        stdout
            .lines()
            .last()
            .is_some_and(|l| l.starts_with("         "))
            || stdout
                .lines()
                .last()
                .is_some_and(|l| l.starts_with("verdict: ")),
        "{stdout}"
    );
    // What waits behind --verbose, and says so.
    assert!(!stdout.contains("inside the runs:"), "{stdout}");
    assert!(!stdout.contains("per rule:"), "{stdout}");
    assert!(
        stdout.contains("(more with --verbose; every figure with --format json)"),
        "{stdout}"
    );

    let Some((verbose, verbose_err)) = run(tmp.path(), &["--verbose"]) else {
        return;
    };
    assert!(verbose.contains("inside the runs:"), "{verbose}");
    assert!(verbose.contains("per rule:"), "{verbose}");
    assert!(verbose.contains("source: "), "{verbose}");
    assert!(
        verbose.lines().count() + verbose_err.lines().count() > lines.len(),
        "--verbose shows more"
    );

    // Every machine format keeps the runs' internals, verbose or not.
    let Some((json, _)) = run(tmp.path(), &["--format", "json"]) else {
        return;
    };
    let v: Value = serde_json::from_str(&json).unwrap();
    for r in v["runs"].as_array().unwrap() {
        assert!(r["iops_series"].is_object(), "{r:#}");
        assert!(r["metrics"]["write_iops_samples"].is_number(), "{r:#}");
    }
}
