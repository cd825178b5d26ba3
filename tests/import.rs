//! `iopscheck import` and `run --engine fio`: reading customers' fio outputs, judging them as
//! `run` does, recording them, and agreeing with a fio installed here.

mod common;

use common::{Env, fixture};
use predicates::prelude::*;
use serde_json::Value;

fn import_json(env: &Env, args: &[&str]) -> (Option<i32>, Value, String) {
    let out = env
        .cmd()
        .arg("import")
        .args(args)
        .args(["--format", "json"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    let j = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("stdout is not JSON ({e}); stderr: {err}"));
    (out.status.code(), j, err)
}

#[test]
fn every_fixture_is_read_and_judged_or_explained_without_an_error() {
    let env = Env::new();
    let dir = fixture("");
    for e in std::fs::read_dir(&dir).unwrap() {
        let p = e.unwrap().path();
        let name = p.file_name().unwrap().to_str().unwrap().to_string();
        if !name.starts_with("fio-") || name == "fio-3.33-eta-lines.txt" {
            continue;
        }
        let (code, j, err) = import_json(&env, &[p.to_str().unwrap()]);
        assert!(
            matches!(code, Some(0) | Some(1) | Some(3)),
            "{name}: exit {code:?}: {err}"
        );
        assert!(!j["runs"].as_array().unwrap().is_empty(), "{name}: no runs");
        // the runs and their metrics are carried whatever the verdict
        for r in j["runs"].as_array().unwrap() {
            assert_eq!(r["source"], "imported");
            assert_eq!(r["source_file"], name.as_str());
            assert!(!r["metrics"].as_object().unwrap().is_empty(), "{name}");
        }
        if code == Some(3) {
            assert!(
                j["reason"]
                    .as_str()
                    .unwrap()
                    .contains("not the policy's test"),
                "{name}: {}",
                j["reason"]
            );
        }
    }
}

#[test]
fn the_swimlane_job_from_text_is_judged_from_the_printed_mb_s_with_a_scale_warning() {
    let env = Env::new();
    let f = fixture("fio-3.33-posixaio-randwrite.txt");
    let (code, j, _) = import_json(&env, &[f.to_str().unwrap()]);
    assert_eq!(code, Some(0));
    let m = &j["runs"][0]["metrics"];
    // fio printed "BW=272MiB/s (285MB/s)": the article reads 285 MB/s → 285 / 4 × 1024
    assert_eq!(m["write_bw_mb_s"], 285.0);
    assert_eq!(m["write_iops_formula"], 72960.0);
    assert_eq!(m["write_iops"], 69500.0);
    assert_eq!(m["write_runtime_ms"], 5185.0);
    assert_eq!(j["runs"][0]["bw_basis"], "printed");
    assert_eq!(j["runs"][0]["engine"], "fio/posixaio");
    let w = j["warnings"].to_string();
    assert!(w.contains("shorter run"), "{w}");
}

#[test]
fn json_is_judged_from_exact_bytes() {
    let env = Env::new();
    let f = fixture("fio-3.33-sample.json");
    let (code, j, _) = import_json(&env, &[f.to_str().unwrap()]);
    assert_eq!(code, Some(0));
    let r = &j["runs"][0];
    assert_eq!(r["bw_basis"], "exact");
    assert_eq!(r["metrics"]["write_bw_bytes"], 212_035_134.0);
    assert_eq!(r["metrics"]["write_ios"], 262_145.0);
    assert_eq!(r["fio_version"], "3.33");
    // the output's own timestamp
    assert!(r["timestamp"].as_str().unwrap().starts_with("2026-"));
    let w = j["warnings"].to_string();
    assert!(w.contains("256 MiB instead of 4 GiB"), "{w}");
}

#[test]
fn another_job_shape_is_inconclusive_with_the_differences_named() {
    let env = Env::new();
    let f = fixture("fio-3.1-text-write.txt");
    let (code, j, _) = import_json(&env, &[f.to_str().unwrap()]);
    assert_eq!(code, Some(3));
    assert_eq!(j["verdict"], "inconclusive");
    let reason = j["reason"].as_str().unwrap();
    assert!(reason.contains("rw is write"), "{reason}");
    assert!(reason.contains("ioengine is libaio"), "{reason}");
    assert_eq!(
        j["runs"].as_array().unwrap().len(),
        1,
        "the run is still carried"
    );
}

#[test]
fn stdin_and_text_that_lost_its_line_breaks_are_read() {
    let env = Env::new();
    let text = std::fs::read_to_string(fixture("fio-3.33-posixaio-randwrite.txt")).unwrap();
    let pasted = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let out = env
        .cmd()
        .args(["import", "-", "--format", "json"])
        .write_stdin(pasted)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let j: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(j["runs"][0]["metrics"]["write_bw_mb_s"], 285.0);
    assert_eq!(j["runs"][0]["source_file"], "-");
}

#[test]
fn bad_inputs_name_the_file_and_exit_2() {
    let env = Env::new();
    let d = env.tmp.path();
    let json = std::fs::read(fixture("fio-3.33-sample.json")).unwrap();
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        ("empty.txt", vec![], "empty"),
        ("half.json", json[..json.len() / 2].to_vec(), "truncated"),
        (
            "noise.bin",
            (0..4096u32).map(|i| (i * 7919 % 251) as u8).collect(),
            "binary",
        ),
        (
            "prose.txt",
            b"Dear support, our disk is slow. Regards".to_vec(),
            "not a fio output",
        ),
    ];
    for (name, bytes, what) in cases {
        let p = d.join(name);
        std::fs::write(&p, bytes).unwrap();
        env.cmd()
            .arg("import")
            .arg(&p)
            .assert()
            .code(2)
            .stderr(predicate::str::contains(name))
            .stderr(predicate::str::contains(what));
    }
    env.cmd()
        .args(["import", "/nonexistent/out.json"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("/nonexistent/out.json"));
}

#[test]
fn a_huge_input_is_refused_without_reading_it_all() {
    let env = Env::new();
    let p = env.tmp.path().join("huge.txt");
    let f = std::fs::File::create(&p).unwrap();
    f.set_len(1 << 30).unwrap(); // sparse: no disk used
    env.cmd()
        .arg("import")
        .arg(&p)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("larger than"));
}

