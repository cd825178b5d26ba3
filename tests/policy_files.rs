//! What a policy file may be (F8): a regular file only, never a FIFO (which would hang the
//! read) or a device (which would be read whole into memory); and, as root, one nobody else
//! could change or replace, judged over its whole path as the history is. Through the binary,
//! for `policy check FILE` and `-p FILE`.

mod common;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use common::{Env, skip};

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// Runs `cmd` to its end, or kills it if it has not ended within a minute (a hang, which the
/// assertion then reports): (exit code, stderr).
fn bounded(env: &Env, args: &[&std::ffi::OsStr]) -> (Option<i32>, String) {
    let mut child = env
        .std_cmd()
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    match common::wait_with_stderr(&mut child, Duration::from_secs(60)) {
        Some((status, err)) => (status.code(), err),
        None => (
            None,
            format!("{args:?}: still running after a minute (hung)"),
        ),
    }
}

fn os(s: &str) -> &std::ffi::OsStr {
    s.as_ref()
}

fn check(env: &Env, p: &Path) -> (Option<i32>, String) {
    bounded(env, &[os("policy"), os("check"), p.as_os_str()])
}

/// `run -p P` on the env's directory: refused before any test runs.
fn run_with(env: &Env, p: &Path) -> (Option<i32>, String) {
    let (dir, history) = (env.dir.as_os_str(), env.history.as_os_str());
    let args = [
        os("run"),
        os("-p"),
        p.as_os_str(),
        os("--dir"),
        dir,
        os("--size"),
        os("8m"),
        os("--runtime"),
        os("1"),
        os("--runs"),
        os("1"),
        os("--engine"),
        os("sync"),
        os("--history"),
        history,
    ];
    bounded(env, &args)
}

#[test]
fn a_fifo_or_a_device_as_policy_is_refused_without_reading_it() {
    let env = Env::new();
    let fifo = env.tmp.path().join("fifo.yaml");
    let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a valid C string; mkfifo has no other preconditions.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
    for (code, err) in [
        check(&env, &fifo),
        run_with(&env, &fifo),
        bounded(
            &env,
            &[
                os("report"),
                os("-p"),
                fifo.as_os_str(),
                os("--history"),
                env.history.as_os_str(),
            ],
        ),
    ] {
        assert_eq!(code, Some(2), "{err}");
        assert!(
            err.contains("fifo.yaml") && err.contains("named pipe (FIFO), not a policy file"),
            "{err}"
        );
    }
    assert!(common::listing(&env.dir).is_empty());
    assert!(!env.history.exists());
    // a character device (read as an empty file before)
    let (code, err) = check(&env, Path::new("/dev/null"));
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("/dev/null: is a character device"), "{err}");
}

#[test]
fn a_block_device_as_policy_is_refused_without_reading_it() {
    if !is_root() {
        return skip("needs root for a loop device");
    }
    let env = Env::new();
    let backing = env.tmp.path().join("disk.img");
    std::fs::File::create(&backing)
        .unwrap()
        .set_len(1 << 20)
        .unwrap();
    let out = Command::new("losetup")
        .args(["-f", "--show"])
        .arg(&backing)
        .output();
    let dev = match out {
        Ok(o) if o.status.success() => String::from_utf8_lossy(&o.stdout).trim().to_string(),
        Ok(o) => {
            return skip(&format!(
                "losetup failed (no loop devices?): {}",
                String::from_utf8_lossy(&o.stderr).trim()
            ));
        }
        Err(e) => return skip(&format!("no losetup: {e}")),
    };
    let (code, err) = check(&env, Path::new(&dev));
    let (run_code, run_err) = run_with(&env, Path::new(&dev));
    let _ = Command::new("losetup").arg("-d").arg(&dev).status();
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains(&format!("{dev}: is a block device")), "{err}");
    assert_eq!(run_code, Some(2), "{run_err}");
    assert!(run_err.contains("is a block device"), "{run_err}");
    assert!(common::listing(&env.dir).is_empty());
}

/// Swimlane's policy with a threshold anyone would meet: what another user would plant.
fn lenient(env: &Env, name: &str) -> std::path::PathBuf {
    env.swimlane_policy(name, |y| y.replace("threshold: 3000\n", "threshold: 1\n"))
}

fn chown(p: &Path, uid: u32) {
    let c = std::ffi::CString::new(p.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a valid C string; lchown changes the link itself, never its target.
    assert_eq!(unsafe { libc::lchown(c.as_ptr(), uid, u32::MAX) }, 0);
}

#[test]
fn as_root_a_policy_another_user_could_change_is_refused_over_its_whole_path() {
    use std::os::unix::fs::PermissionsExt;
    if !is_root() {
        return skip("the rule applies to root: needs root (and chown)");
    }
    let nobody = 65534;
    let env = Env::new();
    let ours = lenient(&env, "ours.yaml");
    std::fs::set_permissions(&ours, std::fs::Permissions::from_mode(0o644)).unwrap();
    let (code, err) = check(&env, &ours);
    assert_eq!(code, Some(0), "root's own policy is read: {err}");

    // owned by another user, though nobody else may write it
    let theirs = lenient(&env, "theirs.yaml");
    std::fs::set_permissions(&theirs, std::fs::Permissions::from_mode(0o644)).unwrap();
    chown(&theirs, nobody);
    // root's file under a directory anyone can write (not sticky), a level up
    let ww = env.tmp.path().join("ww");
    std::fs::create_dir_all(ww.join("sub")).unwrap();
    std::fs::set_permissions(&ww, std::fs::Permissions::from_mode(0o777)).unwrap();
    let deep = ww.join("sub/p.yaml");
    std::fs::copy(&ours, &deep).unwrap();
    // root's link to another user's file, and another user's link to root's file
    let to_theirs = env.tmp.path().join("to-theirs.yaml");
    std::os::unix::fs::symlink(&theirs, &to_theirs).unwrap();
    let their_link = env.tmp.path().join("their-link.yaml");
    std::os::unix::fs::symlink(&ours, &their_link).unwrap();
    chown(&their_link, nobody);

    for (p, at, why) in [
        (&theirs, &theirs, "is owned by"),
        (&deep, &ww, "is world-writable"),
        (&to_theirs, &theirs, "is owned by"),
        (&their_link, &their_link, "is a symbolic link owned by"),
    ] {
        for (code, err) in [check(&env, p), run_with(&env, p)] {
            assert_eq!(code, Some(2), "{}: {err}", p.display());
            assert!(
                err.contains(&format!("{}: refusing, as root", p.display()))
                    && err.contains(&format!("{} {why}", at.display())),
                "{}: {err}",
                p.display()
            );
        }
    }
    assert!(common::listing(&env.dir).is_empty());
    assert!(!env.history.exists());
}
