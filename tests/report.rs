//! `iopscheck report` over histories built with `import --record` from real fio outputs placed
//! at chosen times: per-day figures, the evidence rule, verdicts and exit codes 0, 1 and 3.

mod common;

use chrono::{Duration, TimeZone, Utc};
use common::{Env, fixture};
use predicates::prelude::*;
use serde_json::Value;

/// Records fio-3.33-sample.json (212 MB/s: far above Swimlane's minimum) as run on `host`
/// at each of `times` (seconds since the epoch), as a customer's outputs would arrive.
fn record_at(env: &Env, host: &str, times: &[i64]) {
    let base: Value =
        serde_json::from_slice(&std::fs::read(fixture("fio-3.33-sample.json")).unwrap()).unwrap();
    for (i, t) in times.iter().enumerate() {
        let mut v = base.clone();
        // Restated as the policy's own job (4 GiB, 60 s, end fsync), measured over 60 s: a
        // report counts only runs of the policy's test, and its mechanics, not these figures,
        // are under test here.
        v["jobs"][0]["job options"]["size"] = "4g".into();
        v["jobs"][0]["job options"]["runtime"] = "60".into();
        v["jobs"][0]["job options"]["time_based"] = "1".into();
        // Each host's outputs are its own fio runs (fio ≥ 3.36 names each job's start): one
        // fio run is one run of one machine, and `--record` refuses it for a second host.
        let salt: i64 = host.bytes().map(i64::from).sum();
        v["jobs"][0]["job_start"] = (*t * 1000 + salt).into();
        common::sixty_seconds(&mut v["jobs"][0]);
        v["timestamp"] = (*t).into();
        v["timestamp_ms"] = (*t * 1000).into();
        let p = env.tmp.path().join(format!("{host}-{i}.json"));
        std::fs::write(&p, serde_json::to_vec_pretty(&v).unwrap()).unwrap();
        env.cmd()
            .args(["import", "--record", "--dir", "/data", "--host", host])
            .arg(&p)
            .assert()
            .success();
    }
}

/// Noon UTC `days_ago` days back, plus `hour` hours.
fn at(days_ago: i64, hour: i64) -> i64 {
    let today = Utc::now().date_naive();
    let noon = Utc
        .from_utc_datetime(&today.and_hms_opt(12, 0, 0).unwrap())
        .timestamp();
    noon - days_ago * 86400 + hour * 3600
        - if Utc::now().timestamp() < noon {
            86400
        } else {
            0
        }
}

fn report(env: &Env, args: &[&str]) -> assert_cmd::assert::Assert {
    env.cmd().arg("report").args(args).assert()
}

#[test]
fn six_runs_over_two_days_pass_with_the_per_day_table() {
    let env = Env::new();
    record_at(
        &env,
        "node1",
        &[at(2, 0), at(2, 1), at(2, 2), at(1, 0), at(1, 1), at(1, 2)],
    );
    let out = report(&env, &["--host", "node1"])
        .code(0)
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(out).unwrap();
    assert!(text.contains("per day"), "{text}");
    let day = |d: i64| {
        chrono::DateTime::from_timestamp(at(d, 0), 0)
            .unwrap()
            .date_naive()
            .to_string()
    };
    for d in [day(2), day(1)] {
        let line = text
            .lines()
            .find(|l| l.contains(&d))
            .unwrap_or_else(|| panic!("{d}: {text}"));
        assert!(
            line.contains("runs   3") || line.contains("runs 3"),
            "{line}"
        );
    }
    assert!(text.contains("6 of 6 runs over 2 of 2 days"), "{text}");
    // per rule: n, days, mean, median, stdev, CV, 95% interval, threshold
    let rule = text
        .lines()
        .find(|l| l.contains("write_iops_formula") && l.contains("≥ 3000") && l.contains('┆'))
        .unwrap_or_else(|| panic!("{text}"));
    let cells: Vec<&str> = rule
        .split('┆')
        .map(|c| c.trim_matches(|c: char| c == '│' || c.is_whitespace()))
        .collect();
    assert_eq!(&cells[1..3], ["6", "2"], "{rule}");
    assert!(text.contains("95% CI"), "{text}");
    assert!(text.contains("verdict: PASS"), "{text}");
}

