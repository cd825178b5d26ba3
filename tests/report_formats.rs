//! Every output format, read back with a real parser: JSON with contract.md's keys, CSV with
//! one row per run, JUnit as XML with the right failure count, Prometheus exposition checked
//! strictly here (and by `promtool check metrics` where installed), HTML as XML with one
//! point per run and the threshold line. Each is rendered for a passing, a failing and an
//! inconclusive evaluation, all with warnings, and must carry the verdict and every warning.

mod common;

use std::collections::BTreeMap;
use std::io::Write;
use std::process::{Command, Stdio};

use chrono::{DateTime, Utc};
use iopscheck::testing::evaluate::{Evaluation, Group, Options, Scope, Verdict, Warning};
use iopscheck::testing::history::Record;
use iopscheck::testing::policy::{Level, Op, Policy, Rule};
use iopscheck::testing::report::{Format, Style, render};
use iopscheck::testing::run_index::Records;

/// An evaluation (a plain value) with where its runs' whole records are read again, as `run`
/// and `import` hold them: what a format that prints whole records is given.
struct Held(Evaluation, Records);

impl std::ops::Deref for Held {
    type Target = Evaluation;
    fn deref(&self) -> &Evaluation {
        &self.0
    }
}

impl std::ops::DerefMut for Held {
    fn deref_mut(&mut self) -> &mut Evaluation {
        &mut self.0
    }
}

/// The records judged against `policy`, held.
fn evaluate(records: impl Into<Vec<Record>>, policy: &Policy, opts: &Options) -> Held {
    let (ev, records) =
        iopscheck::testing::evaluate::evaluate_left_out(records.into(), Vec::new(), policy, opts);
    Held(ev, records)
}

// ---- evaluations ----------------------------------------------------------------------

fn policy() -> Policy {
    iopscheck::testing::policy::resolve("swimlane")
        .unwrap()
        .policy
}

fn at(ts: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(ts)
        .unwrap()
        .with_timezone(&Utc)
}

/// A run as the native engine records it: `mb_s` decimal MB/s of 4k random writes.
fn rec(ts: &str, mb_s: f64) -> Record {
    let mut r = common::swimlane_record(
        "node1",
        "/data",
        DateTime::parse_from_rfc3339(ts).unwrap(),
        mb_s,
    );
    r.metrics.insert("write_runtime_ms".to_string(), 60_000.0);
    r
}

/// A caveat whose text holds everything an escaper must handle.
const NOTE: &str = "test <smaller> than the policy's & \"quoted\", with a comma\nand a second line";

/// Six runs over two days at about 16 MB/s: a report that passes. The test file is smaller
/// than RAM (a real warning) and the caller added a note.
fn pass_eval() -> Held {
    let times = [
        "2026-12-01T10:00:00+01:00",
        "2026-12-01T12:00:00+01:00",
        "2026-12-01T14:00:00+01:00",
        "2026-12-02T09:00:00+01:00",
        "2026-12-02T11:00:00+01:00",
        "2026-12-02T13:00:00+01:00",
    ];
    let recs: Vec<Record> = times
        .iter()
        .zip([16.0, 16.2, 15.9, 16.1, 16.3, 16.0])
        .enumerate()
        .map(|(i, (t, mb))| {
            let mut r = rec(t, mb);
            r.target.memory_bytes = Some(24 << 30);
            // only some runs measure latency: the others leave the column empty
            if i % 2 == 0 {
                r.metrics
                    .insert("write_clat_p99_us".into(), 310.5 + i as f64);
            }
            r
        })
        .collect();
    let mut o = Options::new(Scope::Report, at("2026-12-02T18:00:00Z"));
    o.notes.push(Warning::EngineFallback {
        asked: "io_uring".into(),
        reason: NOTE.into(),
        used: "posixaio".into(),
    });
    let mut ev = evaluate(recs.as_slice(), &policy(), &o);
    ev.group = Some(Group {
        host: "node1".into(),
        policy: "swimlane".into(),
        dir: "/data".into(),
        engine: "posixaio".into(),
    });
    assert_eq!(ev.verdict, Verdict::Pass, "{}", ev.reason);
    assert!(ev.warnings.len() >= 2, "{:?}", ev.warnings);
    ev
}

/// A directory name that CSV, label values, XML and Markdown must all escape.
const ODD_DIR: &str = "/srv/a,b \"c\" \\d <e> & |f|";

/// Three runs of one invocation on tmpfs, on both sides of 3000 IOPS, mean below: fail.
fn fail_eval() -> Held {
    let recs: Vec<Record> = [
        ("2026-12-01T10:00:00Z", 10.5),
        ("2026-12-01T10:05:00Z", 12.5),
        ("2026-12-01T10:10:00Z", 10.8),
    ]
    .into_iter()
    .map(|(t, mb)| {
        let mut r = rec(t, mb);
        r.target.dir = ODD_DIR.into();
        r.target.filesystem = Some("tmpfs".into());
        r
    })
    .collect();
    let ev = evaluate(
        recs.as_slice(),
        &policy(),
        &Options::new(Scope::Run, at("2026-12-01T10:11:00Z")),
    );
    assert_eq!(ev.verdict, Verdict::Fail, "{}", ev.reason);
    assert!(!ev.warnings.is_empty());
    ev
}

/// Three equal runs on one day: too little evidence for a report, and other engines ran too.
fn inconclusive_eval() -> Held {
    let recs: Vec<Record> = ["09:00", "10:00", "11:00"]
        .iter()
        .map(|t| rec(&format!("2026-12-01T{t}:00Z"), 16.0))
        .collect();
    let mut o = Options::new(Scope::Report, at("2026-12-01T12:00:00Z"));
    o.other_engines.insert("psync".into(), 2);
    let ev = evaluate(recs.as_slice(), &policy(), &o);
    assert_eq!(ev.verdict, Verdict::Inconclusive, "{}", ev.reason);
    assert!(!ev.warnings.is_empty());
    ev
}

fn empty_eval() -> Held {
    evaluate(
        &[],
        &policy(),
        &Options::new(Scope::Report, at("2026-12-01T12:00:00Z")),
    )
}

/// The three cases every format is checked with.
fn cases() -> Vec<(&'static str, Held)> {
    vec![
        ("pass", pass_eval()),
        ("fail", fail_eval()),
        ("inconclusive", inconclusive_eval()),
    ]
}

fn out(format: Format, ev: &Held) -> String {
    let mut buf = Vec::new();
    render(format, &ev.0, &ev.1, &Style::default(), &mut buf).unwrap();
    String::from_utf8(buf).unwrap()
}

fn warning_texts(ev: &Evaluation) -> Vec<String> {
    ev.warnings.iter().map(|w| w.to_string()).collect()
}

fn one_line(s: &str) -> String {
    s.replace(['\n', '\r'], " ")
}

