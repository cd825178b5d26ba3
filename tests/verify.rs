//! `iopscheck verify`: an untouched bundle or history is verified (exit 0); one tampered with in
//! any way (a figure edited, a line dropped, lines reordered, a line inserted, the manifest
//! replaced or removed, a report edited, a file added, the signature stripped or another key's)
//! is caught, saying what was altered with line numbers (exit 1); a history without a hash
//! chain is said unverifiable, from the line its chain starts. The signature is OpenSSH's:
//! `ssh-keygen -Y verify` accepts iopscheck's, and iopscheck accepts `ssh-keygen -Y sign`'s.

mod common;

use std::io::Read;
use std::path::{Path, PathBuf};

use chrono::{Duration, Local};

/// (path inside the archive, bytes), in the archive's order.
type Members = Vec<(String, Vec<u8>)>;

fn records(host: &str, mb_s: &[f64]) -> Vec<iopscheck::testing::history::Record> {
    mb_s.iter()
        .enumerate()
        .map(|(i, m)| {
            let t = Local::now() - Duration::hours(1 + 9 * i as i64);
            common::swimlane_record(host, "/data", t.fixed_offset(), *m)
        })
        .collect()
}

/// A history as iopscheck appends it: chained, some records one append at a time, the last
/// two in one append.
fn history(env: &common::Env, host: &str, mb_s: &[f64]) {
    let rs = records(host, mb_s);
    let (one_by_one, together) = rs.split_at(rs.len().saturating_sub(2));
    for r in one_by_one {
        iopscheck::testing::history::append(&env.history, std::slice::from_ref(r)).unwrap();
    }
    iopscheck::testing::history::append(&env.history, together).unwrap();
}

/// A history written before records carried a chain.
fn legacy_history(env: &common::Env, host: &str, mb_s: &[f64]) {
    let mut text = String::new();
    for r in records(host, mb_s) {
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
    common::write_tar_gz(
        path,
        members.iter().map(|(n, d)| (n.as_str(), d.as_slice())),
        flate2::Compression::fast(),
    );
}

fn member<'a>(m: &'a mut Members, suffix: &str) -> &'a mut Vec<u8> {
    &mut m.iter_mut().find(|(n, _)| n.ends_with(suffix)).unwrap().1
}

fn lines(b: &[u8]) -> Vec<Vec<u8>> {
    b.split_inclusive(|&c| c == b'\n')
        .map(<[u8]>::to_vec)
        .collect()
}

/// A change made to a bundle's members.
type BundleTamper = Box<dyn Fn(&mut Members)>;

/// Edits the bundle's history line by line.
fn edit_history(m: &mut Members, edit: impl FnOnce(&mut Vec<Vec<u8>>)) {
    let h = member(m, "/history.jsonl");
    let mut ls = lines(h);
    edit(&mut ls);
    *h = ls.concat();
}

/// `verify PATH EXTRA` finds `path` altered (exit 1, ALTERED) and says each of `says`.
fn assert_altered(env: &common::Env, path: &Path, extra: &[&Path], how: &str, says: &[&str]) {
    let (code, text) = verify_with(env, path, extra);
    assert_eq!(code, Some(1), "{how}: {text}");
    assert!(text.starts_with("ALTERED"), "{how}: {text}");
    for s in says {
        assert!(text.contains(s), "{how}: `{s}` in {text}");
    }
}

/// Each tampering of the bundle `original` (members), re-packed, is found altered by `verify
/// EXTRA` with what it says.
fn assert_each_altered(
    env: &common::Env,
    original: &Members,
    extra: &[&Path],
    cases: Vec<(&str, BundleTamper, Vec<&str>)>,
) {
    for (how, tamper, says) in cases {
        let mut m = original.clone();
        tamper(&mut m);
        assert_ne!(&m, original, "{how}: the tampering changed something");
        let p = env.tmp.path().join("tampered.tar.gz");
        write(&p, &m);
        assert_altered(env, &p, extra, how, &says);
    }
}

fn verify(env: &common::Env, path: &Path) -> (Option<i32>, String) {
    verify_with(env, path, &[])
}

