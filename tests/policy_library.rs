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
    let note = format!("source seen {old} (over a year ago): {STALE}");
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
    for (name, yaml) in iopscheck::testing::policy::BUILTIN {
        let p = iopscheck::testing::policy::parse(yaml, name).unwrap();
        let noted = list.contains(&format!(
            "{name}: source seen {} (over a year ago): {STALE}",
            p.source.seen
        ));
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

/// Swimlane's policy with its deciding rule per vCPU: 500 IOPS each.
fn per_cpu_swimlane(env: &Env) -> std::path::PathBuf {
    env.swimlane_policy("per-cpu.yaml", |y| {
        y.replacen("threshold: 3000", "threshold: {per_cpu: 500}", 1)
    })
}

/// The machine's logical CPUs, read here independently of the code under test.
fn cpus_here() -> u64 {
    std::fs::read_to_string("/proc/cpuinfo")
        .unwrap()
        .lines()
        .filter(|l| l.starts_with("processor"))
        .count() as u64
}

/// "4,000" as the resolved thresholds are written.
fn grouped(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[test]
fn a_per_cpu_threshold_is_resolved_against_this_machine_in_every_format() {
    let env = Env::new();
    let policy = per_cpu_swimlane(&env);
    let n = cpus_here();
    let said = format!(
        "500 IOPS × {n} vCPU{} = {} IOPS",
        if n == 1 { "" } else { "s" },
        grouped(500 * n)
    );
    let formats = ["json", "csv", "markdown", "junit", "html", "prometheus"];
    let path = |f: &str| env.tmp.path().join(format!("out.{f}"));
    let mut cmd = env.small_run("posixaio");
    cmd.arg("--policy").arg(&policy);
    for f in &formats {
        cmd.arg("--export")
            .arg(format!("{f}={}", path(f).display()));
    }
    let out = cmd.output().unwrap();
    let table = String::from_utf8(out.stdout).unwrap();
    assert!(table.contains(&said), "table: {table}");
    for f in &formats {
        let text = std::fs::read_to_string(path(f)).unwrap();
        assert!(text.contains(&said), "{f}: {text}");
    }
    let j: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path("json")).unwrap()).unwrap();
    let rule = &j["rules"][0];
    assert_eq!(rule["metric"], "write_iops_formula");
    assert_eq!(rule["scaled"]["count"].as_f64(), Some(n as f64), "{rule}");
    assert_eq!(rule["threshold"].as_f64(), Some(500.0 * n as f64), "{rule}");
    assert_eq!(j["runs"][0]["target"]["cpus"].as_u64(), Some(n), "{j}");
}

/// Run `i` of six over two days: three at 08, 10 and 12 h (local) the day before yesterday,
/// three yesterday, the days' runs 20 h apart (a day of evidence is 12 h after the last).
fn two_days(i: i64) -> chrono::DateTime<chrono::Local> {
    let today = chrono::Local::now().date_naive();
    let day = today - chrono::Days::new(if i < 3 { 2 } else { 1 });
    day.and_hms_opt(8 + 2 * (i % 3) as u32, 0, 0)
        .unwrap()
        .and_local_timezone(chrono::Local)
        .earliest()
        .unwrap()
}

/// `n` runs of Swimlane's test at `mb_s` on `host`, over the last two days, recorded on a
/// machine of `cpus` vCPUs (None: a record without host facts).
fn history_of(env: &Env, host: &str, cpus: Option<u32>, mb_s: f64) {
    use std::io::Write;
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&env.history)
        .unwrap();
    for i in 0..6 {
        let at = two_days(i);
        let mut r = common::swimlane_record(host, "/data", at.fixed_offset(), mb_s);
        r.target.cpus = cpus;
        writeln!(f, "{}", serde_json::to_string(&r).unwrap()).unwrap();
    }
}

fn report_json(env: &Env, policy: &std::path::Path, host: &str) -> (i32, serde_json::Value) {
    let out = env
        .cmd()
        .args(["report", "--host", host, "--format", "json", "--policy"])
        .arg(policy)
        .output()
        .unwrap();
    let j = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!("{e}: {}", String::from_utf8_lossy(&out.stderr));
    });
    (out.status.code().unwrap(), j)
}

