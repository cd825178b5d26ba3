//! `iopscheck fleet` over synthetic nodes: histories and `--format json` results of several
//! hosts give the right row per node, the right fleet verdict (every node must pass) and exit
//! code, in every format; files that are not a node's result are refused, naming the file.

mod common;

use std::io::Write as _;
use std::path::{Path, PathBuf};

use assert_cmd::Command;
use chrono::{Duration, Local};
use iopscheck::testing::history::Record;
use serde_json::Value;

fn iopscheck() -> Command {
    let mut c = Command::new(assert_cmd::cargo::cargo_bin!("iopscheck"));
    c.env("NO_COLOR", "1").env_remove("IOPSCHECK_HISTORY");
    c
}

/// A Swimlane run on `host` at `mb_s` decimal MB/s, `ago` before now.
fn rec(host: &str, dir: &str, ago: Duration, mb_s: f64) -> Record {
    common::swimlane_record(host, dir, (Local::now() - ago).fixed_offset(), mb_s)
}

/// Three runs a day on each of `days` local days, 10 minutes apart around noon, the latest
/// on the most recent noon that has passed: each day's runs stay on one local date whatever
/// the time of day the test runs at (an hour before now crossed midnight before 01:20).
fn runs(host: &str, dir: &str, days: i64, mb_s: f64) -> Vec<Record> {
    let now = Local::now();
    let noon = now
        .date_naive()
        .and_hms_opt(12, 0, 0)
        .unwrap()
        .and_local_timezone(Local)
        .earliest()
        .unwrap();
    // The day's three runs are 10 minutes apart from noon: after 12:20 they are all past;
    // before, the day before's are used (else a run would be dated in the future).
    let latest = if noon + Duration::minutes(20) <= now {
        noon
    } else {
        noon - Duration::days(1)
    };
    let mut v = Vec::new();
    for d in 0..days {
        for i in 0..3 {
            let ago = now - (latest - Duration::days(d) - Duration::minutes(10 * i));
            v.push(rec(host, dir, ago, mb_s));
        }
    }
    v
}

fn write_history(path: &Path, records: &[Record]) {
    let mut text = String::new();
    for r in records {
        text.push_str(&serde_json::to_string(r).unwrap());
        text.push('\n');
    }
    std::fs::write(path, text).unwrap();
}

struct Nodes {
    tmp: tempfile::TempDir,
}

impl Nodes {
    fn new() -> Nodes {
        Nodes {
            tmp: tempfile::tempdir().unwrap(),
        }
    }
    fn path(&self, name: &str) -> PathBuf {
        self.tmp.path().join(name)
    }
    fn history(&self, name: &str, records: &[Record]) -> PathBuf {
        let p = self.path(name);
        write_history(&p, records);
        p
    }
    /// The node's own `iopscheck report --format json` over its history.
    fn result(&self, name: &str, host: &str, records: &[Record]) -> PathBuf {
        let h = self.history(&format!("{name}.src.jsonl"), records);
        let out = iopscheck()
            .args(["report", "--format", "json", "--host", host, "--history"])
            .arg(&h)
            .output()
            .unwrap();
        let p = self.path(name);
        std::fs::write(&p, &out.stdout).unwrap();
        p
    }
    /// The policy's test, three runs in one sitting, as `iopscheck run --format json` states
    /// it, written as `dir/name` (the runs' records as the native engine writes them; a real
    /// one takes minutes).
    fn sitting(&self, dir: &Path, name: &str, host: &str) {
        let src = self.result(&format!("{name}.src"), host, &runs(host, "/data", 1, 16.4));
        std::fs::write(
            dir.join(name),
            edited(&src, |v| {
                v["scope"] = Value::from("run");
                v["verdict"] = Value::from("pass");
            }),
        )
        .unwrap();
    }
}

fn fleet_json(files: &[&Path], extra: &[&str]) -> (i32, Value) {
    let out = iopscheck()
        .arg("fleet")
        .args(files)
        .args(extra)
        .args(["--format", "json"])
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "fleet --format json: {e}\n{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (out.status.code().unwrap(), v)
}

