//! The host's safety (issue "Faults, round three"): where a history may come from and what it
//! may be, children that outlive a run, the scheduled script's settings, the verdict before the
//! cleanup, and the smaller faults that waste a whole test. Every test uses the real binary;
//! tests that need root (mounts, other users) skip with a printed reason.

mod common;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command as StdCommand, Stdio};
use std::time::{Duration, Instant};

use common::{Env, skip};
use predicates::prelude::*;

fn bin() -> PathBuf {
    PathBuf::from(assert_cmd::cargo::cargo_bin!("iopscheck"))
}

fn mode(p: &Path, m: u32) {
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(m)).unwrap();
}

/// A few Swimlane records of this host, an hour apart and older.
fn seed(history: &Path, runs: i64) {
    let host = iopscheck::testing::machine::hostname();
    let mut text = String::new();
    for i in 0..runs {
        let ts = chrono::Local::now() - chrono::Duration::hours(1 + 12 * i);
        let r = common::swimlane_record(&host, "/data", ts.fixed_offset(), 20.0);
        text.push_str(&serde_json::to_string(&r).unwrap());
        text.push('\n');
    }
    std::fs::write(history, text).unwrap();
}

fn test_files(dir: &Path) -> Vec<String> {
    common::listing(dir)
        .into_iter()
        .filter(|n| n.starts_with("iopscheck-testfile."))
        .collect()
}

/// Runs `cmd` for at most `limit`; a command still running then is killed and the test fails
/// (a hang is the fault these tests look for).
fn output_within(mut cmd: StdCommand, limit: Duration) -> std::process::Output {
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let t = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if t.elapsed() > limit {
            let _ = child.kill();
            let out = child.wait_with_output().unwrap();
            panic!(
                "{cmd:?} still running after {limit:?}; stderr: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

/// `iopscheck ARGS` with this env's lock, as a std command.
fn std_cmd(env: &Env, args: &[&std::ffi::OsStr]) -> StdCommand {
    let mut c = common::default_signals(env.std_cmd());
    c.args(args).env_remove("IOPSCHECK_HISTORY");
    c
}

/// A small run on `env`'s directory with its history and lock, as the next run after one
/// interrupted: waiting at most `flush_wait` (IOPSCHECK_FLUSH_WAIT) for what that one left.
fn next_run(env: &Env, flush_wait: Option<&str>) -> StdCommand {
    let mut c = common::default_signals(env.std_cmd());
    c.args(["run", "--dir"]).arg(&env.dir).args(SMALL);
    if let Some(wait) = flush_wait {
        c.env("IOPSCHECK_FLUSH_WAIT", wait);
    }
    c
}

/// Every command that reads or writes a history, given `history`: report, bundle, fleet,
/// import --record and a small run. (name, arguments).
fn history_commands(env: &Env, history: &Path) -> Vec<(&'static str, Vec<std::ffi::OsString>)> {
    let h = history.as_os_str().to_owned();
    let bundle = env.tmp.path().join("b.tar.gz").into_os_string();
    let fixture = common::fixture("fio-3.33-sample.json").into_os_string();
    vec![
        (
            "report",
            vec!["report".into(), "--history".into(), h.clone()],
        ),
        (
            "bundle",
            vec![
                "bundle".into(),
                "-o".into(),
                bundle,
                "--history".into(),
                h.clone(),
            ],
        ),
        ("fleet", vec!["fleet".into(), h.clone()]),
        (
            "import --record",
            vec![
                "import".into(),
                "--record".into(),
                "--host".into(),
                "node1".into(),
                "--history".into(),
                h.clone(),
                fixture,
            ],
        ),
        (
            "run",
            vec![
                "run".into(),
                "--dir".into(),
                env.dir.clone().into_os_string(),
                "--history".into(),
                h,
                "--size".into(),
                "16m".into(),
                "--runtime".into(),
                "1".into(),
                "--runs".into(),
                "1".into(),
                "--engine".into(),
                "psync".into(),
            ],
        ),
    ]
}

/// Each history command on `history` ends with exit 2 and every one of `said` on stderr,
/// within seconds, with no test file written and no bundle made.
fn refused_by_every_command(env: &Env, history: &Path, said: &[&str]) {
    for (name, args) in history_commands(env, history) {
        let args: Vec<&std::ffi::OsStr> = args.iter().map(|a| a.as_os_str()).collect();
        let out = output_within(std_cmd(env, &args), Duration::from_secs(20));
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{name}: {err}");
        for s in said {
            assert!(err.contains(s), "{name}: {s:?} not in: {err}");
        }
        assert!(
            !err.contains("run 1/1"),
            "{name}: the test ran first: {err}"
        );
        assert!(test_files(&env.dir).is_empty(), "{name}");
        assert!(!env.tmp.path().join("b.tar.gz").exists(), "{name}");
    }
}

#[test]
#[cfg_attr(not(have_root), ignore = "needs root (the rule is root's)")]
fn as_root_a_history_another_user_could_have_planted_is_refused_naming_the_path_and_why() {
    let env = Env::new();
    let t = env.tmp.path();
    let nobody = |p: &Path| std::os::unix::fs::chown(p, Some(65534), Some(65534)).unwrap();

    // A directory another user owns (not writable by others): today's rule looked only for
    // world-writable directories.
    let theirs = t.join("theirs");
    std::fs::create_dir(&theirs).unwrap();
    mode(&theirs, 0o755);
    nobody(&theirs);
    seed(&theirs.join("h.jsonl"), 6);
    let shown = theirs.display().to_string();
    refused_by_every_command(
        &env,
        &theirs.join("h.jsonl"),
        &[&shown, "is owned by user nobody (uid 65534)"],
    );

    // The file itself owned by another user, in root's directory.
    let mine = t.join("mine");
    std::fs::create_dir(&mine).unwrap();
    mode(&mine, 0o755);
    let planted = mine.join("h.jsonl");
    seed(&planted, 6);
    nobody(&planted);
    let shown = planted.display().to_string();
    refused_by_every_command(&env, &planted, &[&shown, "is owned by user nobody"]);

    // A world-writable directory further up than the history's own.
    let open = t.join("open");
    let deep = open.join("deep");
    std::fs::create_dir_all(&deep).unwrap();
    mode(&open, 0o777);
    mode(&deep, 0o755);
    seed(&deep.join("h.jsonl"), 6);
    let shown = format!("{} is world-writable", open.display());
    refused_by_every_command(&env, &deep.join("h.jsonl"), &[&shown]);

    // Through a symbolic link to a directory: followed, and where it leads is judged.
    let link = t.join("link");
    std::os::unix::fs::symlink(&deep, &link).unwrap();
    refused_by_every_command(&env, &link.join("h.jsonl"), &[&shown]);
    // A link another user owns, although it leads somewhere sound: they could re-point it.
    std::fs::remove_file(&planted).unwrap();
    seed(&planted, 6);
    let their_link = t.join("their-link");
    std::os::unix::fs::symlink(&mine, &their_link).unwrap();
    std::os::unix::fs::lchown(&their_link, Some(65534), Some(65534)).unwrap();
    refused_by_every_command(
        &env,
        &their_link.join("h.jsonl"),
        &["is a symbolic link owned by user nobody"],
    );

    // A directory a group other than root's can write.
    let group = t.join("group");
    std::fs::create_dir(&group).unwrap();
    mode(&group, 0o775);
    std::os::unix::fs::chown(&group, None, Some(65534)).unwrap();
    seed(&group.join("h.jsonl"), 6);
    refused_by_every_command(&env, &group.join("h.jsonl"), &["is writable by group"]);

    // Sound: root's directories all the way, a sticky world-writable one (/tmp) on the way,
    // and a link of root's to root's directory.
    let sticky = t.join("sticky");
    let sound = sticky.join("root-only");
    std::fs::create_dir_all(&sound).unwrap();
    mode(&sticky, 0o1777);
    mode(&sound, 0o755);
    let root_link = t.join("root-link");
    std::os::unix::fs::symlink(&mine, &root_link).unwrap();
    for h in [sound.join("h.jsonl"), root_link.join("h.jsonl")] {
        seed(&h, 6);
        env.cmd()
            .arg("report")
            .arg("--history")
            .arg(&h)
            .assert()
            .code(predicate::in_iter([0, 1, 3]));
    }
}

#[test]
#[cfg_attr(not(have_root), ignore = "needs root (switching to another user)")]
fn a_non_root_users_own_history_is_used_and_an_unwritable_one_is_named_with_what_to_do() {
    if StdCommand::new("setpriv")
        .arg("--version")
        .output()
        .is_err()
    {
        return skip("setpriv (util-linux) is not installed");
    }
    // Under /tmp (world-writable, sticky, root's): a user's own tree there is theirs to use.
    let base = tempfile::Builder::new()
        .prefix("iopscheck-user-")
        .tempdir_in("/tmp")
        .unwrap();
    mode(base.path(), 0o755);
    let home = base.path().join("home");
    let data = base.path().join("data");
    for d in [&home, &data] {
        std::fs::create_dir(d).unwrap();
        std::os::unix::fs::chown(d, Some(65534), Some(65534)).unwrap();
    }
    let as_nobody = |args: &[&std::ffi::OsStr]| {
        let out = StdCommand::new("setpriv")
            .args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
            .arg(bin())
            .args(args)
            .env_clear()
            .env("HOME", &home)
            .env("NO_COLOR", "1")
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let own = home.join("h.jsonl");
    let run = |history: &Path| {
        as_nobody(&[
            "run".as_ref(),
            "--dir".as_ref(),
            data.as_os_str(),
            "--history".as_ref(),
            history.as_os_str(),
            "--size".as_ref(),
            "16m".as_ref(),
            "--runtime".as_ref(),
            "1".as_ref(),
            "--runs".as_ref(),
            "1".as_ref(),
            "--engine".as_ref(),
            "psync".as_ref(),
        ])
    };
    let (code, err) = run(&own);
    if err.contains("Permission denied") && !own.exists() {
        return skip("the test binary is not reachable by user nobody here");
    }
    assert!([Some(0), Some(1), Some(3)].contains(&code), "{err}");
    assert_eq!(std::fs::read_to_string(&own).unwrap().lines().count(), 1);
    let (code, err) = as_nobody(&["report".as_ref(), "--history".as_ref(), own.as_os_str()]);
    assert!([Some(0), Some(1), Some(3)].contains(&code), "{err}");

    // root's history, which nobody cannot write: said in words, with the ways out.
    let roots = base.path().join("roots.jsonl");
    seed(&roots, 1);
    mode(&roots, 0o644);
    let (code, err) = run(&roots);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains(&format!(
            "history {}: permission denied: user nobody (uid 65534) cannot write it",
            roots.display()
        )),
        "{err}"
    );
    assert!(
        err.contains("--history") && err.contains("--no-history"),
        "{err}"
    );
    assert!(!err.contains("os error"), "{err}");
    // ... and one it cannot create: the directory is named.
    let (code, err) = run(&base.path().join("new/h.jsonl"));
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains(&format!("cannot create it in {}", base.path().display())),
        "{err}"
    );
    assert!(err.contains("--no-history"), "{err}");
    assert!(test_files(&data).is_empty());
    // One it cannot read: the reader is told so, and only what a reader can do.
    mode(&roots, 0o600);
    let (code, err) = as_nobody(&["report".as_ref(), "--history".as_ref(), roots.as_os_str()]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("permission denied: user nobody (uid 65534) cannot read it; pass --history"),
        "{err}"
    );
    assert!(!err.contains("--no-history"), "{err}");
    assert_eq!(std::fs::read_to_string(&roots).unwrap().lines().count(), 1);
}

#[test]
fn a_fifo_or_a_device_as_the_history_is_refused_at_once_by_every_command() {
    let env = Env::new();
    let fifo = env.tmp.path().join("fifo.jsonl");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: a NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
    refused_by_every_command(&env, &fifo, &["is a named pipe (FIFO), not a regular file"]);
    // /dev/zero never ends; as root it is also not root's own file to trust, so the kind is
    // said first.
    refused_by_every_command(
        &env,
        Path::new("/dev/zero"),
        &["history /dev/zero: is a character device, not a regular file"],
    );
    // A directory is a fleet's input of its own; to the others it is no history.
    env.cmd()
        .arg("report")
        .arg("--history")
        .arg(env.tmp.path())
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "is a directory, not a regular file",
        ));
}

