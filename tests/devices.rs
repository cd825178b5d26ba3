//! `run --device` (#33 item 2): a policy's read-only job on each of several raw devices, each
//! judged by its rules and all of them by a spread rule, through the binary. Two loop devices
//! over files in RAM, with cgroup v1 blkio throttles on their reads (blk-throttle limits the
//! direct reads the job makes) standing in for a slow drive: the same limit on both makes them
//! alike, a quarter of it on one makes it fail the per-device rule and the spread. Root, loop
//! devices and the cgroup v1 blkio controller are needed; without them each test says why it
//! is skipped.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::Env;

const BLKIO: &str = "/sys/fs/cgroup/blkio";

/// A loop device over a file of `size` bytes; detached on drop.
struct Loop {
    dev: PathBuf,
}

impl Loop {
    fn new(backing: &Path, size: u64) -> Result<Loop, String> {
        std::fs::File::create(backing)
            .and_then(|f| f.set_len(size))
            .map_err(|e| e.to_string())?;
        let out = Command::new("losetup")
            .args(["-f", "--show"])
            .arg(backing)
            .output()
            .map_err(|e| format!("losetup: {e}"))?;
        if !out.status.success() {
            return Err(format!(
                "losetup failed (no loop devices?): {}",
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
        let dev = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
        Ok(Loop { dev })
    }

    /// "MAJ:MIN" for the throttle files.
    fn numbers(&self) -> String {
        use std::os::unix::fs::MetadataExt;
        let rdev = std::fs::metadata(&self.dev).unwrap().rdev();
        format!("{}:{}", libc::major(rdev), libc::minor(rdev))
    }
}

impl Drop for Loop {
    fn drop(&mut self) {
        let _ = Command::new("losetup").arg("-d").arg(&self.dev).status();
    }
}

/// A loop device over a file `name` of `size` bytes in RAM (/dev/shm): the loop is detached
/// first, then the file removed. Err: why there is none here (the test skips, saying so).
struct RamLoop {
    l: Loop,
    backing: PathBuf,
    _ram: tempfile::TempDir,
}

fn ram_loop(name: &str, size: u64) -> Result<RamLoop, String> {
    if !libc_is_root() {
        return Err("needs root for a loop device".into());
    }
    let ram = tempfile::tempdir_in("/dev/shm").map_err(|e| format!("no /dev/shm: {e}"))?;
    let backing = ram.path().join(name);
    let l = Loop::new(&backing, size)?;
    Ok(RamLoop {
        l,
        backing,
        _ram: ram,
    })
}

/// A blkio cgroup with read-IOPS limits per device; removed on drop (its only task, the
/// binary, has exited by then).
struct Throttle {
    group: PathBuf,
}

impl Throttle {
    fn new() -> Result<Throttle, String> {
        let file = Path::new(BLKIO).join("blkio.throttle.read_iops_device");
        if !file.exists() {
            return Err(format!("no cgroup v1 blkio throttle at {BLKIO}"));
        }
        let group = Path::new(BLKIO).join(format!(
            "iopscheck-devices-{}-{}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .subsec_nanos()
        ));
        std::fs::create_dir(&group).map_err(|e| format!("{}: {e}", group.display()))?;
        Ok(Throttle { group })
    }

    fn limit(&self, dev: &Loop, iops: u32) {
        std::fs::write(
            self.group.join("blkio.throttle.read_iops_device"),
            format!("{} {iops}", dev.numbers()),
        )
        .unwrap();
    }

    /// The binary with `args`, started inside the group (the shell joins it, then becomes
    /// the binary): every thread it starts is throttled.
    fn run(&self, env: &Env, args: &[&str]) -> std::process::Output {
        let bin = assert_cmd::cargo::cargo_bin!("iopscheck");
        Command::new("sh")
            .arg("-c")
            .arg("echo $$ > \"$TASKS\" && exec \"$@\"")
            .arg("sh")
            .arg(bin)
            .args(args)
            .env("TASKS", self.group.join("tasks"))
            .env("IOPSCHECK_HISTORY", &env.history)
            .env("IOPSCHECK_LOCK_FILE", env.tmp.path().join("run.lock"))
            .env("IOPSCHECK_HOST", "node1")
            .env("NO_COLOR", "1")
            .output()
            .unwrap()
    }
}

impl Drop for Throttle {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir(&self.group);
    }
}

/// Root, two loop devices over files in RAM, a throttle group; or why not.
struct Rig {
    env: Env,
    _files: tempfile::TempDir,
    a: Loop,
    b: Loop,
    throttle: Throttle,
    policy: PathBuf,
}

/// 4k random reads at queue depth 16, direct, 2 s per device: the throttle, not the machine,
/// sets the rate, and a full queue keeps it there whatever else the machine does. Each device
/// must read at 250 IOPS or more (the mean and the smallest 500 ms sample), and the devices'
/// mean IOPS may differ by 10% at most, as IBM's readiness tool measures it.
const POLICY: &str = "name: two-drives
description: test policy for per-device rules and spread
vendor: test
source:
  title: test
  url: https://example.com/
  seen: 2026-12-02
  test: assumed
job:
  name: rr
  rw: randread
  bs: 4k
  size: 4k
  ioengine: libaio
  direct: true
  iodepth: 16
  numjobs: 1
  runtime: 2s
  time_based: true
runs: 1
rules:
  - metric: read_iops
    op: \">=\"
    threshold: 250
  - metric: read_iops_min
    op: \">=\"
    threshold: 250
devices:
  spread:
    - metric: read_iops_mean
      max_diff_pct: 10
evidence:
  min_runs: 1
  min_days: 1
  window: 7d
  aggregate: mean
";

/// The throttle of the fast device, and of the slow one (a quarter).
const FAST: u32 = 400;
const SLOW: u32 = 100;

impl Rig {
    fn new() -> Result<Rig, String> {
        if !libc_is_root() {
            return Err("needs root (loop devices and a blkio group)".into());
        }
        let throttle = Throttle::new()?;
        // On the build's disk, not in RAM: a loop over tmpfs is a RAM disk, which flatters.
        let ram = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).map_err(|e| e.to_string())?;
        let a = Loop::new(&ram.path().join("a.img"), 16 << 20)?;
        let b = Loop::new(&ram.path().join("b.img"), 16 << 20)?;
        let env = Env::new();
        let policy = env.tmp.path().join("two-drives.yaml");
        std::fs::write(&policy, POLICY).unwrap();
        Ok(Rig {
            env,
            _files: ram,
            a,
            b,
            throttle,
            policy,
        })
    }

    fn run(&self, extra: &[&str]) -> (Option<i32>, serde_json::Value, String) {
        let mut args = vec![
            "run",
            "-p",
            self.policy.to_str().unwrap(),
            "--device",
            self.a.dev.to_str().unwrap(),
            self.b.dev.to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        let out = self.throttle.run(&self.env, &args);
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        let json = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
            panic!(
                "not JSON ({e}): {}\n{stderr}",
                String::from_utf8_lossy(&out.stdout)
            )
        });
        (out.status.code(), json, stderr)
    }
}