fn verdicts(v: &Value) -> Vec<(String, String)> {
    v["hosts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| {
            (
                h["host"].as_str().unwrap().to_string(),
                h["verdict"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn pairs(p: &[(&str, &str)]) -> Vec<(String, String)> {
    p.iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect()
}

#[test]
fn one_failing_node_fails_the_fleet_and_each_node_keeps_its_own_verdict() {
    let n = Nodes::new();
    let a = n.history("a.jsonl", &runs("node1", "/data", 2, 16.4));
    let b = n.history("b.jsonl", &runs("node2", "/data", 2, 10.0));
    let c = n.history("c.jsonl", &runs("node3", "/data", 1, 16.4));
    let (code, v) = fleet_json(&[&a, &b, &c], &[]);
    assert_eq!(code, 1);
    assert_eq!(v["verdict"], "fail");
    assert_eq!(
        verdicts(&v),
        pairs(&[
            ("node1", "pass"),
            ("node2", "fail"),
            ("node3", "inconclusive")
        ])
    );
    let node1 = &v["hosts"][0];
    assert_eq!(
        (node1["runs"].as_u64(), node1["days"].as_u64()),
        (Some(6), Some(2))
    );
    assert!((node1["value"].as_f64().unwrap() - 4198.4).abs() < 1e-6);
    assert_eq!(node1["threshold"], 3000.0);
    assert_eq!(node1["metric"], "write_iops_formula");
    assert_eq!(v["counts"]["fail"], 1);
    assert_eq!(v["kind"], "fleet");
    assert_eq!(v["schema_version"], 1);
    assert!(v["reason"].as_str().unwrap().contains("node2"));
}

#[test]
fn inconclusive_without_failures_exits_3_and_all_passing_exits_0() {
    let n = Nodes::new();
    let a = n.history("a.jsonl", &runs("node1", "/data", 2, 16.4));
    let c = n.history("c.jsonl", &runs("node3", "/data", 1, 16.4));
    let (code, v) = fleet_json(&[&a, &c], &[]);
    assert_eq!((code, v["verdict"].as_str()), (3, Some("inconclusive")));

    let b = n.history("b.jsonl", &runs("node2", "/data", 3, 12.0));
    iopscheck()
        .arg("fleet")
        .args([&a, &b])
        .assert()
        .code(0)
        .stdout(predicates::str::contains(
            "verdict: PASS — all 2 nodes pass",
        ));
}

#[test]
fn the_nodes_json_results_are_read_with_their_own_verdicts() {
    let n = Nodes::new();
    let r1 = n.result("r1.json", "node1", &runs("node1", "/data", 2, 16.4));
    let r2 = n.result("r2.json", "node2", &runs("node2", "/data", 2, 11.0));
    let h3 = n.history("h3.jsonl", &runs("node3", "/srv", 2, 20.0));
    let (code, v) = fleet_json(&[&r1, &r2, &h3], &[]);
    assert_eq!(code, 1);
    assert_eq!(
        verdicts(&v),
        pairs(&[("node1", "pass"), ("node2", "fail"), ("node3", "pass")])
    );
    let sources: Vec<&str> = v["hosts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["source"].as_str().unwrap())
        .collect();
    assert_eq!(sources, ["result", "result", "history"]);
    assert_eq!(v["hosts"][2]["dir"], "/srv");
}

#[test]
fn a_host_with_two_directories_is_two_rows() {
    let n = Nodes::new();
    let mut recs = runs("node1", "/data", 2, 16.4);
    recs.extend(runs("node1", "/slow", 2, 5.0));
    let h = n.history("h.jsonl", &recs);
    let (code, v) = fleet_json(&[&h], &[]);
    assert_eq!(code, 1);
    let dirs: Vec<(&str, &str)> = v["hosts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| (h["dir"].as_str().unwrap(), h["verdict"].as_str().unwrap()))
        .collect();
    assert_eq!(dirs, [("/data", "pass"), ("/slow", "fail")]);
}

#[test]
fn an_expected_host_without_a_file_cannot_pass_unseen() {
    let n = Nodes::new();
    let a = n.history("a.jsonl", &runs("node1", "/data", 2, 16.4));
    let (code, v) = fleet_json(&[&a], &["--expect", "node1,node9"]);
    assert_eq!(code, 3);
    assert_eq!(
        verdicts(&v),
        pairs(&[("node1", "pass"), ("node9", "inconclusive")])
    );
    assert_eq!(v["hosts"][1]["source"], "missing");
}

#[test]
fn windows_and_stale_results() {
    let n = Nodes::new();
    // Runs from three weeks ago: outside the policy's 7-day window, inside --since 30d.
    let old: Vec<Record> = runs("node1", "/data", 2, 16.4)
        .into_iter()
        .map(|mut r| {
            r.timestamp -= Duration::days(21);
            r
        })
        .collect();
    let h = n.history("old.jsonl", &old);
    let (code, v) = fleet_json(&[&h], &[]);
    assert_eq!(code, 3);
    assert!(
        v["hosts"][0]["reason"]
            .as_str()
            .unwrap()
            .contains("widen the window"),
        "{}",
        v["hosts"][0]["reason"]
    );
    let (code, _) = fleet_json(&[&h], &["--since", "30d"]);
    assert_eq!(code, 0);

    // The node's JSON result of those runs is stale under the default window.
    let r = n.result("r.json", "node1", &old);
    let out = iopscheck()
        .args([
            "report",
            "--format",
            "json",
            "--host",
            "node1",
            "--since",
            "30d",
            "--history",
        ])
        .arg(n.path("r.json.src.jsonl"))
        .output()
        .unwrap();
    std::fs::write(&r, &out.stdout).unwrap();
    let (code, v) = fleet_json(&[&r], &[]);
    assert_eq!(code, 3);
    assert!(
        v["hosts"][0]["reason"]
            .as_str()
            .unwrap()
            .starts_with("stale")
    );
}

#[test]
fn files_that_are_not_a_nodes_result_are_errors_naming_the_file() {
    let n = Nodes::new();
    let good = n.history("a.jsonl", &runs("node1", "/data", 2, 16.4));
    let text = n.path("fio.txt");
    std::fs::write(
        &text,
        "random-write: (g=0): rw=randwrite\n  WRITE: bw=15.6MiB/s\n",
    )
    .unwrap();
    iopscheck()
        .arg("fleet")
        .args([&good, &text])
        .assert()
        .code(2)
        .stderr(
            predicates::str::contains("fio.txt").and(predicates::str::contains(
                "neither an iopscheck JSON result",
            )),
        );
    iopscheck()
        .arg("fleet")
        .arg(n.path("nope.json"))
        .assert()
        .code(2)
        .stderr(predicates::str::contains("nope.json"));
    let empty = n.path("empty");
    std::fs::create_dir(&empty).unwrap();
    std::fs::write(empty.join("notes.txt"), "not a result\n").unwrap();
    iopscheck()
        .arg("fleet")
        .arg(&empty)
        .assert()
        .code(2)
        .stderr(predicates::str::contains(
            "empty: a directory without results",
        ));

    // A result judged by another policy.
    let r = n.result("r.json", "node1", &runs("node1", "/data", 2, 16.4));
    let other = std::fs::read_to_string(&r).unwrap().replacen(
        "\"name\": \"swimlane\"",
        "\"name\": \"etcd\"",
        1,
    );
    std::fs::write(&r, other).unwrap();
    iopscheck()
        .arg("fleet")
        .arg(&r)
        .assert()
        .code(2)
        .stderr(predicates::str::contains("a result of policy etcd"));

    // A fleet's own JSON is not a node's.
    let (_, v) = fleet_json(&[&good], &[]);
    let f = n.path("fleet.json");
    std::fs::write(&f, v.to_string()).unwrap();
    iopscheck()
        .arg("fleet")
        .arg(&f)
        .assert()
        .code(2)
        .stderr(predicates::str::contains("a fleet's result"));
}

#[test]
fn a_torn_history_line_is_a_warning_not_an_error() {
    let n = Nodes::new();
    let h = n.history("a.jsonl", &runs("node1", "/data", 2, 16.4));
    let mut text = std::fs::read_to_string(&h).unwrap();
    text.push_str("{\"schema_version\":1,\"timest\n");
    std::fs::write(&h, text).unwrap();
    let (code, v) = fleet_json(&[&h], &[]);
    assert_eq!(code, 0);
    assert!(
        v["warnings"][0].as_str().unwrap().contains("a.jsonl:7"),
        "{}",
        v["warnings"]
    );
}

use predicates::prelude::PredicateBooleanExt;

#[test]
fn every_format_carries_every_node_and_the_fleet_verdict() {
    let n = Nodes::new();
    let a = n.history("a.jsonl", &runs("node1", "/data", 2, 16.4));
    let b = n.history("b.jsonl", &runs("node2<x>", "/data,x", 2, 10.0));
    let c = n.history("c.jsonl", &runs("node3", "/data", 1, 16.4));
    let out = |f: &str| {
        let o = iopscheck()
            .arg("fleet")
            .args([&a, &b, &c])
            .args(["--format", f])
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(1), "{f}");
        String::from_utf8(o.stdout).unwrap()
    };

    let table = out("table");
    for want in [
        "node1",
        "node2<x>",
        "node3",
        "PASS",
        "FAIL",
        "INCONCLUSIVE",
        "verdict: FAIL",
    ] {
        assert!(table.contains(want), "table lacks {want}:\n{table}");
    }

    let csv_text = out("csv");
    let mut csv = csv::Reader::from_reader(csv_text.as_bytes());
    let headers = csv.headers().unwrap().clone();
    let rows: Vec<csv::StringRecord> = csv.records().map(|r| r.unwrap()).collect();
    assert_eq!(rows.len(), 3);
    let col = |name: &str| headers.iter().position(|h| h == name).unwrap();
    assert_eq!(&rows[1][col("host")], "node2<x>");
    assert_eq!(&rows[1][col("dir")], "/data,x");
    assert_eq!(&rows[1][col("verdict")], "fail");
    assert!(rows.iter().all(|r| &r[col("fleet_verdict")] == "fail"));

    let md = out("markdown");
    assert!(md.contains("# iopscheck fleet: swimlane — ❌ FAIL"));
    assert!(md.contains("node2\\<x\\>"), "{md}");
    assert_eq!(md.lines().filter(|l| l.starts_with("| node")).count(), 3);

    let prom = out("prometheus");
    assert!(prom.contains("iopscheck_fleet_verdict{policy=\"swimlane\"} 0\n"));
    assert!(prom.contains(
        "iopscheck_fleet_node_verdict{policy=\"swimlane\",host=\"node1\",dir=\"/data\",engine=\"posixaio\"} 1\n"
    ));
    assert!(
        prom.contains("iopscheck_fleet_nodes{policy=\"swimlane\",verdict=\"inconclusive\"} 1\n")
    );
    for line in prom.lines().filter(|l| !l.starts_with('#')) {
        let (_, value) = line.rsplit_once(' ').unwrap();
        assert!(value == "NaN" || value.parse::<f64>().is_ok(), "{line}");
    }

    let junit = out("junit");
    let doc = roxmltree::Document::parse(&junit).unwrap();
    let cases: Vec<_> = doc
        .descendants()
        .filter(|n| n.has_tag_name("testcase"))
        .collect();
    assert_eq!(cases.len(), 3);
    let failures = doc
        .descendants()
        .filter(|n| n.has_tag_name("failure"))
        .count();
    let skipped = doc
        .descendants()
        .filter(|n| n.has_tag_name("skipped"))
        .count();
    assert_eq!((failures, skipped), (1, 1));

    let html = out("html");
    let opts = roxmltree::ParsingOptions {
        allow_dtd: true,
        ..Default::default()
    };
    let doc = roxmltree::Document::parse_with_options(&html, opts).unwrap();
    let rows: Vec<_> = doc
        .descendants()
        .filter(|n| n.has_tag_name("tr") && n.attribute("class").is_some())
        .map(|n| n.attribute("class").unwrap().to_string())
        .collect();
    assert_eq!(rows, ["pass", "fail", "inconclusive"]);
    assert!(!html.contains("<script"));
}

#[test]
fn output_and_export_files_are_written() {
    let n = Nodes::new();
    let a = n.history("a.jsonl", &runs("node1", "/data", 2, 16.4));
    let json = n.path("fleet.json");
    let prom = n.path("fleet.prom");
    iopscheck()
        .arg("fleet")
        .arg(&a)
        .args(["--format", "json", "-o"])
        .arg(&json)
        .arg("--export")
        .arg(format!("prometheus={}", prom.display()))
        .assert()
        .code(0)
        .stdout("");
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(v["verdict"], "pass");
    assert!(
        std::fs::read_to_string(&prom)
            .unwrap()
            .contains("iopscheck_fleet_verdict{policy=\"swimlane\"} 1")
    );
}

// ---- streams, directories, one count per node ------------------------------------------

impl Nodes {
    /// The node's own `iopscheck report --format jsonl`: its result on one line.
    fn result_line(&self, host: &str, records: &[Record]) -> String {
        let h = self.history(&format!("{host}.line.jsonl"), records);
        let out = iopscheck()
            .args(["report", "--format", "jsonl", "--host", host, "--history"])
            .arg(&h)
            .output()
            .unwrap();
        let text = String::from_utf8(out.stdout).unwrap();
        assert_eq!(
            text.lines().count(),
            1,
            "--format jsonl is one line: {text}"
        );
        text.trim_end().to_string()
    }
}

fn fleet_stdin(input: &str, extra: &[&str]) -> (i32, Value, String) {
    let out = iopscheck()
        .args(["fleet", "-", "--format", "json"])
        .args(extra)
        .write_stdin(input.to_string())
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "fleet - --format json: {e}\n{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (
        out.status.code().unwrap(),
        v,
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn warnings(v: &Value) -> Vec<String> {
    v["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w.as_str().unwrap().to_string())
        .collect()
}

#[test]
fn kubectl_logs_with_prefixes_and_a_node_twice_give_one_row_per_node() {
    let n = Nodes::new();
    // node1 reported twice: failing two days ago, passing since (its newest run is newer).
    let old_fail: Vec<Record> = runs("node1", "/data", 2, 10.0)
        .into_iter()
        .map(|mut r| {
            r.timestamp -= Duration::days(2);
            r
        })
        .collect();
    let node1_old = n.result_line("node1", &old_fail);
    let node1_new = n.result_line("node1", &runs("node1", "/data", 2, 16.4));
    let node2 = n.result_line("node2", &runs("node2", "/data", 2, 16.4));
    let stream = format!(
        "[pod/iopscheck-a/iopscheck] {node1_new}\n\
         [pod/iopscheck-b/iopscheck] iopscheck: error: --dir /data: permission denied creating the test file\n\
         [pod/iopscheck-c/iopscheck] {node2}\n\
         [pod/iopscheck-d/iopscheck] {node1_old}\n"
    );
    let (code, v, _) = fleet_stdin(&stream, &["--since", "30d"]);
    assert_eq!(
        verdicts(&v),
        pairs(&[("node1", "pass"), ("node2", "pass")]),
        "{v:#}"
    );
    assert_eq!(code, 0);
    assert_eq!(v["counts"]["pass"], 2);
    let w = warnings(&v);
    let dup = w
        .iter()
        .find(|w| w.contains("counted once"))
        .unwrap_or_else(|| panic!("{w:?}"));
    assert!(dup.contains("node1") && dup.contains("stdin:4"), "{dup}");
    assert_eq!(v["hosts"][0]["file"], "stdin:1");
    // The pod that failed before printing a result is not silently dropped.
    assert!(
        w.iter()
            .any(|w| w.contains("stdin:2") && w.contains("permission denied")),
        "{w:?}"
    );

    // The same stream in the table says so too, and the older failing result, alone, fails.
    let out = iopscheck()
        .args(["fleet", "-", "--since", "30d"])
        .write_stdin(stream)
        .output()
        .unwrap();
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(table.contains("counted once"), "{table}");
    let (code, v, _) = fleet_stdin(
        &format!("[pod/iopscheck-d/iopscheck] {node1_old}\n"),
        &["--since", "30d"],
    );
    assert_eq!((code, verdicts(&v)), (1, pairs(&[("node1", "fail")])));
}

#[test]
fn a_stream_without_results_is_an_error_that_says_what_pods_print() {
    let (out, code) = {
        let o = iopscheck()
            .args(["fleet", "-"])
            .write_stdin("[pod/a/iopscheck] Error from server: not found\n")
            .output()
            .unwrap();
        (
            String::from_utf8_lossy(&o.stderr).into_owned(),
            o.status.code(),
        )
    };
    assert_eq!(code, Some(2));
    assert!(
        out.contains("stdin: no iopscheck result") && out.contains("--format jsonl"),
        "{out}"
    );
}

#[test]
fn concatenated_results_and_history_records_on_stdin_are_read() {
    let n = Nodes::new();
    let a = n.result("a.json", "node1", &runs("node1", "/data", 2, 16.4));
    let b = n.result("b.json", "node2", &runs("node2", "/data", 2, 10.0));
    // `cat *.json | iopscheck fleet -`: pretty results one after another.
    let cat = std::fs::read_to_string(&a).unwrap() + &std::fs::read_to_string(&b).unwrap();
    let (code, v, _) = fleet_stdin(&cat, &[]);
    assert_eq!(
        (code, verdicts(&v)),
        (1, pairs(&[("node1", "pass"), ("node2", "fail")]))
    );
    // A history on stdin is judged as a history.
    let mut h = String::new();
    for r in runs("node3", "/data", 2, 16.4) {
        h.push_str(&serde_json::to_string(&r).unwrap());
        h.push('\n');
    }
    let (code, v, _) = fleet_stdin(&h, &[]);
    assert_eq!((code, verdicts(&v)), (0, pairs(&[("node3", "pass")])));
    assert_eq!(v["hosts"][0]["runs"], 6);
}

#[test]
fn a_directory_of_results_counts_nodes_not_files() {
    let n = Nodes::new();
    let dir = n.path("results");
    std::fs::create_dir(&dir).unwrap();
    let put = |name: &str, host: &str, recs: &[Record]| {
        let p = n.result(name, host, recs);
        std::fs::rename(&p, dir.join(name)).unwrap();
    };
    put("node1.json", "node1", &runs("node1", "/data", 2, 16.4));
    // The same result copied under another name: one node, not two.
    std::fs::copy(dir.join("node1.json"), dir.join("node1-copy.json")).unwrap();
    put("node2.json", "node2", &runs("node2", "/data", 2, 16.4));
    std::fs::write(dir.join("README.txt"), "not read\n").unwrap();
    // A fleet result an earlier run wrote there is left out, not an error.
    let (_, first) = fleet_json(&[&dir], &[]);
    std::fs::write(dir.join("fleet.json"), first.to_string()).unwrap();

    let (code, v) = fleet_json(&[&dir], &["--expect", "node1,node2"]);
    assert_eq!(
        (code, verdicts(&v)),
        (0, pairs(&[("node1", "pass"), ("node2", "pass")]))
    );
    assert_eq!(v["counts"]["pass"], 2);
    let w = warnings(&v);
    assert!(
        w.iter()
            .any(|w| w.contains("fleet.json: a fleet's result, left out")),
        "{w:?}"
    );
    assert!(
        w.iter()
            .any(|w| w.contains("node1 /data") && w.contains("given 2 times")),
        "{w:?}"
    );
    // Named on its own, a fleet's result is still an error.
    iopscheck()
        .arg("fleet")
        .arg(dir.join("fleet.json"))
        .assert()
        .code(2)
        .stderr(predicates::str::contains("a fleet's result"));
}

#[test]
fn pods_results_from_real_runs_come_home_with_the_names_they_were_given() {
    let n = Nodes::new();
    let mut stream = String::new();
    let mut own = Vec::new();
    for (i, host) in ["worker-a", "worker-b"].iter().enumerate() {
        let dir = n.path(host);
        std::fs::create_dir(&dir).unwrap();
        let mut cmd = iopscheck();
        cmd.args([
            "run",
            "--quiet",
            "--no-history",
            "--size",
            "4m",
            "--runtime",
            "1",
        ])
        .args(["--runs", "1", "--format", "jsonl", "--dir"])
        .arg(&dir)
        .env("IOPSCHECK_LOCK_FILE", n.path("run.lock"));
        // One pod names its node with --host, the other through IOPSCHECK_HOST.
        if i == 0 {
            cmd.args(["--host", host]);
        } else {
            cmd.env("IOPSCHECK_HOST", host);
        }
        let out = cmd.output().unwrap();
        let code = out.status.code().unwrap();
        if code == 2 {
            eprintln!(
                "skipped: the engine cannot run here: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            return;
        }
        let text = String::from_utf8(out.stdout).unwrap();
        assert_eq!(text.lines().count(), 1, "one line per pod: {text}");
        let v: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["runs"][0]["host"], *host);
        assert_eq!(v["group"]["host"], *host);
        own.push((host.to_string(), v["verdict"].as_str().unwrap().to_string()));
        for line in text.lines() {
            stream.push_str(&format!("[pod/iopscheck-{i}/iopscheck] {line}\n"));
        }
    }
    let (code, v, _) = fleet_stdin(&stream, &[]);
    // Each pod's row, with the verdict the pod gave.
    assert_eq!(verdicts(&v), own, "{v:#}");
    let worst = if own.iter().any(|(_, v)| v == "fail") {
        1
    } else if own.iter().any(|(_, v)| v == "inconclusive") {
        3
    } else {
        0
    };
    assert_eq!(code, worst);
}

#[test]
fn a_host_name_that_cannot_be_one_is_refused_naming_where_it_came_from() {
    let tmp = tempfile::tempdir().unwrap();
    iopscheck()
        .args(["run", "--host", " ", "--dir"])
        .arg(tmp.path())
        .assert()
        .code(2)
        .stderr(predicates::str::contains("--host: empty"));
    iopscheck()
        .args(["run", "--dir"])
        .arg(tmp.path())
        .env("IOPSCHECK_HOST", "")
        .assert()
        .code(2)
        .stderr(predicates::str::contains("IOPSCHECK_HOST: empty"));
    assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 0);
}

// ---- a result is a claim, checked against its own runs ---------------------------------

/// A node's result as JSON, changed by `edit` as a hand (or a script) could change it, written
/// back on one line.
fn edited(path: &Path, edit: impl FnOnce(&mut Value)) -> String {
    let mut v: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    edit(&mut v);
    v.to_string()
}

fn runs_mut(v: &mut Value) -> &mut Vec<Value> {
    v["runs"].as_array_mut().unwrap()
}

/// Moves a result's runs and its date `by` later.
fn shift(v: &mut Value, by: Duration) {
    for r in runs_mut(v) {
        let t = chrono::DateTime::parse_from_rfc3339(r["timestamp"].as_str().unwrap()).unwrap();
        r["timestamp"] = Value::from((t + by).to_rfc3339());
    }
    let g = chrono::DateTime::parse_from_rfc3339(v["generated"].as_str().unwrap()).unwrap();
    v["generated"] = Value::from((g + by).to_rfc3339());
}

fn stderr_of(input: &str) -> (i32, String) {
    let o = iopscheck()
        .args(["fleet", "-"])
        .write_stdin(input.to_string())
        .output()
        .unwrap();
    (
        o.status.code().unwrap(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

#[test]
fn a_hand_written_result_is_refused_naming_what_it_lacks() {
    let n = Nodes::new();
    let real = n.result_line("node1", &runs("node1", "/data", 2, 16.4));
    let forged = r#"{"schema_version":1,"verdict":"pass","policy":{"name":"swimlane"},"group":{"host":"node2","dir":"/data","engine":"posixaio"}}"#;
    let (code, err) = stderr_of(&format!("{real}\n{forged}\n"));
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("stdin: line 2: not an iopscheck result: it has no tool, scope, reason, runs, summary, rules, evidence, generated"),
        "{err}"
    );
    // As a file of its own, too.
    let f = n.path("node2.json");
    std::fs::write(&f, forged).unwrap();
    iopscheck().arg("fleet").arg(&f).assert().code(2).stderr(
        predicates::str::contains("node2.json").and(predicates::str::contains(
            "not an iopscheck result: it has no tool",
        )),
    );
    // Another tool's object with a verdict is not iopscheck's.
    let other = edited(
        &n.result("r.json", "node1", &runs("node1", "/data", 2, 16.4)),
        |v| v["tool"]["name"] = Value::from("diskcheck"),
    );
    let (code, err) = stderr_of(&other);
    assert_eq!(code, 2);
    assert!(err.contains("its tool is 'diskcheck'"), "{err}");
}

#[test]
fn a_result_is_judged_again_from_its_own_runs_whatever_it_claims() {
    let n = Nodes::new();
    let passing = n.result("pass.json", "node1", &runs("node1", "/data", 2, 16.4));
    let failing = n.result("fail.json", "node1", &runs("node1", "/data", 2, 10.0));
    // Two runs on each of two days: four of the six runs the evidence rule asks for.
    let mut four = runs("node1", "/data", 2, 16.4);
    four.retain(|r| r.timestamp.format("%H:%M").to_string() != "12:00");
    let short = n.result("short.json", "node1", &four);
    let failing_value = iopscheck::testing::metrics::iops_formula(10.0, 4096);
    let claim_pass = |v: &mut Value| {
        v["verdict"] = Value::from("pass");
        v["reason"] = Value::from("all good");
    };
    let states =
        format!("its result states 5000 over 6 runs; its runs give {failing_value} over 6");
    let cases: Vec<(&str, String, &str, &str)> = vec![
        (
            "a failing result whose verdict says pass",
            edited(&failing, claim_pass),
            "fail",
            "its runs give fail, not the pass its result states",
        ),
        (
            "a failing result whose figures say pass too",
            edited(&failing, |v| {
                claim_pass(v);
                v["rules"][0]["value"] = Value::from(5000.0);
                v["rules"][0]["passed"] = Value::from(true);
            }),
            "fail",
            &states,
        ),
        (
            "runs that are not the policy's test",
            edited(&passing, |v| {
                for r in runs_mut(v) {
                    r["job"]["size"] = Value::from(64u64 << 20);
                }
            }),
            "inconclusive",
            "6 runs not counted: size 64 MiB instead of 4 GiB",
        ),
        (
            "no runs at all",
            edited(&passing, |v| runs_mut(v).clear()),
            "inconclusive",
            "no runs to judge",
        ),
        (
            "runs of another policy",
            edited(&passing, |v| {
                for r in runs_mut(v) {
                    r["policy"] = Value::from("etcd");
                }
            }),
            "inconclusive",
            "6 of its runs are of policy etcd, not swimlane: not counted",
        ),
        (
            "runs repeated to meet the evidence rule",
            edited(&short, |v| {
                claim_pass(v);
                let again: Vec<Value> = runs_mut(v)[..2].to_vec();
                runs_mut(v).extend(again);
            }),
            "inconclusive",
            "its runs[4] repeats runs[0]: one run, counted once",
        ),
        (
            "a run that is not a record",
            edited(&passing, |v| {
                runs_mut(v)[0]["metrics"]["write_iops_formula"] = Value::from(-1.0);
            }),
            "inconclusive",
            "its runs[0] is skipped: metric write_iops_formula is -1",
        ),
    ];
    for (what, text, verdict, said) in cases {
        let (code, v, err) = fleet_stdin(&text, &[]);
        let row = &v["hosts"][0];
        let all = format!("{} {}", row["reason"], row["warnings"]);
        assert_eq!(
            (row["verdict"].as_str(), v["verdict"].as_str()),
            (Some(verdict), Some(verdict)),
            "{what}: {row:#}"
        );
        assert_eq!(code, if verdict == "fail" { 1 } else { 3 }, "{what}: {err}");
        assert!(all.contains(said), "{what}: {all}");
    }

    // The runs of two hosts are no node's result.
    let two = edited(&passing, |v| runs_mut(v)[0]["host"] = Value::from("node9"));
    let (code, err) = stderr_of(&two);
    assert_eq!(code, 2);
    assert!(
        err.contains("its runs are of 2 hosts (node1, node9)"),
        "{err}"
    );

    // An honest result keeps its verdict, and says nothing about itself; nor does a run's,
    // whose evidence is where the node's history stands, not its own runs.
    let as_run = edited(&passing, |v| {
        v["scope"] = Value::from("run");
        v["evidence"]["runs"] = Value::from(20);
    });
    for text in [std::fs::read_to_string(&passing).unwrap(), as_run] {
        let (code, v, _) = fleet_stdin(&text, &[]);
        assert_eq!((code, verdicts(&v)), (0, pairs(&[("node1", "pass")])));
        // (the one note allowed is the policy's own: its source read more than a year ago)
        let warnings: Vec<&str> = v["hosts"][0]["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|w| w.as_str().unwrap())
            .filter(|w| !w.starts_with("source seen "))
            .collect();
        assert!(warnings.is_empty(), "{v:#}");
    }
}

#[test]
fn a_result_dated_in_the_future_never_decides() {
    let n = Nodes::new();
    let failing = n.result_line("node1", &runs("node1", "/data", 2, 10.0));
    let p = n.result("pass.json", "node1", &runs("node1", "/data", 2, 16.4));
    // The same node's passing result, its clock three days ahead: "the newest". (Its runs
    // span the last two days, so every one of them is then at least a day ahead.)
    let ahead = edited(&p, |v| shift(v, Duration::days(3)));
    let (code, v, _) = fleet_stdin(&format!("{failing}\n{ahead}\n"), &[]);
    assert_eq!(
        (code, verdicts(&v)),
        (1, pairs(&[("node1", "fail")])),
        "{v:#}"
    );
    let w = warnings(&v).join("\n");
    assert!(w.contains("counted once") && w.contains("stdin:2"), "{w}");
    // Alone, it is no evidence at all, and says why.
    let (code, v, _) = fleet_stdin(&ahead, &[]);
    assert_eq!(
        (code, verdicts(&v)),
        (3, pairs(&[("node1", "inconclusive")]))
    );
    let row = format!("{} {}", v["hosts"][0]["reason"], v["hosts"][0]["warnings"]);
    assert!(row.contains("dated in the future"), "{row}");
    assert!(
        row.contains("generated at") && row.contains("in the future"),
        "{row}"
    );
}

// ---- streams: read once, held never ------------------------------------------------------

#[test]
fn an_empty_stdin_is_an_error_naming_stdin_not_a_node() {
    for input in ["", "\n  \n"] {
        let o = iopscheck()
            .args(["fleet", "-"])
            .write_stdin(input)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert!(
            err.contains("fleet: stdin: empty: no results or history records came in"),
            "{err}"
        );
        assert!(o.stdout.is_empty());
    }
}

#[test]
fn kubectl_logs_with_timestamps_are_read_and_an_unknown_prefix_is_named() {
    let n = Nodes::new();
    let a = n.result_line("node1", &runs("node1", "/data", 2, 16.4));
    let b = n.result_line("node2", &runs("node2", "/data", 2, 10.0));
    let c = n.result_line("node3", &runs("node3", "/data", 2, 16.4));
    // `kubectl logs --prefix --timestamps`, and `--timestamps` alone.
    let stream = format!(
        "[pod/iopscheck-a/iopscheck] 2026-12-01T10:00:00.123456789Z {a}\n\
         [pod/iopscheck-b/iopscheck] 2026-12-01T10:00:01.5+01:00 {b}\n\
         2026-12-01T10:00:02Z {c}\n\
         2026/12/01 10:00:03 {c}\n"
    );
    let (code, v, _) = fleet_stdin(&stream, &[]);
    assert_eq!(
        (code, verdicts(&v)),
        (
            1,
            pairs(&[("node1", "pass"), ("node2", "fail"), ("node3", "pass")])
        ),
        "{v:#}"
    );
    let w = warnings(&v).join("\n");
    assert!(
        w.contains("stdin:4: a JSON object after text that is neither a `kubectl logs --prefix` prefix nor a `--timestamps` time"),
        "{w}"
    );
}

#[test]
fn pretty_results_among_other_lines_are_each_read_in_one_pass() {
    // `kubectl logs` of pods printing `--format json` (stderr's notes among the lines), one
    // after another, without prefixes; and a history record whose host is "verdict".
    let n = Nodes::new();
    let one = std::fs::read_to_string(n.result("r.json", "NODE", &runs("NODE", "/data", 2, 16.4)))
        .unwrap();
    let failing =
        std::fs::read_to_string(n.result("f.json", "NODE", &runs("NODE", "/data", 2, 10.0)))
            .unwrap();
    const N: usize = 600;
    let mut stream = String::new();
    let mut line = 1;
    let mut starts = Vec::new();
    for i in 0..N {
        if i % 200 == 0 {
            stream.push_str("iopscheck: note: io_uring refused by the kernel; posixaio instead\n");
            line += 1;
        }
        let text = if i == 345 { &failing } else { &one };
        let text = text.replace("\"NODE\"", &format!("\"node{i:04}\""));
        starts.push(line);
        line += text.lines().count();
        stream.push_str(&text);
    }
    let verdict = rec("verdict", "/data", Duration::hours(1), 16.4);
    stream.push_str(&(serde_json::to_string(&verdict).unwrap() + "\n"));

    let (code, v, err) = fleet_stdin(&stream, &[]);
    assert_eq!(code, 1, "{err}");
    let hosts = v["hosts"].as_array().unwrap();
    assert_eq!(hosts.len(), N + 1);
    assert_eq!(v["counts"]["fail"], 1);
    assert_eq!(v["counts"]["pass"], N - 1);
    // Each row names the line its result starts on; the record is judged as a history.
    for (i, h) in hosts[..N].iter().enumerate() {
        assert_eq!(h["host"], format!("node{i:04}"));
        assert_eq!(h["file"], format!("stdin:{}", starts[i]), "{h:#}");
    }
    assert_eq!(hosts[345]["verdict"], "fail");
    assert_eq!(
        (hosts[N]["host"].as_str(), hosts[N]["source"].as_str()),
        (Some("verdict"), Some("history"))
    );
    let w = warnings(&v);
    assert!(
        w.iter()
            .any(|w| w.starts_with("stdin:1: not an iopscheck result, skipped: iopscheck: note")),
        "{w:?}"
    );
}

/// `fleet ARGS` with at most `data_mib` MiB of heap (RLIMIT_DATA), `stdin` written to it as
/// it reads: (exit code, stdout, stderr).
fn fleet_within(
    args: &[&std::ffi::OsStr],
    data_mib: u64,
    stdin: impl FnOnce(&mut dyn std::io::Write) + Send + 'static,
) -> (Option<i32>, String, String) {
    use std::os::unix::process::CommandExt;
    use std::process::Stdio;
    let mut cmd = std::process::Command::new(assert_cmd::cargo::cargo_bin!("iopscheck"));
    cmd.env("NO_COLOR", "1")
        .arg("fleet")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let limit = data_mib << 20;
    // SAFETY: setrlimit is async-signal-safe; nothing else runs between fork and exec.
    unsafe {
        cmd.pre_exec(move || {
            let l = libc::rlimit {
                rlim_cur: limit,
                rlim_max: limit,
            };
            if libc::setrlimit(libc::RLIMIT_DATA, &l) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let mut child = cmd.spawn().unwrap();
    let mut input = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || stdin(&mut input));
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn fleet_holds_neither_its_stdin_nor_a_history_whole() {
    let n = Nodes::new();
    // 48 MiB of pods' log lines that are not results, then two results: read in 24 MiB.
    let a = n.result_line("node1", &runs("node1", "/data", 2, 16.4));
    let b = n.result_line("node2", &runs("node2", "/data", 2, 16.4));
    let (code, out, err) = fleet_within(
        &["-".as_ref(), "--format".as_ref(), "json".as_ref()],
        24,
        move |w| {
            let noise = "[pod/iopscheck-x/iopscheck] iopscheck: note: waiting for the volume to be mounted\n"
            .repeat(1 << 12);
            let mut sent = 0;
            while sent < 48 << 20 {
                // A reader that stopped early (an error) is not this test's failure.
                if w.write_all(noise.as_bytes()).is_err() {
                    return;
                }
                sent += noise.len();
            }
            let _ = writeln!(w, "[pod/a/iopscheck] {a}\n[pod/b/iopscheck] {b}");
        },
    );
    assert_eq!(code, Some(0), "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(verdicts(&v), pairs(&[("node1", "pass"), ("node2", "pass")]));
    let w = warnings(&v).join("\n");
    assert!(w.contains("more lines skipped"), "{w}");

    // A 40 MiB history, a year of it before the window, read in 24 MiB.
    let h = n.path("big.jsonl");
    {
        let mut f = std::io::BufWriter::new(std::fs::File::create(&h).unwrap());
        let old = rec("node1", "/data", Duration::days(400), 2.0);
        let line = serde_json::to_string(&old).unwrap() + "\n";
        for _ in 0..(40 << 20) / line.len() {
            f.write_all(line.as_bytes()).unwrap();
        }
        for r in runs("node1", "/data", 2, 16.4) {
            writeln!(f, "{}", serde_json::to_string(&r).unwrap()).unwrap();
        }
    }
    let (code, out, err) = fleet_within(
        &[h.as_os_str(), "--format".as_ref(), "json".as_ref()],
        24,
        |_| {},
    );
    assert_eq!(code, Some(0), "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(verdicts(&v), pairs(&[("node1", "pass")]));
    assert_eq!(v["hosts"][0]["runs"], 6);
}

/// `runs` with the figures spread ±`spread` in a fixed pattern, run by run.
fn spread_runs(host: &str, days: i64, mb_s: f64, spread: f64) -> Vec<Record> {
    let mut v = runs(host, "/data", days, mb_s);
    for (i, r) in v.iter_mut().enumerate() {
        let x = mb_s * (1.0 + spread * [0.0, 1.0, -1.0, 0.5, -0.5, 0.25][i % 6]);
        *r = common::swimlane_record(host, "/data", r.timestamp, x);
    }
    v
}

#[test]
fn until_decided_judges_each_node_at_alpha_over_n_and_says_so() {
    let n = Nodes::new();
    // A node 20% above Swimlane's threshold, its runs ±10%: decided pass at α 0.05 on its
    // own, not at 0.05/5 (shown below through `report`, not assumed).
    let edge_runs = spread_runs("edge", 2, 14.0, 0.1);
    let edge = n.history("edge.jsonl", &edge_runs);
    let alone = |alpha: &str| {
        let out = iopscheck()
            .args([
                "report",
                "--until-decided",
                "--alpha",
                alpha,
                "--beta",
                alpha,
            ])
            .args(["--host", "edge", "--format", "json", "--history"])
            .arg(&edge)
            .output()
            .unwrap();
        serde_json::from_slice::<Value>(&out.stdout).unwrap()
    };
    assert_eq!(alone("0.05")["verdict"], "pass");
    let strict = alone("0.01");
    assert_ne!(strict["verdict"], "pass", "{strict}");

    // Alone in a fleet: N = 1, judged at α.
    let (code, v) = fleet_json(&[&edge], &["--until-decided"]);
    assert_eq!((code, v["verdict"].as_str()), (0, Some("pass")), "{v}");
    let reason = v["reason"].as_str().unwrap();
    assert!(
        reason.contains("error rate controlled across 1 node (Bonferroni: α/N per node"),
        "{reason}"
    );

    // With four clear nodes: N = 5, each judged at 0.01, and the edge node no longer passes.
    let mut files = vec![edge.clone()];
    for h in ["node1", "node2", "node3", "node4"] {
        files.push(n.history(&format!("{h}.jsonl"), &spread_runs(h, 2, 20.0, 0.05)));
    }
    let refs: Vec<&Path> = files.iter().map(PathBuf::as_path).collect();
    let (code, v) = fleet_json(&refs, &["--until-decided"]);
    assert_eq!(code, 3, "{v}");
    assert_eq!(
        verdicts(&v),
        pairs(&[
            ("edge", strict["verdict"].as_str().unwrap()),
            ("node1", "pass"),
            ("node2", "pass"),
            ("node3", "pass"),
            ("node4", "pass"),
        ])
    );
    // The edge node's row is its own judgement at α/N, word for word.
    assert_eq!(v["hosts"][0]["reason"], strict["reason"], "{v}");
    let reason = v["reason"].as_str().unwrap();
    assert!(
        reason.contains("error rate controlled across 5 nodes (Bonferroni: α/N per node"),
        "{reason}"
    );
    let s = &v["sequential"];
    assert_eq!(s["nodes"], 5, "{v}");
    assert!(
        (s["alpha_per_node"].as_f64().unwrap() - 0.05 / 5.0).abs() < 1e-12,
        "{s}"
    );
    // The table says it too.
    let out = iopscheck()
        .arg("fleet")
        .args(&refs)
        .arg("--until-decided")
        .output()
        .unwrap();
    let table = String::from_utf8_lossy(&out.stdout).replace('\n', " ");
    assert!(table.contains("Bonferroni"), "{table}");

    // The edge node's own result, decided pass at α by `report --until-decided`, is judged
    // again at α/N from the runs it carries.
    let h = n.history("edge.src.jsonl", &edge_runs);
    let out = iopscheck()
        .args([
            "report",
            "--until-decided",
            "--host",
            "edge",
            "--format",
            "json",
            "--history",
        ])
        .arg(&h)
        .output()
        .unwrap();
    let result = n.path("edge.json");
    std::fs::write(&result, &out.stdout).unwrap();
    let mut refs = refs.clone();
    refs[0] = &result;
    let (_, v) = fleet_json(&refs, &["--until-decided"]);
    assert_eq!(v["hosts"][0]["source"], "result", "{v}");
    assert_eq!(v["hosts"][0]["verdict"], strict["verdict"], "{v}");

    // Without --until-decided: no such claim.
    let (_, v) = fleet_json(&refs, &[]);
    assert!(!v["reason"].as_str().unwrap().contains("Bonferroni"), "{v}");
    assert!(v.get("sequential").is_none(), "{v}");
}

// ---- which evidence each node's verdict is of ---------------------------------------------

/// A directory of run results and histories: two nodes judged on their history (a history
/// file, a `report` result), two on one sitting (a `run` result of the policy's test, and a
/// real quick run on a 4 MiB file, which is not its test). Each row and the fleet's verdict
/// say which; `--require-evidence` makes the sittings inconclusive; a figure of runs that are
/// not the policy's test never carries a ✓, in any format.
#[test]
fn a_mixed_directory_names_each_nodes_evidence_and_require_evidence_judges_sittings() {
    let n = Nodes::new();
    let dir = n.path("results");
    std::fs::create_dir(&dir).unwrap();
    n.history("results/hist.jsonl", &runs("hist", "/data", 2, 16.4));
    let rep = n.result("rep.json", "rep", &runs("rep", "/data", 2, 16.4));
    std::fs::rename(&rep, dir.join("rep.json")).unwrap();
    n.sitting(&dir, "sit.json", "sit");
    // A quick look: 4 MiB for a second, a test that flatters the disk.
    let quick = n.path("quick");
    std::fs::create_dir(&quick).unwrap();
    let out = iopscheck()
        .args([
            "run",
            "--quiet",
            "--no-history",
            "--size",
            "4m",
            "--runtime",
            "1",
        ])
        .args([
            "--runs", "1", "--host", "quick", "--format", "json", "--dir",
        ])
        .arg(&quick)
        .env("IOPSCHECK_LOCK_FILE", n.path("run.lock"))
        .output()
        .unwrap();
    if !common::engine_ran(&out) {
        return;
    }
    std::fs::write(dir.join("quick.json"), &out.stdout).unwrap();
    let quick_value = serde_json::from_slice::<Value>(&out.stdout).unwrap()["rules"][0]["value"]
        .as_f64()
        .unwrap();

    let (code, v) = fleet_json(&[&dir], &[]);
    let on: Vec<(String, String)> = v["hosts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| {
            (
                h["host"].as_str().unwrap().to_string(),
                h["judged_on"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(
        on,
        pairs(&[
            ("hist", "history"),
            ("quick", "sitting"),
            ("rep", "history"),
            ("sit", "sitting"),
        ]),
        "{v:#}"
    );
    assert_eq!(
        verdicts(&v),
        pairs(&[
            ("hist", "pass"),
            ("quick", "inconclusive"),
            ("rep", "pass"),
            ("sit", "pass"),
        ])
    );
    assert_eq!(code, 3);
    let whole = v["judged_on"].as_str().unwrap();
    assert!(
        whole.starts_with("2 nodes judged on one sitting each, 2 on their history"),
        "{whole}"
    );

    // Every format says it with the fleet's verdict, and shows the quick look's figure (a
    // pass on a test that flatters) without a ✓.
    let shown = iopscheck::testing::numbers::fmt_value(quick_value);
    for f in [
        "table",
        "markdown",
        "html",
        "junit",
        "prometheus",
        "summary",
        "csv",
    ] {
        let o = iopscheck()
            .arg("fleet")
            .arg(&dir)
            .args(["--format", f])
            .env("COLUMNS", "200")
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(3), "{f}");
        let text = String::from_utf8(o.stdout).unwrap();
        let flat = text
            .replace("&#39;", "'")
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        if f == "csv" {
            let mut r = csv::Reader::from_reader(text.as_bytes());
            let h = r.headers().unwrap().clone();
            let col = h.iter().position(|c| c == "judged_on").unwrap();
            let cells: Vec<String> = r
                .records()
                .map(|row| row.unwrap()[col].to_string())
                .collect();
            assert_eq!(cells, ["history", "sitting", "history", "sitting"]);
            continue;
        }
        assert!(
            flat.contains("2 nodes judged on one sitting each, 2 on their history"),
            "{f}:\n{text}"
        );
        assert!(!flat.contains(&format!("{shown} ✓")), "{f}:\n{text}");
        if f == "table" {
            let row = text.lines().find(|l| l.contains("quick")).unwrap();
            assert!(row.contains(&shown) && !row.contains('✓'), "{row}");
            assert!(
                text.contains(" ✓"),
                "the policy's test keeps its mark:\n{text}"
            );
        }
    }

    // --require-evidence: a sitting is not the policy's evidence over days.
    let (code, v) = fleet_json(&[&dir], &["--require-evidence"]);
    assert_eq!(
        verdicts(&v),
        pairs(&[
            ("hist", "pass"),
            ("quick", "inconclusive"),
            ("rep", "pass"),
            ("sit", "inconclusive"),
        ])
    );
    assert_eq!(code, 3);
    let sit = &v["hosts"][3]["reason"];
    assert!(
        sit.as_str().unwrap().contains("--require-evidence")
            && sit
                .as_str()
                .unwrap()
                .contains("the sitting alone gives pass"),
        "{sit}"
    );
    assert!(
        v["judged_on"]
            .as_str()
            .unwrap()
            .contains("--require-evidence"),
        "{v:#}"
    );
    // The histories alone pass with it: it asks nothing more of them.
    let (code, _) = fleet_json(
        &[&dir.join("hist.jsonl"), &dir.join("rep.json")],
        &["--require-evidence"],
    );
    assert_eq!(code, 0);
}

/// Eight alike nodes' warnings are said once each, with how many nodes share them; the fleet
/// ends with a line that counts the verdicts; a multi-group report ends the same way.
#[test]
fn a_warning_several_nodes_share_is_said_once_and_the_fleet_ends_with_its_counts() {
    let n = Nodes::new();
    let mut stream = String::new();
    for host in ["w1", "w2", "w3", "w4"] {
        let dir = n.path(host);
        std::fs::create_dir(&dir).unwrap();
        let out = iopscheck()
            .args([
                "run",
                "--quiet",
                "--no-history",
                "--size",
                "4m",
                "--runtime",
                "1",
            ])
            .args(["--runs", "1", "--host", host, "--format", "jsonl", "--dir"])
            .arg(&dir)
            .env("IOPSCHECK_LOCK_FILE", n.path("run.lock"))
            .output()
            .unwrap();
        if !common::engine_ran(&out) {
            return;
        }
        stream.push_str(&String::from_utf8(out.stdout).unwrap());
    }
    let (_, v, _) = fleet_stdin(&stream, &[]);
    // The warnings every node's row carries (a small file on this machine's RAM, the test's
    // deviations): each per node in JSON, once in the table.
    let per_node: Vec<Vec<String>> = v["hosts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| {
            h["warnings"]
                .as_array()
                .unwrap()
                .iter()
                .map(|w| w.as_str().unwrap().to_string())
                .collect()
        })
        .collect();
    let common: Vec<&String> = per_node[0]
        .iter()
        .filter(|w| per_node.iter().all(|ws| ws.contains(w)))
        .collect();
    assert!(!common.is_empty(), "{v:#}");
    let out = iopscheck()
        .args(["fleet", "-"])
        .env("COLUMNS", "200")
        .write_stdin(stream.clone())
        .output()
        .unwrap();
    let table = String::from_utf8(out.stdout).unwrap();
    let flat = table.split_whitespace().collect::<Vec<_>>().join(" ");
    for w in &common {
        assert_eq!(flat.matches(w.as_str()).count(), 1, "`{w}` once:\n{table}");
        assert!(
            flat.contains(&format!("warning: 4 nodes (w1, w2, w3, and 1 more): {w}")),
            "{table}"
        );
    }
    let last = table.lines().last().unwrap();
    let c = &v["counts"];
    assert_eq!(
        last,
        format!(
            "fleet: 4 nodes: {} pass, {} fail, {} inconclusive",
            c["pass"], c["fail"], c["inconclusive"]
        )
    );

    // A report over several groups ends with their count too.
    let h = n.history(
        "two.jsonl",
        &[runs("a", "/data", 2, 16.4), runs("b", "/data", 2, 10.0)].concat(),
    );
    let out = iopscheck()
        .args(["report", "--host", "a", "--history"])
        .arg(&h)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let out = iopscheck()
        .args(["report", "--host", "all", "--history"])
        .arg(&h)
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(
        text.lines().last(),
        Some("report: 2 groups: 1 pass, 1 fail, 0 inconclusive"),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Six runs of Confluent's test over two days on `host`, each measuring the metric of the
/// policy's fleet rule (total IOPS) at `iops`: one broker's history.
fn broker(n: &Nodes, host: &str, iops: f64) -> PathBuf {
    let p = iopscheck::testing::policy::resolve("confluent")
        .unwrap()
        .policy;
    let records: Vec<Record> = (0..6)
        .map(|i| {
            // two batches 20 h apart: two days of evidence (12 h after the last), whatever now is
            let mut r = rec(
                host,
                "/data",
                Duration::hours([44, 42, 40, 20, 18, 16][i]),
                1.0,
            );
            r.policy = p.name.clone();
            r.job = p.job.shape();
            r.engine = p.job.ioengine.to_string();
            r.metrics = p.fleet.iter().map(|f| (f.metric.clone(), iops)).collect();
            // the figures total_iops is the sum of (a record keeps both)
            for (k, share) in [("read_iops", 0.75), ("write_iops", 0.25)] {
                r.metrics.insert(k.into(), iops * share);
            }
            r
        })
        .collect();
    n.history(&format!("{host}.jsonl"), &records)
}

fn confluent_fleet(files: &[&Path], format: &str) -> (i32, String) {
    let out = iopscheck()
        .args(["fleet", "--policy", "confluent", "--format", format])
        .args(files)
        .output()
        .unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8(out.stdout).unwrap(),
    )
}

#[test]
fn the_reply_says_what_fails_when_only_a_rule_over_the_fleet_does() {
    let n = Nodes::new();
    let bound = iopscheck::testing::policy::resolve("confluent")
        .unwrap()
        .policy
        .fleet[0]
        .max_over_min;
    let a = broker(&n, "broker-a", 4000.0);
    let b = broker(&n, "broker-b", 4000.0 * 1.02);
    // further off than the bound allows: each broker passes alone, the fleet fails
    let c = broker(&n, "broker-c", 4000.0 / (bound * 1.2));
    let (code, v) = fleet_json(&[&a, &b, &c], &["--policy", "confluent"]);
    assert_eq!((code, v["verdict"].as_str()), (1, Some("fail")), "{v}");
    assert!(
        v["hosts"]
            .as_array()
            .unwrap()
            .iter()
            .all(|h| h["verdict"] == "pass"),
        "{v}"
    );

    let (code, reply) = confluent_fleet(&[&a, &b, &c], "reply");
    assert_eq!(code, 1);
    // No count of failing nodes where none fails, no empty list.
    assert!(!reply.contains("0 do") && !reply.contains("()"), "{reply}");
    assert!(
        reply.starts_with("The nodes together do not meet Confluent's requirement."),
        "{reply}"
    );
    assert!(
        reply.contains("On its own, each of these meets it: broker-a, broker-b, broker-c."),
        "{reply}"
    );
    // The rule that fails, with the two brokers furthest apart.
    let rule = reply
        .lines()
        .find(|l| l.starts_with("Together they differ more than Confluent allows: "))
        .unwrap_or_else(|| panic!("{reply}"));
    assert!(
        rule.contains("broker-b") && rule.contains("broker-c") && rule.contains("exceeds it"),
        "{rule}"
    );

    // A failing broker besides: it is named, and the rule still said.
    let slow = broker(&n, "broker-d", 0.0);
    let (_, reply) = confluent_fleet(&[&a, &b, &slow], "reply");
    assert!(!reply.contains("()"), "{reply}");
    assert!(
        reply.contains("Together they differ more than Confluent allows: "),
        "{reply}"
    );

    // One broker alone: the rule cannot be judged, and nothing else is wrong.
    let (code, reply) = confluent_fleet(&[&a], "reply");
    assert_eq!(code, 3);
    assert!(!reply.contains("0 of") && !reply.contains("()"), "{reply}");
    assert!(
        reply.starts_with(
            "We cannot tell yet whether the nodes together meet Confluent's requirement."
        ),
        "{reply}"
    );
    assert!(
        reply.contains("How alike they are cannot be judged yet: ")
            && reply.contains("give every node's results"),
        "{reply}"
    );
}

#[test]
fn a_large_fleets_summary_is_one_line_under_200_characters_with_its_deciding_figure() {
    let n = Nodes::new();
    let mut files = Vec::new();
    // Twelve nodes: eight pass, two fail (one further off), two have one day of runs.
    for i in 0..12 {
        let host = format!("storage-node-{i:02}");
        let (days, mb_s) = match i {
            3 => (2, 9.0),
            7 => (2, 11.0),
            5 | 9 => (1, 16.4),
            _ => (2, 16.4),
        };
        files.push(n.history(&format!("{i}.jsonl"), &runs(&host, "/data", days, mb_s)));
    }
    let paths: Vec<&Path> = files.iter().map(PathBuf::as_path).collect();
    let (code, v) = fleet_json(&paths, &[]);
    assert_eq!(code, 1);
    // The counts, the evidence and the reason alone are over 200 characters.
    let long = format!(
        "FAIL swimlane fleet: 12 nodes (8 pass, 2 fail, 2 inconclusive); {}; {}",
        v["judged_on"].as_str().unwrap(),
        v["reason"].as_str().unwrap()
    );
    assert!(long.chars().count() > 200, "{long}");
    let (host, lowest) = v["hosts"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|h| h["verdict"] == "fail")
        .map(|h| (h["host"].as_str().unwrap(), h["value"].as_f64().unwrap()))
        .min_by(|a, b| a.1.total_cmp(&b.1))
        .unwrap();

    let out = iopscheck()
        .arg("fleet")
        .args(&paths)
        .args(["--format", "summary"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8(out.stdout).unwrap();
    let line = text.strip_suffix('\n').unwrap();
    assert!(!line.contains('\n'), "{text}");
    assert!(
        line.chars().count() < 200,
        "{} {line}",
        line.chars().count()
    );
    assert!(
        line.starts_with("FAIL swimlane fleet: 12 nodes (8 pass, 2 fail, 2 inconclusive)"),
        "{line}"
    );
    // The deciding figure once: the lowest failing node's, against the threshold.
    let figure = iopscheck::testing::numbers::fmt_value(lowest);
    assert!(
        line.contains(&format!("{host} {figure} IOPS, needs ≥ 3000 IOPS")),
        "{line}"
    );
    assert_eq!(line.matches(&figure).count(), 1, "{line}");
    // And the one caveat that matters most: why the first undecided node is.
    assert!(line.contains("; caveat: storage-node-05: "), "{line}");
}

/// The first line `fleet --format summary` prints over `files`, with its exit code.
fn summary_line(files: &[&Path], extra: &[&str]) -> (i32, String) {
    let out = iopscheck()
        .arg("fleet")
        .args(files)
        .args(extra)
        .args(["--format", "summary"])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let line = text.strip_suffix('\n').unwrap_or(&text).to_string();
    assert!(!line.contains('\n'), "{text}");
    assert!(
        line.chars().count() < 200,
        "{} {line}",
        line.chars().count()
    );
    (out.status.code().unwrap(), line)
}

/// Nodes judged on mixed evidence (a sitting, two histories) take the line's room with their
/// words; the reason the fleet is undecided (the first undecided node's) still comes, its
/// statement whole, the evidence said in fewer words if need be.
#[test]
fn a_summary_keeps_the_caveat_an_inconclusive_fleet_rests_on_beside_mixed_evidence() {
    let n = Nodes::new();
    let dir = n.path("results");
    std::fs::create_dir(&dir).unwrap();
    for (host, days) in [("storage-node-01", 2), ("storage-node-02", 1)] {
        n.history(
            &format!("results/{host}.jsonl"),
            &runs(host, "/data", days, 16.4),
        );
    }
    n.sitting(&dir, "sit.json", "storage-node-03");
    for extra in [&[][..], &["--require-evidence"][..]] {
        let (code, v) = fleet_json(&[&dir], extra);
        assert_eq!((code, v["verdict"].as_str()), (3, Some("inconclusive")));
        assert!(
            v["judged_on"].as_str().unwrap().contains("one sitting"),
            "{v:#}"
        );
        let c = &v["counts"];
        let undecided = v["hosts"]
            .as_array()
            .unwrap()
            .iter()
            .find(|h| h["verdict"] == "inconclusive")
            .unwrap();
        // What the node lacks, with its figures: "not enough evidence yet (3 of 6 runs over
        // 1 of 2 days"; what to do about it may be cut.
        let reason = undecided["reason"].as_str().unwrap();
        let statement = reason.split(" — ").next().unwrap();
        assert!(
            statement.len() > 40 && statement.chars().any(|c| c.is_ascii_digit()),
            "{reason}"
        );

        let (code, line) = summary_line(&[&dir], extra);
        assert_eq!(code, 3, "{line}");
        assert!(
            line.starts_with(&format!(
                "INCONCLUSIVE swimlane fleet: 3 nodes ({} pass, ",
                c["pass"]
            )) && line.contains(&format!("{} inconclusive)", c["inconclusive"])),
            "{line}"
        );
        assert!(
            line.contains(&format!(
                "caveat: {}: {statement}",
                undecided["host"].as_str().unwrap()
            )),
            "{extra:?}: {line}"
        );
        if !extra.is_empty() {
            assert!(line.contains("(--require-evidence)"), "{line}");
        }
    }
}

/// A rule over the fleet that fails is the reason for the FAIL: the summary says it whole, up
/// to what exceeds the bound, whatever else it has to say shorter.
#[test]
fn a_summary_keeps_the_fleet_rule_that_fails_whole() {
    let n = Nodes::new();
    let a = broker(&n, "broker-a", 4000.0);
    let b = broker(&n, "broker-b", 4080.0);
    let c = broker(&n, "broker-c", 2000.0);
    // A broker whose history holds another policy's runs: undecided, the rule fails anyway.
    let e = n.history("e.jsonl", &runs("broker-e", "/data", 2, 16.4));
    for files in [vec![&a, &b, &c], vec![&a, &b, &c, &e]] {
        let files: Vec<&Path> = files.into_iter().map(PathBuf::as_path).collect();
        let (code, v) = fleet_json(&files, &["--policy", "confluent"]);
        assert_eq!((code, v["verdict"].as_str()), (1, Some("fail")), "{v:#}");
        let rule = v["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(Value::as_str)
            .find(|w| w.starts_with("fleet rule ") && w.contains(": fails, "))
            .unwrap_or_else(|| panic!("{v:#}"));
        let deciding = &rule[..rule.find("exceeds it").unwrap() + "exceeds it".len()];
        assert!(
            deciding.chars().count() > 100,
            "a rule this long leaves the line little room: {deciding}"
        );
        let (code, line) = summary_line(&files, &["--policy", "confluent"]);
        assert_eq!(code, 1, "{line}");
        assert!(
            line.starts_with(&format!("FAIL confluent fleet: {} nodes (", files.len())),
            "{line}"
        );
        assert!(line.contains(deciding), "{line}");
        if files.len() == 4 {
            assert!(line.contains("1 inconclusive"), "{line}");
        }
    }
}

/// A fleet that fails on some nodes while others are undecided: the reply names both, and
/// asks for the policy's test on the undecided ones; where only a rule over the fleet fails,
/// the undecided node is named too, and no count of failing nodes is made up.
#[test]
fn the_reply_names_the_undecided_nodes_of_a_fleet_that_fails() {
    let n = Nodes::new();
    let pass = n.history("pass.jsonl", &runs("node-pass", "/data", 2, 16.4));
    let fail = n.history("fail.jsonl", &runs("node-slow", "/data", 2, 9.0));
    let open1 = n.history("open1.jsonl", &runs("node-new1", "/data", 1, 16.4));
    let open2 = n.history("open2.jsonl", &runs("node-new2", "/data", 1, 16.4));
    let reply = |files: &[&Path], extra: &[&str]| {
        let out = iopscheck()
            .arg("fleet")
            .args(files)
            .args(extra)
            .args(["--format", "reply"])
            .output()
            .unwrap();
        (
            out.status.code().unwrap(),
            String::from_utf8(out.stdout).unwrap(),
        )
    };
    let hosts = |v: &Value, verdict: &str| -> Vec<String> {
        v["hosts"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|h| h["verdict"] == verdict)
            .map(|h| h["host"].as_str().unwrap().to_string())
            .collect()
    };
    for files in [
        vec![&pass, &fail, &open1],
        vec![&pass, &fail, &open1, &open2],
    ] {
        let files: Vec<&Path> = files.into_iter().map(PathBuf::as_path).collect();
        let (code, v) = fleet_json(&files, &[]);
        assert_eq!((code, v["verdict"].as_str()), (1, Some("fail")), "{v:#}");
        let (failing, undecided) = (hosts(&v, "fail"), hosts(&v, "inconclusive"));
        assert_eq!((failing.len(), undecided.len()), (1, files.len() - 2));

        let (code, text) = reply(&files, &[]);
        assert_eq!(code, 1, "{text}");
        assert!(
            text.starts_with(&format!(
                "Not every node meets Swimlane's requirement: 1 does not ({}).",
                failing[0]
            )),
            "{text}"
        );
        let said = text
            .split("\n\n")
            .find(|p| p.starts_with("We cannot tell yet whether th"))
            .unwrap_or_else(|| panic!("the undecided nodes are not named:\n{text}"));
        assert!(
            said.ends_with(&format!(
                "meet{} it on {}: {}.",
                if undecided.len() == 1 { "s" } else { "" },
                if undecided.len() == 1 {
                    "its own"
                } else {
                    "their own"
                },
                undecided.join(", ")
            )),
            "{said}"
        );
        assert!(
            text.contains("For each node that cannot be judged yet"),
            "{text}"
        );
    }

    // Only the rule over the fleet fails; one broker is undecided: named outside the rule's
    // words, and no "0 do not ()".
    let a = broker(&n, "broker-a", 4000.0);
    let c = broker(&n, "broker-c", 2000.0);
    let e = n.history("e.jsonl", &runs("broker-e", "/data", 2, 16.4));
    let (code, text) = confluent_fleet(&[&a, &c, &e], "reply");
    assert_eq!(code, 1, "{text}");
    assert!(
        text.starts_with("The nodes together do not meet Confluent's requirement."),
        "{text}"
    );
    assert!(!text.contains("0 do") && !text.contains("()"), "{text}");
    assert!(
        text.contains("We cannot tell yet whether this node meets it on its own: broker-e."),
        "{text}"
    );
}