fn verify_with(env: &common::Env, path: &Path, extra: &[&Path]) -> (Option<i32>, String) {
    let out = env
        .cmd()
        .arg("verify")
        .arg(path)
        .args(extra)
        .output()
        .unwrap();
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

    let cases: Vec<(&str, BundleTamper, Vec<&str>)> = vec![
        (
            "a figure edited",
            Box::new(|m| {
                edit_history(m, |ls| {
                    let l = String::from_utf8(ls[2].clone()).unwrap();
                    assert!(l.contains("16.6"));
                    ls[2] = l.replacen("16.6", "61.6", 1).into_bytes();
                })
            }),
            vec![
                "history.jsonl",
                "line 3 altered",
                "history.jsonl: line 3 edited (line 4 was chained to other content)",
            ],
        ),
        (
            "a line dropped",
            Box::new(|m| {
                edit_history(m, |ls| {
                    ls.remove(1);
                })
            }),
            vec![
                "original line 2 missing",
                "5 lines, the manifest says 6",
                "history.jsonl: 1 line deleted between line 1 and line 2",
            ],
        ),
        (
            "lines reordered",
            Box::new(|m| edit_history(m, |ls| ls.swap(0, 4))),
            vec![
                "line 1 was line 5",
                "line 5 was line 1",
                "history.jsonl: line 1 out of order",
                "history.jsonl: line 5 out of order",
            ],
        ),
        (
            "a line added",
            Box::new(|m| {
                edit_history(m, |ls| {
                    let copy = ls[0].clone();
                    ls.push(copy);
                })
            }),
            vec![
                "7 lines, the manifest says 6",
                "history.jsonl: line 7 inserted (a copy of line 1)",
            ],
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
    assert_each_altered(&env, &original, &[], cases);
}

#[test]
fn a_history_without_hashes_is_readable_and_said_unverifiable_up_to_where_its_chain_starts() {
    let env = common::Env::new();
    legacy_history(&env, "node7", &[16.4, 16.5]);
    let (code, text) = verify(&env, &env.history);
    assert_eq!(code, Some(1), "{text}");
    assert!(text.starts_with("UNVERIFIABLE"), "{text}");
    assert!(text.contains("its 2 lines carry no hash chain"), "{text}");
    // and still reads
    let out = env
        .cmd()
        .args(["report", "--host", "node7", "--format", "summary"])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).contains("2 of 6 runs"));
    // a run imported by the binary is chained to the last of them
    let fio = common::fixture("fio-3.33-posixaio-randwrite.txt");
    let out = env
        .cmd()
        .args(["import", "--record", "--host", "node7"])
        .arg(&fio)
        .output()
        .unwrap();
    // (the verdict's exit code: inconclusive on one run)
    assert_ne!(
        out.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines = env.history_lines();
    assert_eq!(lines.len(), 3);
    assert_eq!(lines[2]["chain"]["seq"], 1);
    let (code, text) = verify(&env, &env.history);
    assert_eq!(code, Some(1), "{text}");
    assert!(
        text.contains("lines 1–2 carry no hash chain")
            && text.contains("line 3 is chained and intact"),
        "{text}"
    );
    // and a bundle of it says the same
    let b = bundle(&env, "b.tar.gz", &[]);
    let (code, text) = verify(&env, &b);
    assert_eq!(code, Some(1), "{text}");
    assert!(
        text.starts_with("UNVERIFIABLE") && text.contains("lines 1–2 carry no hash chain"),
        "{text}"
    );
    // no such file: bad usage, exit 2
    let (code, text) = verify(&env, &env.tmp.path().join("none.tar.gz"));
    assert_eq!(code, Some(2), "{text}");
}

#[test]
fn a_history_verifies_and_each_tampering_is_named_by_its_line() {
    let env = common::Env::new();
    history(&env, "node7", &[16.4, 16.5, 16.6, 16.7, 16.8, 16.9]);
    let (code, text) = verify(&env, &env.history);
    assert_eq!(code, Some(0), "{text}");
    assert!(
        text.starts_with("VERIFIED") && text.contains("6 lines"),
        "{text}"
    );
    let original = lines(&std::fs::read(&env.history).unwrap());
    // every line's link is the previous line's SHA-256, computed here independently
    let sha = |b: &[u8]| {
        use sha2::Digest;
        let d = sha2::Sha256::digest(b.strip_suffix(b"\n").unwrap_or(b));
        d.iter().map(|x| format!("{x:02x}")).collect::<String>()
    };
    for (i, l) in original.iter().enumerate() {
        let v: serde_json::Value = serde_json::from_slice(l).unwrap();
        assert_eq!(v["chain"]["seq"], i as u64 + 1);
        let want = if i == 0 {
            "0".repeat(64)
        } else {
            sha(&original[i - 1])
        };
        assert_eq!(v["chain"]["prev"], want.as_str(), "line {}", i + 1);
    }
    assert!(text.contains(&sha(&original[5])), "the head: {text}");

    type Tamper = Box<dyn Fn(&mut Vec<Vec<u8>>)>;
    let forged = {
        let mut v: serde_json::Value = serde_json::from_slice(&original[1]).unwrap();
        v.as_object_mut().unwrap().remove("chain");
        v["metrics"]["write_iops_formula"] = 9999.0.into();
        format!("{v}\n").into_bytes()
    };
    let cases: Vec<(&str, Tamper, Vec<&str>)> = vec![
        (
            "a figure edited",
            Box::new(|ls| {
                let l = String::from_utf8(ls[2].clone()).unwrap();
                assert!(l.contains("16.6"));
                ls[2] = l.replacen("16.6", "61.6", 1).into_bytes();
            }),
            vec!["line 3 edited"],
        ),
        (
            "a line dropped",
            Box::new(|ls| {
                ls.remove(1);
            }),
            vec!["1 line deleted between line 1 and line 2"],
        ),
        (
            "two lines reordered",
            Box::new(|ls| ls.swap(1, 3)),
            vec!["line 2 out of order", "line 4 out of order"],
        ),
        (
            "a line copied in",
            Box::new(|ls| {
                let copy = ls[1].clone();
                ls.insert(3, copy);
            }),
            vec!["line 4 inserted (a copy of line 2)"],
        ),
        (
            "a forged record inserted",
            Box::new(move |ls| ls.insert(2, forged.clone())),
            vec!["line 3 inserted: a record without a chain hash"],
        ),
    ];
    for (how, tamper, says) in cases {
        let mut ls = original.clone();
        tamper(&mut ls);
        let p = env.tmp.path().join("tampered.jsonl");
        std::fs::write(&p, ls.concat()).unwrap();
        assert_altered(&env, &p, &[], how, &says);
    }
}

/// An Ed25519 key pair made by the crate from `seed`, written as OpenSSH writes it: (private,
/// public).
fn key(env: &common::Env, name: &str, seed: u8) -> (PathBuf, PathBuf) {
    let k = ssh_key::PrivateKey::from(ssh_key::private::Ed25519Keypair::from_seed(&[seed; 32]));
    let private = env.tmp.path().join(name);
    std::fs::write(
        &private,
        k.to_openssh(ssh_key::LineEnding::LF).unwrap().as_bytes(),
    )
    .unwrap();
    // private to its owner, as ssh-keygen writes it
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&private, std::fs::Permissions::from_mode(0o600)).unwrap();
    let public = env.tmp.path().join(format!("{name}.pub"));
    std::fs::write(&public, k.public_key().to_openssh().unwrap() + "\n").unwrap();
    (private, public)
}

