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
            .arg(common::one_run_fixture(f))
            .output()
            .unwrap();
        assert!(
            matches!(out.status.code(), Some(0 | 3)),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    merged_counts_once(&env, p, &h1, &h2, "run1.json run1.txt");
}

/// Histories `h1` and `h2` of node n1 merged into `name` (in the temp dir), and `report`'s
/// JSON of n1 under policy `p` over ten years: the merged history, the report, its stderr.
fn merged_report(env: &Env, p: &str, h1: &Path, h2: &Path, name: &str) -> (PathBuf, Value, String) {
    let merged = env.tmp.path().join(name);
    let text = std::fs::read_to_string(h1).unwrap() + &std::fs::read_to_string(h2).unwrap();
    std::fs::write(&merged, text).unwrap();
    let (_, j, err) = json(
        env,
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
    (merged, j, err)
}

/// Histories `h1` and `h2` of node n1 merged into one: `report` under policy `p` counts one
/// run, the second record named as repeating line 1 (`what`: the case, for the messages).
/// The merged history's path.
fn merged_counts_once(env: &Env, p: &str, h1: &Path, h2: &Path, what: &str) -> PathBuf {
    let (merged, j, err) = merged_report(env, p, h1, h2, "merged.jsonl");
    assert_eq!(j["evidence"]["runs"], 1, "{what}: {j}\n{err}");
    let nc = not_counted(&j);
    assert!(
        nc.contains("the same run as line 1, repeated: counted once"),
        "{what}: {nc}"
    );
    merged
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

/// Swimlane's policy at the scale of the one-run outputs (8 MiB, 1 s), one run enough for a
/// verdict: a node passes on one imported run of its test.
fn one_run_policy(env: &Env) -> PathBuf {
    env.swimlane_policy("one-run.yaml", |y| {
        y.replace("size: 4g", "size: 8m")
            .replace("runtime: 60s", "runtime: 1s")
            .replace("min_runs: 6", "min_runs: 1")
            .replace("min_days: 2", "min_days: 1")
    })
}

/// `import --record` of the one-run output `file` as `host`'s into history `h` (a text or
/// terse output's job asserted to be the policy's), which must succeed.
fn record_one(env: &Env, policy: &Path, file: &str, host: &str, h: &Path) {
    let p = policy.to_str().unwrap();
    let out = env
        .cmd()
        .args(["import", "-q", "-p", p, "--assume-job", p, "--record"])
        .args(["--host", host, "--dir", "/data", "--history"])
        .arg(h)
        .arg(common::one_run_fixture(file))
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{file}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// `fleet` of `inputs` under `policy` over ten years: its exit code and each node's verdict
/// and reason, by host.
fn fleet_of(
    env: &Env,
    policy: &Path,
    inputs: &[&Path],
    stdin: Option<Vec<u8>>,
) -> (Option<i32>, Vec<(String, String, String)>) {
    let mut cmd = env.cmd();
    cmd.args(["fleet", "-p", policy.to_str().unwrap(), "--since", "3650d"])
        .args(inputs)
        .args(["--format", "json"]);
    if let Some(s) = stdin {
        cmd.write_stdin(s);
    }
    let out = cmd.output().unwrap();
    let j: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!("{e}: {}", String::from_utf8_lossy(&out.stderr));
    });
    let mut rows: Vec<(String, String, String)> = j["hosts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let s = |k: &str| r[k].as_str().unwrap_or_default().to_string();
            (s("host"), s("verdict"), s("reason"))
        })
        .collect();
    rows.sort();
    (out.status.code(), rows)
}

