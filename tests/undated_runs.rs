//! What an output does not state is unknown, never assumed: a run whose output states no
//! time (terse output always; text without its job's date line) is placed by the file's
//! modification time or the import's, and counts as a run, towards no day of evidence.
//! Three terse outputs of one afternoon, copied on three days, are not three days.

mod common;

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use common::{Env, fixture};
use serde_json::Value;

/// Swimlane's policy asking for 3 runs (over its 2 days), written to the env's temp dir.
fn three_runs_two_days(env: &Env) -> PathBuf {
    env.swimlane_policy("three.yaml", |y| {
        assert!(y.contains("min_runs: 6"), "{y}");
        y.replace("min_runs: 6", "min_runs: 3")
    })
}

/// fio-3.33-terse.txt (terse v3, one write job) made a minute of 4 KiB writes at `iops`
/// (fields 47–50: write KiB, KiB/s, IOPS, runtime in ms): each `iops` a run of its own.
fn terse_minute(iops: u64) -> String {
    let line = std::fs::read_to_string(fixture("fio-3.33-terse.txt")).unwrap();
    let mut f: Vec<String> = line.trim_end().split(';').map(String::from).collect();
    assert_eq!(f.len(), 130);
    for (field, value) in [(47, iops * 4 * 60), (48, iops * 4), (49, iops), (50, 60000)] {
        f[field - 1] = value.to_string();
    }
    f.join(";") + "\n"
}

/// `text` written to `name` in the env's temp dir, its modification time `days_ago` days back.
fn copied_days_ago(env: &Env, name: &str, text: &str, days_ago: u64) -> PathBuf {
    let p = env.tmp.path().join(name);
    std::fs::write(&p, text).unwrap();
    let t = SystemTime::now() - Duration::from_secs(days_ago * 86400);
    std::fs::File::options()
        .write(true)
        .open(&p)
        .unwrap()
        .set_modified(t)
        .unwrap();
    p
}

/// Three terse outputs of distinct runs, copied 3, 2 and 1 days ago.
fn three_terse_copies(env: &Env) -> Vec<PathBuf> {
    [(4000, 3), (4100, 2), (4200, 1)]
        .iter()
        .enumerate()
        .map(|(i, &(iops, ago))| {
            copied_days_ago(env, &format!("t{i}.txt"), &terse_minute(iops), ago)
        })
        .collect()
}

