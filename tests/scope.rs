//! Every path says which verdict it is: the same runs judged as one sitting (`run`, `import`)
//! and as a history (`report`) can give different verdicts, and every format of every command
//! names, with the verdict, which of the two answered and where the policy's evidence over
//! days stands.

mod common;

use std::path::Path;

use assert_cmd::Command;
use chrono::{Duration, Local};
use serde_json::Value;

fn iopscheck() -> Command {
    let mut c = Command::new(assert_cmd::cargo::cargo_bin!("iopscheck"));
    c.env("NO_COLOR", "1")
        .env("COLUMNS", "80")
        .env_remove("IOPSCHECK_HISTORY");
    c
}

const FORMATS: [&str; 9] = common::REPORT_FORMATS;

/// Each format's output of `args`, and the exit codes (the same for every format).
fn every_format(args: &[&str], env: &[(&str, &Path)]) -> (Vec<(String, String)>, i32) {
    let mut outs = Vec::new();
    let mut codes = Vec::new();
    for f in FORMATS {
        let mut c = iopscheck();
        c.args(args).args(["--format", f]);
        for (k, v) in env {
            c.env(k, v);
        }
        let out = c.output().unwrap();
        codes.push(out.status.code().unwrap());
        outs.push((f.to_string(), String::from_utf8(out.stdout).unwrap()));
    }
    codes.dedup();
    assert_eq!(codes.len(), 1, "every format, one exit code: {codes:?}");
    (outs, codes[0])
}