/// `run --no-history -p POLICY --device DEV`, which must refuse (exit 2; `what` and its
/// stderr shown otherwise): its stderr.
fn refused(env: &Env, policy: impl AsRef<std::ffi::OsStr>, dev: &Path, what: &str) -> String {
    let out = env
        .cmd()
        .args(["run", "--no-history", "-p"])
        .arg(policy)
        .arg("--device")
        .arg(dev)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "{what}: {err}");
    err
}

fn libc_is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

fn row<'a>(json: &'a serde_json::Value, dev: &Path) -> &'a serde_json::Value {
    json["hosts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h["dir"] == dev.to_str().unwrap())
        .unwrap_or_else(|| panic!("no row for {}: {json:#}", dev.display()))
}

#[test]
fn a_slower_drive_fails_its_rules_and_the_spread_and_alike_drives_pass() {
    // The loops' files are on the disk: their records name its filesystem, not RAM.
    // Alike: the same limit on both. Alike drives are alike only when each runs at its limit:
    // both at 95% of it or more, their means are within 10% of each other and every second
    // is above the rules' 250, so they must pass. A machine too loaded to drive them at
    // their limit (the scheduler, not the throttle, set their rates) does not give this test
    // its condition: tried again on fresh drives, then skipped with the figures.
    let mut slowed = vec![];
    let rig = loop {
        let rig = match Rig::new() {
            Ok(r) => r,
            Err(why) => return common::skip(&why),
        };
        rig.throttle.limit(&rig.a, FAST);
        rig.throttle.limit(&rig.b, FAST);
        let (code, json, stderr) = rig.run(&["--format", "json"]);
        assert_eq!(json["kind"], "devices", "{json:#}");
        let rates = [&rig.a.dev, &rig.b.dev].map(|d| row(&json, d)["value"].as_f64().unwrap());
        if code != Some(0) && rates.iter().any(|&r| r < f64::from(FAST) * 0.95) {
            slowed.push(rates);
            if slowed.len() == 3 {
                return common::skip(&format!(
                    "the machine is too loaded to run two drives at their {FAST} IOPS limit (read_iops of each, in 3 tries: {slowed:?})"
                ));
            }
            eprintln!("drives below their limit ({rates:?}): the machine is loaded; again");
            continue;
        }
        assert_eq!(code, Some(0), "{json:#}\n{stderr}");
        assert_eq!(json["verdict"], "pass");
        for d in [&rig.a.dev, &rig.b.dev] {
            assert_eq!(row(&json, d)["verdict"], "pass", "{json:#}");
        }
        let warnings = json["warnings"].to_string();
        assert!(
            warnings.contains("spread of read_iops_mean across devices")
                && warnings.contains("meets it"),
            "{warnings}"
        );
        break rig;
    };

    // One drive at a quarter of the other's rate.
    rig.throttle.limit(&rig.b, SLOW);
    let (code, json, stderr) = rig.run(&["--format", "json"]);
    assert_eq!(code, Some(1), "{json:#}\n{stderr}");
    assert_eq!(json["verdict"], "fail");
    assert_eq!(row(&json, &rig.a.dev)["verdict"], "pass", "{json:#}");
    let slow = row(&json, &rig.b.dev);
    assert_eq!(slow["verdict"], "fail", "{json:#}");
    let value = slow["value"].as_f64().unwrap();
    assert!(value <= f64::from(SLOW) * 1.1, "the throttle held: {value}");
    let reason = json["reason"].as_str().unwrap();
    assert!(
        reason.starts_with("spread of read_iops_mean across devices: 100 × (max − min) / max ≤ 10%: fails, difference"),
        "{reason}"
    );
    assert!(reason.contains(rig.b.dev.to_str().unwrap()), "{reason}");
    // The failing drive is named under its own host: a host's name is never reworded
    // ("node1" once read "device1", the set's words put over the fleet's).
    assert!(
        reason.contains(&format!(
            "devices: 1 of 2 devices fails: node1 {}",
            rig.b.dev.display()
        )),
        "{reason}"
    );

    // One record per device per run, each naming its device; none of it written to a device.
    let lines = rig.env.history_lines();
    let dirs: Vec<&str> = lines
        .iter()
        .map(|l| l["target"]["dir"].as_str().unwrap())
        .collect();
    let (a, b) = (rig.a.dev.to_str().unwrap(), rig.b.dev.to_str().unwrap());
    assert_eq!(dirs, [a, b, a, b], "{lines:#?}");
    for l in &lines {
        assert_eq!(
            l["target"]["device"],
            l["target"]["dir"]
                .as_str()
                .unwrap()
                .trim_start_matches("/dev/")
        );
        assert!(l["metrics"]["write_ios"].is_null(), "a read-only job: {l}");
    }

    // The report on the history judges the latest window per device the same way: the slow
    // drive's two runs average below the rule, and the spread fails.
    let out = rig
        .env
        .cmd()
        .args(["report", "--host", "node1", "-p"])
        .arg(&rig.policy)
        .args(["--format", "json"])
        .output()
        .unwrap();
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(out.status.code(), Some(1), "{json:#}");
    assert_eq!(json["kind"], "devices");
    assert_eq!(row(&json, &rig.b.dev)["runs"], 2);
    assert!(
        json["reason"]
            .as_str()
            .unwrap()
            .contains("spread of read_iops_mean"),
        "{json:#}"
    );
    // Every format says the same verdict.
    for (format, needle) in [
        ("table", "verdict: FAIL"),
        ("summary", "FAIL"),
        ("csv", "fail"),
        ("prometheus", "iopscheck_fleet_verdict"),
        ("junit", "spread of read_iops_mean"),
        ("markdown", "FAIL"),
        ("reply", "Together they differ more than"),
    ] {
        let out = rig
            .env
            .cmd()
            .args(["report", "--host", "node1", "-p"])
            .arg(&rig.policy)
            .args(["--format", format])
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(1), "{format}: {text}");
        assert!(text.contains(needle), "{format}: {text}");
        if format == "summary" {
            assert!(text.trim_end().chars().count() < 200, "{text}");
            assert!(text.contains("spread of read_iops_mean"), "{text}");
        }
    }
}

