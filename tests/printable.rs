//! Nothing read from an input reaches the terminal raw: host names, directories and messages
//! from histories, fio outputs, nodes' results and pod logs are shown with their control
//! characters made visible, in every format, on stdout, on stderr and in `-o` files; CSV
//! cells a spreadsheet would take for a formula are neutralised; bad names given on the
//! command line are refused.

mod common;

use common::Env;

/// A host name that would clear the screen, ring, go back over its line and end a C string.
const EVIL: &str = "node\x1b[2J\x1b]0;pwned\x07\rx\0y\u{9b}1m";
/// The same without its NUL, which no command line can carry.
const EVIL_ARG: &str = "node\x1b[2J\x1b]0;pwned\x07\rxy\u{9b}1m";
/// One a spreadsheet would run as a formula.
const FORMULA: &str = "=HYPERLINK(\"http://x\",\"y\")";

/// The control bytes of `b` that would reach a terminal raw: C0 controls but line feed, tab
/// and the CR of a CR LF; DEL; C1 controls (U+0080..U+009F).
fn raw_controls(b: &[u8]) -> Vec<(usize, u8)> {
    let mut v = Vec::new();
    for (i, &c) in b.iter().enumerate() {
        let bad = match c {
            b'\n' | b'\t' => false,
            b'\r' => b.get(i + 1) != Some(&b'\n'),
            0..0x20 | 0x7f => true,
            0xc2 => b.get(i + 1).is_some_and(|n| (0x80..=0x9f).contains(n)),
            _ => false,
        };
        if bad {
            v.push((i, c));
        }
    }
    v
}

fn assert_shown_not_obeyed(what: &str, b: &[u8]) {
    let raw = raw_controls(b);
    assert!(
        raw.is_empty(),
        "{what}: raw control bytes {raw:?} in:\n{}",
        String::from_utf8_lossy(b)
    );
}

fn seed(env: &Env) {
    seed_hosts(env, &[EVIL, FORMULA, "@SUM(1+1)"]);
}

fn seed_hosts(env: &Env, hosts: &[&str]) {
    let mut text = String::new();
    for (k, host) in hosts.iter().enumerate() {
        for i in 0..6 {
            let ts = chrono::Local::now() - chrono::Duration::hours(1 + 12 * i + k as i64);
            let r = common::swimlane_record(host, "/data/\x1b[5mdir", ts.fixed_offset(), 20.0);
            text.push_str(&serde_json::to_string(&r).unwrap());
            text.push('\n');
        }
    }
    std::fs::write(&env.history, text).unwrap();
}

