//! `iopscheck verify`: an untouched bundle is verified (exit 0); a bundle tampered with in any
//! way (a figure edited, a line dropped, lines reordered, the manifest replaced or removed, a
//! report edited, a file added) is caught, saying what was altered with line numbers (exit 1);
//! a history without a hash chain is said unverifiable.

mod common;

use std::io::Read;
use std::path::{Path, PathBuf};

use chrono::{Duration, Local};

/// (path inside the archive, bytes), in the archive's order.
type Members = Vec<(String, Vec<u8>)>;

fn history(env: &common::Env, host: &str, mb_s: &[f64]) {
    let mut text = String::new();
    for (i, m) in mb_s.iter().enumerate() {
        let t = Local::now() - Duration::hours(1 + 9 * i as i64);
        let r = common::swimlane_record(host, "/data", t.fixed_offset(), *m);
        text.push_str(&serde_json::to_string(&r).unwrap());
        text.push('\n');
    }
    std::fs::write(&env.history, text).unwrap();
}

fn bundle(env: &common::Env, name: &str, extra: &[&Path]) -> PathBuf {
    let path = env.tmp.path().join(name);
    let out = env
        .cmd()
        .args(["bundle", "--host", "node7", "-o"])
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

fn read(path: &Path) -> Members {
    let gz = flate2::read::GzDecoder::new(std::fs::File::open(path).unwrap());
    let mut tar = tar::Archive::new(gz);
    let mut out = Vec::new();
    for e in tar.entries().unwrap() {
        let mut e = e.unwrap();
        if !e.header().entry_type().is_file() {
            continue;
        }
        let name = e.path().unwrap().display().to_string();
        let mut data = Vec::new();
        e.read_to_end(&mut data).unwrap();
        out.push((name, data));
    }
    out
}

fn write(path: &Path, members: &Members) {
    let f = std::fs::File::create(path).unwrap();
    let gz = flate2::write::GzEncoder::new(f, flate2::Compression::fast());
    let mut tar = tar::Builder::new(gz);
    for (name, data) in members {
        let mut h = tar::Header::new_gnu();
        h.set_entry_type(tar::EntryType::Regular);
        h.set_mode(0o644);
        h.set_size(data.len() as u64);
        tar.append_data(&mut h, name, data.as_slice()).unwrap();
    }
    tar.into_inner().unwrap().finish().unwrap();
}

fn member<'a>(m: &'a mut Members, suffix: &str) -> &'a mut Vec<u8> {
    &mut m.iter_mut().find(|(n, _)| n.ends_with(suffix)).unwrap().1
}

fn lines(b: &[u8]) -> Vec<Vec<u8>> {
    b.split_inclusive(|&c| c == b'\n')
        .map(<[u8]>::to_vec)
        .collect()
}

fn verify(env: &common::Env, path: &Path) -> (Option<i32>, String) {
    let out = env.cmd().arg("verify").arg(path).output().unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr),
    )
}

