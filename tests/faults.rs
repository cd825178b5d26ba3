//! Faults and bad input (issue "Safe under faults and bad input"): signals in every phase,
//! killed runs, full and read-only filesystems, permissions, concurrency. Every test uses the
//! real binary; tests that need root (mounts, other users) skip with a printed reason.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Child, Command as StdCommand, Stdio};
use std::time::{Duration, Instant};

use common::{Env, skip};
use predicates::prelude::*;

fn bin() -> PathBuf {
    PathBuf::from(assert_cmd::cargo::cargo_bin!("iopscheck"))
}

/// Starts `iopscheck run` in the background with this env's history and lock.
fn spawn_run(env: &Env, dir: &Path, extra: &[&str]) -> Child {
    common::default_signals(env.std_cmd())
        .args(["run", "--dir"])
        .arg(dir)
        .args(extra)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// `iopscheck run --dir DIR` with this env's history and lock, for `assert_cmd`.
fn run_in(env: &Env, dir: impl AsRef<std::ffi::OsStr>) -> assert_cmd::Command {
    let mut cmd = env.cmd();
    cmd.args(["run", "--dir"]).arg(dir);
    cmd
}

/// The arguments of a single run of the given size, runtime and engine.
fn one_run<'a>(size: &'a str, runtime: &'a str, engine: &'a str) -> Vec<&'a str> {
    run_args(&[], size, runtime, "1", engine)
}

/// `extra`, then the size, runtime, number of runs and engine.
fn run_args<'a>(
    extra: &[&'a str],
    size: &'a str,
    runtime: &'a str,
    runs: &'a str,
    engine: &'a str,
) -> Vec<&'a str> {
    let mut args = extra.to_vec();
    args.extend([
        "--size",
        size,
        "--runtime",
        runtime,
        "--runs",
        runs,
        "--engine",
        engine,
    ]);
    args
}

fn test_files(dir: &Path) -> Vec<String> {
    common::listing(dir)
        .into_iter()
        .filter(|n| n.starts_with("iopscheck-testfile."))
        .collect()
}

