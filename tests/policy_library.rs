//! The policy library, round two (issue 33), through the binary: sources that age, `policy
//! diff`, thresholds that scale with the machine, latency tiers, the new cited policies, and
//! fleet and per-device rules.

mod common;

use common::{Env, fixture};
use predicates::prelude::*;

const STALE: &str = "check it is current";

/// The Swimlane fixture imported under `policy` in `format`: stdout as text.
fn import(env: &Env, policy: &str, format: &str) -> String {
    let out = env
        .cmd()
        .arg("import")
        .arg(fixture("fio-3.33-posixaio-randwrite.txt"))
        .args(["--policy", policy, "--format", format])
        .output()
        .unwrap();
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn a_source_read_more_than_a_year_ago_is_noted_in_the_list_and_every_verdict() {
    let env = Env::new();
    let today = chrono::Utc::now().date_naive();
    let old = today - chrono::Duration::days(400);
    let recent = today - chrono::Duration::days(30);
    let seen = |d: chrono::NaiveDate| {
        move |y: String| {
            let i = y.find("  seen: ").unwrap();
            let end = i + y[i..].find('\n').unwrap();
            format!("{}  seen: {d}{}", &y[..i], &y[end..])
        }
    };
    let stale = env.swimlane_policy("old.yaml", seen(old));
    let fresh = env.swimlane_policy("fresh.yaml", seen(recent));
    let note = format!("source seen {old}; {STALE}");
    for format in [
        "table",
        "json",
        "csv",
        "markdown",
        "junit",
        "html",
        "prometheus",
    ] {
        let out = import(&env, stale.to_str().unwrap(), format);
        assert!(
            out.contains(&note),
            "{format} lacks the stale source: {out}"
        );
        let out = import(&env, fresh.to_str().unwrap(), format);
        assert!(
            !out.contains(STALE),
            "{format} notes a source read 30 days ago: {out}"
        );
    }
    // the list marks the built-ins read more than a year ago, and only those
    let list =
        String::from_utf8(env.cmd().args(["policy", "list"]).output().unwrap().stdout).unwrap();
    for (name, yaml) in iopscheck::policy::BUILTIN {
        let p = iopscheck::policy::parse(yaml, name).unwrap();
        let noted = list.contains(&format!("{name}: source seen {}; {STALE}", p.source.seen));
        assert_eq!(
            noted,
            (today - p.source.seen).num_days() > 365,
            "{name} seen {}: {list}",
            p.source.seen
        );
    }
    // a date that is not one is a located error
    let bad = env.swimlane_policy("bad.yaml", |y| {
        y.replacen(&format!("seen: {}", "2025-03-05"), "seen: March 2025", 1)
    });
    env.cmd()
        .args(["policy", "check"])
        .arg(&bad)
        .assert()
        .code(2)
        .stderr(
            predicate::str::is_match(
                r"bad\.yaml:\d+:\d+: source\.seen: 'March 2025' is not a date",
            )
            .unwrap(),
        );
}

#[test]
fn policy_diff_shows_a_changed_threshold_and_job_against_the_built_in() {
    let env = Env::new();
    let copy = env.swimlane_policy("mine.yaml", |y| {
        y.replacen("threshold: 3000", "threshold: 2500", 1)
            .replacen("size: 4g", "size: 1g", 1)
    });
    let out = env
        .cmd()
        .args(["policy", "diff"])
        .arg(&copy)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.starts_with("built-in swimlane → "), "{text}");
    assert!(
        text.contains("write_iops_formula (fail): ≥ 3000 IOPS → ≥ 2500 IOPS (easier to pass)"),
        "{text}"
    );
    assert!(text.contains("size: 4g → 1g"), "{text}");
    // only what changed: the second rule of 3000 IOPS is untouched
    assert!(!text.contains("write_iops (info)"), "{text}");
    // the other way round, the same change is harder to pass
    let out = env
        .cmd()
        .args(["policy", "diff"])
        .arg(&copy)
        .arg("swimlane")
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("≥ 2500 IOPS → ≥ 3000 IOPS (harder to pass)"),
        "{text}"
    );
    // a policy against itself
    env.cmd()
        .args(["policy", "diff", "swimlane"])
        .assert()
        .success()
        .stdout(predicate::str::contains("no differences"));
    // a renamed copy has no built-in to compare with: say so, exit 2
    let renamed = env.swimlane_policy("renamed.yaml", |y| {
        y.replacen("name: swimlane", "name: ours", 1)
    });
    env.cmd()
        .args(["policy", "diff"])
        .arg(&renamed)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("no built-in policy has that name"));
}