#[test]
fn a_per_cpu_threshold_follows_the_host_facts_each_record_carries() {
    let env = Env::new();
    let policy = per_cpu_swimlane(&env);
    // 16.4 MB/s is 4198.4 IOPS by the article's formula: enough for 8 vCPUs (4,000), not for
    // 64 (32,000); the same runs without host facts cannot be judged by this rule at all.
    let iops = 16.4 / 4.0 * 1024.0;
    history_of(&env, "small", Some(8), 16.4);
    history_of(&env, "large", Some(64), 16.4);
    history_of(&env, "unknown", None, 16.4);
    for (host, cpus, verdict, code) in [("small", 8.0, "pass", 0), ("large", 64.0, "fail", 1)] {
        let (c, j) = report_json(&env, &policy, host);
        assert_eq!(
            (j["verdict"].as_str(), c),
            (Some(verdict), code),
            "{host}: {j}"
        );
        let rule = &j["rules"][0];
        assert_eq!(rule["threshold"].as_f64(), Some(500.0 * cpus));
        assert_eq!(rule["passed"].as_bool(), Some(iops >= 500.0 * cpus));
    }
    let (c, j) = report_json(&env, &policy, "unknown");
    assert_eq!((j["verdict"].as_str(), c), (Some("inconclusive"), 3), "{j}");
    let reason = j["reason"].as_str().unwrap();
    assert!(
        reason.contains("500 IOPS per vCPU: the threshold cannot be resolved")
            && reason.contains("the machine's CPU count"),
        "{reason}"
    );
    assert!(j["rules"][0]["passed"].is_null());
    assert!(j["rules"][0]["scaled"]["count"].is_null());
    // nor does the sequential decision judge it against the figure per vCPU
    let out = env
        .cmd()
        .args([
            "report",
            "--until-decided",
            "--host",
            "unknown",
            "--format",
            "json",
        ])
        .arg("--policy")
        .arg(&policy)
        .output()
        .unwrap();
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(out.status.code(), Some(3), "{j}");
    assert!(
        j["reason"]
            .as_str()
            .unwrap()
            .contains("the threshold cannot be resolved"),
        "{j}"
    );
    // an import of fio's output states no host facts either
    let (code, j, _) = env.import_json(&[
        fixture("fio-3.33-posixaio-randwrite.txt").to_str().unwrap(),
        "--policy",
        policy.to_str().unwrap(),
    ]);
    assert_eq!(code, Some(3));
    assert!(
        j["reason"]
            .as_str()
            .unwrap()
            .contains("the threshold cannot be resolved"),
        "{j}"
    );
}

#[test]
fn policy_check_locates_a_wrong_scaled_threshold() {
    let env = Env::new();
    for (written, said) in [
        ("{per_cpus: 500}", "unknown key 'per_cpus' under threshold"),
        (
            "{per_cpu: 500, per_gib_memory: 10}",
            "scales with one thing",
        ),
        ("{per_cpu: {per_cpu: 5}}", "not another mapping"),
        ("{}", "an empty mapping"),
    ] {
        let p = env.swimlane_policy("scaled.yaml", |y| {
            y.replacen("threshold: 3000", &format!("threshold: {written}"), 1)
        });
        let out = env
            .cmd()
            .args(["policy", "check"])
            .arg(&p)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{written}");
        let err = String::from_utf8(out.stderr).unwrap();
        let located = regex_like_location(&err);
        assert!(located && err.contains(said), "{written}: {err}");
    }
    // a good one says what it checks
    let p = per_cpu_swimlane(&env);
    env.cmd()
        .args(["policy", "check"])
        .arg(&p)
        .assert()
        .success()
        .stderr(
            predicate::str::contains("write_iops_formula ≥ 3000 IOPS per vCPU")
                .not()
                .and(predicate::str::contains(
                    "write_iops_formula ≥ 500 IOPS per vCPU",
                )),
        );
}

/// "…/scaled.yaml:LINE:COLUMN: rules[0].threshold: …"
fn regex_like_location(err: &str) -> bool {
    let Some(i) = err.find("scaled.yaml:") else {
        return false;
    };
    let rest = &err[i + "scaled.yaml:".len()..];
    let mut parts = rest.splitn(3, ':');
    let line = parts.next().unwrap_or("");
    let col = parts.next().unwrap_or("");
    !line.is_empty()
        && line.chars().all(|c| c.is_ascii_digit())
        && !col.is_empty()
        && col.chars().all(|c| c.is_ascii_digit())
        && rest.contains("rules[0].threshold:")
}

/// The policies this round adds, each judged both ways on constructed runs of its own test.
const NEW: &[&str] = &[
    "cockroachdb",
    "cockroachdb-throughput",
    "commvault-disk-library",
    "apigee-cassandra",
    "apigee-postgres",
    "atlassian-jira-shared-home",
    "atlassian-confluence-shared-home",
    "atlassian-confluence-local-home",
];

