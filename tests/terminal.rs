//! What an ops terminal and a support engineer see beyond the verdict: the IOPS series inside
//! each run, the disks' own account, and what imports keep of fio's.

mod common;

use common::{Env, fixture, skip};

fn one_record(env: &Env) -> serde_json::Value {
    let lines = env.history_lines();
    assert_eq!(lines.len(), 1);
    lines.into_iter().next().unwrap()
}

#[test]
fn a_native_run_records_its_series_and_the_disks_account() {
    let env = Env::new();
    env.cmd()
        .args(["run", "--dir"])
        .arg(&env.dir)
        .args(["--size", "4m", "--runtime", "1200ms", "--runs", "1"])
        .args(["--engine", "psync", "--export"])
        .arg(format!("html={}", env.tmp.path().join("r.html").display()))
        .assert()
        .code(predicates::function::function(|c: &i32| *c != 2));
    let r = one_record(&env);
    let s = &r["iops_series"];
    assert_eq!(s["interval_ms"], 500);
    let counts: Vec<u64> = s["write"]
        .as_array()
        .expect("write counts")
        .iter()
        .map(|v| v.as_u64().unwrap())
        .collect();
    let ios = r["metrics"]["write_ios"].as_f64().unwrap() as u64;
    assert_eq!(counts.iter().sum::<u64>(), ios, "the intervals add up");
    assert!(
        counts.len() >= 3,
        "1.2 s is two full intervals and a part: {counts:?}"
    );
    assert_eq!(
        r["metrics"]["write_iops_samples"].as_f64().unwrap() as usize,
        counts.len() - 1
    );
    assert!(
        s.get("end_fsync_ms").is_some(),
        "the end fsync is its own phase"
    );

    // The HTML pictures the run: one point per full interval (the last, partial one is left
    // out, as fio leaves it out of its samples), the threshold, the final fsync.
    let html = std::fs::read_to_string(env.tmp.path().join("r.html")).unwrap();
    let svg = &html[html
        .find("class=\"chart series-run\"")
        .expect("a run's series chart")..];
    let svg = &svg[..svg.find("</svg>").unwrap()];
    let points = svg
        .split("points=\"")
        .nth(1)
        .unwrap()
        .split('"')
        .next()
        .unwrap();
    let full = if s["last_ms"].as_u64().unwrap() >= 500 {
        counts.len()
    } else {
        counts.len() - 1
    };
    assert_eq!(points.split_whitespace().count(), full);
    assert!(svg.contains("threshold 3000"), "{svg}");
    assert!(svg.contains(">0</text>"), "the y axis starts at a plain 0");
    if r["metrics"]["end_fsync_ms"].as_f64().unwrap_or(0.0) > 0.0 {
        assert!(svg.contains("final fsync"), "{svg}");
    }
    let xs: Vec<&str> = svg
        .split("class=\"tick-label x\"")
        .skip(1)
        .map(|t| t.split('>').nth(1).unwrap().split('<').next().unwrap())
        .collect();
    assert!(xs.len() >= 2, "the seconds are labelled: {svg}");
    let uniq: std::collections::BTreeSet<&&str> = xs.iter().collect();
    assert_eq!(uniq.len(), xs.len(), "no repeated x labels: {xs:?}");

    // The disks: the device the record names, when the temp dir is on a block device.
    let disks = r["disk_stats"].as_array().cloned().unwrap_or_default();
    match r["target"]["filesystem"].as_str() {
        Some("tmpfs") | Some("overlay") | None => {
            skip("the temp dir is not on a block device: no disk stats to check");
        }
        _ if disks.is_empty() => skip("no /proc/diskstats entry for the temp dir's device"),
        _ => {
            let d = &disks[0];
            assert!(d["name"].as_str().is_some_and(|n| !n.is_empty()));
            assert!(d["util_pct"].as_f64().unwrap() <= 100.0);
            // The end fsync wrote the file's data: the disk saw writes.
            assert!(d["write_ios"].as_u64().unwrap() > 0, "{d}");
        }
    }
}

