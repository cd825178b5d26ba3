//! `iopscheck run`, end to end: the real binary doing real I/O on small files in temp dirs.

mod common;

use common::{Env, skip};
use predicates::prelude::*;
use serde_json::Value;

fn json_of(out: &[u8]) -> Value {
    serde_json::from_slice(out).expect("stdout is one JSON object")
}

/// The figures of one run are consistent with each other, as fio's would be.
fn assert_consistent(run: &Value, runtime_s: f64) {
    let m = &run["metrics"];
    let iops = m["write_iops"].as_f64().unwrap();
    let bw = m["write_bw_bytes"].as_f64().unwrap();
    let ios = m["write_ios"].as_f64().unwrap();
    let runtime = m["write_runtime_ms"].as_f64().unwrap();
    assert!(iops > 0.0, "{m}");
    // bw = bytes × 1000 / runtime (integer), iops = ios × 1000 / runtime: bw ≈ iops × 4096
    assert!(
        (bw - iops * 4096.0).abs() <= 4096.0,
        "bw {bw} vs iops {iops} × 4096"
    );
    assert!((iops - ios * 1000.0 / runtime).abs() < 1e-6 * iops.max(1.0));
    assert!(
        runtime >= runtime_s * 1000.0,
        "runtime {runtime} ms < requested"
    );
    let mb_s = m["write_bw_mb_s"].as_f64().unwrap();
    assert!((mb_s - bw / 1e6).abs() < 1e-9);
    let formula = m["write_iops_formula"].as_f64().unwrap();
    assert!((formula - mb_s / 4.0 * 1024.0).abs() < 1e-6);
    assert!(m["end_fsync_ms"].as_f64().is_some(), "{m}");
    for p in ["p50", "p90", "p99", "p99_9", "max"] {
        assert!(
            m[format!("write_clat_{p}_us")].as_f64().is_some(),
            "no clat {p}: {m}"
        );
    }
    assert!(m["write_clat_p50_us"].as_f64() <= m["write_clat_p99_us"].as_f64());
    assert!(m["cpu_usr_pct"].as_f64().is_some() && m["cpu_sys_pct"].as_f64().is_some());
}

fn run_backend(engine: &str) -> Option<Value> {
    let env = Env::new();
    let before = env.dir_listing();
    let out = env
        .small_run(engine)
        .args(["--format", "json"])
        .output()
        .unwrap();
    if engine == "io_uring" && out.status.code() == Some(2) {
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("--engine io_uring"), "{err}");
        skip(&format!("io_uring refused here: {err}"));
        return None;
    }
    // a quick look is never a pass: inconclusive (3), or a fail (1) on a slow disk
    assert!(
        matches!(out.status.code(), Some(1) | Some(3)),
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let j = json_of(&out.stdout);
    assert_eq!(j["runs"].as_array().unwrap().len(), 1);
    let run = &j["runs"][0];
    assert_eq!(run["engine"], engine);
    assert_eq!(run["source"], "native");
    assert_consistent(run, 1.0);
    assert_eq!(env.dir_listing(), before, "the directory is left as it was");
    assert_eq!(env.history_lines().len(), 1);
    Some(j)
}

#[test]
fn posixaio_completes_a_run_with_consistent_figures() {
    run_backend("posixaio");
}

#[test]
fn psync_completes_a_run_with_consistent_figures() {
    run_backend("psync");
}

#[test]
fn sync_completes_a_run_with_consistent_figures() {
    run_backend("sync");
}

/// etcd's published test names fio's `sync` engine (lseek, then write): `--engine auto` runs
/// that engine, so a quick look is judged on its figures, and nothing in the verdict is about
/// the engine. Before, auto ran psync and every run was "ioengine psync instead of sync":
/// inconclusive whatever the disk did.
#[test]
fn the_etcd_policies_run_their_own_engine_and_reach_a_verdict_on_it() {
    for policy in ["etcd", "openshift-etcd", "gravity-etcd"] {
        let env = Env::new();
        let out = env
            .cmd()
            .args(["run", "--policy", policy, "--dir"])
            .arg(&env.dir)
            .args(["--size", "64k", "--runs", "1", "--format", "json"])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        let j = json_of(&out.stdout);
        assert_eq!(j["runs"][0]["engine"], "sync", "{policy}: {err}");
        let deviations = j["deviations"].as_array().unwrap();
        // the smaller file is the only difference, and it only flatters: a miss is a fail,
        // a pass is inconclusive, never "says nothing about the policy's test"
        let fields: Vec<&str> = deviations
            .iter()
            .map(|d| d["field"].as_str().unwrap())
            .collect();
        assert_eq!(fields, ["size"], "{policy}: {deviations:?}");
        assert_eq!(deviations[0]["effect"], "flatters", "{policy}");
        let reason = j["reason"].as_str().unwrap();
        assert!(!reason.contains("ioengine"), "{policy}: {reason}");
        match j["verdict"].as_str().unwrap() {
            "fail" => assert_eq!(out.status.code(), Some(1), "{policy}: {reason}"),
            "inconclusive" => {
                assert_eq!(out.status.code(), Some(3), "{policy}: {reason}");
                assert!(
                    reason.starts_with("passed only on a test that flatters the disk"),
                    "{policy}: {reason}"
                );
            }
            v => panic!("{policy}: a quick look gave {v}: {reason}"),
        }
    }
}