#[test]
fn a_history_that_starts_with_a_byte_order_mark_keeps_its_first_record() {
    let env = Env::new();
    seed(&env.history, 2);
    let mut text = b"\xEF\xBB\xBF".to_vec();
    text.extend(std::fs::read(&env.history).unwrap());
    std::fs::write(&env.history, &text).unwrap();
    let out = env
        .cmd()
        .args(["report", "--format", "json"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(j["runs"].as_array().unwrap().len(), 2, "{err}");
    assert!(!err.contains("skipped"), "{err}");
}

#[test]
#[cfg_attr(not(have_root), ignore = "needs root (mounting a tmpfs)")]
fn a_full_filesystem_under_the_history_is_found_before_the_test() {
    let env = Env::new();
    let at = env.tmp.path().join("small");
    let Some(_m) = common::Mount::new(&at, &["-t", "tmpfs", "-o", "size=64k", "tmpfs"]) else {
        return skip("mount -t tmpfs failed");
    };
    let history = at.join("history.jsonl");
    seed(&history, 1);
    let before = std::fs::read(&history).unwrap();
    // Full: dd stops at ENOSPC.
    let _ = StdCommand::new("dd")
        .args(["if=/dev/zero", "bs=4k", "status=none"])
        .arg(format!("of={}", at.join("filler").display()))
        .stderr(Stdio::null())
        .status();
    let t = Instant::now();
    env.cmd()
        .args(["run", "--dir"])
        .arg(&env.dir)
        .args([
            "--size",
            "16m",
            "--runtime",
            "30",
            "--runs",
            "1",
            "--engine",
            "psync",
        ])
        .arg("--history")
        .arg(&history)
        .assert()
        .code(2)
        .stderr(predicate::str::contains(format!(
            "history {}: only",
            history.display()
        )))
        .stderr(predicate::str::contains("nothing was started"))
        .stderr(predicate::str::contains("run 1/1").not());
    // Refused up front, not after the 30 s test.
    assert!(t.elapsed() < Duration::from_secs(15), "the test ran first");
    assert!(test_files(&env.dir).is_empty());
    assert_eq!(std::fs::read(&history).unwrap(), before);
}

#[test]
fn a_window_too_long_for_any_clock_is_blamed_on_its_range_not_its_syntax() {
    let env = Env::new();
    seed(&env.history, 2);
    for cmd in ["report", "bundle", "fleet"] {
        let mut c = env.cmd();
        c.args([cmd, "--since", "99999999d"]);
        if cmd == "fleet" {
            c.arg(&env.history);
        }
        c.assert()
            .code(2)
            .stderr(predicate::str::contains(
                "reaches back further than a window can",
            ))
            .stderr(predicate::str::contains("neither a duration").not());
    }
    // Long but possible: everything since 1970, said as such (not the year -711).
    env.cmd()
        .args(["report", "--since", "999999d"])
        .assert()
        .code(3)
        .stdout(predicate::str::contains("-0711").not());
}

#[test]
fn bundle_shortens_a_long_host_name_in_its_file_name() {
    let env = Env::new();
    let host = "n".repeat(300);
    let out = env
        .cmd()
        .current_dir(env.tmp.path())
        .args(["bundle", "--host", &host])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    let made: Vec<String> = common::listing(env.tmp.path())
        .into_iter()
        .filter(|n| n.starts_with("iopscheck-bundle-") && n.ends_with(".tar.gz"))
        .collect();
    assert_eq!(made.len(), 1, "{made:?}");
    assert!(made[0].len() < 120, "{}", made[0]);
    // Two long names that differ only past the cut are two bundles, not one refused.
    let other = format!("{}m", "n".repeat(299));
    let out = env
        .cmd()
        .current_dir(env.tmp.path())
        .args(["bundle", "--host", &other])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let n = common::listing(env.tmp.path())
        .into_iter()
        .filter(|n| n.starts_with("iopscheck-bundle-"))
        .count();
    assert_eq!(n, 2);
    // The archive lists its members under the (shortened) top directory, whole.
    let list = StdCommand::new("tar")
        .arg("tzf")
        .arg(env.tmp.path().join(&made[0]))
        .output()
        .unwrap();
    let list = String::from_utf8_lossy(&list.stdout);
    let top = made[0].trim_end_matches(".tar.gz");
    assert!(list.contains(&format!("{top}/README.txt")), "{list}");
}

// ---- Children that outlive a run: the run lock is held until every one of them has ended.

/// `iopscheck run --dir DIR ARGS` in the background, with this env's history and lock.
fn spawn_run(env: &Env, args: &[&str]) -> Child {
    spawn_run_of(&bin(), env, args)
}

fn spawn_run_of(program: &Path, env: &Env, args: &[&str]) -> Child {
    env.std_cmd_of(program)
        .args(["run", "--dir"])
        .arg(&env.dir)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

const SMALL: [&str; 8] = [
    "--size",
    "16m",
    "--runtime",
    "1",
    "--runs",
    "1",
    "--engine",
    "psync",
];

fn kill(pid: u32, sig: i32) {
    // SAFETY: kill(2) on a process this test started (or its run started).
    unsafe { libc::kill(pid as i32, sig) };
}

/// The child processes of `pid`, from each of its threads' /proc children lists.
fn children(pid: u32) -> Vec<u32> {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return vec![];
    };
    tasks
        .flatten()
        .filter_map(|t| std::fs::read_to_string(t.path().join("children")).ok())
        .flat_map(|c| {
            c.split_whitespace()
                .filter_map(|p| p.parse().ok())
                .collect::<Vec<u32>>()
        })
        .collect()
}

/// The session a process belongs to (/proc/PID/stat's sixth field).
fn session(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // pid (comm) state ppid pgrp session ...
    stat.rsplit_once(')')?
        .1
        .split_whitespace()
        .nth(3)?
        .parse()
        .ok()
}

/// Whether `pid` is a live process (not a zombie).
fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        let state = stat.rsplit(')').next().unwrap_or("").trim_start();
        !state.starts_with('Z') && !state.starts_with('X')
    })
}