// ---- JSON -----------------------------------------------------------------------------

#[test]
fn json_has_the_contract_keys_the_verdict_and_the_warnings() {
    for (name, ev) in cases() {
        let v: serde_json::Value = serde_json::from_str(&out(Format::Json, &ev)).unwrap();
        assert_eq!(v["schema_version"], 1, "{name}");
        assert_eq!(v["tool"]["name"], "iopscheck");
        assert!(v["tool"]["version"].is_string());
        assert_eq!(v["policy"]["name"], "swimlane");
        assert!(v["policy"]["source"].is_string());
        assert_eq!(v["verdict"], name);
        let runs = v["runs"].as_array().unwrap();
        assert_eq!(runs.len(), ev.runs.len());
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
            assert!(runs[0].get(key).is_some(), "{name}: runs[] lacks {key}");
        }
        assert!(runs[0]["target"]["dir"].is_string());
        assert_eq!(v["summary"]["n"], ev.runs.len());
        assert_eq!(v["summary"]["days"], ev.evidence.days);
        let stats = &v["summary"]["metrics"]["write_iops_formula"];
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
            assert!(stats[key].is_number(), "{name}: summary lacks {key}");
        }
        let rule = &v["rules"][0];
        assert_eq!(rule["metric"], "write_iops_formula");
        assert_eq!(rule["op"], ">=");
        assert_eq!(rule["threshold"], 3000.0);
        assert_eq!(rule["level"], "fail");
        assert!(rule["value"].is_number());
        assert_eq!(rule["passed"], name != "fail");
        let warnings: Vec<&str> = v["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|w| w.as_str().unwrap())
            .collect();
        assert_eq!(warnings, warning_texts(&ev), "{name}");
    }
}

// ---- CSV ------------------------------------------------------------------------------

#[test]
fn csv_has_a_header_and_one_row_per_run_with_rule_metrics_first() {
    for (name, ev) in cases() {
        let text = out(Format::Csv, &ev);
        let mut rd = csv::Reader::from_reader(text.as_bytes());
        let header: Vec<String> = rd.headers().unwrap().iter().map(String::from).collect();
        assert_eq!(
            &header[..9],
            &[
                "timestamp",
                "host",
                "engine",
                "source",
                "dir",
                "policy",
                // the policy's rules, in its order
                "write_iops_formula",
                "write_bw_mb_s",
                "write_iops",
            ],
            "{name}"
        );
        const AFTER: [&str; 9] = [
            "result",
            "size",
            "runtime",
            "overrides",
            "deviations",
            "verdict",
            "reason",
            "warnings",
            "judged_on",
        ];
        assert_eq!(&header[header.len() - AFTER.len()..], &AFTER);
        let others = &header[9..header.len() - AFTER.len()];
        let mut sorted = others.to_vec();
        sorted.sort();
        assert_eq!(others, &sorted[..], "the other metrics are sorted");
        assert!(others.contains(&"write_runtime_ms".to_string()));

        let rows: Vec<csv::StringRecord> = rd.records().map(|r| r.unwrap()).collect();
        assert_eq!(rows.len(), ev.runs.len(), "{name}: one row per run");
        let col = |n: &str| header.iter().position(|h| h == n).unwrap();
        for (row, run) in rows.iter().zip(&ev.runs) {
            assert_eq!(row.len(), header.len());
            let ts = DateTime::parse_from_rfc3339(&row[col("timestamp")]).unwrap();
            assert_eq!(ts, run.timestamp);
            assert_eq!(&row[col("dir")], run.target.dir, "quoting round-trips");
            assert_eq!(&row[col("source")], "native");
            let v: f64 = row[col("write_iops_formula")].parse().unwrap();
            assert_eq!(v, run.metrics["write_iops_formula"], "full precision");
            // the job as recorded
            assert_eq!(&row[col("size")], "4294967296");
            assert_eq!(&row[col("runtime")], "60");
        }
        // the set's verdict and reason on the first row only: no run's row reads as its verdict
        assert_eq!(&rows[0][col("verdict")], name);
        assert_eq!(&rows[0][col("reason")], ev.reason);
        assert!(rows[1..].iter().all(|r| r[col("verdict")].is_empty()));
        // warnings: the verdict's context, then every warning, on the first row, one per line
        let expected: Vec<String> = iopscheck::testing::report::verdict_context(&ev)
            .iter()
            .chain(warning_texts(&ev).iter())
            .map(|w| one_line(w))
            .collect();
        let got: Vec<&str> = rows[0][col("warnings")].split('\n').collect();
        assert_eq!(got, expected, "{name}");
        assert!(rows[1..].iter().all(|r| r[col("warnings")].is_empty()));
    }
}

#[test]
fn csv_gives_each_run_its_own_result_and_lists_the_runs_not_counted() {
    // 10.5, 12.5 and 10.8 MB/s: 2688, 3200 and 2764.8 IOPS by the formula; the mean fails
    let ev = fail_eval();
    let text = out(Format::Csv, &ev);
    let mut rd = csv::Reader::from_reader(text.as_bytes());
    let header = rd.headers().unwrap().clone();
    let col = |n: &str| header.iter().position(|h| h == n).unwrap();
    let rows: Vec<csv::StringRecord> = rd.records().map(|r| r.unwrap()).collect();
    let results: Vec<&str> = rows.iter().map(|r| &r[col("result")]).collect();
    // on tmpfs, a test that flatters the disk: a run that misses fails, one that meets the
    // threshold is no pass
    assert_eq!(
        results,
        [
            "fail",
            "not judged: target tmpfs (in RAM) instead of a disk",
            "fail"
        ]
    );
    // tmpfs flatters: named on each run's row
    assert!(
        rows.iter()
            .all(|r| r[col("deviations")].contains("target tmpfs (in RAM)"))
    );
    assert_eq!(&rows[0][col("verdict")], "fail");

    // a report with quick looks: the policy's runs judged, the others listed as not counted
    let mut recs: Vec<Record> = (0..6)
        .map(|i| rec(&format!("2026-12-0{}T0{i}:00:00Z", 1 + i / 3), 16.0))
        .collect();
    for i in 0..4 {
        let mut q = rec(&format!("2026-12-02T0{}:30:00Z", i), 90.0);
        q.job.size = Some(64 << 20);
        q.overrides.insert("size".into(), "64m".into());
        recs.push(q);
    }
    let ev = evaluate(
        recs.as_slice(),
        &policy(),
        &Options::new(Scope::Report, at("2026-12-02T18:00:00Z")),
    );
    assert_eq!(ev.verdict, Verdict::Pass, "{}", ev.reason);
    let text = out(Format::Csv, &ev);
    let mut rd = csv::Reader::from_reader(text.as_bytes());
    let header = rd.headers().unwrap().clone();
    let col = |n: &str| header.iter().position(|h| h == n).unwrap();
    let rows: Vec<csv::StringRecord> = rd.records().map(|r| r.unwrap()).collect();
    assert_eq!(rows.len(), 10);
    let not_counted: Vec<&csv::StringRecord> = rows
        .iter()
        .filter(|r| r[col("result")].starts_with("not counted: "))
        .collect();
    assert_eq!(not_counted.len(), 4);
    for r in &not_counted {
        assert_eq!(
            &r[col("result")],
            "not counted: size 64 MiB instead of 4 GiB"
        );
        assert_eq!(&r[col("size")], "67108864");
        // neutralised as a spreadsheet formula would be (OWASP), shown as the text it is
        assert_eq!(&r[col("overrides")], "'--size 64m");
    }
    assert!(rows[0][col("warnings")].contains("4 runs not counted: size 64 MiB instead of 4 GiB"));
}