/// `bundle --sign KEY`'s exit code and stderr.
fn sign_with(env: &common::Env, key: &Path) -> (Option<i32>, String) {
    let dest = env.tmp.path().join("with-key.tar.gz");
    let out = env
        .cmd()
        .args(["bundle", "--host", "node7", "-o"])
        .arg(&dest)
        .arg("--sign")
        .arg(key)
        .output()
        .unwrap();
    let _ = std::fs::remove_file(&dest);
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn a_private_key_others_can_read_is_refused_for_signing_as_ssh_keygen_does() {
    use std::os::unix::fs::PermissionsExt;
    let env = common::Env::new();
    history(&env, "node7", &[16.4, 16.5]);
    let (private, _) = key(&env, "k", 3);
    for mode in [0o644, 0o640, 0o604] {
        std::fs::set_permissions(&private, std::fs::Permissions::from_mode(mode)).unwrap();
        let (code, err) = sign_with(&env, &private);
        assert_eq!(code, Some(2), "{mode:o}: {err}");
        assert!(
            err.contains(&format!("--sign {}", private.display()))
                && err.contains("unprotected private key")
                && err.contains("chmod 600"),
            "{mode:o}: {err}"
        );
    }
    std::fs::set_permissions(&private, std::fs::Permissions::from_mode(0o600)).unwrap();
    let (code, err) = sign_with(&env, &private);
    assert_eq!(code, Some(0), "{err}");
}

#[test]
#[cfg_attr(not(have_root), ignore = "needs root (the rule is root's)")]
fn as_root_a_key_another_user_owns_or_can_write_is_refused_naming_the_flag() {
    use std::os::unix::fs::PermissionsExt;
    let env = common::Env::new();
    history(&env, "node7", &[16.4, 16.5, 16.6]);
    let (private, public) = key(&env, "k", 4);
    let signed = bundle(&env, "signed.tar.gz", &[Path::new("--sign"), &private]);
    let mode =
        |p: &Path, m: u32| std::fs::set_permissions(p, std::fs::Permissions::from_mode(m)).unwrap();
    let refused = |code: Option<i32>, text: &str, flag: &str, key: &Path, why: &str| {
        assert_eq!(code, Some(2), "{text}");
        assert!(
            text.contains(&format!("{flag} {}", key.display()))
                && text.contains("refusing it as root")
                && text.contains(why),
            "{text}"
        );
        assert!(!text.contains("VERIFIED"), "{text}");
    };
    // world-writable: anyone could have put their own key there
    mode(&public, 0o666);
    let (code, text) = verify_with(&env, &signed, &[Path::new("--key"), &public]);
    refused(code, &text, "--key", &public, "world-writable");
    mode(&private, 0o666);
    let (code, text) = sign_with(&env, &private);
    refused(code, &text, "--sign", &private, "world-writable");
    // another user's, not writable by others
    mode(&public, 0o644);
    mode(&private, 0o600);
    for k in [&public, &private] {
        std::os::unix::fs::chown(k, Some(65534), Some(65534)).unwrap();
    }
    let (code, text) = verify_with(&env, &signed, &[Path::new("--key"), &public]);
    refused(code, &text, "--key", &public, "owned by user nobody");
    let (code, text) = sign_with(&env, &private);
    refused(code, &text, "--sign", &private, "owned by user nobody");
    // root's own: verified, and signed
    for k in [&public, &private] {
        std::os::unix::fs::chown(k, Some(0), Some(0)).unwrap();
    }
    let (code, text) = verify_with(&env, &signed, &[Path::new("--key"), &public]);
    assert_eq!(code, Some(0), "{text}");
    let (code, text) = sign_with(&env, &private);
    assert_eq!(code, Some(0), "{text}");
}

fn member_of<'a>(m: &'a Members, suffix: &str) -> Option<&'a Vec<u8>> {
    m.iter().find(|(n, _)| n.ends_with(suffix)).map(|(_, b)| b)
}