#[test]
fn imports_keep_fios_samples_and_disk_stats() {
    let env = Env::new();
    for (file, disk, ios) in [
        ("fio-3.33-io_uring-randwrite.txt", "vda", 3301u64),
        // (the 5-group fio 2.1.4 output's jobs may have run beside each other: none is a run)
        (
            "fio-3.1-json-randrw-numjobs4-group_reporting.json",
            "md0",
            1411482,
        ),
    ] {
        let out = env
            .cmd()
            .args(["import", "--format", "json"])
            .arg(fixture(file))
            .output()
            .unwrap();
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let r = &v["runs"][0];
        let d = &r["disk_stats"][0];
        assert_eq!(d["name"], disk, "{file}");
        assert_eq!(d["write_ios"].as_u64(), Some(ios), "{file}");
    }
    let out = env
        .cmd()
        .args(["import", "--format", "json"])
        .arg(fixture("fio-3.33-io_uring-randwrite.txt"))
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let m = &v["runs"][0]["metrics"];
    // iops : min=56792, max=131072, avg=91700.70, stdev=29678.44, samples=10
    assert_eq!(m["write_iops_min"], 56792.0);
    assert_eq!(m["write_iops_max"], 131072.0);
    assert_eq!(m["write_iops_mean"], 91700.7);
    assert_eq!(m["write_iops_stdev"], 29678.44);
    assert_eq!(m["write_iops_samples"], 10.0);
}

#[test]
fn every_man_page_renders_with_man_and_documents_the_environment() {
    if std::process::Command::new("man")
        .arg("--version")
        .output()
        .is_err()
    {
        skip("man is not installed (apt-get install man-db)");
        return;
    }
    let env = Env::new();
    let dir = env.tmp.path().join("man");
    std::fs::create_dir(&dir).unwrap();
    env.cmd()
        .args(["man", "--out-dir"])
        .arg(&dir)
        .assert()
        .success();
    let mut pages: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    pages.sort();
    assert!(pages.len() >= 10, "{pages:?}");
    for p in &pages {
        let out = std::process::Command::new("man")
            .arg("-l")
            .arg(p)
            .env("MANWIDTH", "80")
            .env("MANPAGER", "cat")
            .env("PAGER", "cat")
            .env("LANG", "C.UTF-8")
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            out.status.success() && err.trim().is_empty(),
            "{p:?}: {err}"
        );
        for section in ["NAME", "SYNOPSIS", "ENVIRONMENT", "FILES", "EXIT STATUS"] {
            assert!(
                text.lines().any(|l| l == section),
                "{p:?} has no {section} section"
            );
        }
        for var in [
            "IOPSCHECK_HISTORY",
            "IOPSCHECK_LOCK_FILE",
            "NO_COLOR",
            "XDG_STATE_HOME",
        ] {
            assert!(text.contains(var), "{p:?}: {var}");
        }
        assert!(
            text.lines().all(|l| l.chars().count() <= 80),
            "{p:?}: a line wider than 80 columns"
        );
    }
    // The run page documents its options; the main page points to every subcommand's page.
    let page = |name: &str| {
        let out = std::process::Command::new("man")
            .arg("-l")
            .arg(dir.join(name))
            .env("MANWIDTH", "80")
            .env("MANPAGER", "cat")
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let run = page("iopscheck-run.1");
    for opt in [
        "--dir",
        "--runs",
        "--engine",
        "--size",
        "--runtime",
        "--interval",
    ] {
        assert!(run.contains(opt), "iopscheck-run(1) documents {opt}");
    }
    let main = page("iopscheck.1");
    for sub in [
        "iopscheck-run(1)",
        "iopscheck-import(1)",
        "iopscheck-fleet(1)",
    ] {
        assert!(main.contains(sub), "iopscheck(1) names {sub}");
        let file = format!("{}.1", sub.trim_end_matches("(1)"));
        assert!(dir.join(&file).is_file(), "{file} exists");
    }
    // One page by name; an unknown one is a usage error naming the pages.
    env.cmd().args(["man", "policy-show"]).assert().success();
    env.cmd().args(["man", "rnu"]).assert().code(2);
}

