//! Helpers for the integration tests: the real binary, a private temp dir with its own
//! history and run lock, and readers for what the binary leaves behind.
#![allow(dead_code)]

pub mod burst;

use std::path::{Path, PathBuf};

use assert_cmd::Command;

pub struct Env {
    pub tmp: tempfile::TempDir,
    pub dir: PathBuf,
    pub history: PathBuf,
}

impl Env {
    pub fn new() -> Env {
        let tmp = tempfile::tempdir().expect("tempdir");
        let dir = tmp.path().join("data");
        std::fs::create_dir(&dir).unwrap();
        let history = tmp.path().join("history.jsonl");
        Env { tmp, dir, history }
    }

    /// `iopscheck` with this env's history and lock file.
    pub fn cmd(&self) -> Command {
        Command::from_std(self.std_cmd())
    }

    /// [`Env::cmd`] as a std Command: one that is spawned, or whose standard streams are
    /// files or closed pipes (assert_cmd's takes neither).
    pub fn std_cmd(&self) -> std::process::Command {
        self.std_cmd_of(assert_cmd::cargo::cargo_bin!("iopscheck"))
    }

    /// [`Env::std_cmd`] of `program`: the binary under another name (a link to it).
    pub fn std_cmd_of(&self, program: &Path) -> std::process::Command {
        let mut c = std::process::Command::new(program);
        c.env("IOPSCHECK_HISTORY", &self.history)
            .env("IOPSCHECK_LOCK_FILE", self.tmp.path().join("run.lock"))
            .env("NO_COLOR", "1")
            .env_remove("IOPSCHECK_FIO");
        c
    }

    /// `iopscheck run` on this env's directory with a small, quick test.
    pub fn small_run(&self, engine: &str) -> Command {
        let mut c = self.cmd();
        c.args(["run", "--dir"]).arg(&self.dir).args([
            "--size",
            "32m",
            "--runtime",
            "1",
            "--runs",
            "1",
            "--engine",
            engine,
        ]);
        c
    }

    /// Swimlane's built-in policy as `policy show` prints it, changed by `edit`, written to
    /// `name` in this env's temp dir.
    pub fn swimlane_policy(&self, name: &str, edit: impl Fn(String) -> String) -> PathBuf {
        let out = self
            .cmd()
            .args(["policy", "show", "swimlane"])
            .output()
            .unwrap();
        let p = self.tmp.path().join(name);
        std::fs::write(&p, edit(String::from_utf8(out.stdout).unwrap())).unwrap();
        p
    }

    /// Swimlane's policy at 8 MiB and 1 s, written to `small.yaml` in this env's temp dir:
    /// the test [`small_swimlane_fio`] runs.
    pub fn small_swimlane(&self) -> PathBuf {
        self.swimlane_policy("small.yaml", |y| {
            y.replace("size: 4g", "size: 8m")
                .replace("runtime: 60s", "runtime: 1s")
        })
    }

    /// `iopscheck import ARGS --format json`: the exit code, the JSON and stderr.
    pub fn import_json(&self, args: &[&str]) -> (Option<i32>, serde_json::Value, String) {
        let out = self
            .cmd()
            .arg("import")
            .args(args)
            .args(["--format", "json"])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        let j = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("stdout is not JSON ({e}); stderr: {err}"));
        (out.status.code(), j, err)
    }

    pub fn history_lines(&self) -> Vec<serde_json::Value> {
        match std::fs::read_to_string(&self.history) {
            Ok(t) => t
                .lines()
                .map(|l| serde_json::from_str(l).expect("every history line is JSON"))
                .collect(),
            Err(_) => vec![],
        }
    }

    pub fn dir_listing(&self) -> Vec<String> {
        listing(&self.dir)
    }
}

/// `cmd` with the terminating signals a test sends given their default action in the child.
/// A child inherits what its parent ignores: started from a script's background job (`&`)
/// or under `nohup`, the test binary ignores SIGINT, SIGQUIT or SIGHUP, and so would the
/// command it signals, which keeps them ignored as a user's `nohup` asks (tests/faults.rs).
pub fn default_signals(mut cmd: std::process::Command) -> std::process::Command {
    use std::os::unix::process::CommandExt as _;
    // SAFETY: the closure runs in the child between fork and exec and calls only signal(2),
    // which is async-signal-safe; it touches no memory of the parent's.
    unsafe {
        cmd.pre_exec(|| {
            for sig in [libc::SIGHUP, libc::SIGINT, libc::SIGQUIT, libc::SIGTERM] {
                libc::signal(sig, libc::SIG_DFL);
            }
            Ok(())
        });
    }
    cmd
}

