//! io_uring refused by the kernel: `--engine auto` falls back to posixaio and says why, in the
//! output and in the record; `--engine io_uring` fails with the reason. The refusal is real:
//! `kernel.io_uring_disabled=2` (Linux 6.6+), set for the duration of this test binary only
//! (cargo runs test binaries one after another, so no other test sees it) and restored after.

mod common;

use common::{Env, skip};
use predicates::prelude::*;

const SYSCTL: &str = "/proc/sys/kernel/io_uring_disabled";

struct Disabled {
    before: String,
}

impl Disabled {
    fn new() -> Option<Disabled> {
        let before = std::fs::read_to_string(SYSCTL).ok()?;
        std::fs::write(SYSCTL, "2").ok()?;
        Some(Disabled { before })
    }
}

impl Drop for Disabled {
    fn drop(&mut self) {
        let _ = std::fs::write(SYSCTL, self.before.trim());
    }
}

#[test]
#[cfg_attr(not(have_root), ignore = "needs root (sets kernel.io_uring_disabled)")]
fn a_kernel_that_refuses_io_uring_gets_posixaio_with_the_reason_or_a_clear_error() {
    let Some(_guard) = Disabled::new() else {
        return skip(
            "kernel.io_uring_disabled is missing or read-only here (Linux < 6.6 or a container)",
        );
    };
    let env = Env::new();
    let policy = env.swimlane_policy("uring.yaml", |y| {
        y.replace("ioengine: posixaio", "ioengine: io_uring")
            .replace(
                "engines: [posixaio, io_uring]",
                "engines: [io_uring, posixaio]",
            )
    });

    let out = env
        .cmd()
        .args([
            "run",
            "--size",
            "16m",
            "--runtime",
            "1",
            "--runs",
            "1",
            "--format",
            "json",
        ])
        .arg("--policy")
        .arg(&policy)
        .arg("--dir")
        .arg(&env.dir)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    // a quick look: a fail, or inconclusive where it would pass
    assert!(matches!(out.status.code(), Some(1) | Some(3)), "{err}");
    assert!(err.contains("fell back to posixaio"), "{err}");
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(j["warnings"].to_string().contains("fell back to posixaio"));
    let rec = &env.history_lines()[0];
    assert_eq!(rec["engine"], "posixaio");
    assert!(
        rec["engine_note"].as_str().unwrap().contains("io_uring"),
        "{rec}"
    );

    env.cmd()
        .args([
            "run",
            "--engine",
            "io_uring",
            "--size",
            "16m",
            "--runtime",
            "1",
            "--dir",
        ])
        .arg(&env.dir)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--engine io_uring:"));
    assert!(common::listing(&env.dir).is_empty());
}
