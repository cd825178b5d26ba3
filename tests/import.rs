//! `iopscheck import` and `run --engine fio`: reading customers' fio outputs, judging them as
//! `run` does, recording them, and agreeing with a fio installed here.

mod common;

use common::{Env, fixture};
use predicates::prelude::*;
use serde_json::Value;

/// The reasons of an import's runs not counted (`not_counted[].reason`), in one string.
fn not_counted(j: &Value) -> String {
    j["not_counted"]
        .as_array()
        .unwrap_or_else(|| panic!("no not_counted[]: {j}"))
        .iter()
        .map(|n| format!("{} ({} run)", n["reason"].as_str().unwrap(), n["runs"]))
        .collect::<Vec<_>>()
        .join("; ")
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
        let (code, j, err) = env.import_json(&[p.to_str().unwrap()]);
        assert!(
            matches!(code, Some(0) | Some(1) | Some(3)),
            "{name}: exit {code:?}: {err}"
        );
        // A job fio reported an error for is no evidence: it is listed, not judged.
        if name == "fio-3.8-83-g24a9-terse-randread-32jobs-with-error-lines.txt" {
            assert!(j["runs"].as_array().unwrap().is_empty(), "{name}");
            assert_eq!(code, Some(3), "{name}");
            assert!(
                not_counted(&j).contains("fio reported an error for this job (err=11"),
                "{name}: {}",
                not_counted(&j)
            );
            continue;
        }
        // Several jobs of one fio run in several groups, and nothing stated that orders them
        // (no stonewall listed, no start times: fio before 3.36 states neither): each may
        // have run beside the others, so none is a job run alone.
        if name.contains("groups-") {
            assert!(j["runs"].as_array().unwrap().is_empty(), "{name}");
            assert_eq!(code, Some(3), "{name}");
            assert!(
                not_counted(&j).contains("of the same fio invocation, or may have"),
                "{name}: {}",
                not_counted(&j)
            );
            continue;
        }
        // fio said it was interrupted: a run cut short is no evidence
        if name == "fio-3.33-json-rw-interrupted-leading-noise.json" {
            assert!(j["runs"].as_array().unwrap().is_empty(), "{name}");
            assert!(not_counted(&j).contains("fio was interrupted"), "{name}");
            continue;
        }
        assert!(!j["runs"].as_array().unwrap().is_empty(), "{name}: no runs");
        // the runs and their metrics are carried whatever the verdict
        for r in j["runs"].as_array().unwrap() {
            assert_eq!(r["source"], "imported");
            assert_eq!(r["source_file"], name.as_str());
            assert!(!r["metrics"].as_object().unwrap().is_empty(), "{name}");
        }
        if code == Some(3) {
            let reason = j["reason"].as_str().unwrap();
            assert!(
                reason.starts_with("not the policy's test")
                    || reason.starts_with("passed only on a test that flatters the disk"),
                "{name}: {reason}"
            );
        }
    }
}