#[test]
fn csv_leaves_a_metric_a_run_lacks_empty_and_without_runs_is_the_header_alone() {
    let ev = pass_eval();
    let text = out(Format::Csv, &ev);
    let mut rd = csv::Reader::from_reader(text.as_bytes());
    let header = rd.headers().unwrap().clone();
    let p99 = header
        .iter()
        .position(|h| h == "write_clat_p99_us")
        .unwrap();
    let cells: Vec<String> = rd.records().map(|r| r.unwrap()[p99].to_string()).collect();
    assert_eq!(cells, ["310.5", "", "312.5", "", "314.5", ""]);

    let text = out(Format::Csv, &empty_eval());
    let mut rd = csv::Reader::from_reader(text.as_bytes());
    assert_eq!(&rd.headers().unwrap()[0], "timestamp");
    assert_eq!(rd.records().count(), 0);
}

// ---- Prometheus -----------------------------------------------------------------------

#[derive(Debug)]
struct Sample {
    name: String,
    labels: BTreeMap<String, String>,
    value: f64,
}

struct Exposition {
    samples: Vec<Sample>,
    comments: Vec<String>,
}

impl Exposition {
    fn get(&self, name: &str, with: &[(&str, &str)]) -> Vec<&Sample> {
        self.samples
            .iter()
            .filter(|s| s.name == name)
            .filter(|s| {
                with.iter()
                    .all(|(k, v)| s.labels.get(*k).map(String::as_str) == Some(v))
            })
            .collect()
    }
    fn one(&self, name: &str, with: &[(&str, &str)]) -> f64 {
        let s = self.get(name, with);
        assert_eq!(s.len(), 1, "{name} {with:?}: {s:?}");
        s[0].value
    }
}

fn metric_name_ok(s: &str) -> bool {
    let mut c = s.chars();
    matches!(c.next(), Some(ch) if ch.is_ascii_alphabetic() || ch == '_' || ch == ':')
        && c.all(|ch| ch.is_ascii_alphanumeric() || ch == '_' || ch == ':')
}

fn label_name_ok(s: &str) -> bool {
    let mut c = s.chars();
    !s.starts_with("__")
        && matches!(c.next(), Some(ch) if ch.is_ascii_alphabetic() || ch == '_')
        && c.all(|ch| ch.is_ascii_alphanumeric() || ch == '_')
}

/// A float as Prometheus reads it (Go's ParseFloat): NaN, ±Inf or a decimal number.
fn prom_float(s: &str) -> Result<f64, String> {
    match s {
        "NaN" => Ok(f64::NAN),
        "+Inf" | "Inf" => Ok(f64::INFINITY),
        "-Inf" => Ok(f64::NEG_INFINITY),
        _ if s
            .chars()
            .all(|c| c.is_ascii_digit() || matches!(c, '.' | 'e' | 'E' | '+' | '-')) =>
        {
            s.parse().map_err(|e| format!("value {s:?}: {e}"))
        }
        _ => Err(format!("value {s:?} is not a float")),
    }
}

/// The label set `{a="x",b="y"}` at the start of `s`; returns it and the rest of the line.
fn parse_labels(s: &str) -> Result<(BTreeMap<String, String>, &str), String> {
    let mut labels = BTreeMap::new();
    let mut rest = s.strip_prefix('{').unwrap();
    loop {
        if let Some(r) = rest.strip_prefix('}') {
            return Ok((labels, r));
        }
        let eq = rest.find('=').ok_or("label without '='")?;
        let name = &rest[..eq];
        if !label_name_ok(name) {
            return Err(format!("bad label name {name:?}"));
        }
        rest = rest[eq + 1..]
            .strip_prefix('"')
            .ok_or("label value not quoted")?;
        let mut value = String::new();
        let mut chars = rest.char_indices();
        let end = loop {
            match chars.next() {
                None => return Err("unterminated label value".into()),
                Some((i, '"')) => break i,
                Some((_, '\\')) => match chars.next() {
                    Some((_, '\\')) => value.push('\\'),
                    Some((_, '"')) => value.push('"'),
                    Some((_, 'n')) => value.push('\n'),
                    other => return Err(format!("bad escape {other:?}")),
                },
                Some((_, '\n')) => return Err("raw newline in label value".into()),
                Some((_, c)) => value.push(c),
            }
        };
        if labels.insert(name.to_string(), value).is_some() {
            return Err(format!("label {name} twice"));
        }
        rest = &rest[end + 1..];
        if let Some(r) = rest.strip_prefix(',') {
            rest = r;
        } else if !rest.starts_with('}') {
            return Err("expected ',' or '}' after a label".into());
        }
    }
}

