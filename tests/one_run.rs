//! `import`: one fio run is one run whatever the formats it is given in (its JSON, text and
//! terse outputs, in one call or against the history), and the syncs an output counts are read
//! against an assumed job. Through the binary, on real fio 3.33 outputs: those of
//! tests/fixtures/one-run (see its README) and, where fio is installed, a small run made here.

mod common;

use std::path::{Path, PathBuf};

use common::Env;
use serde_json::Value;

fn one_run(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/one-run")
        .join(name)
}

/// Swimlane's policy at the scale of the one-run outputs (8 MiB or 4 MiB files, 1 s): judged
/// by it, they are the policy's test, so a run counted twice or a job not the policy's shows
/// in the verdict.
fn small_policy(env: &Env) -> PathBuf {
    env.swimlane_policy("small.yaml", |y| {
        y.replace("size: 4g", "size: 4m")
            .replace("runtime: 60s", "runtime: 1s")
    })
}

fn import(env: &Env, files: &[&Path], args: &[&str]) -> (Option<i32>, Value, String) {
    let mut a: Vec<&str> = files.iter().map(|p| p.to_str().unwrap()).collect();
    a.extend_from_slice(args);
    env.import_json(&a)
}

fn not_counted(j: &Value) -> String {
    j["not_counted"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["reason"].as_str().unwrap().to_string())
        .collect::<Vec<_>>()
        .join("; ")
}

/// The `issued rwts: total=r,w,t,sync` counts of a text output: (writes, syncs).
fn issued(text: &str) -> (u64, u64) {
    let line = text
        .lines()
        .find(|l| l.trim_start().starts_with("issued rwts:"))
        .expect("an issued rwts line");
    let total = line
        .split("total=")
        .nth(1)
        .unwrap()
        .split(' ')
        .next()
        .unwrap();
    let n: Vec<u64> = total.split(',').map(|v| v.parse().unwrap()).collect();
    (n[1], n[3])
}

// ---- 2. The syncs an output counts, against an assumed job ---------------------------------

#[test]
fn syncs_counted_in_the_output_contradict_an_assumed_job_without_them() {
    let env = Env::new();
    let policy = small_policy(&env);
    let p = policy.to_str().unwrap();
    let file = one_run("fsync1.txt");
    let (writes, syncs) = issued(&std::fs::read_to_string(&file).unwrap());
    assert!(syncs > 0 && writes > 0);
    let (code, j, err) = import(&env, &[&file], &["--policy", p, "--assume-job", p]);
    assert_eq!(code, Some(3), "{err}");
    assert_eq!(j["verdict"], "inconclusive");
    let reason = j["reason"].as_str().unwrap();
    assert!(
        reason.contains("not the policy's test")
            && reason.contains(&format!("{syncs} syncs over {writes} writes")),
        "{reason}"
    );
    assert!(
        j["differences"]
            .as_array()
            .unwrap()
            .iter()
            .any(|d| d["field"] == "fsync"),
        "{}",
        j["differences"]
    );
    // the same verdict in the one-line summary
    let out = env
        .cmd()
        .args([
            "import",
            "--policy",
            p,
            "--assume-job",
            p,
            "--format",
            "summary",
        ])
        .arg(&file)
        .output()
        .unwrap();
    let line = String::from_utf8_lossy(&out.stdout);
    assert!(line.starts_with("INCONCLUSIVE"), "{line}");
    assert_eq!(out.status.code(), Some(3));

    // recorded, the run is never the policy's test in a later report either
    let (code, _, err) = import(
        &env,
        &[&file],
        &["--policy", p, "--assume-job", p, "--record", "--host", "n1"],
    );
    assert_eq!(code, Some(3), "{err}");
    let lines = env.history_lines();
    assert_eq!(lines.len(), 1);
    assert!(
        lines[0]["job"]["fsync"].as_u64().is_some_and(|k| k >= 1),
        "{}",
        lines[0]["job"]
    );
    let out = env
        .cmd()
        .args(["report", "--host", "n1", "--policy", p, "--format", "json"])
        .output()
        .unwrap();
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_ne!(r["verdict"], "pass", "{}", r["reason"]);
    assert_eq!(r["evidence"]["runs"], 0, "{}", r["evidence"]);
    assert!(
        not_counted(&r).contains("fsync 1 instead of 0"),
        "{}",
        r["not_counted"]
    );
}

#[test]
fn where_the_output_counts_no_syncs_the_assumed_job_stands_and_where_it_has_no_count_nothing_is_read()
 {
    let env = Env::new();
    let policy = small_policy(&env);
    let p = policy.to_str().unwrap();
    // the text of a run without syncs while it ran: its count (0) agrees with the assumed job
    let file = one_run("run1.txt");
    assert_eq!(issued(&std::fs::read_to_string(&file).unwrap()).1, 0);
    let (code, j, err) = import(
        &env,
        &[&file],
        &["--policy", p, "--assume-job", p, "--record", "--host", "n1"],
    );
    assert_eq!(code, Some(0), "{err} {}", j["reason"]);
    assert_eq!(j["verdict"], "pass");
    // recorded, it counts as the policy's test (what the fsync run's record is not)
    let out = env
        .cmd()
        .args(["report", "--host", "n1", "--policy", p, "--format", "json"])
        .output()
        .unwrap();
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(r["evidence"]["runs"], 1, "{}", r["evidence"]);
    // terse output has no sync count: the fsync run's terse line is not read as a contradiction
    // (unknown, as the assumed job's other unstated fields are)
    let (code, j, err) = import(
        &env,
        &[&one_run("fsync1.terse")],
        &["--policy", p, "--assume-job", p],
    );
    assert_eq!(code, Some(0), "{err} {}", j["reason"]);
    assert!(!j["differences"].to_string().contains("fsync"));
}
