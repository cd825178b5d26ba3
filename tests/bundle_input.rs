//! A bundle is a first-class input: `report --history BUNDLE`, `import BUNDLE` and `fleet
//! BUNDLE` give the verdict of the bundle's own report; the bundle keeps the raw fio outputs it
//! was given byte for byte; and a bundle of another host's records says nothing of the
//! machine that made it.

mod common;

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};

use chrono::{Duration, Local};
use serde_json::Value;

/// A history of six Swimlane runs of `host` over two days at `mb_s`, and the env around it.
fn history(env: &common::Env, host: &str, mb_s: f64) {
    let mut text = String::new();
    for d in 0..2 {
        for i in 0..3 {
            let t =
                Local::now() - Duration::days(d) - Duration::hours(1) - Duration::minutes(10 * i);
            let r = common::swimlane_record(host, "/data", t.fixed_offset(), mb_s);
            text.push_str(&serde_json::to_string(&r).unwrap());
            text.push('\n');
        }
    }
    std::fs::write(&env.history, text).unwrap();
}

fn bundle(env: &common::Env, host: &str, extra: &[&Path]) -> PathBuf {
    let path = env.tmp.path().join(format!("{host}.tar.gz"));
    let out = env
        .cmd()
        .args(["bundle", "--host", host, "-o"])
        .arg(&path)
        .args(extra)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    path
}

/// The members of a .tar.gz, by their name inside the bundle's directory.
fn members(path: &Path) -> BTreeMap<String, Vec<u8>> {
    let gz = flate2::read::GzDecoder::new(std::fs::File::open(path).unwrap());
    let mut tar = tar::Archive::new(gz);
    let mut out = BTreeMap::new();
    for e in tar.entries().unwrap() {
        let mut e = e.unwrap();
        let name = e.path().unwrap().display().to_string();
        let name = name
            .split_once('/')
            .map(|(_, n)| n.to_string())
            .unwrap_or(name);
        let mut data = Vec::new();
        e.read_to_end(&mut data).unwrap();
        out.insert(name, data);
    }
    out
}

