//! The emulated burst-credit disk for tests (bench/burstdisk.sh, docs/sustained.md): ext4 on
//! a loop device whose file is paced by a token bucket in a FUSE filesystem. Taken down when
//! dropped. Needs root and FUSE (build.rs: have_root, have_fuse).
#![allow(dead_code)]

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The bucket: I/Os a second while it holds credits, I/Os a second once it is empty (and
/// credits a second it refills at), its size in I/Os.
#[derive(Debug, Clone, Copy)]
pub struct Bucket {
    pub burst: u32,
    pub baseline: u32,
    pub size: u32,
}

impl Bucket {
    /// Seconds a device running flat out at the burst rate takes to empty it.
    pub fn seconds_to_empty(&self) -> f64 {
        self.size as f64 / (self.burst - self.baseline) as f64
    }
}

pub struct BurstDisk {
    dir: tempfile::TempDir,
    /// Where its ext4 is mounted.
    pub mount: PathBuf,
    /// The loop device's name as /proc/diskstats has it (loop0).
    pub disk: String,
    pub bucket: Bucket,
}

fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("bench/burstdisk.sh")
}

impl BurstDisk {
    /// A 128 MiB disk with `bucket`; `dirty_max` caps the page cache's dirty bytes for it.
    pub fn up(bucket: Bucket, dirty_max: Option<u64>) -> BurstDisk {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut c = Command::new("bash");
        c.arg(script()).arg("up").arg(dir.path()).args([
            "--size",
            "128m",
            "--burst",
            &bucket.burst.to_string(),
            "--baseline",
            &bucket.baseline.to_string(),
            "--bucket",
            &bucket.size.to_string(),
        ]);
        if let Some(d) = dirty_max {
            c.args(["--dirty-max", &d.to_string()]);
        }
        let out = c.output().expect("run bench/burstdisk.sh");
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        let disk = BurstDisk {
            mount: dir.path().join("fs"),
            disk: text
                .split_whitespace()
                .nth(1)
                .and_then(|d| d.strip_prefix("/dev/"))
                .unwrap_or_default()
                .to_string(),
            dir,
            bucket,
        };
        assert!(
            out.status.success() && !disk.disk.is_empty(),
            "bench/burstdisk.sh up: {text}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        disk
    }

    /// The bucket's account (bench/burstdisk.c's `status`): credits, ios, and since the last
    /// refill first_io and first_dry (monotonic seconds; −1 for not yet)…
    pub fn status(&self) -> HashMap<String, f64> {
        let text = std::fs::read_to_string(self.dir.path().join("fuse/status")).unwrap();
        text.lines()
            .filter_map(|l| {
                let (k, v) = l.split_once('=')?;
                Some((k.to_string(), v.parse().ok()?))
            })
            .collect()
    }

    /// Seconds from the first I/O after the last refill to the bucket's first running dry.
    pub fn seconds_to_dry(&self) -> Option<f64> {
        let s = self.status();
        let (first, dry) = (s["first_io"], s["first_dry"]);
        (dry >= 0.0).then_some(dry - first)
    }

    /// Whether the disk did what a token bucket does while the test kept it busy: it ran dry
    /// within a quarter of the time its burst rate takes to empty it, and earned back less
    /// than 5% of it by idling after. On a loaded machine the pacer or the loop device's
    /// kernel worker can be starved for a moment: the disk then stalls, and its bucket
    /// refills, which no cloud disk does while I/O waits. Err says what happened.
    pub fn kept_busy(&self) -> Result<(), String> {
        let s = self.status();
        let want = self.bucket.seconds_to_empty();
        let dry = self.seconds_to_dry().ok_or("it never ran dry")?;
        if (dry - want).abs() > 0.25 * want {
            return Err(format!("it ran dry after {dry:.2} s, not {want:.2} s"));
        }
        if s["regained"] > 0.05 * self.bucket.size as f64 {
            return Err(format!(
                "it earned back {:.0} credits by idling after it ran dry",
                s["regained"]
            ));
        }
        Ok(())
    }

    /// [`Self::kept_busy`], and besides, the burst never dipped: in no half second before it
    /// ran dry did the disk sit idle for more than a fifth of it. For a test that refills the
    /// bucket just before its timed I/O, whose burst then holds nothing idle by design (a run
    /// of the binary lays its file out and pauses 250 ms inside the bucket's burst). A half
    /// second is the engine's sampling interval: a dip that deep in one is a level the burst
    /// never had (the machine starved the pacer, the loop worker or the test), and can move
    /// where the step is found.
    pub fn kept_busy_throughout(&self) -> Result<(), String> {
        self.kept_busy()?;
        let idle = self.status()["idle_burst_half_s"];
        if idle > 0.2 * 0.5 {
            return Err(format!(
                "it sat idle {:.0} ms of a half second while it held credits",
                idle * 1000.0
            ));
        }
        Ok(())
    }

    /// Fills the bucket again.
    pub fn refill(&self) {
        std::fs::write(self.dir.path().join("fuse/control"), "refill").unwrap();
    }
}

impl Drop for BurstDisk {
    fn drop(&mut self) {
        let _ = Command::new("bash")
            .arg(script())
            .arg("down")
            .arg(self.dir.path())
            .status();
    }
}