#[test]
fn one_fio_run_imported_on_two_nodes_from_two_of_its_formats_passes_neither() {
    let env = Env::new();
    let policy = one_run_policy(&env);
    let h = |n: &str| env.tmp.path().join(format!("{n}.jsonl"));
    // run1 from its JSON on A, its text on B, its terse line on C; run2 from its JSON on D
    // and its text on E (a second real run of the same command, a minute later)
    for (file, host) in [
        ("run1.json", "A"),
        ("run1.txt", "B"),
        ("run1.terse", "C"),
        ("run2.json", "D"),
        ("run2.txt", "E"),
    ] {
        record_one(&env, &policy, file, host, &h(host));
    }
    let (a, b, c, d, e) = (h("A"), h("B"), h("C"), h("D"), h("E"));
    let shares = |rows: &[(String, String, String)], host: &str, others: &[&str]| {
        let (_, verdict, reason) = rows.iter().find(|r| r.0 == host).unwrap();
        assert_eq!(verdict, "inconclusive", "{host}: {reason}");
        // C's terse line states no date: its run counts towards no day, which C's verdict
        // says first (its run is named shared in the other nodes' reasons)
        if host == "C" {
            assert!(reason.contains("1 run states no date"), "{host}: {reason}");
            return;
        }
        assert!(
            reason.contains("1 of its runs (the earliest at ")
                && reason.contains("is also counted for node")
                && reason.contains("one fio run is one machine's"),
            "{host}: {reason}"
        );
        assert!(
            others
                .iter()
                .any(|o| reason.contains(&format!("node {o} "))),
            "{host}: {reason}"
        );
    };
    let passes = |rows: &[(String, String, String)], host: &str| {
        let (_, verdict, reason) = rows.iter().find(|r| r.0 == host).unwrap();
        assert_eq!(verdict, "pass", "{host}: {reason}");
    };
    // JSON on one node, text on the other, either order; JSON and terse; text and terse
    for (x, y, hx, hy) in [
        (&a, &b, "A", "B"),
        (&b, &a, "B", "A"),
        (&a, &c, "A", "C"),
        (&c, &b, "C", "B"),
        (&e, &d, "E", "D"),
    ] {
        let (code, rows) = fleet_of(&env, &policy, &[x, y], None);
        assert_eq!(code, Some(3), "{hx} {hy}: {rows:?}");
        shares(&rows, hx, &[hy]);
        shares(&rows, hy, &[hx]);
    }
    // the histories given on stdin (`fleet -`, read once as it streams in)
    let stream = [&a, &b, &d].map(|p| std::fs::read(p).unwrap()).concat();
    let (code, rows) = fleet_of(&env, &policy, &[Path::new("-")], Some(stream));
    assert_eq!(code, Some(3), "{rows:?}");
    shares(&rows, "A", &["B"]);
    shares(&rows, "B", &["A"]);
    passes(&rows, "D");
    // two different runs, in any formats, on two nodes: each node's own, both pass (C's
    // terse run states no date, so it is on no day: C does not)
    for (x, y) in [(&a, &d), (&b, &d), (&c, &d), (&a, &e), (&b, &e), (&c, &e)] {
        let (code, rows) = fleet_of(&env, &policy, &[x, y], None);
        let c = x == &c;
        assert_eq!(code, Some(if c { 3 } else { 0 }), "{x:?} {y:?}: {rows:?}");
        assert_eq!(rows[1].1, "pass", "{rows:?}");
        if c {
            shares(&rows, "C", &[]);
        }
    }
    // all five: the three nodes of run1 and the two of run2, each inconclusive
    let (code, rows) = fleet_of(&env, &policy, &[&a, &b, &c, &d, &e], None);
    assert_eq!(code, Some(3), "{rows:?}");
    for (host, others) in [
        ("A", &["B", "C"][..]),
        ("B", &["A", "C"]),
        ("C", &["A", "B"]),
        ("D", &["E"]),
        ("E", &["D"]),
    ] {
        shares(&rows, host, others);
    }
}

#[test]
fn one_fio_run_in_a_nodes_result_and_another_nodes_history_passes_neither() {
    let env = Env::new();
    let policy = one_run_policy(&env);
    let p = policy.to_str().unwrap();
    let h = |n: &str| env.tmp.path().join(format!("{n}.jsonl"));
    // D's run from its text, which states its date (a terse line states none: a node of
    // terse runs alone has no day of evidence, and passes nothing)
    for (file, host) in [("run1.json", "A"), ("run1.txt", "B"), ("run2.txt", "D")] {
        record_one(&env, &policy, file, host, &h(host));
    }
    // B's and D's results (`report --format json`), each carrying its run
    let result = |host: &str| {
        let (code, j, err) = json(
            &env,
            &[
                "report",
                "-p",
                p,
                "--since",
                "3650d",
                "--host",
                host,
                "--history",
                h(host).to_str().unwrap(),
            ],
        );
        assert_eq!(code, Some(0), "{host}: {j}\n{err}");
        let path = env.tmp.path().join(format!("{host}.json"));
        std::fs::write(&path, j.to_string()).unwrap();
        path
    };
    let (rb, rd) = (result("B"), result("D"));
    let (code, rows) = fleet_of(&env, &policy, &[&h("A"), &rb], None);
    assert_eq!(code, Some(3), "{rows:?}");
    for (host, other) in [("A", "B"), ("B", "A")] {
        let (_, verdict, reason) = rows.iter().find(|r| r.0 == host).unwrap();
        assert_eq!(verdict, "inconclusive", "{host}: {reason}");
        assert!(
            reason.contains(&format!("also counted for node {other} ")),
            "{host}: {reason}"
        );
    }
    // the results on stdin, one a line (`--format jsonl`, as a log stream carries them)
    let line = |p: &Path| {
        let v: Value = serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap();
        format!("{v}\n")
    };
    let stream = (line(&rb) + &line(&rd)).into_bytes();
    let (code, rows) = fleet_of(&env, &policy, &[&h("A"), Path::new("-")], Some(stream));
    assert_eq!(code, Some(3), "{rows:?}");
    let verdicts: Vec<_> = rows.iter().map(|r| (r.0.as_str(), r.1.as_str())).collect();
    assert_eq!(
        verdicts,
        [("A", "inconclusive"), ("B", "inconclusive"), ("D", "pass")],
        "{rows:?}"
    );
    // another run's result beside A's history: each node's own, both pass
    let (code, rows) = fleet_of(&env, &policy, &[&h("A"), &rd], None);
    assert_eq!(code, Some(0), "{rows:?}");
    // B's support bundle beside A's history: its history is B's evidence
    let bundle = env.tmp.path().join("b.tar.gz");
    let out = env
        .cmd()
        .args(["bundle", "-q", "-p", p, "--host", "B", "--since", "3650d"])
        .arg("-o")
        .arg(&bundle)
        .arg("--history")
        .arg(h("B"))
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let (code, rows) = fleet_of(&env, &policy, &[&h("A"), &bundle], None);
    assert_eq!(code, Some(3), "{rows:?}");
    let verdicts: Vec<_> = rows.iter().map(|r| (r.0.as_str(), r.1.as_str())).collect();
    assert_eq!(
        verdicts,
        [("A", "inconclusive"), ("B", "inconclusive")],
        "{rows:?}"
    );
}

