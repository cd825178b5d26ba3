//! Faults and bad input (issue "Safe under faults and bad input"): signals in every phase,
//! killed runs, full and read-only filesystems, permissions, concurrency. Every test uses the
//! real binary; tests that need root (mounts, other users) skip with a printed reason.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Child, Command as StdCommand, Stdio};
use std::time::{Duration, Instant};

use common::{Env, is_root, skip};
use predicates::prelude::*;

fn bin() -> PathBuf {
    PathBuf::from(assert_cmd::cargo::cargo_bin!("iopscheck"))
}

/// Starts `iopscheck run` in the background with this env's history and lock.
fn spawn_run(env: &Env, dir: &Path, extra: &[&str]) -> Child {
    StdCommand::new(bin())
        .args(["run", "--dir"])
        .arg(dir)
        .args(extra)
        .env("IOPSCHECK_HISTORY", &env.history)
        .env("IOPSCHECK_LOCK_FILE", env.tmp.path().join("run.lock"))
        .env("NO_COLOR", "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// The arguments of a single run of the given size, runtime and engine.
fn one_run<'a>(size: &'a str, runtime: &'a str, engine: &'a str) -> [&'a str; 8] {
    [
        "--size",
        size,
        "--runtime",
        runtime,
        "--runs",
        "1",
        "--engine",
        engine,
    ]
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
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            let mut err = String::new();
            use std::io::Read;
            child
                .stderr
                .take()
                .unwrap()
                .read_to_string(&mut err)
                .unwrap();
            return (status.code(), t.elapsed(), err);
        }
        if t.elapsed() > Duration::from_secs(30) {
            let _ = child.kill();
            panic!("the run did not stop within 30 s of the signal");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn write_policy(env: &Env, name: &str, edit: impl Fn(String) -> String) -> PathBuf {
    let out = env
        .cmd()
        .args(["policy", "show", "swimlane"])
        .output()
        .unwrap();
    let yaml = edit(String::from_utf8(out.stdout).unwrap());
    let p = env.tmp.path().join(name);
    std::fs::write(&p, yaml).unwrap();
    p
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
    let policy = write_policy(&env, "read.yaml", |y| {
        y.replace("rw: randwrite", "rw: randread")
            .replace("  end_fsync: true\n", "")
            .replace("metric: write_iops_formula", "metric: read_iops_formula")
            .replace("metric: write_bw_mb_s", "metric: read_bw_mb_s")
            .replace("metric: write_iops\n", "metric: read_iops\n")
    });
    let mut child = spawn_run(
        &env,
        &env.dir,
        &[
            "--policy",
            policy.to_str().unwrap(),
            "--size",
            "2g",
            "--runtime",
            "5",
            "--runs",
            "1",
            "--engine",
            "psync",
        ],
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
    assert!(took < Duration::from_secs(3), "took {took:?}");
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
        &[
            "--size",
            "32m",
            "--runtime",
            "1",
            "--runs",
            "2",
            "--interval",
            "60s",
            "--engine",
            "psync",
        ],
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

#[test]
fn a_file_left_by_a_killed_run_is_recognised_and_removed_by_the_next_run() {
    let env = Env::new();
    let mut child = spawn_run(&env, &env.dir, &one_run("32m", "30", "psync"));
    wait_for_test_file(&env.dir, &mut child);
    // The file's name appears a moment before its marker (the xattr that lets a later run
    // recognise it as ours): kill only once it is marked, as it is for the whole run.
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
    env.small_run("psync").assert().success();
    // a crash in the middle of an append
    use std::io::Write;
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&env.history)
        .unwrap();
    f.write_all(b"{\"schema_version\":1,\"timestamp\":\"2026-")
        .unwrap();
    drop(f);
    env.small_run("psync").assert().success();
    env.cmd()
        .args(["report", "--since", "1d"])
        .assert()
        .stderr(predicate::str::contains("history.jsonl:2: skipped"))
        .stdout(predicate::str::contains("2 of 6 runs"));
}

/// A tmpfs (or other) mount in a temp dir, unmounted on drop.
struct Mount {
    dir: PathBuf,
}

impl Mount {
    fn new(at: &Path, args: &[&str]) -> Option<Mount> {
        std::fs::create_dir_all(at).unwrap();
        let ok = StdCommand::new("mount")
            .args(args)
            .arg(at)
            .status()
            .is_ok_and(|s| s.success());
        ok.then(|| Mount {
            dir: at.to_path_buf(),
        })
    }
}

impl Drop for Mount {
    fn drop(&mut self) {
        let _ = StdCommand::new("umount").arg("-l").arg(&self.dir).status();
    }
}

#[test]
fn too_little_space_on_a_small_tmpfs_is_refused_before_writing() {
    if !is_root() {
        return skip("mounting a tmpfs needs root");
    }
    let env = Env::new();
    let at = env.tmp.path().join("small");
    let Some(_m) = Mount::new(&at, &["-t", "tmpfs", "-o", "size=16m", "tmpfs"]) else {
        return skip("mount -t tmpfs failed");
    };
    env.cmd()
        .args(["run", "--dir"])
        .arg(&at)
        .args(["--size", "32m", "--runtime", "1", "--runs", "1"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("not enough free space"));
    assert!(common::listing(&at).is_empty());
    assert!(env.history_lines().is_empty());
}

#[test]
fn a_disk_filling_up_during_the_run_stops_it_removes_the_file_and_explains() {
    if !is_root() {
        return skip("loop-mounting a filesystem needs root");
    }
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
    let Some(_m) = Mount::new(&at, &["-o", "loop", img.to_str().unwrap()]) else {
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
fn a_read_only_filesystem_is_refused_with_nothing_written() {
    if !is_root() {
        return skip("mounting a read-only tmpfs needs root");
    }
    let env = Env::new();
    let at = env.tmp.path().join("ro");
    let Some(_m) = Mount::new(&at, &["-t", "tmpfs", "-o", "size=256m,ro", "tmpfs"]) else {
        return skip("mount -t tmpfs -o ro failed");
    };
    env.cmd()
        .args(["run", "--dir"])
        .arg(&at)
        .args(["--size", "32m", "--runtime", "1", "--runs", "1"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("read-only filesystem"));
    assert!(env.history_lines().is_empty());
}

#[test]
fn permission_denied_for_another_user_is_a_clear_error() {
    if !is_root() {
        return skip("switching to another user needs root");
    }
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
    env.cmd()
        .args(["run", "--dir"])
        .arg(&link)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("not a directory"));
    assert_eq!(std::fs::read(&file).unwrap(), b"precious");
    let dangling = env.tmp.path().join("dangling");
    std::os::unix::fs::symlink(env.tmp.path().join("gone"), &dangling).unwrap();
    env.cmd()
        .args(["run", "--dir"])
        .arg(&dangling)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("no such directory"));
}

#[test]
fn a_symlink_to_a_directory_is_followed_and_recorded_as_its_target() {
    let env = Env::new();
    let link = env.tmp.path().join("data-link");
    std::os::unix::fs::symlink(&env.dir, &link).unwrap();
    env.cmd()
        .args(["run", "--dir"])
        .arg(&link)
        .args([
            "--size",
            "32m",
            "--runtime",
            "1",
            "--runs",
            "1",
            "--engine",
            "psync",
        ])
        .assert()
        .success();
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
        .args([
            "--size",
            "32m",
            "--runtime",
            "1",
            "--runs",
            "1",
            "--engine",
            "psync",
        ])
        .assert()
        .success()
        .stderr(predicate::str::contains(
            "waiting for another iopscheck run",
        ));
    let status = first.wait().unwrap();
    assert!(status.success());
    assert!(t.elapsed() >= Duration::from_secs(1));
    assert_eq!(env.history_lines().len(), 2);
}

#[test]
fn as_root_a_history_in_a_world_writable_directory_is_refused() {
    if !is_root() {
        return skip("the rule applies to root");
    }
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
    assert!(child.wait().unwrap().success());
    let m = std::fs::metadata(&env.history).unwrap();
    assert_eq!(m.permissions().mode() & 0o777, 0o644);
}