#[test]
fn a_signed_bundle_is_checked_against_the_key_and_each_forgery_is_caught() {
    let env = common::Env::new();
    history(&env, "node7", &[16.4, 16.5, 16.6, 16.7]);
    let (a, a_pub) = key(&env, "a", 1);
    let (b, b_pub) = key(&env, "b", 2);
    let signed = bundle(&env, "signed.tar.gz", &[Path::new("--sign"), &a]);
    let (code, text) = verify_with(&env, &signed, &[Path::new("--key"), &a_pub]);
    assert_eq!(code, Some(0), "{text}");
    assert!(
        text.starts_with("VERIFIED") && text.contains("signed by SHA256:"),
        "{text}"
    );
    // without --key: verified, the signer named and said unchecked
    let (code, text) = verify(&env, &signed);
    assert_eq!(code, Some(0), "{text}");
    assert!(text.contains("a key not checked"), "{text}");
    // the wrong key
    let (code, text) = verify_with(&env, &signed, &[Path::new("--key"), &b_pub]);
    assert_eq!(code, Some(1), "{text}");
    assert!(text.contains("signed by another key"), "{text}");

    let original = read(&signed);
    let manifest = member_of(&original, "/manifest.json").unwrap().clone();
    let other_key = ssh_key::PrivateKey::read_openssh_file(&b).unwrap();
    let resigned = other_key
        .sign("iopscheck-bundle", ssh_key::HashAlg::Sha512, &manifest)
        .unwrap()
        .to_pem(ssh_key::LineEnding::LF)
        .unwrap();
    let cases: Vec<(&str, BundleTamper, Vec<&str>)> = vec![
        (
            "the signature stripped",
            Box::new(|m| m.retain(|(n, _)| !n.ends_with("/manifest.json.sig"))),
            vec!["not signed: no manifest.json.sig"],
        ),
        (
            "re-signed with another key",
            Box::new(move |m| *member(m, "/manifest.json.sig") = resigned.clone().into_bytes()),
            vec!["signed by another key"],
        ),
        (
            // a figure edited, and the manifest made again to match it
            "the history edited and its manifest replaced",
            Box::new(|m| {
                edit_history(m, |ls| {
                    let l = String::from_utf8(ls[1].clone()).unwrap();
                    ls[1] = l.replacen("16.5", "61.5", 1).into_bytes();
                });
                let edited = member(m, "/history.jsonl").clone();
                let (file, entry) = iopscheck::testing::evidence::digest_history(&edited);
                let mf = member(m, "/manifest.json");
                let mut v: serde_json::Value = serde_json::from_slice(mf).unwrap();
                v["files"]["history.jsonl"] = serde_json::to_value(file).unwrap();
                v["history"] = serde_json::to_value(entry).unwrap();
                *mf = serde_json::to_vec_pretty(&v).unwrap();
            }),
            vec![
                "manifest.json.sig: not a signature of this manifest.json",
                "history.jsonl: line 2 edited",
            ],
        ),
    ];
    assert_each_altered(&env, &original, &[Path::new("--key"), &a_pub], cases);

    // keys given the wrong way round: exit 2, naming the flag, and no bundle written
    let out = env
        .cmd()
        .args(["bundle", "--host", "node7", "-o"])
        .arg(env.tmp.path().join("x.tar.gz"))
        .arg("--sign")
        .arg(&a_pub)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("--sign") && err.contains("a public key"),
        "{err}"
    );
    assert!(!env.tmp.path().join("x.tar.gz").exists());
    let (code, text) = verify_with(&env, &signed, &[Path::new("--key"), &a]);
    assert_eq!(code, Some(2), "{text}");
    assert!(
        text.contains("--key") && text.contains("a private key"),
        "{text}"
    );
    // a history carries no signature
    let (code, text) = verify_with(&env, &env.history, &[Path::new("--key"), &a_pub]);
    assert_eq!(code, Some(2), "{text}");
    assert!(text.contains("--key"), "{text}");
}

