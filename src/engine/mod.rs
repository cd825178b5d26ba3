//! The native engine: runs a [`Job`] on files the caller created, faithful to fio
//! (fio-semantics.md §11). One timed loop for every back end; a back end only submits and
//! reaps. The caller runs [`run`] on a dedicated OS thread; no async runtime is involved.
//!
//! The caller owns the test files (created exclusively, removed at the end: see
//! `crate::testfile`). The engine lays them out ([`layout`]) and opens its own descriptors on
//! them through `/proc/self/fd`, so it never resolves a path that someone could have swapped.
//!
//! Files: `timed.rs` (the shared loop), `offsets.rs` (fio's offsets), `buffers.rs` (buffers and
//! scramble), `psync.rs`, `posixaio.rs`, `uring.rs`, `libaio.rs` (back ends), `sys.rs`
//! (system-call wrappers), `names.rs` (which engine: the back ends, what a record says ran).

mod buffers;
mod libaio;
mod names;
pub mod offsets;
mod posixaio;
mod psync;
mod sync;
mod sys;
mod timed;
mod uring;

#[cfg(test)]
mod tests;

/// For the child that finishes an interrupted run's flush (testfile::detach_descriptors).
pub(crate) use sys::close_all_but;

use std::fs::File;
use std::os::fd::{AsRawFd, RawFd};
use std::sync::Barrier;
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU64, Ordering};
use std::time::Instant;

use crate::job::Job;
use crate::measure::histogram::Histogram;
use crate::measure::series::{INTERVAL_MS, Series};
use crate::measure::{Direction, DirectionStats, Measurement};

pub use names::{Backend, EngineRequest, EngineUsed};
use timed::{JobContext, JobResult};

/// What the engine is doing, for the progress display.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Phase {
    Idle = 0,
    LayingOut = 1,
    Running = 2,
    Draining = 3,
    FinalFsync = 4,
    Done = 5,
}

impl Phase {
    pub fn label(self) -> &'static str {
        match self {
            Phase::Idle => "starting",
            Phase::LayingOut => "laying out",
            Phase::Running => "running",
            Phase::Draining => "draining",
            Phase::FinalFsync => "final fsync",
            Phase::Done => "done",
        }
    }
    fn from_u8(v: u8) -> Phase {
        match v {
            1 => Phase::LayingOut,
            2 => Phase::Running,
            3 => Phase::Draining,
            4 => Phase::FinalFsync,
            5 => Phase::Done,
            _ => Phase::Idle,
        }
    }
}

/// Counters the engine updates as it goes, read by the progress display from another thread.
#[derive(Debug, Default)]
pub struct Live {
    phase: AtomicU8,
    /// I/Os completed so far in the timed phase (all jobs).
    pub ios: AtomicU64,
    /// Bytes laid out so far, and the total, during layout.
    pub layout_done: AtomicU64,
    pub layout_total: AtomicU64,
    /// Ends the timed phase as its runtime would (`run --sustained` once the disk held
    /// steady): the I/Os in flight drain, the end fsync runs, the figures stand.
    pub finish: std::sync::atomic::AtomicBool,
}

impl Live {
    pub fn phase(&self) -> Phase {
        Phase::from_u8(self.phase.load(Ordering::Relaxed))
    }
    pub fn set_phase(&self, p: Phase) {
        self.phase.store(p as u8, Ordering::Relaxed);
    }
}

#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// The cancel flag was raised (SIGINT/SIGTERM); nothing measured is valid.
    #[error("interrupted")]
    Interrupted,
    /// A system call failed; `op` says which and where, e.g. "write at offset 4096".
    #[error("{op}: {source}")]
    Io {
        op: String,
        #[source]
        source: std::io::Error,
    },
    /// The kernel or filesystem refuses what the job needs (io_uring disabled, O_DIRECT on
    /// tmpfs, …). The reason is one sentence for the user.
    #[error("{0}")]
    Unsupported(String),
}