#[test]
fn the_swimlane_job_from_text_is_judged_from_the_printed_mb_s_with_a_scale_warning() {
    let env = Env::new();
    let f = fixture("fio-3.33-posixaio-randwrite.txt");
    let (code, j, _) = env.import_json(&[f.to_str().unwrap()]);
    // a 5 s run of the Swimlane job: a pass on a shorter test than the policy's proves nothing
    assert_eq!(code, Some(3));
    let reason = j["reason"].as_str().unwrap();
    assert!(
        reason.starts_with("passed only on a test that flatters the disk ("),
        "{reason}"
    );
    assert!(
        reason.contains("runtime 5.2 s (measured) instead of 1m"),
        "{reason}"
    );
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
    let (code, j, _) = env.import_json(&[f.to_str().unwrap()]);
    // 256 MiB instead of 4 GiB, and no end_fsync in the JSON's job options: never a pass
    assert_eq!(code, Some(3));
    assert_eq!(j["verdict"], "inconclusive");
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
    let (code, j, _) = env.import_json(&[f.to_str().unwrap()]);
    assert_eq!(code, Some(3));
    assert_eq!(j["verdict"], "inconclusive");
    let reason = j["reason"].as_str().unwrap();
    assert!(reason.contains("rw write instead of randwrite"), "{reason}");
    assert!(
        reason.contains("ioengine libaio instead of posixaio or io_uring"),
        "{reason}"
    );
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
        Some(3),
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
fn record_keeps_the_outputs_own_timestamp_and_host_and_refuses_a_duplicate_for_any_host() {
    let env = Env::new();
    let f = fixture("fio-3.33-sample.json");
    env.cmd()
        .args(["import", "--record", "--host", "customer-node-7"])
        .arg(&f)
        .assert()
        .code(3);
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
    // nor for another node: one fio run is one run of one machine, and the refusal names
    // the machine it is recorded for
    env.cmd()
        .args(["import", "--record", "--host", "customer-node-8"])
        .arg(&f)
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "fio-3.33-sample.json already recorded for host customer-node-7",
        ));
    assert_eq!(env.history_lines().len(), 1);
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
    // four imports of each output at once, each for another node: one fio run is one run of
    // one machine, so each output is recorded once, and no line is lost or doubled
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
    assert_eq!(lines.len(), files.len());
    let mut sources: Vec<&str> = lines
        .iter()
        .map(|l| l["source_file"].as_str().unwrap())
        .collect();
    sources.sort();
    let mut want = files.to_vec();
    want.sort();
    assert_eq!(sources, want);
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

    let (_, j, _) = env.import_json(&[jp.to_str().unwrap()]);
    let m = &j["runs"][0]["metrics"];
    assert_eq!(m["write_iops"].as_f64(), w["iops"].as_f64());
    assert_eq!(m["write_bw_bytes"].as_f64(), w["bw_bytes"].as_f64());
    assert_eq!(m["write_runtime_ms"].as_f64(), w["runtime"].as_f64());
    assert_eq!(m["write_ios"].as_f64(), w["total_ios"].as_f64());
    let p99 = w["clat_ns"]["percentile"]["99.000000"].as_f64().unwrap() / 1000.0;
    assert!((m["write_clat_p99_us"].as_f64().unwrap() - p99).abs() < 1e-9);

    let (_, t, _) = env.import_json(&[tp.to_str().unwrap()]);
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
    // a quick look: a fail, or inconclusive where it would pass
    assert!(
        matches!(out.status.code(), Some(1) | Some(3)),
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
fn clones_printed_one_by_one_are_one_run_as_fios_group_line_reads_them() {
    // numjobs=2 without group_reporting: fio prints one entry per clone. They are one run of
    // the job (never two runs towards the evidence, never one clone's share of the I/O).
    let env = Env::new();
    let f = fixture("fio-3.6-json-randread-2jobs-no_group_reporting.json");
    let raw: Value = serde_json::from_slice(&std::fs::read(&f).unwrap()).unwrap();
    let clones = raw["jobs"].as_array().unwrap();
    assert_eq!(clones.len(), 2);
    let sum = |k: &str| {
        clones
            .iter()
            .map(|j| j["read"][k].as_f64().unwrap())
            .sum::<f64>()
    };
    let longest = clones
        .iter()
        .map(|j| j["read"]["runtime"].as_f64().unwrap())
        .fold(0.0, f64::max);
    let (_, j, _) = env.import_json(&[f.to_str().unwrap()]);
    assert_eq!(j["runs"].as_array().unwrap().len(), 1, "{j}");
    let m = &j["runs"][0]["metrics"];
    assert_eq!(m["read_ios"].as_f64().unwrap(), sum("total_ios"));
    assert_eq!(m["read_runtime_ms"].as_f64().unwrap(), longest);
    let iops = sum("total_ios") * 1000.0 / longest;
    assert!((m["read_iops"].as_f64().unwrap() - iops).abs() < 1e-6);
    // One clone's percentiles say nothing of the job's: not stated, not one clone's.
    assert!(m.get("read_clat_p99_us").is_none(), "{m}");
    assert!(
        j["warnings"].to_string().contains("2 clones"),
        "{}",
        j["warnings"]
    );
    assert_eq!(j["evidence"]["runs"], 1, "{}", j["evidence"]);
}

#[test]
#[cfg_attr(not(have_fio), ignore = "needs fio")]
fn run_with_the_fio_engine_records_every_clone_of_the_job() {
    // A policy with two clones that does not ask for group_reporting: the run is still the
    // job's whole, as the native engine measures it, not the first clone alone. Without
    // time_based each clone writes its file once, so the job's I/O count is known exactly.
    let env = Env::new();
    let policy = env.swimlane_policy("two.yaml", |y| {
        y.replace("numjobs: 1", "numjobs: 2\n  group_reporting: false")
            .replace("time_based: true", "time_based: false")
    });
    let out = env
        .cmd()
        .args(["run", "--engine", "fio", "--policy"])
        .arg(&policy)
        .args(["--size", "8m", "--runtime", "30", "--runs", "1"])
        .args(["--format", "json", "--dir"])
        .arg(&env.dir)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(matches!(out.status.code(), Some(1) | Some(3)), "{err}");
    let j: Value = serde_json::from_slice(&out.stdout).unwrap();
    let r = &j["runs"][0];
    assert_eq!(r["job"]["numjobs"], 2, "{r}");
    // Two clones of 8 MiB in 4 KiB writes.
    assert_eq!(r["metrics"]["write_ios"], 2.0 * 8.0 * 256.0, "{r}");
    assert!(env.dir_listing().is_empty(), "{:?}", env.dir_listing());
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

// ---- issue 11: what a ticket holds, said in one line ------------------------------------

fn stdin_import(env: &Env, input: &str, args: &[&str]) -> (Option<i32>, String, String) {
    let out = env
        .cmd()
        .arg("import")
        .arg("-")
        .args(args)
        .write_stdin(input.to_string())
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

const SWIMLANE_TEXT: &str = "\
random-write: (g=0): rw=randwrite, bs=(R) 4096B-4096B, (W) 4096B-4096B, (T) 4096B-4096B, ioengine=posixaio, iodepth=1
fio-3.7
Starting 1 process
random-write: Laying out IO file (1 file / 4096MiB)

random-write: (groupid=0, jobs=1): err= 0: pid=1873: Tue Jun  2 14:14:32 2020
  write: IOPS=3994, BW=15.6MiB/s (16.4MB/s)(2449MiB/156935msec)
  cpu          : usr=1.00%, sys=2.00%, ctx=1, majf=0, minf=1
     issued rwts: total=0,626892,0,1 short=0,0,0,0 dropped=0,0,0,0

Run status group 0 (all jobs):
  WRITE: bw=15.6MiB/s (16.4MB/s), 15.6MiB/s-15.6MiB/s (16.4MB/s-16.4MB/s), io=2449MiB (2568MB), run=156935-156935msec
";

#[test]
fn a_direction_whose_figures_cannot_be_read_fails_naming_the_line() {
    let env = Env::new();
    let broken = SWIMLANE_TEXT.replace("IOPS=3994, BW=15.6MiB/s", "IOPS=39#4, BW=15.6MiB/s");
    let (code, _, err) = stdin_import(&env, &broken, &[]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("line 7"), "{err}");
    assert!(err.contains("write"), "{err}");
    assert!(err.contains("could not be read"), "{err}");
}

#[test]
fn a_direction_missing_beside_one_that_reads_is_named_in_a_warning() {
    let env = Env::new();
    let text = SWIMLANE_TEXT.replace(
        "  write: IOPS=3994",
        "  read: IOPS=12, BW=oops (…)(1MiB/156935msec)\n  write: IOPS=3994",
    );
    let (code, out, err) = stdin_import(&env, &text, &["--format", "json"]);
    assert!(matches!(code, Some(0 | 3)), "{err}");
    let j: Value = serde_json::from_str(&out).unwrap();
    let warnings = j["warnings"].to_string();
    assert!(
        warnings.contains("line 7") && warnings.contains("read figures are missing"),
        "{warnings}"
    );
    assert!(j["runs"][0]["metrics"]["write_iops"].as_f64().is_some());
}

#[test]
fn a_reflowed_quoted_reply_gives_the_same_verdict_and_figures() {
    let env = Env::new();
    let (code, want, _) = stdin_import(&env, SWIMLANE_TEXT, &["--format", "json"]);
    // as a mail client quotes a reply wrapped at 60 columns, the result line split in two
    let mut quoted = String::from("Hi, here is the output:\n\n");
    for line in SWIMLANE_TEXT.lines() {
        let mut rest = line;
        while rest.len() > 60 {
            let at = rest[..61]
                .rfind(' ')
                .filter(|&a| a > 0)
                .unwrap_or(rest.len());
            quoted.push_str(&format!("> {}\n", rest[..at].trim_end()));
            rest = rest[at..].trim_start();
        }
        quoted.push_str(&format!("> {rest}\n"));
    }
    let (code2, got, err) = stdin_import(&env, &quoted, &["--format", "json"]);
    assert_eq!(code, code2, "{err}");
    let (a, b): (Value, Value) = (
        serde_json::from_str(&want).unwrap(),
        serde_json::from_str(&got).unwrap(),
    );
    assert_eq!(a["runs"][0]["metrics"], b["runs"][0]["metrics"]);
    assert_eq!(a["runs"][0]["job"], b["runs"][0]["job"]);
    assert!(!got.contains("lost line breaks"), "{got}");
}

#[test]
fn the_laid_out_size_and_the_fio_3_7_sync_count_are_read_from_text() {
    let env = Env::new();
    let (_, out, err) = stdin_import(&env, SWIMLANE_TEXT, &["--format", "json"]);
    let j: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {err}"));
    let job = &j["runs"][0]["job"];
    assert_eq!(job["size"], 4u64 << 30, "{job}");
    assert_eq!(job["end_fsync"], true, "{job}");
    // fio 3.7 counts the end fsync: a count of 0 proves there was none
    let none = SWIMLANE_TEXT.replace("total=0,626892,0,1", "total=0,626892,0,0");
    let (_, out, _) = stdin_import(&env, &none, &["--format", "json"]);
    let j: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(j["runs"][0]["job"]["end_fsync"], false);
    // fio 3.33 does not count it: 0 proves nothing
    let new = none.replace("fio-3.7", "fio-3.33");
    let (_, out, _) = stdin_import(&env, &new, &["--format", "json"]);
    let j: Value = serde_json::from_str(&out).unwrap();
    assert!(
        j["runs"][0]["job"].get("end_fsync").is_none(),
        "{}",
        j["runs"][0]["job"]
    );
}

#[test]
fn in_a_multi_job_output_only_the_policy_shaped_job_is_judged() {
    let env = Env::new();
    let read_job = SWIMLANE_TEXT
        .replace("random-write", "seq-read")
        .replace("rw=randwrite", "rw=read")
        .replace("(groupid=0", "(groupid=1")
        .replace("(g=0)", "(g=1)")
        .replace("  write: IOPS=3994", "  read: IOPS=99000")
        .replace("total=0,626892,0,1", "total=626892,0,0,0")
        .replace("Run status group 0", "Run status group 1")
        .replace("WRITE:", "READ:");
    let both = format!("{SWIMLANE_TEXT}\n{read_job}");
    let (_, out, err) = stdin_import(&env, &both, &["--format", "json"]);
    let j: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {err}"));
    assert_eq!(j["runs"].as_array().unwrap().len(), 1, "{}", j["runs"]);
    assert_eq!(j["runs"][0]["job"]["rw"], "randwrite");
    let w = not_counted(&j);
    assert!(
        w.contains("seq-read") && w.contains("rw read instead of randwrite"),
        "{w}"
    );
}

#[test]
fn group_reporting_over_different_job_definitions_is_never_one_test() {
    let env = Env::new();
    let mixed = SWIMLANE_TEXT
        .replace(
            "fio-3.7\n",
            "reader: (g=0): rw=randread, bs=(R) 4096B-4096B, (W) 4096B-4096B, (T) 4096B-4096B, ioengine=posixaio, iodepth=1\nfio-3.7\n",
        )
        .replace("Starting 1 process", "Starting 2 processes")
        .replace("jobs=1)", "jobs=2)");
    let (code, out, err) = stdin_import(&env, &mixed, &["--format", "json"]);
    assert_eq!(code, Some(3), "{err}");
    let j: Value = serde_json::from_str(&out).unwrap();
    assert!(j["runs"].as_array().unwrap().is_empty());
    let w = not_counted(&j);
    assert!(w.contains("group_reporting over 2 job definitions"), "{w}");
}

#[test]
fn client_server_text_is_read_per_host_and_the_sum_of_clients_is_not_counted() {
    let env = Env::new();
    let client = "\
hostname=node-a, be=0, 64-bit, os=Linux, arch=x86-64, fio=fio-3.36, flags=1
<node-a> random-write: (g=0): rw=randwrite, bs=(R) 4096B-4096B, (W) 4096B-4096B, (T) 4096B-4096B, ioengine=posixaio, iodepth=1
<node-b> random-write: (g=0): rw=randwrite, bs=(R) 4096B-4096B, (W) 4096B-4096B, (T) 4096B-4096B, ioengine=posixaio, iodepth=1
<node-a> Starting 1 process
<node-b> Starting 1 process
<node-a>
random-write: (groupid=0, jobs=1): err= 0: pid=11: Thu Jun 12 12:38:19 2025
  write: IOPS=6015, BW=23.5Mi (24.6M)(1410MiB/60001msec); 0 zone resets
<node-b>
random-write: (groupid=0, jobs=1): err= 0: pid=12: Thu Jun 12 12:38:19 2025
  write: IOPS=5882, BW=23.0Mi (24.1M)(1379MiB/60001msec); 0 zone resets
All clients: (groupid=0, jobs=2): err= 0: pid=0: Thu Jun 12 12:38:19 2025
  write: IOPS=11.9k, BW=45.5Mi (47.7M)(2789MiB/60001msec); 0 zone resets
";
    let (_, out, err) = stdin_import(&env, client, &["--format", "json"]);
    let j: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {err}"));
    let runs = j["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2, "{}", j["runs"]);
    assert_eq!(runs[0]["metrics"]["write_iops"], 6015.0);
    assert_eq!(runs[1]["metrics"]["write_iops"], 5882.0);
    assert_eq!(runs[0]["fio_version"], "3.36");
    let w = j["warnings"].to_string();
    assert!(!w.contains("lost line breaks"), "{w}");
    assert!(not_counted(&j).contains("All clients"), "{j}");
}

#[test]
fn assume_job_judges_terse_output_and_says_so_while_stated_fields_win() {
    let env = Env::new();
    let terse = fixture("fio-3.33-terse.txt");
    let out = env
        .cmd()
        .args([
            "import",
            "--record",
            "--host",
            "node-1",
            "--assume-job",
            "swimlane",
        ])
        .arg(&terse)
        .args(["--format", "json"])
        .output()
        .unwrap();
    let j: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(
        j["warnings"]
            .to_string()
            .contains("job shape assumed by the user, not stated in the output")
    );
    assert_eq!(j["runs"][0]["job"]["rw"], "randwrite");
    assert!(
        j["runs"][0]["metrics"]["write_iops_formula"]
            .as_f64()
            .is_some()
    );
    let recorded = env.history_lines();
    assert_eq!(recorded.len(), 1);
    assert!(
        recorded[0]["job_assumed"]
            .as_str()
            .unwrap()
            .contains("job shape assumed by the user"),
        "{}",
        recorded[0]
    );
    // a text that states randread: the stated rw wins and is named
    let read = SWIMLANE_TEXT.replace("rw=randwrite", "rw=randread");
    let (code, out, _) = stdin_import(
        &env,
        &read,
        &["--assume-job", "swimlane", "--format", "json"],
    );
    assert_eq!(code, Some(3));
    let j: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(j["runs"][0]["job"]["rw"], "randread");
    assert!(
        j["warnings"]
            .to_string()
            .contains("the output states rw=randread where the assumed job has rw=randwrite"),
        "{}",
        j["warnings"]
    );
    // a policy that does not exist is a usage error naming the flag
    let (code, _, err) = stdin_import(&env, SWIMLANE_TEXT, &["--assume-job", "nosuch"]);
    assert_eq!(code, Some(2));
    assert!(err.contains("--assume-job"), "{err}");
}

/// A terse line of a mixed job states its reads' and writes' I/O counts, so it states the mix:
/// an assumed rwmixread it contradicts is not taken, and the run is not the policy's test.
#[test]
fn assume_job_reads_the_mix_from_the_io_counts() {
    let env = Env::new();
    let line = std::fs::read_to_string(fixture("fio-3.27-terse-randrw-with-diskutil.txt")).unwrap();
    let fields: Vec<&str> = line.trim_end().split(';').collect();
    let num = |i: usize| fields[i].parse::<f64>().unwrap();
    // terse v3: the read side's KiB, KiB/s and IOPS at 5–7, the write side's at 46–48
    let (reads, writes) = (num(7), num(48));
    let share = reads / (reads + writes);
    assert!(
        (share - 0.75).abs() < 0.01,
        "the fixture is gitlab-gitaly's 75/25 mix: {share}"
    );
    let judge = |text: &str| {
        let (code, out, _) = stdin_import(
            &env,
            text,
            &[
                "--assume-job",
                "gitlab-gitaly",
                "-p",
                "gitlab-gitaly",
                "--format",
                "json",
            ],
        );
        (code, serde_json::from_str::<Value>(&out).unwrap())
    };
    let (_, j) = judge(&line);
    assert!(
        !j["warnings"].to_string().contains("rwmixread"),
        "the job's own mix is not contradicted: {j}"
    );
    assert!(!j["deviations"].to_string().contains("rwmixread"), "{j}");
    // …but the fixture is not gitlab-gitaly's size-based 4 GiB job: its bytes say how much
    // it moved, and a smaller job flatters
    let moved = (num(5) + num(46)) * 1024.0;
    assert!(moved < 0.5 * 4.0 * 1024.0 * 1024.0 * 1024.0, "{moved}");
    assert_eq!(j["verdict"], "inconclusive", "{j}");
    assert!(
        j["warnings"]
            .to_string()
            .contains("the size the figures show is used"),
        "{j}"
    );
    assert!(j["deviations"].to_string().contains("size"), "{j}");

    // the same reads with more writes beside them: 70/30, every write figure scaled alike so
    // the block size still reads 4k, and the deciding read IOPS unchanged
    let scale = reads * 0.30 / 0.70 / writes;
    let mut moved: Vec<String> = fields.iter().map(|f| f.to_string()).collect();
    for (i, field) in moved.iter_mut().enumerate().take(49).skip(46) {
        *field = format!("{:.0}", num(i) * scale);
    }
    let (code, j) = judge(&(moved.join(";") + "\n"));
    assert_eq!(code, Some(3), "another mix is not the policy's test: {j}");
    let said = format!("{} {}", j["warnings"], j["deviations"]);
    assert!(said.contains("about 70% reads"), "{said}");
    assert!(said.contains("rwmixread=75"), "{said}");
    assert_eq!(j["runs"][0]["job"]["rwmixread"], 70, "{j}");
}

#[test]
fn summary_is_one_line_for_import_and_report_and_notes_shared_by_files_are_said_once() {
    let env = Env::new();
    let a = env.tmp.path().join("a.txt");
    let b = env.tmp.path().join("b.txt");
    std::fs::write(&a, SWIMLANE_TEXT).unwrap();
    std::fs::write(
        &b,
        SWIMLANE_TEXT.replace("pid=1873: Tue Jun  2", "pid=1874: Wed Jun  3"),
    )
    .unwrap();
    let out = env
        .cmd()
        .args([
            "import", "--record", "--host", "node-1", "--format", "summary",
        ])
        .args([&a, &b])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(text.lines().count(), 1, "{text}");
    assert!(
        text.starts_with("INCONCLUSIVE swimlane on node-1")
            || text.starts_with("PASS swimlane on node-1"),
        "{text}"
    );
    // Two days: the latest day's figure stands beside the window's.
    assert!(
        text.contains(
            "write_iops_formula mean 4198 IOPS (latest day 2020-06-03: 4198 IOPS), needs ≥ 3000 IOPS"
        ),
        "{text}"
    );
    // which runs the verdict is of (the longer formats add the policy's tally)
    assert!(
        text.contains("PASS swimlane on node-1 for 2 imported runs; "),
        "{text}"
    );
    // the table says the shared note once, with the count of files
    let out = env
        .cmd()
        .args(["import", "--host", "node-1"])
        .args([&a, &b])
        .output()
        .unwrap();
    let all =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        all.matches("text output: bandwidth and IOPS").count(),
        1,
        "{all}"
    );
    assert!(all.contains("2 files (a.txt, b.txt)"), "{all}");
    let out = env
        .cmd()
        .args([
            "report", "--host", "node-1", "--since", "3000d", "--format", "summary",
        ])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(text.lines().count(), 1, "{text}");
    // the history's verdict, and where it stands against the policy's rule
    assert!(
        text.contains(" on the history: 2 of 6 runs, 2 of 2 days; "),
        "{text}"
    );
}

#[test]
fn a_real_all_clients_block_is_read_but_never_judged_as_one_node() {
    let env = Env::new();
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/issue-11/weka-fio-3.20-client-server-all-clients-randread.txt");
    let (code, j, err) = env.import_json(&[path.to_str().unwrap()]);
    assert_eq!(code, Some(3), "{err}");
    assert!(j["runs"].as_array().unwrap().is_empty());
    assert!(not_counted(&j).contains("All clients"), "{j}");
}

#[test]
fn run_answers_in_one_line_with_format_summary() {
    let env = Env::new();
    let out = env
        .small_run("psync")
        .args(["--no-history", "--format", "summary"])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(text.lines().count(), 1, "{text}");
    let verdict = text.split_whitespace().next().unwrap();
    let code = out.status.code();
    assert_eq!(
        code,
        Some(match verdict {
            "PASS" => 0,
            "FAIL" => 1,
            _ => 3,
        }),
        "{text}"
    );
    assert!(
        text.contains("write_iops_formula") && text.contains("needs ≥ 3000 IOPS"),
        "{text}"
    );
    assert!(text.contains(" for this sitting of 1 run; "), "{text}");
}

#[test]
fn an_import_says_it_cannot_see_burst_credits_run_out_inside_a_run() {
    let env = Env::new();
    let f = fixture("fio-3.33-sample.json");
    let (_, j, _) = env.import_json(&[f.to_str().unwrap()]);
    let m = &j["runs"][0]["metrics"];
    let (min, mean) = (
        m["write_iops_min"].as_f64().unwrap(),
        m["write_iops_mean"].as_f64().unwrap(),
    );
    let w: Vec<String> = j["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w.as_str().unwrap().to_string())
        .collect();
    let note = w
        .iter()
        .find(|w| {
            w.starts_with("fio's output gives each run's IOPS per interval only as a summary")
        })
        .unwrap_or_else(|| panic!("{w:?}"));
    assert!(
        note.contains("whether a disk's burst credits ran out inside a run cannot be told"),
        "{note}"
    );
    // Its lowest interval is named where it lies under the step's 0.8 × the mean.
    assert_eq!(
        note.contains("lowest interval is under 0.8 × the mean"),
        min < 0.8 * mean,
        "{note}"
    );
    // No burst is claimed from a summary.
    assert!(j.get("bursts").is_none(), "{j}");
    assert!(!j["reason"].as_str().unwrap().contains("sustained"), "{j}");
}