/// Waits until a test file exists in `dir` (the run got past preflight).
fn wait_for_test_file(dir: &Path, child: &mut Child) {
    let t = Instant::now();
    while test_files(dir).is_empty() {
        if let Ok(Some(status)) = child.try_wait() {
            panic!("run ended early: {status}");
        }
        assert!(
            t.elapsed() < Duration::from_secs(20),
            "no test file appeared"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Whether `path` carries the `user.iopscheck` xattr that marks a test file as ours (or
/// cannot carry one).
fn has_marker(path: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes()).unwrap();
    let mut buf = [0u8; 64];
    // SAFETY: NUL-terminated path and name, a buffer with its length.
    let n = unsafe {
        libc::getxattr(
            c.as_ptr(),
            c"user.iopscheck".as_ptr(),
            buf.as_mut_ptr().cast(),
            buf.len(),
        )
    };
    // A filesystem without user xattrs has no marker to wait for.
    n > 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::ENOTSUP)
}

/// Waits until the child is stopped by SIGSTOP (state `T` in /proc/PID/stat).
fn wait_until_stopped(child: &Child) {
    let t = Instant::now();
    loop {
        let stat = std::fs::read_to_string(format!("/proc/{}/stat", child.id())).unwrap();
        // The state follows the command name, which is in parentheses.
        let state = stat.rsplit(')').next().unwrap().trim_start().chars().next();
        if state == Some('T') {
            return;
        }
        assert!(
            t.elapsed() < Duration::from_secs(10),
            "never stopped: {stat}"
        );
        std::thread::sleep(Duration::from_millis(1));
    }
}

fn signal(child: &Child, sig: i32) {
    // SAFETY: plain kill(2) on our own child.
    unsafe { libc::kill(child.id() as i32, sig) };
}

/// Waits for the child and returns its exit code and how long it took after the signal.
fn wait_code(mut child: Child) -> (Option<i32>, Duration, String) {
    let t = Instant::now();
    let Some((status, err)) = common::wait_with_stderr(&mut child, Duration::from_secs(30)) else {
        panic!("the run did not stop within 30 s of the signal");
    };
    (status.code(), t.elapsed(), err)
}

#[test]
fn sigint_while_writing_removes_the_file_records_nothing_and_exits_130() {
    let env = Env::new();
    let mut child = spawn_run(&env, &env.dir, &one_run("64m", "30", "psync"));
    wait_for_test_file(&env.dir, &mut child);
    std::thread::sleep(Duration::from_millis(500));
    signal(&child, libc::SIGINT);
    let (code, took, err) = wait_code(child);
    assert_eq!(code, Some(130), "{err}");
    assert!(took < Duration::from_secs(3), "took {took:?}");
    assert!(err.contains("interrupted"), "{err}");
    assert!(test_files(&env.dir).is_empty());
    assert!(
        env.history_lines().is_empty(),
        "an interrupted run is not a result"
    );
}

/// The signals in a /proc/PID/status mask line ("SigIgn:", "SigCgt:") of `pid`.
fn signal_mask(pid: u32, line: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let hex = status
        .lines()
        .find_map(|l| l.strip_prefix(line))
        .unwrap_or_else(|| panic!("no {line} in {status}"));
    u64::from_str_radix(hex.trim(), 16).unwrap()
}

/// `nohup iopscheck run …` and `iopscheck run … &` in a script start the run with SIGHUP, or
/// SIGINT and SIGQUIT, ignored, so that a closed terminal or a ^C meant for the foreground
/// leaves it running. The run keeps them ignored (a handler of its own would end it) and still
/// answers every other terminating signal.
#[test]
fn a_run_started_with_hangup_and_interrupt_ignored_keeps_them_ignored() {
    use std::os::unix::process::CommandExt as _;
    let env = Env::new();
    let ignored = [libc::SIGHUP, libc::SIGINT, libc::SIGQUIT];
    let mut cmd = env.std_cmd();
    cmd.args(["run", "--dir"])
        .arg(&env.dir)
        .args(one_run("64m", "30", "psync"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // SAFETY: runs in the child before exec and calls only signal(2), async-signal-safe.
    unsafe {
        cmd.pre_exec(move || {
            for sig in ignored {
                libc::signal(sig, libc::SIG_IGN);
            }
            libc::signal(libc::SIGTERM, libc::SIG_DFL);
            Ok(())
        });
    }
    let mut child = cmd.spawn().unwrap();
    // The test file exists once the run watches its signals.
    wait_for_test_file(&env.dir, &mut child);
    let bit = |sig: i32| 1u64 << (sig - 1);
    let (ign, caught) = (
        signal_mask(child.id(), "SigIgn:"),
        signal_mask(child.id(), "SigCgt:"),
    );
    for sig in ignored {
        assert_ne!(ign & bit(sig), 0, "signal {sig} is no longer ignored");
        assert_eq!(caught & bit(sig), 0, "signal {sig} is caught");
    }
    assert_ne!(caught & bit(libc::SIGTERM), 0, "SIGTERM is not answered");
    // An ignored signal is dropped when sent: only SIGTERM ends the run, and cleans up.
    for sig in ignored {
        signal(&child, sig);
    }
    signal(&child, libc::SIGTERM);
    let (code, _, err) = wait_code(child);
    assert_eq!(code, Some(143), "{err}");
    assert!(err.contains("SIGTERM"), "{err}");
    assert!(test_files(&env.dir).is_empty());
    assert!(env.history_lines().is_empty());
}

#[test]
fn sigterm_while_writing_exits_143_and_cleans_up() {
    let env = Env::new();
    let mut child = spawn_run(&env, &env.dir, &one_run("64m", "30", "posixaio"));
    wait_for_test_file(&env.dir, &mut child);
    std::thread::sleep(Duration::from_millis(500));
    signal(&child, libc::SIGTERM);
    let (code, took, err) = wait_code(child);
    assert_eq!(code, Some(143), "{err}");
    assert!(took < Duration::from_secs(3), "took {took:?}");
    assert!(test_files(&env.dir).is_empty());
    assert!(env.history_lines().is_empty());
}

#[test]
fn sigint_during_layout_removes_the_file() {
    // A read job lays its file out by writing it: long enough to interrupt.
    let env = Env::new();
    let policy = read_policy(&env);
    let mut child = spawn_run(
        &env,
        &env.dir,
        &run_args(
            &["--policy", policy.to_str().unwrap()],
            "2g",
            "5",
            "1",
            "psync",
        ),
    );
    wait_for_test_file(&env.dir, &mut child);
    std::thread::sleep(Duration::from_millis(100));
    signal(&child, libc::SIGINT);
    let (code, took, err) = wait_code(child);
    assert_eq!(code, Some(130), "{err}");
    assert!(took < Duration::from_secs(3), "took {took:?}");
    assert!(test_files(&env.dir).is_empty());
}

#[test]
fn sigint_during_the_final_fsync_removes_the_file_promptly() {
    // The end fsync runs in a child process of the run (see engine/sys.rs): its appearance is
    // the start of the phase, and stopping it holds the run in that phase for as long as this
    // test needs, so the signal lands inside the final fsync every time, not by timing.
    // One second of buffered writes into a large file leaves a lot to flush at the end.
    let env = Env::new();
    let mut child = spawn_run(&env, &env.dir, &one_run("512m", "1", "psync"));
    wait_for_test_file(&env.dir, &mut child);
    let t = Instant::now();
    let flusher = loop {
        if let Some(&pid) = children(child.id()).first() {
            break pid;
        }
        if let Ok(Some(status)) = child.try_wait() {
            panic!("the run ended before its final fsync was seen: {status}");
        }
        assert!(t.elapsed() < Duration::from_secs(30), "no final fsync");
        std::hint::spin_loop();
    };
    // SAFETY: kill(2) on the run's own fsync child.
    unsafe { libc::kill(flusher as i32, libc::SIGSTOP) };
    signal(&child, libc::SIGINT);
    // The stopped flusher may have been caught before it closed its copy of the run's stderr:
    // wait for the run itself, end the flusher, and only then read what the run said.
    let t = Instant::now();
    while child.try_wait().unwrap().is_none() {
        assert!(
            t.elapsed() < Duration::from_secs(30),
            "the run did not stop"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    let took = t.elapsed();
    // SAFETY: as above; the orphaned child is ours to end.
    unsafe { libc::kill(flusher as i32, libc::SIGKILL) };
    let (code, _, err) = wait_code(child);
    assert_eq!(code, Some(130), "{err}");
    // The flusher is stopped for good: a run that waited for it would never end (the loop
    // above fails at 30 s), one that waited a while for it would take that while. What is
    // left is removing 512 MiB of unwritten pages, which a loaded disk makes slower: the
    // bound tells a prompt stop from a wait, not a fast machine from a busy one.
    assert!(took < Duration::from_secs(10), "took {took:?}");
    assert!(env.history_lines().is_empty());
    assert!(test_files(&env.dir).is_empty());
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

#[test]
fn sigint_while_waiting_between_runs_keeps_the_completed_run() {
    use std::io::{BufRead, BufReader, Read};
    let env = Env::new();
    let mut child = spawn_run(
        &env,
        &env.dir,
        &run_args(&["--interval", "60s"], "32m", "1", "2", "psync"),
    );
    // The run's line on stderr is printed once the run is recorded (appended and fsynced);
    // the next thing the process does is wait out the interval. Seeing the history line
    // alone would race the append's fsync, which takes seconds on a busy disk.
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let mut said = String::new();
    loop {
        let mut line = String::new();
        assert!(
            err.read_line(&mut line).unwrap() > 0,
            "stderr ended before the first run was recorded: {said}"
        );
        said.push_str(&line);
        if line.starts_with("run 1/2: ") {
            break;
        }
    }
    std::thread::sleep(Duration::from_millis(100));
    signal(&child, libc::SIGINT);
    let t = Instant::now();
    while child.try_wait().unwrap().is_none() {
        assert!(
            t.elapsed() < Duration::from_secs(30),
            "the run did not stop"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    let took = t.elapsed();
    let code = child.wait().unwrap().code();
    err.read_to_string(&mut said).unwrap();
    assert_eq!(code, Some(130), "{said}");
    assert!(took < Duration::from_secs(2), "took {took:?}");
    assert!(said.contains("1 completed run kept"), "{said}");
    assert_eq!(env.history_lines().len(), 1);
    assert!(test_files(&env.dir).is_empty());
}

/// How a run in [`removal_is_announced_however_the_run_ends_and_quiet_silences_it`] ends.
#[derive(Debug, Clone, Copy)]
enum Ending {
    Done,
    /// fio fails after the layout: the error path.
    FioFails,
    /// SIGINT while fio runs: the file was not removed by the signal (the engine's own runs
    /// are unlinked at once).
    SigintDuringFio,
    /// SIGINT in the wait between two runs.
    SigintBetweenRuns,
}

/// A stand-in for fio that runs `body` (sh), written to `name` in the env's temp dir.
fn fake_fio(env: &Env, name: &str, body: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let p = env.tmp.path().join(name);
    std::fs::write(&p, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    p
}

/// Runs to `ending` with the note about a slow removal due at once (a removal longer than
/// no time at all: deterministic, where a slow disk is not); returns the exit code and stderr.
fn run_to(env: &Env, ending: Ending, quiet: bool) -> (Option<i32>, String) {
    let mark = env.tmp.path().join("fio-started");
    let _ = std::fs::remove_file(&mark);
    let (engine, runs, interval, fio) = match ending {
        Ending::Done => ("psync", "1", "0", None),
        Ending::FioFails => ("fio", "1", "0", Some(fake_fio(env, "fio-fails", "exit 1"))),
        Ending::SigintDuringFio => (
            "fio",
            "1",
            "0",
            Some(fake_fio(
                env,
                "fio-waits",
                ": > \"$FIO_MARK\"; exec sleep 60",
            )),
        ),
        Ending::SigintBetweenRuns => ("psync", "2", "60s", None),
    };
    let mut cmd = common::default_signals(env.std_cmd());
    if quiet {
        cmd.arg("--quiet");
    }
    cmd.args(["run", "--dir"])
        .arg(&env.dir)
        .args(run_args(&["--interval", interval], "8m", "1", runs, engine))
        .env("IOPSCHECK_REMOVAL_NOTE_AFTER", "0")
        .env("FIO_MARK", &mark)
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    if let Some(f) = &fio {
        cmd.env("IOPSCHECK_FIO", f);
    }
    let mut child = cmd.spawn().unwrap();
    let t = Instant::now();
    match ending {
        Ending::Done | Ending::FioFails => {}
        // fio has started: the layout is done and the test is in fio's hands.
        Ending::SigintDuringFio => {
            while !mark.exists() {
                if let Ok(Some(s)) = child.try_wait() {
                    panic!("the run ended before fio started: {s}");
                }
                assert!(t.elapsed() < Duration::from_secs(30), "fio never started");
                std::thread::sleep(Duration::from_millis(10));
            }
            signal(&child, libc::SIGINT);
        }
        // The first run is recorded (its line is whole): what the run does next is wait out
        // the interval; a signal during what is left before then is answered there.
        Ending::SigintBetweenRuns => {
            while !std::fs::read(&env.history).is_ok_and(|b| b.ends_with(b"\n")) {
                if let Ok(Some(s)) = child.try_wait() {
                    panic!("the run ended before its first run was recorded: {s}");
                }
                assert!(t.elapsed() < Duration::from_secs(30), "no run recorded");
                std::thread::sleep(Duration::from_millis(10));
            }
            signal(&child, libc::SIGINT);
        }
    }
    let (code, _, err) = wait_code(child);
    (code, err)
}

#[test]
fn removal_is_announced_however_the_run_ends_and_quiet_silences_it() {
    for ending in [
        Ending::Done,
        Ending::FioFails,
        Ending::SigintDuringFio,
        Ending::SigintBetweenRuns,
    ] {
        let env = Env::new();
        let (code, err) = run_to(&env, ending, false);
        let expected = match ending {
            Ending::Done => Some(3),
            Ending::FioFails => Some(2),
            Ending::SigintDuringFio | Ending::SigintBetweenRuns => Some(130),
        };
        assert_eq!(code, expected, "{ending:?}: {err}");
        // The note, then how long it took, then what ended the run.
        let note = err.find("removing the test file (");
        assert!(
            err.contains("): the filesystem is freeing its blocks"),
            "{ending:?}: {err}"
        );
        let took = err.find("\nremoved in ");
        assert!(note.is_some() && took.is_some(), "{ending:?}: {err}");
        assert!(note < took, "{ending:?}: {err}");
        let ended = match ending {
            Ending::Done => None,
            Ending::FioFails => err.find("fio failed"),
            _ => err.find("iopscheck: interrupted by SIGINT: the test file was removed"),
        };
        if !matches!(ending, Ending::Done) {
            assert!(ended.is_some() && took < ended, "{ending:?}: {err}");
        }
        assert!(test_files(&env.dir).is_empty(), "{ending:?}");

        let env = Env::new();
        let (code, err) = run_to(&env, ending, true);
        assert_eq!(code, expected, "{ending:?} --quiet: {err}");
        assert!(
            !err.contains("removing the test file"),
            "{ending:?} --quiet: {err}"
        );
        assert!(!err.contains("removed in"), "{ending:?} --quiet: {err}");
        assert!(test_files(&env.dir).is_empty(), "{ending:?} --quiet");
    }
}

#[test]
fn a_file_left_by_a_killed_run_is_recognised_and_removed_by_the_next_run() {
    let env = Env::new();
    let mut child = spawn_run(&env, &env.dir, &one_run("32m", "30", "psync"));
    wait_for_test_file(&env.dir, &mut child);
    // Where the filesystem has no O_TMPFILE, the file's name appears a moment before its
    // marker (the xattr that lets a later run recognise it as ours): kill only once it is
    // marked, as it is for the whole run. (With O_TMPFILE it is marked before it has a name:
    // tests/testfile.rs.)
    let file = env.dir.join(&test_files(&env.dir)[0]);
    let t = Instant::now();
    while !has_marker(&file) {
        assert!(t.elapsed() < Duration::from_secs(20), "never marked");
        std::thread::sleep(Duration::from_millis(1));
    }
    child.kill().unwrap(); // SIGKILL: no cleanup runs
    child.wait().unwrap();
    let left = test_files(&env.dir);
    assert_eq!(left.len(), 1, "SIGKILL leaves the file behind");
    env.small_run("psync")
        .assert()
        .stderr(predicate::str::contains(
            "removed a test file left by an interrupted run",
        ))
        .stderr(predicate::str::contains(left[0].as_str()));
    assert!(test_files(&env.dir).is_empty());
}

#[test]
fn a_torn_history_line_is_skipped_with_its_line_number_and_later_appends_work() {
    let env = Env::new();
    env.small_run("psync").assert().code(3);
    // a crash in the middle of an append
    use std::io::Write;
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&env.history)
        .unwrap();
    f.write_all(b"{\"schema_version\":1,\"timestamp\":\"2026-")
        .unwrap();
    drop(f);
    env.small_run("psync").assert().code(3);
    env.cmd()
        .args(["report", "--since", "1d"])
        .assert()
        .stderr(predicate::str::contains("history.jsonl:2: skipped"))
        .stdout(predicate::str::contains("2 runs not counted"));
}

#[test]
#[cfg_attr(not(have_root), ignore = "needs root (mounting a tmpfs)")]
fn too_little_space_on_a_small_tmpfs_is_refused_before_writing() {
    let env = Env::new();
    let at = env.tmp.path().join("small");
    let Some(_m) = common::Mount::new(&at, &["-t", "tmpfs", "-o", "size=16m", "tmpfs"]) else {
        return skip("mount -t tmpfs failed");
    };
    run_in(&env, &at)
        .args(["--size", "32m", "--runtime", "1", "--runs", "1"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("not enough free space"));
    assert!(common::listing(&at).is_empty());
    assert!(env.history_lines().is_empty());
}

/// The room is the run's, checked under the run lock. While another run holds the lock (its
/// test file taking most of the directory's filesystem), a run is told of the other run, not
/// refused for the room that run's file takes; with `--wait` it waits, and finds the room
/// that is left once the other run is done.
#[test]
#[cfg_attr(not(have_root), ignore = "needs root (mounting a tmpfs)")]
fn free_space_is_checked_under_the_run_lock() {
    use std::io::BufRead as _;
    let env = Env::new();
    let at = env.tmp.path().join("small");
    let Some(_m) = common::Mount::new(&at, &["-t", "tmpfs", "-o", "size=128m", "tmpfs"]) else {
        return skip("mount -t tmpfs failed");
    };
    // The other run: it holds the lock, and its test file 96 MiB of the 128.
    let lock = std::fs::File::create(env.tmp.path().join("run.lock")).unwrap();
    lock.lock().unwrap();
    let other = at.join("the-other-runs-file");
    std::fs::write(&other, vec![1u8; 96 << 20]).unwrap();
    let args = [
        "--size",
        "16m",
        "--runtime",
        "1",
        "--runs",
        "1",
        "--engine",
        "psync",
    ];
    run_in(&env, &at)
        .args(args)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("held by another program"))
        .stderr(predicate::str::contains("not enough free space").not());

    let mut child = spawn_run(&env, &at, &[&args[..], &["--wait"]].concat());
    let mut err = std::io::BufReader::new(child.stderr.take().unwrap());
    let mut said = String::new();
    // Until it says it waits (or ends, refused).
    loop {
        let mut line = String::new();
        if err.read_line(&mut line).unwrap() == 0 {
            break;
        }
        said.push_str(&line);
        if line.contains("waiting for it to let go") {
            break;
        }
    }
    assert!(said.contains("waiting for it to let go"), "{said}");
    // The other run ends: its file removed, then the lock let go.
    std::fs::remove_file(&other).unwrap();
    drop(lock);
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut err, &mut rest).unwrap();
    let status = child.wait().unwrap();
    said.push_str(&rest);
    assert!(!said.contains("not enough free space"), "{said}");
    assert!(
        [0, 1, 3].contains(&status.code().unwrap()),
        "{status:?}: {said}"
    );
    assert!(env.history_lines().len() == 1, "{said}");
}

#[test]
#[cfg_attr(not(have_root), ignore = "needs root (loop-mounting a filesystem)")]
fn a_disk_filling_up_during_the_run_stops_it_removes_the_file_and_explains() {
    if StdCommand::new("mkfs.ext2").arg("-V").output().is_err() {
        return skip("mkfs.ext2 (e2fsprogs) is not installed");
    }
    // ext2 has no fallocate, so the test file stays sparse and every write needs new space:
    // another process filling the disk makes the run's writes fail with ENOSPC.
    let env = Env::new();
    // The image lives in RAM where possible: the filler writes a gigabyte into it.
    let shm = Path::new("/dev/shm");
    let img_dir = if shm.is_dir() {
        tempfile::tempdir_in(shm).unwrap()
    } else {
        tempfile::tempdir().unwrap()
    };
    let img = img_dir.path().join("fs.img");
    let f = std::fs::File::create(&img).unwrap();
    f.set_len(1280 << 20).unwrap();
    drop(f);
    let mk = StdCommand::new("mkfs.ext2")
        .args(["-q", "-F", "-m", "0"])
        .arg(&img)
        .status()
        .unwrap();
    assert!(mk.success());
    let at = env.tmp.path().join("ext2");
    let Some(_m) = common::Mount::new(&at, &["-o", "loop", img.to_str().unwrap()]) else {
        return skip("mount -o loop failed (no loop devices?)");
    };
    // The disk becomes full at a point this test controls, not one it races for: the run is
    // frozen (SIGSTOP) as soon as its test file exists, the filesystem is filled while it
    // cannot write, and only then does it go on. Its sparse 1 GiB file then needs blocks
    // that no longer exist, so its next writes fail with ENOSPC.
    let mut child = spawn_run(&env, &at, &one_run("1g", "30", "psync"));
    wait_for_test_file(&at, &mut child);
    signal(&child, libc::SIGSTOP);
    wait_until_stopped(&child);
    let file = at.join(&test_files(&at)[0]);
    let allocated = {
        use std::os::unix::fs::MetadataExt;
        std::fs::metadata(&file).unwrap().blocks() * 512
    };
    assert!(
        allocated < 1 << 29,
        "the run had already allocated {allocated} bytes of its file before it was stopped"
    );
    let filler = at.join("filler");
    // dd ends with "No space left on device": that is the point. Megabytes first, then the
    // last blocks one by one.
    for bs in ["bs=1M", "bs=4k"] {
        let _ = StdCommand::new("dd")
            .args([
                "if=/dev/zero",
                bs,
                "status=none",
                "oflag=append",
                "conv=notrunc",
            ])
            .arg(format!("of={}", filler.display()))
            .stderr(Stdio::null())
            .status();
    }
    let free = StdCommand::new("df")
        .args(["--output=avail", "-B1"])
        .arg(&at)
        .output()
        .unwrap();
    let free = String::from_utf8_lossy(&free.stdout);
    assert!(
        free.lines().nth(1).is_some_and(|l| l.trim() == "0"),
        "the filler left space: {free}"
    );
    signal(&child, libc::SIGCONT);
    let (code, _, err) = wait_code(child);
    let _ = std::fs::remove_file(&filler);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("disk full"), "{err}");
    assert!(test_files(&at).is_empty(), "the test file was removed");
    assert!(env.history_lines().is_empty());
}

#[test]
#[cfg_attr(not(have_root), ignore = "needs root (mounting a read-only tmpfs)")]
fn a_read_only_filesystem_is_refused_with_nothing_written() {
    let env = Env::new();
    let at = env.tmp.path().join("ro");
    let Some(_m) = common::Mount::new(&at, &["-t", "tmpfs", "-o", "size=256m,ro", "tmpfs"]) else {
        return skip("mount -t tmpfs -o ro failed");
    };
    run_in(&env, &at)
        .args(["--size", "32m", "--runtime", "1", "--runs", "1"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("read-only filesystem"));
    assert!(env.history_lines().is_empty());
}

#[test]
#[cfg_attr(not(have_root), ignore = "needs root (switching to another user)")]
fn permission_denied_for_another_user_is_a_clear_error() {
    if StdCommand::new("setpriv")
        .arg("--version")
        .output()
        .is_err()
    {
        return skip("setpriv (util-linux) is not installed");
    }
    let env = Env::new();
    use std::os::unix::fs::PermissionsExt;
    // The binary must be reachable by nobody; the directory is not writable by it.
    let dir = PathBuf::from(format!("/tmp/iopscheck-perm-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    let hist = PathBuf::from(format!("/tmp/iopscheck-perm-{}.jsonl", std::process::id()));
    let out = StdCommand::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
        .arg(bin())
        .args([
            "run",
            "--no-history",
            "--size",
            "32m",
            "--runtime",
            "1",
            "--dir",
        ])
        .arg(&dir)
        .env(
            "IOPSCHECK_LOCK_FILE",
            format!("/tmp/iopscheck-perm-{}.lock", std::process::id()),
        )
        .env("IOPSCHECK_HISTORY", &hist)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_file(format!("/tmp/iopscheck-perm-{}.lock", std::process::id()));
    if err.contains("Permission denied")
        && err.contains("iopscheck")
        && out.status.code() != Some(2)
    {
        return skip("the test binary is not reachable by user nobody here");
    }
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("permission denied"), "{err}");
    drop(env);
}

#[test]
fn symlinks_to_files_and_dangling_symlinks_are_refused() {
    let env = Env::new();
    let file = env.tmp.path().join("victim");
    std::fs::write(&file, b"precious").unwrap();
    let link = env.tmp.path().join("link");
    std::os::unix::fs::symlink(&file, &link).unwrap();
    run_in(&env, &link)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("not a directory"));
    assert_eq!(std::fs::read(&file).unwrap(), b"precious");
    let dangling = env.tmp.path().join("dangling");
    std::os::unix::fs::symlink(env.tmp.path().join("gone"), &dangling).unwrap();
    run_in(&env, &dangling)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("no such directory"));
}

#[test]
fn a_symlink_to_a_directory_is_followed_and_recorded_as_its_target() {
    let env = Env::new();
    let link = env.tmp.path().join("data-link");
    std::os::unix::fs::symlink(&env.dir, &link).unwrap();
    run_in(&env, &link)
        .args(one_run("32m", "1", "psync"))
        .assert()
        .code(3);
    let r = &env.history_lines()[0];
    let canonical = std::fs::canonicalize(&env.dir).unwrap();
    assert_eq!(r["target"]["dir"], canonical.display().to_string());
    assert!(common::listing(&env.dir).is_empty());
}

#[test]
fn wait_queues_behind_a_running_check() {
    let env = Env::new();
    let mut first = spawn_run(&env, &env.dir, &one_run("32m", "2", "psync"));
    wait_for_test_file(&env.dir, &mut first);
    let second_dir = env.tmp.path().join("second");
    std::fs::create_dir(&second_dir).unwrap();
    let t = Instant::now();
    env.cmd()
        .args(["run", "--wait", "--dir"])
        .arg(&second_dir)
        .args(one_run("32m", "1", "psync"))
        .assert()
        .code(3)
        .stderr(predicate::str::contains(
            "waiting for another iopscheck run",
        ));
    let status = first.wait().unwrap();
    assert_eq!(status.code(), Some(3));
    assert!(t.elapsed() >= Duration::from_secs(1));
    assert_eq!(env.history_lines().len(), 2);
}

#[test]
#[cfg_attr(not(have_root), ignore = "needs root (the rule applies to root)")]
fn as_root_a_history_in_a_world_writable_directory_is_refused() {
    use std::os::unix::fs::PermissionsExt;
    let env = Env::new();
    let open = env.tmp.path().join("open");
    std::fs::create_dir(&open).unwrap();
    std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).unwrap();
    env.small_run("psync")
        .arg("--history")
        .arg(open.join("history.jsonl"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("world-writable"));
    assert!(common::listing(&env.dir).is_empty());
}

#[test]
fn the_history_is_created_with_sane_permissions_and_test_files_are_private() {
    use std::os::unix::fs::PermissionsExt;
    let env = Env::new();
    let mut child = spawn_run(&env, &env.dir, &one_run("32m", "2", "psync"));
    wait_for_test_file(&env.dir, &mut child);
    for name in test_files(&env.dir) {
        let m = std::fs::symlink_metadata(env.dir.join(name)).unwrap();
        assert_eq!(m.permissions().mode() & 0o777, 0o600);
    }
    assert_eq!(child.wait().unwrap().code(), Some(3));
    let m = std::fs::metadata(&env.history).unwrap();
    assert_eq!(m.permissions().mode() & 0o777, 0o644);
}

/// A pipe whose reader is already gone: every write to it fails with EPIPE, every time, with
/// no timing involved (as `| true` once `true` has exited).
fn closed_pipe() -> Stdio {
    let mut fds = [0i32; 2];
    // SAFETY: pipe(2) fills the two descriptors, which we own from here.
    assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
    use std::os::fd::FromRawFd;
    // SAFETY: both descriptors are fresh; the read end is closed at once.
    unsafe {
        drop(std::os::fd::OwnedFd::from_raw_fd(fds[0]));
        Stdio::from(std::os::fd::OwnedFd::from_raw_fd(fds[1]))
    }
}

/// Runs `cmd` with a normal stdout and again with a closed one; returns both exit codes and
/// the second stderr.
fn codes_open_and_closed(
    env: &Env,
    args: &[&std::ffi::OsStr],
) -> (Option<i32>, Option<i32>, String) {
    let open = env.cmd().args(args).output().unwrap();
    let closed = common::default_signals(env.std_cmd())
        .args(args)
        .stdout(closed_pipe())
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    (
        open.status.code(),
        closed.status.code(),
        String::from_utf8_lossy(&closed.stderr).into_owned(),
    )
}

fn os(v: &[&str]) -> Vec<std::ffi::OsString> {
    v.iter().map(|s| s.into()).collect()
}

/// A history of six Swimlane runs of this host over two days at `mb_s`.
fn seed_history(env: &Env, mb_s: f64, runs: i64) {
    let host = iopscheck::testing::machine::hostname();
    let mut text = String::new();
    for i in 0..runs {
        let ts = chrono::Local::now() - chrono::Duration::hours(1 + 12 * i);
        let r = common::swimlane_record(&host, "/data", ts.fixed_offset(), mb_s);
        text.push_str(&serde_json::to_string(&r).unwrap());
        text.push('\n');
    }
    std::fs::write(&env.history, text).unwrap();
}

#[test]
fn a_closed_stdout_never_changes_the_exit_code_from_the_verdict() {
    let env = Env::new();
    let high = env.swimlane_policy("high.yaml", |y| {
        y.replace("threshold: 3000\n", "threshold: 30000000\n")
    });
    let high = high.to_str().unwrap();
    let dir = env.dir.to_str().unwrap();
    let small = [
        "--no-history",
        "--size",
        "16m",
        "--runtime",
        "1",
        "--runs",
        "1",
        "--engine",
        "posixaio",
    ];
    // Swimlane's job at the sample's own scale (256 MiB, 5 s), so that its import can pass.
    let scaled = env.swimlane_policy("scaled.yaml", |y| {
        y.replace("size: 4g", "size: 256m")
            .replace("runtime: 60s", "runtime: 5s")
    });
    let scaled = scaled.to_str().unwrap();
    let mut cases: Vec<(Vec<std::ffi::OsString>, i32, Option<f64>)> = vec![
        // import: pass, inconclusive, fail
        (
            os(&[
                "import",
                "--policy",
                scaled,
                common::fixture("fio-3.33-sample.json").to_str().unwrap(),
            ]),
            0,
            None,
        ),
        (
            os(&[
                "import",
                common::fixture("fio-3.33-psync-randwrite.txt")
                    .to_str()
                    .unwrap(),
            ]),
            3,
            None,
        ),
        (
            os(&[
                "import",
                "--policy",
                high,
                common::fixture("fio-3.33-sample.json").to_str().unwrap(),
            ]),
            1,
            None,
        ),
        // report: pass, fail, inconclusive
        (os(&["report", "--since", "7d"]), 0, Some(20.0)),
        (os(&["report", "--since", "7d"]), 1, Some(3.0)),
        (
            os(&["report", "--since", "7d", "--format", "json"]),
            3,
            Some(-1.0),
        ),
    ];
    // run: a quick look that passes is inconclusive (it flatters the disk); one that fails
    // even so is a fail. The passing one needs 1 IOPS, not 3000: a 1 s run on a disk shared
    // with other tests can measure under 3000, and that is a fail, not the case under test.
    let low = env.swimlane_policy("low.yaml", |y| {
        y.replace(
            "threshold: 3000\n    level: fail",
            "threshold: 1\n    level: fail",
        )
    });
    assert!(
        std::fs::read_to_string(&low)
            .unwrap()
            .contains("threshold: 1\n")
    );
    let low = low.to_str().unwrap();
    for (policy, want) in [(low, 3), (high, 1)] {
        let mut a = os(&["run", "--dir", dir, "--policy", policy]);
        a.extend(os(&small));
        cases.push((a, want, None));
    }
    for (args, want, seed) in cases {
        match seed {
            Some(mb) if mb < 0.0 => seed_history(&env, 20.0, 1),
            Some(mb) => seed_history(&env, mb, 6),
            None => {}
        }
        let args: Vec<&std::ffi::OsStr> = args.iter().map(|a| a.as_os_str()).collect();
        let (open, closed, err) = codes_open_and_closed(&env, &args);
        assert_eq!(open, Some(want), "{args:?} with a normal stdout");
        assert_eq!(closed, Some(want), "{args:?} with a closed stdout: {err}");
        assert!(!err.contains("panicked"), "{err}");
    }
    // A bundle that could not be written is an error, not the verdict.
    seed_history(&env, 20.0, 6);
    let (_, closed, err) = codes_open_and_closed(
        &env,
        &[std::ffi::OsStr::new("bundle"), "-o".as_ref(), "-".as_ref()],
    );
    assert_eq!(closed, Some(2), "{err}");
    assert!(err.contains("could not be written"), "{err}");
    assert!(test_files(&env.dir).is_empty());
}

#[test]
fn no_command_panics_on_a_closed_stdout_or_stderr() {
    let env = Env::new();
    seed_history(&env, 20.0, 6);
    let policy = env.swimlane_policy("p.yaml", |y| y);
    let fixture = common::fixture("fio-3.33-sample.json");
    let dir = env.dir.to_str().unwrap();
    let mut cases: Vec<Vec<&str>> = vec![
        vec!["policy", "list"],
        vec!["policy", "show", "swimlane"],
        vec!["policy", "check", policy.to_str().unwrap()],
        vec!["man"],
        vec!["--help"],
        vec!["--version"],
        vec!["report", "--list"],
        vec!["report", "--format", "html"],
        vec!["fleet", env.history.to_str().unwrap()],
        vec!["import", fixture.to_str().unwrap(), "--format", "csv"],
        vec![
            "run",
            "--no-history",
            "--dir",
            dir,
            "--size",
            "16m",
            "--runtime",
            "1",
            "--runs",
            "1",
            "--engine",
            "psync",
        ],
    ];
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        cases.push(vec!["completions", shell]);
    }
    for args in cases {
        let out = common::default_signals(env.std_cmd())
            .args(&args)
            .stdout(closed_pipe())
            .stderr(Stdio::piped())
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        assert_ne!(out.status.code(), Some(101), "{args:?}: {err}");
        assert_ne!(out.status.code(), Some(2), "{args:?}: {err}");
        // Both closed, as with `2>&1 | head -1`: still no panic.
        let both = common::default_signals(env.std_cmd())
            .args(&args)
            .stdout(closed_pipe())
            .stderr(closed_pipe())
            .status()
            .unwrap();
        assert_eq!(
            both.code(),
            out.status.code(),
            "{args:?} with stderr closed too"
        );
    }
    assert!(test_files(&env.dir).is_empty());
}

/// Every signal whose default action ends a process and that a user or a system sends to a
/// long check: a dropped ssh session (SIGHUP), ^\ (SIGQUIT), ^C, kill, and the user signals.
const ENDING_SIGNALS: [i32; 6] = [
    libc::SIGHUP,
    libc::SIGINT,
    libc::SIGQUIT,
    libc::SIGTERM,
    libc::SIGUSR1,
    libc::SIGUSR2,
];

/// A read job without an end fsync: its layout writes the file and fsyncs it, and the only
/// child process the run forks before a signal is that fsync's.
fn read_policy(env: &Env) -> PathBuf {
    env.swimlane_policy("read.yaml", |y| {
        y.replace("rw: randwrite", "rw: randread")
            .replace("  end_fsync: true\n", "")
            .replace("metric: write_iops_formula", "metric: read_iops_formula")
            .replace("metric: write_bw_mb_s", "metric: read_bw_mb_s")
            .replace("metric: write_iops\n", "metric: read_iops\n")
    })
}

/// Bytes the process has passed to write calls (/proc/PID/io `wchar`).
fn written(child: &Child) -> u64 {
    std::fs::read_to_string(format!("/proc/{}/io", child.id()))
        .ok()
        .and_then(|io| {
            io.lines()
                .find_map(|l| l.strip_prefix("wchar: "))
                .and_then(|v| v.trim().parse().ok())
        })
        .unwrap_or(0)
}

/// Sends `sig` while the run is frozen, so it is handled at the point the run was stopped.
fn signal_while_stopped(child: &Child, sig: i32) {
    signal(child, libc::SIGSTOP);
    wait_until_stopped(child);
    signal(child, sig);
    signal(child, libc::SIGCONT);
}

/// The first child process the run forks (an fsync child, see engine/sys.rs), or None if the
/// run ended first: a flush quicker than this loop's look at /proc is a moment missed, not a
/// behaviour, and the caller tries again. Spins: the child may live only milliseconds.
fn wait_for_child_process(child: &mut Child, what: &str) -> Option<u32> {
    let t = Instant::now();
    loop {
        if let Some(&pid) = children(child.id()).first() {
            return Some(pid);
        }
        if let Ok(Some(status)) = child.try_wait() {
            // A run that completed (a verdict: pass, fail, or a quick look's inconclusive)
            // before its child was seen is a miss, tried again; an error is a failure.
            assert!(
                matches!(status.code(), Some(0 | 1 | 3)),
                "the run failed before {what}: {status}"
            );
            return None;
        }
        assert!(t.elapsed() < Duration::from_secs(60), "no {what}");
        std::hint::spin_loop();
    }
}

/// Signals the run while its fsync child is held stopped; returns the run's exit code, how
/// long it took to exit, and its stderr.
fn signal_during_fsync(
    mut child: Child,
    sig: i32,
    what: &str,
) -> Option<(Option<i32>, Duration, String)> {
    let flusher = wait_for_child_process(&mut child, what)?;
    // SAFETY: kill(2) on the run's own fsync child.
    unsafe { libc::kill(flusher as i32, libc::SIGSTOP) };
    signal(&child, sig);
    let t = Instant::now();
    while child.try_wait().unwrap().is_none() {
        assert!(
            t.elapsed() < Duration::from_secs(60),
            "the run did not stop"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    let took = t.elapsed();
    // SAFETY: as above; the orphaned child is ours to end.
    unsafe { libc::kill(flusher as i32, libc::SIGKILL) };
    let (code, _, err) = wait_code(child);
    Some((code, took, err))
}

fn assert_ended_by(sig: i32, code: Option<i32>, took: Duration, err: &str, env: &Env, dir: &Path) {
    assert_eq!(code, Some(128 + sig), "signal {sig}: {err}");
    assert!(took < Duration::from_secs(3), "signal {sig}: took {took:?}");
    assert!(err.contains("interrupted"), "signal {sig}: {err}");
    assert!(
        test_files(dir).is_empty(),
        "signal {sig} left the test file"
    );
    assert!(env.history_lines().is_empty(), "signal {sig}: recorded");
}

#[test]
fn every_ending_signal_during_layout_removes_the_file_and_exits_128_plus_n() {
    for sig in ENDING_SIGNALS {
        let env = Env::new();
        let policy = read_policy(&env);
        let mut child = spawn_run(
            &env,
            &env.dir,
            &run_args(
                &["--policy", policy.to_str().unwrap()],
                "2g",
                "5",
                "1",
                "psync",
            ),
        );
        wait_for_test_file(&env.dir, &mut child);
        signal_while_stopped(&child, sig);
        let (code, took, err) = wait_code(child);
        assert_ended_by(sig, code, took, &err, &env, &env.dir);
    }
}

#[test]
fn every_ending_signal_during_the_layouts_fsync_exits_at_once() {
    // The layout of a read job ends with an fsync; held stopped, it would keep a run that
    // flushes in its own thread from exiting at all.
    // A missed fsync (the run completed before it was seen) is tried again, a few times.
    let (mut sig_i, mut missed) = (0, 0);
    while let Some(&sig) = ENDING_SIGNALS.get(sig_i) {
        let env = Env::new();
        let policy = read_policy(&env);
        let child = spawn_run(
            &env,
            &env.dir,
            &run_args(
                &["--policy", policy.to_str().unwrap()],
                "64m",
                "2",
                "1",
                "psync",
            ),
        );
        let Some((code, took, err)) = signal_during_fsync(child, sig, "the layout's fsync") else {
            missed += 1;
            assert!(missed < 5, "the layout's fsync was never caught in 5 tries");
            continue;
        };
        assert_ended_by(sig, code, took, &err, &env, &env.dir);
        sig_i += 1;
    }
}

#[test]
fn every_ending_signal_while_running_removes_the_file_and_exits_128_plus_n() {
    for sig in ENDING_SIGNALS {
        let env = Env::new();
        let mut child = spawn_run(&env, &env.dir, &one_run("64m", "30", "psync"));
        wait_for_test_file(&env.dir, &mut child);
        // A write job's layout writes nothing: once the run has written a mebibyte, it is
        // in its timed phase.
        let t = Instant::now();
        while written(&child) < 1 << 20 {
            assert!(t.elapsed() < Duration::from_secs(30), "the run never wrote");
            std::thread::sleep(Duration::from_millis(5));
        }
        signal_while_stopped(&child, sig);
        let (code, took, err) = wait_code(child);
        assert_ended_by(sig, code, took, &err, &env, &env.dir);
    }
}

#[test]
fn every_ending_signal_during_the_final_fsync_exits_at_once() {
    // A missed fsync (the run completed before it was seen) is tried again, a few times.
    let (mut sig_i, mut missed) = (0, 0);
    while let Some(&sig) = ENDING_SIGNALS.get(sig_i) {
        let env = Env::new();
        let child = spawn_run(&env, &env.dir, &one_run("512m", "1", "psync"));
        let Some((code, took, err)) = signal_during_fsync(child, sig, "the final fsync") else {
            missed += 1;
            assert!(missed < 5, "the final fsync was never caught in 5 tries");
            continue;
        };
        assert_ended_by(sig, code, took, &err, &env, &env.dir);
        sig_i += 1;
    }
}

#[test]
fn every_ending_signal_between_runs_keeps_the_completed_run() {
    for sig in ENDING_SIGNALS {
        let env = Env::new();
        let mut child = spawn_run(
            &env,
            &env.dir,
            &run_args(&["--interval", "60s"], "16m", "1", "2", "psync"),
        );
        let tap = StderrTap::new(&mut child);
        tap.wait_for("run 1/2:", &mut child);
        signal_while_stopped(&child, sig);
        let (code, took, err) = tap.finish(child);
        assert_eq!(code, Some(128 + sig), "signal {sig}: {err}");
        assert!(took < Duration::from_secs(3), "signal {sig}: took {took:?}");
        assert!(err.contains("1 completed run kept"), "{err}");
        assert_eq!(env.history_lines().len(), 1);
        assert!(test_files(&env.dir).is_empty());
    }
}

/// Every process below `pid` (children, grandchildren, ...).
fn descendants(pid: u32) -> Vec<u32> {
    let mut all = Vec::new();
    let mut todo = vec![pid];
    while let Some(p) = todo.pop() {
        for c in children(p) {
            all.push(c);
            todo.push(c);
        }
    }
    all
}

/// Whether `pid` is still a live process (not a zombie awaiting its reaper).
fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        let state = stat.rsplit(')').next().unwrap_or("").trim_start();
        !state.starts_with('Z') && !state.starts_with('X')
    })
}

#[test]
#[cfg_attr(not(have_fio), ignore = "needs fio")]
fn no_fio_process_survives_an_interrupted_fio_run() {
    for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
        let env = Env::new();
        let mut child = spawn_run(&env, &env.dir, &one_run("64m", "60", "fio"));
        // fio forks a process for its job: wait until that job process exists.
        let t = Instant::now();
        let fio = loop {
            let d = descendants(child.id());
            let fio: Vec<u32> = d
                .iter()
                .copied()
                .filter(|p| {
                    std::fs::read_to_string(format!("/proc/{p}/comm"))
                        .is_ok_and(|c| c.trim() == "fio")
                })
                .collect();
            if fio.len() >= 2 {
                break fio;
            }
            if let Ok(Some(s)) = child.try_wait() {
                panic!("the run ended before fio's job started: {s}");
            }
            assert!(
                t.elapsed() < Duration::from_secs(60),
                "fio's job never started"
            );
            std::thread::sleep(Duration::from_millis(10));
        };
        signal(&child, sig);
        let (code, _, err) = wait_code(child);
        assert_eq!(code, Some(128 + sig), "{err}");
        let left: Vec<u32> = fio.iter().copied().filter(|p| alive(*p)).collect();
        for p in &left {
            // SAFETY: ending a process this test's run started, so none outlives the test.
            unsafe { libc::kill(*p as i32, libc::SIGKILL) };
        }
        assert!(left.is_empty(), "fio processes {left:?} outlived the run");
        assert!(test_files(&env.dir).is_empty());
        assert!(env.history_lines().is_empty());
    }
}

/// The shipped /etc/iopscheck/iopscheck.env with `edits` applied (KEY, value) and `extra`
/// lines added: the file as an administrator would fill it in.
fn env_file(path: &Path, edits: &[(&str, String)], extra: &[(&str, String)]) {
    let shipped = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("packaging/etc/iopscheck.env"),
    )
    .unwrap();
    let mut text = String::new();
    for line in shipped.lines() {
        let key = line.split_once('=').map(|(k, _)| k).unwrap_or("");
        match edits.iter().find(|(k, _)| *k == key) {
            Some((k, v)) => text.push_str(&format!("{k}={v}\n")),
            None => text.push_str(&format!("{line}\n")),
        }
    }
    for (k, v) in extra {
        text.push_str(&format!("{k}={v}\n"));
    }
    std::fs::write(path, text).unwrap();
}

#[test]
fn the_scheduled_check_reads_its_env_file_as_settings_not_as_a_shell_script() {
    let env = Env::new();
    // A quick policy, so that even a run that lost its options ends quickly (and is caught).
    let policy = env.swimlane_policy("quick.yaml", |y| {
        y.replace("size: 4g", "size: 16m")
            .replace("runtime: 60s", "runtime: 1s")
            .replace("runs: 3", "runs: 1")
    });
    let script =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("packaging/libexec/iopscheck-scheduled");
    let state = env.tmp.path().join("state");
    let settings = |run_args: &str| -> Vec<(&'static str, String)> {
        vec![
            ("IOPSCHECK_DIR", env.dir.display().to_string()),
            ("IOPSCHECK_POLICY", policy.display().to_string()),
            ("IOPSCHECK_RUN_ARGS", run_args.to_string()),
            ("IOPSCHECK_TEXTFILE", String::new()),
        ]
    };
    let common_vars = vec![
        ("IOPSCHECK_HISTORY", env.history.display().to_string()),
        ("IOPSCHECK_STATE_DIR", state.display().to_string()),
        ("IOPSCHECK_BIN", bin().display().to_string()),
        (
            "IOPSCHECK_LOCK_FILE",
            env.tmp.path().join("run.lock").display().to_string(),
        ),
    ];
    let mut examples = vec!["--size 8m --runtime 2s --engine psync"];
    if common::have_fio() {
        // The env file's own example.
        examples.push("--engine fio");
    } else {
        skip("fio is not installed: the --engine fio example is not tried");
    }
    for (i, example) in examples.iter().enumerate() {
        for systemd in [false, true] {
            let _ = std::fs::remove_file(&env.history);
            let mut c = StdCommand::new("sh");
            c.arg(&script)
                .env_clear()
                .env("PATH", std::env::var_os("PATH").unwrap());
            if systemd {
                // systemd reads the file itself (EnvironmentFile=) and hands over the values.
                for (k, v) in settings(example).into_iter().chain(common_vars.clone()) {
                    c.env(k, v);
                }
            } else {
                let file = env.tmp.path().join(format!("iopscheck-{i}.env"));
                env_file(&file, &settings(example), &common_vars);
                c.arg("--env").arg(&file);
            }
            let out = c.output().unwrap();
            let err = String::from_utf8_lossy(&out.stderr);
            let path = if systemd { "systemd" } else { "cron" };
            assert!(
                [0, 1, 3].contains(&out.status.code().unwrap()),
                "{path} {example}: {err}"
            );
            let lines = env.history_lines();
            assert_eq!(lines.len(), 1, "{path} {example}: {err}");
            let r = &lines[0];
            if example.contains("--size 8m") {
                assert_eq!(r["overrides"]["size"], "8m", "{path}: {r}");
                assert_eq!(r["overrides"]["runtime"], "2s", "{path}: {r}");
                assert_eq!(r["engine"], "psync", "{path}: {r}");
            } else {
                assert!(
                    r["engine"].as_str().unwrap().starts_with("fio/"),
                    "{path}: {r}"
                );
            }
            assert!(state.join("report.json").is_file());
            assert!(test_files(&env.dir).is_empty());
        }
    }
    // The shipped file as it is: nothing to test yet, said plainly, and nothing executed.
    let out = StdCommand::new("sh")
        .arg(&script)
        .arg("--env")
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("packaging/etc/iopscheck.env"))
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("IOPSCHECK_DIR is not set"));
}

#[test]
fn two_outputs_to_one_file_and_history_with_no_history_are_refused() {
    let env = Env::new();
    let out = env.tmp.path().join("a.json");
    let same = format!("{}", out.display());
    env.small_run("psync")
        .args([
            "--export",
            &format!("json={same}"),
            "--export",
            &format!("html={same}"),
        ])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(format!(
            "--export json={same} and --export html={same}"
        )));
    assert!(!out.exists());
    assert!(
        common::listing(&env.dir).is_empty(),
        "refused before any test"
    );
    // -o and --export naming one file through different spellings.
    seed_history(&env, 20.0, 6);
    let dotted = env.tmp.path().join("data/../a.json");
    env.cmd()
        .args(["report", "--format", "json", "-o"])
        .arg(&out)
        .arg("--export")
        .arg(format!("html={}", dotted.display()))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("-o/--output"))
        .stderr(predicate::str::contains("both write"));
    assert!(!out.exists());
    let hist = env.tmp.path().join("other.jsonl");
    env.small_run("psync")
        .arg("--history")
        .arg(&hist)
        .arg("--no-history")
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--history and --no-history"));
    assert!(!hist.exists());
    assert!(common::listing(&env.dir).is_empty());
}