#[test]
fn an_untouched_bundle_is_verified_and_every_tampering_is_caught_with_its_lines() {
    let env = common::Env::new();
    history(&env, "node7", &[16.4, 16.5, 16.6, 16.7, 16.8, 16.9]);
    let fio = common::fixture("fio-3.33-posixaio-randwrite.txt");
    let good = bundle(&env, "good.tar.gz", &[&fio]);
    let (code, text) = verify(&env, &good);
    assert_eq!(code, Some(0), "{text}");
    assert!(text.starts_with("VERIFIED"), "{text}");
    assert!(text.contains("6 history lines"), "{text}");
    assert!(text.contains("iopscheck 0."), "the tool's version: {text}");
    // the same, re-packed member for member: still verified (the contents are what count)
    let original = read(&good);
    let same = env.tmp.path().join("same.tar.gz");
    write(&same, &original);
    assert_eq!(verify(&env, &same).0, Some(0));

    // another bundle, of other figures: its manifest stands in for the right one
    let other_env = common::Env::new();
    history(&other_env, "node7", &[3.0, 3.1]);
    let other = read(&bundle(&other_env, "other.tar.gz", &[]));
    let other_manifest = other
        .iter()
        .find(|(n, _)| n.ends_with("/manifest.json"))
        .unwrap()
        .1
        .clone();

    type Tamper = Box<dyn Fn(&mut Members)>;
    let cases: Vec<(&str, Tamper, Vec<&str>)> = vec![
        (
            "a figure edited",
            Box::new(|m| {
                let h = member(m, "/history.jsonl");
                let mut ls = lines(h);
                let l = String::from_utf8(ls[2].clone()).unwrap();
                assert!(l.contains("16.6"));
                ls[2] = l.replacen("16.6", "61.6", 1).into_bytes();
                *h = ls.concat();
            }),
            vec!["history.jsonl", "line 3 altered"],
        ),
        (
            "a line dropped",
            Box::new(|m| {
                let h = member(m, "/history.jsonl");
                let mut ls = lines(h);
                ls.remove(1);
                *h = ls.concat();
            }),
            vec!["original line 2 missing", "5 lines, the manifest says 6"],
        ),
        (
            "lines reordered",
            Box::new(|m| {
                let h = member(m, "/history.jsonl");
                let mut ls = lines(h);
                ls.swap(0, 4);
                *h = ls.concat();
            }),
            vec!["line 1 was line 5", "line 5 was line 1"],
        ),
        (
            "a line added",
            Box::new(|m| {
                let h = member(m, "/history.jsonl");
                let mut ls = lines(h);
                let copy = ls[0].clone();
                ls.push(copy);
                *h = ls.concat();
            }),
            vec!["history.jsonl", "7 lines, the manifest says 6"],
        ),
        (
            "the manifest replaced",
            Box::new(move |m| *member(m, "/manifest.json") = other_manifest.clone()),
            vec!["history.jsonl", "report.json: altered"],
        ),
        (
            "the manifest removed",
            Box::new(|m| m.retain(|(n, _)| !n.ends_with("/manifest.json"))),
            vec!["no manifest.json"],
        ),
        (
            "the report's verdict edited",
            Box::new(|m| {
                let r = member(m, "/report.json");
                let t = String::from_utf8(r.clone()).unwrap();
                assert!(t.contains("\"verdict\": \"pass\""), "{t}");
                *r = t
                    .replace("\"verdict\": \"pass\"", "\"verdict\": \"fail\"")
                    .into_bytes();
            }),
            vec!["report.json: altered"],
        ),
        (
            "a raw fio output edited",
            Box::new(|m| {
                let f = member(m, "/fio/fio-3.33-posixaio-randwrite.txt");
                let t = String::from_utf8(f.clone()).unwrap();
                *f = t.replacen("IOPS=69.5k", "IOPS=96.5k", 1).into_bytes();
            }),
            vec!["fio/fio-3.33-posixaio-randwrite.txt: altered"],
        ),
        (
            "a file added",
            Box::new(|m| {
                let dir = m[0].0.split('/').next().unwrap().to_string();
                m.push((format!("{dir}/extra.json"), b"{}".to_vec()));
            }),
            vec!["extra.json: added"],
        ),
    ];
    for (how, tamper, says) in cases {
        let mut m = original.clone();
        tamper(&mut m);
        assert_ne!(m, original, "{how}: the tampering changed something");
        let p = env.tmp.path().join("tampered.tar.gz");
        write(&p, &m);
        let (code, text) = verify(&env, &p);
        assert_eq!(code, Some(1), "{how}: {text}");
        assert!(text.starts_with("ALTERED"), "{how}: {text}");
        for s in says {
            assert!(text.contains(s), "{how}: `{s}` in {text}");
        }
    }
}

#[test]
fn a_history_without_hashes_is_readable_and_said_unverifiable() {
    let env = common::Env::new();
    history(&env, "node7", &[16.4, 16.5]);
    let (code, text) = verify(&env, &env.history);
    assert_eq!(code, Some(1), "{text}");
    assert!(text.starts_with("UNVERIFIABLE"), "{text}");
    // and still reads
    let out = env
        .cmd()
        .args(["report", "--host", "node7", "--format", "summary"])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).contains("2 of 6 runs"));
    // no such file: bad usage, exit 2
    let (code, text) = verify(&env, &env.tmp.path().join("none.tar.gz"));
    assert_eq!(code, Some(2), "{text}");
}
