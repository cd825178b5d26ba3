//! A history record counts as a run only on figures a disk could give (issue 26, items 6 and
//! 7): a record without figures, or with a figure beyond what any device gives, is skipped with
//! its line named by every command that reads a history (report, fleet, bundle, run), and an
//! imported fio output with such a figure is refused naming the field.

mod common;

use std::io::Read;
use std::path::{Path, PathBuf};

use assert_cmd::Command;
use chrono::{Duration, Local};
use serde_json::Value;

fn iopscheck(cwd: &Path) -> Command {
    let mut c = Command::new(assert_cmd::cargo::cargo_bin!("iopscheck"));
    c.current_dir(cwd)
        .env("NO_COLOR", "1")
        .env_remove("IOPSCHECK_HISTORY")
        .env("IOPSCHECK_LOCK_FILE", cwd.join("run.lock"));
    c
}

/// A passing Swimlane run of the policy's own test on `host` in `dir`, `ago` before now.
fn record(host: &str, dir: &str, ago: Duration) -> Value {
    let r = common::swimlane_record(host, dir, (Local::now() - ago).fixed_offset(), 16.4);
    serde_json::to_value(r).unwrap()
}

/// The six records of two days (three a day, 10 minutes apart, the latest an hour ago): of
/// each day only the first is `real`'s figures; `edit` changes the other two.
fn two_real_runs_and_four(
    host: &str,
    dir: &str,
    edit: impl Fn(&mut Value),
) -> (String, Vec<usize>) {
    let mut text = String::new();
    let mut edited = Vec::new();
    let mut n = 0;
    for d in 0..2 {
        for i in 0..3 {
            let ago = Duration::days(d) + Duration::hours(1) + Duration::minutes(10 * i);
            let mut v = record(host, dir, ago);
            n += 1;
            if i > 0 {
                edit(&mut v);
                edited.push(n);
            }
            text.push_str(&v.to_string());
            text.push('\n');
        }
    }
    (text, edited)
}

struct Case {
    tmp: tempfile::TempDir,
    history: PathBuf,
    host: String,
    /// The lines that are no run.
    bad: Vec<usize>,
}

fn case(edit: impl Fn(&mut Value)) -> Case {
    let tmp = tempfile::tempdir().unwrap();
    let host = iopscheck::testing::machine::hostname();
    let (text, bad) = two_real_runs_and_four(&host, "/data", edit);
    let history = tmp.path().join("history.jsonl");
    std::fs::write(&history, text).unwrap();
    Case {
        tmp,
        history,
        host,
        bad,
    }
}

fn empty_metrics(v: &mut Value) {
    v["metrics"] = serde_json::json!({});
}

/// `report --format json` over the case's history: exit code, JSON, stderr.
fn report(c: &Case) -> (Option<i32>, Value, String) {
    let out = iopscheck(c.tmp.path())
        .args(["report", "--format", "json", "--host", &c.host, "--history"])
        .arg(&c.history)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    let j: Value =
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("not JSON ({e}): {err}"));
    (out.status.code(), j, err)
}

/// Each bad line is named by file and line with `why`, in `said`.
fn names_each(said: &str, c: &Case, why: &str) {
    for n in &c.bad {
        let at = format!("history.jsonl:{n}: skipped: ");
        let line = said
            .lines()
            .find(|l| l.contains(&at))
            .unwrap_or_else(|| panic!("line {n} is not named: {said}"));
        assert!(line.contains(why), "{line}");
    }
}

#[test]
fn records_without_figures_are_no_runs_in_a_report() {
    let c = case(empty_metrics);
    let (code, j, err) = report(&c);
    // Two runs over two days are not the six the evidence rule asks for.
    assert_eq!(j["evidence"]["runs"], 2, "{}", j["evidence"]);
    assert_eq!(j["verdict"], "inconclusive", "{}", j["reason"]);
    assert_eq!(code, Some(3));
    names_each(&err, &c, "no figures");
    // A record without its metrics key at all is no run either.
    let c = case(|v| {
        v.as_object_mut().unwrap().remove("metrics");
    });
    let (code, j, err) = report(&c);
    assert_eq!((code, j["evidence"]["runs"].as_u64()), (Some(3), Some(2)));
    names_each(&err, &c, "metrics");
}

