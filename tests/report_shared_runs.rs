//! One fio run is one machine's, in a report as in a fleet: where one history holds the same
//! imported fio run under two hosts (the same output imported for each, or its JSON for one
//! and its text for the other) and the report judges both hosts (`--host all`), neither
//! host's group passes on it; each says which host and run it shares. A run repeated within
//! one host still counts once, and a history of one host's records passes as before.

mod common;

use std::path::Path;

use common::three_a_day;
use common::{Env, not_counted};
use serde_json::Value;

fn write(path: &Path, lines: &[String]) {
    let mut text = lines.join("\n");
    text.push('\n');
    std::fs::write(path, text).unwrap();
}

/// Six Swimlane runs (three a day over two days) of `mb_s` each, recorded as `import`
/// writes them under `host`: each with a `source_digest` of its own, `tag` telling outputs
/// apart (the same tag, the same outputs).
fn imported(host: &str, tag: &str, mb_s: f64) -> Vec<String> {
    let (text, _) = three_a_day("n1", "/data", &[mb_s; 6]);
    text.lines()
        .enumerate()
        .map(|(i, l)| {
            let mut v: Value = serde_json::from_str(l).unwrap();
            v["source"] = "imported".into();
            v["source_digest"] = format!("fnv1a64:{tag}0000000000{i:04}:100#0").into();
            v["host"] = host.into();
            v.to_string()
        })
        .collect()
}

/// `report --host all` of history `h` (over `since`, under policy `p` if given) in `format`:
/// the exit code and stdout with every run of white space made one space.
fn report(env: &Env, h: &Path, p: Option<&Path>, since: &str, format: &str) -> (i32, String) {
    let mut cmd = env.cmd();
    cmd.args([
        "report", "--host", "all", "--since", since, "--format", format,
    ])
    .arg("--history")
    .arg(h);
    if let Some(p) = p {
        cmd.arg("-p").arg(p);
    }
    let out = cmd.output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    (
        out.status.code().unwrap(),
        text.split_whitespace().collect::<Vec<_>>().join(" "),
    )
}

/// The part of a table's or markdown's `text` about `host`'s group: from its
/// `host HOST,` line to the next group's.
fn section<'a>(text: &'a str, host: &str, hosts: &[&str]) -> &'a str {
    let mark = |h: &str| format!("host {h}, dir");
    let start = text
        .find(&mark(host))
        .unwrap_or_else(|| panic!("no group of {host}: {text}"));
    let rest = &text[start + 1..];
    let end = hosts
        .iter()
        .filter(|h| **h != host)
        .filter_map(|h| rest.find(&mark(h)))
        .min()
        .unwrap_or(rest.len());
    &text[start..start + 1 + end]
}

/// `host`'s group in a table or markdown: inconclusive, its reason naming `other` and the
/// runs it shares; the summary line of its group inconclusive.
fn shares(table: &str, summary: &str, host: &str, other: &str, hosts: &[&str], runs: usize) {
    let s = section(table, host, hosts);
    let verdict = &s[s.rfind("verdict:").unwrap_or_else(|| panic!("{s}"))..];
    assert!(verdict.contains("INCONCLUSIVE"), "{host}: {verdict}");
    let of = if runs == 1 { "is" } else { "are" };
    for words in [
        format!("{runs} of its runs (the earliest at "),
        format!("{of} also counted for node {other} "),
        "one fio run is one machine's".to_string(),
    ] {
        assert!(verdict.contains(&words), "{host}: {words}: {verdict}");
    }
    assert!(
        summary.contains(&format!("INCONCLUSIVE swimlane on {host} ")),
        "{host}: {summary}"
    );
}