#[test]
fn record_keeps_the_outputs_own_timestamp_and_host_and_refuses_a_duplicate() {
    let env = Env::new();
    let f = fixture("fio-3.33-sample.json");
    env.cmd()
        .args(["import", "--record", "--host", "customer-node-7"])
        .arg(&f)
        .assert()
        .success();
    let lines = env.history_lines();
    assert_eq!(lines.len(), 1);
    let r = &lines[0];
    assert_eq!(r["host"], "customer-node-7");
    assert_eq!(r["source"], "imported");
    assert_eq!(r["source_file"], "fio-3.33-sample.json");
    let json: Value = serde_json::from_slice(&std::fs::read(&f).unwrap()).unwrap();
    let ts = chrono::DateTime::parse_from_rfc3339(r["timestamp"].as_str().unwrap()).unwrap();
    assert_eq!(ts.timestamp(), json["timestamp"].as_i64().unwrap());

    env.cmd()
        .args(["import", "--record", "--host", "customer-node-7"])
        .arg(&f)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("already recorded"));
    assert_eq!(env.history_lines().len(), 1, "nothing recorded twice");
    // the same output from another node is another run
    env.cmd()
        .args(["import", "--record", "--host", "customer-node-8"])
        .arg(&f)
        .assert()
        .success();
    assert_eq!(env.history_lines().len(), 2);
}

#[test]
fn many_processes_recording_at_once_lose_no_line() {
    let env = Env::new();
    let files = [
        "fio-3.33-sample.json",
        "fio-3.33-io_uring-randwrite.json",
        "fio-3.33-posixaio-randwrite.txt",
        "fio-3.33-psync-randwrite.txt",
        "fio-3.16-json-randrw.json",
        "fio-3.14-json-randwrite-numjobs4-group_reporting.json",
    ];
    let children: Vec<_> = (0..4)
        .flat_map(|host| files.iter().map(move |f| (host, *f)))
        .map(|(host, f)| {
            let mut c = std::process::Command::new(assert_cmd::cargo::cargo_bin!("iopscheck"));
            c.args(["import", "--record", "--format", "json", "--host"])
                .arg(format!("node{host}"))
                .arg(fixture(f))
                .env("IOPSCHECK_HISTORY", &env.history)
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null());
            c.spawn().unwrap()
        })
        .collect();
    for mut c in children {
        c.wait().unwrap();
    }
    let lines = env.history_lines();
    assert_eq!(lines.len(), 4 * files.len());
}

/// Splits fio's `--output-format=json,normal` output into its JSON and text parts.
fn split_json_and_text(all: &str) -> (String, String) {
    let lines: Vec<&str> = all.lines().collect();
    let start = lines.iter().position(|l| *l == "{").unwrap();
    let end = start + lines[start..].iter().position(|l| *l == "}").unwrap();
    let json = lines[start..=end].join("\n");
    let text = [&lines[..start], &lines[end + 1..]].concat().join("\n");
    (json, text)
}