#[test]
fn io_uring_completes_a_run_or_skips_with_the_reason() {
    run_backend("io_uring");
}

#[test]
fn libaio_completes_a_run_with_consistent_figures() {
    run_backend("libaio");
}

#[test]
fn two_runs_print_the_table_and_verdict_and_add_two_valid_records() {
    let env = Env::new();
    std::fs::write(env.dir.join("existing.dat"), b"keep me").unwrap();
    let before = env.dir_listing();
    let out = env
        .cmd()
        .args(["run", "--dir"])
        .arg(&env.dir)
        .args(["--size", "64m", "--runtime", "2", "--runs", "2"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        matches!(out.status.code(), Some(1) | Some(3)),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("write_iops_formula"), "{stdout}");
    assert!(stdout.contains("threshold"), "{stdout}");
    assert!(stdout.contains("verdict: "), "{stdout}");
    // the small test is flagged as not the policy's
    assert!(stdout.contains("64 MiB instead of 4 GiB"), "{stdout}");
    // quick looks are no evidence: the history counts none of them
    assert!(
        stdout.contains("history: 0 of 6 runs over 0 of 2 days"),
        "{stdout}"
    );
    assert_eq!(env.dir_listing(), before);
    assert_eq!(
        std::fs::read(env.dir.join("existing.dat")).unwrap(),
        b"keep me"
    );

    let lines = env.history_lines();
    assert_eq!(lines.len(), 2);
    for r in &lines {
        for key in [
            "schema_version",
            "timestamp",
            "host",
            "source",
            "engine",
            "job",
            "metrics",
            "target",
            "tool_version",
            "policy",
        ] {
            assert!(r.get(key).is_some(), "record lacks {key}: {r}");
        }
        chrono::DateTime::parse_from_rfc3339(r["timestamp"].as_str().unwrap()).unwrap();
        assert_eq!(r["policy"], "swimlane");
        assert_eq!(r["overrides"]["size"], "64m");
        assert_eq!(r["job"]["size"], 64 << 20);
        assert!(r["target"]["filesystem"].is_string());
        assert_consistent(r, 2.0);
    }
}

#[test]
fn json_output_carries_the_contract_keys() {
    let env = Env::new();
    let out = env
        .small_run("psync")
        .args(["--format", "json", "--no-history"])
        .output()
        .unwrap();
    let j = json_of(&out.stdout);
    for key in [
        "schema_version",
        "tool",
        "policy",
        "verdict",
        "runs",
        "summary",
        "rules",
        "warnings",
    ] {
        assert!(j.get(key).is_some(), "no {key}");
    }
    assert_eq!(j["tool"]["name"], "iopscheck");
    let s = &j["summary"]["metrics"]["write_iops_formula"];
    for key in [
        "mean",
        "median",
        "min",
        "max",
        "stdev",
        "cv",
        "ci95_low",
        "ci95_high",
    ] {
        assert!(s.get(key).is_some(), "summary lacks {key}");
    }
    let rule = &j["rules"][0];
    for key in ["metric", "op", "threshold", "level", "value", "passed"] {
        assert!(rule.get(key).is_some(), "rule lacks {key}");
    }
    assert_eq!(rule["metric"], "write_iops_formula");
    assert_eq!(rule["op"], ">=");
    assert!(!env.history.exists(), "--no-history writes nothing");
}

#[test]
fn an_unreachable_threshold_fails_with_exit_1() {
    let env = Env::new();
    let p = env.swimlane_policy("impossible.yaml", |y| {
        y.replacen("threshold: 3000", "threshold: 1000000000000", 1)
    });
    // posixaio, the policy's engine: the quick look only flatters, and a fail stays a fail
    env.small_run("posixaio")
        .arg("--policy")
        .arg(&p)
        .assert()
        .code(1)
        .stdout(predicate::str::contains("FAIL"))
        .stdout(predicate::str::contains("failed even on a"));
    assert_eq!(
        env.history_lines().len(),
        1,
        "a failing run is still evidence"
    );
}

#[test]
fn a_missing_directory_is_exit_2_with_nothing_written() {
    let env = Env::new();
    env.cmd()
        .args(["run", "--dir"])
        .arg(env.tmp.path().join("nope"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("no such directory"));
    assert!(env.history_lines().is_empty());
}

#[test]
fn too_little_free_space_is_exit_2_before_anything_is_written() {
    let env = Env::new();
    env.cmd()
        .args(["run", "--dir"])
        .arg(&env.dir)
        .args(["--size", "900t", "--runtime", "1", "--runs", "1"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("not enough free space"));
    assert!(env.dir_listing().is_empty());
    assert!(env.history_lines().is_empty());
}

#[test]
fn bad_flags_name_the_flag_and_exit_2() {
    let env = Env::new();
    for (args, flag) in [
        (vec!["--size", "0"], "--size"),
        (vec!["--size", "-1"], "--size"),
        (vec!["--size", "abc"], "--size"),
        (vec!["--size", "2k"], "--size"),
        (vec!["--runtime", "0"], "--runtime"),
        (vec!["--runtime", "soon"], "--runtime"),
        (vec!["--runs", "0"], "--runs"),
        (vec!["--runs", "many"], "--runs"),
        (vec!["--interval", "x"], "--interval"),
        (vec!["--export", "json"], "--export"),
        (vec!["--export", "pdf=x.pdf"], "--export"),
    ] {
        env.cmd()
            .args(["run", "--dir"])
            .arg(&env.dir)
            .args(&args)
            .assert()
            .code(2)
            .stderr(predicate::str::contains(flag));
    }
    assert!(env.dir_listing().is_empty());
    assert!(env.history_lines().is_empty());
}

#[test]
fn a_second_run_on_the_host_refuses_while_one_holds_the_lock() {
    let env = Env::new();
    // A run in the middle of its test holds the lock (tests/host_safety.rs has the lock held
    // by other programs and by what an interrupted run leaves).
    let mut first = common::default_signals(std::process::Command::new(
        assert_cmd::cargo::cargo_bin!("iopscheck"),
    ))
    .args(["run", "--no-history", "--dir"])
    .arg(&env.dir)
    .args([
        "--size",
        "64m",
        "--runtime",
        "60",
        "--runs",
        "1",
        "--engine",
        "psync",
    ])
    .env("IOPSCHECK_LOCK_FILE", env.tmp.path().join("run.lock"))
    .stdout(std::process::Stdio::null())
    .stderr(std::process::Stdio::null())
    .spawn()
    .unwrap();
    let t = std::time::Instant::now();
    while !common::listing(&env.dir)
        .iter()
        .any(|n| n.starts_with("iopscheck-testfile."))
    {
        assert!(first.try_wait().unwrap().is_none(), "the first run ended");
        assert!(t.elapsed() < std::time::Duration::from_secs(60));
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    env.small_run("psync")
        .assert()
        .code(2)
        .stderr(predicate::str::contains(format!(
            "another iopscheck run is testing this host right now (pid {}",
            first.id()
        )));
    // SAFETY: kill(2) on the run this test started.
    unsafe { libc::kill(first.id() as i32, libc::SIGINT) };
    assert_eq!(first.wait().unwrap().code(), Some(130));
    assert!(env.history_lines().is_empty());
}

#[test]
fn a_file_instead_of_a_directory_and_a_device_are_refused() {
    let env = Env::new();
    let file = env.tmp.path().join("plain");
    std::fs::write(&file, b"data").unwrap();
    env.cmd()
        .args(["run", "--dir"])
        .arg(&file)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("not a directory"));
    assert_eq!(std::fs::read(&file).unwrap(), b"data");
    env.cmd()
        .args(["run", "--dir", "/dev/null"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("device"));
}

#[test]
#[cfg_attr(
    have_root,
    ignore = "root ignores directory permissions; the read-only filesystem case is in tests/faults.rs"
)]
fn a_read_only_directory_is_refused_for_non_root_users() {
    use std::os::unix::fs::PermissionsExt;
    let env = Env::new();
    std::fs::set_permissions(&env.dir, std::fs::Permissions::from_mode(0o555)).unwrap();
    env.small_run("psync")
        .assert()
        .code(2)
        .stderr(predicate::str::contains("permission denied"));
}

/// Swimlane's policy with a threshold every disk meets: whether a run passes then depends on
/// its test alone, not on this machine's speed.
fn easy_policy(env: &Env) -> std::path::PathBuf {
    env.swimlane_policy("easy.yaml", |y| {
        y.replacen("threshold: 3000", "threshold: 1", 1)
    })
}

#[test]
fn a_quick_look_that_passes_is_inconclusive_naming_what_flattered_it() {
    let env = Env::new();
    let p = easy_policy(&env);
    let out = env
        .small_run("posixaio")
        .arg("--policy")
        .arg(&p)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(3), "{stdout}");
    // the verdict line is word-wrapped: compare its words
    let flat = stdout.split_whitespace().collect::<Vec<_>>().join(" ");
    let verdict = &flat[flat.find("verdict: ").expect("a verdict line")..];
    assert!(
        verdict.starts_with("verdict: INCONCLUSIVE for this sitting of ")
            && verdict.contains(" — passed only on a test that flatters the disk"),
        "{verdict}"
    );
    assert!(
        verdict.contains("size 32 MiB instead of 4 GiB"),
        "{verdict}"
    );
    assert!(verdict.contains("runtime 1s instead of 1m"), "{verdict}");
    // the figures are shown all the same, not judged: a pass on this test is no pass
    assert!(
        stdout.contains("– decides  write_iops_formula  mean "),
        "{stdout}"
    );
    assert!(!stdout.contains('✓'), "{stdout}");
    // and the run is recorded, but a report does not count it
    assert_eq!(env.history_lines().len(), 1);
    env.cmd()
        .args(["report", "--policy"])
        .arg(&p)
        .assert()
        .code(3)
        .stdout(predicate::str::contains(
            "1 run not counted: size 32 MiB instead of 4 GiB; runtime 1s instead of 1m",
        ));
}

#[test]
#[cfg_attr(not(have_root), ignore = "needs root (mounting a tmpfs)")]
fn a_pass_on_tmpfs_is_inconclusive() {
    let env = Env::new();
    let at = env.tmp.path().join("ram");
    std::fs::create_dir(&at).unwrap();
    let ok = std::process::Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=128m", "tmpfs"])
        .arg(&at)
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        return skip("mount -t tmpfs failed");
    }
    // the policy's own size and runtime, small: only the target differs from its test
    let yaml = std::fs::read_to_string(easy_policy(&env))
        .unwrap()
        .replace("size: 4g", "size: 16m")
        .replace("runtime: 60s", "runtime: 1s");
    let p = env.tmp.path().join("small.yaml");
    std::fs::write(&p, yaml).unwrap();
    let out = env
        .cmd()
        .args(["run", "--runs", "1", "--engine", "posixaio", "--policy"])
        .arg(&p)
        .arg("--dir")
        .arg(&at)
        .output()
        .unwrap();
    let listing = common::listing(&at);
    let _ = std::process::Command::new("umount").arg(&at).status();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stdout}{stderr}");
    // the verdict line is word-wrapped: compare its words
    let flat = stdout.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        flat.contains("verdict: INCONCLUSIVE for this sitting of ")
            && flat.contains(" — passed only on a test that flatters the disk (target tmpfs (in RAM) instead of a disk)"),
        "{stdout}"
    );
    assert!(listing.is_empty(), "{listing:?}");
}