/// The completion script for `shell`, written into the env's temp dir, and a PATH on which
/// `iopscheck` is the binary under test (the scripts ask it for policy names).
fn completion(env: &Env, shell: &str) -> (std::path::PathBuf, String) {
    let out = env.cmd().args(["completions", shell]).output().unwrap();
    assert!(out.status.success());
    let p = env.tmp.path().join(format!("completion.{shell}"));
    std::fs::write(&p, &out.stdout).unwrap();
    let bin = std::path::PathBuf::from(assert_cmd::cargo::cargo_bin!("iopscheck"));
    let path = format!(
        "{}:{}",
        bin.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    (p, path)
}

fn have(shell: &str) -> bool {
    std::process::Command::new(shell)
        .args(["-c", "exit 0"])
        .output()
        .is_ok_and(|o| o.status.success())
}

fn shell_lines(shell: &str, path: &str, script: &str) -> Vec<String> {
    let out = std::process::Command::new(shell)
        .args(["-c", script])
        .env("PATH", path)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{shell}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| l.split('\t').next().unwrap_or("").to_string())
        .collect()
}

#[test]
fn bash_completes_policy_names_and_directories() {
    if !have("bash") {
        return skip("bash is not installed");
    }
    let env = Env::new();
    let (p, path) = completion(&env, "bash");
    let ask = |words: &str| {
        shell_lines(
            "bash",
            &path,
            &format!(
                "source '{}'; COMP_WORDS=({words}); COMP_CWORD=$((${{#COMP_WORDS[@]}} - 1)); _iopscheck_with_policies iopscheck \"${{COMP_WORDS[COMP_CWORD]}}\" \"${{COMP_WORDS[COMP_CWORD-1]}}\"; printf '%s\\n' \"${{COMPREPLY[@]}}\"",
                p.display()
            ),
        )
    };
    assert_eq!(ask("iopscheck run --policy swim"), vec!["swimlane"]);
    assert_eq!(ask("iopscheck report -p swim"), vec!["swimlane"]);
    assert_eq!(ask("iopscheck policy show swim"), vec!["swimlane"]);
    let all = ask("iopscheck import --policy ''");
    assert!(
        all.len() >= 2 && all.contains(&"swimlane".to_string()),
        "{all:?}"
    );
    // Subcommands still complete as clap generated them.
    assert!(ask("iopscheck ru").contains(&"run".to_string()));
}

#[test]
fn fish_completes_policy_names_and_directories() {
    if !have("fish") {
        return skip("fish is not installed (apt-get install fish)");
    }
    let env = Env::new();
    let (p, path) = completion(&env, "fish");
    let ask = |line: &str| {
        shell_lines(
            "fish",
            &path,
            &format!("source '{}'; complete -C '{line}'", p.display()),
        )
    };
    assert_eq!(ask("iopscheck run --policy swim"), vec!["swimlane"]);
    assert_eq!(ask("iopscheck policy show swim"), vec!["swimlane"]);
    std::fs::create_dir(env.tmp.path().join("somedir")).unwrap();
    let dirs = ask(&format!(
        "iopscheck run --dir {}/som",
        env.tmp.path().display()
    ));
    assert_eq!(dirs, vec![format!("{}/somedir/", env.tmp.path().display())]);
}

#[test]
fn zsh_completes_policy_names() {
    if !have("zsh") {
        return skip("zsh is not installed (apt-get install zsh)");
    }
    let env = Env::new();
    let (p, path) = completion(&env, "zsh");
    let text = std::fs::read_to_string(&p).unwrap();
    // --policy of every command and `policy show` use the policy completer; --dir directories.
    assert_eq!(
        text.matches("or YAML file]:NAME|FILE:_iopscheck_policies'")
            .count(),
        12,
        "-p and --policy of run, import, report, fleet, bundle, compare"
    );
    assert!(text.contains("or YAML file:_iopscheck_policies'"));
    assert!(text.contains(":DIR:_files -/'"));
    // The completer offers the names the binary lists (compsys stubbed: no terminal here).
    let names = shell_lines(
        "zsh",
        &path,
        &format!(
            "compdef() {{ : }}; _files() {{ : }}; compadd() {{ [[ $1 == -a ]] && print -l -- ${{(P)2}} }}; _alternative() {{ local a; for a in \"$@\"; do eval \"${{a#*:*:}}\"; done }}; source '{}'; _iopscheck_policies",
            p.display()
        ),
    );
    assert!(names.contains(&"swimlane".to_string()), "{names:?}");
    let out = std::process::Command::new("zsh")
        .arg("-n")
        .arg(&p)
        .output()
        .unwrap();
    assert!(out.status.success(), "the zsh script parses");
}

