//! What a window may hold (docs/reliability.md, "Memory"): a window with more runs than
//! `IOPSCHECK_HOLD` lets its oldest go, and then no format says PASS or FAIL for it: the
//! verdict names how many runs were let go, through when, and the `--since` that would fit.

mod common;

use std::io::Write as _;

use chrono::{Duration, Utc};

/// Runs in the history, one every ten minutes up to now (about 21 days).
const RUNS: usize = 3000;

fn write_history(env: &common::Env) {
    let now = Utc::now().fixed_offset() - Duration::minutes(1);
    let mut out = std::io::BufWriter::new(std::fs::File::create(&env.history).unwrap());
    for i in 0..RUNS {
        let at = now - Duration::minutes(10 * (RUNS - 1 - i) as i64);
        let mut r = common::swimlane_record("hold-node", "/data", at, 16.0 + (i % 5) as f64 * 0.1);
        r.metrics.insert("write_runtime_ms".into(), 60000.0);
        serde_json::to_writer(&mut out, &r).unwrap();
        out.write_all(b"\n").unwrap();
    }
    out.flush().unwrap();
}

fn report(env: &common::Env, hold: Option<&str>, args: &[&str]) -> std::process::Output {
    let mut c = env.std_cmd();
    c.args(["report", "--host", "hold-node"]).args(args);
    match hold {
        Some(h) => c.env("IOPSCHECK_HOLD", h),
        None => c.env_remove("IOPSCHECK_HOLD"),
    };
    c.output().unwrap()
}

#[test]
fn a_window_past_what_may_be_held_is_inconclusive_in_every_format_and_says_how_to_narrow_it() {
    let env = common::Env::new();
    write_history(&env);

    // What the default holds: the whole window, judged.
    let out = report(&env, None, &["--since", "30d", "--format", "json"]);
    let whole: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(out.status.code(), Some(0), "{whole}");
    assert_eq!(whole["evidence"]["runs"], RUNS);
    assert!(whole.get("narrowed").is_none());

    // Held in 256 KiB: the oldest runs go, and the verdict is not a pass.
    let out = report(&env, Some("256k"), &["--since", "30d", "--format", "json"]);
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(out.status.code(), Some(3), "{j}");
    assert_eq!(j["verdict"], "inconclusive");
    let left_out = j["narrowed"]["left_out"].as_u64().unwrap() as usize;
    let judged = j["evidence"]["runs"].as_u64().unwrap() as usize;
    assert!(
        left_out > 0 && judged > 0,
        "{left_out} let go, {judged} judged"
    );
    assert_eq!(left_out + judged, RUNS);
    let reason = j["reason"].as_str().unwrap();
    assert!(
        reason.contains(&format!("its {left_out} oldest runs")),
        "{reason}"
    );
    assert!(
        reason.contains("judged alone, the runs after them would pass"),
        "{reason}"
    );
    // the --since it names holds what fits: judged whole, a pass
    let since = reason
        .split("--since ")
        .nth(1)
        .and_then(|r| r.split(')').next())
        .unwrap_or_else(|| panic!("no --since in {reason}"));
    let out = report(&env, Some("256k"), &["--since", since, "--format", "json"]);
    let fits: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(out.status.code(), Some(0), "{fits}");
    assert!(fits.get("narrowed").is_none(), "{fits}");
    assert_eq!(fits["evidence"]["runs"].as_u64().unwrap() as usize, judged);

    // Every format says the same, and so do a bundle and a fleet.
    for f in common::REPORT_FORMATS {
        let out = report(&env, Some("256k"), &["--since", "30d", "--format", f]);
        let text = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(3), "--format {f}: {text}");
        assert!(
            !text.contains("PASS") || text.contains("INCONCLUSIVE"),
            "--format {f}: {text}"
        );
    }
    for args in [
        vec!["bundle", "--host", "hold-node", "--since", "30d", "-o"],
        vec!["fleet", "--since", "30d"],
    ] {
        let mut c = env.std_cmd();
        c.args(&args).env("IOPSCHECK_HOLD", "256k");
        if args[0] == "bundle" {
            c.arg(env.tmp.path().join("b.tar.gz"));
        } else {
            c.arg(&env.history);
        }
        let out = c.output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        let err = String::from_utf8_lossy(&out.stderr);
        if args[0] == "bundle" {
            // a bundle written exits 0, and says the verdict it holds
            assert_eq!(out.status.code(), Some(0), "bundle: {text}{err}");
            assert!(err.contains("verdict inconclusive"), "bundle: {err}");
        } else {
            assert_eq!(out.status.code(), Some(3), "fleet: {text}{err}");
            assert!(text.contains("were let go"), "fleet: {text}{err}");
        }
    }
}

#[test]
fn a_hold_that_is_not_a_size_is_refused_before_anything_is_read() {
    let env = common::Env::new();
    write_history(&env);
    for bad in ["lots", "1k"] {
        let out = report(&env, Some(bad), &["--since", "30d"]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{bad}: {err}");
        assert!(err.contains("IOPSCHECK_HOLD"), "{bad}: {err}");
        assert!(out.stdout.is_empty(), "{bad}");
    }
    // empty is the default, as the scheduled script's env file leaves an unset key
    let out = report(&env, Some(""), &["--since", "30d"]);
    assert_eq!(out.status.code(), Some(0));
}
