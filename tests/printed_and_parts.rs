//! `import`: a figure fio printed is known only to its printed digits (a threshold inside that
//! interval is undecided, never met), a run's numjobs clones printed as terse lines are never
//! several runs of the policy's test, and the I/O depth distribution an output states is read
//! against an assumed iodepth. Through the binary, on the real fio 3.33 outputs of
//! tests/fixtures/printed-and-parts (see its README).

mod common;

use std::path::{Path, PathBuf};

use common::{Env, runs};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/printed-and-parts")
        .join(name)
}

fn arg(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// Swimlane's policy at the fixtures' scale (8 MiB, 2 s), needing `runs` runs over `days`.
fn small_policy(env: &Env, runs: u32, days: u32) -> PathBuf {
    env.swimlane_policy(&format!("small{runs}.yaml"), |y| {
        y.replace("size: 4g", "size: 8m")
            .replace("runtime: 60s", "runtime: 2s")
            .replace("min_runs: 6", &format!("min_runs: {runs}"))
            .replace("min_days: 2", &format!("min_days: {days}"))
    })
}

/// `import -p POLICY --assume-job POLICY FIXTURES... --format json`: the exit code, the JSON
/// and stderr.
fn import_assumed(
    env: &Env,
    policy: &Path,
    fixtures: &[&str],
) -> (Option<i32>, serde_json::Value, String) {
    let files: Vec<PathBuf> = fixtures.iter().map(|f| fixture(f)).collect();
    let mut args = vec!["-p", arg(policy), "--assume-job", arg(policy)];
    args.extend(files.iter().map(|f| arg(f)));
    env.import_json(&args)
}

fn summary(env: &Env, args: &[&str]) -> (Option<i32>, String) {
    let out = env
        .cmd()
        .arg("import")
        .args(args)
        .args(["--format", "summary"])
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

#[test]
fn a_printed_figure_whose_interval_holds_the_threshold_is_undecided_not_a_pass() {
    let env = Env::new();
    let policy = fixture("pbw7.yaml");
    // The text prints the run's 191.906 MB/s as "192MB/s": 191.5 to 192.5, which holds 191.95.
    let (code, j, err) = env.import_json(&["-p", arg(&policy), arg(&fixture("r7.txt"))]);
    assert_eq!(code, Some(3), "{j}\n{err}");
    assert_eq!(j["verdict"], "inconclusive", "{j}");
    let reason = j["reason"].as_str().unwrap();
    assert!(
        reason.contains("192 MB/s as fio printed it") && reason.contains("cannot tell ≥ 191.95"),
        "{reason}"
    );
    let rule = &j["rules"][0];
    assert_eq!(rule["passed"], serde_json::Value::Null, "{rule}");
    assert!(rule["undecided"].as_str().is_some(), "{rule}");
    // Every format says so: the summary line too.
    let (code, line) = summary(&env, &["-p", arg(&policy), arg(&fixture("r7.txt"))]);
    assert_eq!(code, Some(3), "{line}");
    assert!(line.starts_with("INCONCLUSIVE"), "{line}");
    assert!(line.contains("too coarse to tell"), "{line}");
    // Far from the threshold, the same printed figure still decides.
    let small = small_policy(&env, 1, 1);
    let (code, j, err) = import_assumed(&env, &small, &["r7.txt"]);
    assert_eq!(code, Some(0), "{j}\n{err}");
    assert_eq!(j["verdict"], "pass", "{j}");
}

#[test]
fn a_latency_fio_truncated_is_not_a_pass_where_the_exact_one_fails() {
    let env = Env::new();
    let policy = fixture("plat7.yaml");
    let assume = ["-p", arg(&policy), "--assume-job", arg(&policy)];
    // The JSON's exact 99th percentile, 37.12 µs, misses ≤ 37.05: a FAIL.
    let (code, j, err) = env.import_json(&[&assume[..], &[arg(&fixture("r7.json"))]].concat());
    assert_eq!(code, Some(1), "{j}\n{err}");
    assert_eq!(j["verdict"], "fail", "{j}");
    // Terse prints the same run's percentile truncated to 37 µs: it may stand for anything
    // up to 38 µs, so it cannot meet ≤ 37.05 (it passed as 37 µs).
    let (code, j, err) = env.import_json(&[&assume[..], &[arg(&fixture("r7.terse"))]].concat());
    assert_eq!(code, Some(3), "{j}\n{err}");
    assert_eq!(j["verdict"], "inconclusive", "{j}");
    let rule = &j["rules"][0];
    assert_eq!(rule["passed"], serde_json::Value::Null, "{rule}");
    let undecided = rule["undecided"].as_str().unwrap_or_default();
    assert!(
        undecided.contains("37 µs as fio printed it") && undecided.contains("to 38 µs"),
        "{rule}"
    );
    let (code, line) = summary(&env, &[&assume[..], &[arg(&fixture("r7.terse"))]].concat());
    assert_eq!(code, Some(3), "{line}");
    assert!(line.starts_with("INCONCLUSIVE"), "{line}");
    // and the picture does not mark the run, nor its day, as meeting the rule
    let out = env
        .cmd()
        .args(["import"])
        .args(assume)
        .args([arg(&fixture("r7.terse")), "--format", "html"])
        .output()
        .unwrap();
    let html = String::from_utf8_lossy(&out.stdout);
    assert!(html.contains("<circle class=\"run unjudged\""), "{html}");
    assert!(!html.contains("class=\"run pass\""), "{html}");
    assert!(!html.contains("37.00 ✓"), "{html}");
}

#[test]
fn the_exact_figure_still_decides_and_the_threshold_keeps_its_digits() {
    let env = Env::new();
    let policy = fixture("pbw7.yaml");
    // The same run's JSON states 191.906 MB/s exactly: below 191.95, a FAIL, whose line must
    // not read "191.9 MB/s, needs ≥ 191.9" as if it met it.
    let (code, line) = summary(&env, &["-p", arg(&policy), arg(&fixture("r7.json"))]);
    assert_eq!(code, Some(1), "{line}");
    assert!(line.starts_with("FAIL"), "{line}");
    assert!(line.contains("needs ≥ 191.95 MB/s"), "{line}");
    let (_, j, _) = env.import_json(&["-p", arg(&policy), arg(&fixture("r7.json"))]);
    let reason = j["reason"].as_str().unwrap();
    assert!(reason.contains("missing ≥ 191.95"), "{reason}");
    // and the customer's reply says the requirement as the policy has it
    let out = env
        .cmd()
        .args(["import", "-p", arg(&policy), arg(&fixture("r7.json"))])
        .args(["--format", "reply"])
        .output()
        .unwrap();
    let reply = String::from_utf8_lossy(&out.stdout);
    assert!(reply.contains("at least 191.95 MB/s"), "{reply}");
}

#[test]
fn terse_clone_lines_of_a_numjobs_2_run_are_not_two_runs_and_its_json_decides() {
    let env = Env::new();
    let policy = small_policy(&env, 6, 2);
    let (code, j, err) = import_assumed(&env, &policy, &["nj2.json", "nj2.txt", "nj2.terse"]);
    assert_eq!(code, Some(3), "{j}\n{err}");
    assert_eq!(j["verdict"], "inconclusive", "{j}");
    let reason = j["reason"].as_str().unwrap();
    assert!(reason.contains("numjobs 2 instead of 1"), "{reason}");
    // one fio run: one run judged, never two
    assert_eq!(runs(&j).len(), 1, "{j}");
}

#[test]
fn terse_clone_lines_alone_are_no_runs_of_the_policys_test() {
    let env = Env::new();
    let policy = small_policy(&env, 1, 1);
    let (code, j, err) = import_assumed(&env, &policy, &["nj2.terse"]);
    assert_eq!(code, Some(3), "{j}\n{err}");
    assert_eq!(j["verdict"], "inconclusive", "{j}");
    assert!(runs(&j).is_empty(), "{j}");
    let left = common::not_counted(&j);
    assert!(left.contains("terse lines of job 'random-write'"), "{left}");
}

#[test]
fn a_depth_distribution_deeper_than_the_assumed_iodepth_contradicts_it() {
    let env = Env::new();
    let policy = small_policy(&env, 1, 1);
    let (code, j, err) = import_assumed(&env, &policy, &["qd.terse"]);
    assert_eq!(code, Some(3), "{j}\n{err}");
    assert_eq!(j["verdict"], "inconclusive", "{j}");
    let reason = j["reason"].as_str().unwrap();
    assert!(
        reason.contains("iodepth is 16 or more") && reason.contains("16=21.5%"),
        "{reason}"
    );
    // An iodepth=1 run's terse line (1=100.0%) is still the assumed job.
    let (code, j, err) = import_assumed(&env, &policy, &["r7.terse"]);
    assert_eq!(code, Some(0), "{j}\n{err}");
}