impl EngineError {
    /// The errno behind an I/O error, e.g. ENOSPC for a full disk.
    pub fn raw_os_error(&self) -> Option<i32> {
        match self {
            EngineError::Io { source, .. } => source.raw_os_error(),
            _ => None,
        }
    }
}

/// Checks, before any layout, that the filesystem accepts the job's open flags (O_DIRECT is
/// refused by some, e.g. ramfs or tmpfs before Linux 6.6), so a 4 GiB layout is not written
/// for a job that cannot run.
pub fn check_open_flags(file: &File, job: &Job) -> Result<(), EngineError> {
    if job.direct {
        sys::reopen(file, libc::O_RDWR | libc::O_DIRECT).map(drop)?;
    }
    Ok(())
}

/// Checks that io_uring can be used here (kernel support, `kernel.io_uring_disabled`,
/// seccomp in containers). Err carries the reason in one sentence. The answer is cached.
pub fn probe_io_uring() -> Result<(), String> {
    uring::probe()
}

/// Size of each write while laying out a file that the job reads.
const LAYOUT_CHUNK: usize = 1 << 20;

/// Prepares a freshly created, empty test file for the job, outside the timed interval:
/// fallocate to `job.size` and fadvise(DONTNEED) for write jobs (fio writes no data); for
/// jobs that read, writes the whole file with incompressible data first and fsyncs it, as fio
/// lays out files for reads. Updates `live.layout_*`; stops early when `cancel` is raised.
pub fn layout(file: &File, job: &Job, live: &Live, cancel: &AtomicBool) -> Result<(), EngineError> {
    let size = job.size.0;
    live.set_phase(Phase::LayingOut);
    live.layout_total.store(size, Ordering::Relaxed);
    live.layout_done.store(0, Ordering::Relaxed);
    if cancel.load(Ordering::Relaxed) {
        return Err(EngineError::Interrupted);
    }
    // Our own write-only descriptor: the caller's may be read-only or positioned.
    let fd = sys::reopen(file, libc::O_WRONLY)?;
    let raw = fd.as_raw_fd();
    // fio's `fallocate=native` (§1.2); it also finds a full disk before anything is written.
    sys::fallocate(raw, size)?;
    if job.rw.reads() {
        // fio's new_layout for jobs that read: the whole file, pseudo-random, then fsync.
        let chunk = LAYOUT_CHUNK.max(job.bs.0 as usize);
        let mut bufs = buffers::Buffers::new(1, chunk, 0xbb67_ae85_84ca_a73b);
        let mut off = 0u64;
        let mut stamp = 0u64;
        while off < size {
            if cancel.load(Ordering::Relaxed) {
                return Err(EngineError::Interrupted);
            }
            let len = (size - off).min(chunk as u64) as usize;
            stamp += 1;
            // SAFETY: the buffer is ours and not in any I/O.
            unsafe { buffers::scramble(bufs.ptr(0), len, off, stamp) };
            sys::pwrite_all(raw, &bufs.slice_mut(0)[..len], off).map_err(|e| EngineError::Io {
                op: format!("write at offset {off} while laying out the file"),
                source: e,
            })?;
            off += len as u64;
            live.layout_done.store(off, Ordering::Relaxed);
        }
        // In a child, as the end fsync: a signal during this flush ends iopscheck at once
        // (sys::fsync_in_child), not after seconds of flushing in uninterruptible sleep.
        sys::fsync_in_child(raw).map_err(|e| EngineError::Io {
            op: "fsync after laying out the file".into(),
            source: e,
        })?;
    } else {
        live.layout_done.store(size, Ordering::Relaxed);
    }
    // Drop the file's pages so the run starts cold (fio's __file_invalidate_cache).
    sys::fadvise(raw, size, libc::POSIX_FADV_DONTNEED);
    Ok(())
}

