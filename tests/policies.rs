//! The policy library and fio's wider vocabulary: every built-in policy end to end, each rw
//! mode, direct I/O, numjobs and periodic syncs against fio on the same job, soft limits, and
//! the errors that guide a policy author.

mod common;

use std::path::PathBuf;
use std::sync::{RwLock, RwLockReadGuard};

use common::{Env, skip};
use predicates::prelude::*;
use serde_json::Value;

fn builtin_names(env: &Env) -> Vec<String> {
    // `policy list` prints a table; the first column of each row holds the name.
    let yaml_dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("policies");
    let mut names: Vec<String> = std::fs::read_dir(yaml_dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
        .collect();
    names.sort();
    let listed =
        String::from_utf8(env.cmd().args(["policy", "list"]).output().unwrap().stdout).unwrap();
    for n in &names {
        assert!(listed.contains(&format!(" {n} ")), "policy list lacks {n}");
    }
    names
}

/// The tests of this file that run I/O share the disk; the one that compares the two tools'
/// speed takes it alone, so that none of them is running beside it (a burst of their
/// writeback halved its runs at random when they did).
static DISK: RwLock<()> = RwLock::new(());

fn disk_shared() -> RwLockReadGuard<'static, ()> {
    DISK.read().unwrap_or_else(|e| e.into_inner())
}