#[test]
fn one_imported_output_under_two_hosts_in_one_history_passes_neither_host() {
    let env = Env::new();
    let h = env.tmp.path().join("h.jsonl");
    // the same six outputs imported for n1 and again for n2 (each enough for a pass)
    write(
        &h,
        &[imported("n1", "aa", 16.0), imported("n2", "aa", 16.0)].concat(),
    );
    let (code, table) = report(&env, &h, None, "30d", "table");
    let (_, md) = report(&env, &h, None, "30d", "markdown");
    let (_, summary) = report(&env, &h, None, "30d", "summary");
    assert_eq!(code, 3, "{table}");
    shares(&table, &summary, "n1", "n2", &["n1", "n2"], 6);
    shares(&table, &summary, "n2", "n1", &["n1", "n2"], 6);
    assert!(!summary.contains("PASS"), "{summary}");
    // markdown: each group's verdict inconclusive, its reason naming the other host
    assert_eq!(
        md.matches("**Verdict: ❔ INCONCLUSIVE**").count(),
        2,
        "{md}"
    );
    assert!(!md.contains("**Verdict: ✅"), "{md}");
    for other in ["n1", "n2"] {
        let said = format!("are also counted for node {other} (dir /data");
        assert!(
            md.contains("— 6 of its runs (the earliest at ") && md.contains(&said),
            "{other}: {md}"
        );
    }

    // a FAIL stays a FAIL: n2 also holds six slow runs of its own (a mean under 3000 IOPS)
    let slow = imported("n2", "bb", 1.0);
    write(
        &h,
        &[imported("n1", "aa", 16.0), imported("n2", "aa", 16.0), slow].concat(),
    );
    let (code, table) = report(&env, &h, None, "30d", "table");
    assert_eq!(code, 1, "{table}");
    let n2 = section(&table, "n2", &["n1", "n2"]);
    assert!(n2.contains("verdict: FAIL"), "{n2}");
    assert!(n2.contains("also counted for node n1 "), "{n2}");
    let n1 = section(&table, "n1", &["n1", "n2"]);
    assert!(n1.contains("verdict: INCONCLUSIVE"), "{n1}");

    // the same history with only n1's records: n1 passes
    write(&h, &imported("n1", "aa", 16.0));
    let (code, table) = report(&env, &h, None, "30d", "table");
    assert_eq!(code, 0, "{table}");
    assert!(table.contains("verdict: PASS"), "{table}");
    // n1's runs and n2's own (other outputs): both pass
    write(
        &h,
        &[imported("n1", "aa", 16.0), imported("n2", "cc", 16.0)].concat(),
    );
    let (code, summary) = report(&env, &h, None, "30d", "summary");
    assert_eq!(code, 0, "{summary}");
    assert_eq!(summary.matches("PASS swimlane on").count(), 2, "{summary}");
    // a run repeated within one host counts once: n1's outputs twice over, n2's own
    let n1 = imported("n1", "aa", 16.0);
    write(&h, &[n1.clone(), n1, imported("n2", "cc", 16.0)].concat());
    let (code, summary) = report(&env, &h, None, "30d", "summary");
    assert_eq!(code, 0, "{summary}");
    let out = env
        .cmd()
        .args([
            "report", "--host", "n1", "--since", "30d", "--format", "json",
        ])
        .arg("--history")
        .arg(&h)
        .output()
        .unwrap();
    let j: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(j["evidence"]["runs"], 6, "{j}");
    assert!(not_counted(&j).contains("repeated: counted once"), "{j}");
}

#[test]
fn one_fio_run_as_json_under_one_host_and_as_text_under_another_passes_neither() {
    let env = Env::new();
    // Swimlane at the scale of the one-run outputs (8 MiB, 1 s), one run enough for a verdict
    let policy = env.swimlane_policy("one-run.yaml", |y| {
        y.replace("size: 4g", "size: 8m")
            .replace("runtime: 60s", "runtime: 1s")
            .replace("min_runs: 6", "min_runs: 1")
            .replace("min_days: 2", "min_days: 1")
    });
    let p = policy.to_str().unwrap();
    // run1's JSON imported for A, its text for B (each into a history of its own: `--record`
    // refuses a second host's), run2's JSON for D; the histories then put together
    let mut text = String::new();
    for (file, host) in [("run1.json", "A"), ("run1.txt", "B"), ("run2.json", "D")] {
        let h = env.tmp.path().join(format!("{host}.jsonl"));
        let out = env
            .cmd()
            .args(["import", "-q", "-p", p, "--assume-job", p, "--record"])
            .args(["--host", host, "--dir", "/data", "--history"])
            .arg(&h)
            .arg(common::one_run_fixture(file))
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{file}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        text += &std::fs::read_to_string(&h).unwrap();
    }
    let h = env.tmp.path().join("all.jsonl");
    std::fs::write(&h, &text).unwrap();
    let hosts = ["A", "B", "D"];
    let (code, table) = report(&env, &h, Some(&policy), "3650d", "table");
    let (_, summary) = report(&env, &h, Some(&policy), "3650d", "summary");
    assert_eq!(code, 3, "{table}");
    shares(&table, &summary, "A", "B", &hosts, 1);
    shares(&table, &summary, "B", "A", &hosts, 1);
    // another run, D's own, passes
    let d = section(&table, "D", &hosts);
    assert!(d.contains("verdict: PASS"), "{d}");
    assert!(summary.contains("PASS swimlane on D "), "{summary}");
    // the text first: the same
    let b = std::fs::read_to_string(env.tmp.path().join("B.jsonl")).unwrap();
    let a = std::fs::read_to_string(env.tmp.path().join("A.jsonl")).unwrap();
    std::fs::write(&h, b + &a).unwrap();
    let (code, table) = report(&env, &h, Some(&policy), "3650d", "table");
    let (_, summary) = report(&env, &h, Some(&policy), "3650d", "summary");
    assert_eq!(code, 3, "{table}");
    shares(&table, &summary, "A", "B", &hosts, 1);
    shares(&table, &summary, "B", "A", &hosts, 1);
}