#[test]
fn records_without_figures_are_no_runs_in_a_fleet() {
    let c = case(empty_metrics);
    let out = iopscheck(c.tmp.path())
        .args(["fleet", "--format", "json"])
        .arg(&c.history)
        .output()
        .unwrap();
    let j: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(out.status.code(), Some(3), "{j}");
    assert_eq!(j["hosts"][0]["verdict"], "inconclusive", "{j}");
    let warnings: Vec<String> = j["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w.as_str().unwrap().to_string())
        .collect();
    names_each(&warnings.join("\n"), &c, "no figures");
}

/// The members of a .tar.gz whose name ends with `suffix`, as text.
fn member(archive: &Path, suffix: &str) -> String {
    let gz = flate2::read::GzDecoder::new(std::fs::File::open(archive).unwrap());
    let mut tar = tar::Archive::new(gz);
    for e in tar.entries().unwrap() {
        let mut e = e.unwrap();
        if e.path().unwrap().display().to_string().ends_with(suffix) {
            let mut s = String::new();
            e.read_to_string(&mut s).unwrap();
            return s;
        }
    }
    panic!("no {suffix} in the bundle");
}

#[test]
fn records_without_figures_are_no_runs_in_a_bundle() {
    let c = case(empty_metrics);
    let out = c.tmp.path().join("b.tar.gz");
    iopscheck(c.tmp.path())
        .args(["bundle", "-o"])
        .arg(&out)
        .arg("--history")
        .arg(&c.history)
        .assert()
        .code(0);
    let report: Value = serde_json::from_str(&member(&out, "/report.json")).unwrap();
    assert_eq!(report["evidence"]["runs"], 2, "{}", report["evidence"]);
    assert_eq!(report["verdict"], "inconclusive");
    let context: Value = serde_json::from_str(&member(&out, "/context.json")).unwrap();
    let skipped: Vec<String> = context["history"]["skipped"]
        .as_array()
        .unwrap_or_else(|| panic!("{context}"))
        .iter()
        .map(|s| s.as_str().unwrap().to_string())
        .collect();
    names_each(&skipped.join("\n"), &c, "no figures");
}

#[test]
fn records_without_figures_are_no_evidence_for_a_run() {
    let env = common::Env::new();
    let first = env.small_run("posixaio").output().unwrap();
    if !env.history.exists() {
        common::skip(&format!(
            "the native posixaio run did not record ({})",
            String::from_utf8_lossy(&first.stderr)
        ));
        return;
    }
    // Four records of this run's host, directory and engine, of the policy's own test, over
    // two days, without a figure (named one by one: more than five are counted).
    let mine = &env.history_lines()[0];
    let job = record("h", "/d", Duration::zero())["job"].clone();
    let mut text = std::fs::read_to_string(&env.history).unwrap();
    for d in 0..2 {
        for i in 0..2 {
            let ago = Duration::days(d) + Duration::hours(1) + Duration::minutes(10 * i);
            let mut v = mine.clone();
            let o = v.as_object_mut().unwrap();
            for k in ["overrides", "iops_series", "invocation", "disk_stats"] {
                o.remove(k);
            }
            v["job"] = job.clone();
            v["metrics"] = serde_json::json!({});
            v["timestamp"] = (Local::now() - ago).fixed_offset().to_rfc3339().into();
            text.push_str(&v.to_string());
            text.push('\n');
        }
    }
    std::fs::write(&env.history, text).unwrap();
    let out = env
        .small_run("posixaio")
        .args(["--format", "json"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    let j: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {err}"));
    assert_eq!(j["evidence"]["runs"], 0, "{}: {err}", j["evidence"]);
    assert_eq!(j["evidence"]["enough"], false);
    for n in 2..=5 {
        assert!(
            err.contains(&format!("history.jsonl:{n}: skipped: no figures")),
            "line {n}: {err}"
        );
    }
}

/// `fleet --format json` over the case's history: exit code and the warnings, one a line.
fn fleet(c: &Case) -> (Option<i32>, Value, String) {
    let out = iopscheck(c.tmp.path())
        .args(["fleet", "--format", "json"])
        .arg(&c.history)
        .output()
        .unwrap();
    let j: Value = serde_json::from_slice(&out.stdout).unwrap();
    let warnings: Vec<String> = j["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w.as_str().unwrap().to_string())
        .collect();
    (out.status.code(), j, warnings.join("\n"))
}

#[test]
fn figures_no_disk_gives_are_no_runs_and_never_an_infinite_mean() {
    // 1e308 IOPS: four of them made the mean overflow to inf, which passed.
    let c = case(|v| v["metrics"]["write_iops_formula"] = 1e308.into());
    let (code, j, err) = report(&c);
    assert_eq!(j["evidence"]["runs"], 2, "{}", j["evidence"]);
    assert_eq!(
        (code, j["verdict"].as_str()),
        (Some(3), Some("inconclusive"))
    );
    names_each(&err, &c, "metric write_iops_formula is 1e308");
    let mean = j["rules"][0]["value"].as_f64().unwrap();
    assert!(mean.is_finite() && mean < 1e6, "{mean}");
    let (code, f, warnings) = fleet(&c);
    assert_eq!(code, Some(3), "{f}");
    names_each(&warnings, &c, "write_iops_formula");
    // A latency of a year: no device that answers at all.
    let c = case(|v| v["metrics"]["write_clat_p99_us"] = (365.0 * 86400.0 * 1e6).into());
    let (code, j, err) = report(&c);
    assert_eq!((code, j["evidence"]["runs"].as_u64()), (Some(3), Some(2)));
    names_each(&err, &c, "metric write_clat_p99_us");
}

/// fio-3.33-sample.json with `edit` applied, written into `dir`.
fn sample(dir: &Path, name: &str, edit: impl FnOnce(&mut Value)) -> PathBuf {
    let mut v: Value =
        serde_json::from_slice(&std::fs::read(common::fixture("fio-3.33-sample.json")).unwrap())
            .unwrap();
    edit(&mut v);
    let p = dir.join(name);
    std::fs::write(&p, v.to_string()).unwrap();
    p
}

#[test]
fn an_import_of_figures_no_disk_gives_is_refused_naming_the_field() {
    let tmp = tempfile::tempdir().unwrap();
    let history = tmp.path().join("h.jsonl");
    let huge = sample(tmp.path(), "huge.json", |v| {
        let w = &mut v["jobs"][0]["write"];
        w["iops"] = 1e308.into();
        w["bw_bytes"] = 1e308.into();
        w["io_bytes"] = 1e308.into();
    });
    let years = sample(tmp.path(), "years.json", |v| {
        // ns: three years for the 99th percentile of a write
        v["jobs"][0]["write"]["clat_ns"]["percentile"]["99.000000"] = 1e17.into();
    });
    for (file, field) in [(&huge, "write_"), (&years, "write_clat_p99_us")] {
        let out = iopscheck(tmp.path())
            .args(["import", "--record", "--host", "n1", "--history"])
            .arg(&history)
            .arg(file)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        let name = file.file_name().unwrap().to_str().unwrap();
        assert!(err.contains(name), "{err}");
        let said = err
            .lines()
            .find(|l| l.contains(&format!("metric {field}")))
            .unwrap_or_else(|| panic!("{field} is not named: {err}"));
        assert!(said.contains("beyond what any disk gives"), "{said}");
        assert!(!history.exists(), "nothing recorded");
    }
    // The same output as fio wrote it is imported.
    let fine = sample(tmp.path(), "fine.json", |_| {});
    iopscheck(tmp.path())
        .args(["import", "--host", "n1"])
        .arg(&fine)
        .assert()
        .code(predicates::ord::ne(2));
}