#[test]
#[cfg_attr(
    not(all(have_root, have_fuse)),
    ignore = "needs root and FUSE (libfuse3-dev)"
)]
fn a_disk_whose_burst_credits_run_out_is_told_after_the_run() {
    let env = Env::new();
    // Direct 4k random writes, 64 in flight, on a disk that serves 1,000 I/Os a second until
    // its 2,250 credits run out after 3 s, then 250.
    let policy = env.swimlane_policy("direct.yaml", |p| {
        p.replace("  end_fsync: true", "  end_fsync: true\n  direct: true")
            .replace("ioengine: posixaio", "ioengine: libaio")
            .replace("iodepth: 1", "iodepth: 64")
            .replace("engines: [posixaio, io_uring]", "engines: [libaio]")
    });
    let bucket = common::burst::Bucket {
        burst: 1000,
        baseline: 250,
        size: 2250,
    };
    for tries in 1..=3 {
        let disk = common::burst::BurstDisk::up(bucket, None);
        let out = env
            .cmd()
            .args([
                "run",
                "--no-history",
                "--size",
                "32m",
                "--runtime",
                "6s",
                "--runs",
                "1",
                "--verbose",
            ])
            .arg("--policy")
            .arg(&policy)
            .arg("--dir")
            .arg(&disk.mount)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        // A disk that itself stalled (its pacer starved on a loaded machine) is no burst disk:
        // run again, then skipped with the reason, never passed.
        if let Err(why) = disk.kept_busy() {
            if tries == 3 {
                return skip(&format!(
                    "the emulated disk stalled in 3 runs, the last: {why}; the machine is too loaded to test on it"
                ));
            }
            eprintln!("the emulated disk stalled ({why}); again");
            continue;
        }
        let text = err.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(
            text.contains(&format!("the disk ({}) was", disk.disk)),
            "{err}"
        );
        assert!(
            text.contains("burst credits running out look like this (a bucket of about"),
            "{err}"
        );
        return;
    }
}