#[test]
fn a_symlinked_history_is_refused_by_report_fleet_bundle_and_run() {
    let env = Env::new();
    seed_history(&env, 20.0, 6);
    let link = env.tmp.path().join("link.jsonl");
    std::os::unix::fs::symlink(&env.history, &link).unwrap();
    let before = std::fs::read(&env.history).unwrap();
    let bundle = env.tmp.path().join("b.tar.gz");
    for args in [
        vec![
            "report".into(),
            "--history".into(),
            link.clone().into_os_string(),
        ],
        vec!["fleet".into(), link.clone().into_os_string()],
        vec![
            "bundle".into(),
            "-o".into(),
            bundle.clone().into_os_string(),
            "--history".into(),
            link.clone().into_os_string(),
        ],
    ] {
        env.cmd()
            .args(&args)
            .assert()
            .code(2)
            .stderr(predicate::str::contains("is a symbolic link"));
    }
    assert!(!bundle.exists());
    env.small_run("psync")
        .arg("--history")
        .arg(&link)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("is a symbolic link"));
    assert!(common::listing(&env.dir).is_empty());
    assert_eq!(std::fs::read(&env.history).unwrap(), before);
}

#[test]
#[cfg_attr(
    not(have_root),
    ignore = "needs root (the world-writable rule applies to root)"
)]
fn a_world_writable_history_is_refused_by_report_fleet_and_bundle() {
    let env = Env::new();
    seed_history(&env, 20.0, 6);
    let bundle = env.tmp.path().join("b.tar.gz");
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&env.history, std::fs::Permissions::from_mode(0o666)).unwrap();
    for args in [
        vec![
            "report".into(),
            "--history".into(),
            env.history.clone().into_os_string(),
        ],
        vec!["fleet".into(), env.history.clone().into_os_string()],
        vec![
            "bundle".into(),
            "-o".into(),
            bundle.clone().into_os_string(),
        ],
    ] {
        env.cmd()
            .args(&args)
            .assert()
            .code(2)
            .stderr(predicate::str::contains("other users can write"));
    }
    assert!(!bundle.exists());
}