/// zsh's own completion system, in a terminal: Tab after a partial policy name or directory
/// completes it. Each step waits for what zsh prints, never for a time.
#[test]
fn zsh_completes_policy_names_and_directories_when_tab_is_pressed() {
    if !have("zsh") || !have_tmux() {
        return skip("zsh or tmux is not installed (apt-get install zsh tmux)");
    }
    let env = Env::new();
    let (p, path) = completion(&env, "zsh");
    std::fs::create_dir(env.tmp.path().join("somedir")).unwrap();
    let t = Tmux::start(
        "zsh",
        120,
        &format!(
            "env -i HOME='{home}' TERM=screen PATH='{path}' IOPSCHECK_HISTORY='{home}/h.jsonl' zsh -f",
            home = env.tmp.path().display()
        ),
    )
    .expect("tmux starts");
    // compinit with a dump file of our own, then the script registers itself with compdef.
    t.keys(&format!(
        "autoload -Uz compinit && compinit -u -d '{}/zcompdump' && source '{}' && echo READY-$((20+22))",
        env.tmp.path().display(),
        p.display()
    ));
    t.keys("Enter");
    t.wait_for("READY-42");
    t.keys("iopscheck run --policy swim");
    t.keys("Tab");
    t.wait_for("--policy swimlane");
    t.keys("C-u");
    t.keys("iopscheck policy show openshift-e");
    t.keys("Tab");
    t.wait_for("policy show openshift-etcd");
    t.keys("C-u");
    t.keys(&format!(
        "iopscheck report --dir {}/som",
        env.tmp.path().display()
    ));
    t.keys("Tab");
    t.wait_for(&format!("--dir {}/somedir/", env.tmp.path().display()));
}

