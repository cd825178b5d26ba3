//! A verdict defended at every edge (issue 10): imports say only what the output says, a test
//! that is not the policy's never passes, impossible figures are refused, and report and fleet
//! count only the policy's test, saying what they left out.

mod common;

use common::{Env, fixture, swimlane_record};
use predicates::prelude::*;
use serde_json::Value;

/// fio-3.33-sample.json (the Swimlane job at 256 MiB for 5 s, end_fsync=1), with its job
/// options edited by `edit`, written to the env's temp dir.
fn sample_json(env: &Env, name: &str, edit: impl Fn(&mut Value)) -> std::path::PathBuf {
    let mut v: Value =
        serde_json::from_slice(&std::fs::read(fixture("fio-3.33-sample.json")).unwrap()).unwrap();
    edit(&mut v);
    let p = env.tmp.path().join(name);
    std::fs::write(&p, serde_json::to_vec_pretty(&v).unwrap()).unwrap();
    p
}

/// The sample restated as the policy's own job: 4 GiB, 60 s, end fsync; its writes made a
/// 60 s run's at the rate it measured (a run's measured runtime says how long it ran,
/// whatever its options state).
fn as_policys_job(v: &mut Value) {
    let o = &mut v["jobs"][0]["job options"];
    o["size"] = "4g".into();
    o["runtime"] = "60".into();
    o["time_based"] = "1".into();
    common::sixty_seconds(&mut v["jobs"][0]);
}

#[test]
fn an_import_without_host_names_no_host_and_cannot_be_recorded() {
    let env = Env::new();
    let f = sample_json(&env, "policy.json", as_policys_job);
    let (code, j, _) = env.import_json(&[f.to_str().unwrap()]);
    assert_eq!(code, Some(0), "{}", j["reason"]);
    let host = j["runs"][0]["host"].as_str().unwrap();
    assert_eq!(host, "host not stated (use --host)");
    assert_ne!(host, iopscheck::testing::machine::hostname());
    let table = env.cmd().arg("import").arg(&f).output().unwrap();
    let table = String::from_utf8_lossy(&table.stdout);
    assert!(
        table.contains("target: host not stated (use --host),"),
        "{table}"
    );
    assert!(
        !table.contains(&iopscheck::testing::machine::hostname()),
        "{table}"
    );
    env.cmd()
        .args(["import", "--record"])
        .arg(&f)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--record: name the node"));
    assert!(env.history_lines().is_empty());
}

#[test]
fn an_imported_json_without_end_fsync_cannot_pass() {
    let env = Env::new();
    let f = sample_json(&env, "no-fsync.json", |v| {
        as_policys_job(v);
        v["jobs"][0]["job options"]
            .as_object_mut()
            .unwrap()
            .remove("end_fsync");
    });
    let (code, j, _) = env.import_json(&[f.to_str().unwrap()]);
    assert_eq!(code, Some(3));
    let reason = j["reason"].as_str().unwrap();
    assert!(
        reason
            .starts_with("passed only on a test that flatters the disk (end_fsync 0 instead of 1)"),
        "{reason}"
    );
    assert_eq!(j["deviations"][0]["field"], "end_fsync");
    assert_eq!(j["deviations"][0]["effect"], "flatters");
    // with it, the same output passes
    let f = sample_json(&env, "fsync.json", as_policys_job);
    assert_eq!(env.import_json(&[f.to_str().unwrap()]).0, Some(0));
}

#[test]
fn a_json_ramp_time_and_directory_are_read_from_the_job_options() {
    let env = Env::new();
    let f = sample_json(&env, "ramp.json", |v| {
        as_policys_job(v);
        v["jobs"][0]["job options"]["ramp_time"] = "10".into();
        v["jobs"][0]["job options"]["directory"] = "/mnt/data".into();
    });
    let (code, j, _) = env.import_json(&[f.to_str().unwrap()]);
    assert_eq!(code, Some(3));
    assert!(
        j["reason"]
            .as_str()
            .unwrap()
            .contains("ramp_time 10s instead of none"),
        "{}",
        j["reason"]
    );
    assert_eq!(j["runs"][0]["target"]["dir"], "/mnt/data");
    assert_eq!(j["runs"][0]["job"]["ramp_time"], 10.0);
}