fn wait_gone(pid: u32) {
    let t = Instant::now();
    while alive(pid) {
        assert!(t.elapsed() < Duration::from_secs(60), "{pid} never ended");
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn wait_test_file(env: &Env, child: &mut Child) {
    let t = Instant::now();
    while test_files(&env.dir).is_empty() {
        if let Ok(Some(s)) = child.try_wait() {
            let mut err = String::new();
            if let Some(mut e) = child.stderr.take() {
                use std::io::Read;
                let _ = e.read_to_string(&mut err);
            }
            panic!("the run ended early: {s}: {err}");
        }
        assert!(t.elapsed() < Duration::from_secs(60), "no test file");
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Reads the child's stderr on a thread; `wait_for` blocks until a line containing `text`.
struct Lines {
    rx: std::sync::mpsc::Receiver<String>,
    seen: Vec<String>,
}

impl Lines {
    fn of(child: &mut Child) -> Lines {
        let stderr = child.stderr.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            use std::io::BufRead;
            for l in std::io::BufReader::new(stderr)
                .lines()
                .map_while(Result::ok)
            {
                let _ = tx.send(l);
            }
        });
        Lines { rx, seen: vec![] }
    }

    fn wait_for(&mut self, text: &str) -> String {
        loop {
            match self.rx.recv_timeout(Duration::from_secs(60)) {
                Ok(l) => {
                    self.seen.push(l.clone());
                    if l.contains(text) {
                        return l;
                    }
                }
                Err(_) => panic!("no line with {text:?}: {:?}", self.seen),
            }
        }
    }

    /// Every line read, up to the end of the stream (call once the child has ended).
    fn all(mut self) -> Vec<String> {
        self.seen.extend(self.rx.iter());
        self.seen
    }
}

#[test]
fn an_interrupted_runs_flush_holds_the_lock_and_the_next_run_waits_for_it() {
    // The final fsync runs in a child process; the run is interrupted while the test holds
    // that child stopped, so the flush ends when the test says. A flush quicker than the
    // test's look at /proc is a moment missed, tried again.
    for attempt in 0.. {
        assert!(attempt < 5, "the final fsync was never caught in 5 tries");
        let env = Env::new();
        let mut run = spawn_run(
            &env,
            &[
                "--size",
                "512m",
                "--runtime",
                "1",
                "--runs",
                "1",
                "--engine",
                "psync",
            ],
        );
        let flusher = loop {
            if let Some(&p) = children(run.id()).first() {
                break Some(p);
            }
            if run.try_wait().unwrap().is_some() {
                break None;
            }
            std::hint::spin_loop();
        };
        let Some(flusher) = flusher else { continue };
        kill(flusher, libc::SIGSTOP);
        kill(run.id(), libc::SIGINT);
        let status = run.wait().unwrap();
        assert_eq!(status.code(), Some(130));
        assert!(alive(flusher));

        // Bounded: the flush outlasts the wait; nothing measured, nothing recorded.
        let t = Instant::now();
        let out = output_within(next_run(&env, Some("1s")), Duration::from_secs(60));
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(err.contains("is still being flushed to disk"), "{err}");
        assert!(err.contains(&flusher.to_string()), "{err}");
        assert!(!err.contains("another iopscheck run"), "{err}");
        assert!(t.elapsed() >= Duration::from_secs(1));
        assert!(env.history_lines().is_empty());
        assert!(test_files(&env.dir).is_empty());

        // Waited for: a run started now says so, writes nothing until the flush has ended,
        // then goes ahead. How long the flush takes once let go is the kernel's (the fsync,
        // then the trim of 512 MiB on a disk mounted with discard: minutes on a busy disk), so
        // the wait is made longer than any flush: with the default 120 s a slow flush ended
        // the run with exit 2, as promised, and the test with it.
        let mut next = common::default_signals(env.std_cmd())
            .args(["run", "--dir"])
            .arg(&env.dir)
            .args(SMALL)
            .env("IOPSCHECK_FLUSH_WAIT", "1d")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut lines = Lines::of(&mut next);
        let note = lines.wait_for("still being flushed");
        assert!(note.contains("waiting up to 86400s"), "{note}");
        assert!(
            test_files(&env.dir).is_empty(),
            "nothing written while waiting"
        );
        assert!(next.try_wait().unwrap().is_none());
        kill(flusher, libc::SIGCONT);
        let status = next.wait().unwrap();
        let said = lines.all();
        assert!(
            [0, 1, 3].contains(&status.code().unwrap()),
            "{status}: {said:#?}"
        );
        assert_eq!(env.history_lines().len(), 1);
        return;
    }
}

#[test]
#[cfg_attr(not(have_fio), ignore = "needs fio")]
fn the_jobs_of_a_killed_fio_run_hold_the_lock_so_no_run_measures_beside_them() {
    let env = Env::new();
    let mut run = spawn_run(
        &env,
        &[
            "--size",
            "64m",
            "--runtime",
            "60",
            "--runs",
            "1",
            "--engine",
            "fio",
        ],
    );
    // fio, and the job process it forks (which calls setsid: only our lock ties it to us).
    let t = Instant::now();
    // A job counts once it has called setsid (it leads its own session): stopped before that,
    // it would still be in fio's process group, which the kernel sends SIGHUP and SIGCONT when
    // the run dies (a newly orphaned group with a stopped member), ending it.
    let (fio, jobs) = loop {
        let fio: Vec<u32> = children(run.id());
        let jobs: Vec<u32> = fio.iter().flat_map(|&p| children(p)).collect();
        if !jobs.is_empty() && jobs.iter().all(|&j| session(j) == Some(j)) {
            break (fio, jobs);
        }
        if let Ok(Some(s)) = run.try_wait() {
            panic!("the run ended before fio's job started: {s}");
        }
        assert!(
            t.elapsed() < Duration::from_secs(60),
            "fio's job never started"
        );
        std::thread::sleep(Duration::from_millis(10));
    };
    // Held stopped, the job cannot end before the test lets it (left running, it would end
    // at the end of its runtime, a moment this test would race). fio itself ends on the
    // SIGTERM the run's death sends it, or stays: either way the job outlives the run.
    for &j in &jobs {
        kill(j, libc::SIGSTOP);
    }
    kill(run.id(), libc::SIGKILL);
    run.wait().unwrap();
    let all: Vec<u32> = fio.iter().chain(&jobs).copied().collect();
    let left = test_files(&env.dir);
    assert_eq!(left.len(), 1, "the killed run's file stays: {left:?}");

    // The next run neither removes the file fio's job still has nor measures beside it.
    let out = output_within(next_run(&env, Some("1s")), Duration::from_secs(60));
    let err = String::from_utf8_lossy(&out.stderr);
    for &p in &all {
        kill(p, libc::SIGKILL);
    }
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("its fio job is still running"), "{err}");
    for j in &jobs {
        assert!(err.contains(&j.to_string()), "{j}: {err}");
    }
    assert_eq!(test_files(&env.dir), left, "{err}");
    assert!(env.history_lines().is_empty());

    // Once fio and its job have ended, the next run goes ahead and removes the file left.
    for &p in &all {
        wait_gone(p);
    }
    let out = output_within(next_run(&env, None), Duration::from_secs(60));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!([0, 1, 3].contains(&out.status.code().unwrap()), "{err}");
    assert!(
        err.contains("removed a test file left by an interrupted run"),
        "{err}"
    );
    assert!(test_files(&env.dir).is_empty());
    assert_eq!(env.history_lines().len(), 1);
}

#[test]
fn a_lock_held_by_another_program_or_by_iopscheck_under_another_name_is_named_for_what_it_is() {
    use std::os::unix::process::CommandExt;
    let env = Env::new();
    let lock = env.tmp.path().join("run.lock");
    let small_run = || output_within(next_run(&env, Some("1s")), Duration::from_secs(60));
    let held = || {
        let f = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&lock)
            .unwrap();
        f.try_lock().is_err()
    };

    if StdCommand::new("flock").arg("--version").output().is_ok() {
        // flock(1) holds it (and the sleep it starts inherits it), as another tool's cron job
        // might; in a process group of its own, to end both.
        let mut holder = StdCommand::new("flock")
            .arg(&lock)
            .args(["sleep", "600"])
            .process_group(0)
            .spawn()
            .unwrap();
        let t = Instant::now();
        while !held() {
            assert!(t.elapsed() < Duration::from_secs(20), "flock never took it");
            std::thread::sleep(Duration::from_millis(10));
        }
        let out = small_run();
        // SAFETY: the process group this test started.
        unsafe { libc::kill(-(holder.id() as i32), libc::SIGKILL) };
        holder.wait().unwrap();
        // sleep, flock's child, holds it until it has ended too.
        let t = Instant::now();
        while held() {
            assert!(
                t.elapsed() < Duration::from_secs(20),
                "flock's sleep kept it"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(
            err.contains(&format!(
                "held by another program, not an iopscheck run: flock (pid {})",
                holder.id()
            )),
            "{err}"
        );
        assert!(!err.contains("flushed"), "{err}");
        assert!(!err.contains("another iopscheck run"), "{err}");
        assert!(test_files(&env.dir).is_empty());
    } else {
        skip("flock (util-linux) is not installed: the other program is not tried");
    }

    // iopscheck under another name (a renamed binary, a link), in the middle of its test.
    let other = env.tmp.path().join("disk-check");
    std::os::unix::fs::symlink(bin(), &other).unwrap();
    let mut renamed = spawn_run_of(
        &other,
        &env,
        &[
            "--size",
            "64m",
            "--runtime",
            "60",
            "--runs",
            "1",
            "--engine",
            "psync",
        ],
    );
    wait_test_file(&env, &mut renamed);
    let out = small_run();
    kill(renamed.id(), libc::SIGINT);
    let status = renamed.wait().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains(&format!(
            "another iopscheck run is testing this host right now (pid {}",
            renamed.id()
        )),
        "{err}"
    );
    assert!(!err.contains("flushed"), "{err}");
    assert_eq!(status.code(), Some(130));
    assert!(env.history_lines().is_empty());
}

/// The first regular file named `name` on PATH.
fn on_path(name: &str) -> Option<PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

/// Leaves `program ARGS` holding the run lock as an interrupted run would leave its fio or its
/// flush: flock(1) takes the lock (so the kernel names flock as its taker), the shell it starts
/// writes flock's id into the lock file (as a run writes its own) and becomes the program,
/// which inherits the lock; then flock is killed. Returns the program's pid.
fn left_holding(env: &Env, program: &Path, args: &[&str]) -> u32 {
    use std::os::unix::process::CommandExt;
    let lock = env.tmp.path().join("run.lock");
    let mut flock = StdCommand::new("flock")
        .arg(&lock)
        .args(["sh", "-c", r#"echo "$PPID" > "$0"; exec "$@""#])
        .arg(&lock)
        .arg(program)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .process_group(0)
        .spawn()
        .unwrap();
    let t = Instant::now();
    let held = loop {
        let recorded = std::fs::read_to_string(&lock).unwrap_or_default();
        let exec_done = children(flock.id()).first().copied().filter(|&c| {
            std::fs::canonicalize(format!("/proc/{c}/exe")).ok()
                == std::fs::canonicalize(program).ok()
        });
        if let (Some(c), true) = (exec_done, recorded.trim() == flock.id().to_string()) {
            break c;
        }
        if let Ok(Some(s)) = flock.try_wait() {
            panic!("flock ended before {program:?} held the lock: {s}");
        }
        assert!(
            t.elapsed() < Duration::from_secs(20),
            "{program:?} never started"
        );
        std::thread::sleep(Duration::from_millis(10));
    };
    kill(flock.id(), libc::SIGKILL);
    flock.wait().unwrap();
    assert!(alive(held));
    held
}

#[test]
#[cfg_attr(not(have_fio), ignore = "needs fio")]
fn what_a_run_left_holding_the_lock_is_told_by_its_binary_not_its_name() {
    if StdCommand::new("flock").arg("--version").output().is_err() {
        return skip("flock (util-linux) is not installed");
    }
    let fio = on_path("fio").expect("fio on PATH");
    let sleep = on_path("sleep").expect("sleep on PATH");
    let small_run = |env: &Env, fio_var: Option<&Path>| {
        let mut c = next_run(env, Some("1s"));
        if let Some(f) = fio_var {
            c.env("IOPSCHECK_FIO", f);
        }
        output_within(c, Duration::from_secs(60))
    };

    // A program merely named fio (sleep, copied to that name) is not said to be fio's job.
    let env = Env::new();
    let named_fio = env.tmp.path().join("fio");
    std::fs::copy(&sleep, &named_fio).unwrap();
    let pid = left_holding(&env, &named_fio, &["600"]);
    let out = small_run(&env, None);
    kill(pid, libc::SIGKILL);
    wait_gone(pid);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(!err.contains("fio job"), "{err}");
    assert!(!err.contains("flushed"), "{err}");
    assert!(
        err.contains(&format!("fio (pid {pid}, {})", named_fio.display())),
        "{err}"
    );
    assert!(test_files(&env.dir).is_empty());
    assert!(env.history_lines().is_empty());

    // fio under another name (a copy named disk-bench) is fio's job, when the fio the run
    // uses is that program (here $IOPSCHECK_FIO, a link named fio-3 to the installed fio).
    let env = Env::new();
    let renamed = env.tmp.path().join("disk-bench");
    std::fs::copy(&fio, &renamed).unwrap();
    let fio_var = env.tmp.path().join("fio-3");
    std::os::unix::fs::symlink(&fio, &fio_var).unwrap();
    let pid = left_holding(
        &env,
        &renamed,
        &[
            "--name=hold",
            "--ioengine=null",
            "--size=1m",
            "--thread",
            "--time_based",
            "--runtime=600",
            "--rate_iops=1",
            "--output=/dev/null",
        ],
    );
    let out = small_run(&env, Some(&fio_var));
    kill(pid, libc::SIGKILL);
    wait_gone(pid);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("its fio job is still running"), "{err}");
    assert!(err.contains(&format!("(pid {pid})")), "{err}");
    assert!(!err.contains("flushed"), "{err}");
    assert!(test_files(&env.dir).is_empty());
    assert!(env.history_lines().is_empty());
}

// ---- The verdict does not wait for the cleanup.

#[test]
fn the_verdict_is_out_before_the_test_file_is_freed() {
    // The note about the removal is due at once (IOPSCHECK_REMOVAL_NOTE_AFTER=0) and is said
    // just before the blocks are freed: whatever is on stdout when it comes was printed before
    // the removal began. No slow disk needed, nothing raced.
    let env = Env::new();
    for format in ["table", "json"] {
        let out_path = env.tmp.path().join(format!("stdout.{format}"));
        let mut run = common::default_signals(env.std_cmd())
            .args(["run", "--dir"])
            .arg(&env.dir)
            .args(SMALL)
            .args(["--format", format])
            .env("IOPSCHECK_REMOVAL_NOTE_AFTER", "0")
            .stdout(std::fs::File::create(&out_path).unwrap())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut lines = Lines::of(&mut run);
        let note = lines.wait_for("removing the test file (");
        let at_note = std::fs::read_to_string(&out_path).unwrap();
        let status = run.wait().unwrap();
        assert!([0, 1, 3].contains(&status.code().unwrap()), "{status}");
        let whole = std::fs::read_to_string(&out_path).unwrap();
        assert!(
            whole.contains("verdict") || whole.contains("\"verdict\""),
            "{whole}"
        );
        assert_eq!(
            at_note, whole,
            "{format}: stdout was not complete at: {note}"
        );
        assert!(note.contains("the verdict is already out"), "{note}");
        assert!(test_files(&env.dir).is_empty());
    }
}

#[test]
#[cfg_attr(not(have_root), ignore = "needs root (loop-mounting a filesystem)")]
fn a_disk_mounted_with_discard_is_said_before_the_run_and_its_removal_after_the_verdict() {
    if StdCommand::new("mkfs.ext4").arg("-V").output().is_err() {
        return skip("mkfs.ext4 (e2fsprogs) is not installed");
    }
    let env = Env::new();
    let shm = Path::new("/dev/shm");
    let img_dir = if shm.is_dir() {
        tempfile::tempdir_in(shm).unwrap()
    } else {
        tempfile::tempdir().unwrap()
    };
    let img = img_dir.path().join("fs.img");
    std::fs::File::create(&img)
        .unwrap()
        .set_len(512 << 20)
        .unwrap();
    let mk = StdCommand::new("mkfs.ext4")
        .args(["-q", "-F", "-m", "0"])
        .arg(&img)
        .status()
        .unwrap();
    assert!(mk.success());
    let at = env.tmp.path().join("ext4");
    let Some(_m) = common::Mount::new(&at, &["-o", "loop,discard", img.to_str().unwrap()]) else {
        return skip("mount -o loop failed (no loop devices?)");
    };
    // A file large enough for its removal to be said at once on such a disk (256 MiB).
    let run = |dir: &Path| {
        let out = common::default_signals(env.std_cmd())
            .args(["run", "--dir"])
            .arg(dir)
            .args([
                "--size",
                "256m",
                "--runtime",
                "1",
                "--runs",
                "1",
                "--engine",
                "psync",
            ])
            .output()
            .unwrap();
        assert!(
            [0, 1, 3].contains(&out.status.code().unwrap()),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let err = run(&at);
    let said = err
        .find(&format!("{} is mounted with discard", at.display()))
        .unwrap_or_else(|| panic!("{err}"));
    // before the run: ahead of the estimate and of the first run's line
    let estimate = err.find("the check takes about").expect(&err);
    assert!(said < estimate, "{err}");
    // and the removal is said at once, after the verdict, however quick it turns out
    assert!(err.contains("(the verdict is already out)"), "{err}");
    assert!(test_files(&at).is_empty());
    // Not said where the filesystem has no discard (a tmpfs; this machine's own disk may
    // well have it).
    let plain = env.tmp.path().join("tmpfs");
    let Some(_t) = common::Mount::new(&plain, &["-t", "tmpfs", "-o", "size=384m", "tmpfs"]) else {
        return skip("mount -t tmpfs failed");
    };
    let err = run(&plain);
    assert!(!err.contains("mounted with discard"), "{err}");
}

/// Swaps every test file that appears in `dir` for a symbolic link to `victim`, keeping ours
/// as `NAME.moved`, as the owner of an application's data directory can; until `stop`. The
/// names swapped.
fn swap_test_files(
    dir: PathBuf,
    victim: PathBuf,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
) -> std::thread::JoinHandle<Vec<String>> {
    std::thread::spawn(move || {
        let mut swapped = Vec::new();
        while !stop.load(std::sync::atomic::Ordering::SeqCst) {
            for name in test_files(&dir) {
                if name.ends_with(".moved") || swapped.contains(&name) {
                    continue;
                }
                let p = dir.join(&name);
                if std::fs::rename(&p, dir.join(format!("{name}.moved"))).is_ok() {
                    std::os::unix::fs::symlink(&victim, &p).unwrap();
                    swapped.push(name);
                }
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        swapped
    })
}

#[test]
#[cfg_attr(not(have_root), ignore = "needs root (a directory of another user's)")]
#[cfg_attr(not(have_fio), ignore = "needs fio")]
fn as_root_fio_writes_only_the_test_file_however_the_directorys_owner_swaps_its_name() {
    use std::os::unix::fs::MetadataExt;
    let env = Env::new();
    // The application's data directory, owned by its user (nobody), tested by root.
    std::os::unix::fs::chown(&env.dir, Some(65534), Some(65534)).unwrap();
    // A root-only file as large as the test file.
    let victim = env.tmp.path().join("victim");
    let precious = vec![b'R'; 8 << 20];
    std::fs::write(&victim, &precious).unwrap();
    mode(&victim, 0o600);
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let swapper = swap_test_files(env.dir.clone(), victim.clone(), stop.clone());
    let out = env
        .cmd()
        .args(["run", "--engine", "fio", "--dir"])
        .arg(&env.dir)
        .args(["--size", "8m", "--runtime", "1", "--runs", "1"])
        .args(["--no-history", "-q", "--format", "summary"])
        .output()
        .unwrap();
    stop.store(true, std::sync::atomic::Ordering::SeqCst);
    let swapped = swapper.join().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    // The file exists from its creation to the end of the run (a second of fio at least):
    // the swap happened, before fio started or after, which must not matter.
    assert_eq!(swapped.len(), 1, "nothing swapped; stderr: {err}");
    assert!(
        matches!(out.status.code(), Some(0 | 1 | 3)),
        "{:?}; stderr: {err}",
        out.status
    );
    assert!(
        std::fs::read(&victim).unwrap() == precious,
        "fio wrote into the file the test file's name was swapped for"
    );
    assert_eq!(std::fs::metadata(&victim).unwrap().mode() & 0o777, 0o600);
    // Nothing of ours is left: only the link, which is not ours.
    assert_eq!(common::listing(&env.dir), swapped, "stderr: {err}");
    assert!(
        std::fs::symlink_metadata(env.dir.join(&swapped[0]))
            .unwrap()
            .is_symlink()
    );
}

#[test]
fn run_and_import_record_refuse_to_append_to_a_file_that_is_not_a_history() {
    let env = Env::new();
    let fio = common::fixture("fio-3.33-sample.json");
    let shadow = env.tmp.path().join("shadow");
    let fstab = env.tmp.path().join("fstab");
    std::fs::write(
        &shadow,
        "root:$6$abc:19000:0:99999:7:::\ndaemon:*:19000::::::\n",
    )
    .unwrap();
    std::fs::write(&fstab, "\nUUID=abc / ext4 defaults 0 1").unwrap();
    for file in [&shadow, &fstab] {
        let before = std::fs::read(file).unwrap();
        let run = env
            .small_run("psync")
            .args(["-q", "--history"])
            .arg(file)
            .output()
            .unwrap();
        let import = env
            .cmd()
            .args(["import", "-q", "--record", "--host", "n1", "--history"])
            .arg(file)
            .arg(&fio)
            .output()
            .unwrap();
        for out in [run, import] {
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "stderr: {err}");
            assert!(
                err.contains("--history") && err.contains(&*file.display().to_string()),
                "{err}"
            );
            assert!(err.contains("is not an iopscheck history"), "{err}");
            assert!(
                !err.contains("$6$"),
                "the file's content is not shown: {err}"
            );
            assert_eq!(std::fs::read(file).unwrap(), before, "{}", file.display());
        }
        // Refused before the test: nothing was written in --dir.
        assert!(test_files(&env.dir).is_empty());
    }
    // Named for the variable when that is what gave it.
    let out = env
        .cmd()
        .env("IOPSCHECK_HISTORY", &shadow)
        .args(["import", "-q", "--record", "--host", "n1"])
        .arg(&fio)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("IOPSCHECK_HISTORY"), "{err}");

    // An empty file is a new history, and a history stays one.
    let history = env.tmp.path().join("h.jsonl");
    std::fs::write(&history, "").unwrap();
    let out = env
        .cmd()
        .args(["import", "-q", "--record", "--host", "n1", "--history"])
        .arg(&history)
        .arg(&fio)
        .output()
        .unwrap();
    assert_ne!(
        out.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        std::fs::read_to_string(&history).unwrap().lines().count(),
        1
    );
    let out = env
        .small_run("psync")
        .args(["-q", "--history"])
        .arg(&history)
        .output()
        .unwrap();
    assert_ne!(
        out.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        std::fs::read_to_string(&history).unwrap().lines().count(),
        2
    );
}

/// `run` with `IOPSCHECK_LOCK_FILE` set to `lock`, a small quick test; stopped if it hangs.
fn run_with_lock(env: &Env, lock: &Path) -> std::process::Output {
    let mut c = std_cmd(env, &[]);
    c.args(["run", "--no-history", "--size", "8m", "--runtime", "1"])
        .args(["--runs", "1", "--engine", "psync", "--dir"])
        .arg(&env.dir)
        .env("IOPSCHECK_LOCK_FILE", lock);
    output_within(c, Duration::from_secs(120))
}

/// Asserts the run was refused before the test, exit 2, naming IOPSCHECK_LOCK_FILE and `why`.
fn refused_lock(env: &Env, out: &std::process::Output, why: &str) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "stderr: {err}");
    assert!(
        err.contains("IOPSCHECK_LOCK_FILE"),
        "names the setting: {err}"
    );
    assert!(err.contains(why), "says {why:?}: {err}");
    assert!(test_files(&env.dir).is_empty(), "no test was run");
}

/// The run lock opened whatever IOPSCHECK_LOCK_FILE named for writing and cut it to the pid:
/// a regular file's content or a block device's first bytes were lost. Whatever is not a lock
/// iopscheck made is refused, and left byte for byte as it was.
#[test]
fn a_lock_file_that_is_not_a_lock_of_ours_is_refused_and_left_as_it_was() {
    let env = Env::new();
    let precious = env.tmp.path().join("precious.txt");
    let data = b"precious data line 1\nline 2\n";
    std::fs::write(&precious, data).unwrap();

    // A file with data, named directly, through a link, or by a second name (hard link).
    let out = run_with_lock(&env, &precious);
    refused_lock(&env, &out, "holds something other than a process id");
    let link = env.tmp.path().join("link.lock");
    std::os::unix::fs::symlink(&precious, &link).unwrap();
    refused_lock(&env, &run_with_lock(&env, &link), "is a symbolic link");
    let hard = env.tmp.path().join("hard.lock");
    std::fs::write(&hard, b"123\n").unwrap();
    std::fs::hard_link(&hard, env.tmp.path().join("hard2")).unwrap();
    refused_lock(&env, &run_with_lock(&env, &hard), "names (hard links)");
    assert_eq!(std::fs::read(&hard).unwrap(), b"123\n");
    assert_eq!(
        std::fs::read(&precious).unwrap(),
        data,
        "the file is unchanged"
    );
    assert!(std::fs::symlink_metadata(&link).unwrap().is_symlink());

    // A FIFO: refused at once, never waited on.
    let fifo = env.tmp.path().join("fifo.lock");
    let made = StdCommand::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success());
    refused_lock(&env, &run_with_lock(&env, &fifo), "is a named pipe (FIFO)");

    // A character device, never opened for writing.
    refused_lock(
        &env,
        &run_with_lock(&env, Path::new("/dev/null")),
        "is a character device",
    );

    // A lock of ours (a pid and its newline) is taken, and holds this run's pid after.
    let ours = env.tmp.path().join("ours.lock");
    std::fs::write(&ours, b"99999999\n").unwrap();
    let out = run_with_lock(&env, &ours);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!([0, 1, 3].contains(&out.status.code().unwrap()), "{err}");
    let pid = std::fs::read_to_string(&ours).unwrap();
    assert!(
        pid.trim().parse::<u32>().is_ok() && pid != "99999999\n",
        "{pid:?}"
    );
}

#[test]
#[cfg_attr(
    not(have_root),
    ignore = "needs root (a loop device, another user's file)"
)]
fn as_root_a_block_device_or_another_users_file_as_the_lock_is_refused_and_untouched() {
    let env = Env::new();
    // Another user's file, holding a pid: not root's to write.
    let theirs = env.tmp.path().join("theirs.lock");
    std::fs::write(&theirs, b"42\n").unwrap();
    std::os::unix::fs::chown(&theirs, Some(65534), Some(65534)).unwrap();
    refused_lock(&env, &run_with_lock(&env, &theirs), "owned by uid 65534");
    assert_eq!(std::fs::read(&theirs).unwrap(), b"42\n");

    let img = env.tmp.path().join("disk.img");
    let bytes: Vec<u8> = (0..1u32 << 20).map(|i| (i * 7 + 3) as u8).collect();
    std::fs::write(&img, &bytes).unwrap();
    let Some(dev) = StdCommand::new("losetup")
        .args(["-f", "--show"])
        .arg(&img)
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| PathBuf::from(String::from_utf8_lossy(&o.stdout).trim()))
    else {
        return skip("no loop device could be set up here (losetup)");
    };
    let out = run_with_lock(&env, &dev);
    let on_device = std::fs::read(&dev).unwrap();
    let _ = StdCommand::new("losetup").arg("-d").arg(&dev).status();
    refused_lock(&env, &out, "is a block device");
    assert!(on_device == bytes, "the device's bytes are unchanged");
    assert_eq!(std::fs::read(&img).unwrap(), bytes);
}