#[test]
#[cfg_attr(not(have_root), ignore = "needs root (mounting a tmpfs)")]
fn a_full_disk_during_a_history_append_leaves_the_history_byte_identical() {
    let env = Env::new();
    let at = env.tmp.path().join("small");
    let Some(_m) = common::Mount::new(&at, &["-t", "tmpfs", "-o", "size=64k", "tmpfs"]) else {
        return skip("mount -t tmpfs failed");
    };
    // One record, padded with a blank line so that only 96 bytes are left in the file's last
    // page: the next record starts to be written, then the disk is full.
    let history = at.join("history.jsonl");
    let host = iopscheck::testing::machine::hostname();
    let r = common::swimlane_record(&host, "/data", chrono::Local::now().fixed_offset(), 20.0);
    let mut text = serde_json::to_string(&r).unwrap();
    text.push('\n');
    let pad = 4000 - text.len() % 4096 - 1;
    text.push_str(&" ".repeat(pad));
    text.push('\n');
    assert_eq!(text.len() % 4096, 4000);
    std::fs::write(&history, &text).unwrap();
    let _ = StdCommand::new("dd")
        .args(["if=/dev/zero", "bs=4k", "status=none"])
        .arg(format!("of={}", at.join("filler").display()))
        .stderr(Stdio::null())
        .status();
    env.cmd()
        .env("IOPSCHECK_HISTORY", &history)
        .args(["import", "--record", "--host", "node1"])
        .arg(common::fixture("fio-3.33-sample.json"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("the record was not kept"));
    assert_eq!(
        std::fs::read_to_string(&history).unwrap(),
        text,
        "byte-identical"
    );
}

#[test]
fn a_run_refused_before_writing_creates_no_history_file_and_no_directory() {
    let env = Env::new();
    let new = env.tmp.path().join("new");
    let hist = new.join("deep/history.jsonl");
    // Refused in preflight: the directory to test does not exist.
    run_in(&env, env.tmp.path().join("missing"))
        .arg("--history")
        .arg(&hist)
        .assert()
        .code(2);
    assert!(!new.exists(), "a refused run created {}", new.display());
    // Refused by the lock: another program (this test) holds it.
    let lock = std::fs::File::create(env.tmp.path().join("run.lock")).unwrap();
    lock.lock().unwrap();
    env.small_run("psync")
        .arg("--history")
        .arg(&hist)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("held by another program"));
    assert!(!new.exists(), "a refused run created {}", new.display());
    drop(lock);
    // The first record creates them (a quick look: inconclusive, or a fail on a slow disk).
    env.small_run("psync")
        .arg("--history")
        .arg(&hist)
        .assert()
        .code(predicate::in_iter([1, 3]));
    assert!(hist.is_file());
}

