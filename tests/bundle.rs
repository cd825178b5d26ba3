//! `iopscheck bundle` holds what it promises: this host's history lines verbatim, the policy,
//! the report as JSON and HTML, the host's and target's context and the version, nothing of
//! other hosts or of the environment; `iopscheck report` on the extracted history gives the
//! same verdict; an existing file is never replaced.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::io::Read;
use std::path::{Path, PathBuf};

use assert_cmd::Command;
use chrono::{Duration, Local};
use iopscheck::testing::history::Record;
use serde_json::Value;

const SECRET: &str = "s3cr3t-token-do-not-ship";

fn rec(host: &str, dir: &str, ago: Duration, mb_s: f64) -> Record {
    common::swimlane_record(host, dir, (Local::now() - ago).fixed_offset(), mb_s)
}

struct Setup {
    tmp: tempfile::TempDir,
    history: PathBuf,
    data: PathBuf,
    host: String,
    own_lines: Vec<String>,
}

/// A history with six runs of this host over two days and three of another host's.
fn setup(mb_s: f64) -> Setup {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    std::fs::create_dir(&data).unwrap();
    let data = data.canonicalize().unwrap();
    let host = iopscheck::testing::machine::hostname();
    let mut text = String::new();
    let mut own_lines = Vec::new();
    for d in 0..2 {
        for i in 0..3 {
            let ago = Duration::days(d) + Duration::hours(1) + Duration::minutes(10 * i);
            let line =
                serde_json::to_string(&rec(&host, data.to_str().unwrap(), ago, mb_s)).unwrap();
            text.push_str(&line);
            text.push('\n');
            own_lines.push(line);
            let other = rec("other-node-7", "/elsewhere", ago, 3.0);
            text.push_str(&serde_json::to_string(&other).unwrap());
            text.push('\n');
        }
    }
    let history = tmp.path().join("history.jsonl");
    std::fs::write(&history, text).unwrap();
    Setup {
        tmp,
        history,
        data,
        host,
        own_lines,
    }
}

fn iopscheck(cwd: &Path) -> Command {
    let mut c = Command::new(assert_cmd::cargo::cargo_bin!("iopscheck"));
    c.current_dir(cwd)
        .env("NO_COLOR", "1")
        .env("IOPSCHECK_TEST_SECRET", SECRET)
        .env_remove("IOPSCHECK_HISTORY");
    c
}

/// The members of a .tar.gz: path → contents.
fn members(archive: &[u8]) -> BTreeMap<String, Vec<u8>> {
    let gz = flate2::read::GzDecoder::new(archive);
    let mut tar = tar::Archive::new(gz);
    let mut out = BTreeMap::new();
    for e in tar.entries().unwrap() {
        let mut e = e.unwrap();
        let path = e.path().unwrap().display().to_string();
        let mut data = Vec::new();
        e.read_to_end(&mut data).unwrap();
        out.insert(path, data);
    }
    out
}