#[test]
fn misspellings_get_a_did_you_mean() {
    let env = Env::new();
    for (args, want) in [
        (vec!["rn"], "'run'"),
        (vec!["policy", "shw", "swimlane"], "'show'"),
        (vec!["run", "--engine", "aio"], "'posixaio'"),
        (
            vec!["run", "--policy", "swimlan"],
            "did you mean 'swimlane'?",
        ),
        (
            vec!["policy", "show", "swimlan"],
            "did you mean 'swimlane'?",
        ),
    ] {
        let out = env.cmd().args(&args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(err.contains(want), "{args:?}: {err}");
    }
}

#[test]
fn every_argument_has_a_help_line() {
    use clap::CommandFactory;
    fn walk(c: &clap::Command, path: &str) {
        for a in c.get_arguments() {
            if a.is_hide_set() {
                continue;
            }
            assert!(
                a.get_help().is_some() || a.get_long_help().is_some(),
                "{path} {}: no help line",
                a.get_id()
            );
        }
        for s in c.get_subcommands() {
            walk(s, &format!("{path} {}", s.get_name()));
        }
    }
    let mut cmd = iopscheck::testing::cli::Cli::command();
    cmd.build();
    walk(&cmd, "iopscheck");
}

/// A private tmux server running one command in a pseudo-terminal of `cols` columns. Its
/// socket is a file of our own in the temp dir, removed with the server.
struct Tmux {
    socket: String,
}

impl Tmux {
    fn start(name: &str, cols: u32, command: &str) -> Option<Tmux> {
        let socket = std::env::temp_dir()
            .join(format!("iopscheck-test-{}-{name}.tmux", std::process::id()))
            .display()
            .to_string();
        let ok = std::process::Command::new("tmux")
            .args(["-S", &socket, "new-session", "-d", "-x", &cols.to_string()])
            .args(["-y", "40", command])
            .status()
            .is_ok_and(|s| s.success());
        ok.then_some(Tmux { socket })
    }

    fn screen(&self) -> String {
        let out = std::process::Command::new("tmux")
            .args(["-S", &self.socket, "capture-pane", "-p", "-J", "-S", "-"])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Waits until the screen shows `what` (the program's own output, not a timer).
    fn wait_for(&self, what: &str) -> String {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        loop {
            let s = self.screen();
            if s.contains(what) {
                return s;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "waited a minute for {what:?}; the screen:\n{s}"
            );
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
    }

    fn keys(&self, k: &str) {
        std::process::Command::new("tmux")
            .args(["-S", &self.socket, "send-keys", k])
            .status()
            .unwrap();
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = std::process::Command::new("tmux")
            .args(["-S", &self.socket, "kill-server"])
            .status();
        let _ = std::fs::remove_file(&self.socket);
    }
}

fn have_tmux() -> bool {
    std::process::Command::new("tmux")
        .arg("-V")
        .output()
        .is_ok_and(|o| o.status.success())
}

fn run_in_tmux(env: &Env, args: &str) -> String {
    let bin = assert_cmd::cargo::cargo_bin!("iopscheck");
    format!(
        "env NO_COLOR=1 IOPSCHECK_LOCK_FILE='{}' {} run --dir '{}' --no-history {args}; echo EXIT=$?; sleep 600",
        env.tmp.path().join("run.lock").display(),
        bin.display(),
        env.dir.display()
    )
}

fn spinner_lines(screen: &str) -> Vec<&str> {
    screen
        .lines()
        .filter(|l| l.chars().any(|c| ('\u{2800}'..='\u{28ff}').contains(&c)))
        .collect()
}

#[test]
fn progress_tells_the_whole_story_and_leaves_nothing_behind() {
    if !have_tmux() {
        return skip("tmux is not installed: no pseudo-terminal to watch the progress in");
    }
    let env = Env::new();
    let t = Tmux::start(
        "whole",
        80,
        &run_in_tmux(
            &env,
            "--size 8m --runtime 2s --runs 2 --interval 1s --engine psync",
        ),
    )
    .expect("tmux starts");
    // Before the first run: the estimate of the whole check.
    let s = t.wait_for("the check takes about");
    assert!(s.contains("2 runs of 2s + 1 wait of 1s"), "{s}");
    // During a run: the overall progress and the time left across runs.
    let s = t.wait_for("s left");
    let line = s.lines().find(|l| l.contains("s left")).unwrap_or_default();
    assert!(
        line.contains("run ") && line.contains("check "),
        "a progress line with the check's share and time left:\n{s}"
    );
    let s = t.wait_for("EXIT=");
    assert!(s.contains("run 2/2: write"), "{s}");
    assert!(spinner_lines(&s).is_empty(), "no spinner left:\n{s}");
    for stale in ["laying out", "waiting ", "running "] {
        assert!(!s.contains(stale), "no stale '{stale}' line:\n{s}");
    }
    let estimate: Vec<&str> = s
        .lines()
        .take_while(|l| !l.starts_with("run 1/2"))
        .collect();
    assert!(
        estimate.iter().all(|l| l.chars().count() <= 80),
        "the estimate fits the terminal:\n{s}"
    );
}

#[test]
fn after_ctrl_c_nothing_of_the_progress_is_left() {
    if !have_tmux() {
        return skip("tmux is not installed: no pseudo-terminal to send Ctrl-C in");
    }
    let env = Env::new();
    let t = Tmux::start(
        "sigint",
        100,
        &run_in_tmux(&env, "--size 8m --runtime 30s --runs 3 --engine psync"),
    )
    .expect("tmux starts");
    t.wait_for("running ");
    t.keys("C-c");
    let s = t.wait_for("EXIT=");
    assert!(s.contains("EXIT=130"), "{s}");
    assert!(spinner_lines(&s).is_empty(), "no spinner left:\n{s}");
    assert!(!s.contains("running "), "no progress line left:\n{s}");
    assert!(env.dir_listing().is_empty(), "no test file left");
}

#[test]
fn the_table_shows_what_happened_inside_the_runs_and_text_fits_80_100_200_columns() {
    let env = Env::new();
    for cols in [80usize, 100, 200] {
        let out = env
            .cmd()
            .env("COLUMNS", cols.to_string())
            .args(["import", "--verbose"])
            .arg(fixture("fio-3.33-io_uring-randwrite.txt"))
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        // fio's own figures, as its text gave them.
        let compact: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(
            compact.contains(
                "write iops : min=56792, max=131072, avg=91700.70, stdev=29678.44, samples=10"
            ),
            "{text}"
        );
        assert!(
            compact.contains(
                "disk vda: ios=0/3301, merge=0/142, ticks=0/69202, in_queue=71576, util=50.52%"
            ),
            "{text}"
        );
        // The tables drop their least important columns to fit; the deciding rule stays.
        for l in text
            .lines()
            .filter(|l| l.starts_with(['┌', '│', '╞', '├', '└']))
        {
            assert!(l.chars().count() <= cols, "{cols} columns: {l}");
        }
        assert!(text.contains("write_iops_formula"));
        assert_eq!(
            text.contains("not shown at this width"),
            cols == 80,
            "{text}"
        );
        // Prose lines (not the table's rows, nor a URL that cannot be broken) keep to the width.
        for l in text.lines() {
            let is_table = l.starts_with(['┌', '│', '╞', '├', '└']);
            let unbreakable = l.split_whitespace().count() == 1;
            if !is_table && !unbreakable {
                assert!(l.chars().count() <= cols, "{cols} columns: {l}");
            }
        }
        // Wider terminals use their width: at 200 no prose line is wrapped below 100.
        if cols == 200 {
            assert!(
                text.lines()
                    .any(|l| !l.starts_with(['┌', '│', '╞', '├', '└']) && l.chars().count() > 100),
                "{text}"
            );
        }
    }
}

#[test]
fn piped_output_keeps_a_stable_width() {
    let env = Env::new();
    let run = |columns: Option<&str>| {
        let mut c = env.cmd();
        c.env_remove("COLUMNS");
        if let Some(v) = columns {
            c.env("COLUMNS", v);
        }
        let out = c
            .arg("import")
            .arg(fixture("fio-3.33-io_uring-randwrite.txt"))
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let piped = run(None);
    assert_eq!(piped, run(Some("100")), "piped output is 100 columns wide");
    assert_ne!(piped, run(Some("80")));
    // The listing keeps the same layout piped whatever the terminal was.
    let list = |columns: Option<&str>| {
        let mut c = env.cmd();
        c.env_remove("COLUMNS");
        if let Some(v) = columns {
            c.env("COLUMNS", v);
        }
        String::from_utf8(c.args(["policy", "list"]).output().unwrap().stdout).unwrap()
    };
    let piped = list(None);
    assert_eq!(piped, list(Some("100")));
    assert!(piped.lines().all(|l| l.chars().count() <= 100), "{piped}");
    assert_ne!(piped, list(Some("200")));
}

/// Every line of `text` fits `cols`, but a single word longer than a line (a URL).
fn assert_fits(what: &str, text: &str, cols: usize) {
    for l in text.lines() {
        if l.split_whitespace().count() > 1 || l.starts_with(['┌', '│', '╞', '├', '└']) {
            assert!(
                l.chars().count() <= cols,
                "{what} at {cols} columns, a line of {}:\n{l}\n\n{text}",
                l.chars().count()
            );
        }
    }
}

/// Each of `words` appears whole in `text`: no cell or line broke it.
fn assert_whole(what: &str, text: &str, cols: usize, words: &[&str]) {
    let tokens: Vec<&str> = text
        .split(|c: char| c.is_whitespace() || c == '│' || c == '┆')
        .map(|t| t.trim_matches(|c: char| ",;:()".contains(c)))
        .collect();
    for w in words {
        assert!(
            tokens.contains(w),
            "{what} at {cols} columns: {w:?} is not whole:\n{text}"
        );
    }
}

#[test]
fn every_table_fits_80_100_and_200_columns_without_a_broken_word() {
    let env = Env::new();
    // Two nodes with long names, three days of the policy's own runs each: one passes, one fails.
    let host_a = "storage-node-a.prod.eu-west.example.internal";
    let host_b = "node-b";
    let dir_a = "/var/lib/swimlane/very/long/mount/point/of/the/data/volume";
    let now = chrono::Utc::now().fixed_offset();
    let mut lines = String::new();
    for (host, dir, mb_s) in [(host_a, dir_a, 30.0), (host_b, "/data", 2.0)] {
        for day in 0..3 {
            for k in 0..2 {
                let t = now - chrono::Duration::days(day) - chrono::Duration::hours(k + 1);
                let r = common::swimlane_record(host, dir, t, mb_s + k as f64);
                lines.push_str(&serde_json::to_string(&r).unwrap());
                lines.push('\n');
            }
        }
    }
    let fleet_file = env.tmp.path().join("fleet.jsonl");
    std::fs::write(&fleet_file, &lines).unwrap();
    // The first node's history also has two runs its report leaves out, listed with their
    // reasons: a quick look (64 MiB for 10 s) and a run dated two days ahead.
    let mut quick = common::swimlane_record(host_a, dir_a, now - chrono::Duration::hours(5), 90.0);
    quick.job.size = Some(64 << 20);
    quick.job.runtime_s = Some(10.0);
    let ahead = common::swimlane_record(host_a, dir_a, now + chrono::Duration::days(2), 30.0);
    for r in [quick, ahead] {
        lines.push_str(&serde_json::to_string(&r).unwrap());
        lines.push('\n');
    }
    std::fs::write(&env.history, &lines).unwrap();

    let mut widths = Vec::new();
    for cols in [80usize, 100, 200] {
        let out = |args: &[&str]| {
            let o = env
                .cmd()
                .env("COLUMNS", cols.to_string())
                .args(args)
                .output()
                .unwrap();
            String::from_utf8_lossy(&o.stdout).into_owned()
        };
        let widest_table = |t: &str| {
            t.lines()
                .filter(|l| l.starts_with(['┌', '│', '╞', '├', '└']))
                .map(|l| l.chars().count())
                .max()
                .unwrap_or(0)
        };

        let text = out(&["policy", "list"]);
        assert_fits("policy list", &text, cols);
        assert_whole(
            "policy list",
            &text,
            cols,
            &[
                "openshift-etcd",
                "write_iops_formula",
                "ibm-db2-warehouse-cache",
                "fdatasync",
            ],
        );
        assert!(text.contains("Red Hat OpenShift / OKD"), "{text}");
        widths.push(("policy list", cols, widest_table(&text)));

        let text = out(&["report", "--list"]);
        assert_fits("report --list", &text, cols);
        assert_whole(
            "report --list",
            &text,
            cols,
            &[host_a, dir_a, "posixaio", "6"],
        );

        let text = out(&["report", "--host", host_a]);
        assert_fits("report", &text, cols);
        assert_whole(
            "report",
            &text,
            cols,
            &[host_a, dir_a, "write_iops_formula", "PASS", "MiB", "clock"],
        );
        assert!(
            text.contains("not counted: 2 runs left out of the verdict"),
            "{text}"
        );
        widths.push(("report", cols, widest_table(&text)));

        let text = out(&["fleet", fleet_file.to_str().unwrap()]);
        assert_fits("fleet", &text, cols);
        assert_whole(
            "fleet",
            &text,
            cols,
            &[host_a, dir_a, "node-b", "FAIL", "PASS"],
        );
        assert!(text.contains("verdict: FAIL"), "{text}");
        widths.push(("fleet", cols, widest_table(&text)));

        let text = out(&[
            "import",
            fixture("fio-3.33-io_uring-randwrite.txt").to_str().unwrap(),
        ]);
        assert_fits("import", &text, cols);
        assert_whole("import", &text, cols, &["write_iops_formula"]);
    }
    // Wider terminals get the wide layouts: a table at 200 is wider than any at 80.
    for what in ["policy list", "fleet"] {
        let w = |c: usize| {
            widths
                .iter()
                .find(|(n, cols, _)| *n == what && *cols == c)
                .unwrap()
                .2
        };
        assert!(w(200) > 100, "{what} is laid out wide at 200: {widths:?}");
        assert!(w(80) <= 80, "{what}: {widths:?}");
    }
}

#[test]
fn a_run_fits_80_100_and_200_columns() {
    let env = Env::new();
    for cols in [80usize, 100, 200] {
        let o = env
            .cmd()
            .env("COLUMNS", cols.to_string())
            .args(["run", "--no-history", "--dir"])
            .arg(&env.dir)
            .args([
                "--size",
                "8m",
                "--runtime",
                "1",
                "--runs",
                "2",
                "--engine",
                "psync",
            ])
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&o.stdout);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(text.contains("verdict: "), "{text}\n{err}");
        assert_fits("run", &text, cols);
        assert_fits("run's notes", &err, cols);
        assert_whole("run", &text, cols, &["write_iops_formula", "INCONCLUSIVE"]);
    }
    assert!(env.dir_listing().is_empty(), "no test file left");
}