/// A strict reader of the text exposition format 0.0.4 as node_exporter's textfile collector
/// takes it: HELP and TYPE once per family and before its samples, families not interleaved,
/// valid names, label syntax and escapes, float values, no timestamps, no duplicate series,
/// gauges not named `_total`, and a final line feed.
fn check_exposition(text: &str) -> Result<Exposition, String> {
    if !text.ends_with('\n') {
        return Err("the last line must end with a line feed".into());
    }
    let mut help: BTreeMap<String, usize> = BTreeMap::new();
    let mut types: BTreeMap<String, String> = BTreeMap::new();
    let mut closed: Vec<String> = Vec::new();
    let mut current: Option<String> = None;
    let mut series = std::collections::BTreeSet::new();
    let mut samples = Vec::new();
    let mut comments = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let at = |m: String| format!("line {}: {m}: {line:?}", n + 1);
        if line.is_empty() {
            continue;
        }
        if let Some(meta) = line.strip_prefix("# HELP ") {
            let (name, _) = meta
                .split_once(' ')
                .ok_or_else(|| at("HELP without text".into()))?;
            if !metric_name_ok(name) || help.insert(name.into(), n).is_some() {
                return Err(at("bad or repeated HELP".into()));
            }
            if samples.iter().any(|s: &Sample| s.name == name) {
                return Err(at("HELP after samples".into()));
            }
            continue;
        }
        if let Some(meta) = line.strip_prefix("# TYPE ") {
            let (name, ty) = meta
                .split_once(' ')
                .ok_or_else(|| at("TYPE without type".into()))?;
            if !["counter", "gauge", "histogram", "summary", "untyped"].contains(&ty) {
                return Err(at(format!("unknown type {ty}")));
            }
            if ty == "gauge" && name.ends_with("_total") {
                return Err(at("a gauge named _total".into()));
            }
            if types.insert(name.into(), ty.into()).is_some() {
                return Err(at("TYPE twice".into()));
            }
            if samples.iter().any(|s: &Sample| s.name == name) {
                return Err(at("TYPE after samples".into()));
            }
            continue;
        }
        if let Some(c) = line.strip_prefix('#') {
            comments.push(c.trim_start().to_string());
            continue;
        }
        let name_end = line
            .find(['{', ' '])
            .ok_or_else(|| at("sample without value".into()))?;
        let name = &line[..name_end];
        if !metric_name_ok(name) {
            return Err(at("bad metric name".into()));
        }
        if !types.contains_key(name) || !help.contains_key(name) {
            return Err(at("sample before its HELP and TYPE".into()));
        }
        if current.as_deref() != Some(name) {
            if closed.iter().any(|c| c == name) {
                return Err(at("family interleaved with another".into()));
            }
            if let Some(c) = current.take() {
                closed.push(c);
            }
            current = Some(name.to_string());
        }
        let (labels, rest) = if line[name_end..].starts_with('{') {
            parse_labels(&line[name_end..]).map_err(at)?
        } else {
            (BTreeMap::new(), &line[name_end..])
        };
        let rest = rest
            .strip_prefix(' ')
            .ok_or_else(|| at("no space before the value".into()))?;
        let fields: Vec<&str> = rest.split(' ').collect();
        if fields.len() != 1 {
            return Err(at(
                "timestamps are not allowed in the textfile collector".into()
            ));
        }
        let value = prom_float(fields[0]).map_err(at)?;
        if !series.insert(format!("{name}{labels:?}")) {
            return Err(at("duplicate series".into()));
        }
        samples.push(Sample {
            name: name.into(),
            labels,
            value,
        });
    }
    Ok(Exposition { samples, comments })
}

/// `promtool check metrics` where Prometheus's tool is installed.
fn promtool(text: &str) {
    let child = Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn();
    let Ok(mut child) = child else {
        static SAID: std::sync::Once = std::sync::Once::new();
        SAID.call_once(|| println!("skipped: promtool not installed"));
        return;
    };
    child
        .stdin
        .take()
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    let o = child.wait_with_output().unwrap();
    assert!(
        o.status.success(),
        "promtool check metrics:\n{}{}\n--- input ---\n{text}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
}

#[test]
fn prometheus_exposition_is_valid_and_carries_verdict_rules_and_warnings() {
    for (name, ev) in cases().into_iter().chain([("inconclusive", empty_eval())]) {
        let text = out(Format::Prometheus, &ev);
        promtool(&text);
        let x = check_exposition(&text).unwrap_or_else(|e| panic!("{name}: {e}\n{text}"));

        // every series says what was judged
        for s in &x.samples {
            for l in ["policy", "host", "dir", "engine"] {
                assert!(s.labels.contains_key(l), "{} lacks {l}", s.name);
            }
        }
        let verdict = x.one("iopscheck_verdict", &[]);
        match ev.verdict {
            Verdict::Pass => assert_eq!(verdict, 1.0),
            Verdict::Fail => assert_eq!(verdict, 0.0),
            Verdict::Inconclusive => assert!(verdict.is_nan()),
        }
        for v in ["pass", "fail", "inconclusive"] {
            let want = if v == name { 1.0 } else { 0.0 };
            assert_eq!(x.one("iopscheck_verdict_state", &[("verdict", v)]), want);
        }
        assert_eq!(x.one("iopscheck_runs", &[]), ev.runs.len() as f64);
        assert_eq!(x.one("iopscheck_run_dates", &[]), ev.evidence.days as f64);
        assert_eq!(x.one("iopscheck_warnings", &[]), ev.warnings.len() as f64);
        // the warnings themselves, as comments
        for w in warning_texts(&ev) {
            let w = one_line(&w);
            assert!(
                x.comments.iter().any(|c| c.ends_with(&w)),
                "{name}: warning not in comments: {w}"
            );
        }
        let rule = [
            ("metric", "write_iops_formula"),
            ("level", "fail"),
            ("op", ">="),
        ];
        assert_eq!(x.one("iopscheck_rule_threshold", &rule), 3000.0);
        if ev.runs.is_empty() {
            assert!(x.get("iopscheck_rule_value", &rule).is_empty());
            assert!(
                x.get("iopscheck_last_run_timestamp_seconds", &[])
                    .is_empty()
            );
            continue;
        }
        assert_eq!(
            x.one("iopscheck_rule_value", &rule),
            ev.rules[0].value.unwrap()
        );
        assert_eq!(
            x.one("iopscheck_rule_passed", &rule),
            if name == "fail" { 0.0 } else { 1.0 }
        );
        let last = ev.runs.iter().map(|r| r.timestamp).max().unwrap();
        assert_eq!(
            x.one("iopscheck_last_run_timestamp_seconds", &[]),
            last.timestamp() as f64
        );
    }
}

#[test]
fn prometheus_label_values_are_escaped_and_read_back_unchanged() {
    let ev = fail_eval();
    let text = out(Format::Prometheus, &ev);
    let x = check_exposition(&text).unwrap();
    let v = x.get("iopscheck_verdict", &[("dir", ODD_DIR)]);
    assert_eq!(v.len(), 1, "{text}");
    assert_eq!(v[0].labels["host"], "node1");
    assert_eq!(v[0].labels["engine"], "posixaio");
}

#[test]
fn the_strict_checker_rejects_what_prometheus_would() {
    let ok = "# HELP a_b x\n# TYPE a_b gauge\na_b{l=\"v\"} 1\n";
    assert!(check_exposition(ok).is_ok());
    for bad in [
        "a_b 1\n",                                                     // no HELP/TYPE
        "# HELP a_b x\n# TYPE a_b gauge\na_b{l=\"v\"} 1",              // no final newline
        "# HELP a_b x\n# TYPE a_b gauge\na_b{l=\"v\\t\"} 1\n",         // bad escape
        "# HELP a_b x\n# TYPE a_b gauge\na_b{l=\"v\"} one\n",          // not a float
        "# HELP a_b x\n# TYPE a_b gauge\na_b{l=\"v\"} 1 1700000000\n", // timestamp
        "# HELP a_b x\n# TYPE a_b gauge\na_b 1\na_b 2\n",              // duplicate series
        "# HELP a_total x\n# TYPE a_total gauge\na_total 1\n",         // gauge named _total
    ] {
        assert!(check_exposition(bad).is_err(), "accepted: {bad:?}");
    }
}

#[test]
fn prometheus_file_is_replaced_atomically_with_nothing_left_behind() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("iopscheck.prom");
    std::fs::write(&path, "stale\n").unwrap();
    let ev = fail_eval();
    iopscheck::testing::report::write_file(
        Format::Prometheus,
        &ev.0,
        &ev.1,
        &Style::default(),
        &iopscheck::testing::report::OutputFile::open(&path).unwrap(),
    )
    .unwrap();
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        out(Format::Prometheus, &ev)
    );
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, ["iopscheck.prom"], "no temporary file is left");
}

