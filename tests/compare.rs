//! `iopscheck compare` through the binary: the ratio and its interval against a computation
//! made here, independently, from the figures written to the history.

mod common;

use chrono::{DateTime, FixedOffset};
use common::Env;

/// `figures` (MB/s) for each host, three runs a day ending yesterday.
fn write(env: &Env, nodes: &[(&str, &[f64])]) -> Vec<DateTime<FixedOffset>> {
    let mut lines = String::new();
    let mut times = Vec::new();
    for (host, figures) in nodes {
        let (l, t) = common::three_a_day(host, "/data", figures);
        lines.push_str(&l);
        times.extend(t);
    }
    std::fs::write(&env.history, lines).unwrap();
    times
}

/// What the interval of the ratio of `a`'s and `b`'s mean IOPS (from MB/s figures, 4 KiB
/// blocks) is made of, computed here: each side's log mean by Cox (ȳ + s²/2, variance
/// s²/n + s⁴/(2(n−1))) and Welch–Satterthwaite's degrees of freedom rounded down. (the ratio
/// of the arithmetic means, each side's log mean, the two variances' sum, the degrees of
/// freedom)
fn cox_welch(a: &[f64], b: &[f64]) -> (f64, (f64, f64), f64, usize) {
    let iops = |v: &[f64]| -> Vec<f64> { v.iter().map(|m| m / 4.0 * 1024.0).collect() };
    let (a, b) = (iops(a), iops(b));
    let cox = |v: &[f64]| {
        let n = v.len() as f64;
        let l: Vec<f64> = v.iter().map(|x| x.ln()).collect();
        let m = l.iter().sum::<f64>() / n;
        let s2 = l.iter().map(|y| (y - m) * (y - m)).sum::<f64>() / (n - 1.0);
        (m + s2 / 2.0, s2 / n + s2 * s2 / (2.0 * (n - 1.0)), n - 1.0)
    };
    let ((la, va, fa), (lb, vb, fb)) = (cox(&a), cox(&b));
    let df = ((va + vb).powi(2) / (va * va / fa + vb * vb / fb)).floor() as usize;
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    (mean(&a) / mean(&b), (la, lb), va + vb, df)
}

/// The ratio of the arithmetic means and its 95% interval, computed here ([`cox_welch`]),
/// Student's t from a printed table.
fn expected(a: &[f64], b: &[f64]) -> (f64, f64, f64) {
    let (ratio, (la, lb), var, df) = cox_welch(a, b);
    const T: [f64; 12] = [
        12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179,
    ];
    let half = T[df - 1] * var.sqrt();
    (ratio, (la - lb - half).exp(), (la - lb + half).exp())
}

const NODE7: [f64; 6] = [9.0, 10.0, 8.5, 9.5, 10.5, 9.2];
const NODE3: [f64; 6] = [15.0, 16.5, 14.0, 15.5, 17.0, 15.8];

/// node7 against node3.
const SEVEN_VS_THREE: [&str; 5] = ["compare", "--host", "node7", "--vs-host", "node3"];