#[test]
fn one_day_of_runs_is_inconclusive_and_says_what_is_missing() {
    let env = Env::new();
    record_at(&env, "node1", &[at(1, 0), at(1, 1), at(1, 2)]);
    report(&env, &["--host", "node1"])
        .code(3)
        .stdout(predicate::str::contains("3 of 6 runs over 1 of 2 days"))
        .stdout(predicate::str::contains(
            "3 more runs, at least one of them tomorrow",
        ))
        .stdout(predicate::str::contains("INCONCLUSIVE"));
}

#[test]
fn the_same_evidence_against_a_stricter_policy_fails() {
    let env = Env::new();
    record_at(
        &env,
        "node1",
        &[at(2, 0), at(2, 1), at(2, 2), at(1, 0), at(1, 1), at(1, 2)],
    );
    let p = env.swimlane_policy("strict.yaml", |y| {
        y.replacen("threshold: 3000", "threshold: 1000000", 1)
    });
    let out = env
        .cmd()
        .args(["report", "--host", "node1", "--format", "json", "--policy"])
        .arg(&p)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let j: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(j["verdict"], "fail");
    let s = &j["summary"];
    assert_eq!(s["n"], 6);
    assert_eq!(s["days"], 2);
    let f = &s["metrics"]["write_iops_formula"];
    for k in [
        "mean",
        "median",
        "min",
        "max",
        "stdev",
        "cv",
        "ci95_low",
        "ci95_high",
    ] {
        assert!(f[k].is_number(), "{k}: {f}");
    }
    assert_eq!(j["rules"][0]["passed"], false);
}