// ---- JUnit ----------------------------------------------------------------------------

fn xml(text: &str) -> roxmltree::Document<'_> {
    // The HTML report starts with the HTML5 doctype, which roxmltree refuses unless asked.
    let opts = roxmltree::ParsingOptions {
        allow_dtd: true,
        ..Default::default()
    };
    roxmltree::Document::parse_with_options(text, opts)
        .unwrap_or_else(|e| panic!("not well-formed XML: {e}\n{text}"))
}

fn elements<'a, 'i>(
    doc: &'a roxmltree::Document<'i>,
    tag: &'a str,
) -> impl Iterator<Item = roxmltree::Node<'a, 'i>> + 'a {
    doc.descendants()
        .filter(move |n| n.is_element() && n.tag_name().name() == tag)
}

fn count_attr(n: roxmltree::Node, a: &str) -> usize {
    n.attribute(a).unwrap().parse().unwrap()
}

#[test]
fn junit_has_one_case_per_rule_and_fails_exactly_when_the_verdict_is_fail() {
    for (name, ev) in cases() {
        let text = out(Format::Junit, &ev);
        let doc = xml(&text);
        let root = doc.root_element();
        assert_eq!(root.tag_name().name(), "testsuites");
        let suite = elements(&doc, "testsuite").next().unwrap();
        assert_eq!(suite.attribute("name"), Some("iopscheck swimlane"));
        let cases: Vec<_> = elements(&doc, "testcase").collect();
        let extra = usize::from(ev.scope == Scope::Report); // the evidence rule
        assert_eq!(cases.len(), ev.rules.len() + extra, "{name}");
        assert_eq!(count_attr(suite, "tests"), cases.len());
        for c in &cases {
            assert_eq!(c.attribute("classname"), Some("iopscheck.swimlane"));
        }
        assert_eq!(
            cases[0].attribute("name"),
            Some("write_iops_formula >= 3000")
        );

        let failures: Vec<_> = elements(&doc, "failure").collect();
        let skipped = elements(&doc, "skipped").count();
        assert_eq!(count_attr(suite, "failures"), failures.len(), "{name}");
        assert_eq!(count_attr(root, "failures"), failures.len());
        assert_eq!(count_attr(suite, "skipped"), skipped);
        assert_eq!(failures.is_empty(), ev.verdict != Verdict::Fail, "{name}");

        let verdict = elements(&doc, "property")
            .find(|p| p.attribute("name") == Some("verdict"))
            .and_then(|p| p.attribute("value"));
        assert_eq!(verdict, Some(name));
        let log = suite
            .children()
            .find(|n| n.tag_name().name() == "system-out")
            .and_then(|n| n.text())
            .unwrap();
        for w in warning_texts(&ev) {
            assert!(
                log.contains(&w),
                "{name}: warning missing from system-out: {w}"
            );
        }
        assert!(log.contains(&name.to_uppercase()));
    }
}

#[test]
fn junit_failure_carries_the_value_and_the_threshold() {
    let ev = fail_eval();
    let doc_text = out(Format::Junit, &ev);
    let doc = xml(&doc_text);
    let f = elements(&doc, "failure").next().unwrap();
    let case = f.parent().unwrap();
    assert_eq!(case.attribute("name"), Some("write_iops_formula >= 3000"));
    let value = ev.rules[0].value.unwrap();
    let msg = f.attribute("message").unwrap();
    assert_eq!(
        msg,
        format!(
            "mean write_iops_formula is {} IOPS, threshold ≥ 3000 IOPS",
            iopscheck::testing::numbers::fmt_precise(value)
        )
    );
    assert!(value < 3000.0);
    // the body lists each run, so a CI log shows which ones missed
    let body = f.text().unwrap();
    assert_eq!(body.matches("misses").count(), 2, "{body}");
    assert_eq!(body.matches("meets").count(), 1, "{body}");
}

#[test]
fn junit_inconclusive_is_an_error_with_the_reason_never_green() {
    let ev = inconclusive_eval();
    let text = out(Format::Junit, &ev);
    let doc = xml(&text);
    let first = elements(&doc, "testcase").next().unwrap();
    let error = first
        .children()
        .find(|n| n.tag_name().name() == "error")
        .expect("the deciding rule is an error");
    assert_eq!(error.attribute("type"), Some("inconclusive"));
    let msg = error.attribute("message").unwrap();
    assert!(
        msg.starts_with("inconclusive: not enough evidence"),
        "{msg}"
    );
    let evidence = elements(&doc, "testcase")
        .find(|c| c.attribute("name").unwrap().starts_with("evidence"))
        .unwrap();
    assert!(evidence.children().any(|n| n.tag_name().name() == "error"));
    // the suite counts the errors: a CI gate on errors + failures goes red
    let suite = elements(&doc, "testsuite").next().unwrap();
    let errors: usize = suite.attribute("errors").unwrap().parse().unwrap();
    assert_eq!(errors, 2);
    assert_eq!(suite.attribute("failures"), Some("0"));
}

#[test]
fn junit_a_missed_soft_limit_fails_only_under_strict() {
    let mut p = policy();
    p.rules.push(Rule {
        metric: "write_clat_p99_us".into(),
        op: Op::Le,
        threshold: 100.0,
        per: None,
        level: Level::Warn,
        note: None,
    });
    let recs: Vec<Record> = (0..3)
        .map(|i| {
            let mut r = rec(&format!("2026-12-01T1{i}:00:00Z"), 16.0);
            r.metrics.insert("write_clat_p99_us".into(), 450.0);
            r
        })
        .collect();
    let mut o = Options::new(Scope::Run, at("2026-12-01T18:00:00Z"));
    for strict in [false, true] {
        o.strict = strict;
        let ev = evaluate(recs.as_slice(), &p, &o);
        let text = out(Format::Junit, &ev);
        let doc = xml(&text);
        let case = elements(&doc, "testcase")
            .find(|c| c.attribute("name") == Some("write_clat_p99_us <= 100"))
            .unwrap();
        let has = |tag: &str| case.children().any(|n| n.tag_name().name() == tag);
        assert_eq!(has("failure"), strict);
        assert_eq!(
            has("skipped"),
            !strict,
            "a soft miss is visible, not silent"
        );
        assert_eq!(ev.verdict == Verdict::Fail, strict);
    }
}