/// Runs `setup` then a small `run` as root with the default lock, in a private mount namespace
/// over a fresh tmpfs on /run (the host's /run is never touched), then `after`; the run's
/// exit code, its stderr and what `after` printed. None where no namespace can be made.
fn run_in_fresh_run(env: &Env, setup: &str, after: &str) -> Option<(i32, String, String)> {
    let ok = StdCommand::new("unshare")
        .args(["--mount", "--propagation", "private", "true"])
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        return None;
    }
    let nobody = "setpriv --reuid=65534 --regid=65534 --clear-groups";
    let script = format!(
        "set -e; mount -t tmpfs -o mode=755 tmpfs /run; mkdir -m 1777 /run/lock; {setup}
         set +e; '{bin}' run --no-history --size 8m --runtime 1 --runs 1 --engine psync --dir '{dir}' >/dev/null 2>&3
         echo \"rc=$?\"; {after}",
        setup = setup.replace("NOBODY", nobody),
        bin = bin().display(),
        dir = env.dir.display(),
    );
    let errf = env.tmp.path().join("stderr");
    let out = StdCommand::new("unshare")
        .args(["--mount", "--propagation", "private", "sh", "-c"])
        .arg(format!("exec 3>'{}'; {script}", errf.display()))
        .env_remove("IOPSCHECK_LOCK_FILE")
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stdout).to_string();
    let err = std::fs::read_to_string(&errf).unwrap_or_default();
    let rc = said
        .lines()
        .find_map(|l| l.strip_prefix("rc="))
        .unwrap_or_else(|| {
            panic!(
                "the script ran: {said} {}",
                String::from_utf8_lossy(&out.stderr)
            )
        })
        .parse()
        .unwrap();
    Some((rc, err, said))
}