#[test]
fn the_window_and_hosts_select_runs_and_groups_are_never_mixed() {
    let env = Env::new();
    record_at(&env, "node1", &[at(20, 0), at(2, 0), at(1, 0)]);
    record_at(&env, "node2", &[at(1, 0)]);
    // default window (7 days): the 20-day-old run is out
    let out = env
        .cmd()
        .args(["report", "--host", "node1", "--format", "json"])
        .output()
        .unwrap();
    let j: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(j["summary"]["n"], 2);
    assert_eq!(j["group"]["host"], "node1");
    // a wider window takes it in
    let out = env
        .cmd()
        .args([
            "report", "--host", "node1", "--since", "30d", "--format", "json",
        ])
        .output()
        .unwrap();
    let j: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(j["summary"]["n"], 3);
    // every host: one evaluation each
    let out = env
        .cmd()
        .args(["report", "--host", "all"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(text.matches("verdict: ").count(), 2, "{text}");
    // but one JSON object cannot hold two groups: say how to choose
    env.cmd()
        .args(["report", "--host", "all", "--format", "json"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("2 groups match"));
    // the list of what the history holds
    report(&env, &["--list"])
        .code(0)
        .stdout(predicate::str::contains("node1"))
        .stdout(predicate::str::contains("node2"))
        .stdout(predicate::str::contains("fio/posixaio"));
}

#[test]
fn a_report_goes_to_every_format_in_one_call() {
    let env = Env::new();
    record_at(
        &env,
        "node1",
        &[at(2, 0), at(2, 1), at(2, 2), at(1, 0), at(1, 1), at(1, 2)],
    );
    let d = env.tmp.path();
    let (csv, junit, html, prom, md) = (
        d.join("r.csv"),
        d.join("r.xml"),
        d.join("r.html"),
        d.join("r.prom"),
        d.join("r.md"),
    );
    env.cmd()
        .args(["report", "--host", "node1", "--format", "json"])
        .arg("--export")
        .arg(format!("csv={}", csv.display()))
        .arg("--export")
        .arg(format!("junit={}", junit.display()))
        .arg("--export")
        .arg(format!("html={}", html.display()))
        .arg("--export")
        .arg(format!("prometheus={}", prom.display()))
        .arg("--export")
        .arg(format!("markdown={}", md.display()))
        .assert()
        .code(0);
    let csv = std::fs::read_to_string(&csv).unwrap();
    assert_eq!(csv.lines().filter(|l| l.contains("node1")).count(), 6);
    assert!(
        std::fs::read_to_string(&junit)
            .unwrap()
            .contains("failures=\"0\"")
    );
    let html = std::fs::read_to_string(&html).unwrap();
    assert_eq!(html.matches("class=\"run\"").count(), 6);
    assert!(html.contains("class=\"threshold\""));
    let prom = std::fs::read_to_string(&prom).unwrap();
    assert!(prom.contains("iopscheck_verdict{"), "{prom}");
    assert!(
        std::fs::read_to_string(&md)
            .unwrap()
            .contains("**Verdict: ✅ PASS**")
    );
    // nothing but the five reports and the inputs: no temporary files left
    let left: Vec<String> = common::listing(d)
        .into_iter()
        .filter(|n| n.contains(".tmp"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn a_history_line_of_another_type_or_a_newer_schema_is_skipped_with_a_warning() {
    let env = Env::new();
    record_at(&env, "node1", &[at(1, 0)]);
    let good = std::fs::read_to_string(&env.history).unwrap();
    let newer = good.replace("\"schema_version\":1", "\"schema_version\":9");
    let wrong = good.replace("\"host\":\"node1\"", "\"host\":[1]");
    std::fs::write(&env.history, format!("{good}{newer}{wrong}")).unwrap();
    let before = std::fs::read(&env.history).unwrap();
    report(&env, &["--host", "node1"])
        .stderr(predicate::str::contains("history.jsonl:2: skipped"))
        .stderr(predicate::str::contains("newer"))
        .stderr(predicate::str::contains("history.jsonl:3: skipped"));
    assert_eq!(
        std::fs::read(&env.history).unwrap(),
        before,
        "the history is never rewritten"
    );
}

#[test]
fn run_waits_between_runs_when_asked() {
    let env = Env::new();
    let t = std::time::Instant::now();
    env.cmd()
        .args([
            "run",
            "--size",
            "16m",
            "--runtime",
            "1",
            "--runs",
            "2",
            "--interval",
            "2s",
        ])
        .args(["--engine", "psync", "--dir"])
        .arg(&env.dir)
        .assert()
        .code(3);
    assert!(t.elapsed() >= std::time::Duration::from_secs(4));
    let lines = env.history_lines();
    assert_eq!(lines.len(), 2);
    let ts = |i: usize| {
        chrono::DateTime::parse_from_rfc3339(lines[i]["timestamp"].as_str().unwrap()).unwrap()
    };
    assert!(ts(1) - ts(0) >= Duration::seconds(3));
}

#[test]
fn a_since_that_is_neither_a_duration_nor_a_date_names_the_flag_in_every_command() {
    let env = Env::new();
    for cmd in ["report", "fleet", "bundle"] {
        let mut c = env.cmd();
        c.args([cmd, "--since", "last tuesday"]);
        if cmd == "fleet" {
            c.arg(&env.history);
        }
        c.assert()
            .code(2)
            .stderr(
                predicate::str::contains("--since").and(predicate::str::contains(
                    "'last tuesday' is neither a duration (7d, 36h) nor a date",
                )),
            );
    }
}

/// A long history: 3 days of a run every 5 minutes (864 runs, past the runs table's 200),
/// with other hosts' runs, blank and torn lines between them, and one run with a series and
/// the disks' account. JSON lists every run as the history holds it (the records are read
/// again from the file by their place in it); Markdown and HTML show a row per day and say
/// so; the runs the verdict counts are the same in every format.
#[test]
fn a_long_history_is_listed_whole_in_json_and_by_day_in_markdown_and_html() {
    let env = Env::new();
    let start = Utc::now() - Duration::days(3);
    let mut lines = Vec::new();
    let mut ours = Vec::new();
    for i in 0..3 * 288 {
        let t = (start + Duration::minutes(5 * i)).fixed_offset();
        let mut r = common::swimlane_record("node1", "/data", t, 16.0 + (i % 5) as f64);
        if i == 3 * 288 - 1 {
            r.iops_series = Some(iopscheck::testing::measure::Series {
                interval_ms: 500,
                write: vec![4000, 4100, 900],
                read: vec![],
                last_ms: 250,
                end_fsync_ms: Some(80.0),
            });
            r.disk_stats = vec![iopscheck::testing::measure::DiskStat {
                name: "vdb".into(),
                write_ios: 8100,
                util_pct: 97.5,
                ..Default::default()
            }];
        }
        let line = serde_json::to_string(&r).unwrap();
        ours.push(serde_json::to_value(&r).unwrap());
        lines.push(line);
        if i % 100 == 7 {
            let other = common::swimlane_record("node2", "/data", t, 3.0);
            lines.push(serde_json::to_string(&other).unwrap());
            lines.push(String::new());
            lines.push("{\"schema_version\":1,\"timest".into());
        }
    }
    std::fs::write(&env.history, lines.join("\n") + "\n").unwrap();

    let out = report(&env, &["--host", "node1", "--format", "json"])
        .success()
        .get_output()
        .stdout
        .clone();
    let v: Value = serde_json::from_slice(&out).unwrap();
    let runs = v["runs"].as_array().unwrap();
    assert_eq!(runs.len(), ours.len());
    assert_eq!(runs, &ours, "every run's whole record, in order");
    assert_eq!(runs.last().unwrap()["disk_stats"][0]["name"], "vdb");
    assert_eq!(v["evidence"]["runs"], ours.len());

    let md = report(&env, &["--host", "node1", "--format", "markdown"])
        .success()
        .get_output()
        .stdout
        .clone();
    let md = String::from_utf8(md).unwrap();
    assert!(
        md.contains(&format!("{} runs: one row per day", ours.len())),
        "{md}"
    );
    let runs_section = &md[md.find("## Runs").unwrap()..md.find("## Rules").unwrap_or(md.len())];
    // a header, its rule, a row per day the runs fall on (3 or 4 days) and the aggregate
    let rows = runs_section.lines().filter(|l| l.starts_with('|')).count();
    assert!((2 + 3 + 1..=2 + 4 + 1).contains(&rows), "{runs_section}");
    assert!(runs_section.contains("| 288 runs |"), "{runs_section}");

    let html = report(&env, &["--host", "node1", "--format", "html"])
        .success()
        .get_output()
        .stdout
        .clone();
    let html = String::from_utf8(html).unwrap();
    assert!(html.contains(&format!("{} runs: one row per day", ours.len())));
    assert!(html.contains("All metrics, the mean of each day"));
    // the one run with a series is drawn, read again from the history
    assert_eq!(html.matches("<figure class=\"series\">").count(), 1);
    // the table's disk line comes from the last run's record, read again
    report(&env, &["--host", "node1", "--verbose"])
        .success()
        .stdout(predicate::str::contains("disk vdb: ios=0/8100"));
}

/// Whitespace runs as one space: the terminal wraps long lines.
fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[test]
fn a_history_whose_runs_are_all_left_out_lists_each_with_why_in_every_format() {
    let env = Env::new();
    // fio-3.33-sample.json as it is (256 MiB for 5 s: not Swimlane's test), twice yesterday
    // and once dated two days ahead: three runs, none of them counted, for two reasons.
    let base: Value =
        serde_json::from_slice(&std::fs::read(fixture("fio-3.33-sample.json")).unwrap()).unwrap();
    let ahead = Utc::now().timestamp() + 2 * 86400;
    for (i, t) in [at(1, 0), at(1, 1), ahead].iter().enumerate() {
        let mut v = base.clone();
        v["timestamp"] = (*t).into();
        v["timestamp_ms"] = (*t * 1000).into();
        let p = env.tmp.path().join(format!("left-out-{i}.json"));
        std::fs::write(&p, serde_json::to_vec_pretty(&v).unwrap()).unwrap();
        env.cmd()
            .args(["import", "--record", "--dir", "/data", "--host", "node1"])
            .arg(&p)
            .assert()
            .code(predicate::ne(2));
    }
    let out = |format: &str| {
        let o = env
            .cmd()
            .args(["report", "--host", "node1", "--format", format])
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(3), "{format}: inconclusive");
        String::from_utf8(o.stdout).unwrap()
    };
    // JSON: nothing judged, and why, by reason.
    let j: Value = serde_json::from_str(&out("json")).unwrap();
    assert_eq!(j["verdict"], "inconclusive");
    assert!(j["runs"].as_array().unwrap().is_empty());
    let reasons: std::collections::BTreeMap<String, u64> = j["not_counted"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| {
            (
                n["reason"].as_str().unwrap().to_string(),
                n["runs"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(reasons.len(), 2, "{reasons:?}");
    assert_eq!(reasons.values().sum::<u64>(), 3);
    assert!(
        reasons
            .keys()
            .any(|r| r.contains("size 256 MiB instead of 4 GiB"))
    );
    assert!(reasons.keys().any(|r| r.contains("in the future")));

    // The terminal: each reason with its count beside the verdict.
    let table = one_line(&out("table"));
    for (reason, n) in &reasons {
        let runs = if *n == 1 { "run" } else { "runs" };
        assert!(
            table.contains(&one_line(&format!("{n} {runs} not counted: {reason}"))),
            "{table}"
        );
    }

    // CSV: every run, with the reason it was left out; the times every format lists.
    let csv = out("csv");
    let mut rd = csv::Reader::from_reader(csv.as_bytes());
    let head = rd.headers().unwrap().clone();
    let col = |name: &str| head.iter().position(|h| h == name).unwrap();
    let mut from_csv: Vec<(String, String)> = rd
        .records()
        .map(|r| {
            let r = r.unwrap();
            let t = chrono::DateTime::parse_from_rfc3339(&r[col("timestamp")]).unwrap();
            let why = r[col("result")].strip_prefix("not counted: ").unwrap();
            (
                t.format("%Y-%m-%d %H:%M:%S %:z").to_string(),
                why.to_string(),
            )
        })
        .collect();
    from_csv.sort();
    assert_eq!(from_csv.len(), 3);
    for (_, why) in &from_csv {
        assert!(reasons.contains_key(why), "{why}");
    }

    // Markdown: the runs section lists them, time and reason, rather than "No runs.".
    let md = out("markdown");
    let runs = md.split("## Runs\n").nth(1).unwrap();
    let runs = runs.split("\n## ").next().unwrap();
    assert!(!runs.contains("No runs."), "{runs}");
    assert!(runs.contains("### Not counted"), "{runs}");
    let mut from_md: Vec<(String, String)> = runs
        .lines()
        .filter(|l| l.starts_with("| ") && !l.starts_with("| time") && !l.starts_with("| ---"))
        .map(|l| {
            let cells: Vec<String> = l
                .trim_matches('|')
                .split(" | ")
                .map(|c| c.trim().replace('\\', ""))
                .collect();
            (cells[0].clone(), cells[cells.len() - 1].clone())
        })
        .collect();
    from_md.sort();
    assert_eq!(from_md, from_csv, "{runs}");

    // HTML: the same rows in the runs section's table of runs not counted.
    let html = out("html");
    let page = scraper::Html::parse_document(&html);
    let sel = |s: &str| scraper::Selector::parse(s).unwrap();
    let section = page.select(&sel("section#runs")).next().unwrap();
    let words: String = section.text().collect();
    assert!(!words.contains("No runs."), "{words}");
    let mut from_html: Vec<(String, String)> = section
        .select(&sel("table.not-counted tbody tr"))
        .map(|tr| {
            let cells: Vec<String> = tr
                .select(&sel("td"))
                .map(|td| td.text().collect::<String>())
                .collect();
            (cells[0].clone(), cells[cells.len() - 1].clone())
        })
        .collect();
    from_html.sort();
    assert_eq!(from_html, from_csv);

    // The terminal: the same rows under the runs, in place of "no runs" (wide enough for a
    // column per field; tests/terminal.rs has the narrow layouts).
    let o = env
        .cmd()
        .env("COLUMNS", "200")
        .args(["report", "--host", "node1"])
        .output()
        .unwrap();
    let table = String::from_utf8(o.stdout).unwrap();
    assert!(
        table.contains("No run counted towards the verdict; the runs left out are listed below."),
        "{table}"
    );
    let listed = table.split("\nnot counted: ").nth(1).unwrap();
    let mut from_table: Vec<(String, String)> = listed
        .lines()
        .filter_map(|l| {
            let cells: Vec<&str> = l.split(['│', '┆']).map(str::trim).collect();
            let time = cells.get(1)?;
            chrono::DateTime::parse_from_str(time, "%Y-%m-%d %H:%M:%S %:z").ok()?;
            Some((time.to_string(), cells[cells.len() - 2].to_string()))
        })
        .collect();
    from_table.sort();
    assert_eq!(from_table, from_csv, "{table}");

    // report --list: each reason with its count, in the same words, the clock hint included.
    let o = env
        .cmd()
        .env("COLUMNS", "200")
        .args(["report", "--list"])
        .output()
        .unwrap();
    let list = String::from_utf8(o.stdout).unwrap();
    for (reason, n) in &reasons {
        for part in reason.split("; ") {
            assert!(list.contains(part), "{part}\n{list}");
        }
        assert!(list.contains(&format!("{n}: ")), "{list}");
    }
    assert!(
        list.contains("1: dated in the future (check the node's clock)"),
        "{list}"
    );
}

#[test]
fn a_file_of_lines_that_are_not_records_names_the_first_few_and_counts_the_rest() {
    // A wrong file given as the history (or one damaged throughout) would otherwise print a
    // warning for each of its lines.
    let env = Env::new();
    record_at(&env, "node1", &[at(1, 0)]);
    let good = std::fs::read_to_string(&env.history).unwrap();
    let junk: String = (0..12).map(|i| format!("not a record {i}\n")).collect();
    std::fs::write(&env.history, format!("{good}{junk}")).unwrap();
    let out = report(&env, &["--host", "node1", "--format", "json"]);
    let stderr = String::from_utf8(out.get_output().stderr.clone()).unwrap();
    let warnings: Vec<&str> = stderr.lines().filter(|l| l.contains("warning")).collect();
    // lines 2-6 named with their reason, then one line for the other 7
    for n in 2..=6 {
        assert!(
            stderr.contains(&format!("history.jsonl:{n}: skipped: ")),
            "{stderr}"
        );
    }
    assert!(!stderr.contains("history.jsonl:7: skipped"), "{stderr}");
    assert!(
        stderr.contains("history.jsonl: 7 more lines skipped"),
        "{stderr}"
    );
    assert_eq!(warnings.len(), 6, "{stderr}");
    // the one record is still read and judged
    let doc: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert_eq!(doc["runs"].as_array().unwrap().len(), 1, "{doc}");
}

/// A history of `iops` (the formula's IOPS, Swimlane's deciding figure), three runs a day
/// on the days before today, the last figures on yesterday, written as `run` records them.
fn history_of_daily_runs(env: &Env, iops: &[f64]) {
    let mut lines = String::new();
    let days = iops.len().div_ceil(3) as i64;
    for (i, v) in iops.iter().enumerate() {
        let t = chrono::DateTime::from_timestamp(at(days - i as i64 / 3, i as i64 % 3), 0)
            .unwrap()
            .fixed_offset();
        // The formula's IOPS are (MB/s ÷ 4) × 1024.
        let r = common::swimlane_record("node1", "/data", t, v * 4.0 / 1024.0);
        lines.push_str(&(serde_json::to_string(&r).unwrap() + "\n"));
    }
    std::fs::write(&env.history, lines).unwrap();
}

#[test]
fn a_node_below_the_minimum_on_its_last_day_fails_though_the_window_mean_passes() {
    let env = Env::new();
    // Daily means 9,354 → 4,981 → 2,433: the nine runs average 5,589.
    history_of_daily_runs(
        &env,
        &[
            9300.0, 9400.0, 9362.0, 5000.0, 4950.0, 4993.0, 2400.0, 2450.0, 2449.0,
        ],
    );
    let out = report(&env, &["--host", "node1", "--format", "json"]).code(1);
    let j: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert_eq!(j["verdict"], "fail");
    let yesterday = chrono::DateTime::from_timestamp(at(1, 0), 0)
        .unwrap()
        .date_naive()
        .to_string();
    let reason = j["reason"].as_str().unwrap();
    assert!(
        reason.starts_with(&format!(
            "failing since {yesterday}: the last 3 runs average 2433 IOPS, missing ≥ 3000"
        )),
        "{reason}"
    );
    assert!(
        reason.contains(
            "the window's mean write_iops_formula of 5589 IOPS meets it only on older runs"
        ),
        "{reason}"
    );
    // The trend warning's figures are the days' own.
    let w = j["warnings"].to_string();
    assert!(w.contains("went from 9354 on"), "{w}");
    assert!(w.contains("to 2433 on"), "{w}");
    assert!(w.contains("(-74%)"), "{w}");
    // The terminal says the same.
    report(&env, &["--host", "node1"])
        .code(1)
        .stdout(predicate::str::contains("failing since"));
}

#[test]
fn a_noisy_but_stable_node_passes_whatever_its_last_day() {
    let env = Env::new();
    // ±25% around 4,000 over four days, the last day lowest by chance.
    history_of_daily_runs(
        &env,
        &[
            4800.0, 3300.0, 4500.0, 3600.0, 5000.0, 3400.0, 4700.0, 3200.0, 4400.0, 3500.0, 3800.0,
            3300.0,
        ],
    );
    let out = report(&env, &["--host", "node1", "--format", "json"]).code(0);
    let j: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert_eq!(j["verdict"], "pass", "{}", j["reason"]);
}

#[test]
fn the_latest_days_figure_stands_beside_the_windows_in_every_format() {
    let env = Env::new();
    history_of_daily_runs(
        &env,
        &[
            9300.0, 9400.0, 9362.0, 5000.0, 4950.0, 4993.0, 2400.0, 2450.0, 2449.0,
        ],
    );
    let yesterday = chrono::DateTime::from_timestamp(at(1, 0), 0)
        .unwrap()
        .date_naive()
        .to_string();
    let line = format!(
        "latest day {yesterday}: mean write_iops_formula 2433 IOPS over 3 runs (the window's: 5589 IOPS)"
    );
    let d = env.tmp.path();
    let formats = ["csv", "junit", "html", "prometheus", "markdown", "summary"];
    let mut c = env.cmd();
    c.args(["report", "--host", "node1", "--format", "json"]);
    for f in formats {
        c.arg("--export")
            .arg(format!("{f}={}", d.join(f).display()));
    }
    let out = c.assert().code(1);
    let j: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    let latest = &j["rules"][0]["latest_day"];
    assert_eq!(latest["date"], yesterday.as_str());
    assert_eq!(latest["runs"], 3);
    assert!(
        (latest["value"].as_f64().unwrap() - 2433.0).abs() < 1.0,
        "{latest}"
    );
    for f in ["csv", "junit"] {
        let text = std::fs::read_to_string(d.join(f)).unwrap();
        assert!(text.contains(&line), "{f}: {text}");
    }
    let md = std::fs::read_to_string(d.join("markdown")).unwrap();
    assert!(md.contains(&line.replace('_', "\\_")), "{md}");
    // HTML escapes the apostrophe.
    let html = std::fs::read_to_string(d.join("html")).unwrap();
    assert!(
        html.contains(&line.replace('\'', "&#39;")) || html.contains(&line),
        "{html}"
    );
    let prom = std::fs::read_to_string(d.join("prometheus")).unwrap();
    assert!(prom.contains(&format!("# {line}")), "{prom}");
    let gauge = prom
        .lines()
        .find(|l| {
            l.starts_with("iopscheck_rule_latest_day_value{")
                && l.contains("metric=\"write_iops_formula\"")
        })
        .unwrap_or_else(|| panic!("{prom}"));
    let v: f64 = gauge.rsplit(' ').next().unwrap().parse().unwrap();
    assert!((v - 2433.0).abs() < 1.0, "{gauge}");
    // The one line gives the figure that fails, the latest runs', never the window's mean
    // that meets the threshold beside FAIL.
    let summary = std::fs::read_to_string(d.join("summary")).unwrap();
    assert!(
        summary.contains(&format!(
            "its last 3 runs, since {yesterday}, average 2433 IOPS"
        )),
        "{summary}"
    );
    assert!(!summary.contains("mean 5589"), "{summary}");
    report(&env, &["--host", "node1"])
        .code(1)
        .stdout(predicate::str::contains(line.as_str()));
}

#[test]
fn a_rule_failed_on_its_latest_runs_is_shown_failed_in_every_format() {
    let env = Env::new();
    // The window's mean (5,589) meets 3,000; the last day's runs (2,433) do not: FAIL, and
    // no format may show the deciding rule as met beside it.
    history_of_daily_runs(
        &env,
        &[
            9300.0, 9400.0, 9362.0, 5000.0, 4950.0, 4993.0, 2400.0, 2450.0, 2449.0,
        ],
    );
    let d = env.tmp.path();
    let mut c = env.cmd();
    c.args(["report", "--host", "node1", "--format", "table"]);
    for f in ["json", "junit", "html", "prometheus", "markdown", "summary"] {
        c.arg("--export")
            .arg(format!("{f}={}", d.join(f).display()));
    }
    let out = c.assert().code(1);
    let read = |f: &str| std::fs::read_to_string(d.join(f)).unwrap();
    let why = "its last 3 runs, since ";
    let table = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    let line = table
        .lines()
        .find(|l| l.contains("decides") && l.contains("write_iops_formula"))
        .unwrap_or_else(|| panic!("{table}"));
    assert!(line.contains('✗') && !line.contains('✓'), "{line}");
    assert!(table.contains(&format!("fails: {why}")), "{table}");

    let j: Value = serde_json::from_str(&read("json")).unwrap();
    assert_eq!(j["verdict"], "fail");
    let rule = &j["rules"][0];
    assert_eq!(rule["metric"], "write_iops_formula");
    // The aggregate still meets the threshold: the rule fails on its latest runs.
    assert!(rule["value"].as_f64().unwrap() >= 3000.0, "{rule}");
    assert_eq!(rule["passed"], false, "{rule}");
    assert!(
        rule["fails_on"].as_str().unwrap().starts_with(why),
        "{rule}"
    );

    let junit = read("junit");
    assert!(junit.contains("failures=\"1\""), "{junit}");
    assert!(junit.contains(why), "{junit}");

    let prom = read("prometheus");
    let passed = prom
        .lines()
        .find(|l| {
            l.starts_with("iopscheck_rule_passed{") && l.contains("metric=\"write_iops_formula\"")
        })
        .unwrap_or_else(|| panic!("{prom}"));
    assert!(passed.ends_with(" 0"), "{passed}");

    let html = read("html");
    let row = html
        .lines()
        .find(|l| l.starts_with("<tr class=\"rule\">") && l.contains("write_iops_formula"))
        .unwrap_or_else(|| panic!("{html}"));
    assert!(row.contains("<td class=\"result fail\">fails: "), "{row}");
    assert!(!row.contains("result pass"), "{row}");

    let md = read("markdown");
    let row = md
        .lines()
        .find(|l| l.starts_with("| fail |") && l.contains("`write_iops_formula`"))
        .unwrap_or_else(|| panic!("{md}"));
    assert!(row.contains("❌ fails: ") && !row.contains('✅'), "{row}");

    let summary = read("summary");
    assert!(summary.starts_with("FAIL "), "{summary}");
    assert!(!summary.contains('✓'), "{summary}");
}

#[test]
fn runs_minutes_apart_in_two_time_zones_are_one_day_of_evidence() {
    // Six passing runs within ten minutes, three recorded at +14:00 and three at −12:00 (a
    // clock whose zone was changed between them): in their own offsets they fall on two
    // calendar dates, but they are one day's runs, and Swimlane asks for two.
    let env = Env::new();
    let base = Utc::now() - Duration::hours(2);
    let mut text = String::new();
    for i in 0..6 {
        let offset = if i < 3 { 14 * 3600 } else { -12 * 3600 };
        let t = (base + Duration::minutes(i))
            .with_timezone(&chrono::FixedOffset::east_opt(offset).unwrap());
        let r = common::swimlane_record("node1", "/data", t, 16.4);
        text.push_str(&serde_json::to_string(&r).unwrap());
        text.push('\n');
    }
    std::fs::write(&env.history, text).unwrap();
    let out = env
        .cmd()
        .args(["report", "--host", "node1", "--format", "json"])
        .output()
        .unwrap();
    let j: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(j["evidence"]["runs"], 6, "{}", j["evidence"]);
    assert_eq!(j["evidence"]["days"], 1, "{}", j["evidence"]);
    assert_ne!(j["verdict"], "pass", "{}", j["reason"]);
    assert_eq!(out.status.code(), Some(3));
}
