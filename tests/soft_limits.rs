//! A missed soft limit (a warn-level rule, without `--strict`) leaves the verdict as it is and
//! is said beside it in every format; a policy's every deciding rule is the requirement the
//! reply names, and a failing verdict gives the figure of the rule that fails.

mod common;

use common::{Env, three_a_day};

/// Every format of the report, and the customer's reply.
const FORMATS: [&str; 10] = {
    let r = common::REPORT_FORMATS;
    [
        r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8], "reply",
    ]
};

/// Swimlane with two deciding rules (the formula's 3000 IOPS and fio's IOPS= figure at
/// `iops`) and a soft limit of 20 MB/s, which 16.4 MB/s misses.
fn policy(env: &Env, iops: u32) -> std::path::PathBuf {
    env.swimlane_policy("two-rules.yaml", |s| {
        s.replace(
            "threshold: 11.7\n    level: info",
            "threshold: 20\n    level: warn",
        )
        .replace(
            "    threshold: 3000\n    level: info",
            &format!("    threshold: {iops}\n    level: fail"),
        )
    })
}

/// Each format's output of `report` over six passing runs on two days.
fn outputs(iops: u32) -> Vec<(&'static str, Option<i32>, String)> {
    let env = Env::new();
    let (text, _) = three_a_day("node1", "/data", &[16.4; 6]);
    std::fs::write(&env.history, text).unwrap();
    let p = policy(&env, iops);
    FORMATS
        .iter()
        .map(|f| {
            let out = env
                .cmd()
                .args(["report", "--host", "node1", "--format", f, "-p"])
                .arg(&p)
                .output()
                .unwrap();
            (
                *f,
                out.status.code(),
                String::from_utf8_lossy(&out.stdout).into_owned(),
            )
        })
        .collect()
}

fn flat(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// What the soft limit's mention looks like in each format (JSON: its rule, missed, at warn
/// level; the others: in words).
fn assert_soft_said(outs: &[(&str, Option<i32>, String)]) {
    for (f, _, text) in outs {
        match *f {
            "json" | "jsonl" => {
                let j: serde_json::Value = serde_json::from_str(text).unwrap();
                let rule = j["rules"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .find(|r| r["metric"] == "write_bw_mb_s")
                    .unwrap_or_else(|| panic!("{f}: {text}"));
                assert_eq!((&rule["level"], &rule["passed"]), (&"warn".into(), &false.into()));
                assert!(
                    j["reason"].as_str().unwrap().contains("soft limit missed: mean write_bw_mb_s"),
                    "{f}: {}",
                    j["reason"]
                );
            }
            "reply" => assert!(
                flat(text).contains("also recommends, without requiring it, a limit the storage misses: the average write bandwidth in MB/s") && text.contains("was 16.40 MB/s, where at least 20.00 MB/s is recommended"),
                "{f}: {text}"
            ),
            "summary" => assert!(text.contains("soft limit missed: write_bw_mb_s"), "{f}: {text}"),
            _ => assert!(
                flat(text).contains("soft limit missed: mean write_bw_mb_s")
                    || flat(text).contains("soft limit missed: mean write\\_bw\\_mb\\_s"),
                "{f}: {text}"
            ),
        }
    }
}

#[test]
fn a_missed_soft_limit_is_said_beside_a_pass_in_every_format() {
    let outs = outputs(3000);
    for (f, code, text) in &outs {
        assert_eq!(*code, Some(0), "{f}: {text}");
    }
    assert_soft_said(&outs);
    let reply = flat(&outs.iter().find(|o| o.0 == "reply").unwrap().2);
    // both deciding rules are the requirement, each with its figure
    assert!(
        reply.contains("meets Swimlane's requirement (write IOPS by the vendor's formula at least 3000 IOPS and write IOPS as fio reports them at least 3000 IOPS)"),
        "{reply}"
    );
    assert!(
        reply.contains("was 4004 IOPS, where at least 3000 IOPS is required"),
        "{reply}"
    );
}

#[test]
fn a_failing_verdict_gives_the_figure_that_fails_and_the_soft_limit_missed() {
    // fio's IOPS= figure (4004) misses 5000; the formula's (4198) meets 3000
    let outs = outputs(5000);
    for (f, code, text) in &outs {
        assert_eq!(*code, Some(1), "{f}: {text}");
    }
    assert_soft_said(&outs);
    let summary = &outs.iter().find(|o| o.0 == "summary").unwrap().2;
    assert!(summary.starts_with("FAIL "), "{summary}");
    assert!(
        summary.contains("write_iops mean 4004 IOPS, needs ≥ 5000"),
        "{summary}"
    );
    let reply = flat(&outs.iter().find(|o| o.0 == "reply").unwrap().2);
    assert!(
        reply.contains("does not meet Swimlane's requirement"),
        "{reply}"
    );
    assert!(
        reply.contains("was 4004 IOPS, where at least 5000 IOPS is required"),
        "{reply}"
    );
    assert!(
        !reply.contains("4198 IOPS, where"),
        "the passing rule is not why: {reply}"
    );
}