// ---- HTML -----------------------------------------------------------------------------

fn class_has(n: &roxmltree::Node, class: &str) -> bool {
    n.attribute("class")
        .is_some_and(|c| c.split_whitespace().any(|x| x == class))
}

fn num(n: &roxmltree::Node, a: &str) -> f64 {
    let v: f64 = n.attribute(a).unwrap().parse().unwrap();
    assert!(v.is_finite());
    v
}

/// The points of the chart, in document order, and the threshold line's y.
fn chart(doc: &roxmltree::Document) -> (Vec<(f64, f64, String)>, f64) {
    let svg = elements(doc, "svg").next().expect("an SVG chart");
    let points: Vec<(f64, f64, String)> = svg
        .descendants()
        .filter(|n| n.tag_name().name() == "circle" && class_has(n, "run"))
        .map(|c| {
            let tip = c
                .children()
                .find(|n| n.tag_name().name() == "title")
                .and_then(|t| t.text())
                .expect("each point has a tooltip")
                .to_string();
            (num(&c, "cx"), num(&c, "cy"), tip)
        })
        .collect();
    let threshold: Vec<_> = svg
        .descendants()
        .filter(|n| n.tag_name().name() == "line" && class_has(n, "threshold"))
        .collect();
    assert_eq!(threshold.len(), 1, "one threshold line");
    let (y1, y2) = (num(&threshold[0], "y1"), num(&threshold[0], "y2"));
    assert_eq!(y1, y2, "the threshold is horizontal");
    // everything inside the viewBox
    let vb: Vec<f64> = svg
        .attribute("viewBox")
        .unwrap()
        .split(' ')
        .map(|v| v.parse().unwrap())
        .collect();
    for (x, y, _) in &points {
        assert!(*x >= 0.0 && *x <= vb[2] && *y >= 0.0 && *y <= vb[3]);
    }
    assert!(y1 >= 0.0 && y1 <= vb[3]);
    (points, y1)
}

#[test]
fn html_is_well_formed_self_contained_and_carries_verdict_and_warnings() {
    for (name, ev) in cases() {
        let text = out(Format::Html, &ev);
        let doc = xml(&text);
        // no script, no event handlers, nothing fetched from elsewhere
        for n in doc.descendants().filter(|n| n.is_element()) {
            let tag = n.tag_name().name();
            assert!(
                !["script", "link", "img", "iframe", "object", "embed"].contains(&tag),
                "{name}: <{tag}>"
            );
            for a in n.attributes() {
                assert!(!a.name().starts_with("on"), "{name}: {} handler", a.name());
                assert_ne!(a.name(), "src");
                if a.name() == "href" {
                    assert!(a.value().starts_with("https://"), "{}", a.value());
                }
            }
        }
        let title = elements(&doc, "title").next().unwrap().text().unwrap();
        assert!(title.contains(&name.to_uppercase()), "{title}");
        let banner = doc
            .descendants()
            .find(|n| n.attribute("id") == Some("verdict"))
            .unwrap();
        assert!(class_has(&banner, name));
        let banner_text: String = banner.descendants().filter_map(|n| n.text()).collect();
        assert!(banner_text.contains(&name.to_uppercase()));
        assert!(banner_text.contains(&ev.reason));

        let items: Vec<String> = doc
            .descendants()
            .filter(|n| n.tag_name().name() == "li" && class_has(n, "warning"))
            .map(|n| n.text().unwrap().to_string())
            .collect();
        assert_eq!(items, warning_texts(&ev), "{name}");

        let (points, _) = chart(&doc);
        assert_eq!(points.len(), ev.runs.len(), "{name}: one point per run");
        let rows = doc
            .descendants()
            .filter(|n| n.tag_name().name() == "tr" && class_has(n, "run"))
            .count();
        assert_eq!(rows, ev.runs.len());
        assert!(
            doc.descendants()
                .any(|n| n.attribute("href") == Some(ev.policy.url.as_str())),
            "links the policy's source"
        );
    }
}

#[test]
fn html_chart_puts_runs_on_the_right_side_of_the_threshold() {
    let ev = fail_eval();
    let text = out(Format::Html, &ev);
    let doc = xml(&text);
    let (points, threshold_y) = chart(&doc);
    for ((_, y, tip), run) in points.iter().zip(&ev.runs) {
        let v = run.metrics["write_iops_formula"];
        // SVG y grows downwards: higher IOPS are drawn above the line
        assert_eq!(*y < threshold_y, v >= 3000.0, "{tip}");
        assert!(
            tip.contains(&iopscheck::testing::numbers::fmt_value(v)),
            "{tip}"
        );
    }
    assert!(
        points.windows(2).all(|w| w[0].0 < w[1].0),
        "time runs left to right"
    );
    // the directory with markup characters is text, not markup
    assert!(text.contains("&lt;e&gt; &amp; |f|"));
    let svg_text: String = elements(&doc, "svg")
        .next()
        .unwrap()
        .descendants()
        .filter_map(|n| n.text())
        .collect();
    assert!(svg_text.contains("verdict: FAIL"));
    assert!(svg_text.contains("threshold ≥ 3000"));
}

#[test]
fn html_chart_handles_one_run_equal_runs_and_many_runs() {
    // one run: a single point, centred
    let one = evaluate(
        &[rec("2026-12-01T10:00:00Z", 16.4)],
        &policy(),
        &Options::new(Scope::Run, at("2026-12-01T11:00:00Z")),
    );
    let text = out(Format::Html, &one);
    let (points, ty) = chart(&xml(&text));
    assert_eq!(points.len(), 1);
    assert!(points[0].1 < ty, "4198 IOPS is above the 3000 line");

    // all equal (the inconclusive case): one height, distinct times
    let ev = inconclusive_eval();
    let text = out(Format::Html, &ev);
    let (points, ty) = chart(&xml(&text));
    assert!(points.iter().all(|p| p.1 == points[0].1));
    assert!(points[0].1 < ty);

    // forty runs over eight days, a slow decline through the threshold
    let recs: Vec<Record> = (0..40)
        .map(|i| {
            rec(
                &format!("2026-11-{:02}T{:02}:00:00Z", 20 + i / 5, 8 + (i % 5) * 2),
                13.0 - i as f64 * 0.06,
            )
        })
        .collect();
    let ev = evaluate(
        recs.as_slice(),
        &policy(),
        &Options::new(Scope::Report, at("2026-11-28T23:00:00Z")),
    );
    let text = out(Format::Html, &ev);
    let doc = xml(&text);
    let (points, ty) = chart(&doc);
    assert_eq!(points.len(), 40);
    assert!(points.iter().any(|p| p.1 < ty) && points.iter().any(|p| p.1 > ty));
    assert!(
        elements(&doc, "table").any(|t| class_has(&t, "days")),
        "per-day table"
    );

    // no runs: no chart, still a valid page with the verdict
    let text = out(Format::Html, &empty_eval());
    let doc = xml(&text);
    assert_eq!(elements(&doc, "circle").count(), 0);
    assert!(text.contains("INCONCLUSIVE"));
}