#[test]
fn the_bundle_holds_what_it_promises_and_reports_the_same_verdict_elsewhere() {
    let s = setup(16.4);
    let out = iopscheck(s.tmp.path())
        .args(["bundle", "--history"])
        .arg(&s.history)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The file's name is printed and follows the promised pattern.
    let name = String::from_utf8(out.stdout).unwrap().trim().to_string();
    let prefix = format!("iopscheck-bundle-{}-", s.host);
    assert!(name.starts_with(&prefix), "{name}");
    let stamp = name
        .strip_prefix(&prefix)
        .unwrap()
        .strip_suffix(".tar.gz")
        .unwrap();
    assert!(
        chrono::NaiveDateTime::parse_from_str(stamp, "%Y%m%dT%H%M%S").is_ok(),
        "{stamp}"
    );
    let path = s.tmp.path().join(&name);
    let m = members(&std::fs::read(&path).unwrap());

    let top = name.strip_suffix(".tar.gz").unwrap();
    let names: BTreeSet<String> = m
        .keys()
        .map(|k| k.strip_prefix(&format!("{top}/")).unwrap_or(k).to_string())
        .collect();
    let expected: BTreeSet<String> = [
        "",
        "README.txt",
        "history.jsonl",
        "policy.yaml",
        "report.json",
        "report.html",
        "context.json",
        "version.txt",
        "manifest.json",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    assert_eq!(names, expected);
    let get = |n: &str| String::from_utf8(m[&format!("{top}/{n}")].clone()).unwrap();

    // This host's lines, byte for byte; no other host anywhere; no environment.
    let history = get("history.jsonl");
    assert_eq!(history, s.own_lines.join("\n") + "\n");
    for (n, data) in &m {
        let text = String::from_utf8_lossy(data);
        assert!(!text.contains("other-node-7"), "{n} names another host");
        assert!(!text.contains(SECRET), "{n} holds the environment");
    }

    assert_eq!(
        get("policy.yaml"),
        iopscheck::testing::policy::builtin_yaml("swimlane").unwrap()
    );

    let report: Value = serde_json::from_str(&get("report.json")).unwrap();
    assert_eq!(report["verdict"], "pass");
    assert_eq!(report["runs"].as_array().unwrap().len(), 6);
    assert_eq!(report["group"]["host"], s.host.as_str());
    let html = get("report.html");
    assert!(html.starts_with("<!DOCTYPE html>") && html.contains("PASS"));

    let ctx: Value = serde_json::from_str(&get("context.json")).unwrap();
    for key in [
        "os",
        "kernel",
        "cpu",
        "memory_bytes",
        "targets",
        "tool",
        "history",
    ] {
        assert!(!ctx[key].is_null(), "context.json lacks {key}: {ctx}");
    }
    assert!(ctx["cpu"]["count"].as_u64().unwrap() >= 1);
    let target = &ctx["targets"][0];
    assert_eq!(target["dir"], s.data.to_str().unwrap());
    for key in [
        "mount_point",
        "filesystem",
        "mount_options",
        "device",
        "model",
        "rotational",
        "scheduler",
        "write_cache",
    ] {
        assert!(
            target.get(key).is_some(),
            "context.json target lacks {key}: {target}"
        );
    }
    assert!(target["mount_options"].as_str().is_some());
    assert_eq!(ctx["history"]["lines_of_other_hosts_left_out"], 6);

    let version = get("version.txt");
    assert!(version.starts_with(&format!("iopscheck {}", env!("CARGO_PKG_VERSION"))));
    assert!(get("README.txt").contains("iopscheck report --history history.jsonl"));

    // Extract it and judge the history there, as support would on another machine.
    let dest = s.tmp.path().join("extracted");
    tar::Archive::new(flate2::read::GzDecoder::new(
        std::fs::File::open(&path).unwrap(),
    ))
    .unpack(&dest)
    .unwrap();
    let out = iopscheck(&dest)
        .args([
            "report", "--format", "json", "--since", "3650d", "--host", &s.host,
        ])
        .arg("--history")
        .arg(dest.join(top).join("history.jsonl"))
        .output()
        .unwrap();
    let again: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(again["verdict"], report["verdict"]);
    assert_eq!(out.status.code(), Some(0));
}

#[test]
fn a_failing_history_is_bundled_as_failing_and_the_bundle_still_exits_0() {
    let s = setup(10.0);
    let out_path = s.tmp.path().join("b.tar.gz");
    iopscheck(s.tmp.path())
        .args(["bundle", "-o"])
        .arg(&out_path)
        .arg("--history")
        .arg(&s.history)
        .assert()
        .code(0);
    let m = members(&std::fs::read(&out_path).unwrap());
    let (_, report) = m.iter().find(|(k, _)| k.ends_with("/report.json")).unwrap();
    let report: Value = serde_json::from_slice(report).unwrap();
    assert_eq!(report["verdict"], "fail");
}

#[test]
fn an_existing_file_is_never_replaced() {
    let s = setup(16.4);
    let out_path = s.tmp.path().join("b.tar.gz");
    std::fs::write(&out_path, "keep me").unwrap();
    iopscheck(s.tmp.path())
        .args(["bundle", "-o"])
        .arg(&out_path)
        .arg("--history")
        .arg(&s.history)
        .assert()
        .code(2)
        .stderr(predicates::str::contains("already exists"));
    assert_eq!(std::fs::read_to_string(&out_path).unwrap(), "keep me");
    let left: Vec<_> = std::fs::read_dir(s.tmp.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".tmp"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

/// A bad argument is told before the signing key is read: an existing default name, or a fio
/// output that is not there, exits 2 naming it, whatever the key (here not a key at all).
#[test]
fn a_bad_name_or_path_is_told_before_the_signing_key_is_read() {
    let s = setup(16.4);
    let key = s.tmp.path().join("not-a-key");
    std::fs::write(&key, "not a key\n").unwrap();
    let sign_error = |err: &str| err.contains("--sign");

    // The key alone is refused, naming --sign: the cases below would be too, were it read
    // first.
    let out = iopscheck(s.tmp.path())
        .args(["bundle", "--host", "node7", "-o", "k.tar.gz", "--history"])
        .arg(&s.history)
        .arg("--sign")
        .arg(&key)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(sign_error(&err), "{err}");

    // The default name (iopscheck-bundle-HOST-DATE.tar.gz, to the second) taken for every
    // second the command could start in.
    let cwd = s.tmp.path().join("cwd");
    std::fs::create_dir(&cwd).unwrap();
    let now = Local::now();
    for k in -5..300 {
        let stamp = (now + Duration::seconds(k)).format("%Y%m%dT%H%M%S");
        std::fs::write(
            cwd.join(format!("iopscheck-bundle-node7-{stamp}.tar.gz")),
            "keep",
        )
        .unwrap();
    }
    let out = iopscheck(&cwd)
        .args(["bundle", "--host", "node7", "--history"])
        .arg(&s.history)
        .arg("--sign")
        .arg(&key)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("iopscheck-bundle-node7-") && err.contains("already exists"),
        "{err}"
    );
    assert!(!sign_error(&err), "{err}");

    // A fio output that is not there.
    let missing = s.tmp.path().join("fio-missing.json");
    let out = iopscheck(s.tmp.path())
        .args(["bundle", "--host", "node7", "-o", "m.tar.gz", "--history"])
        .arg(&s.history)
        .arg("--sign")
        .arg(&key)
        .arg(&missing)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains(&missing.display().to_string()), "{err}");
    assert!(!sign_error(&err), "{err}");
    for name in ["k.tar.gz", "m.tar.gz"] {
        assert!(!s.tmp.path().join(name).exists(), "{name}");
    }
}

#[test]
fn without_a_history_the_bundle_says_so_and_is_inconclusive() {
    let tmp = tempfile::tempdir().unwrap();
    let out = iopscheck(tmp.path())
        .args(["bundle", "--host", "fresh-node", "-o", "-", "--history"])
        .arg(tmp.path().join("none.jsonl"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let m = members(&out.stdout);
    let get = |suffix: &str| {
        m.iter()
            .find(|(k, _)| k.ends_with(suffix))
            .map(|(_, v)| String::from_utf8(v.clone()).unwrap())
            .unwrap()
    };
    assert_eq!(get("/history.jsonl"), "");
    let report: Value = serde_json::from_str(&get("/report.json")).unwrap();
    assert_eq!(report["verdict"], "inconclusive");
    assert!(report["reason"].as_str().unwrap().contains("no runs"));
    assert!(std::fs::read_dir(tmp.path()).unwrap().next().is_none());
}
