//! What makes a job not the policy's test, through the binary: the limits a job puts on its
//! own I/O (`rate_iops`, `thinktime`…) and targets in memory (/dev/shm, a RAM disk, fio's null
//! engine), read from fio's outputs — copies of the shared fixtures with their job options
//! edited, and fresh fio runs.

mod common;

use std::path::PathBuf;

use common::{Env, fixture};
use serde_json::{Map, Value};

/// fio-3.33-sample.json (fio's own output of the Swimlane job at 256 MiB for 5 s), `edit`
/// applied to the whole output, written to `name`. It is the policy's test under
/// [`at_its_scale`] (its options alone edited to 4g and 60 s, its measured 5.1 s says it is
/// not Swimlane's 60 s test).
fn sample(env: &Env, name: &str, edit: impl Fn(&mut Value)) -> PathBuf {
    let text = std::fs::read_to_string(fixture("fio-3.33-sample.json")).unwrap();
    let mut j: Value = serde_json::from_str(&text).unwrap();
    edit(&mut j);
    let p = env.tmp.path().join(name);
    std::fs::write(&p, serde_json::to_string_pretty(&j).unwrap()).unwrap();
    p
}

fn job_options(j: &mut Value) -> &mut Map<String, Value> {
    j["jobs"][0]["job options"].as_object_mut().unwrap()
}

fn deviations(j: &Value) -> Vec<(String, String, String, String)> {
    j["deviations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            let s = |k: &str| d[k].as_str().unwrap().to_string();
            (s("field"), s("expected"), s("found"), s("effect"))
        })
        .collect()
}

/// Swimlane's policy at the scale the sample ran (256 MiB, 5 s).
fn at_its_scale(env: &Env) -> PathBuf {
    env.swimlane_policy("scale.yaml", |y| {
        y.replace("size: 4g", "size: 256m")
            .replace("runtime: 60s", "runtime: 5s")
    })
}

fn import(env: &Env, p: &std::path::Path) -> (Option<i32>, Value) {
    let policy = at_its_scale(env);
    let (code, j, _) = env.import_json(&[p.to_str().unwrap(), "-p", policy.to_str().unwrap()]);
    (code, j)
}

#[test]
fn a_job_that_limits_its_own_io_is_named_and_never_judged() {
    let env = Env::new();
    // The sample as the policy's test passes: the limit alone makes the difference below.
    let plain = sample(&env, "plain.json", |_| {});
    let (code, j) = import(&env, &plain);
    assert_eq!(code, Some(0), "{}", j["reason"]);
    assert!(deviations(&j).is_empty());

    for (option, value) in [
        ("rate_iops", "2800"),
        ("rate", ",10m"),
        ("rate_min", "1m"),
        ("ratemin", "1m"),
        ("rate_iops_min", "100"),
        ("thinktime", "100us"),
        ("thinkcycles", "1000"),
        ("flow", "1"),
        ("latency_target", "10ms"),
        ("max_latency", "1s"),
    ] {
        let p = sample(&env, &format!("{option}.json"), |j| {
            job_options(j).insert(option.into(), value.into());
        });
        let (code, j) = import(&env, &p);
        // fio's own name, whichever alias the job used
        let field = if option == "ratemin" {
            "rate_min"
        } else {
            option
        };
        assert_eq!(code, Some(3), "{option}: {}", j["reason"]);
        assert_eq!(
            deviations(&j),
            [(
                field.to_string(),
                "none".to_string(),
                value.to_string(),
                "either_way".to_string()
            )],
            "{option}"
        );
        let reason = j["reason"].as_str().unwrap();
        assert!(
            reason.starts_with(&format!(
                "not the policy's test: {field} {value} instead of none"
            )),
            "{option}: {reason}"
        );
    }

    // The same limit in the global options.
    let p = sample(&env, "global.json", |j| {
        j["global options"] = serde_json::json!({ "rate_iops": "2800" });
    });
    let (code, j) = import(&env, &p);
    assert_eq!(code, Some(3));
    assert_eq!(deviations(&j)[0].0, "rate_iops");

    // Set to zero, a limit limits nothing.
    let p = sample(&env, "zero.json", |j| {
        job_options(j).insert("rate_iops".into(), "0".into());
        job_options(j).insert("thinktime".into(), "0".into());
    });
    let (code, j) = import(&env, &p);
    assert_eq!(code, Some(0), "{}", j["reason"]);
}