/// Root's lock was in /run/lock, world-writable on Debian: any user could plant a FIFO or a
/// file they keep flocked there and stall root's scheduled checks. It is now in a directory
/// only root can write, made by iopscheck, and refused where it is there but not so.
#[test]
#[cfg_attr(
    not(have_root),
    ignore = "needs root (a private mount namespace, another user)"
)]
fn as_root_the_default_lock_is_where_no_other_user_can_plant_it() {
    let env = Env::new();
    // A FIFO another user planted in /run/lock is no longer root's lock.
    let Some((rc, err, said)) = run_in_fresh_run(
        &env,
        "NOBODY mkfifo /run/lock/iopscheck.lock",
        "stat -c '%U %a %F' /run/iopscheck /run/iopscheck/iopscheck.lock /run/lock/iopscheck.lock",
    ) else {
        return skip("unshare --mount is not available here");
    };
    assert!([0, 1, 3].contains(&rc), "the run ran: {err}");
    let stats: Vec<&str> = said.lines().skip(1).collect();
    assert_eq!(
        stats,
        [
            "root 755 directory",
            "root 644 regular file",
            "nobody 644 fifo"
        ],
        "{said}"
    );

    // Root's lock directory where another user could have made it, or changed it: refused.
    for (setup, why) in [
        (
            "mkdir /run/iopscheck; chown 65534 /run/iopscheck",
            "/run/iopscheck is owned by uid 65534",
        ),
        (
            "mkdir -m 777 /run/iopscheck",
            "/run/iopscheck is writable by others",
        ),
        (
            "mkdir /run/elsewhere; ln -s /run/elsewhere /run/iopscheck",
            "/run/iopscheck is a symbolic link",
        ),
        (
            "mkdir /run/iopscheck; mkfifo /run/iopscheck/iopscheck.lock",
            "is a named pipe (FIFO)",
        ),
        (
            "mkdir /run/iopscheck; echo 7 > /run/iopscheck/iopscheck.lock; chown 65534 /run/iopscheck/iopscheck.lock",
            "uid 65534",
        ),
    ] {
        let (rc, err, _) = run_in_fresh_run(&env, setup, "true").unwrap();
        assert_eq!(rc, 2, "{setup}: {err}");
        assert!(err.contains(why), "{setup}: says {why:?}: {err}");
        assert!(test_files(&env.dir).is_empty());
    }
}