#[test]
fn a_device_the_job_would_write_or_that_is_not_a_device_is_refused_naming_the_flag() {
    let env = Env::new();
    // Not a block device: a directory, a regular file, nothing.
    let file = env.tmp.path().join("plain");
    std::fs::write(&file, b"x").unwrap();
    for (what, path) in [
        ("a directory", env.dir.clone()),
        ("a file", file.clone()),
        ("nothing", env.tmp.path().join("absent")),
    ] {
        let err = refused(&env, "swimlane", &path, what);
        assert!(err.contains("--device"), "{what}: {err}");
    }
    assert_eq!(std::fs::read(&file).unwrap(), b"x");

    // A device under a job that writes (Swimlane's random writes): refused before it is
    // opened, its bytes untouched.
    let ram = match ram_loop("w.img", 8 << 20) {
        Ok(r) => r,
        Err(why) => return common::skip(&why),
    };
    let (l, backing) = (&ram.l, &ram.backing);
    std::fs::write(backing, vec![7u8; 8 << 20]).unwrap();
    let err = refused(&env, "swimlane", &l.dev, "a job that writes");
    assert!(
        err.contains(&format!("--device {}", l.dev.display())) && err.contains("writes"),
        "{err}"
    );
    assert!(std::fs::read(backing).unwrap().iter().all(|&b| b == 7));

    // A device policy without --device.
    let policy = env.tmp.path().join("p.yaml");
    std::fs::write(&policy, POLICY).unwrap();
    let out = env
        .cmd()
        .args(["run", "--no-history", "-p"])
        .arg(&policy)
        .arg("--dir")
        .arg(&env.dir)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("--device"), "{err}");
}