/// Runs the job's timed phase on `files` (one per `numjobs`, already laid out) and returns
/// the group's measurement (fio's group_reporting: bytes and I/Os summed, runtime the
/// longest). With `device` (a disk as /proc/diskstats names it), the disk's own series is
/// sampled beside the jobs' (`Measurement::device`). Blocks until done; call it on a
/// dedicated thread.
pub fn run(
    job: &Job,
    files: &[File],
    backend: Backend,
    live: &Live,
    cancel: &AtomicBool,
    device: Option<&str>,
) -> Result<Measurement, EngineError> {
    if files.len() != job.numjobs as usize {
        return Err(EngineError::Unsupported(format!(
            "the job has numjobs={} but {} test file(s) were prepared",
            job.numjobs,
            files.len()
        )));
    }
    if backend == Backend::IoUring {
        probe_io_uring().map_err(EngineError::Unsupported)?;
    }
    live.set_phase(Phase::Idle);
    let abort = AtomicBool::new(false);
    let (usr0, sys0) = sys::cpu_times();
    let wall0 = Instant::now();
    // The jobs start together at the barrier (fio starts a group's jobs at once), and the
    // device's sampler with them, so that its intervals line up with the jobs' series.
    let barrier = Barrier::new(files.len() + usize::from(device.is_some()));
    let (stop, stopped) = std::sync::mpsc::channel::<()>();
    let (results, device): (Vec<Result<JobResult, EngineError>>, _) = std::thread::scope(|s| {
        let sampler = device.map(|name| {
            let (barrier, stopped) = (&barrier, stopped);
            std::thread::Builder::new()
                .name("iopscheck-disk".into())
                .spawn_scoped(s, move || {
                    crate::measure::device::sample(name, &stopped, || {
                        barrier.wait();
                    })
                })
                .expect("spawn the disk sampler")
        });
        let results = if files.len() == 1 {
            vec![run_worker(
                job, 0, &files[0], backend, live, cancel, &abort, &barrier,
            )]
        } else {
            // One thread per job.
            let handles: Vec<_> = files
                .iter()
                .enumerate()
                .map(|(i, f)| {
                    let (abort, barrier) = (&abort, &barrier);
                    std::thread::Builder::new()
                        .name(format!("iopscheck-job{i}"))
                        .spawn_scoped(s, move || {
                            let r = run_worker(job, i, f, backend, live, cancel, abort, barrier);
                            if r.is_err() {
                                abort.store(true, Ordering::Relaxed);
                            }
                            r
                        })
                        .expect("spawn a job thread")
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
                .collect()
        };
        // The last job's end fsync is over: the device's series ends here.
        let _ = stop.send(());
        let device = sampler.and_then(|h| h.join().ok().flatten());
        (results, device)
    });
    let wall = wall0.elapsed();
    let (usr1, sys1) = sys::cpu_times();

    // The first real failure wins over the "stopped because another job failed" of the rest.
    let mut ok = Vec::with_capacity(results.len());
    let mut interrupted = false;
    let mut first_err = None;
    for r in results {
        match r {
            Ok(j) => ok.push(j),
            Err(EngineError::Interrupted) => interrupted = true,
            Err(e) => {
                first_err.get_or_insert(e);
            }
        }
    }
    if let Some(e) = first_err {
        return Err(e);
    }
    if interrupted || cancel.load(Ordering::Relaxed) {
        return Err(EngineError::Interrupted);
    }
    let mut m = combine(job, backend, &ok);
    m.device = device;
    let secs = wall.as_secs_f64();
    if secs > 0.0 {
        m.cpu_usr_pct = Some(usr1.saturating_sub(usr0).as_secs_f64() / secs * 100.0);
        m.cpu_sys_pct = Some(sys1.saturating_sub(sys0).as_secs_f64() / secs * 100.0);
    }
    live.set_phase(Phase::Done);
    Ok(m)
}

/// The back end of one job, chosen at run time; each arm runs a monomorphised timed loop.
enum AnyPath {
    Psync(psync::Psync),
    Sync(sync::SyncRw),
    Posixaio(posixaio::PosixAio),
    Libaio(libaio::Libaio),
    IoUring(Box<uring::Uring>),
}

impl AnyPath {
    /// Sets up the back end on the calling thread (io_uring wants its single issuer there).
    fn new(backend: Backend, fd: RawFd, job: &Job) -> Result<AnyPath, EngineError> {
        let depth = job.iodepth as usize;
        Ok(match backend {
            Backend::Psync => AnyPath::Psync(psync::Psync::new(fd)),
            Backend::Sync => AnyPath::Sync(sync::SyncRw::new(fd)),
            Backend::Posixaio => AnyPath::Posixaio(posixaio::PosixAio::new(fd, depth)),
            Backend::Libaio => AnyPath::Libaio(libaio::Libaio::new(fd, depth).map_err(|e| {
                match e.raw_os_error() {
                    Some(libc::ENOSYS) => EngineError::Unsupported(
                        "the kernel has no native AIO (CONFIG_AIO is off); use another ioengine"
                            .into(),
                    ),
                    _ => EngineError::Io {
                        op: format!("io_setup({depth}) for libaio"),
                        source: e,
                    },
                }
            })?),
            Backend::IoUring => AnyPath::IoUring(Box::new(
                uring::Uring::new(fd, job.iodepth)
                    .map_err(|e| EngineError::Unsupported(uring::setup_reason(&e)))?,
            )),
        })
    }

    fn run(&mut self, ctx: &JobContext<'_>) -> Result<JobResult, EngineError> {
        match self {
            AnyPath::Psync(b) => timed::run_job(ctx, b),
            AnyPath::Sync(b) => timed::run_job(ctx, b),
            AnyPath::Posixaio(b) => timed::run_job(ctx, b),
            AnyPath::Libaio(b) => timed::run_job(ctx, b),
            AnyPath::IoUring(b) => timed::run_job(ctx, &mut **b),
        }
    }
}

/// How long a job's file is left idle between its setup (and any run before it) and its first
/// timed I/O, outside the timed interval. fio's backend releases a job it has set up only at
/// its next 100 ms poll (`run_threads`: `do_usleep(100000)` until the job is
/// TD_INITIALIZED), and a fio command takes a few hundred ms more to get there, so fio's first
/// I/O never comes within 100 ms of the layout or of a previous run. A device that remembers
/// recent I/O notices: cgroup blk-throttle opens a 100 ms slice with each I/O (or limit
/// change) and keeps it up to 200 ms after the last one, and an I/O inside a live slice may
/// spend the allowance the idle part of it accrued. Starting milliseconds after the layout, or
/// after the previous run of the same check, iopscheck's runs got one slice's worth of I/Os
/// more than fio's under a throttle (+280 at 2,800 IOPS). 250 ms outlasts any such slice.
const IDLE_BEFORE_RUN: std::time::Duration = std::time::Duration::from_millis(250);

/// One job of the group, on the current thread: open, set up the back end, leave the device
/// idle (IDLE_BEFORE_RUN), wait for the others, run the timed loop.
#[allow(clippy::too_many_arguments)]
fn run_worker(
    job: &Job,
    index: usize,
    file: &File,
    backend: Backend,
    live: &Live,
    cancel: &AtomicBool,
    abort: &AtomicBool,
    barrier: &Barrier,
) -> Result<JobResult, EngineError> {
    // Never a write to a device: the caller refuses it first; this is the last guard.
    let is_device = {
        use std::os::unix::fs::FileTypeExt;
        file.metadata()
            .is_ok_and(|m| m.file_type().is_block_device() || m.file_type().is_char_device())
    };
    let setup = if is_device && job.rw.writes() {
        Err(EngineError::Unsupported(
            "the job writes, and iopscheck never writes to a device".into(),
        ))
    } else {
        Ok(())
    };
    let setup = setup
        .and_then(|()| sys::reopen(file, sys::job_open_flags(job)))
        .and_then(|fd| {
            let raw = fd.as_raw_fd();
            // fio's td_io_open_file: invalidate the cache, then the access-pattern hint.
            sys::fadvise(raw, job.size.0, libc::POSIX_FADV_DONTNEED);
            let hint = if job.rw.random() {
                libc::POSIX_FADV_RANDOM
            } else {
                libc::POSIX_FADV_SEQUENTIAL
            };
            sys::fadvise(raw, job.size.0, hint);
            let path = AnyPath::new(backend, raw, job)?;
            Ok((fd, path))
        });
    // The device is left idle before the first timed I/O, as fio leaves it (IDLE_BEFORE_RUN).
    if setup.is_ok() {
        std::thread::sleep(IDLE_BEFORE_RUN);
    }
    // Every job reaches the barrier, even one whose setup failed, so none waits forever.
    barrier.wait();
    // `path` is declared after `fd`, so it is dropped (and drained) before the fd is closed.
    let (fd, mut path) = setup?;
    let ctx = JobContext {
        job,
        index,
        fd: fd.as_raw_fd(),
        live,
        cancel,
        abort,
    };
    path.run(&ctx)
}

/// Adds up the jobs of a group as fio's group_reporting does (§8): I/Os and bytes summed,
/// runtime the longest, histograms merged.
fn combine(job: &Job, backend: Backend, jobs: &[JobResult]) -> Measurement {
    let dir = |d: usize| -> DirectionStats {
        let (mut ios, mut bytes, mut runtime_ms) = (0u64, 0u64, 0u64);
        let (mut clat, mut lat, mut slat) = (
            Histogram::default(),
            Histogram::default(),
            Histogram::default(),
        );
        for j in jobs {
            let s = &j.dirs[d];
            ios += s.ios;
            bytes += s.bytes;
            // fio's update_runtime: only for a direction that moved bytes; ms rounded up.
            if s.bytes > 0 {
                runtime_ms = runtime_ms.max(j.elapsed_us.div_ceil(1000));
            }
            clat.merge(&s.clat);
            lat.merge(&s.lat);
            slat.merge(&s.slat);
        }
        let mut out = DirectionStats::from_counts(ios, bytes, runtime_ms);
        let some = |h: &Histogram| (!h.is_empty()).then(|| h.summary());
        out.clat = some(&clat);
        out.lat = some(&lat);
        if backend.is_async() {
            out.slat = some(&slat);
        }
        out
    };
    let mut sync = Histogram::default();
    for j in jobs {
        sync.merge(&j.sync);
    }
    let end_fsync_ms = jobs
        .iter()
        .filter_map(|j| j.end_fsync)
        .map(|d| d.as_secs_f64() * 1000.0)
        .reduce(f64::max);
    let series = combine_series(job, jobs, end_fsync_ms);
    let dir = |d: usize| {
        let mut out = dir(d);
        out.samples = series.samples(if d == 0 { "read" } else { "write" });
        out
    };
    Measurement {
        read: job.rw.reads().then(|| dir(Direction::Read as usize)),
        write: job.rw.writes().then(|| dir(Direction::Write as usize)),
        sync: (!sync.is_empty()).then(|| sync.summary()),
        end_fsync_ms,
        layout_ms: None,
        cpu_usr_pct: None,
        cpu_sys_pct: None,
        bs: Some(job.bs.0),
        series: Some(series),
        disk: Vec::new(),
        device: None,
    }
}

/// The jobs' series added interval by interval (they start together at the barrier).
fn combine_series(job: &Job, jobs: &[JobResult], end_fsync_ms: Option<f64>) -> Series {
    let sum = |d: usize| -> Vec<u32> {
        let mut out: Vec<u32> = Vec::new();
        for j in jobs {
            let v = &j.series[d];
            if out.len() < v.len() {
                out.resize(v.len(), 0);
            }
            for (o, &n) in out.iter_mut().zip(v) {
                *o = o.saturating_add(n);
            }
        }
        out
    };
    Series {
        interval_ms: INTERVAL_MS,
        write: if job.rw.writes() { sum(1) } else { Vec::new() },
        read: if job.rw.reads() { sum(0) } else { Vec::new() },
        // The job that ran longest ends the series.
        last_ms: jobs
            .iter()
            .map(|j| (j.series[0].len().max(j.series[1].len()), j.last_ms))
            .max()
            .map_or(0, |(_, ms)| ms),
        end_fsync_ms,
    }
}