#[test]
fn a_limited_run_in_the_history_is_not_counted_and_says_why() {
    let env = Env::new();
    let p = sample(&env, "capped.json", |j| {
        job_options(j).insert("rate_iops".into(), "2800".into());
    });
    let policy = at_its_scale(&env);
    let out = env
        .cmd()
        .args(["import", "--record", "--host", "n1", "-p"])
        .arg(&policy)
        .arg(&p)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3));
    let lines = env.history_lines();
    assert_eq!(
        lines[0]["job"]["limits"],
        serde_json::json!({"rate_iops": "2800"})
    );
    let out = env
        .cmd()
        .args([
            "report", "--host", "n1", "--since", "3650d", "--format", "json", "-p",
        ])
        .arg(&policy)
        .output()
        .unwrap();
    let j: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        j["not_counted"],
        serde_json::json!([{ "reason": "rate_iops 2800 instead of none", "runs": 1 }])
    );
}

#[test]
fn a_job_that_writes_to_memory_flatters_and_never_passes() {
    let env = Env::new();
    for (option, value, found) in [
        ("directory", "/dev/shm", "/dev/shm (tmpfs, in RAM)"),
        (
            "directory",
            "/data:/dev/shm/x",
            "/dev/shm/x (tmpfs, in RAM)",
        ),
        (
            "filename",
            "/dev/shm/fio.test",
            "/dev/shm/fio.test (tmpfs, in RAM)",
        ),
        ("filename", "/run/user/0/t", "/run/user/0/t (tmpfs, in RAM)"),
        ("filename", "/dev/ram0", "/dev/ram0 (a RAM disk)"),
        (
            "filename",
            "/dev/zram1",
            "/dev/zram1 (a compressed RAM disk)",
        ),
        (
            "filename",
            "/dev/null",
            "/dev/null (a device that stores nothing)",
        ),
    ] {
        let p = sample(&env, "ram.json", |j| {
            job_options(j).insert(option.into(), value.into());
        });
        let (code, j) = import(&env, &p);
        assert_eq!(code, Some(3), "{option}={value}: {}", j["reason"]);
        assert_eq!(
            deviations(&j),
            [(
                "target".to_string(),
                "a disk".to_string(),
                found.to_string(),
                "flatters".to_string()
            )],
            "{option}={value}"
        );
        let reason = j["reason"].as_str().unwrap();
        assert!(
            reason.starts_with("passed only on a test that flatters the disk"),
            "{reason}"
        );
    }
    // A relative filename is under the directory.
    let p = sample(&env, "rel.json", |j| {
        job_options(j).insert("directory".into(), "/dev/shm/".into());
        job_options(j).insert("filename".into(), "t".into());
    });
    let (_, j) = import(&env, &p);
    assert_eq!(deviations(&j)[0].2, "/dev/shm/t (tmpfs, in RAM)");

    // fio's null engine does no I/O: it flatters, whatever the policy's engines.
    let p = sample(&env, "null.json", |j| {
        job_options(j).insert("ioengine".into(), "null".into());
    });
    let (code, j) = import(&env, &p);
    assert_eq!(code, Some(3));
    assert_eq!(
        deviations(&j),
        [(
            "ioengine".to_string(),
            "posixaio or io_uring".to_string(),
            "null".to_string(),
            "flatters".to_string()
        )]
    );

    // A directory on a disk, and a device that is one, are the policy's test.
    for (option, value) in [("directory", "/data"), ("filename", "/dev/sdb")] {
        let p = sample(&env, "disk.json", |j| {
            job_options(j).insert(option.into(), value.into());
        });
        let (code, j) = import(&env, &p);
        assert_eq!(code, Some(0), "{option}={value}: {}", j["reason"]);
    }
}