/// A run of IBM's ECE test on an NVMe drive as the native engine records it: the policy's own
/// job over the whole drive, with the figures the policy judges.
fn ece_record(
    policy: &iopscheck::testing::policy::Policy,
    dev: &str,
    t: chrono::DateTime<chrono::FixedOffset>,
    iops_mean: f64,
    clat_mean_us: f64,
) -> String {
    use iopscheck::testing::history::{Record, Source, Target};
    use iopscheck::testing::record::RunInfo;
    let capacity: u64 = 3_200_631_791_616;
    let mut job = policy.job.shape();
    job.size = Some(capacity / policy.job.bs.0 * policy.job.bs.0);
    let mut info = RunInfo::new(
        "node1".into(),
        Source::Native,
        "libaio".into(),
        job,
        Target {
            dir: format!("/dev/{dev}"),
            device: Some(dev.into()),
            rotational: Some(false),
            capacity_bytes: Some(capacity),
            ..Target::default()
        },
        policy.name.clone(),
    );
    info.tool_version = "0.1.0".into();
    let mut r = Record::measured(info, t, &Default::default());
    r.metrics = [
        ("read_iops", iops_mean),
        ("read_iops_mean", iops_mean),
        ("read_iops_min", iops_mean * 0.95),
        ("read_clat_mean_us", clat_mean_us),
        ("read_clat_max_us", clat_mean_us * 4.0),
        ("read_runtime_ms", 300_000.0),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    serde_json::to_string(&r).unwrap()
}

#[test]
fn ibm_ece_judges_each_nvme_drive_and_fails_drives_more_than_ten_percent_apart() {
    let env = Env::new();
    let name = "ibm-storage-scale-ece-nvme";
    let policy = iopscheck::testing::policy::resolve(name).unwrap().policy;
    let threshold = |m: &str| {
        policy
            .rules
            .iter()
            .find(|r| r.metric == m)
            .map(|r| r.threshold)
            .unwrap()
    };
    // Both drives well inside every per-drive KPI: mean IOPS 40% over IBM's, mean latency
    // half of it.
    let iops = threshold("read_iops_mean") * 1.4;
    let lat = threshold("read_clat_mean_us") * 0.5;
    let t = chrono::Local::now().fixed_offset() - chrono::Duration::minutes(10);
    let report = |lines: &[String]| {
        std::fs::write(&env.history, lines.join("\n") + "\n").unwrap();
        let out = env
            .cmd()
            .args(["report", "--host", "node1", "-p", name, "--format", "json"])
            .output()
            .unwrap();
        let json: serde_json::Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|_| panic!("{}", String::from_utf8_lossy(&out.stderr)));
        (out.status.code(), json)
    };
    // 5% apart by IBM's measure (100 × (max − min) / max): within its 10%.
    let (code, json) = report(&[
        ece_record(&policy, "nvme0n1", t, iops, lat),
        ece_record(&policy, "nvme1n1", t, iops * 0.95, lat / 0.95),
    ]);
    assert_eq!(code, Some(0), "{json:#}");
    assert_eq!(json["kind"], "devices");
    assert_eq!(json["hosts"].as_array().unwrap().len(), 2);
    // 20% apart: each drive still meets every KPI alone, the pair does not.
    let slower = iops * 0.8;
    assert!(slower > threshold("read_iops_mean"));
    let (code, json) = report(&[
        ece_record(&policy, "nvme0n1", t, iops, lat),
        ece_record(&policy, "nvme1n1", t, slower, lat / 0.8),
    ]);
    assert_eq!(code, Some(1), "{json:#}");
    for h in json["hosts"].as_array().unwrap() {
        assert_eq!(h["verdict"], "pass", "{h:#}");
    }
    let reason = json["reason"].as_str().unwrap();
    assert!(
        reason.contains("spread of read_iops_mean across devices: 100 × (max − min) / max ≤ 10%: fails, difference 20.00%"),
        "{reason}"
    );
    assert!(reason.contains("spread of read_clat_mean_us"), "{reason}");
}