/// Waits for `child`, its stderr piped, up to `limit`: its exit status and stderr; None, the
/// child killed and reaped, where it has not ended by then (a hang, for the caller to report).
pub fn wait_with_stderr(
    child: &mut std::process::Child,
    limit: std::time::Duration,
) -> Option<(std::process::ExitStatus, String)> {
    use std::io::Read as _;
    let start = std::time::Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            let mut err = String::new();
            if let Some(mut e) = child.stderr.take() {
                e.read_to_string(&mut err).unwrap();
            }
            return Some((status, err));
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

pub fn listing(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

pub fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/fio-outputs")
        .join(name)
}

/// One fio 3.33 run's outputs in each of its formats (tests/fixtures/one-run).
pub fn one_run_fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/one-run")
        .join(name)
}

/// Writes `members` (name, bytes) as a .tar.gz at `path`, compressed at `level`: a bundle
/// made by hand, as a test needs it.
pub fn write_tar_gz<'a>(
    path: &Path,
    members: impl IntoIterator<Item = (&'a str, &'a [u8])>,
    level: flate2::Compression,
) {
    let gz = flate2::write::GzEncoder::new(std::fs::File::create(path).unwrap(), level);
    let mut tar = tar::Builder::new(gz);
    for (name, data) in members {
        let mut h = tar::Header::new_gnu();
        h.set_entry_type(tar::EntryType::Regular);
        h.set_mode(0o644);
        h.set_size(data.len() as u64);
        tar.append_data(&mut h, name, data).unwrap();
    }
    tar.into_inner().unwrap().finish().unwrap();
}

pub fn have_fio() -> bool {
    std::process::Command::new("fio")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Swimlane's job at 8 MiB and 1 s ([`Env::small_swimlane`]'s test) by the installed fio, in
/// `dir`, its output in `format` (`--output-format`) written to `out`, with `extra` options.
pub fn small_swimlane_fio(dir: &Path, format: &str, out: &Path, extra: &[&str]) {
    let run = std::process::Command::new("fio")
        .args([
            "--name=random-write",
            "--ioengine=posixaio",
            "--rw=randwrite",
            "--bs=4k",
            "--numjobs=1",
            "--size=8m",
            "--iodepth=1",
            "--runtime=1",
            "--time_based",
            "--end_fsync=1",
        ])
        .arg(format!("--output-format={format}"))
        .arg(format!("--directory={}", dir.display()))
        .arg(format!("--output={}", out.display()))
        .args(extra)
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "fio: {}",
        String::from_utf8_lossy(&run.stderr)
    );
}

/// Whether a small `run` could use the engine here (its output `out`); where it could not
/// (exit 2: no io_uring, a filesystem that refuses it), says why the test is skipped.
pub fn engine_ran(out: &std::process::Output) -> bool {
    if out.status.code() == Some(2) {
        skip(&format!(
            "the engine cannot run here: {}",
            String::from_utf8_lossy(&out.stderr)
        ));
        return false;
    }
    true
}

/// Every `--format` of `report` that writes a report (`reply`, the customer's answer, aside).
pub const REPORT_FORMATS: [&str; 9] = [
    "table",
    "json",
    "jsonl",
    "csv",
    "markdown",
    "prometheus",
    "junit",
    "html",
    "summary",
];

/// Prints why a test is skipped, so the skip is visible in the test output.
pub fn skip(why: &str) {
    eprintln!("skipped: {why}");
}

