//! `import`: a job that ran beside other jobs of its fio run is not the policy's job run alone,
//! several jobs of one name are one job's clones only as many as its numjobs, and a run fio
//! says was interrupted is no evidence. Through the binary, on real fio 3.33 outputs
//! (tests/fixtures/concurrent, see its README).

mod common;

use std::path::PathBuf;

use common::{Env, not_counted, runs};

fn concurrent(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/concurrent")
        .join(name)
}

/// Swimlane's policy at the scale of the outputs (8 MiB files, 2 s or 4 s runs, one run
/// enough): each output is the policy's test by what it states of each job.
fn small_policy(env: &Env, runtime: &str) -> PathBuf {
    env.swimlane_policy("small.yaml", |y| {
        y.replace("size: 4g", "size: 8m")
            .replace("runtime: 60s", &format!("runtime: {runtime}"))
            .replace("min_runs: 6", "min_runs: 1")
            .replace("min_days: 2", "min_days: 1")
    })
}

fn import(env: &Env, file: &str, runtime: &str) -> (Option<i32>, serde_json::Value, String) {
    let policy = small_policy(env, runtime);
    env.import_json(&[
        concurrent(file).to_str().unwrap(),
        "--policy",
        policy.to_str().unwrap(),
    ])
}

#[test]
fn three_jobs_of_one_name_stating_numjobs_1_are_not_one_jobs_clones_summed() {
    let env = Env::new();
    let (code, j, err) = import(&env, "threenf.json", "2s");
    // was: the three jobs' IOPS summed into one run recorded as numjobs=1, PASS
    assert_eq!(code, Some(3), "{err}");
    assert!(runs(&j).is_empty(), "{}", j["runs"]);
    let nc = not_counted(&j);
    assert!(
        nc.contains(
            "ran at the same time as 2 other jobs of the same fio invocation (one group, which fio starts together): not the policy's job run alone"
        ),
        "{nc}"
    );
    assert!(!err.contains("were combined"), "{err}");
}

#[test]
fn concurrent_jobs_of_one_fio_run_are_not_each_a_run() {
    let env = Env::new();
    let (code, j, err) = import(&env, "three1.json", "2s");
    // was: PASS for 3 imported runs
    assert_eq!(code, Some(3), "{err}");
    assert!(runs(&j).is_empty(), "{}", j["runs"]);
    assert_eq!(j["not_counted"].as_array().unwrap().len(), 3, "{j}");
    assert!(
        not_counted(&j).contains("ran at the same time as 2 other jobs"),
        "{}",
        not_counted(&j)
    );
}

#[test]
fn a_run_fio_says_was_interrupted_is_not_evidence() {
    let env = Env::new();
    let (code, j, err) = import(&env, "int.json", "4s");
    // was: PASS on the 1.2 s the run lasted
    assert_eq!(code, Some(3), "{err}");
    assert!(runs(&j).is_empty(), "{}", j["runs"]);
    assert!(
        not_counted(&j).contains(
            "int.json: the output says fio was interrupted (fio: terminating on signal): a run cut short is not evidence"
        ),
        "{}",
        not_counted(&j)
    );
}