#[test]
fn every_built_in_policy_checks_and_runs_end_to_end_in_every_format() {
    let _disk = disk_shared();
    let env = Env::new();
    for name in builtin_names(&env) {
        let yaml = env
            .cmd()
            .args(["policy", "show", &name])
            .output()
            .unwrap()
            .stdout;
        let file = env.tmp.path().join(format!("{name}.yaml"));
        std::fs::write(&file, &yaml).unwrap();
        env.cmd()
            .args(["policy", "check"])
            .arg(&file)
            .assert()
            .success()
            .stderr(predicate::str::contains("ok"));
        let text = String::from_utf8(yaml).unwrap();
        assert!(text.contains("url: "), "{name} names its source");
        assert!(
            text.contains("test: prescribed") || text.contains("test: assumed"),
            "{name} says whether the test is prescribed"
        );
        // A policy over raw devices runs on devices only (tests/devices.rs runs them).
        if text.contains("\ndevices:") {
            let out = env
                .cmd()
                .args(["run", "--policy", &name, "--dir"])
                .arg(&env.dir)
                .output()
                .unwrap();
            assert_eq!(out.status.code(), Some(2), "{name}");
            assert!(String::from_utf8_lossy(&out.stderr).contains("--device"));
            continue;
        }

        let exports: Vec<String> = ["csv", "markdown", "prometheus", "junit", "html"]
            .iter()
            .map(|f| {
                format!(
                    "{f}={}",
                    env.tmp.path().join(format!("{name}.{f}")).display()
                )
            })
            .collect();
        let mut cmd = env.cmd();
        cmd.args([
            "run",
            "--policy",
            &name,
            "--size",
            "8m",
            "--runtime",
            "1",
            "--runs",
            "1",
        ])
        .args(["--format", "json", "--dir"])
        .arg(&env.dir);
        for e in &exports {
            cmd.arg("--export").arg(e);
        }
        let out = cmd.output().unwrap();
        // a quick look: a fail, or inconclusive where it would have passed
        assert!(
            matches!(out.status.code(), Some(1) | Some(3)),
            "{name}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let j: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(j["policy"]["name"], name.as_str());
        // every deciding rule got a value: the job measures what the policy judges
        for r in j["rules"].as_array().unwrap() {
            if r["level"] == "fail" {
                assert!(
                    r["value"].is_number(),
                    "{name}: {} not measured",
                    r["metric"]
                );
            }
        }
        for f in ["csv", "markdown", "prometheus", "junit", "html"] {
            let p = env.tmp.path().join(format!("{name}.{f}"));
            assert!(std::fs::metadata(&p).unwrap().len() > 0, "{name}: no {f}");
        }
        assert!(common::listing(&env.dir).is_empty(), "{name} left a file");
    }
    let lines = env.history_lines();
    let on_dirs = builtin_names(&env)
        .iter()
        .filter(|n| {
            let yaml = iopscheck::testing::policy::builtin_yaml(n).unwrap();
            iopscheck::testing::policy::parse(yaml, n)
                .unwrap()
                .devices
                .is_none()
        })
        .count();
    assert_eq!(lines.len(), on_dirs);
}

/// A policy for one job shape, with a rule that every job can measure.
fn job_policy(env: &Env, name: &str, job: &str, metric: &str) -> PathBuf {
    let yaml = format!(
        "name: {name}\ndescription: test job\nvendor: test\nsource:\n  title: t\n  url: https://example.com\n  seen: 2026-11-30\n  test: assumed\njob:\n{job}\nruns: 1\nrules:\n  - metric: {metric}\n    op: \">=\"\n    threshold: 1\n    level: fail\n"
    );
    let p = env.tmp.path().join(format!("{name}.yaml"));
    std::fs::write(&p, yaml).unwrap();
    p
}

fn run_json(env: &Env, policy: &PathBuf, engine: &str) -> Value {
    let out = env
        .cmd()
        .args([
            "run",
            "--no-history",
            "--format",
            "json",
            "--engine",
            engine,
            "--policy",
        ])
        .arg(policy)
        .arg("--dir")
        .arg(&env.dir)
        .output()
        .unwrap();
    // the counts are under test, not the verdict: another engine than the job's is
    // inconclusive (exit 3), never an error
    assert!(
        matches!(out.status.code(), Some(0) | Some(1) | Some(3)),
        "{engine}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let j: Value = serde_json::from_slice(&out.stdout).unwrap();
    j["runs"][0]["metrics"].clone()
}

fn num(m: &Value, k: &str) -> f64 {
    m[k].as_f64().unwrap_or(0.0)
}

/// Size-bounded jobs (time_based: false) do exactly size / bs I/Os in fio; so must we. The
/// counts are exact, so the comparison is exact; the read share of a mixed job depends on
/// random draws, so it is compared within 5 points (2048 draws: about 4 standard deviations).
#[test]
#[cfg_attr(not(have_fio), ignore = "needs fio")]
fn each_rw_mode_does_the_io_fio_does_on_the_same_job() {
    let _disk = disk_shared();
    let env = Env::new();
    for rw in ["read", "write", "randread", "randwrite", "rw", "randrw"] {
        let job = format!(
            "  name: mode\n  rw: {rw}\n  bs: 4k\n  size: 8m\n  ioengine: psync\n  runtime: 30s\n  time_based: false\n  rwmixread: 75\n"
        );
        let metric = if rw.contains("read") || rw == "rw" {
            "read_iops"
        } else {
            "write_iops"
        };
        let p = job_policy(&env, &format!("mode-{rw}"), &job, metric);
        let ours = run_json(&env, &p, "psync");
        let fio = run_json(&env, &p, "fio");
        let total = |m: &Value| num(m, "read_ios") + num(m, "write_ios");
        assert_eq!(total(&ours), 2048.0, "{rw}: ours {ours}");
        assert_eq!(total(&fio), 2048.0, "{rw}: fio {fio}");
        if rw == "rw" || rw == "randrw" {
            let share = |m: &Value| num(m, "read_ios") / total(m);
            assert!(
                (share(&ours) - 0.75).abs() < 0.05,
                "{rw}: ours read share {}",
                share(&ours)
            );
            assert!(
                (share(&fio) - 0.75).abs() < 0.05,
                "{rw}: fio read share {}",
                share(&fio)
            );
        } else {
            assert_eq!(num(&ours, "read_ios"), num(&fio, "read_ios"), "{rw}");
            assert_eq!(num(&ours, "write_ios"), num(&fio, "write_ios"), "{rw}");
        }
    }
}

#[test]
#[cfg_attr(not(have_fio), ignore = "needs fio")]
fn numjobs_and_periodic_fdatasync_count_as_fio_counts() {
    let _disk = disk_shared();
    let env = Env::new();
    // two jobs, each writing its own 4 MiB file: the group does 2 × 1024 writes
    let p = job_policy(
        &env,
        "two-jobs",
        "  name: two\n  rw: write\n  bs: 4k\n  size: 4m\n  ioengine: psync\n  numjobs: 2\n  runtime: 30s\n  time_based: false\n",
        "write_iops",
    );
    let (ours, fio) = (run_json(&env, &p, "psync"), run_json(&env, &p, "fio"));
    assert_eq!(num(&ours, "write_ios"), 2048.0, "{ours}");
    assert_eq!(num(&fio, "write_ios"), 2048.0, "{fio}");
    // etcd's shape: 2300-byte writes, fdatasync after each; sync latency is measured
    let p = job_policy(
        &env,
        "dsync",
        "  name: dsync\n  rw: write\n  bs: 2300\n  size: 1m\n  ioengine: sync\n  runtime: 30s\n  time_based: false\n  fdatasync: 1\n",
        "sync_p99_us",
    );
    let (ours, fio) = (run_json(&env, &p, "psync"), run_json(&env, &p, "fio"));
    assert_eq!(
        num(&ours, "write_ios"),
        num(&fio, "write_ios"),
        "{ours} / {fio}"
    );
    assert_eq!(num(&ours, "write_ios"), ((1u64 << 20) / 2300) as f64);
    assert!(num(&ours, "sync_p99_us") > 0.0 && num(&fio, "sync_p99_us") > 0.0);
}

/// Direct I/O measures the device, so both tools should see similar IOPS. A shared VM's disk
/// varies from second to second (this file's other I/O tests wait while it runs), so the
/// tolerance is a factor of two on the best of three alternating runs each: wide, but it still
/// catches an engine that silently went through the page cache (many times faster) or
/// serialised a deep queue (many times slower).
#[test]
#[cfg_attr(not(have_fio), ignore = "needs fio")]
fn direct_random_reads_at_depth_agree_with_fio_within_a_factor_of_two() {
    let _disk = DISK.write().unwrap_or_else(|e| e.into_inner());
    let env = Env::new();
    let p = job_policy(
        &env,
        "direct",
        "  name: direct\n  rw: randread\n  bs: 4k\n  size: 64m\n  ioengine: libaio\n  iodepth: 16\n  direct: true\n  runtime: 2s\n  time_based: true\n",
        "read_iops",
    );
    // Three alternating pairs, best of each: other tests share this disk, and a burst of their
    // writeback can halve one run.
    let (mut ours, mut fio) = (0.0f64, 0.0f64);
    for _ in 0..3 {
        ours = ours.max(num(&run_json(&env, &p, "libaio"), "read_iops"));
        fio = fio.max(num(&run_json(&env, &p, "fio"), "read_iops"));
    }
    let ratio = ours / fio;
    assert!(
        (0.5..=2.0).contains(&ratio),
        "ours {ours:.0} vs fio {fio:.0} IOPS"
    );
}

#[test]
#[cfg_attr(not(have_root), ignore = "needs root (mounts a ramfs)")]
fn direct_io_where_the_filesystem_refuses_it_is_a_clear_error_before_any_layout() {
    let env = Env::new();
    let at = env.tmp.path().join("ramfs");
    std::fs::create_dir(&at).unwrap();
    let ok = std::process::Command::new("mount")
        .args(["-t", "ramfs", "ramfs"])
        .arg(&at)
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        return skip("mount -t ramfs failed");
    }
    let out = env
        .cmd()
        .args([
            "run",
            "--policy",
            "gitlab-gitaly",
            "--size",
            "64m",
            "--runtime",
            "1",
            "--dir",
        ])
        .arg(&at)
        .output()
        .unwrap();
    let listing = common::listing(&at);
    let _ = std::process::Command::new("umount").arg(&at).status();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("direct I/O (O_DIRECT) is not supported"),
        "{err}"
    );
    assert!(listing.is_empty(), "{listing:?}");
    assert!(env.history_lines().is_empty());
}