#[test]
fn a_run_on_a_steady_disk_is_told_what_limited_it_and_not_of_burst_credits() {
    // One second: too short for a step (2 s either side), whatever else uses the disk.
    let env = Env::new();
    // What limited the disk is one of the run's internals: said with --verbose.
    let out = env.small_run("psync").arg("--verbose").output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    let Some(disk) = iopscheck::testing::measure::disk::disks_under(&env.dir)
        .into_iter()
        .next()
    else {
        skip("the temp dir is not on a block device");
        return;
    };
    let text = err.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(text.contains(&format!("the disk ({disk}) was")), "{err}");
    assert!(!err.contains("burst credits running out"), "{err}");
}

/// Swimlane's job at 32 MiB for 6 s with a threshold of 450 IOPS, direct with 64 libaio
/// I/Os in flight or as the article's (buffered posixaio): the policy's own test, so that the
/// verdict on the emulated disk can pass.
fn small_burst_policy(env: &Env, direct: bool) -> std::path::PathBuf {
    env.swimlane_policy(
        if direct {
            "direct.yaml"
        } else {
            "buffered.yaml"
        },
        |p| {
            let p = p
                .replace("size: 4g", "size: 32m")
                .replace("runtime: 60s", "runtime: 6s")
                .replace("threshold: 3000", "threshold: 450")
                .replace("threshold: 11.7", "threshold: 1.8");
            if direct {
                p.replace("  end_fsync: true", "  end_fsync: true\n  direct: true")
                    .replace("ioengine: posixaio", "ioengine: libaio")
                    .replace("iodepth: 1", "iodepth: 64")
                    .replace("engines: [posixaio, io_uring]", "engines: [libaio]")
            } else {
                p
            }
        },
    )
}