/// A fio JSON job (an entry of `jobs[]`) made a 60 s run's at the rate it measured: each
/// direction's runtime 60000 ms, its I/Os and bytes scaled to it (bandwidth and IOPS kept),
/// so that a fixture whose options are edited to a 60 s policy's also measured 60 s.
#[allow(dead_code)]
pub fn sixty_seconds(job: &mut serde_json::Value) {
    for dir in ["read", "write", "trim"] {
        let d = &mut job[dir];
        let Some(ms) = d["runtime"].as_u64().filter(|&ms| ms > 0) else {
            continue;
        };
        let k = 60000.0 / ms as f64;
        for key in [
            "io_bytes",
            "io_kbytes",
            "total_ios",
            "short_ios",
            "drop_ios",
        ] {
            if let Some(n) = d[key].as_u64() {
                d[key] = ((n as f64 * k).round() as u64).into();
            }
        }
        d["runtime"] = 60000.into();
    }
    if job["job_runtime"].is_u64() {
        job["job_runtime"] = 60000.into();
    }
    if job["elapsed"].is_u64() {
        job["elapsed"] = 61.into();
    }
}

/// A Swimlane run as the native engine records it: `mb_s` decimal MB/s of 4k random writes
/// on `host` in `dir` at `timestamp`, with the three figures the policy's rules judge.
pub fn swimlane_record(
    host: &str,
    dir: &str,
    timestamp: chrono::DateTime<chrono::FixedOffset>,
    mb_s: f64,
) -> iopscheck::testing::history::Record {
    use iopscheck::testing::history::{Record, Source, Target};
    use iopscheck::testing::record::RunInfo;
    let mut info = RunInfo::new(
        host.into(),
        Source::Native,
        "posixaio".into(),
        // the policy's own job: a run of the policy's test
        iopscheck::testing::policy::resolve("swimlane")
            .expect("built-in")
            .policy
            .job
            .shape(),
        Target {
            dir: dir.into(),
            filesystem: Some("ext4".into()),
            ..Target::default()
        },
        "swimlane".into(),
    );
    info.tool_version = "0.1.0".into();
    let mut r = Record::measured(info, timestamp, &Default::default());
    r.metrics = [
        ("write_bw_mb_s".to_string(), mb_s),
        (
            "write_iops_formula".to_string(),
            iopscheck::testing::metrics::iops_formula(mb_s, 4096),
        ),
        ("write_iops".to_string(), mb_s * 1e6 / 4096.0),
    ]
    .into_iter()
    .collect();
    r
}

/// [`swimlane_record`]s of `host` in `dir`, three a day at 08, 14 and 20 h UTC, the first on
/// the day as many days back as the figures fill (three a day) and the last yesterday, of
/// `figures` MB/s in order: their history lines and their times.
pub fn three_a_day(
    host: &str,
    dir: &str,
    figures: &[f64],
) -> (String, Vec<chrono::DateTime<chrono::FixedOffset>>) {
    use chrono::{Duration, Utc};
    let midnight = Utc::now()
        .date_naive()
        .and_hms_opt(0, 0, 0)
        .unwrap()
        .and_utc()
        .fixed_offset();
    let days = figures.len().div_ceil(3) as i64;
    let mut lines = String::new();
    let mut times = Vec::new();
    for (i, &mb_s) in figures.iter().enumerate() {
        let t = midnight - Duration::days(days - (i / 3) as i64)
            + Duration::hours(8 + 6 * (i % 3) as i64);
        let r = swimlane_record(host, dir, t, mb_s);
        lines.push_str(&serde_json::to_string(&r).unwrap());
        lines.push('\n');
        times.push(t);
    }
    (lines, times)
}

/// A filesystem mounted (`mount ARGS AT`) for a test, lazily unmounted on drop; None where
/// mount failed (the caller skips, saying so).
pub struct Mount {
    dir: PathBuf,
}

impl Mount {
    pub fn new(at: &Path, args: &[&str]) -> Option<Mount> {
        std::fs::create_dir_all(at).unwrap();
        let ok = std::process::Command::new("mount")
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
        let _ = std::process::Command::new("umount")
            .arg("-l")
            .arg(&self.dir)
            .status();
    }
}

/// The reasons of a JSON result's runs not counted (`not_counted[].reason`), in one string.
pub fn not_counted(j: &serde_json::Value) -> String {
    j["not_counted"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["reason"].as_str().unwrap().to_string())
        .collect::<Vec<_>>()
        .join("; ")
}

/// A JSON result's `runs[]`.
pub fn runs(j: &serde_json::Value) -> &Vec<serde_json::Value> {
    j["runs"].as_array().unwrap()
}