#[test]
fn a_fio_3_33_text_of_the_policys_job_is_inconclusive_with_end_fsync_not_stated() {
    // fio 3.33 prints an issued sync count of 0 although the job had end_fsync=1: the text
    // cannot tell, and what it does not state is unknown, never assumed: a run that could
    // only flatter, inconclusive, with the caveat saying what is unknown. Stated beside it
    // (--assume-job), it passes. The policy here is Swimlane's job at the fixture's own scale
    // (256 MiB, 5 s).
    let env = Env::new();
    let p = env.swimlane_policy("swimlane-5s.yaml", |y| {
        y.replace("size: 4g", "size: 256m")
            .replace("runtime: 60s", "runtime: 5s")
    });
    let f = fixture("fio-3.33-posixaio-randwrite.txt");
    let (code, j, _) = env.import_json(&["--policy", p.to_str().unwrap(), f.to_str().unwrap()]);
    assert_eq!(code, Some(3), "{}", j["reason"]);
    let reason = j["reason"].as_str().unwrap();
    assert!(
        reason.starts_with("passed only on a test that may flatter the disk (end_fsync not stated in the output, where the policy's test has end_fsync=1)"),
        "{reason}"
    );
    assert!(reason.contains("fio's JSON output"), "{reason}");
    assert_eq!(j["deviations"][0]["field"], "end_fsync");
    assert_eq!(j["deviations"][0]["found"], "not stated in the output");
    assert_eq!(j["deviations"][0]["effect"], "flatters");
    let caveats = j["caveats"].to_string();
    assert!(caveats.contains("end fsync not stated"), "{caveats}");
    let md = env
        .cmd()
        .args(["import", "--format", "markdown", "--policy"])
        .arg(&p)
        .arg(&f)
        .output()
        .unwrap();
    let md = String::from_utf8_lossy(&md.stdout);
    let banner_end = md.find("## Policy").unwrap();
    assert!(
        md[..banner_end].contains("- caveat: end fsync not stated"),
        "{md}"
    );
    let policy = p.to_str().unwrap();
    let (code, j, _) = env.import_json(&[
        "--policy",
        policy,
        "--assume-job",
        policy,
        f.to_str().unwrap(),
    ]);
    assert_eq!(code, Some(0), "{}", j["reason"]);
}

#[test]
fn impossible_figures_are_refused_at_import_and_never_recorded() {
    let env = Env::new();
    let negative = sample_json(&env, "negative.json", |v| {
        as_policys_job(v);
        v["jobs"][0]["write"]["clat_ns"]["percentile"]["99.000000"] = (-5000).into();
    });
    env.cmd()
        .args(["import", "--record", "--host", "n1"])
        .arg(&negative)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("negative.json"))
        .stderr(predicate::str::contains("write_clat_p99_us"));
    assert!(env.history_lines().is_empty(), "nothing recorded");
    // an overflowing figure: bytes no disk moves in 5 s
    let huge = sample_json(&env, "huge.json", |v| {
        as_policys_job(v);
        v["jobs"][0]["write"]["bw_bytes"] = 1e308.into();
        v["jobs"][0]["write"]["io_bytes"] = 1e308.into();
        v["jobs"][0]["write"]["iops"] = 1e308.into();
    });
    let out = env
        .cmd()
        .args(["import", "--record", "--host", "n1"])
        .arg(&huge)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    // refused, or read without an impossible figure: never an infinite one recorded
    for r in env.history_lines() {
        for (k, v) in r["metrics"].as_object().unwrap() {
            assert!(v.as_f64().is_some_and(f64::is_finite), "{k}: {v} ({err})");
        }
    }
}