/// One run of `policy` on a fresh emulated disk with `bucket` (and `dirty_max`), as JSON,
/// with its exit code and stderr; run again, up to three times, where the emulated disk
/// itself stalled (`BurstDisk::kept_busy`) when the bucket was to run dry: None, skipped with
/// the reason, where it stalled every time (a machine too loaded to emulate a disk on).
fn run_on_burst_disk(
    env: &Env,
    policy: &std::path::Path,
    bucket: common::burst::Bucket,
    dirty_max: Option<u64>,
    runs_dry: bool,
) -> Option<(common::burst::BurstDisk, Option<i32>, Value, String)> {
    let mut tries = 0;
    loop {
        tries += 1;
        let disk = common::burst::BurstDisk::up(bucket, dirty_max);
        let out = env
            .cmd()
            .args(["run", "--no-history", "--runs", "1", "--format", "json"])
            .args(
                [
                    "table",
                    "csv",
                    "junit",
                    "html",
                    "prometheus",
                    "markdown",
                    "summary",
                ]
                .iter()
                .flat_map(|f| {
                    [
                        "--export".to_string(),
                        format!("{f}={}", env.tmp.path().join(f).display()),
                    ]
                }),
            )
            .arg("--policy")
            .arg(policy)
            .arg("--dir")
            .arg(&disk.mount)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        if runs_dry && let Err(why) = disk.kept_busy() {
            if tries == 3 {
                skip(&format!(
                    "the emulated disk stalled in 3 runs, the last: {why}; the machine is too loaded to test on it"
                ));
                return None;
            }
            eprintln!("the emulated disk stalled ({why}); again");
            continue;
        }
        let j: Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{e}: {}{err}", String::from_utf8_lossy(&out.stdout)));
        return Some((disk, out.status.code(), j, err));
    }
}