fn run(env: &Env, args: &[&str], files: &[&Path]) -> (Option<i32>, String) {
    let out = env.cmd().args(args).args(files).output().unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

fn json(env: &Env, args: &[&str], files: &[&Path]) -> (Option<i32>, Value) {
    let (code, out) = run(env, &[args, &["--format", "json"]].concat(), files);
    (code, serde_json::from_str(&out).unwrap())
}

#[test]
fn terse_outputs_copied_on_three_days_count_towards_no_day() {
    let env = Env::new();
    let policy = three_runs_two_days(&env);
    let p = policy.to_str().unwrap();
    let files = three_terse_copies(&env);
    let files: Vec<&Path> = files.iter().map(PathBuf::as_path).collect();
    let import = ["import", "--policy", p, "--assume-job", "swimlane"];

    // The import judges its runs as given, and its tally counts no day of them.
    let (code, j) = json(&env, &import, &files);
    assert_eq!(code, Some(0), "{}", j["reason"]);
    let e = &j["evidence"];
    assert_eq!(
        (&e["runs"], &e["days"], &e["undated_runs"]),
        (&3.into(), &0.into(), &3.into()),
        "{e}"
    );
    assert!(
        j["warnings"].to_string().contains(
            "the output has no timestamp; the file's modification time places the run, and it counts towards no day of evidence"
        ),
        "{}",
        j["warnings"]
    );

    // Recorded, the history's report does not pass on them: no day of evidence.
    let (code, _) = run(
        &env,
        &[&import[..], &["--record", "--host", "n1"]].concat(),
        &files,
    );
    assert_eq!(code, Some(0));
    for line in env.history_lines() {
        assert_eq!(
            line["time_assumed"], "the file's modification time",
            "{line}"
        );
    }
    let report = ["report", "--policy", p, "--host", "n1"];
    let (code, j) = json(&env, &report, &[]);
    assert_eq!(code, Some(3), "{}", j["reason"]);
    assert_eq!(j["verdict"], "inconclusive");
    let reason = j["reason"].as_str().unwrap();
    assert!(
        reason.contains("3 of 3 runs over 0 of 2 days (3 runs state no date (terse output, or text without its job's date line): they count towards no day"),
        "{reason}"
    );
    let e = &j["evidence"];
    assert_eq!(
        (&e["days"], &e["undated_runs"]),
        (&0.into(), &3.into()),
        "{e}"
    );
    assert_eq!(j["summary"]["days"], 0, "{}", j["summary"]);
    // they are runs all the same: counted, in the mean and the window's tables
    assert_eq!(j["summary"]["n"], 3, "{}", j["summary"]);

    // Every format says why.
    for (format, says) in [
        ("table", "3 runs state no date"),
        ("summary", "INCONCLUSIVE"),
        ("markdown", "3 runs state no date"),
        (
            "reply",
            "3 runs' outputs state no date, so they count towards no day",
        ),
    ] {
        let (code, out) = run(&env, &[&report[..], &["--format", format]].concat(), &[]);
        assert_eq!(code, Some(3), "{format}: {out}");
        let flat = out.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(flat.contains(says), "{format}: {out}");
    }

    // The sequential decision's floor counts no day of them either.
    let (code, j) = json(&env, &[&report[..], &["--until-decided"]].concat(), &[]);
    assert_eq!(code, Some(3), "{}", j["reason"]);
    assert_eq!(j["sequential"][0]["days"], 0, "{}", j["sequential"]);
}

/// fio-3.33-sample.json restated as the policy's own job (4 GiB, 60 s), its writes a 60 s
/// run's at `k` times the rate it measured, dated `days_ago` days back: it states its time.
fn dated_json(env: &Env, name: &str, k: f64, days_ago: u64) -> PathBuf {
    let mut v: Value =
        serde_json::from_slice(&std::fs::read(fixture("fio-3.33-sample.json")).unwrap()).unwrap();
    let o = &mut v["jobs"][0]["job options"];
    o["size"] = "4g".into();
    o["runtime"] = "60".into();
    o["time_based"] = "1".into();
    common::sixty_seconds(&mut v["jobs"][0]);
    let w = &mut v["jobs"][0]["write"];
    for key in ["io_bytes", "io_kbytes", "total_ios"] {
        w[key] = ((w[key].as_f64().unwrap() * k).round() as u64).into();
    }
    let t = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap()
        .as_secs()
        - days_ago * 86400;
    v["timestamp"] = t.into();
    v["timestamp_ms"] = (t * 1000).into();
    v.as_object_mut().unwrap().remove("time");
    let p = env.tmp.path().join(name);
    std::fs::write(&p, serde_json::to_vec_pretty(&v).unwrap()).unwrap();
    p
}

#[test]
fn outputs_that_state_their_time_count_their_days_beside_undated_ones() {
    let env = Env::new();
    let policy = three_runs_two_days(&env);
    let p = policy.to_str().unwrap();
    let terse = three_terse_copies(&env);
    let terse: Vec<&Path> = terse.iter().map(PathBuf::as_path).collect();
    let record = ["--record", "--host", "n1", "--policy", p];
    let (code, _) = run(
        &env,
        &[&["import", "--assume-job", "swimlane"][..], &record].concat(),
        &terse,
    );
    assert_eq!(code, Some(0));
    // one JSON output, dated yesterday: one day
    let first = dated_json(&env, "a.json", 1.0, 1);
    let (code, _) = run(&env, &[&["import"][..], &record].concat(), &[&first]);
    assert_eq!(code, Some(0));
    let h = env.history_lines();
    assert!(h[3].get("time_assumed").is_none(), "{}", h[3]);
    let report = ["report", "--policy", p, "--host", "n1"];
    let (code, j) = json(&env, &report, &[]);
    assert_eq!(code, Some(3), "{}", j["reason"]);
    let e = &j["evidence"];
    assert_eq!(
        (&e["runs"], &e["days"], &e["undated_runs"]),
        (&4.into(), &1.into(), &3.into()),
        "{e}"
    );
    // another, dated the day before: two days of stated time, a pass
    let second = dated_json(&env, "b.json", 1.01, 2);
    let (code, _) = run(&env, &[&["import"][..], &record].concat(), &[&second]);
    assert_eq!(code, Some(0));
    let (code, j) = json(&env, &report, &[]);
    assert_eq!(code, Some(0), "{}", j["reason"]);
    let e = &j["evidence"];
    assert_eq!(
        (&e["runs"], &e["days"], &e["undated_runs"]),
        (&5.into(), &2.into(), &3.into()),
        "{e}"
    );
}

#[test]
fn an_output_read_from_stdin_without_a_time_is_dated_by_the_import_and_counts_no_day() {
    let env = Env::new();
    let policy = three_runs_two_days(&env);
    let out = env
        .cmd()
        .args([
            "import",
            "--record",
            "--host",
            "n1",
            "--assume-job",
            "swimlane",
        ])
        .arg("--policy")
        .arg(&policy)
        .args(["-", "--format", "json"])
        .write_stdin(terse_minute(4000))
        .output()
        .unwrap();
    let j: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(j["evidence"]["undated_runs"], 1, "{}", j["evidence"]);
    assert_eq!(j["evidence"]["days"], 0, "{}", j["evidence"]);
    assert!(
        j["warnings"]
            .to_string()
            .contains("the time of the import places the run, and it counts towards no day"),
        "{}",
        j["warnings"]
    );
    assert_eq!(
        env.history_lines()[0]["time_assumed"],
        "the time of the import"
    );
}