// ---- Markdown -------------------------------------------------------------------------

/// The cells of a GFM table row: split on `|` not escaped by a backslash.
fn md_cells(line: &str) -> Vec<String> {
    let inner = line.trim().trim_start_matches('|');
    let mut cells = vec![String::new()];
    let mut chars = inner.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                cells.last_mut().unwrap().push(c);
                if let Some(n) = chars.next() {
                    cells.last_mut().unwrap().push(n);
                }
            }
            '|' => cells.push(String::new()),
            c => cells.last_mut().unwrap().push(c),
        }
    }
    if cells.last().is_some_and(|c| c.trim().is_empty()) {
        cells.pop();
    }
    cells
}

/// Markdown text back to plain: backslash escapes removed.
fn md_plain(s: &str) -> String {
    let mut out = String::new();
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            if let Some(n) = chars.next() {
                out.push(n);
            }
        } else {
            out.push(c);
        }
    }
    out
}

#[test]
fn markdown_has_headings_tables_that_line_up_the_verdict_and_the_warnings() {
    for (name, ev) in cases() {
        let text = out(Format::Markdown, &ev);
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[0].starts_with("# iopscheck: swimlane"));
        assert!(lines[0].ends_with(&name.to_uppercase()));
        assert!(
            lines
                .iter()
                .any(|l| l.starts_with("**Verdict:") && l.contains(&name.to_uppercase()))
        );
        for h in ["## Runs", "## Rules", "## Evidence", "## Warnings"] {
            assert!(lines.contains(&h), "{name}: {h}");
        }
        // every table: same number of cells on each row, header then a separator row
        let mut i = 0;
        let mut tables = 0;
        while i < lines.len() {
            if lines[i].starts_with('|') {
                let width = md_cells(lines[i]).len();
                assert!(
                    md_cells(lines[i + 1]).iter().all(|c| c
                        .trim()
                        .trim_matches(':')
                        .chars()
                        .all(|c| c == '-'))
                );
                let mut rows = 0;
                while i < lines.len() && lines[i].starts_with('|') {
                    assert_eq!(md_cells(lines[i]).len(), width, "{name}: {}", lines[i]);
                    rows += 1;
                    i += 1;
                }
                if tables == 0 {
                    // the runs: header, separator, one row per run, the aggregate
                    assert_eq!(rows, ev.runs.len() + 3, "{name}");
                }
                tables += 1;
            }
            i += 1;
        }
        assert!(tables >= 2);
        let items: Vec<String> = lines
            .iter()
            .filter_map(|l| l.strip_prefix("- ⚠️ "))
            .map(md_plain)
            .collect();
        let expected: Vec<String> = warning_texts(&ev).iter().map(|w| one_line(w)).collect();
        assert_eq!(items, expected, "{name}");
    }
    // markup in a directory stays text
    let text = out(Format::Markdown, &fail_eval());
    assert!(!text.contains("<e>"));
    assert!(text.contains("\\<e\\>"));
}

// ---- table ----------------------------------------------------------------------------

#[test]
fn table_shows_runs_rules_evidence_warnings_and_verdict_within_100_columns() {
    for (name, ev) in cases() {
        // With --verbose: every warning whole (without, each warning's finding only).
        let mut buf = Vec::new();
        let verbose = Style {
            verbose: true,
            ..Style::default()
        };
        render(Format::Table, &ev.0, &ev.1, &verbose, &mut buf).unwrap();
        let text = String::from_utf8(buf).unwrap();
        // the verdict closes the output: its line, then only its own continuation lines
        let lines: Vec<&str> = text.lines().collect();
        let at = lines
            .iter()
            .rposition(|l| l.starts_with("verdict: "))
            .unwrap();
        // the verdict, then which evidence it is of, then why
        let flat = lines[at..]
            .iter()
            .map(|l| l.trim())
            .collect::<Vec<_>>()
            .join(" ");
        assert!(
            flat.starts_with(&format!(
                "verdict: {} {} — ",
                name.to_uppercase(),
                ev.judged_on()
            )),
            "{flat}"
        );
        assert!(lines[at + 1..].iter().all(|l| l.starts_with("         ")));
        let label = if ev.scope == Scope::Run {
            "history:"
        } else {
            "evidence:"
        };
        assert!(text.contains(label), "{name}");
        let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
        for w in warning_texts(&ev) {
            let w = w.split_whitespace().collect::<Vec<_>>().join(" ");
            assert!(flat.contains(&w), "{name}: {w}");
        }
        for l in text.lines() {
            assert!(
                l.chars().count() <= 100,
                "{name}: {} columns: {l}",
                l.chars().count()
            );
        }
    }
    let text = out(Format::Table, &pass_eval());
    assert!(text.contains("per day"));
}

// ---- all formats ----------------------------------------------------------------------

#[test]
fn every_format_renders_an_evaluation_without_runs() {
    let ev = empty_eval();
    for f in Format::ALL {
        let text = out(f, &ev);
        assert!(
            text.to_lowercase().contains("inconclusive") || f == Format::Csv,
            "{}: {text}",
            f.as_str()
        );
    }
}

// ---- runs that are not the policy's test ----------------------------------------------

/// Four imported runs: the policy's test at 16 MB/s (4096 IOPS by the formula: meets 3000),
/// a 64 MiB file at 8 MB/s (2048: misses, on a test that only flatters), and two runs on
/// psync, an engine the policy does not list, at 16 and 8 MB/s (either way: says nothing).
fn mixed_tests_eval() -> Held {
    let mut recs = vec![
        rec("2026-12-01T09:00:00Z", 16.0),
        rec("2026-12-01T10:00:00Z", 8.0),
        rec("2026-12-01T11:00:00Z", 16.0),
        rec("2026-12-01T12:00:00Z", 8.0),
    ];
    recs[1].job.size = Some(64 << 20);
    recs[2].engine = "psync".into();
    recs[3].engine = "psync".into();
    let ev = evaluate(
        recs.as_slice(),
        &policy(),
        &Options::new(Scope::Import, at("2026-12-01T13:00:00Z")),
    );
    assert_eq!(ev.verdict, Verdict::Inconclusive, "{}", ev.reason);
    ev
}