/// Text as a reader sees it: tags out, HTML's and XML's escapes undone, Markdown's backslashes gone,
/// lines joined (the terminal wraps at 80 columns).
fn flat(text: &str) -> String {
    // Tags out (HTML, JUnit's XML): their text is what a reader sees.
    let mut plain = String::with_capacity(text.len());
    let mut in_tag = false;
    for c in text.chars() {
        match c {
            '<' => in_tag = true,
            '>' if in_tag => {
                in_tag = false;
                plain.push(' ');
            }
            _ if !in_tag => plain.push(c),
            _ => {}
        }
    }
    let t = plain
        .replace("&#39;", "'")
        .replace("&apos;", "'")
        .replace("&quot;", "\"")
        .replace('\\', "");
    t.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The scope as the one-line summary words it: "for this sitting of 3 runs", "for 1 imported
/// run" (the tally of the policy's rule is the longer formats'); the history's as it is.
fn short(phrase: &str) -> String {
    match phrase.split_once("; the policy's evidence over days: ") {
        Some((scope, _)) => scope.replace("for the ", "for ").replace(" as given", ""),
        None => phrase.to_string(),
    }
}

/// The verdict's line (or element) in each format holds the scope phrase, beside the verdict.
fn assert_named(outs: &[(String, String)], verdict: &str, phrase: &str) {
    for (f, text) in outs {
        let t = flat(text);
        let upper = verdict.to_uppercase();
        let at = match f.as_str() {
            "json" | "jsonl" => {
                let v: Value = serde_json::from_str(text).unwrap();
                assert_eq!(v["verdict"], verdict, "{f}");
                assert_eq!(v["judged_on"], phrase, "{f}");
                continue;
            }
            "csv" => {
                let mut r = csv::Reader::from_reader(text.as_bytes());
                let h = r.headers().unwrap().clone();
                let row = r.records().next().unwrap().unwrap();
                let col = |name: &str| h.iter().position(|c| c == name).unwrap();
                assert_eq!(&row[col("verdict")], verdict, "{f}");
                assert_eq!(&row[col("judged_on")], phrase, "{f}");
                continue;
            }
            "table" | "junit" => format!("verdict: {upper} {phrase} — "),
            "markdown" => format!("{upper}** {phrase} — "),
            "prometheus" => format!("verdict {verdict} {phrase}: "),
            "html" => format!("{upper} {phrase}"),
            "summary" => format!("{upper} "),
            _ => unreachable!(),
        };
        // the one-line summary says it in fewer words
        let phrase = if f == "summary" {
            short(phrase)
        } else {
            phrase.to_string()
        };
        assert!(t.contains(&at), "{f}: no `{at}` in:\n{text}");
        assert!(t.contains(&phrase), "{f}: no `{phrase}` in:\n{text}");
    }
}

fn write_history(path: &Path, records: &[iopscheck::testing::history::Record]) {
    let mut text = String::new();
    for r in records {
        text.push_str(&serde_json::to_string(r).unwrap());
        text.push('\n');
    }
    std::fs::write(path, text).unwrap();
}

#[test]
fn a_report_says_it_judged_the_history_under_the_policys_rule_in_every_format() {
    let tmp = tempfile::tempdir().unwrap();
    let history = tmp.path().join("h.jsonl");
    // Three runs an hour apart, on one day: a sitting's worth, not the policy's days.
    let now = Local::now();
    let records: Vec<_> = (1..=3)
        .map(|i| {
            common::swimlane_record(
                "node1",
                "/data",
                (now - Duration::minutes(10 * i)).fixed_offset(),
                16.4,
            )
        })
        .collect();
    write_history(&history, &records);
    let h = history.to_str().unwrap();
    let (outs, code) = every_format(&["report", "--host", "node1", "--history", h], &[]);
    assert_eq!(code, 3);
    // Days are local dates; three runs 10-30 minutes ago may straddle midnight.
    let days = records
        .iter()
        .map(|r| r.timestamp.date_naive())
        .collect::<std::collections::BTreeSet<_>>()
        .len();
    assert_named(
        &outs,
        "inconclusive",
        &format!("on the history: 3 of 6 runs, {days} of 2 days"),
    );
}

#[test]
fn an_import_says_it_judged_the_runs_given_as_they_are_in_every_format() {
    let f = common::fixture("fio-3.33-posixaio-randwrite.txt");
    let (outs, _) = every_format(&["import", f.to_str().unwrap()], &[]);
    let v: Value = serde_json::from_str(&outs[1].1).unwrap();
    let verdict = v["verdict"].as_str().unwrap().to_string();
    assert_named(
        &outs,
        &verdict,
        // A 256 MiB, 5 s job is not the policy's test: none of the policy's evidence.
        "for the 1 imported run as given; the policy's evidence over days: 0 of 6 runs, 0 of 2 days",
    );
}

#[test]
fn a_run_says_it_judged_this_sitting_and_where_the_history_stands_in_every_format() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("d");
    std::fs::create_dir(&dir).unwrap();
    let history = tmp.path().join("h.jsonl");
    let lock = tmp.path().join("run.lock");
    // Each format is one more sitting of two runs, recorded. A 4 MiB file for a second is
    // not the policy's test: the history gathers none of the policy's evidence, and each
    // sitting's verdict line says so, never counting its own runs towards it.
    for f in FORMATS {
        let out = iopscheck()
            .args(["run", "--quiet", "--size", "4m", "--runtime", "1"])
            .args(["--runs", "2", "--interval", "0", "--format", f, "--dir"])
            .arg(&dir)
            .arg("--history")
            .arg(&history)
            .env("IOPSCHECK_LOCK_FILE", &lock)
            .output()
            .unwrap();
        if !common::engine_ran(&out) {
            return;
        }
        assert_eq!(out.status.code(), Some(3), "never a pass on another test");
        let text = String::from_utf8(out.stdout).unwrap();
        assert_named(
            &[(f.to_string(), text)],
            "inconclusive",
            "for this sitting of 2 runs; the policy's evidence over days: 0 of 6 runs, 0 of 2 days",
        );
    }
    assert_eq!(
        std::fs::read_to_string(&history).unwrap().lines().count(),
        2 * FORMATS.len(),
        "every sitting recorded"
    );
}