#[test]
fn an_ece_policy_refuses_a_drive_of_another_type() {
    let env = Env::new();
    let ram = match ram_loop("n.img", 8 << 20) {
        Ok(r) => r,
        Err(why) => return common::skip(&why),
    };
    let l = &ram.l;
    // A loop device is not rotational and not NVMe: an SSD to IBM's tool.
    let err = refused(&env, "ibm-storage-scale-ece-nvme", &l.dev, "an SSD");
    assert!(
        err.contains(&format!("--device {}: is an SSD", l.dev.display()))
            && err.contains("for an NVMe drive"),
        "{err}"
    );
}

/// A filesystem mounted from a device; unmounted on drop.
struct Mounted {
    dir: tempfile::TempDir,
}

impl Drop for Mounted {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(self.dir.path()).status();
    }
}

#[test]
fn a_mounted_device_is_refused_naming_the_flag() {
    let env = Env::new();
    let ram = match ram_loop("m.img", 16 << 20) {
        Ok(r) => r,
        Err(why) => return common::skip(&why),
    };
    let l = &ram.l;
    let ok = |c: &mut Command| c.status().is_ok_and(|s| s.success());
    if !ok(Command::new("mkfs.ext4").args(["-q", "-F"]).arg(&l.dev)) {
        return common::skip("mkfs.ext4 (e2fsprogs) failed or is not installed");
    }
    let m = Mounted {
        dir: tempfile::tempdir().unwrap(),
    };
    if !ok(Command::new("mount").arg(&l.dev).arg(m.dir.path())) {
        return common::skip("cannot mount the loop device here");
    }
    std::fs::write(env.tmp.path().join("p.yaml"), POLICY).unwrap();
    let err = refused(&env, env.tmp.path().join("p.yaml"), &l.dev, "mounted");
    assert!(
        err.contains(&format!("--device {}: is mounted", l.dev.display())),
        "{err}"
    );
    drop(m);
}

#[test]
fn a_loop_device_over_a_file_in_ram_is_a_ram_disk_and_never_passes() {
    let env = Env::new();
    let ram_a = match ram_loop("a.img", 8 << 20) {
        Ok(r) => r,
        Err(why) => return common::skip(&why),
    };
    let ram_b = ram_loop("b.img", 8 << 20).unwrap();
    let (a, b) = (&ram_a.l, &ram_b.l);
    let policy = env.tmp.path().join("p.yaml");
    std::fs::write(&policy, POLICY.replace("runtime: 2s", "runtime: 1s")).unwrap();
    let out = env
        .cmd()
        .args(["run", "--no-history", "--format", "json", "-p"])
        .arg(&policy)
        .arg("--device")
        .arg(&a.dev)
        .arg(&b.dev)
        .output()
        .unwrap();
    let json: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|_| panic!("{}", String::from_utf8_lossy(&out.stderr)));
    // Unthrottled reads from RAM meet the rule; they prove nothing of a disk.
    assert_eq!(out.status.code(), Some(3), "{json:#}");
    for h in json["hosts"].as_array().unwrap() {
        assert_eq!(h["verdict"], "inconclusive", "{h:#}");
        assert!(
            h["reason"].as_str().unwrap().contains("tmpfs (in RAM)"),
            "{h:#}"
        );
    }
}
