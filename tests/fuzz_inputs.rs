//! Property tests that feed the policy loader and the history reader arbitrary and mutated
//! input: they must return an error or a value, never panic or hang. The fio parsers have
//! their own in tests/fio_*.rs. `fuzz/run.sh` runs all of them with many more cases.

use std::path::Path;

use iopscheck::testing::{history, policy};
use proptest::prelude::*;

fn swimlane() -> &'static str {
    policy::builtin_yaml("swimlane").unwrap()
}

/// A valid history line to mutate.
fn good_line() -> String {
    r#"{"schema_version":1,"timestamp":"2026-11-30T10:00:00+01:00","host":"n1","source":"native","engine":"posixaio","job":{"rw":"randwrite","bs":4096},"metrics":{"write_iops":3994.0},"target":{"dir":"/data"},"tool_version":"0.1.0","policy":"swimlane"}"#.to_string()
}

fn mutate(base: &[u8], edits: &[(usize, u8)], cut: usize) -> Vec<u8> {
    let mut v = base.to_vec();
    for &(i, b) in edits {
        if !v.is_empty() {
            let n = v.len();
            v[i % n] = b;
        }
    }
    v.truncate(cut % (base.len() + 1));
    v
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(256),
        ..ProptestConfig::default()
    })]

    #[test]
    fn the_policy_loader_never_panics_on_arbitrary_text(s in "\\PC{0,400}") {
        let _ = policy::parse(&s, "fuzz.yaml");
    }

    #[test]
    fn the_policy_loader_never_panics_on_mutated_policies(
        edits in prop::collection::vec((any::<usize>(), any::<u8>()), 0..8),
        cut in any::<usize>(),
    ) {
        let bytes = mutate(swimlane().as_bytes(), &edits, cut);
        let text = String::from_utf8_lossy(&bytes);
        if let Ok(p) = policy::parse(&text, "fuzz.yaml") {
            // whatever loads also passes the checks a run relies on
            prop_assert!(p.job.validate().is_ok());
            prop_assert!(!p.rules.is_empty());
        }
    }

    #[test]
    fn the_history_reader_keeps_every_good_line_whatever_surrounds_it(
        noise in prop::collection::vec(prop::collection::vec(any::<u8>(), 0..200), 0..6),
        edits in prop::collection::vec((any::<usize>(), any::<u8>()), 0..6),
        cut in any::<usize>(),
    ) {
        let good = good_line();
        let mut text = Vec::new();
        let mut expected = 0;
        for n in &noise {
            // noise lines never contain a newline, so line structure is known
            let n: Vec<u8> = n.iter().map(|&b| if b == b'\n' { b' ' } else { b }).collect();
            text.extend_from_slice(&n);
            text.push(b'\n');
            text.extend_from_slice(good.as_bytes());
            text.push(b'\n');
            expected += 1;
        }
        let torn = mutate(good.as_bytes(), &edits, cut);
        let torn: Vec<u8> = torn.iter().map(|&b| if b == b'\n' { b' ' } else { b }).collect();
        text.extend_from_slice(&torn);
        let (records, _) = history::read_from(&text[..], Path::new("h.jsonl")).unwrap();
        prop_assert!(records.len() >= expected);
        prop_assert!(records.len() <= expected + noise.len() + 1);
    }
}

#[test]
fn a_deeply_nested_policy_is_refused_quickly() {
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    let t = std::time::Instant::now();
    assert!(policy::parse(&deep, "deep.yaml").is_err());
    assert!(t.elapsed().as_secs() < 5);
}

#[test]
fn a_huge_history_line_is_skipped_not_loaded() {
    let mut text = vec![b'x'; 3 << 20];
    text.push(b'\n');
    text.extend_from_slice(good_line().as_bytes());
    let (records, skipped) = history::read_from(&text[..], Path::new("h.jsonl")).unwrap();
    assert_eq!(records.len(), 1);
    assert_eq!(skipped.len(), 1);
    assert_eq!(skipped[0].line, 1);
}