#[test]
fn report_and_fleet_count_only_the_policys_test_and_list_the_rest() {
    use chrono::{Duration, Utc};
    let env = Env::new();
    let now = Utc::now();
    let mut text = String::new();
    // six runs of the policy's test over two days, passing
    for i in 0..6 {
        let t = (now - Duration::days(1 + i / 3) - Duration::hours(i)).fixed_offset();
        let r = swimlane_record("node1", "/data", t, 16.0);
        text.push_str(&serde_json::to_string(&r).unwrap());
        text.push('\n');
    }
    // four quick looks, each far faster: they must not count
    for i in 0..4 {
        let t = (now - Duration::hours(2 + i)).fixed_offset();
        let mut r = swimlane_record("node1", "/data", t, 400.0);
        r.job.size = Some(64 << 20);
        r.overrides.insert("size".into(), "64m".into());
        text.push_str(&serde_json::to_string(&r).unwrap());
        text.push('\n');
    }
    // and one dated in the year 9999
    let mut r = swimlane_record(
        "node1",
        "/data",
        chrono::DateTime::parse_from_rfc3339("9999-12-31T23:00:00Z").unwrap(),
        1.0,
    );
    r.invocation = Some("skewed".into());
    text.push_str(&serde_json::to_string(&r).unwrap());
    text.push('\n');
    std::fs::write(&env.history, &text).unwrap();

    let out = env
        .cmd()
        .args(["report", "--host", "node1", "--format", "json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let j: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(j["runs"].as_array().unwrap().len(), 6);
    assert_eq!(j["evidence"]["runs"], 6);
    let mean = j["rules"][0]["value"].as_f64().unwrap();
    assert!(
        (mean - 4096.0).abs() < 1e-6,
        "the quick looks are not averaged in: {mean}"
    );
    let nc = j["not_counted"].as_array().unwrap();
    let texts: Vec<String> = nc
        .iter()
        .map(|n| format!("{} {}", n["runs"], n["reason"].as_str().unwrap()))
        .collect();
    assert!(
        texts.contains(&"4 size 64 MiB instead of 4 GiB".to_string()),
        "{texts:?}"
    );
    assert!(
        texts.iter().any(|t| t.starts_with("1 dated in the future")),
        "{texts:?}"
    );
    assert!(j["warnings"].to_string().contains("dated in the future"));

    // the table says it too, and an HTML page of this history stays small
    let out = env
        .cmd()
        .args(["report", "--host", "node1"])
        .output()
        .unwrap();
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(
        table.contains("4 runs not counted: size 64 MiB instead of 4 GiB"),
        "{table}"
    );
    let html = env.tmp.path().join("r.html");
    env.cmd()
        .args(["report", "--host", "node1", "--since", "1970-01-01", "-o"])
        .arg(&html)
        .args(["--format", "html"])
        .assert()
        .code(0);
    assert!(std::fs::metadata(&html).unwrap().len() < 1 << 20);

    // report --list marks them
    let out = env.cmd().args(["report", "--list"]).output().unwrap();
    let list = String::from_utf8_lossy(&out.stdout);
    assert!(list.contains("4: size 64 MiB instead of 4 GiB"), "{list}");

    // fleet: the same history is the same verdict, with the same runs left out
    let out = env
        .cmd()
        .arg("fleet")
        .arg(&env.history)
        .args(["--format", "json"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let f = String::from_utf8_lossy(&out.stdout);
    assert!(
        f.contains("4 runs not counted: size 64 MiB instead of 4 GiB"),
        "{f}"
    );
}

#[test]
fn html_and_markdown_put_the_tests_shape_and_deviations_next_to_the_verdict() {
    let env = Env::new();
    let f = sample_json(&env, "small.json", |_| {});
    let out = env
        .cmd()
        .args(["import", "--format", "html"])
        .arg(&f)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3));
    let page = scraper::Html::parse_document(&String::from_utf8_lossy(&out.stdout));
    let sel = |s: &str| scraper::Selector::parse(s).unwrap();
    let banner = page
        .select(&sel("header#verdict"))
        .next()
        .expect("a verdict banner");
    let word: String = banner
        .select(&sel(".word"))
        .next()
        .unwrap()
        .text()
        .collect();
    assert_eq!(word, "INCONCLUSIVE");
    let items: Vec<String> = banner
        .select(&sel("ul.test li"))
        .map(|li| li.text().collect())
        .collect();
    assert!(
        items[0].starts_with("test: size 256 MiB, runtime 5s, filesystem not stated"),
        "{items:?}"
    );
    assert!(
        items.iter().any(
            |i| i == "not the policy's test: size 256 MiB instead of 4 GiB (flatters the disk)"
        ),
        "{items:?}"
    );

    let out = env
        .cmd()
        .args(["import", "--format", "markdown"])
        .arg(&f)
        .output()
        .unwrap();
    let md = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = md.lines().collect();
    let v = lines
        .iter()
        .position(|l| l.starts_with("**Verdict: "))
        .unwrap();
    assert!(lines[v].contains("INCONCLUSIVE"), "{md}");
    // right under the banner, before any section
    assert!(lines[v + 2].starts_with("- test: size 256 MiB"), "{md}");
    assert!(
        lines[v + 3..]
            .iter()
            .take_while(|l| l.starts_with("- "))
            .any(|l| l.contains("size 256 MiB instead of 4 GiB (flatters the disk)")),
        "{md}"
    );
}

#[test]
fn junit_of_a_quick_look_import_is_red_and_counts_what_was_judged() {
    let env = Env::new();
    let f = sample_json(&env, "small.json", |_| {});
    let out = env
        .cmd()
        .args(["import", "--format", "junit"])
        .arg(&f)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3));
    let text = String::from_utf8_lossy(&out.stdout);
    let doc = roxmltree::Document::parse(&text).unwrap();
    let suite = doc
        .descendants()
        .find(|n| n.has_tag_name("testsuite"))
        .unwrap();
    assert_ne!(suite.attribute("errors"), Some("0"));
    let prop = |k: &str| -> Vec<String> {
        doc.descendants()
            .filter(|n| n.has_tag_name("property") && n.attribute("name") == Some(k))
            .map(|n| n.attribute("value").unwrap().to_string())
            .collect()
    };
    assert_eq!(prop("runs"), ["1"]);
    assert_eq!(prop("verdict"), ["inconclusive"]);
    assert!(prop("deviation").contains(&"size 256 MiB instead of 4 GiB".to_string()));
    let error = doc.descendants().find(|n| n.has_tag_name("error")).unwrap();
    assert!(
        error
            .attribute("message")
            .unwrap()
            .starts_with("inconclusive: passed only on a test that flatters the disk"),
        "{text}"
    );
}