#[test]
#[cfg_attr(not(have_root), ignore = "needs root (switching to another user)")]
fn a_non_root_run_never_puts_its_lock_where_another_user_could_plant_it() {
    if StdCommand::new("setpriv")
        .arg("--version")
        .output()
        .is_err()
    {
        return skip("setpriv (util-linux) is not installed");
    }
    use std::os::unix::fs::PermissionsExt;
    let base = PathBuf::from(format!("/tmp/iopscheck-lock-{}", std::process::id()));
    let home = base.join("home");
    let dir = base.join("data");
    for d in [&home, &dir] {
        std::fs::create_dir_all(d).unwrap();
        std::os::unix::fs::chown(d, Some(65534), Some(65534)).unwrap();
    }
    std::fs::set_permissions(&base, std::fs::Permissions::from_mode(0o755)).unwrap();
    let planted = PathBuf::from("/tmp/iopscheck-65534.lock");
    let planted_before = planted.exists();
    let out = StdCommand::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
        .arg(bin())
        .args([
            "run",
            "--no-history",
            "--size",
            "16m",
            "--runtime",
            "1",
            "--runs",
            "1",
            "--engine",
            "psync",
            "--dir",
        ])
        .arg(&dir)
        .env_clear()
        .env("HOME", &home)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    let lock = home.join(".local/state/iopscheck/run.lock");
    let lock_made = lock.is_file();
    let mode = std::fs::metadata(home.join(".local/state/iopscheck"))
        .map(|m| m.permissions().mode() & 0o777);
    let _ = std::fs::remove_dir_all(&base);
    if err.contains("Permission denied") && out.status.code() != Some(0) && !lock_made {
        return skip("the test binary is not reachable by user nobody here");
    }
    assert!([0, 1, 3].contains(&out.status.code().unwrap()), "{err}");
    assert!(
        lock_made,
        "the lock is in the user's own state directory: {err}"
    );
    assert_eq!(mode.unwrap(), 0o700);
    assert_eq!(planted.exists(), planted_before, "nothing in /tmp");
}