/// `iopscheck ARGS --format json`: exit 0 (else its stderr is shown), and the JSON.
fn json(env: &Env, args: &[&str]) -> serde_json::Value {
    let out = env
        .cmd()
        .args(args)
        .args(["--format", "json"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The first row of a CSV output, by column name.
fn csv_row(out: &[u8]) -> std::collections::HashMap<String, String> {
    let mut rd = csv::Reader::from_reader(out);
    let headers = rd.headers().unwrap().clone();
    let row = rd.records().next().unwrap().unwrap();
    headers
        .iter()
        .zip(row.iter())
        .map(|(h, v)| (h.to_string(), v.to_string()))
        .collect()
}

#[test]
fn two_nodes_ratio_and_interval_are_those_computed_independently_in_every_format() {
    let env = Env::new();
    write(&env, &[("node7", &NODE7), ("node3", &NODE3)]);
    let (ratio, low, high) = expected(&NODE7, &NODE3);
    assert!(high < 1.0, "the case is a real difference: {low}–{high}");
    let cmd = |format: &str| {
        env.cmd()
            .args(SEVEN_VS_THREE)
            .args(["--format", format])
            .output()
            .unwrap()
    };
    let j = json(&env, &SEVEN_VS_THREE);
    assert_eq!(j["kind"], "comparison");
    assert!((j["ratio"].as_f64().unwrap() - ratio).abs() < 1e-12, "{j}");
    assert!((j["ci95_low"].as_f64().unwrap() - low).abs() < 1e-9, "{j}");
    assert!(
        (j["ci95_high"].as_f64().unwrap() - high).abs() < 1e-9,
        "{j}"
    );
    assert_eq!(
        (j["real"].as_bool(), j["alpha"].as_f64()),
        (Some(true), Some(0.05))
    );
    assert_eq!(
        (j["a"]["label"].as_str(), j["a"]["n"].as_u64()),
        (Some("node7"), Some(6))
    );
    let sentence = format!(
        "node7 is {ratio:.2}× node3 in mean write_iops_formula (95% CI {low:.2}–{high:.2}): a real difference at α 0.05"
    );
    assert_eq!(j["sentence"], sentence.as_str());
    for format in [
        "table",
        "summary",
        "jsonl",
        "markdown",
        "html",
        "junit",
        "prometheus",
    ] {
        let out = cmd(format);
        assert_eq!(out.status.code(), Some(0), "{format}");
        let text = String::from_utf8(out.stdout).unwrap();
        // Markdown escapes its punctuation; the figures and words stay.
        let plain = text.replace('\\', "");
        assert!(
            plain.contains(&format!("{ratio:.2}× node3"))
                && plain.contains(&format!("{low:.2}–{high:.2}")),
            "{format}:\n{text}"
        );
    }
    let col = csv_row(&cmd("csv").stdout);
    assert!((col["ratio"].parse::<f64>().unwrap() - ratio).abs() < 1e-12);
    assert_eq!(col["real"], "true");
}

#[test]
fn the_same_node_before_and_after_a_date_and_a_side_too_thin() {
    let env = Env::new();
    // Node1 slowed down by half from its fourth day.
    let mut figures: Vec<f64> = NODE3.to_vec();
    figures.extend(NODE3.iter().map(|m| m / 2.0));
    let times = write(&env, &[("node1", &figures)]);
    let at = times[6].format("%Y-%m-%dT%H:%M:%S%:z").to_string();
    let j = json(&env, &["compare", "--host", "node1", "--at", &at]);
    let after: Vec<f64> = figures[6..].to_vec();
    let (ratio, low, high) = expected(&after, &figures[..6]);
    assert!((j["ratio"].as_f64().unwrap() - ratio).abs() < 1e-12 && (ratio - 0.5).abs() < 1e-9);
    assert!((j["ci95_low"].as_f64().unwrap() - low).abs() < 1e-9);
    assert!((j["ci95_high"].as_f64().unwrap() - high).abs() < 1e-9);
    assert!(j["a"]["label"].as_str().unwrap().contains("since"), "{j}");
    // A node with one run cannot be bounded: exit 3, said on stderr.
    write(&env, &[("node1", &NODE3), ("node2", &[12.0])]);
    let out = env
        .cmd()
        .args(["compare", "--host", "node1", "--vs-host", "node2"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("node2 has 1 run"), "{err}");
    // Nothing to compare against: exit 2 from clap, naming the choices.
    let out = env
        .cmd()
        .args(["compare", "--host", "node1"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--vs-host"));
}

#[test]
fn compare_writes_its_outputs_to_files_as_report_does_and_never_over_an_input() {
    let env = Env::new();
    write(&env, &[("node7", &NODE7), ("node3", &NODE3)]);
    let history = std::fs::read_to_string(&env.history).unwrap();
    let base = SEVEN_VS_THREE;
    let stdout = |format: &str| {
        let out = env
            .cmd()
            .args(base)
            .args(["--format", format])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0));
        out.stdout
    };
    let dir = tempfile::tempdir().unwrap();
    let (json, csv) = (dir.path().join("c.json"), dir.path().join("c.csv"));
    let out = env
        .cmd()
        .args(base)
        .args(["--format", "json", "-o"])
        .arg(&json)
        .arg("--export")
        .arg(format!("csv={}", csv.display()))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(out.stdout.is_empty(), "-o takes stdout's place");
    // What the files hold is what stdout says in those formats, less any time stamp.
    let strip = |b: &[u8]| -> serde_json::Value {
        let mut v: serde_json::Value = serde_json::from_slice(b).unwrap();
        if let Some(o) = v.as_object_mut() {
            o.remove("generated");
        }
        v
    };
    assert_eq!(
        strip(&std::fs::read(&json).unwrap()),
        strip(&stdout("json"))
    );
    assert_eq!(std::fs::read(&csv).unwrap(), stdout("csv"));

    // The history as an output: refused before anything is read, naming both.
    for flag in [vec!["-o".to_string()], vec!["--export".to_string()]] {
        let target = if flag[0] == "-o" {
            env.history.display().to_string()
        } else {
            format!("json={}", env.history.display())
        };
        let out = env
            .cmd()
            .args(base)
            .args(&flag)
            .arg(&target)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(
            err.contains(&flag[0]) && err.contains("the history"),
            "{err}"
        );
        assert_eq!(std::fs::read_to_string(&env.history).unwrap(), history);
    }
}

/// Student's t(1 − α/2, df), computed here without the binary's closed form: with
/// x = √df·tan θ the density's kernel becomes cos^(df−1) θ on [0, π/2), so
/// P(|T| ≤ √df·tan θ*) is the share of ∫cos^(df−1) over [0, π/2) that lies below θ*
/// (Simpson's rule), and θ* is found by bisection.
fn t_quantile(alpha: f64, df: usize) -> f64 {
    let integral = |to: f64| {
        let steps = 4000;
        let h = to / steps as f64;
        let f = |x: f64| x.cos().powi(df as i32 - 1);
        let mut sum = f(0.0) + f(to);
        for i in 1..steps {
            sum += f(i as f64 * h) * if i % 2 == 1 { 4.0 } else { 2.0 };
        }
        sum * h / 3.0
    };
    let whole = integral(std::f64::consts::FRAC_PI_2);
    let (mut low, mut high) = (0.0, std::f64::consts::FRAC_PI_2);
    for _ in 0..100 {
        let mid = (low + high) / 2.0;
        if integral(mid) / whole < 1.0 - alpha {
            low = mid;
        } else {
            high = mid;
        }
    }
    (df as f64).sqrt() * ((low + high) / 2.0).tan()
}

/// `expected` at the level `alpha`, with `t_quantile` for Student's t.
fn expected_at(a: &[f64], b: &[f64], alpha: f64) -> (f64, f64, usize) {
    let (_, (la, lb), var, df) = cox_welch(a, b);
    let half = t_quantile(alpha, df) * var.sqrt();
    ((la - lb - half).exp(), (la - lb + half).exp(), df)
}

#[test]
fn alpha_sets_the_intervals_level_in_every_format_and_bad_values_are_refused() {
    let env = Env::new();
    write(&env, &[("node7", &NODE7), ("node3", &NODE3)]);
    let cmd = |extra: &[&str]| env.cmd().args(SEVEN_VS_THREE).args(extra).output().unwrap();
    let (_, low95, high95) = expected(&NODE7, &NODE3);
    // The independent quantile reproduces the printed table's at 95% (to its 3 decimals):
    // the two computations here agree before either is held against the binary.
    let (l, h, _) = expected_at(&NODE7, &NODE3, 0.05);
    assert!((l / low95 - 1.0).abs() < 1e-3 && (h / high95 - 1.0).abs() < 1e-3);

    for (alpha, level) in [(0.1, "90"), (0.01, "99"), (0.001, "99.9")] {
        let a = alpha.to_string();
        let (low, high, df) = expected_at(&NODE7, &NODE3, alpha);
        let j = json(&env, &[&SEVEN_VS_THREE[..], &["--alpha", &a]].concat());
        assert_eq!(j["df"].as_u64(), Some(df as u64), "{j}");
        assert_eq!(j["alpha"].as_f64(), Some(alpha), "{j}");
        assert!((j["confidence"].as_f64().unwrap() - (1.0 - alpha)).abs() < 1e-12);
        assert!(
            (j["ci_low"].as_f64().unwrap() / low - 1.0).abs() < 1e-6,
            "{j} {low}"
        );
        assert!(
            (j["ci_high"].as_f64().unwrap() / high - 1.0).abs() < 1e-6,
            "{j} {high}"
        );
        // Not the 95% interval: the 95% names are not used for it.
        assert!(
            j.get("ci95_low").is_none() && j.get("ci95_high").is_none(),
            "{j}"
        );
        // A lower α, a wider interval than the 95% one, and a higher, a narrower.
        if alpha < 0.05 {
            assert!(low < low95 && high > high95);
        } else {
            assert!(low > low95 && high < high95);
        }
        let words = format!("({level}% CI {low:.2}–{high:.2})");
        let verdict = format!("at α {a}");
        assert!(
            j["sentence"].as_str().unwrap().contains(&words)
                && j["sentence"].as_str().unwrap().contains(&verdict),
            "{j}"
        );
        for format in [
            "table",
            "summary",
            "reply",
            "jsonl",
            "markdown",
            "html",
            "junit",
            "prometheus",
            "csv",
        ] {
            let out = cmd(&["--alpha", &a, "--format", format]);
            assert_eq!(out.status.code(), Some(0), "{format}");
            let text = String::from_utf8(out.stdout).unwrap().replace('\\', "");
            assert!(
                text.contains(&words) && text.contains(&verdict),
                "{format} at α {a}:\n{text}"
            );
        }
        // The machine formats carry the level and the bounds as figures.
        let col = csv_row(&cmd(&["--alpha", &a, "--format", "csv"]).stdout);
        assert_eq!(col["alpha"].parse::<f64>().unwrap(), alpha);
        assert!((col["ci_low"].parse::<f64>().unwrap() / low - 1.0).abs() < 1e-6);
        assert!(col["ci95_low"].is_empty(), "not the 95% interval");
        let out = cmd(&["--alpha", &a, "--format", "prometheus"]);
        let text = String::from_utf8(out.stdout).unwrap();
        let gauge = |name: &str| -> Option<f64> {
            text.lines()
                .find(|l| l.starts_with(&format!("{name}{{")))
                .map(|l| l.rsplit(' ').next().unwrap().parse().unwrap())
        };
        assert_eq!(gauge("iopscheck_compare_alpha"), Some(alpha));
        assert!((gauge("iopscheck_compare_ratio_ci_high").unwrap() / high - 1.0).abs() < 1e-6);
        assert_eq!(gauge("iopscheck_compare_ratio_ci95_high"), None, "{text}");
    }

    // The default is α 0.05, under both names.
    let j: serde_json::Value = serde_json::from_slice(&cmd(&["--format", "json"]).stdout).unwrap();
    assert_eq!(j["ci_low"], j["ci95_low"]);
    assert_eq!(
        (j["alpha"].as_f64(), j["confidence"].as_f64()),
        (Some(0.05), Some(0.95))
    );

    // Out of run's --alpha range, or not a number: exit 2 naming the flag, nothing printed.
    for bad in ["0", "0.6", "-0.1", "x", "nan"] {
        let out = cmd(&[&format!("--alpha={bad}")]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{bad}: {err}");
        assert!(err.contains("--alpha") && err.contains(bad), "{bad}: {err}");
        assert!(out.stdout.is_empty(), "{bad}");
    }
}