/// Sets a POSIX access ACL as `setfacl` does (setfacl is not always installed): the
/// `system.posix_acl_access` xattr, entries of (tag, permission, id).
fn set_acl(p: &Path, entries: &[(u16, u16, u32)]) {
    let mut raw = 2u32.to_le_bytes().to_vec();
    for (tag, perm, id) in entries {
        raw.extend(tag.to_le_bytes());
        raw.extend(perm.to_le_bytes());
        raw.extend(id.to_le_bytes());
    }
    let path = std::ffi::CString::new(p.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: NUL-terminated path and name, and a value with its length.
    let rc = unsafe {
        libc::setxattr(
            path.as_ptr(),
            c"system.posix_acl_access".as_ptr(),
            raw.as_ptr().cast(),
            raw.len(),
            0,
        )
    };
    assert_eq!(rc, 0, "{}", std::io::Error::last_os_error());
}

/// Whether user nobody can open `p` for appending (the ACL really lets them write).
fn nobody_can_append(p: &Path) -> bool {
    StdCommand::new("setpriv")
        .args([
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            "sh",
            "-c",
        ])
        .arg(r#"true >> "$1""#)
        .arg("sh")
        .arg(p)
        .status()
        .is_ok_and(|s| s.success())
}

#[test]
#[cfg_attr(not(have_root), ignore = "needs root (the rule is root's)")]
fn as_root_a_history_another_user_can_write_through_an_acl_is_refused() {
    const ANY: u32 = u32::MAX;
    let env = Env::new();
    let t = env.tmp.path();
    // setfacl -m u:nobody:rw h.jsonl: ls shows -rw-rw-r--+ root root
    let file = t.join("file");
    std::fs::create_dir(&file).unwrap();
    mode(&file, 0o755);
    let h = file.join("h.jsonl");
    seed(&h, 6);
    mode(&h, 0o644);
    set_acl(
        &h,
        &[
            (1, 6, ANY),
            (2, 6, 65534),
            (4, 4, ANY),
            (0x10, 6, ANY),
            (0x20, 4, ANY),
        ],
    );
    if !nobody_can_append(&h) {
        skip("setpriv missing or the ACL not honoured here: cannot show nobody writing");
        return;
    }
    let shown = h.display().to_string();
    refused_by_every_command(&env, &h, &[&shown, "user nobody (uid 65534)", "ACL"]);

    // setfacl -m u:nobody:rwx DIR: nobody can add or replace files in root's directory
    let dir = t.join("dir");
    std::fs::create_dir(&dir).unwrap();
    mode(&dir, 0o755);
    let h = dir.join("h.jsonl");
    seed(&h, 6);
    set_acl(
        &dir,
        &[
            (1, 7, ANY),
            (2, 7, 65534),
            (4, 5, ANY),
            (0x10, 7, ANY),
            (0x20, 5, ANY),
        ],
    );
    let shown = format!("{} is writable by user nobody", dir.display());
    refused_by_every_command(&env, &h, &[&shown, "ACL"]);

    // An ACL that lets nobody only read: sound.
    let read = t.join("read");
    std::fs::create_dir(&read).unwrap();
    mode(&read, 0o755);
    let h = read.join("h.jsonl");
    seed(&h, 6);
    set_acl(
        &h,
        &[
            (1, 6, ANY),
            (2, 4, 65534),
            (4, 4, ANY),
            (0x10, 4, ANY),
            (0x20, 4, ANY),
        ],
    );
    env.cmd()
        .arg("report")
        .arg("--history")
        .arg(&h)
        .assert()
        .code(predicate::in_iter([0, 1, 3]));
}

#[test]
#[cfg_attr(not(have_root), ignore = "needs root (the rule is root's)")]
fn as_root_a_bundle_others_can_write_is_refused_as_a_history_by_every_command() {
    let env = Env::new();
    let t = env.tmp.path();
    let h = t.join("h.jsonl");
    seed(&h, 6);
    let b = t.join("made.tar.gz");
    env.cmd()
        .args(["bundle", "-q", "--since", "30d", "-o"])
        .arg(&b)
        .arg("--history")
        .arg(&h)
        .assert()
        .code(0);
    let host = iopscheck::testing::machine::hostname();
    let reads: [(&str, Vec<&std::ffi::OsStr>); 4] = [
        (
            "report",
            vec!["report".as_ref(), "--history".as_ref(), b.as_os_str()],
        ),
        ("import", vec!["import".as_ref(), b.as_os_str()]),
        ("fleet", vec!["fleet".as_ref(), b.as_os_str()]),
        (
            "compare",
            vec![
                "compare".as_ref(),
                "--history".as_ref(),
                b.as_os_str(),
                "--host".as_ref(),
                host.as_ref(),
                "--at".as_ref(),
                "2020-01-01".as_ref(),
            ],
        ),
    ];
    // root's own bundle is judged by each
    for (name, args) in &reads {
        let out = std_cmd(&env, args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!err.contains("refusing it as root"), "{name}: {err}");
    }
    mode(&b, 0o666);
    for (name, args) in &reads {
        let out = std_cmd(&env, args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{name}: {err}");
        assert!(
            err.contains(&b.display().to_string())
                && err.contains("refusing it as root")
                && err.contains("world-writable"),
            "{name}: {err}"
        );
        assert!(out.stdout.is_empty(), "{name}: judged");
    }
}

#[test]
#[cfg_attr(not(have_root), ignore = "needs root (the rule is root's)")]
fn as_root_import_record_refuses_an_output_others_can_write_which_is_still_judged_without_it() {
    let env = Env::new();
    let t = env.tmp.path();
    let output = t.join("run.json");
    std::fs::copy(common::fixture("fio-3.33-sample.json"), &output).unwrap();
    let h = t.join("h.jsonl");
    let import = |record: bool| {
        let mut c = env.cmd();
        c.args(["import", "-q", "--host", "nw", "--history"])
            .arg(&h);
        if record {
            c.arg("--record");
        }
        c.arg(&output).output().unwrap()
    };
    for (planted, why) in [(0o666, "world-writable"), (0o644, "owned by user nobody")] {
        mode(&output, planted);
        if planted == 0o644 {
            std::os::unix::fs::chown(&output, Some(65534), Some(65534)).unwrap();
        }
        let out = import(true);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(
            err.contains("--record")
                && err.contains(&output.display().to_string())
                && err.contains(why)
                && err.contains("nothing was recorded"),
            "{err}"
        );
        assert!(!h.exists(), "nothing recorded");
        // judged, as a customer's output is, without --record
        let out = import(false);
        assert!(
            [0, 1, 3].contains(&out.status.code().unwrap()),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    // root's own: recorded
    std::os::unix::fs::chown(&output, Some(0), Some(0)).unwrap();
    let out = import(true);
    assert!(
        [0, 1, 3].contains(&out.status.code().unwrap()),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(h.exists(), "recorded");
}

/// The fio outputs a bundle holds, by name.
fn bundled_outputs(b: &Path) -> Vec<(String, Vec<u8>)> {
    use std::io::Read as _;
    let gz = flate2::read::GzDecoder::new(std::fs::File::open(b).unwrap());
    let mut tar = tar::Archive::new(gz);
    let mut out = Vec::new();
    for e in tar.entries().unwrap() {
        let mut e = e.unwrap();
        let name = e.path().unwrap().display().to_string();
        if name.contains("/fio/") && e.header().entry_type().is_file() {
            let mut bytes = Vec::new();
            e.read_to_end(&mut bytes).unwrap();
            out.push((name, bytes));
        }
    }
    out
}

#[test]
#[cfg_attr(
    not(have_root),
    ignore = "needs root (another user's link, sudo's user)"
)]
fn bundle_never_packs_a_file_its_maker_could_not_read_through_another_users_link() {
    let env = Env::new();
    let t = env.tmp.path();
    let h = t.join("h.jsonl");
    seed(&h, 3);
    let secret = t.join("secret-shadow");
    std::fs::write(&secret, "root:$6$SECRETHASH:19000:0:99999:7:::\n").unwrap();
    mode(&secret, 0o600);
    // user nobody's directory, and their link in it: "here is my fio output"
    let theirs = t.join("theirs");
    std::fs::create_dir(&theirs).unwrap();
    mode(&theirs, 0o755);
    let link = theirs.join("out.txt");
    std::os::unix::fs::symlink(&secret, &link).unwrap();
    std::os::unix::fs::lchown(&link, Some(65534), Some(65534)).unwrap();
    std::os::unix::fs::chown(&theirs, Some(65534), Some(65534)).unwrap();
    let b = t.join("sb.tar.gz");
    let bundle = |input: &Path, sudo_uid: Option<&str>| {
        let mut c = env.cmd();
        c.args(["bundle", "-q", "--since", "30d", "-o"])
            .arg(&b)
            .arg("--history")
            .arg(&h)
            .arg(input)
            .env_remove("SUDO_UID")
            .env_remove("SUDO_GID");
        if let Some(u) = sudo_uid {
            c.env("SUDO_UID", u).env("SUDO_GID", u);
        }
        c.output().unwrap()
    };
    let out = bundle(&link, None);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains(&link.display().to_string())
            && err.contains("symbolic link owned by user nobody"),
        "{err}"
    );
    assert!(!err.contains("SECRETHASH"), "{err}");
    assert!(!b.exists(), "no bundle");

    // Under sudo, root's private file is not the invoking user's to pack (in a directory they
    // may search: the file itself is at fault).
    mode(t, 0o755);
    let out = bundle(&secret, Some("65534"));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains(&secret.display().to_string()) && err.contains("not readable by user nobody"),
        "{err}"
    );
    assert!(!b.exists(), "no bundle");

    // Root's own output, and a link of root's to it: packed.
    let fio = t.join("fio.json");
    std::fs::copy(common::fixture("fio-3.33-sample.json"), &fio).unwrap();
    let own_link = t.join("latest.json");
    std::os::unix::fs::symlink(&fio, &own_link).unwrap();
    let out = bundle(&own_link, None);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let packed = bundled_outputs(&b);
    let names: Vec<&String> = packed.iter().map(|(n, _)| n).collect();
    assert_eq!(packed.len(), 1, "{names:?}");
    assert!(packed[0].1 == std::fs::read(&fio).unwrap(), "{names:?}");
}

#[test]
#[cfg_attr(not(have_root), ignore = "needs root (sudo's user)")]
fn under_sudo_policy_check_quotes_only_what_the_user_who_ran_sudo_could_read() {
    let env = Env::new();
    let private = env.tmp.path().join("root-only.yaml");
    std::fs::write(&private, "name: x\ntoken_TOPSECRET: 1\n").unwrap();
    mode(&private, 0o600);
    let check = |sudo_uid: Option<&str>| {
        let mut c = env.cmd();
        c.args(["policy", "check"])
            .arg(&private)
            .env_remove("SUDO_UID")
            .env_remove("SUDO_GID");
        if let Some(u) = sudo_uid {
            c.env("SUDO_UID", u).env("SUDO_GID", u);
        }
        let out = c.output().unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    // root's own file, root asking: the offending key is named
    let (code, err) = check(None);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("token_TOPSECRET"), "{err}");
    // under sudo by user nobody, who could not read it: located, not quoted
    let (code, err) = check(Some("65534"));
    assert_eq!(code, Some(2), "{err}");
    assert!(
        !err.contains("TOPSECRET") && err.contains("content is not shown"),
        "{err}"
    );
}

#[test]
#[cfg_attr(not(have_root), ignore = "needs root (sudo's user)")]
fn under_sudo_a_file_in_a_directory_the_user_could_not_search_is_neither_packed_nor_quoted() {
    let env = Env::new();
    let t = env.tmp.path();
    mode(t, 0o755);
    let h = t.join("h.jsonl");
    seed(&h, 3);
    // root's private directory, and in it files anyone could read, were they let in
    let private = t.join("private");
    std::fs::create_dir(&private).unwrap();
    mode(&private, 0o700);
    let fio = private.join("fio.json");
    std::fs::copy(common::fixture("fio-3.33-sample.json"), &fio).unwrap();
    mode(&fio, 0o644);
    let policy = private.join("p.yaml");
    std::fs::write(&policy, "name: x\ntoken_TOPSECRET: 1\n").unwrap();
    mode(&policy, 0o644);
    let b = t.join("sb.tar.gz");
    let sudo = |args: &[&std::ffi::OsStr]| {
        let out = env
            .cmd()
            .args(args)
            .env("SUDO_UID", "4242")
            .env("SUDO_GID", "4242")
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let bundle = || {
        sudo(&[
            "bundle".as_ref(),
            "-q".as_ref(),
            "--since".as_ref(),
            "30d".as_ref(),
            "-o".as_ref(),
            b.as_os_str(),
            "--history".as_ref(),
            h.as_os_str(),
            fio.as_os_str(),
        ])
    };
    let check = || sudo(&["policy".as_ref(), "check".as_ref(), policy.as_os_str()]);

    let (code, err) = bundle();
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains(&format!(
            "{} is user root (uid 0)'s and not searchable by uid 4242 (mode 700)",
            private.display()
        )),
        "{err}"
    );
    assert!(!b.exists(), "no bundle");
    let (code, err) = check();
    assert_eq!(code, Some(2), "{err}");
    assert!(
        !err.contains("TOPSECRET") && err.contains("content is not shown"),
        "{err}"
    );
    // and says why: the directory the user could not search
    assert!(
        err.contains(&format!(
            "as {} is user root (uid 0)'s and not searchable by uid 4242",
            private.display()
        )),
        "{err}"
    );

    // The same files where the user may reach them: packed, and quoted.
    mode(&private, 0o755);
    let (code, err) = bundle();
    assert_eq!(code, Some(0), "{err}");
    let packed = bundled_outputs(&b);
    assert_eq!(packed.len(), 1);
    assert!(packed[0].1 == std::fs::read(&fio).unwrap());
    let (code, err) = check();
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("token_TOPSECRET"), "{err}");
}