#[test]
fn an_output_that_lists_no_options_says_a_limit_cannot_be_ruled_out() {
    let env = Env::new();
    let caveat = "job options not stated";
    for f in ["fio-3.33-posixaio-randwrite.txt", "fio-3.33-terse.txt"] {
        let (_, j, _) = env.import_json(&[fixture(f).to_str().unwrap()]);
        let caveats: Vec<&str> = j["caveats"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c.as_str().unwrap())
            .collect();
        assert!(
            caveats.iter().any(|c| c.starts_with(caveat)),
            "{f}: {caveats:?}"
        );
    }
    // a JSON output lists them: nothing to say
    let (_, j, _) = env.import_json(&[fixture("fio-3.33-sample.json").to_str().unwrap()]);
    assert!(
        !j["caveats"].to_string().contains(caveat),
        "{}",
        j["caveats"]
    );
}

/// Runs fio's Swimlane job at a test's scale in `dir` with `extra` options, for one second;
/// returns its output in `format`.
fn fio(env: &Env, dir: &std::path::Path, extra: &[&str], format: &str) -> PathBuf {
    let out = env
        .tmp
        .path()
        .join(format!("fio-{}.out", extra.join("_").replace('/', "-")));
    let status = std::process::Command::new("fio")
        .current_dir(dir)
        .args([
            "--name=random-write",
            "--ioengine=posixaio",
            "--rw=randwrite",
            "--bs=4k",
            "--numjobs=1",
            "--size=16m",
            "--iodepth=1",
            "--runtime=1",
            "--time_based",
            "--end_fsync=1",
        ])
        .args(extra)
        .arg(format!("--output-format={format}"))
        .arg(format!("--output={}", out.display()))
        .status()
        .unwrap();
    assert!(status.success());
    out
}

#[test]
#[cfg_attr(not(have_fio), ignore = "needs fio")]
fn a_fresh_fio_run_capped_by_rate_iops_is_named_from_json_and_a_caveat_from_text() {
    let env = Env::new();
    // 500 IOPS, well under the policy's 3000: before, a plain FAIL with no word of the cap
    let json = fio(&env, &env.dir, &["--rate_iops=500"], "json");
    let (code, j) = import(&env, &json);
    assert_eq!(code, Some(3), "{}", j["reason"]);
    let d = deviations(&j);
    assert!(
        d.contains(&(
            "rate_iops".into(),
            "none".into(),
            "500".into(),
            "either_way".into()
        )),
        "{d:?}"
    );
    assert!(
        j["reason"]
            .as_str()
            .unwrap()
            .contains("rate_iops 500 instead of none"),
        "{}",
        j["reason"]
    );
    // fio's text does not list the job's options: the cap cannot show, and the verdict says
    // that it could be there
    let text = fio(&env, &env.dir, &["--rate_iops=500"], "normal");
    let (code, j) = import(&env, &text);
    assert_eq!(code, Some(1), "{}", j["reason"]);
    assert!(
        j["caveats"].to_string().contains("job options not stated"),
        "{}",
        j["caveats"]
    );
}

#[test]
#[cfg_attr(not(have_fio), ignore = "needs fio")]
fn a_fresh_fio_run_in_dev_shm_or_on_the_null_engine_flatters() {
    let env = Env::new();
    let Ok(shm) = tempfile::tempdir_in("/dev/shm") else {
        common::skip("no /dev/shm here");
        return;
    };
    let dir = shm.path().to_str().unwrap().to_string();
    let json = fio(&env, &env.dir, &[&format!("--directory={dir}")], "json");
    let (code, j) = import(&env, &json);
    assert_eq!(code, Some(3));
    assert!(
        deviations(&j).contains(&(
            "target".into(),
            "a disk".into(),
            format!("{dir} (tmpfs, in RAM)"),
            "flatters".into()
        )),
        "{:?}",
        deviations(&j)
    );
    // the text states the engine in its header
    let text = fio(&env, &env.dir, &["--ioengine=null"], "normal");
    let (code, j) = import(&env, &text);
    assert_eq!(code, Some(3));
    assert!(
        deviations(&j).contains(&(
            "ioengine".into(),
            "posixaio or io_uring".into(),
            "null".into(),
            "flatters".into()
        )),
        "{:?}",
        deviations(&j)
    );
}

