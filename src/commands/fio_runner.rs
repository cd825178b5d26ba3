//! `run --engine fio`: the installed fio runs the policy's job on our own test files (created
//! exclusively and laid out by us, so fio reuses them as they are and never touches another
//! file), with JSON output read by the same parser as `import`.

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use anyhow::Context as _;
use tokio::io::AsyncReadExt;
use tokio::signal::unix::Signal;

use super::run::Progress;
use crate::app::usage;
use crate::job::Job;
use crate::measure::Measurement;
use crate::testfile::TestFiles;

pub enum FioRun {
    /// The measurement and fio's version.
    Done(Box<Measurement>, Option<String>),
    /// Stopped by a signal; true for SIGINT.
    Stopped(bool),
}

/// How long fio may take beyond its runtime: layout is already done, but the end fsync of a
/// buffered run can take minutes (the Swimlane sample flushed for 97 s after 60 s of writes).
fn deadline(job: &Job) -> Duration {
    job.runtime.0 * 10 + Duration::from_secs(600)
}

pub async fn run_fio(
    fio: &Path,
    job: &Job,
    files: &TestFiles,
    sigint: &mut Signal,
    sigterm: &mut Signal,
    progress: &Progress,
) -> anyhow::Result<FioRun> {
    let paths = files.paths();
    let first = paths.first().context("no test file")?;
    let dir = first.parent().context("test file has no directory")?;
    let name = first
        .file_name()
        .and_then(|n| n.to_str())
        .context("test file name is not UTF-8")?;
    // Our files are <prefix>.<jobnum>; fio's $jobnum counts the same way.
    let prefix = name.rsplit_once('.').map(|(p, _)| p).unwrap_or(name);
    let args = crate::fio::command_line(job, dir, prefix);

    let mut child = tokio::process::Command::new(fio)
        .args(&args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| usage(format!("--engine fio: cannot start {}: {e}", fio.display())))?;
    let mut stdout = child.stdout.take().context("fio stdout")?;
    let mut stderr = child.stderr.take().context("fio stderr")?;
    let out_task = tokio::spawn(async move {
        let mut b = Vec::new();
        let _ = stdout.read_to_end(&mut b).await;
        b
    });
    let err_task = tokio::spawn(async move {
        let mut b = Vec::new();
        let _ = stderr.read_to_end(&mut b).await;
        b
    });

    let started = Instant::now();
    let limit = deadline(job);
    let mut tick = tokio::time::interval(Duration::from_millis(500));
    let status = loop {
        tokio::select! {
            s = child.wait() => break s.context("waiting for fio")?,
            _ = tick.tick() => {
                let e = started.elapsed();
                if e > limit {
                    let _ = child.start_kill();
                    let _ = child.wait().await;
                    return Err(usage(format!(
                        "--engine fio: fio did not finish within {}s; it was stopped",
                        limit.as_secs()
                    )));
                }
                let left = job.runtime.0.saturating_sub(e).as_secs();
                progress.set(if left > 0 {
                    format!("fio running · {}s elapsed, {left}s left", e.as_secs())
                } else {
                    format!("fio finishing (drain and final fsync) · {}s elapsed", e.as_secs())
                });
            }
            _ = sigint.recv() => { let _ = child.start_kill(); let _ = child.wait().await; return Ok(FioRun::Stopped(true)); }
            _ = sigterm.recv() => { let _ = child.start_kill(); let _ = child.wait().await; return Ok(FioRun::Stopped(false)); }
        }
    };
    let out = out_task.await.unwrap_or_default();
    let err = err_task.await.unwrap_or_default();
    if !status.success() {
        let tail = String::from_utf8_lossy(&err);
        let tail: Vec<&str> = tail.lines().rev().take(3).collect();
        return Err(usage(format!(
            "--engine fio: fio failed ({status}): {}",
            tail.into_iter().rev().collect::<Vec<_>>().join(" / ")
        )));
    }
    let parsed = crate::fio::parse(&out)
        .map_err(|e| usage(format!("--engine fio: cannot read fio's output: {e}")))?;
    let fio_job = parsed
        .jobs
        .into_iter()
        .next()
        .context("fio's output has no job")?;
    if fio_job.error != 0 {
        return Err(usage(format!(
            "--engine fio: fio reported error {} for the job",
            fio_job.error
        )));
    }
    let mut m = fio_job.measurement;
    m.bs = Some(job.bs.0);
    Ok(FioRun::Done(Box::new(m), parsed.fio_version))
}