#[test]
fn a_soft_limit_is_shown_but_changes_the_exit_code_only_with_strict() {
    let _disk = disk_shared();
    let env = Env::new();
    let yaml = "name: soft\ndescription: soft limit\nvendor: test\nsource:\n  title: t\n  url: https://example.com\n  seen: 2026-11-30\n  test: assumed\njob:\n  rw: randwrite\n  bs: 4k\n  size: 8m\n  ioengine: psync\n  runtime: 1s\nruns: 1\nrules:\n  - metric: write_iops\n    op: \">=\"\n    threshold: 1\n    level: fail\n  - metric: write_iops\n    op: \">=\"\n    threshold: 1e12\n    level: warn\n";
    let p = env.tmp.path().join("soft.yaml");
    std::fs::write(&p, yaml).unwrap();
    env.cmd()
        .args(["run", "--no-history", "--policy"])
        .arg(&p)
        .arg("--dir")
        .arg(&env.dir)
        .assert()
        .code(0)
        .stdout(predicate::str::contains("✗ soft"))
        .stdout(predicate::str::contains(
            "soft limit missed: mean write_iops",
        ));
    env.cmd()
        .args(["run", "--no-history", "--strict", "--policy"])
        .arg(&p)
        .arg("--dir")
        .arg(&env.dir)
        .assert()
        .code(1);
}

