//! Figures that agree with each other: the line each run prints on stderr leads with the
//! figure the runs table shows (the policy's deciding metric, rounded the same way) and labels
//! fio's own IOPS figure as such; a quick look says why its runs are not counted in the
//! policy's evidence; the HTML page rounds a figure as every other format does.

mod common;

use assert_cmd::Command;
use chrono::{Duration, Local};
use iopscheck::testing::numbers::{fmt_precise, fmt_value};
use serde_json::Value;

fn iopscheck() -> Command {
    let mut c = Command::new(assert_cmd::cargo::cargo_bin!("iopscheck"));
    c.env("NO_COLOR", "1")
        .env("COLUMNS", "80")
        .env_remove("IOPSCHECK_HISTORY");
    c
}

#[test]
fn each_runs_line_leads_with_the_figure_the_table_shows_and_labels_fios() {
    let tmp = tempfile::tempdir().unwrap();
    let out = iopscheck()
        .args(["run", "--no-history", "--size", "4m", "--runtime", "1"])
        .args([
            "--runs",
            "2",
            "--interval",
            "0",
            "--format",
            "json",
            "--dir",
        ])
        .arg(tmp.path())
        .env("IOPSCHECK_LOCK_FILE", tmp.path().join("run.lock"))
        .output()
        .unwrap();
    if !common::engine_ran(&out) {
        return;
    }
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let stderr = String::from_utf8(out.stderr).unwrap();
    let metric = v["rules"][0]["metric"].as_str().unwrap();
    assert_eq!(metric, "write_iops_formula");
    for (i, run) in v["runs"].as_array().unwrap().iter().enumerate() {
        let m = &run["metrics"];
        let want = format!(
            "run {}/2: write_iops_formula {} IOPS (fio's IOPS={}), ",
            i + 1,
            fmt_value(m[metric].as_f64().unwrap()),
            fmt_value(m["write_iops"].as_f64().unwrap())
        );
        assert!(
            stderr.lines().any(|l| l.starts_with(&want)),
            "no `{want}` in:\n{stderr}"
        );
    }

    // The same runs in the table: each run's row shows the figure its line led with.
    let table = iopscheck()
        .args(["run", "--no-history", "--size", "4m", "--runtime", "1"])
        .args(["--runs", "2", "--interval", "0", "--dir"])
        .arg(tmp.path())
        .env("IOPSCHECK_LOCK_FILE", tmp.path().join("run.lock"))
        .output()
        .unwrap();
    let (text, err) = (
        String::from_utf8(table.stdout).unwrap(),
        String::from_utf8(table.stderr).unwrap(),
    );
    for line in err.lines().filter(|l| l.starts_with("run ")) {
        let figure = line
            .split_whitespace()
            .nth(3)
            .unwrap_or_else(|| panic!("{line}"));
        assert!(
            text.lines()
                .any(|row| row.split_whitespace().any(|w| w == figure)),
            "the table lacks {figure} ({line}):\n{text}"
        );
    }
    // A quick look: its runs are shown, and the evidence line says why none of them counts.
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        flat.contains(
            "0 of 6 runs over 0 of 2 days — 6 more runs over 2 more days (this sitting's 2 runs are not the policy's test, so not counted)"
        ),
        "{text}"
    );
    assert!(flat.contains("for this sitting of 2 runs;"), "{text}");
}

#[test]
fn the_html_page_rounds_each_figure_as_every_other_format_does() {
    let tmp = tempfile::tempdir().unwrap();
    let history = tmp.path().join("h.jsonl");
    // 21.8331 MB/s: 5330.35 fio IOPS, 5589.27 by the formula; shown everywhere as 5330, 5589.
    let now = Local::now();
    let mut text = String::new();
    for day in 0..2 {
        for i in 0..3 {
            let t = (now - Duration::days(day) - Duration::minutes(10 * (i + 1))).fixed_offset();
            let r = common::swimlane_record("node1", "/data", t, 21.8331);
            text.push_str(&serde_json::to_string(&r).unwrap());
            text.push('\n');
        }
    }
    std::fs::write(&history, text).unwrap();
    let formula = iopscheck::testing::metrics::iops_formula(21.8331, 4096);
    assert_ne!(
        fmt_precise(formula),
        fmt_value(formula),
        "a figure with decimals"
    );
    let mut shown = Vec::new();
    for f in ["html", "markdown", "table", "summary"] {
        let out = iopscheck()
            .args(["report", "--host", "node1", "--format", f, "--history"])
            .arg(&history)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{f}");
        let page = String::from_utf8(out.stdout).unwrap();
        assert!(
            !page.contains(&fmt_precise(formula)),
            "{f} shows {}:\n{page}",
            fmt_precise(formula)
        );
        assert!(page.contains(&fmt_value(formula)), "{f}");
        shown.push(f);
    }
    assert_eq!(shown.len(), 4);
}
