//! A directory whose filesystem sits on a block device that keeps its data in RAM — a loop
//! device over a file on tmpfs, zram, a loop over a file on zram — is a target in RAM, as a
//! tmpfs directory is: `run` there is never a pass, the deviation names the RAM, and the
//! record says so, so a report of the history made where the devices no longer exist says
//! the same. Root only (mount, losetup, zram); everything made is undone, even on failure.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{Env, skip};
use serde_json::Value;

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// Runs a setup command; Err: what it said.
fn sh(cmd: &str, args: &[&str]) -> Result<String, String> {
    let out = Command::new(cmd)
        .args(args)
        .output()
        .map_err(|e| format!("{cmd}: {e}"))?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
    } else {
        Err(format!(
            "{cmd} {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

/// A filesystem mounted for the test, unmounted on drop (lazily if it is still busy).
struct Mounted(PathBuf);

impl Mounted {
    fn new(args: &[&str], at: &Path) -> Result<Mounted, String> {
        std::fs::create_dir_all(at).map_err(|e| e.to_string())?;
        let mut all = args.to_vec();
        all.push(at.to_str().unwrap());
        sh("mount", &all).map(|_| Mounted(at.to_path_buf()))
    }
}

impl Drop for Mounted {
    fn drop(&mut self) {
        if sh("umount", &[self.0.to_str().unwrap()]).is_err() {
            let _ = sh("umount", &["-l", self.0.to_str().unwrap()]);
        }
    }
}

/// A loop device over a file, detached on drop.
struct Loop(String);

impl Loop {
    fn over(file: &Path, size: u64) -> Result<Loop, String> {
        std::fs::File::create(file)
            .and_then(|f| f.set_len(size))
            .map_err(|e| e.to_string())?;
        sh("losetup", &["-f", "--show", file.to_str().unwrap()]).map(Loop)
    }
}

impl Drop for Loop {
    fn drop(&mut self) {
        let _ = sh("losetup", &["-d", &self.0]);
    }
}

/// A zram device added for the test (never one that was there), removed on drop.
struct Zram(String);

impl Zram {
    fn new(size: &str) -> Result<Zram, String> {
        let control = Path::new("/sys/class/zram-control/hot_add");
        if !control.exists() {
            // The module may be loadable; it makes zram0 itself, which may be someone's.
            let _ = sh("modprobe", &["zram", "num_devices=0"]);
        }
        let id = std::fs::read_to_string(control)
            .map_err(|e| format!("no zram here (modprobe zram, {}): {e}", control.display()))?;
        let z = Zram(id.trim().to_string());
        std::fs::write(format!("/sys/block/zram{}/disksize", z.0), size)
            .map_err(|e| format!("zram{}: disksize: {e}", z.0))?;
        Ok(z)
    }

    fn dev(&self) -> String {
        format!("/dev/zram{}", self.0)
    }
}

impl Drop for Zram {
    fn drop(&mut self) {
        let _ = std::fs::write("/sys/class/zram-control/hot_remove", &self.0);
    }
}

/// An ext4 filesystem made on `dev`, mounted at `at`.
fn ext4(dev: &str, at: &Path) -> Result<Mounted, String> {
    sh("mkfs.ext4", &["-q", "-F", dev])?;
    Mounted::new(&[dev], at)
}

/// Swimlane's test at 8 MiB for 1 s, one run on one day enough: a pass on anything fast.
fn small_policy(env: &Env) -> PathBuf {
    env.swimlane_policy("small.yaml", |y| {
        y.replace("size: 4g", "size: 8m")
            .replace("runtime: 60s", "runtime: 1s")
            .replace("min_runs: 6", "min_runs: 1")
            .replace("min_days: 2", "min_days: 1")
    })
}

/// `run` of the small policy in `dir` (its history kept): exit code and JSON result.
fn run(env: &Env, policy: &Path, dir: &Path) -> (Option<i32>, Value) {
    std::fs::create_dir_all(dir).unwrap();
    let out = env
        .cmd()
        .args(["run", "--runs", "1", "--format", "json", "-p"])
        .arg(policy)
        .arg("--dir")
        .arg(dir)
        .output()
        .unwrap();
    let j = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{e}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (out.status.code(), j)
}

/// The `found` of the result's `target` deviations.
fn target_found(j: &Value) -> Vec<String> {
    j["deviations"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|d| d["field"] == "target")
        .map(|d| {
            assert_eq!(d["effect"], "flatters", "{d}");
            d["found"].as_str().unwrap().to_string()
        })
        .collect()
}

/// Not a pass, and the one target deviation is `want` (loop and zram numbers as made).
fn assert_in_ram(code: Option<i32>, j: &Value, want: &str) {
    assert_eq!(code, Some(3), "{} {}", j["verdict"], j["reason"]);
    assert_eq!(j["verdict"], "inconclusive");
    assert_eq!(target_found(j), vec![want.to_string()], "{}", j["reason"]);
    assert!(
        j["reason"]
            .as_str()
            .unwrap()
            .contains(&format!("target {want} instead of a disk")),
        "{}",
        j["reason"]
    );
}

fn name(dev: &str) -> &str {
    dev.trim_start_matches("/dev/")
}

/// The same on a loop device over a file on the build's disk: no RAM said (where the temp
/// dir is not itself in RAM).
fn a_loop_over_a_file_on_a_disk_is_no_ram(env: &Env, policy: &Path) {
    let fs = sh(
        "stat",
        &["-f", "-c", "%T", env.tmp.path().to_str().unwrap()],
    )
    .unwrap();
    if fs == "tmpfs" || fs == "ramfs" {
        return skip("the temp dir is in RAM here: no loop over a disk's file");
    }
    let lo = match Loop::over(&env.tmp.path().join("on-disk.img"), 128 << 20) {
        Ok(l) => l,
        Err(e) => return skip(&format!("no loop device here: {e}")),
    };
    let disk = ext4(&lo.0, &env.tmp.path().join("on-disk")).expect("ext4 on the loop device");
    let (_, j) = run(env, policy, &disk.0.join("data"));
    assert_eq!(target_found(&j), Vec::<String>::new(), "{}", j["reason"]);
    let lines = env.history_lines();
    assert_eq!(lines.last().unwrap()["target"].get("in_ram"), None);
}

#[test]
fn a_directory_on_a_loop_device_over_a_file_on_tmpfs_is_in_ram_wherever_its_history_is_read() {
    if !is_root() {
        return skip("needs root for mount and losetup");
    }
    let env = Env::new();
    let policy = small_policy(&env);
    let want;
    {
        let ram = match Mounted::new(
            &["-t", "tmpfs", "-o", "size=160m", "tmpfs"],
            &env.tmp.path().join("ram"),
        ) {
            Ok(m) => m,
            Err(e) => return skip(&format!("no tmpfs mount here: {e}")),
        };
        let lo = match Loop::over(&ram.0.join("disk.img"), 128 << 20) {
            Ok(l) => l,
            Err(e) => return skip(&format!("no loop device here: {e}")),
        };
        let disk = ext4(&lo.0, &env.tmp.path().join("disk")).expect("ext4 on the loop device");
        let (code, j) = run(&env, &policy, &disk.0.join("data"));
        want = format!("{} backed by a file on tmpfs (in RAM)", name(&lo.0));
        assert_in_ram(code, &j, &want);
        // the record says why, for whoever reads it later
        let lines = env.history_lines();
        assert_eq!(lines.len(), 1);
        assert_eq!(lines[0]["target"]["device"], name(&lo.0));
        assert_eq!(lines[0]["target"]["in_ram"], want.as_str());
        // (the control's record is not kept: the report below reads this one alone)
        let kept = std::fs::read(&env.history).unwrap();
        a_loop_over_a_file_on_a_disk_is_no_ram(&env, &policy);
        std::fs::write(&env.history, kept).unwrap();
        drop(disk);
        drop(lo);
        drop(ram);
    }
    // The devices are gone: the history alone says it (as on another machine).
    let out = env
        .cmd()
        .args(["report", "--format", "json", "-p"])
        .arg(&policy)
        .output()
        .unwrap();
    let j: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(out.status.code(), Some(3), "{}", j["reason"]);
    assert!(
        common::not_counted(&j).contains(&format!("target {want} instead of a disk")),
        "{j}"
    );
}

#[test]
fn a_directory_on_zram_or_on_a_loop_over_a_file_on_zram_is_in_ram() {
    if !is_root() {
        return skip("needs root for zram, mount and losetup");
    }
    let env = Env::new();
    let policy = small_policy(&env);
    let z = match Zram::new("256M") {
        Ok(z) => z,
        Err(e) => return skip(&format!("no zram device could be added: {e}")),
    };
    let on_zram = ext4(&z.dev(), &env.tmp.path().join("z")).expect("ext4 on zram");
    let (code, j) = run(&env, &policy, &on_zram.0.join("data"));
    let zram = format!("{} (a compressed RAM disk)", name(&z.dev()));
    assert_in_ram(code, &j, &zram);

    // one layer down: a loop device over a file on that filesystem
    let lo = match Loop::over(&on_zram.0.join("disk.img"), 128 << 20) {
        Ok(l) => l,
        Err(e) => return skip(&format!("no loop device here: {e}")),
    };
    let disk = ext4(&lo.0, &env.tmp.path().join("disk")).expect("ext4 on the loop device");
    let (code, j) = run(&env, &policy, &disk.0.join("data"));
    assert_in_ram(
        code,
        &j,
        &format!("{} backed by a file on {zram}", name(&lo.0)),
    );
    drop(disk);
    drop(lo);
    drop(on_zram);
    drop(z);
}