#[test]
fn malformed_policies_give_located_errors_and_exit_2() {
    let env = Env::new();
    let good = String::from_utf8(
        env.cmd()
            .args(["policy", "show", "swimlane"])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    let cases: Vec<(&str, String, &str)> = vec![
        (
            "unknown-key",
            good.replace("iodepth: 1", "iodepht: 1"),
            "job: unknown field `iodepht`",
        ),
        (
            "wrong-type",
            good.replace("numjobs: 1", "numjobs: many"),
            "job.numjobs: expected a whole number",
        ),
        (
            "bad-size",
            good.replace("size: 4g", "size: 4q"),
            "job.size: '4q' is not a size",
        ),
        (
            "bad-unit",
            good.replacen("threshold: 3000", "threshold: 3ms", 1),
            "is a duration, but the metric is in IOPS",
        ),
        (
            "bad-metric",
            good.replace("metric: write_iops_formula", "metric: write_iosp"),
            "unknown metric 'write_iosp'",
        ),
        (
            "bad-op",
            good.replacen("op: \">=\"", "op: \"=>\"", 1),
            "rules[0].op: unknown variant",
        ),
        // In the policy's words, never the YAML library's ("untagged enum Raw", "set
        // DuplicateKeyPolicy in Options", "rejected by the configured policy").
        (
            "fractional-size",
            good.replace("size: 4g", "size: 4096.5"),
            "job.size: expected a size such as 4g or 4096 (a whole number of bytes), not 4096.5",
        ),
        (
            "size-list",
            good.replace("bs: 4k", "bs: [4k]"),
            "job.bs: expected a size such as 4g or 4096 (a whole number of bytes), not a list",
        ),
        (
            "runtime-list",
            good.replace("runtime: 60s", "runtime: [1]"),
            "job.runtime: expected a duration such as 60s",
        ),
        (
            "given-twice",
            good.replace("\nruns: 3\n", "\nruns: 3\nruns: 1\n"),
            "runs: given twice (lines ",
        ),
        (
            "nan-threshold",
            good.replacen("threshold: 3000", "threshold: .nan", 1),
            "rules[0].threshold: must be a finite number, not .nan",
        ),
        (
            "inf-third-rule",
            {
                let i = good.match_indices("threshold: ").nth(2).unwrap().0;
                let end = i + good[i..].find('\n').unwrap();
                format!("{}threshold: .inf{}", &good[..i], &good[end..])
            },
            "rules[2].threshold: must be a finite number, not .inf",
        ),
        (
            "runs-mapping",
            good.replace("\nruns: 3\n", "\nruns: {a: 1}\n"),
            "runs: expected a single value, not a list or a mapping",
        ),
        ("not-yaml", "job: [unclosed\n".to_string(), "bad-yaml"),
        (
            "bomb",
            {
                let mut y = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
                for i in 1..10 {
                    y.push_str(&format!("a{i}: &a{i} [*a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}]\n", p = i - 1));
                }
                y
            },
            "bomb.yaml",
        ),
    ];
    for (name, yaml, expect) in cases {
        let file = if name == "not-yaml" {
            "bad-yaml.yaml".to_string()
        } else {
            format!("{name}.yaml")
        };
        let p = env.tmp.path().join(&file);
        std::fs::write(&p, yaml).unwrap();
        let t = std::time::Instant::now();
        let out = env
            .cmd()
            .args(["policy", "check"])
            .arg(&p)
            .output()
            .unwrap();
        assert!(t.elapsed().as_secs() < 5, "{name} took too long");
        assert_eq!(out.status.code(), Some(2), "{name}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(expect), "{name}: {err}");
        for words in [
            "untagged enum",
            "DuplicateKeyPolicy",
            "configured policy",
            "[].",
        ] {
            assert!(
                !err.contains(words),
                "{name}: the YAML library's words: {err}"
            );
        }
        // file:line:column, except for errors that are about the whole file
        if !["bomb"].contains(&name) {
            let located = format!("{}:", p.display());
            assert!(err.contains(&located), "{name}: {err}");
        }
    }
    env.cmd()
        .args(["run", "--policy", "no-such-policy"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("no policy named 'no-such-policy'"));
}
