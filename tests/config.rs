//! Every command's flags are decided before it does anything (src/config/): a bad value, or
//! two that do not go together, is refused with exit 2 and a message naming the flag, and
//! nothing is written: no output file, no bundle, no history line.

mod common;

use std::path::Path;

use chrono::{Duration, Local};
use common::Env;

/// Runs `args` in `env`, with the current directory its temp dir; its exit code and stderr.
fn refused(env: &Env, args: &[&str]) -> (Option<i32>, String) {
    let out = env
        .cmd()
        .current_dir(env.tmp.path())
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.stdout.is_empty(),
        "{args:?}: nothing on stdout: {}",
        String::from_utf8_lossy(&out.stdout)
    );
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into(),
    )
}

/// What the env's temp dir holds, but for the data directory.
fn left(env: &Env) -> Vec<String> {
    common::listing(env.tmp.path())
        .into_iter()
        .filter(|n| n != "data")
        .collect()
}

/// A file that starts as gzip does, which every command takes for a bundle.
fn gzip_file(env: &Env, name: &str) -> String {
    let p = env.tmp.path().join(name);
    std::fs::write(&p, [0x1f, 0x8b, 0x08, 0x00]).unwrap();
    p.display().to_string()
}

#[test]
fn a_bundle_given_to_import_is_read_alone_and_never_recorded() {
    let env = Env::new();
    let bundle = gzip_file(&env, "b.tar.gz");
    let fio = common::fixture("fio-3.33-io_uring-randwrite.json");
    let fio = fio.to_str().unwrap();
    let before = left(&env);
    let cases: [(&[&str], String); 3] = [
        (
            &["import", &bundle, fio, "-o", "r.json"],
            format!(
                "{bundle}: a bundle is read alone (it holds its own history, policy and host); give it as the only file"
            ),
        ),
        (
            &["import", "--record", "--host", "n1", &bundle],
            format!(
                "--record: {bundle} is a bundle, whose records are a history already; nothing was recorded"
            ),
        ),
        (
            &["import", "--assume-job", "swimlane", &bundle],
            format!("--assume-job: {bundle} is a bundle, whose records state their own job"),
        ),
    ];
    for (args, want) in cases {
        let (code, err) = refused(&env, args);
        assert_eq!(code, Some(2), "{args:?}: {err}");
        assert_eq!(
            err.trim_end(),
            format!("iopscheck: error: {want}"),
            "{args:?}"
        );
        assert_eq!(left(&env), before, "{args:?}: nothing written");
    }
}

#[test]
fn bad_hosts_are_refused_naming_their_flag_before_any_output_is_written() {
    let env = Env::new();
    let bad = "node\u{7}1";
    let cases: [(&[&str], &str); 4] = [
        (&["report", "--host", bad, "-o", "r.json"], "--host: "),
        (
            &["fleet", "--expect", bad, "-o", "f.json", "."],
            "--expect: ",
        ),
        (&["bundle", "--host", bad], "--host: "),
        (
            &["import", "--host", bad, "-o", "i.json", "x.json"],
            "--host: ",
        ),
    ];
    for (args, flag) in cases {
        let (code, err) = refused(&env, args);
        assert_eq!(code, Some(2), "{args:?}: {err}");
        assert!(
            err.starts_with(&format!("iopscheck: error: {flag}")) && err.contains("control"),
            "{args:?}: {err}"
        );
        assert_eq!(
            left(&env),
            Vec::<String>::new(),
            "{args:?}: nothing written"
        );
    }
}

#[test]
fn a_key_that_cannot_sign_is_refused_before_the_bundle_is_written() {
    let env = Env::new();
    let key = env.tmp.path().join("not-a-key");
    std::fs::write(&key, "hello\n").unwrap();
    let out = env.tmp.path().join("b.tar.gz");
    let (code, err) = refused(
        &env,
        &[
            "bundle",
            "--sign",
            key.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
        ],
    );
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.starts_with(&format!("iopscheck: error: --sign {}: ", key.display())),
        "{err}"
    );
    assert!(!out.exists(), "no bundle");
    assert_eq!(left(&env), ["not-a-key"], "nothing written");
}

#[test]
fn a_compared_side_of_two_directories_is_refused_naming_the_flags_that_choose() {
    let env = Env::new();
    let host = "n1";
    let mut records = Vec::new();
    for (i, dir) in ["/a", "/b", "/a", "/b"].iter().enumerate() {
        records.push(common::swimlane_record(
            host,
            dir,
            (Local::now() - Duration::hours(i as i64 + 1)).fixed_offset(),
            15.0,
        ));
    }
    iopscheck::testing::history::append(&env.history, &records).unwrap();
    let (code, err) = refused(&env, &["compare", "--host", host, "--vs-host", "n2"]);
    assert_eq!(code, Some(2), "{err}");
    assert_eq!(
        err.trim_end(),
        format!(
            "iopscheck: error: {host}: runs of 2 directories or engines (/a posixaio, /b posixaio): choose one with --dir/--vs-dir or --engine/--vs-engine"
        )
    );
    // chosen with --dir, it compares (the other side is empty: inconclusive, exit 3)
    let out = env
        .cmd()
        .args(["compare", "--host", host, "--vs-host", "n2", "--dir", "/a"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3), "{out:?}");
    assert!(Path::new(&env.history).exists());
}
