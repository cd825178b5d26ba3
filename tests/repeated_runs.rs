//! One fio run is one run: a record repeated in a history (a history concatenated with itself,
//! one fio run recorded from two of its outputs into two histories then merged) counts once,
//! and is listed as not counted; one fio run in two nodes' histories is neither node's
//! evidence; a record whose derived figures contradict what they derive from is no evidence.

mod common;

use std::path::{Path, PathBuf};

use common::{Env, not_counted, three_a_day};
use serde_json::Value;

fn write(path: &Path, lines: &[&str]) {
    let mut text = lines.join("\n");
    text.push('\n');
    std::fs::write(path, text).unwrap();
}

/// `iopscheck ARGS --format json`: exit code, parsed stdout, stderr.
fn json(env: &Env, args: &[&str]) -> (Option<i32>, Value, String) {
    let out = env
        .cmd()
        .args(args)
        .args(["--format", "json"])
        .output()
        .unwrap();
    let j = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    (
        out.status.code(),
        j,
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Six Swimlane runs of `host` (three a day over two days, 16 MB/s: a pass), as lines.
fn six(host: &str) -> Vec<String> {
    let (text, _) = three_a_day(host, "/data", &[16.0; 6]);
    text.lines().map(str::to_string).collect()
}

#[test]
fn a_history_of_two_runs_repeated_three_times_counts_two_runs() {
    let env = Env::new();
    let lines = six("n1");
    // one run a day, the two lines three times over: "6 of 6 runs, 2 of 2 days" before
    let two = [lines[0].as_str(), lines[3].as_str()];
    let h = env.tmp.path().join("h.jsonl");
    write(&h, &[two, two, two].concat());
    let hs = h.to_str().unwrap();
    let (code, j, err) = json(
        &env,
        &["report", "--history", hs, "--host", "n1", "--since", "30d"],
    );
    assert_eq!(code, Some(3), "{j}\n{err}");
    assert_eq!(j["verdict"], "inconclusive", "{j}");
    assert_eq!(j["evidence"]["runs"], 2, "{}", j["evidence"]);
    // the repeats of two lines are tallied as one reason, each listed with its line
    assert_eq!(
        j["not_counted"],
        serde_json::json!([{
            "reason": "the same run as an earlier line, repeated: counted once",
            "runs": 4
        }]),
    );
    let out = env
        .cmd()
        .args(["report", "--history", hs, "--host", "n1", "--since", "30d"])
        .output()
        .unwrap();
    let table = String::from_utf8_lossy(&out.stdout);
    for line in [1, 2] {
        let said = format!("the same run as line {line}, repeated: counted once");
        assert_eq!(table.matches(&said).count(), 2, "{table}");
    }
    // the fleet reads the history the same way
    let out = env.cmd().args(["fleet", hs]).output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/one-run")
        .join(name)
}

#[test]
fn one_fio_run_recorded_from_its_json_and_its_text_into_two_histories_counts_once() {
    let env = Env::new();
    let policy = env.swimlane_policy("small.yaml", |y| {
        y.replace("size: 4g", "size: 4m")
            .replace("runtime: 60s", "runtime: 1s")
    });
    let p = policy.to_str().unwrap();
    let (h1, h2) = (
        env.tmp.path().join("h1.jsonl"),
        env.tmp.path().join("h2.jsonl"),
    );
    for (h, f) in [(&h1, "run1.json"), (&h2, "run1.txt")] {
        let out = env
            .cmd()
            .args([
                "import",
                "-p",
                p,
                "--record",
                "--host",
                "n1",
                "--dir",
                "/data",
                "--history",
            ])
            .arg(h)
            .arg(fixture(f))
            .output()
            .unwrap();
        assert!(
            matches!(out.status.code(), Some(0 | 3)),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let merged = env.tmp.path().join("merged.jsonl");
    let text = std::fs::read_to_string(&h1).unwrap() + &std::fs::read_to_string(&h2).unwrap();
    std::fs::write(&merged, text).unwrap();
    let (_, j, err) = json(
        &env,
        &[
            "report",
            "-p",
            p,
            "--history",
            merged.to_str().unwrap(),
            "--host",
            "n1",
            "--since",
            "3650d",
        ],
    );
    assert_eq!(j["evidence"]["runs"], 1, "{j}\n{err}");
    let nc = not_counted(&j);
    assert!(
        nc.contains("the same run as line 1, repeated: counted once"),
        "{nc}"
    );
}

/// `lines` as imported records: each with a `source_digest` of its own, as `import` writes.
fn imported(lines: &[String], host: &str) -> Vec<String> {
    lines
        .iter()
        .enumerate()
        .map(|(i, l)| {
            let mut v: Value = serde_json::from_str(l).unwrap();
            v["source"] = "imported".into();
            v["source_digest"] = format!("fnv1a64:00000000000000{i:02}:100#0").into();
            v["host"] = host.into();
            v.to_string()
        })
        .collect()
}

#[test]
fn one_fio_run_in_two_nodes_histories_passes_neither() {
    let env = Env::new();
    let runs = six("n1");
    let (a, b) = (
        env.tmp.path().join("a.jsonl"),
        env.tmp.path().join("b.jsonl"),
    );
    let la = imported(&runs, "n1");
    let lb = imported(&runs, "n2");
    write(&a, &la.iter().map(String::as_str).collect::<Vec<_>>());
    write(&b, &lb.iter().map(String::as_str).collect::<Vec<_>>());
    let (code, j, err) = json(&env, &["fleet", a.to_str().unwrap(), b.to_str().unwrap()]);
    assert_eq!(code, Some(3), "{j}\n{err}");
    let nodes = j["hosts"].as_array().unwrap();
    assert_eq!(nodes.len(), 2, "{j}");
    for (n, other) in [("n1", "n2"), ("n2", "n1")] {
        let row = nodes.iter().find(|r| r["host"] == n).unwrap();
        assert_eq!(row["verdict"], "inconclusive", "{row}");
        let reason = row["reason"].as_str().unwrap();
        assert!(
            reason.contains("6 of its runs") && reason.contains(&format!("node {other}")),
            "{reason}"
        );
    }
    // each node alone, with runs of its own, still passes
    let lb_own: Vec<String> = imported(&runs, "n2")
        .into_iter()
        .map(|l| l.replace("fnv1a64:00", "fnv1a64:ff"))
        .collect();
    write(&b, &lb_own.iter().map(String::as_str).collect::<Vec<_>>());
    let (code, j, _) = json(&env, &["fleet", a.to_str().unwrap(), b.to_str().unwrap()]);
    assert_eq!(code, Some(0), "{j}");
}

/// The six runs with each record's metrics changed by `edit`.
fn edited(edit: impl Fn(&mut Value)) -> Vec<String> {
    six("n1")
        .iter()
        .map(|l| {
            let mut v: Value = serde_json::from_str(l).unwrap();
            edit(&mut v["metrics"]);
            v.to_string()
        })
        .collect()
}

#[test]
fn a_record_whose_formula_contradicts_its_bandwidth_is_no_evidence() {
    let env = Env::new();
    let cases: [(&str, Vec<String>, &str); 2] = [
        (
            "formula beside 5 MB/s",
            edited(|m| {
                m["write_bw_mb_s"] = 5.0.into();
                m["write_iops"] = 1220.7.into();
                m["write_iops_formula"] = 33000.0.into();
            }),
            "its figures contradict each other: write_iops_formula 33000 where its write_bw_mb_s 5 at block size 4096 B gives 1280",
        ),
        (
            "formula alone",
            edited(|m| {
                let f = m["write_iops_formula"].clone();
                *m = serde_json::json!({ "write_iops_formula": f });
            }),
            "without the write_bw_mb_s it is derived from",
        ),
    ];
    for (what, lines, why) in cases {
        let h = env.tmp.path().join("h.jsonl");
        write(&h, &lines.iter().map(String::as_str).collect::<Vec<_>>());
        let hs = h.to_str().unwrap();
        let (code, j, err) = json(
            &env,
            &["report", "--history", hs, "--host", "n1", "--since", "30d"],
        );
        assert_eq!(code, Some(3), "{what}: {j}\n{err}");
        assert_eq!(j["evidence"]["runs"], 0, "{what}: {}", j["evidence"]);
        assert!(err.contains(why), "{what}: {err}");
        let out = env.cmd().args(["fleet", hs]).output().unwrap();
        assert_eq!(out.status.code(), Some(3), "{what}");
    }
    // the same records, their figures untouched, pass
    let h = env.tmp.path().join("h.jsonl");
    let lines = six("n1");
    write(&h, &lines.iter().map(String::as_str).collect::<Vec<_>>());
    let (code, j, _) = json(
        &env,
        &[
            "report",
            "--history",
            h.to_str().unwrap(),
            "--host",
            "n1",
            "--since",
            "30d",
        ],
    );
    assert_eq!(code, Some(0), "{j}");
}