/// Six runs of `policy`'s own test over two days on `host`, a machine of 4 vCPUs, whose every
/// metric a rule judges is `figure(rule)`.
fn runs_of(
    env: &Env,
    policy: &iopscheck::testing::policy::Policy,
    host: &str,
    figure: impl Fn(&iopscheck::testing::policy::Rule) -> f64,
) {
    use std::io::Write;
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&env.history)
        .unwrap();
    for i in 0..6 {
        let at = two_days(i);
        let mut r = common::swimlane_record(host, "/data", at.fixed_offset(), 1.0);
        r.policy = policy.name.clone();
        r.job = policy.job.shape();
        r.engine = policy.job.ioengine.to_string();
        r.target.cpus = Some(CPUS);
        r.metrics = policy
            .rules
            .iter()
            .filter(|rule| rule.level != iopscheck::testing::policy::Level::Info)
            .map(|rule| (rule.metric.clone(), figure(rule)))
            .collect();
        // a record's total IOPS is the sum of its parts, which it holds too (a total alone is
        // no run: its figures could not be checked): the policies' 75/25 mix
        if let Some(total) = r.metrics.get("total_iops").copied() {
            r.metrics.insert("read_iops".into(), total * 0.75);
            r.metrics.insert("write_iops".into(), total * 0.25);
        }
        writeln!(f, "{}", serde_json::to_string(&r).unwrap()).unwrap();
    }
}

const CPUS: u32 = 4;

/// A rule's threshold on a machine of [`CPUS`] vCPUs.
fn threshold(rule: &iopscheck::testing::policy::Rule) -> f64 {
    rule.threshold * if rule.per.is_some() { CPUS as f64 } else { 1.0 }
}

/// 20% to the good or the bad side of a rule's threshold.
fn beside(rule: &iopscheck::testing::policy::Rule, good: bool) -> f64 {
    let up = rule.op.higher_is_better() == good;
    threshold(rule) * if up { 1.2 } else { 0.8 }
}

#[test]
fn each_new_policy_passes_and_fails_on_its_own_test() {
    let env = Env::new();
    let list =
        String::from_utf8(env.cmd().args(["policy", "list"]).output().unwrap().stdout).unwrap();
    for name in NEW {
        assert!(list.contains(name), "policy list lacks {name}");
        let p = iopscheck::testing::policy::resolve(name).unwrap().policy;
        assert_eq!(p.source.seen.to_string(), "2026-12-02", "{name}");
        runs_of(&env, &p, &format!("{name}-good"), |r| beside(r, true));
        runs_of(&env, &p, &format!("{name}-bad"), |r| beside(r, false));
        let judge = |host: &str| {
            let out = env
                .cmd()
                .args([
                    "report", "--policy", name, "--host", host, "--format", "json",
                ])
                .output()
                .unwrap();
            let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
            (out.status.code().unwrap(), j)
        };
        let (code, j) = judge(&format!("{name}-good"));
        assert_eq!(
            (code, j["verdict"].as_str()),
            (0, Some("pass")),
            "{name}: {j}"
        );
        let (code, j) = judge(&format!("{name}-bad"));
        assert_eq!(
            (code, j["verdict"].as_str()),
            (1, Some("fail")),
            "{name}: {j}"
        );
    }
}

#[test]
fn atlassian_latency_tiers_are_pass_warn_and_fail() {
    let env = Env::new();
    for name in [
        "atlassian-jira-shared-home",
        "atlassian-confluence-shared-home",
        "atlassian-confluence-local-home",
    ] {
        let p = iopscheck::testing::policy::resolve(name).unwrap().policy;
        let bound = |level| {
            p.rules
                .iter()
                .find(|r| r.level == level)
                .map(|r| r.threshold)
                .unwrap()
        };
        let (optimal, attention) = (
            bound(iopscheck::testing::policy::Level::Warn),
            bound(iopscheck::testing::policy::Level::Fail),
        );
        assert!(optimal < attention, "{name}");
        // between the two bounds: the middle tier
        let middle = (optimal + attention) / 2.0;
        for (host, figure) in [
            ("optimal", optimal * 0.5),
            ("middle", middle),
            ("over", attention * 1.5),
        ] {
            runs_of(&env, &p, &format!("{name}-{host}"), |_| figure);
        }
        let judge = |host: &str, strict: bool| {
            let mut c = env.cmd();
            c.args(["report", "--policy", name, "--host"])
                .arg(format!("{name}-{host}"))
                .args(["--format", "json"]);
            if strict {
                c.arg("--strict");
            }
            let out = c.output().unwrap();
            let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
            (out.status.code().unwrap(), j)
        };
        let (code, j) = judge("optimal", true);
        assert_eq!(
            (code, j["verdict"].as_str()),
            (0, Some("pass")),
            "{name}: {j}"
        );
        // requires attention: a pass that says the soft limit was missed, a fail with --strict
        let (code, j) = judge("middle", false);
        assert_eq!(
            (code, j["verdict"].as_str()),
            (0, Some("pass")),
            "{name}: {j}"
        );
        assert!(
            j["reason"].as_str().unwrap().contains("soft limit missed"),
            "{name}: {j}"
        );
        let (code, _) = judge("middle", true);
        assert_eq!(code, 1, "{name}");
        let (code, j) = judge("over", false);
        assert_eq!(
            (code, j["verdict"].as_str()),
            (1, Some("fail")),
            "{name}: {j}"
        );
    }
}