#[test]
fn one_fio_run_recorded_from_any_two_of_its_formats_into_two_histories_counts_once() {
    let env = Env::new();
    let policy = one_run_policy(&env);
    let p = policy.to_str().unwrap();
    for (first, second) in [
        ("run1.json", "run1.terse"),
        ("run1.terse", "run1.json"),
        ("run1.txt", "run1.terse"),
        ("run1.terse", "run1.txt"),
        ("run1.json", "run1.txt"),
    ] {
        let (h1, h2) = (
            env.tmp.path().join("h1.jsonl"),
            env.tmp.path().join("h2.jsonl"),
        );
        let _ = std::fs::remove_file(&h1);
        let _ = std::fs::remove_file(&h2);
        record_one(&env, &policy, first, "n1", &h1);
        record_one(&env, &policy, second, "n1", &h2);
        let merged = merged_counts_once(&env, p, &h1, &h2, &format!("{first} {second}"));
        // the fleet, reading the history as it streams in (a file, or stdin), counts it once
        let bytes = std::fs::read(&merged).unwrap();
        for stdin in [None, Some(bytes)] {
            let mut cmd = env.cmd();
            cmd.args(["fleet", "-p", p, "--since", "3650d", "--format", "json"]);
            match stdin {
                None => cmd.arg(&merged),
                Some(b) => cmd.arg("-").write_stdin(b),
            };
            let out = cmd.output().unwrap();
            let j: Value = serde_json::from_slice(&out.stdout).unwrap();
            assert_eq!(j["hosts"][0]["runs"], 1, "fleet, {first} {second}: {j}");
        }
    }
    // two different runs, JSON and terse: both count
    let (one, other) = (
        env.tmp.path().join("one.jsonl"),
        env.tmp.path().join("other.jsonl"),
    );
    record_one(&env, &policy, "run1.json", "n1", &one);
    record_one(&env, &policy, "run2.terse", "n1", &other);
    let (_, j, err) = merged_report(&env, p, &one, &other, "two.jsonl");
    assert_eq!(j["evidence"]["runs"], 2, "{j}\n{err}");
}

#[test]
fn one_fio_run_under_two_hosts_in_one_input_passes_neither() {
    let env = Env::new();
    let runs = six("n1");
    // n1's and n2's records of the same imported outputs, in one history
    let both: Vec<String> = [imported(&runs, "n1"), imported(&runs, "n2")].concat();
    let h = env.tmp.path().join("both.jsonl");
    write(&h, &both.iter().map(String::as_str).collect::<Vec<_>>());
    let hs = h.to_str().unwrap();
    for stdin in [false, true] {
        let mut cmd = env.cmd();
        cmd.args(["fleet", "--format", "json"]);
        if stdin {
            cmd.arg("-").write_stdin(std::fs::read(&h).unwrap());
        } else {
            cmd.arg(hs);
        }
        let out = cmd.output().unwrap();
        let j: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(out.status.code(), Some(3), "{j}");
        let nodes = j["hosts"].as_array().unwrap();
        assert_eq!(nodes.len(), 2, "{j}");
        for (n, other) in [("n1", "n2"), ("n2", "n1")] {
            let row = nodes.iter().find(|r| r["host"] == n).unwrap();
            assert_eq!(row["verdict"], "inconclusive", "stdin {stdin}: {row}");
            assert_eq!(row["runs"], 6, "stdin {stdin}: {row}");
            let reason = row["reason"].as_str().unwrap();
            assert!(
                reason.contains("6 of its runs") && reason.contains(&format!("node {other} ")),
                "stdin {stdin}: {reason}"
            );
        }
    }
    // a report of one host still counts its own runs, each once
    let (code, j, _) = json(
        &env,
        &["report", "--history", hs, "--host", "n1", "--since", "30d"],
    );
    assert_eq!(code, Some(0), "{j}");
    assert_eq!(j["evidence"]["runs"], 6, "{j}");
}
