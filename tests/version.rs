//! The tool's version is one string: whatever `import`, `report`, `fleet`, `compare` and
//! `bundle` print in any format states the version `iopscheck --version` prints, never another
//! (the package's number without the commit, say). Through the binary, every format its
//! `--format` accepts.

mod common;

use std::path::Path;

use chrono::{Duration, Utc};
use common::Env;

/// `iopscheck --version`'s version: "0.1.0 (commit …)" without the leading name.
fn version(env: &Env) -> String {
    let out = env.cmd().arg("--version").output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    text.trim_end()
        .strip_prefix("iopscheck ")
        .unwrap_or_else(|| panic!("--version: {text:?}"))
        .to_string()
}

/// The formats `--format` accepts, as clap lists them for a wrong one.
fn formats(env: &Env) -> Vec<String> {
    let out = env
        .cmd()
        .args(["report", "--format", "no-such-format"])
        .output()
        .unwrap();
    let err = String::from_utf8(out.stderr).unwrap();
    let list = err
        .split("[possible values: ")
        .nth(1)
        .and_then(|s| s.split(']').next())
        .unwrap_or_else(|| panic!("no list of formats in {err:?}"));
    let v: Vec<String> = list.split(", ").map(str::to_string).collect();
    assert!(v.len() >= 10, "{v:?}");
    v
}

/// Every version `text` states: after each "iopscheck " that a digit follows (text formats),
/// and each JSON document's `tool.version` (JSON, JSON lines).
fn stated(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    for (i, _) in text.match_indices("iopscheck ") {
        let rest = &text[i + "iopscheck ".len()..];
        if rest.starts_with(|c: char| c.is_ascii_digit()) {
            // the number, and " (commit …)" when it follows
            let end = rest
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '.' || c == '-'))
                .unwrap_or(rest.len());
            let mut v = rest[..end].to_string();
            if let Some(c) = rest[end..].strip_prefix(" (commit ") {
                v.push_str(" (commit ");
                v.push_str(&c[..=c.find(')').expect("closed")]);
            }
            found.push(v);
        }
    }
    let docs: Vec<serde_json::Value> =
        serde_json::from_str(text)
            .map(|v| vec![v])
            .unwrap_or_else(|_| {
                text.lines()
                    .filter_map(|l| serde_json::from_str(l).ok())
                    .collect()
            });
    for d in docs {
        if let Some(v) = d["tool"]["version"].as_str() {
            assert_eq!(d["tool"]["name"], "iopscheck", "{d}");
            // a bundle's manifest states the commit apart
            match d["tool"]["commit"].as_str() {
                Some(c) => found.push(format!("{v} (commit {c})")),
                None => found.push(v.to_string()),
            }
        }
    }
    found
}

/// Six Swimlane runs of `host` over the last days, as the history holds them.
fn history(path: &Path, hosts: &[(&str, f64)]) {
    let mut lines = String::new();
    for (host, mb_s) in hosts {
        for i in 0..6 {
            let t = (Utc::now() - Duration::hours(6 + 10 * i)).fixed_offset();
            let r = common::swimlane_record(host, "/data", t, mb_s + i as f64 / 4.0);
            lines.push_str(&serde_json::to_string(&r).unwrap());
            lines.push('\n');
        }
    }
    std::fs::write(path, lines).unwrap();
}

#[test]
fn every_format_of_every_command_states_the_version_that_dash_dash_version_prints() {
    let env = Env::new();
    let v = version(&env);
    history(&env.history, &[("node7", 9.0), ("node3", 15.0)]);
    let fixture = common::fixture("fio-3.33-io_uring-randwrite.json");
    let result = env.tmp.path().join("node7.json");
    let out = env
        .cmd()
        .args(["report", "--host", "node7", "--format", "json"])
        .output()
        .unwrap();
    std::fs::write(&result, &out.stdout).unwrap();

    let mut stating = Vec::new();
    for f in formats(&env) {
        let commands: [(&str, Vec<std::ffi::OsString>); 4] = [
            ("import", vec![fixture.clone().into()]),
            ("report", vec!["--host".into(), "node7".into()]),
            ("fleet", vec![result.clone().into()]),
            (
                "compare",
                vec![
                    "--host".into(),
                    "node7".into(),
                    "--vs-host".into(),
                    "node3".into(),
                ],
            ),
        ];
        for (cmd, args) in commands {
            let out = env
                .cmd()
                .arg(cmd)
                .args(&args)
                .args(["--format", &f])
                .output()
                .unwrap();
            let text = String::from_utf8_lossy(&out.stdout);
            let stderr = String::from_utf8_lossy(&out.stderr);
            // A format a command does not offer is refused (exit 2); every other is printed.
            if out.status.code() == Some(2) {
                assert!(
                    stderr.contains("--format") && stderr.contains(&f),
                    "{cmd} --format {f}: {stderr}"
                );
                continue;
            }
            assert!(
                !text.is_empty(),
                "{cmd} --format {f}: nothing printed; {stderr}"
            );
            let said = stated(&text);
            for s in &said {
                assert_eq!(s, &v, "{cmd} --format {f} states another version:\n{text}");
            }
            if !said.is_empty() {
                stating.push(format!("{cmd} {f}"));
            }
        }
    }
    // Not vacuous: the formats that carry a version were found carrying it.
    for must in [
        "import json",
        "import jsonl",
        "import markdown",
        "import prometheus",
        "import html",
        "report json",
        "fleet json",
        "fleet markdown",
        "fleet prometheus",
        "compare json",
    ] {
        assert!(
            stating.iter().any(|s| s == must),
            "{must} states no version; found in {stating:?}"
        );
    }

    // The bundle: version.txt, README.txt, context.json and manifest.json.
    let bundle = env.tmp.path().join("b.tar.gz");
    let out = env
        .cmd()
        .args(["bundle", "--host", "node7", "-o"])
        .arg(&bundle)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let unpacked = env.tmp.path().join("unpacked");
    std::fs::create_dir(&unpacked).unwrap();
    let mut tar = tar::Archive::new(flate2::read::GzDecoder::new(
        std::fs::File::open(&bundle).unwrap(),
    ));
    tar.unpack(&unpacked).unwrap();
    let top = std::fs::read_dir(&unpacked)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    for member in ["version.txt", "README.txt", "context.json", "manifest.json"] {
        let text = std::fs::read_to_string(top.join(member)).unwrap();
        let said = stated(&text);
        assert!(!said.is_empty(), "{member} states no version:\n{text}");
        for s in said {
            assert_eq!(s, v, "{member} states another version:\n{text}");
        }
    }
}