#[test]
#[cfg_attr(
    not(all(have_root, have_fuse)),
    ignore = "needs root and FUSE (libfuse3-dev)"
)]
fn a_run_that_passes_only_on_burst_credits_fails_at_the_level_the_disk_sustained() {
    let env = Env::new();
    let policy = small_burst_policy(&env, true);
    // 1,000 I/Os a second until the 2,250 credits run out after 3 s, then 250: the run's
    // mean (about 625) meets 450, what the disk keeps up does not.
    let bucket = common::burst::Bucket {
        burst: 1000,
        baseline: 250,
        size: 2250,
    };
    let Some((disk, code, j, err)) = run_on_burst_disk(&env, &policy, bucket, None, true) else {
        return;
    };
    let rule = &j["rules"][0];
    assert_eq!(rule["metric"], "write_iops_formula");
    let mean = rule["value"].as_f64().unwrap();
    assert!(
        mean >= 450.0,
        "the mean must pass for this test: {rule}\n{err}"
    );
    assert_eq!(j["verdict"], "fail", "{}\n{err}", j["reason"]);
    assert_eq!(code, Some(1));
    let b = &j["bursts"][0];
    assert_eq!(b["run"], 1, "{j}");
    assert_eq!(b["series"], "device", "{b}");
    let dry = disk.seconds_to_dry().expect("the bucket ran dry");
    let step = b["step_s"].as_f64().unwrap();
    assert!(
        (step - dry).abs() <= 0.5,
        "step at {step} s, dry at {dry} s: {b}"
    );
    let base = bucket.baseline as f64;
    let kept = b["sustained_iops"].as_f64().unwrap();
    assert!((kept - base).abs() <= 0.1 * base, "{b}");
    let size = bucket.size as f64;
    let found = b["bucket_ios"].as_f64().unwrap();
    assert!((found - size).abs() <= 0.25 * size, "{b}");
    // The verdict says the sustained level, the step's time and the mean, in its words.
    let reason = j["reason"].as_str().unwrap();
    let short = |v: f64| format!("{:.0}", v);
    let words = format!(
        "sustained after burst credits ran out at {step:.1} s, missing ≥ 450; the run's mean of {} IOPS passes only on credits",
        short(mean)
    );
    assert!(reason.contains(&words), "{reason}");
    assert_eq!(rule["passed"], false, "{rule}");
    assert_eq!(rule["per_run"][0], false, "{rule}");
    // The sustained figure is the mean scaled to what the disk kept up: near the baseline.
    let figure: f64 = reason
        .split(" IOPS sustained")
        .next()
        .and_then(|s| s.rsplit(' ').next())
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("{reason}"));
    assert!((figure - base).abs() <= 0.15 * base, "{reason}");
    // Every format says it, and none marks the run's figure as meeting the rule.
    let read = |f: &str| std::fs::read_to_string(env.tmp.path().join(f)).unwrap();
    let flat = |t: String| t.split_whitespace().collect::<Vec<_>>().join(" ");
    for f in ["table", "csv", "junit", "markdown", "summary", "prometheus"] {
        let text = flat(read(f)).replace("\\_", "_");
        assert!(text.contains(&words), "{f}: {text}");
    }
    let html = read("html");
    assert!(flat(html.replace("&#39;", "'")).contains(&words), "{html}");
    assert!(!html.contains("result pass"), "{html}");
    let table = read("table");
    assert!(table.contains("✗ decides"), "{table}");
    assert!(!table.contains(" ✓"), "{table}");
    let csv = read("csv");
    assert!(csv.lines().nth(1).unwrap().contains(",fail,"), "{csv}");
}

#[test]
#[cfg_attr(
    not(all(have_root, have_fuse)),
    ignore = "needs root and FUSE (libfuse3-dev)"
)]
fn a_bucket_that_never_runs_dry_leaves_the_verdict_as_the_mean_gives_it() {
    let env = Env::new();
    let policy = small_burst_policy(&env, true);
    let bucket = common::burst::Bucket {
        burst: 1000,
        baseline: 250,
        size: 100_000,
    };
    let Some((disk, code, j, err)) = run_on_burst_disk(&env, &policy, bucket, None, false) else {
        return;
    };
    assert_eq!(disk.seconds_to_dry(), None);
    assert!(j.get("bursts").is_none(), "{j}\n{err}");
    assert_eq!(j["verdict"], "pass", "{}\n{err}", j["reason"]);
    assert_eq!(code, Some(0));
    assert!(!err.contains("burst credits running out"), "{err}");
}