#[test]
#[cfg_attr(
    not(have_root),
    ignore = "needs root (reading another user's private file)"
)]
fn policy_check_never_quotes_a_file_the_user_could_not_read_otherwise() {
    let env = Env::new();
    let shadow = std::fs::read_to_string("/etc/shadow").unwrap_or_default();
    let first = shadow.lines().next().unwrap_or("root:*:");
    let link = env.tmp.path().join("shadow.yaml");
    std::os::unix::fs::symlink("/etc/shadow", &link).unwrap();
    let out = env
        .cmd()
        .args(["policy", "check"])
        .arg(&link)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    let user = first.split(':').next().unwrap();
    assert!(
        !err.contains(first) && !err.contains(&format!("{user}:")),
        "{err}"
    );
    assert!(err.contains("not a policy document"), "{err}");
    // A policy-shaped file private to another user, through a link: located, not quoted.
    let secret = env.tmp.path().join("secret.yaml");
    std::fs::write(&secret, "name: x\ntoken_TOPSECRET: 1\n").unwrap();
    std::os::unix::fs::chown(&secret, Some(65534), Some(65534)).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&secret, std::fs::Permissions::from_mode(0o600)).unwrap();
    let link = env.tmp.path().join("link.yaml");
    std::os::unix::fs::symlink(&secret, &link).unwrap();
    for p in [&link, &secret] {
        let out = env.cmd().args(["policy", "check"]).arg(p).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(!err.contains("TOPSECRET"), "{err}");
        // as root another user's policy is refused before it is read (it could decide root's
        // verdict); read or not, its content is never shown
        assert!(
            err.contains("content is not shown")
                || err.contains("refusing, as root, a policy another user could change"),
            "{err}"
        );
    }
    // The user's own policy: the offending key is named, as before.
    let own = env.tmp.path().join("own.yaml");
    std::fs::write(&own, "name: x\nfoo_key: 1\n").unwrap();
    env.cmd()
        .args(["policy", "check"])
        .arg(&own)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("foo_key"));
}

