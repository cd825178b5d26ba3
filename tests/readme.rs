//! Every iopscheck command the README shows runs as shown: each `sh` block's lines and each
//! inline command without placeholders, in the README's order, in one temp dir. Files the
//! README names stand for a customer's files and are given real fio outputs from the fixtures;
//! `run` gets a small file and a short runtime added where the command does not set them (the
//! defaults' 3 × 60 s on 4 GiB are the policy's and stay out of the test suite); a pipe's left
//! side (`pbpaste`, `kubectl logs`) is replaced by what it would print. A command the test
//! cannot stand in for fails the test, so a new README command is either runnable or taught here.

mod common;

use std::path::Path;

/// The README's commands in order: lines of `sh` blocks (continuations joined, comments cut)
/// and the inline command lines of the prose.
fn readme_commands(readme: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut in_sh = false;
    let mut pending = String::new();
    // prose is read a paragraph at a time: an inline span may be wrapped across lines
    let mut para = String::new();
    for line in readme.lines().chain([""]) {
        if line.starts_with("```") || line.trim().is_empty() || line.starts_with('|') {
            inline_commands(&para, &mut out);
            para.clear();
        }
        if line.starts_with("```") {
            in_sh = !in_sh && line.trim() == "```sh";
            continue;
        }
        if in_sh {
            let code = line.split(" #").next().unwrap().trim_end();
            let code = if code.trim_start().starts_with('#') {
                ""
            } else {
                code
            };
            if let Some(head) = code.strip_suffix('\\') {
                pending.push_str(head);
                continue;
            }
            pending.push_str(code);
            let cmd = pending.split_whitespace().collect::<Vec<_>>().join(" ");
            pending.clear();
            if !cmd.is_empty() {
                out.push(cmd);
            }
        } else if !line.starts_with('|') {
            para.push_str(line);
            para.push(' ');
        }
    }
    out
}

/// The inline code spans of a paragraph that are command lines: `iopscheck ` with arguments
/// (`iopscheck run` alone names a command in prose) and no placeholder (`[--dir D]`, `FILE`).
fn inline_commands(para: &str, out: &mut Vec<String>) {
    for (i, span) in para.split('`').enumerate() {
        let span = span.split_whitespace().collect::<Vec<_>>().join(" ");
        let placeholder = span.contains(['[', '|', '…'])
            || span
                .split_whitespace()
                .any(|w| w.len() > 1 && w.chars().all(|c| c.is_ascii_uppercase()));
        let words = span.split_whitespace().count();
        if i % 2 == 1 && span.starts_with("iopscheck ") && words >= 3 && !placeholder {
            out.push(span);
        }
    }
}

/// A real file for each file name the README uses for a customer's output.
fn stand_in(name: &str) -> Option<&'static str> {
    Some(match name {
        "fio-output.txt" => "fio-3.33-posixaio-randwrite.txt",
        "terse.txt" => "fio-3.33-terse.txt",
        "a.json" => "fio-3.33-sample.json",
        "b.json" => "fio-3.39-jsonplus-randwrite.json",
        _ => return None,
    })
}