#[test]
#[cfg_attr(
    not(all(have_root, have_fuse)),
    ignore = "needs root and FUSE (libfuse3-dev)"
)]
fn the_page_cache_filling_up_on_a_steady_disk_is_not_called_burst() {
    let env = Env::new();
    // The article's buffered job on a disk that never runs dry, its dirty pages capped at
    // 4 MiB: the writer runs ahead of the disk, then waits on it, and its own rate falls.
    let policy = small_burst_policy(&env, false);
    let bucket = common::burst::Bucket {
        burst: 1000,
        baseline: 250,
        size: 100_000,
    };
    let Some((_disk, code, j, err)) =
        run_on_burst_disk(&env, &policy, bucket, Some(4 << 20), false)
    else {
        return;
    };
    assert!(j.get("bursts").is_none(), "{j}\n{err}");
    assert!(!err.contains("burst credits running out"), "{err}");
    let rule = &j["rules"][0];
    assert_eq!(rule.get("fails_on"), None, "{rule}");
    // Whatever the figure, it is judged as the mean gives it.
    let mean = rule["value"].as_f64().unwrap();
    let want = if mean >= 450.0 { "pass" } else { "fail" };
    assert_eq!(j["verdict"], want, "{}\n{err}", j["reason"]);
    assert_eq!(code, Some(if mean >= 450.0 { 0 } else { 1 }));
}

#[test]
#[cfg_attr(
    not(all(have_root, have_fuse)),
    ignore = "needs root and FUSE (libfuse3-dev)"
)]
fn a_sustained_run_reaches_the_emulated_baseline_and_stops() {
    let env = Env::new();
    let policy = small_burst_policy(&env, true);
    // The credits run out after 3 s; then 10 s steady at 250 end the run, long before the
    // budget of 2 minutes.
    let bucket = common::burst::Bucket {
        burst: 1000,
        baseline: 250,
        size: 2250,
    };
    for tries in 1..=3 {
        // Each try's run alone in the history: a stalled try's run is not this one's.
        let _ = std::fs::remove_file(&env.history);
        let disk = common::burst::BurstDisk::up(bucket, None);
        let out = env
            .cmd()
            .args(["run", "--sustained", "--sustained-budget", "2m"])
            .args(["--format", "json", "--policy"])
            .arg(&policy)
            .arg("--dir")
            .arg(&disk.mount)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        if let Err(why) = disk.kept_busy() {
            if tries == 3 {
                return skip(&format!(
                    "the emulated disk stalled in 3 runs, the last: {why}; the machine is too loaded to test on it"
                ));
            }
            eprintln!("the emulated disk stalled ({why}); again");
            continue;
        }
        let j: Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stdout)));
        let flat = err.split_whitespace().collect::<Vec<_>>().join(" ");
        // Said before, during and after.
        assert!(
            flat.contains("sustained: one run of the policy's job until the disk"),
            "{err}"
        );
        assert!(flat.contains("held steady at"), "{err}");
        assert!(flat.contains("the run stopped after"), "{err}");
        // One run, stopped by the steady state, not by the budget.
        assert_eq!(j["runs"].as_array().unwrap().len(), 1);
        let ran_ms = j["runs"][0]["metrics"]["write_runtime_ms"]
            .as_f64()
            .unwrap();
        assert!(ran_ms < 120_000.0, "{ran_ms}");
        // The level it reached is the emulated baseline, and the verdict judges it.
        let b = &j["bursts"][0];
        let base = bucket.baseline as f64;
        let kept = b["sustained_iops"].as_f64().unwrap();
        assert!((kept - base).abs() <= 0.1 * base, "{b}\n{err}");
        assert_eq!(j["verdict"], "fail", "{}", j["reason"]);
        assert!(
            j["reason"].as_str().unwrap().contains("held steady at"),
            "{}",
            j["reason"]
        );
        // The record keeps how the run ended, the step and the disk's series in a few
        // figures; a report judges the run at the level the disk sustained, as the run did.
        let rec = &env.history_lines()[0];
        assert_eq!(rec["sustained"]["reached"], true, "{rec}");
        assert_eq!(rec["device"]["disk"], disk.disk.as_str(), "{rec}");
        let after = rec["burst"]["step"]["after"].as_f64().unwrap();
        assert!((after - base).abs() <= 0.1 * base, "{rec}");
        let out = env
            .cmd()
            .args(["report", "--format", "json", "--policy"])
            .arg(&policy)
            .output()
            .unwrap();
        let r = json_of(&out.stdout);
        let kept = r["bursts"][0]["sustained_iops"]
            .as_f64()
            .unwrap_or_default();
        assert!((kept - base).abs() <= 0.1 * base, "{r}");
        assert_eq!(r["rules"][0]["per_run"][0], false, "{}", r["rules"][0]);
        assert_ne!(r["verdict"], "pass");
        return;
    }
}