/// The run's stderr, read line by line as it comes, so a test can wait for a message.
struct StderrTap {
    rx: std::sync::mpsc::Receiver<String>,
    reader: std::thread::JoinHandle<()>,
    seen: std::cell::RefCell<Vec<String>>,
}

impl StderrTap {
    fn new(child: &mut Child) -> StderrTap {
        let stderr = child.stderr.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        let reader = std::thread::spawn(move || {
            use std::io::BufRead;
            for line in std::io::BufReader::new(stderr)
                .lines()
                .map_while(Result::ok)
            {
                let _ = tx.send(line);
            }
        });
        StderrTap {
            rx,
            reader,
            seen: Default::default(),
        }
    }

    /// Waits for a line starting with `prefix`.
    fn wait_for(&self, prefix: &str, child: &mut Child) {
        let t = Instant::now();
        loop {
            match self.rx.recv_timeout(Duration::from_millis(50)) {
                Ok(line) => {
                    let hit = line.starts_with(prefix);
                    self.seen.borrow_mut().push(line);
                    if hit {
                        return;
                    }
                }
                Err(_) => {
                    if let Ok(Some(s)) = child.try_wait() {
                        panic!("ended before '{prefix}': {s}: {:?}", self.seen.borrow());
                    }
                }
            }
            assert!(t.elapsed() < Duration::from_secs(60), "no '{prefix}'");
        }
    }

