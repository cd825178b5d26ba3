//! etcd's own prescribed fio command (policies/etcd.yaml), imported as fio wrote it: its JSON
//! lists no iodepth, numjobs or runtime (fio's defaults: one job, depth 1, ending at its size),
//! and its text shows the fdatasyncs in a sync section. A disk that misses etcd's fdatasync
//! p99 fails on it; a run its runtime cut before its size is not the test.

mod common;

use common::Env;

/// etcd's policy with the fixtures' 2 MiB file, judged on one run.
fn policy(env: &Env) -> std::path::PathBuf {
    let out = env.cmd().args(["policy", "show", "etcd"]).output().unwrap();
    let text = String::from_utf8(out.stdout)
        .unwrap()
        .replace("  size: 22m", "  size: 2m")
        .replace("min_runs: 6", "min_runs: 1")
        .replace("min_days: 2", "min_days: 1");
    let p = env.tmp.path().join("etcd-2m.yaml");
    std::fs::write(&p, text).unwrap();
    p
}

fn etcd(name: &str) -> String {
    format!("{}/tests/fixtures/etcd/{name}", env!("CARGO_MANIFEST_DIR"))
}

fn import(env: &Env, args: &[&str]) -> (Option<i32>, String) {
    let p = policy(env);
    let out = env
        .cmd()
        .arg("import")
        .arg("-p")
        .arg(&p)
        .args(args)
        .output()
        .unwrap();
    let all = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    // the table wraps its lines: words as one line
    let words = all.split_whitespace().collect::<Vec<_>>().join(" ");
    (out.status.code(), words)
}

#[test]
fn etcds_own_command_is_its_test_and_a_slow_fdatasync_fails() {
    let env = Env::new();
    let (code, out) = import(&env, &[&etcd("etcd.json")]);
    assert_eq!(code, Some(1), "{out}");
    assert!(out.contains("verdict: FAIL"), "{out}");
    assert!(out.contains("sync_p99_us is 28705"), "{out}");
    for wrong in ["iodepth not stated", "numjobs not stated", "(measured)"] {
        assert!(!out.contains(wrong), "{wrong}: {out}");
    }
    // every format says it
    let (code, out) = import(&env, &[&etcd("etcd.json"), "--format", "summary"]);
    assert_eq!(code, Some(1), "{out}");
    assert!(out.starts_with("FAIL "), "{out}");
}

#[test]
fn a_sync_section_in_the_text_is_not_fdatasync_0() {
    let env = Env::new();
    // The text shows syncs, not whether by fsync or fdatasync: unknown, never 0.
    let (code, out) = import(&env, &[&etcd("etcd.txt")]);
    assert_eq!(code, Some(3), "{out}");
    assert!(!out.contains("fdatasync 0"), "{out}");
    assert!(out.contains("fdatasync not stated in the output"), "{out}");
    assert!(
        !out.contains("(measured)"),
        "a run that ended at its size: {out}"
    );
    // With etcd's command pasted above it, the text is etcd's test: it fails.
    let text = std::fs::read_to_string(etcd("etcd.txt")).unwrap();
    let pasted = env.tmp.path().join("pasted.txt");
    std::fs::write(
        &pasted,
        format!(
            "$ fio --rw=write --ioengine=sync --fdatasync=1 --directory=/tmp/x3probe/ed --size=2m --bs=2300 --name=mytest\n{text}"
        ),
    )
    .unwrap();
    let (code, out) = import(&env, &[pasted.to_str().unwrap()]);
    assert_eq!(code, Some(1), "{out}");
    assert!(out.contains("verdict: FAIL"), "{out}");
}

#[test]
fn a_run_cut_before_its_size_is_not_the_test() {
    let env = Env::new();
    for f in ["cut.json", "cut.txt"] {
        let (code, out) = import(&env, &[&etcd(f)]);
        assert_eq!(code, Some(3), "{f}: {out}");
        assert!(
            out.contains("runtime 1.0 s (measured), ended after 1.3 MiB of its 64 MiB"),
            "{f}: {out}"
        );
    }
}