/// A history of six runs of `policy`'s test on `host` over two days, each measuring every
/// metric of the policy's fleet rules at `figure`, in its own file: one node's input to fleet.
fn node_history(env: &Env, policy: &str, host: &str, figure: f64) -> std::path::PathBuf {
    use std::io::Write;
    let p = iopscheck::testing::policy::resolve(policy).unwrap().policy;
    let path = env.tmp.path().join(format!("{host}.jsonl"));
    let mut f = std::fs::File::create(&path).unwrap();
    for i in 0..6 {
        let at = two_days(i);
        let mut r = common::swimlane_record(host, "/data", at.fixed_offset(), 1.0);
        r.policy = p.name.clone();
        r.job = p.job.shape();
        r.engine = p.job.ioengine.to_string();
        r.metrics = p
            .fleet
            .iter()
            .map(|rule| (rule.metric.clone(), figure))
            .collect();
        if let Some(total) = r.metrics.get("total_iops").copied() {
            r.metrics.insert("read_iops".into(), total * 0.75);
            r.metrics.insert("write_iops".into(), total * 0.25);
        }
        writeln!(f, "{}", serde_json::to_string(&r).unwrap()).unwrap();
    }
    path
}

fn fleet_json(env: &Env, policy: &str, files: &[std::path::PathBuf]) -> (i32, serde_json::Value) {
    let out = env
        .cmd()
        .args(["fleet", "--policy", policy, "--format", "json"])
        .args(files)
        .output()
        .unwrap();
    let j = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!("{e}: {}", String::from_utf8_lossy(&out.stderr));
    });
    (out.status.code().unwrap(), j)
}

#[test]
fn a_fleet_rule_judges_the_spread_across_nodes() {
    let env = Env::new();
    for (policy, base) in [("confluent", 4000.0), ("confluent-throughput", 400.0)] {
        let p = iopscheck::testing::policy::resolve(policy).unwrap().policy;
        let bound = p.fleet[0].max_over_min;
        // within the bound: every node alike enough
        let close: Vec<_> = [1.0, 1.03, bound * 0.99]
            .iter()
            .enumerate()
            .map(|(i, k)| node_history(&env, policy, &format!("{policy}-a{i}"), base * k))
            .collect();
        let (code, j) = fleet_json(&env, policy, &close);
        assert_eq!(
            (code, j["verdict"].as_str()),
            (0, Some("pass")),
            "{policy}: {j}"
        );
        assert!(
            j["warnings"].to_string().contains("meets it, max/min"),
            "{policy}: {j}"
        );
        // one node further off: each node passes on its own, the fleet fails by the rule
        let mut wide = close.clone();
        wide.push(node_history(
            &env,
            policy,
            &format!("{policy}-slow"),
            base / (bound * 1.2),
        ));
        let (code, j) = fleet_json(&env, policy, &wide);
        assert_eq!(
            (code, j["verdict"].as_str()),
            (1, Some("fail")),
            "{policy}: {j}"
        );
        let reason = j["reason"].as_str().unwrap();
        assert!(
            reason.contains(&format!("fleet rule {}", p.fleet[0].metric))
                && reason.contains("exceeds it")
                && reason.contains(&format!("{policy}-slow")),
            "{policy}: {reason}"
        );
        for node in j["hosts"].as_array().unwrap() {
            assert_eq!(node["verdict"], "pass", "{policy}: {node}");
        }
        // a fleet of one node: alike with itself is no evidence about the others
        let (code, j) = fleet_json(&env, policy, &close[..1]);
        assert_eq!(
            (code, j["verdict"].as_str()),
            (3, Some("inconclusive")),
            "{policy}: {j}"
        );
        assert!(
            j["reason"]
                .as_str()
                .unwrap()
                .contains("cannot be judged on one node"),
            "{policy}: {j}"
        );
        // a single node alone is measured, never judged by a rule over the fleet
        let out = env
            .cmd()
            .args([
                "report",
                "--policy",
                policy,
                "--host",
                &format!("{policy}-a0"),
            ])
            .arg("--history")
            .arg(&close[0])
            .args(["--format", "json"])
            .output()
            .unwrap();
        let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert!(
            j["reason"]
                .as_str()
                .unwrap()
                .contains("this policy's rules are over the fleet"),
            "{policy}: {j}"
        );
    }
}