    /// Waits for the run to end: its exit code, how long that took, and all it said.
    fn finish(self, mut child: Child) -> (Option<i32>, Duration, String) {
        let t = Instant::now();
        let status = loop {
            if let Some(s) = child.try_wait().unwrap() {
                break s;
            }
            if t.elapsed() > Duration::from_secs(30) {
                let _ = child.kill();
                panic!("the run did not stop within 30 s of the signal");
            }
            std::thread::sleep(Duration::from_millis(10));
        };
        let took = t.elapsed();
        self.reader.join().unwrap();
        let mut all = self.seen.into_inner();
        all.extend(self.rx.try_iter());
        (status.code(), took, all.join("\n"))
    }
}

/// A duration the environment gives (the lock's wait, the removal note's delay) that is no
/// duration is refused, naming the variable and the value, before anything runs: never the
/// default in silence (`IOPSCHECK_FLUSH_WAIT=-5s`, meant to fail fast, waited two minutes).
#[test]
fn a_bad_duration_in_the_environment_is_refused_before_anything_runs() {
    for var in ["IOPSCHECK_FLUSH_WAIT", "IOPSCHECK_REMOVAL_NOTE_AFTER"] {
        for bad in ["abc", "-5s", "5 parsecs"] {
            let env = Env::new();
            let out = env.small_run("psync").env(var, bad).output().unwrap();
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{var}={bad}: {err}");
            assert!(
                err.contains(&format!("{var}: '{bad}' is not a duration")),
                "{var}={bad}: {err}"
            );
            assert!(!env.history.exists(), "{var}={bad}: a run was recorded");
            assert!(env.dir_listing().is_empty(), "{var}={bad}: files left");
            assert!(
                !env.tmp.path().join("run.lock").exists(),
                "{var}={bad}: the lock was taken"
            );
        }
        // Empty is not set: the default.
        let env = Env::new();
        let out = env.small_run("psync").env(var, "").output().unwrap();
        assert!(
            matches!(out.status.code(), Some(0 | 1 | 3)),
            "{var}= : {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}