#[test]
fn a_policy_that_requires_the_sustained_level_cannot_pass_on_the_job_as_written() {
    let env = Env::new();
    let policy = env.swimlane_policy("sustained.yaml", |p| {
        p.replace("threshold: 3000", "threshold: 1")
            .replace("threshold: 11.7", "threshold: 0.001")
            + "\nsustained: required\n"
    });
    env.cmd()
        .args(["policy", "check"])
        .arg(&policy)
        .assert()
        .success();
    let out = env
        .small_run("psync")
        .args(["--no-history", "--format", "json", "--policy"])
        .arg(&policy)
        .output()
        .unwrap();
    let j = json_of(&out.stdout);
    // 1 IOPS is met by any disk, and --size and --runtime only flatter: the verdict would be
    // inconclusive anyway; the policy's requirement is what it names first when met.
    assert_ne!(j["verdict"], "pass", "{}", j["reason"]);
    // On the policy's own size and runtime the pass is withheld for the sustained level.
    let own = env.swimlane_policy("own.yaml", |p| {
        p.replace("threshold: 3000", "threshold: 1")
            .replace("threshold: 11.7", "threshold: 0.001")
            .replace("size: 4g", "size: 32m")
            .replace("runtime: 60s", "runtime: 1s")
            .replace("ioengine: posixaio", "ioengine: psync")
            .replace("engines: [posixaio, io_uring]", "engines: [psync]")
            + "\nsustained: required\n"
    });
    let out = env
        .cmd()
        .args([
            "run",
            "--runs",
            "1",
            "--no-history",
            "--format",
            "json",
            "--dir",
        ])
        .arg(&env.dir)
        .arg("--policy")
        .arg(&own)
        .output()
        .unwrap();
    let j = json_of(&out.stdout);
    assert_eq!(out.status.code(), Some(3), "{}", j["reason"]);
    assert_eq!(j["verdict"], "inconclusive");
    let reason = j["reason"].as_str().unwrap();
    assert!(
        reason.starts_with("the policy requires the level the disk sustains (sustained: required), which this run does not measure: run `iopscheck run --sustained`"),
        "{reason}"
    );
}

#[test]
fn policy_check_names_a_wrong_sustained_key() {
    let env = Env::new();
    let bad = env.swimlane_policy("bad.yaml", |p| p + "\nsustained: maybe\n");
    env.cmd()
        .args(["policy", "check"])
        .arg(&bad)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("sustained"))
        .stderr(predicate::str::contains("required"));
    // Only a throughput figure has a level the disk sustains.
    let latency = env.swimlane_policy("latency.yaml", |p| {
        p.replace("metric: write_iops_formula", "metric: write_clat_p99_us")
            .replace(
                "op: \">=\"\n    threshold: 3000\n    level: fail",
                "op: \"<=\"\n    threshold: 3000\n    level: fail",
            )
            + "\nsustained: required\n"
    });
    let text = std::fs::read_to_string(&latency).unwrap();
    assert!(
        text.contains("metric: write_clat_p99_us\n    op: \"<=\""),
        "{text}"
    );
    env.cmd()
        .args(["policy", "check"])
        .arg(&latency)
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "sustained: required needs a deciding rule on a throughput figure",
        ));
}

#[test]
fn sustained_flags_are_checked_before_anything_runs() {
    let env = Env::new();
    // A budget shorter than the policy's test.
    env.cmd()
        .args(["run", "--sustained", "--sustained-budget", "10s", "--dir"])
        .arg(&env.dir)
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "--sustained-budget: 10s is shorter than the policy's runtime",
        ));
    // A budget without --sustained, and --sustained with --runs.
    env.cmd()
        .args(["run", "--sustained-budget", "10m", "--dir"])
        .arg(&env.dir)
        .assert()
        .code(2);
    env.cmd()
        .args(["run", "--sustained", "--runs", "2", "--dir"])
        .arg(&env.dir)
        .assert()
        .code(2);
    assert!(common::listing(&env.dir).is_empty());
}