#[test]
fn a_figure_earns_only_the_mark_its_runs_test_can_give_in_every_format() {
    let ev = mixed_tests_eval();
    // (the run's deciding figure, as every format prints it)
    let want = ["4096 ✓", "2048 ✗", "4096", "2048"];

    // Markdown: the runs table's deciding column; the rules table says "not judged"
    let md = out(Format::Markdown, &ev);
    let rows: Vec<Vec<String>> = md
        .lines()
        .skip_while(|l| !l.starts_with("| # |"))
        .skip(2)
        .take(4)
        .map(md_cells)
        .collect();
    let got: Vec<String> = rows.iter().map(|r| md_plain(r[5].trim())).collect();
    assert_eq!(got, want, "{md}");
    let rules = md.split("## Rules").nth(1).unwrap();
    assert!(
        rules.contains("| not judged: not the policy's test |"),
        "{rules}"
    );
    assert!(!rules.contains('✅'), "{rules}");
    assert!(
        md.contains(
            "Runs 3, 4 are not the policy's test (ioengine psync instead of posixaio or io\\_uring)"
        ),
        "{md}"
    );
    assert!(
        md.contains("Run 2 is a test that flatters the disk (size 64 MiB instead of 4 GiB)"),
        "{md}"
    );

    // HTML: the same figures, their cells' classes, the chart's points and its shading
    let html = out(Format::Html, &ev);
    let doc = xml(&html);
    let runs_table = elements(&doc, "table")
        .find(|t| class_has(t, "runs"))
        .unwrap();
    let cells: Vec<(String, Option<&str>)> = runs_table
        .descendants()
        .filter(|n| n.tag_name().name() == "tr" && class_has(n, "run"))
        .map(|tr| {
            let td = tr
                .children()
                .filter(|n| n.tag_name().name() == "td")
                .nth(5)
                .unwrap();
            let class = ["pass", "fail"].into_iter().find(|c| class_has(&td, c));
            (td.text().unwrap().to_string(), class)
        })
        .collect();
    assert_eq!(
        cells,
        [
            ("4096 ✓".to_string(), Some("pass")),
            ("2048 ✗".to_string(), Some("fail")),
            ("4096".to_string(), None),
            ("2048".to_string(), None),
        ]
    );
    let (points, _) = chart(&doc);
    assert_eq!(points.len(), 4);
    let classes: Vec<&str> = elements(&doc, "circle")
        .filter(|c| class_has(c, "run"))
        .map(|c| c.attribute("class").unwrap())
        .collect();
    assert_eq!(
        classes,
        ["run pass", "run fail", "run unjudged", "run unjudged"]
    );
    assert!(points[2].2.contains("not judged"), "{}", points[2].2);
    let zone = elements(&doc, "rect")
        .find(|r| class_has(r, "zone"))
        .unwrap();
    assert!(
        class_has(&zone, "unjudged"),
        "the pass side is not shaded as a pass"
    );
    let rules_table = elements(&doc, "table")
        .find(|t| class_has(t, "rules"))
        .unwrap();
    assert!(
        !rules_table.descendants().any(|n| class_has(&n, "pass")),
        "no rule reads as met"
    );

    // CSV: each run's own result
    let csv_text = out(Format::Csv, &ev);
    let mut r = csv::Reader::from_reader(csv_text.as_bytes());
    let results: Vec<String> = r
        .deserialize::<BTreeMap<String, String>>()
        .map(|row| row.unwrap()["result"].clone())
        .collect();
    assert_eq!(
        results,
        [
            "pass",
            "fail",
            "not judged: ioengine psync instead of posixaio or io_uring",
            "not judged: ioengine psync instead of posixaio or io_uring",
        ]
    );

    // the terminal: the runs table, and the rule lines
    let table = out(Format::Table, &ev);
    let column = table
        .lines()
        .find(|l| l.contains("write_iops_formula"))
        .and_then(|l| l.split('┆').position(|c| c.contains("write_iops_formula")))
        .unwrap();
    let figures: Vec<String> = table
        .lines()
        .filter(|l| {
            l.strip_prefix("│ ")
                .is_some_and(|r| r.starts_with(char::is_numeric))
        })
        .filter_map(|l| l.split('┆').nth(column).map(|c| c.trim().to_string()))
        .collect();
    assert_eq!(figures, want, "{table}");
    assert!(
        table.contains("– decides  write_iops_formula") && table.contains("(not judged)"),
        "{table}"
    );

    // JUnit: no rule case passes
    let junit = out(Format::Junit, &ev);
    let doc = xml(&junit);
    for case in elements(&doc, "testcase") {
        assert!(
            case.children()
                .any(|n| ["failure", "error", "skipped"].contains(&n.tag_name().name())),
            "{:?} passes",
            case.attribute("name")
        );
    }
}

#[test]
fn an_import_of_another_test_shows_no_pass_mark_or_colour_anywhere() {
    // fio's own output of the Swimlane job on psync: not the policy's test, whatever it shows
    let env = common::Env::new();
    let f = common::fixture("fio-3.33-psync-randwrite.txt");
    let render = |format: &str| {
        let out = env
            .cmd()
            .arg("import")
            .arg(&f)
            .args(["--format", format])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(3), "{format}");
        String::from_utf8(out.stdout).unwrap()
    };
    for format in ["table", "markdown", "html", "csv", "junit", "summary"] {
        let text = render(format);
        assert!(!text.contains('✓'), "{format}: {text}");
        assert!(!text.contains('✅'), "{format}: {text}");
        assert!(!text.contains("meets"), "{format}: {text}");
    }
    let html = render("html");
    let page = scraper::Html::parse_document(&html);
    let sel = |s: &str| scraper::Selector::parse(s).unwrap();
    assert_eq!(
        page.select(&sel("main .pass, main .result.pass")).count(),
        0,
        "nothing in the pass colour"
    );
    assert_eq!(page.select(&sel("circle.run.unjudged")).count(), 1);
    assert!(page.select(&sel("rect.zone.unjudged")).count() >= 1);
    assert_eq!(page.select(&sel("rect.zone:not(.unjudged)")).count(), 0);
    let results: Vec<String> = page
        .select(&sel("table.rules td.result"))
        .map(|td| td.text().collect())
        .collect();
    assert_eq!(results, ["not judged: not the policy's test"; 3]);
    let csv_text = render("csv");
    let mut r = csv::Reader::from_reader(csv_text.as_bytes());
    let row: BTreeMap<String, String> = r.deserialize().next().unwrap().unwrap();
    assert!(
        row["result"].starts_with("not judged: ioengine psync instead of posixaio or io_uring"),
        "{}",
        row["result"]
    );
    let junit = render("junit");
    let doc = xml(&junit);
    assert_eq!(
        elements(&doc, "testcase")
            .filter(|c| c
                .children()
                .all(|n| !n.is_element() || n.tag_name().name() == "system-out"))
            .count(),
        0,
        "no case passes: {junit}"
    );
}