#[test]
fn every_command_in_the_readme_runs_as_shown() {
    let readme = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md"))
        .expect("README.md");
    let commands = readme_commands(&readme);
    assert!(
        commands.iter().filter(|c| c.contains("iopscheck")).count() >= 8,
        "the README's commands were not found: {commands:?}"
    );
    let env = common::Env::new();
    let work = env.tmp.path();
    for name in ["fio-output.txt", "terse.txt", "a.json", "b.json"] {
        std::fs::copy(common::fixture(stand_in(name).unwrap()), work.join(name)).unwrap();
    }
    let swimlane_dir = work.join("swimlane");
    std::fs::create_dir(&swimlane_dir).unwrap();
    // what `kubectl logs --prefix` prints: one pod's result line, from a real run
    let mut pod_log = Vec::new();

    let mut ran = 0;
    for cmd in &commands {
        assert!(
            !cmd.contains(['"', '\'', '$', ';', '&']),
            "README command `{cmd}`: quoting and shell syntax are not taught to this test"
        );
        // the left side of a pipe stands for what the customer's tool printed
        let (stdin, cmd) = match cmd.rsplit_once(" | ") {
            Some((left, right)) if left.starts_with("pbpaste") => (
                std::fs::read(common::fixture(stand_in("fio-output.txt").unwrap())).unwrap(),
                right.to_string(),
            ),
            Some((left, right)) if left.starts_with("kubectl ") => {
                (pod_log.clone(), right.to_string())
            }
            Some(_) => panic!("README command `{cmd}`: teach this test its pipe"),
            None => (Vec::new(), cmd.clone()),
        };
        let (cmd, redirect) = match cmd.split_once(" > ") {
            Some((c, f)) => (c.to_string(), Some(work.join(f.trim()))),
            None => (cmd, None),
        };
        let words: Vec<&str> = cmd.split_whitespace().collect();
        let args: Vec<&str> = match words.as_slice() {
            ["cargo", "run", "--release", "--", rest @ ..] => rest.to_vec(),
            ["cargo", ..] => continue, // cargo's own commands: CI runs `cargo test` itself
            ["kubectl", ..] => continue, // needs a cluster; its log is piped below
            ["iopscheck", rest @ ..] => rest.to_vec(),
            _ => panic!("README command `{cmd}`: not an iopscheck command"),
        };
        let mut c = env.cmd();
        c.current_dir(work);
        for a in &args {
            if *a == "/var/lib/swimlane" {
                c.arg(&swimlane_dir);
            } else {
                c.arg(a);
            }
        }
        for a in &args[1..] {
            if (a.ends_with(".txt") || a.ends_with(".json") || a.ends_with(".yaml"))
                && !work.join(a).exists()
            {
                panic!("README command `{cmd}` names {a}: give this test a stand-in for it");
            }
        }
        if args.first() == Some(&"run") {
            if !args.contains(&"--dir") {
                c.arg("--dir").arg(&swimlane_dir);
            }
            for (flag, small) in [("--size", "8m"), ("--runtime", "1"), ("--runs", "1")] {
                if !args.contains(&flag) {
                    c.args([flag, small]);
                }
            }
        }
        eprintln!("README: {cmd}");
        let out = c.write_stdin(stdin).output().unwrap();
        let code = out.status.code();
        assert!(
            matches!(code, Some(0 | 1 | 3)),
            "README command `{cmd}` exited {code:?}:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        if let Some(f) = redirect {
            std::fs::write(f, &out.stdout).unwrap();
        }
        if args.first() == Some(&"run") && pod_log.is_empty() {
            let json = env
                .cmd()
                .args(["report", "--format", "jsonl", "--since", "1d"])
                .output()
                .unwrap();
            for line in String::from_utf8_lossy(&json.stdout).lines() {
                pod_log.extend_from_slice(b"[pod/iopscheck-storageclass-x7k2p/iopscheck] ");
                pod_log.extend_from_slice(line.as_bytes());
                pod_log.push(b'\n');
            }
        }
        ran += 1;
    }
    assert!(ran >= 8, "only {ran} README commands ran");
    assert!(
        !pod_log.is_empty(),
        "no run in the README gave a result to pipe into fleet"
    );
}

/// The README is for users: what it is, install, the first five minutes, commands, exit codes,
/// policies, schedules and fleets, one agreement table. Method, rounds and explanations live in
/// bench/README.md and docs/guide.md, so a README that grows past about 15 k characters has
/// taken in what belongs there.
#[test]
fn the_readme_stays_a_users_page() {
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap();
    let chars = readme.chars().count();
    assert!(
        chars <= 15_000,
        "README.md is {chars} characters: move method and detail to bench/README.md or docs/guide.md"
    );
    for link in readme.split("](").skip(1) {
        let target = link.split([')', '#']).next().unwrap();
        if target.starts_with("http") || target.is_empty() {
            continue;
        }
        assert!(
            Path::new(env!("CARGO_MANIFEST_DIR")).join(target).exists(),
            "README links to {target}, which does not exist"
        );
    }
}