#[test]
#[cfg_attr(not(have_fio), ignore = "needs fio")]
fn a_fresh_fio_run_imported_as_json_and_as_text_gives_fios_own_numbers() {
    let env = Env::new();
    let out = env.tmp.path().join("fio.out");
    let status = std::process::Command::new("fio")
        .current_dir(&env.dir)
        .args([
            "--name=random-write",
            "--ioengine=posixaio",
            "--rw=randwrite",
            "--bs=4k",
            "--numjobs=1",
            "--size=32m",
            "--iodepth=1",
            "--runtime=1",
            "--time_based",
            "--end_fsync=1",
            "--output-format=json,normal",
        ])
        .arg(format!("--output={}", out.display()))
        .status()
        .unwrap();
    assert!(status.success());
    let (json, text) = split_json_and_text(&std::fs::read_to_string(&out).unwrap());
    let fio: Value = serde_json::from_str(&json).unwrap();
    let w = &fio["jobs"][0]["write"];
    let jp = env.tmp.path().join("out.json");
    let tp = env.tmp.path().join("out.txt");
    std::fs::write(&jp, &json).unwrap();
    std::fs::write(&tp, &text).unwrap();

    let (_, j, _) = import_json(&env, &[jp.to_str().unwrap()]);
    let m = &j["runs"][0]["metrics"];
    assert_eq!(m["write_iops"].as_f64(), w["iops"].as_f64());
    assert_eq!(m["write_bw_bytes"].as_f64(), w["bw_bytes"].as_f64());
    assert_eq!(m["write_runtime_ms"].as_f64(), w["runtime"].as_f64());
    assert_eq!(m["write_ios"].as_f64(), w["total_ios"].as_f64());
    let p99 = w["clat_ns"]["percentile"]["99.000000"].as_f64().unwrap() / 1000.0;
    assert!((m["write_clat_p99_us"].as_f64().unwrap() - p99).abs() < 1e-9);

    let (_, t, _) = import_json(&env, &[tp.to_str().unwrap()]);
    let tm = &t["runs"][0]["metrics"];
    let iops = w["iops"].as_f64().unwrap();
    // text figures are rounded by fio's num2str: "26.0k" is within half a unit of its last
    // digit, at most 0.5% of the value
    let printed = tm["write_iops"].as_f64().unwrap();
    assert!(
        (printed - iops).abs() / iops <= 0.005 + 1.0 / iops,
        "{printed} vs {iops}"
    );
    let mb_s = w["bw_bytes"].as_f64().unwrap() / 1e6;
    assert!(
        (tm["write_bw_mb_s"].as_f64().unwrap() - mb_s).abs() / mb_s < 0.006,
        "{} vs {mb_s}",
        tm["write_bw_mb_s"]
    );
    assert_eq!(tm["write_runtime_ms"].as_f64(), w["runtime"].as_f64());
}

#[test]
#[cfg_attr(not(have_fio), ignore = "needs fio")]
fn run_with_the_fio_engine_records_fio_and_leaves_no_file() {
    let env = Env::new();
    let out = env
        .cmd()
        .args([
            "run",
            "--engine",
            "fio",
            "--size",
            "32m",
            "--runtime",
            "1",
            "--runs",
            "1",
        ])
        .args(["--format", "json", "--dir"])
        .arg(&env.dir)
        .output()
        .unwrap();
    assert!(
        matches!(out.status.code(), Some(0) | Some(1)),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let j: Value = serde_json::from_slice(&out.stdout).unwrap();
    let r = &j["runs"][0];
    assert_eq!(r["source"], "fio");
    assert_eq!(r["engine"], "fio/posixaio");
    assert!(r["fio_version"].as_str().unwrap().starts_with('3'));
    assert!(r["metrics"]["write_iops"].as_f64().unwrap() > 0.0);
    assert!(r["metrics"]["write_runtime_ms"].as_f64().unwrap() >= 1000.0);
    assert!(env.dir_listing().is_empty(), "{:?}", env.dir_listing());
    assert_eq!(env.history_lines().len(), 1);
}

#[test]
fn run_with_the_fio_engine_but_no_fio_is_a_clear_error() {
    let env = Env::new();
    let empty = env.tmp.path().join("empty-bin");
    std::fs::create_dir(&empty).unwrap();
    env.cmd()
        .env("PATH", &empty)
        .args(["run", "--engine", "fio", "--dir"])
        .arg(&env.dir)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("fio is not installed"));
    assert!(env.dir_listing().is_empty());
}