fn ssh_keygen(args: &[&str], stdin: Option<&[u8]>) -> std::process::Output {
    use std::io::Write;
    let mut c = std::process::Command::new("ssh-keygen")
        .args(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("ssh-keygen runs");
    let mut input = c.stdin.take().unwrap();
    input.write_all(stdin.unwrap_or_default()).unwrap();
    drop(input);
    c.wait_with_output().unwrap()
}

#[test]
#[cfg_attr(not(have_ssh_keygen), ignore = "needs ssh-keygen (openssh-client)")]
fn openssh_checks_iopschecks_signature_and_iopscheck_checks_openssh_s() {
    let env = common::Env::new();
    history(&env, "node7", &[16.4, 16.5]);
    let dir = env.tmp.path();
    let k = dir.join("k");
    let s = |p: &Path| p.to_str().unwrap().to_string();
    let out = ssh_keygen(
        &[
            "-q",
            "-t",
            "ed25519",
            "-N",
            "",
            "-C",
            "vendor",
            "-f",
            &s(&k),
        ],
        None,
    );
    assert!(out.status.success(), "{out:?}");
    let k_pub = dir.join("k.pub");

    // iopscheck signs; ssh-keygen -Y verify accepts it, and refuses another manifest
    let signed = bundle(&env, "signed.tar.gz", &[Path::new("--sign"), &k]);
    let m = read(&signed);
    let sig = dir.join("manifest.json.sig");
    std::fs::write(&sig, member_of(&m, "/manifest.json.sig").unwrap()).unwrap();
    let allowed = dir.join("allowed_signers");
    std::fs::write(
        &allowed,
        format!("vendor {}", std::fs::read_to_string(&k_pub).unwrap()),
    )
    .unwrap();
    let check = |manifest: &[u8]| {
        ssh_keygen(
            &[
                "-Y",
                "verify",
                "-f",
                &s(&allowed),
                "-I",
                "vendor",
                "-n",
                "iopscheck-bundle",
                "-s",
                &s(&sig),
            ],
            Some(manifest),
        )
    };
    let manifest = member_of(&m, "/manifest.json").unwrap().clone();
    let out = check(&manifest);
    assert!(out.status.success(), "ssh-keygen -Y verify: {out:?}");
    let mut edited = manifest.clone();
    edited.extend_from_slice(b" ");
    assert!(
        !check(&edited).status.success(),
        "an edited manifest is refused"
    );

    // ssh-keygen -Y sign signs an unsigned bundle's manifest; iopscheck verify --key accepts it
    let plain = bundle(&env, "plain.tar.gz", &[]);
    let mut m = read(&plain);
    let dir = dir.join("openssh");
    std::fs::create_dir(&dir).unwrap();
    let mf = dir.join("manifest.json");
    std::fs::write(&mf, member_of(&m, "/manifest.json").unwrap()).unwrap();
    let out = ssh_keygen(
        &[
            "-Y",
            "sign",
            "-f",
            &s(&k),
            "-n",
            "iopscheck-bundle",
            &s(&mf),
        ],
        None,
    );
    assert!(out.status.success(), "ssh-keygen -Y sign: {out:?}");
    let dirname = m[0].0.split('/').next().unwrap().to_string();
    m.push((
        format!("{dirname}/manifest.json.sig"),
        std::fs::read(dir.join("manifest.json.sig")).unwrap(),
    ));
    let p = dir.join("openssh-signed.tar.gz");
    write(&p, &m);
    let (code, text) = verify_with(&env, &p, &[Path::new("--key"), &k_pub]);
    assert_eq!(code, Some(0), "{text}");
    assert!(text.contains("signed by SHA256:"), "{text}");
}

#[test]
#[cfg_attr(not(have_ssh_keygen), ignore = "needs ssh-keygen (openssh-client)")]
fn an_encrypted_or_non_ed25519_key_is_refused_naming_the_flag() {
    let env = common::Env::new();
    history(&env, "node7", &[16.4]);
    let dir = env.tmp.path();
    for (name, args, says) in [
        (
            "enc",
            vec!["-t", "ed25519", "-N", "a passphrase"],
            "encrypted",
        ),
        ("ec", vec!["-t", "ecdsa", "-N", ""], "Ed25519 keys only"),
    ] {
        let k = dir.join(name);
        let mut a = vec!["-q"];
        a.extend(args);
        a.extend(["-f", k.to_str().unwrap()]);
        let out = ssh_keygen(&a, None);
        assert!(out.status.success(), "{out:?}");
        let dest = dir.join(format!("{name}.tar.gz"));
        let out = env
            .cmd()
            .args(["bundle", "--host", "node7", "--sign"])
            .arg(&k)
            .arg("-o")
            .arg(&dest)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{name}: {err}");
        assert!(
            err.contains("--sign") && err.contains(says),
            "{name}: {err}"
        );
        assert!(!dest.exists(), "{name}: nothing written");
        if name == "ec" {
            let (code, text) = verify_with(
                &env,
                &env.history,
                &[Path::new("--key"), &dir.join("ec.pub")],
            );
            assert_eq!(code, Some(2), "{text}");
            assert!(text.contains("--key") && text.contains("Ed25519"), "{text}");
        }
    }
}

#[test]
fn a_bundle_of_one_host_checks_its_links_across_the_other_hosts_lines_left_out() {
    let env = common::Env::new();
    // node7's records among node9's: the bundle keeps node7's, and its manifest says what
    // was left out between them
    let hosts = [
        "node7", "node9", "node7", "node9", "node9", "node9", "node7",
    ];
    for (i, h) in hosts.iter().enumerate() {
        let r = &records(h, &[16.0 + i as f64 / 10.0])[0];
        iopscheck::testing::history::append(&env.history, std::slice::from_ref(r)).unwrap();
    }
    let good = bundle(&env, "good.tar.gz", &[]);
    let (code, text) = verify(&env, &good);
    assert_eq!(code, Some(0), "{text}");
    assert!(text.contains("3 history lines"), "{text}");
    let original = std::fs::read(&env.history).unwrap();

    // the history altered before the bundle was made: the manifest matches what it holds,
    // and the chain says what was altered, by the bundle's line
    type Tamper = Box<dyn Fn(&mut Vec<Vec<u8>>)>;
    let cases: Vec<(&str, Tamper, &str)> = vec![
        (
            "node7's second record edited (a node9 line after it vouched for it)",
            Box::new(|ls| {
                let l = String::from_utf8(ls[2].clone()).unwrap();
                assert!(l.contains("16.2"), "{l}");
                ls[2] = l.replacen("16.2", "61.2", 1).into_bytes();
            }),
            "line 2 edited, or lines after it deleted, before the bundle was made",
        ),
        (
            "two of node9's lines moved",
            Box::new(|ls| ls.swap(3, 4)),
            "the 3 lines left out of the bundle before line 3 were altered",
        ),
    ];
    for (how, tamper, says) in cases {
        let mut ls = lines(&original);
        tamper(&mut ls);
        std::fs::write(&env.history, ls.concat()).unwrap();
        let name = format!("{}.tar.gz", how.len());
        let b = bundle(&env, &name, &[]);
        let (code, text) = verify(&env, &b);
        assert_eq!(code, Some(1), "{how}: {text}");
        assert!(text.contains(says), "{how}: `{says}` in {text}");
    }
}

/// `cmd`'s output; a command still running after `limit` (a read that blocks for ever) is
/// killed and the test fails.
fn output_within(
    mut cmd: std::process::Command,
    limit: std::time::Duration,
) -> std::process::Output {
    use std::process::Stdio;
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let t = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() {
        if t.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{cmd:?} still running after {limit:?}: it blocked reading the key");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

/// `bundle --sign` and `verify --key` read the key whole, unbounded: a FIFO hung them, /dev/zero
/// ate all memory. A key that is not a regular file, or larger than any OpenSSH key, is refused
/// at once, exit 2, naming the flag; nothing is written.
#[test]
fn a_key_that_is_a_fifo_a_device_or_too_large_is_refused_at_once_naming_the_flag() {
    let env = common::Env::new();
    history(&env, "node7", &[16.4]);
    let dir = env.tmp.path();
    let fifo = dir.join("key.fifo");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    let big = dir.join("big.key");
    std::fs::write(&big, "A".repeat(100 << 10)).unwrap();
    for (key, says) in [
        (fifo.as_path(), "is a named pipe (FIFO)"),
        (Path::new("/dev/zero"), "is a character device"),
        (big.as_path(), "larger than any OpenSSH key"),
    ] {
        let dest = dir.join("signed.tar.gz");
        let mut c = std::process::Command::new(assert_cmd::cargo::cargo_bin!("iopscheck"));
        c.args(["bundle", "--host", "node7", "--sign"])
            .arg(key)
            .arg("-o")
            .arg(&dest)
            .env("IOPSCHECK_HISTORY", &env.history);
        let out = output_within(c, std::time::Duration::from_secs(30));
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "--sign {key:?}: {err}");
        assert!(err.contains("--sign") && err.contains(says), "{err}");
        assert!(!dest.exists(), "nothing written");

        let mut c = std::process::Command::new(assert_cmd::cargo::cargo_bin!("iopscheck"));
        c.args(["verify", "--key"]).arg(key).arg(&env.history);
        let out = output_within(c, std::time::Duration::from_secs(30));
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "--key {key:?}: {err}");
        assert!(err.contains("--key") && err.contains(says), "{err}");
    }
}

/// `verify` read the first gzip member only and passed over links: a bundle with a second
/// member carrying another history.jsonl, bytes appended, or a link named history.jsonl,
/// was VERIFIED (signed) while `tar xzf` extracted the forgery. Each is ALTERED now, and
/// `report --history` refuses it.
#[test]
fn what_follows_a_bundles_archive_or_a_link_in_it_is_never_verified() {
    let env = common::Env::new();
    history(&env, "node7", &[16.4, 16.5]);
    let (private, public) = key(&env, "k", 7);
    let good = bundle(&env, "good.tar.gz", &[Path::new("--sign"), &private]);
    let members = read(&good);
    let bytes = std::fs::read(&good).unwrap();
    let history_name = members
        .iter()
        .find(|(n, _)| n.ends_with("/history.jsonl"))
        .unwrap()
        .0
        .clone();
    let dir = env.tmp.path();

    // A second gzip member: a tar whose history.jsonl is forged.
    let second = dir.join("second.tar.gz");
    let forged = dir.join("forged-part.tar.gz");
    write(
        &forged,
        &vec![(history_name.clone(), b"{\"forged\":true}\n".to_vec())],
    );
    let mut b = bytes.clone();
    b.extend(std::fs::read(&forged).unwrap());
    std::fs::write(&second, b).unwrap();
    // Bytes appended after the gzip stream.
    let trail = dir.join("trail.tar.gz");
    let mut b = bytes.clone();
    b.extend((0..4096u32).map(|i| (i * 31 + 7) as u8));
    std::fs::write(&trail, b).unwrap();
    // A symbolic link named history.jsonl after the real one.
    let linked = dir.join("linked.tar.gz");
    {
        let f = std::fs::File::create(&linked).unwrap();
        let gz = flate2::write::GzEncoder::new(f, flate2::Compression::fast());
        let mut tar = tar::Builder::new(gz);
        for (name, data) in &members {
            let mut h = tar::Header::new_gnu();
            h.set_entry_type(tar::EntryType::Regular);
            h.set_mode(0o644);
            h.set_size(data.len() as u64);
            tar.append_data(&mut h, name, data.as_slice()).unwrap();
        }
        let mut h = tar::Header::new_gnu();
        h.set_entry_type(tar::EntryType::Symlink);
        h.set_size(0);
        tar.append_link(&mut h, &history_name, "report.json")
            .unwrap();
        tar.into_inner().unwrap().finish().unwrap();
    }
    let (code, text) = verify_with(&env, &good, &[Path::new("--key"), &public]);
    assert_eq!(code, Some(0), "the untouched bundle: {text}");
    for (b, says) in [
        (&second, "follows the archive's end"),
        (&trail, ""),
        (&linked, "is a symbolic link"),
    ] {
        let (code, text) = verify_with(&env, b, &[Path::new("--key"), &public]);
        assert_eq!(code, Some(1), "{b:?}: {text}");
        assert!(
            text.starts_with("ALTERED") && text.contains(says),
            "{b:?}: {text}"
        );
        let out = env
            .cmd()
            .args(["report", "--format", "summary", "--history"])
            .arg(b)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "report {b:?}: {err}");
        assert!(err.contains("not an iopscheck bundle"), "{err}");
    }
}