fn json_of(env: &common::Env, args: &[&str]) -> (Option<i32>, Value) {
    let out = env
        .cmd()
        .args(args)
        .args(["--format", "json"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    let v = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{args:?}: not JSON ({e}): {err}"));
    (out.status.code(), v)
}

#[test]
fn report_import_and_fleet_of_a_bundle_give_its_own_reports_verdict() {
    for (mb_s, want) in [(16.4, "pass"), (8.2, "fail")] {
        let env = common::Env::new();
        history(&env, "node7", mb_s);
        let b = bundle(&env, "node7", &[]);
        let own: Value = serde_json::from_slice(&members(&b)["report.json"]).unwrap();
        assert_eq!(own["verdict"], want, "the bundle's own report");
        // elsewhere: another history, another default host
        let elsewhere = common::Env::new();
        let b = b.to_str().unwrap();
        let (code, r) = json_of(&elsewhere, &["report", "--history", b]);
        assert_eq!(r["verdict"], own["verdict"], "report: {}", r["reason"]);
        assert_eq!(r["evidence"], own["evidence"]);
        assert_eq!(r["runs"].as_array().unwrap().len(), 6);
        assert_eq!(code, Some(if want == "pass" { 0 } else { 1 }));
        let (code_i, i) = json_of(&elsewhere, &["import", b]);
        assert_eq!(i["verdict"], own["verdict"], "import: {}", i["reason"]);
        assert_eq!(code_i, code);
        let (code_f, f) = json_of(&elsewhere, &["fleet", b]);
        assert_eq!(f["verdict"], own["verdict"], "fleet: {f}");
        assert_eq!(code_f, code);
        // nothing was written beside it, and the other env's history is untouched
        assert!(!elsewhere.history.exists());
    }
}

#[test]
fn a_bundle_is_read_alone_and_never_recorded_by_import() {
    let env = common::Env::new();
    history(&env, "node7", 16.4);
    let b = bundle(&env, "node7", &[]);
    let fio = common::fixture("fio-3.33-posixaio-randwrite.txt");
    for args in [
        vec![b.to_str().unwrap(), fio.to_str().unwrap()],
        vec![b.to_str().unwrap(), "--record", "--host", "node7"],
    ] {
        let out = env.cmd().arg("import").args(&args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains("bundle"), "{err}");
    }
}

#[test]
fn the_bundle_keeps_the_raw_fio_outputs_it_was_given() {
    let env = common::Env::new();
    history(&env, "node7", 16.4);
    let a = common::fixture("fio-3.33-posixaio-randwrite.txt");
    let j = common::fixture("fio-3.33-io_uring-randwrite.json");
    let b = bundle(&env, "node7", &[&a, &j]);
    let m = members(&b);
    for f in [&a, &j] {
        let name = format!("fio/{}", f.file_name().unwrap().to_string_lossy());
        assert_eq!(
            m.get(&name).map(Vec::as_slice),
            Some(std::fs::read(f).unwrap().as_slice()),
            "{name} byte for byte"
        );
    }
    // a file that cannot be read is an error naming it, and no bundle is left
    let out = env
        .cmd()
        .args(["bundle", "--host", "node7", "-o"])
        .arg(env.tmp.path().join("x.tar.gz"))
        .arg(env.tmp.path().join("missing.txt"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("missing.txt"));
    assert!(!env.tmp.path().join("x.tar.gz").exists());
}

#[test]
fn a_bundle_of_another_hosts_records_says_nothing_of_the_bundling_machine() {
    let env = common::Env::new();
    history(&env, "other-node", 16.4);
    let b = bundle(&env, "other-node", &[]);
    let ctx: Value = serde_json::from_slice(&members(&b)["context.json"]).unwrap();
    assert_eq!(ctx["host"], "other-node");
    for this_machine in [
        "cpu",
        "kernel",
        "os",
        "memory_bytes",
        "targets",
        "fio",
        "arch",
    ] {
        assert!(ctx.get(this_machine).is_none(), "{this_machine}: {ctx}");
    }
    let text = ctx.to_string();
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    if !kernel.trim().is_empty() {
        assert!(
            !text.contains(kernel.trim()),
            "this machine's kernel: {text}"
        );
    }
    assert!(ctx["system"].as_str().unwrap().contains("not described"));
}

#[test]
fn a_bundles_policy_under_a_published_name_judges_as_the_published_one_or_is_refused() {
    // A copy of Swimlane's policy with its threshold lowered, still called "swimlane", kept in
    // a bundle: it would pass runs the published policy fails.
    let env = common::Env::new();
    history(&env, "node1", 8.2);
    let edited = env.swimlane_policy("edited.yaml", |y| {
        y.replace("threshold: 3000", "threshold: 1000")
    });
    let b = bundle(&env, "node1", &[Path::new("-p"), &edited]);
    let b_arg = b.to_str().unwrap();
    for args in [
        vec!["report", "--history", b_arg],
        vec!["import", b_arg],
        vec!["report", "--history", b_arg, "--format", "json"],
    ] {
        let out = env.cmd().args(&args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.contains(
                "is named \"swimlane\" but does not judge as iopscheck's published swimlane policy"
            ) && err.contains("1000")
                && err.contains("-p swimlane"),
            "{args:?}: {err}"
        );
        assert!(out.stdout.is_empty(), "{args:?}");
    }
    // named, the policy judges: the published one fails these runs, the bundle's own passes
    for (p, code) in [("swimlane", 1), (edited.to_str().unwrap(), 0)] {
        let (c, j) = json_of(&env, &["report", "--history", b_arg, "-p", p]);
        assert_eq!(c, Some(code), "{p}: {}", j["reason"]);
        let (c, _) = json_of(&env, &["import", b_arg, "-p", p]);
        assert_eq!(c, Some(code), "{p}");
    }
}

/// A bundle whose history.jsonl is `n` zero bytes: a gzip bomb, a thousandth of that on disk.
fn bomb(path: &Path, n: u64) {
    let f = std::fs::File::create(path).unwrap();
    let gz = flate2::write::GzEncoder::new(f, flate2::Compression::default());
    let mut tar = tar::Builder::new(gz);
    let mut h = tar::Header::new_gnu();
    h.set_entry_type(tar::EntryType::Regular);
    h.set_mode(0o644);
    h.set_size(n);
    tar.append_data(
        &mut h,
        "iopscheck-bundle-x/history.jsonl",
        std::io::repeat(0).take(n),
    )
    .unwrap();
    tar.into_inner().unwrap().finish().unwrap();
}

/// A 3 MB gzip bomb made report/import/fleet write a 3 GB temporary file and verify hold
/// 3.2 GB. A bundle's members may decompress to 100 times its size (at least 16 MiB): past
/// that, every command refuses it, exit 2, naming the bundle and the member.
#[test]
fn a_bundle_that_decompresses_past_its_bound_is_refused_naming_the_member() {
    let env = common::Env::new();
    let b = env.tmp.path().join("bomb.tar.gz");
    bomb(&b, 40 << 20);
    let size = std::fs::metadata(&b).unwrap().len();
    assert!(size < 400 << 10, "a bomb: {size} bytes on disk");
    let shown = b.to_str().unwrap();
    for args in [
        vec!["report", "--history", shown, "--format", "summary"],
        vec!["import", shown, "--format", "summary"],
        vec!["fleet", shown, "--format", "summary"],
        vec!["verify", shown],
    ] {
        let out = env.cmd().args(&args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.contains(shown)
                && err.contains("history.jsonl")
                && err.contains("decompresses to more than 16 MiB"),
            "{args:?}: {err}"
        );
    }
}