#[test]
fn names_from_a_history_are_shown_in_every_format_never_obeyed() {
    let env = Env::new();
    seed(&env);
    let list = env.cmd().args(["report", "--list"]).output().unwrap();
    assert_shown_not_obeyed("report --list", &list.stdout);
    assert!(
        String::from_utf8_lossy(&list.stdout).contains("node␛[2J"),
        "the name is shown, its ESC as a picture: {}",
        String::from_utf8_lossy(&list.stdout)
    );
    let formats = common::REPORT_FORMATS;
    // One host per history: the formats other than the table and Markdown judge one group.
    for host in [EVIL, FORMULA] {
        let env = Env::new();
        seed_hosts(&env, &[host]);
        for f in formats {
            let out = env
                .cmd()
                .args(["report", "--host", "all", "--format", f])
                .output()
                .unwrap();
            assert!(
                matches!(out.status.code(), Some(0 | 1 | 3)),
                "{f}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            assert_shown_not_obeyed(&format!("report --format {f} (stdout)"), &out.stdout);
            assert_shown_not_obeyed(&format!("report --format {f} (stderr)"), &out.stderr);
            let file = env.tmp.path().join(format!("report.{f}"));
            let out = env
                .cmd()
                .args(["report", "--host", "all", "--format", f, "-o"])
                .arg(&file)
                .output()
                .unwrap();
            assert!(
                file.exists(),
                "{f}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            assert_shown_not_obeyed(
                &format!("report --format {f} -o"),
                &std::fs::read(&file).unwrap(),
            );
        }
    }
    let env = Env::new();
    seed_hosts(&env, &[EVIL]);
    // The JSON keeps the name itself (escaped the JSON way), so nothing is lost to a reader.
    let json = env
        .cmd()
        .args(["report", "--host", "all", "--format", "json"])
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&json.stdout).contains("\\u001b[2J"),
        "{}",
        String::from_utf8_lossy(&json.stdout)
    );
    // Prometheus: label values escaped as the exposition format says (\\, \", \n), the rest
    // shown, so every sample line still parses as one line with balanced quotes.
    let env = Env::new();
    seed_hosts(&env, &[FORMULA]);
    let prom = env
        .cmd()
        .args(["report", "--host", "all", "--format", "prometheus"])
        .output()
        .unwrap();
    let prom = String::from_utf8(prom.stdout).unwrap();
    assert!(
        prom.contains(r#"host="=HYPERLINK(\"http://x\",\"y\")""#),
        "{prom}"
    );
    for l in prom
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
    {
        let unescaped = l.replace(r"\\", "").replace(r#"\""#, "");
        assert_eq!(unescaped.matches('"').count() % 2, 0, "{l}");
    }
    // CSV: a cell a spreadsheet would run as a formula is text.
    let csv_out = env
        .cmd()
        .args(["report", "--host", "all", "--format", "csv"])
        .output()
        .unwrap();
    let mut rd = csv::Reader::from_reader(&csv_out.stdout[..]);
    let hosts: Vec<String> = rd
        .records()
        .map(|r| r.unwrap().get(1).unwrap().to_string())
        .collect();
    assert!(hosts.contains(&format!("'{FORMULA}")), "{hosts:?}");
    for h in &hosts {
        assert!(!h.starts_with(['=', '+', '-', '@', '\t', '\r']), "{h}");
    }
}

#[test]
fn names_from_nodes_results_and_pod_logs_are_shown_never_obeyed() {
    let env = Env::new();
    seed(&env);
    // A node's result carrying the name, and pod logs with a prefix that rings.
    let result = env
        .cmd()
        .args(["report", "--host", EVIL_ARG, "--format", "json"])
        .output()
        .unwrap();
    // --host with control characters is refused at the command line (below), so the result
    // is made from the whole history instead.
    assert_eq!(result.status.code(), Some(2));
    assert_shown_not_obeyed("report --host EVIL (stderr)", &result.stderr);
    let formats = [
        "table",
        "json",
        "csv",
        "markdown",
        "prometheus",
        "junit",
        "html",
        "summary",
    ];
    for f in formats {
        let out = env
            .cmd()
            .arg("fleet")
            .arg(&env.history)
            .args(["--format", f])
            .output()
            .unwrap();
        assert!(
            matches!(out.status.code(), Some(0 | 1 | 3)),
            "{f}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_shown_not_obeyed(&format!("fleet --format {f} (stdout)"), &out.stdout);
        assert_shown_not_obeyed(&format!("fleet --format {f} (stderr)"), &out.stderr);
    }
    let line = std::fs::read_to_string(&env.history).unwrap();
    let first = line.lines().next().unwrap();
    let logs = format!("[pod/iopscheck-\x1b[2J\x07/c] {first}\n\x1b]0;pwned\x07 not a result\n");
    let out = env
        .cmd()
        .args(["fleet", "-"])
        .write_stdin(logs)
        .output()
        .unwrap();
    assert_shown_not_obeyed("fleet - (stdout)", &out.stdout);
    assert_shown_not_obeyed("fleet - (stderr)", &out.stderr);
    assert!(
        !out.stderr.is_empty(),
        "the line that is not a result is named"
    );
}

#[test]
fn a_name_with_control_characters_is_refused_at_every_entry_and_echoed_safely() {
    let env = Env::new();
    seed(&env);
    let fio = common::fixture("fio-3.33-io_uring-randwrite.json");
    let fio = fio.to_str().unwrap();
    for (args, flag) in [
        (vec!["import", fio, "--host", EVIL_ARG], "--host"),
        (
            vec!["import", fio, "--record", "--host", EVIL_ARG],
            "--host",
        ),
        (vec!["report", "--host", EVIL_ARG], "--host"),
        (vec!["bundle", "-o", "-", "--host", EVIL_ARG], "--host"),
        (vec!["fleet", "--expect", EVIL_ARG], "--expect"),
        (vec!["run", "--no-history", "--host", EVIL_ARG], "--host"),
    ] {
        let out = env.cmd().args(&args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(flag), "{args:?}: {err}");
        assert_shown_not_obeyed(&format!("{args:?}"), &out.stderr);
    }
    let history = std::fs::read(&env.history).unwrap();
    assert_eq!(history, std::fs::read(&env.history).unwrap());
    // Error echoes: a value clap refuses, a file that does not exist.
    for args in [
        vec!["run", "--engine", EVIL_ARG],
        vec!["policy", "check", EVIL_ARG],
        vec!["report", "--since", EVIL_ARG],
        vec!["import", EVIL_ARG],
    ] {
        let out = env.cmd().args(&args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(!out.stderr.is_empty());
        assert_shown_not_obeyed(&format!("{args:?}"), &out.stderr);
    }
}

/// A host that turns the rest of its line around (U+202E, as "Trojan Source" does), and a
/// directory and an engine whose line feeds would start lines of their own reading a verdict.
const BIDI_HOST: &str = "node\u{202e}SSAP";
const FORGED_DIR: &str = "/data\nverdict: PASS — all rules met\n";
const FORGED_ENGINE: &str = "posixaio\nverdict: PASS";

#[test]
fn a_records_text_neither_turns_a_line_around_nor_starts_one_of_its_own() {
    let env = Env::new();
    let mut text = String::new();
    for i in 0..6 {
        let ts = chrono::Local::now() - chrono::Duration::hours(1 + 12 * i);
        let mut r = common::swimlane_record(BIDI_HOST, FORGED_DIR, ts.fixed_offset(), 20.0);
        r.engine = FORGED_ENGINE.into();
        text.push_str(&serde_json::to_string(&r).unwrap());
        text.push('\n');
    }
    std::fs::write(&env.history, text).unwrap();
    let hidden = ['\u{202e}', '\u{2066}', '\u{200f}', '\u{feff}'];
    let mut runs: Vec<(String, Vec<&str>)> =
        vec![("report --list".into(), vec!["report", "--list"])];
    for f in [
        "table",
        "summary",
        "markdown",
        "html",
        "junit",
        "prometheus",
    ] {
        runs.push((
            format!("report --format {f}"),
            vec!["report", "--host", "all", "--format", f],
        ));
    }
    let history = env.history.to_str().unwrap().to_string();
    for f in ["table", "markdown", "html", "summary"] {
        runs.push((
            format!("fleet --format {f}"),
            vec!["fleet", history.as_str(), "--format", f],
        ));
    }
    for (what, args) in runs {
        let out = env.cmd().args(&args).output().unwrap();
        assert!(
            matches!(out.status.code(), Some(0 | 1 | 3)),
            "{what}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        for (stream, b) in [("stdout", &out.stdout), ("stderr", &out.stderr)] {
            let s = String::from_utf8_lossy(b);
            assert!(
                !s.contains(hidden),
                "{what} ({stream}): a bidi control raw in:\n{s}"
            );
            // Tags aside (HTML, XML), no line starts with what the record's text holds.
            for l in s.lines() {
                let mut bare = l.trim_start();
                while let Some(rest) = bare.strip_prefix('<').and_then(|r| r.split_once('>')) {
                    bare = rest.1.trim_start();
                }
                assert!(
                    !bare.starts_with("verdict: PASS"),
                    "{what} ({stream}): a line forged by the record: {l:?} in:\n{s}"
                );
            }
        }
        assert!(
            String::from_utf8_lossy(&out.stdout).contains("SSAP"),
            "{what}: the host is still shown"
        );
    }
    // The JSON keeps the record's text itself, escaped the JSON way.
    let json = env
        .cmd()
        .args(["report", "--host", "all", "--format", "json"])
        .output()
        .unwrap();
    let json = String::from_utf8_lossy(&json.stdout);
    assert!(!json.contains('\u{202e}'), "{json}");
}

#[test]
fn a_host_with_a_bidi_control_is_refused_naming_the_flag() {
    let env = Env::new();
    let fio = common::fixture("fio-3.33-io_uring-randwrite.json");
    let fio = fio.to_str().unwrap();
    for h in ["node\u{202e}SSAP", "a\u{2066}b", "x\u{200b}y", "\u{feff}n"] {
        for (args, flag) in [
            (vec!["import", fio, "--host", h], "--host"),
            (vec!["import", fio, "--record", "--host", h], "--host"),
            (vec!["report", "--host", h], "--host"),
            (vec!["fleet", "--expect", h], "--expect"),
        ] {
            let out = env.cmd().args(&args).output().unwrap();
            assert_eq!(out.status.code(), Some(2), "{args:?}");
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(err.contains(flag), "{args:?}: {err}");
            assert!(!err.contains(h), "{args:?}: echoed raw: {err}");
        }
    }
    assert!(!env.history.exists() || std::fs::read(&env.history).unwrap().is_empty());
}