/// The reason, the exit code and the runtime's deviation of `out` imported under `policy`.
fn runtime_of(env: &Env, out: &std::path::Path, policy: &std::path::Path) -> (Option<i32>, Value) {
    let (code, j, _) = env.import_json(&[out.to_str().unwrap(), "-p", policy.to_str().unwrap()]);
    (code, j)
}

#[test]
fn a_job_that_states_a_longer_runtime_than_the_policys_is_not_its_test() {
    // fio's own output of the Swimlane job at 256 MiB, runtime=5: under a policy of 2 s it
    // ran more than twice the policy's test, where the page cache absorbs more of its file
    // and the end fsync weighs less per I/O (or a disk on burst credits runs out of them).
    let env = Env::new();
    let plain = sample(&env, "plain.json", |_| {});
    let two = env.swimlane_policy("2s.yaml", |y| {
        y.replace("size: 4g", "size: 256m")
            .replace("runtime: 60s", "runtime: 2s")
    });
    let (code, j) = runtime_of(&env, &plain, &two);
    assert_eq!(code, Some(3), "{}", j["reason"]);
    assert_eq!(j["verdict"], "inconclusive");
    assert_eq!(
        deviations(&j),
        vec![(
            "runtime".into(),
            "2s".into(),
            "5s".into(),
            "either_way".into()
        )]
    );
    let reason = j["reason"].as_str().unwrap();
    assert!(reason.contains("runtime 5s instead of 2s"), "{reason}");
    // every format says so: the summary too
    let out = env
        .cmd()
        .args(["import", "--format", "summary", "-p"])
        .arg(&two)
        .arg(&plain)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("runtime 5s instead of 2s"), "{text}");
    // recorded, it is listed as not counted, with its reason
    let out = env
        .cmd()
        .args(["import", "--record", "--host", "n1", "-p"])
        .arg(&two)
        .arg(&plain)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3));
    let out = env
        .cmd()
        .args([
            "report", "--host", "n1", "--since", "3650d", "--format", "json", "-p",
        ])
        .arg(&two)
        .output()
        .unwrap();
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(out.status.code(), Some(3), "{}", r["reason"]);
    assert_eq!(
        r["not_counted"],
        serde_json::json!([{ "reason": "runtime 5s instead of 2s", "runs": 1 }])
    );
    // the same output under a policy of its runtime is that policy's test, judged on its
    // figures (51766 IOPS)
    let (code, j) = import(&env, &plain);
    assert_eq!(code, Some(0), "{}", j["reason"]);
    assert!(deviations(&j).is_empty());
}

#[test]
#[cfg_attr(not(have_fio), ignore = "needs fio")]
fn a_fresh_fio_run_longer_than_the_policys_runtime_is_not_its_test() {
    let env = Env::new();
    let out = env.tmp.path().join("2s.json");
    // Swimlane's job at 8 MiB for 2 s, where the policy's runs 1 s
    common::small_swimlane_fio(&env.dir, "json", &out, &["--runtime=2"]);
    let (code, j) = runtime_of(&env, &out, &env.small_swimlane());
    assert_eq!(code, Some(3), "{}", j["reason"]);
    assert_eq!(
        deviations(&j),
        vec![(
            "runtime".into(),
            "1s".into(),
            "2s".into(),
            "either_way".into()
        )]
    );
    assert!(
        j["reason"]
            .as_str()
            .unwrap()
            .contains("runtime 2s instead of 1s"),
        "{}",
        j["reason"]
    );
    // under a policy of 2 s it is the test, passed or failed on its figures
    let two = env.swimlane_policy("8m-2s.yaml", |y| {
        y.replace("size: 4g", "size: 8m")
            .replace("runtime: 60s", "runtime: 2s")
    });
    let (code, j) = runtime_of(&env, &out, &two);
    assert!(deviations(&j).is_empty(), "{:?}", deviations(&j));
    let iops = j["rules"][0]["value"].as_f64().unwrap();
    assert_eq!(
        code,
        Some(if iops >= 3000.0 { 0 } else { 1 }),
        "{}",
        j["reason"]
    );
}
