//! The timed loop every back end shares (fio's `do_io`, fio-semantics.md §3 and §11 rules
//! 5–8): pick the direction and offset, scramble the buffer, hand the I/O to the back end,
//! reap when the queue is full, stop issuing at the deadline, drain, end fsync, stop the clock.
//! A back end ([`IoPath`]) only submits and reaps.
//!
//! The hot path allocates nothing, takes no lock and reads the clock two (sync engines) or
//! three (async engines) times per I/O; progress counters are Relaxed atomics updated in
//! batches. The IOPS series (fio's 500 ms samples) costs one comparison and one increment per
//! completion; the interval is closed off the hot path.

use std::io;
use std::os::fd::RawFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use super::buffers::{self, Buffers};
use super::offsets::{MixPicker, Pick, RandomBlocks, SeqBlocks};
use super::sys;
use super::{EngineError, Live, Phase};
use crate::job::Job;
use crate::measure::Direction;
use crate::measure::histogram::Histogram;
use crate::measure::series::INTERVAL_MS;

const INTERVAL: Duration = Duration::from_millis(INTERVAL_MS as u64);

/// What a sync request asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SyncKind {
    Fsync,
    Fdatasync,
}

/// One I/O handed to a back end. `tag` comes back with its completion.
#[derive(Debug, Clone, Copy)]
pub struct Req {
    pub tag: u32,
    pub dir: Direction,
    pub buf: *mut u8,
    pub len: u32,
    pub offset: u64,
}

/// A back end: submits and reaps, nothing else.
pub trait IoPath {
    /// Async back ends report submission latency (slat); sync ones complete inside `submit`.
    const ASYNC: bool;

    /// Readies the back end for an I/O at `offset`, before the I/O's clock starts (fio's
    /// `->prep`, which `get_io_u` calls before it stamps the start time): the sync back end
    /// moves the file position there. Nothing for the others.
    #[inline]
    fn prep(&mut self, _offset: u64) -> io::Result<()> {
        Ok(())
    }

    /// Hands one I/O over. `Ok(Some(res))` when it completed inline (sync engines; `res` is
    /// bytes transferred, or −errno); `Ok(None)` once queued. `Err(EAGAIN)` means "busy: reap
    /// and try again"; any other `Err` is a failed submission.
    fn submit(&mut self, req: &Req) -> io::Result<Option<i64>>;

    /// Waits until at least `min` queued I/Os have completed and appends at most `max` of
    /// them as (tag, res); completions beyond `max` stay queued for the next call (fio's
    /// `getevents(min, max)`; posixaio, as fio's, takes every finished request it finds).
    fn reap(&mut self, min: usize, max: usize, out: &mut Vec<(u32, i64)>) -> io::Result<()>;

    /// A sync through the back end, with nothing else in flight; blocks until done.
    fn sync(&mut self, kind: SyncKind) -> io::Result<()>;
}

/// Counters and latencies of one direction of one job.
#[derive(Debug, Default)]
pub struct DirStats {
    pub ios: u64,
    pub bytes: u64,
    pub clat: Histogram,
    pub lat: Histogram,
    pub slat: Histogram,
}

/// What one job (one of numjobs) measured.
#[derive(Debug, Default)]
pub struct JobResult {
    pub dirs: [DirStats; 2],
    pub sync: Histogram,
    /// t1 − t0 in µs: first I/O to the end of the end fsync.
    pub elapsed_us: u64,
    pub end_fsync: Option<Duration>,
    /// I/Os completed per [`INTERVAL`] of the timed loop, per direction (index: [`Direction`]);
    /// the last interval ends when the drain did and lasts `last_ms`.
    pub series: [Vec<u32>; 2],
    pub last_ms: u32,
}

/// Everything a worker needs besides its back end.
pub struct JobContext<'a> {
    pub job: &'a Job,
    pub index: usize,
    pub fd: RawFd,
    pub live: &'a Live,
    /// The user's cancel flag.
    pub cancel: &'a AtomicBool,
    /// Raised when another job of the group failed: stop quietly.
    pub abort: &'a AtomicBool,
}

/// Where the next offsets come from.
enum Offsets {
    Random(RandomBlocks),
    /// Sequential, one position per direction (fio keeps `last_pos` per direction).
    Seq([SeqBlocks; 2]),
}

#[derive(Debug, Clone, Copy)]
struct Slot {
    dir: Direction,
    offset: u64,
    len: u32,
    /// Bytes already done by earlier parts of a short I/O.
    done: u32,
    start: Instant,
    issue: Instant,
}

/// Flush the progress counter after this many completions.
const LIVE_BATCH: u64 = 64;

/// Completions taken per reap while the queue is full: fio's `iodepth_batch_complete_max`,
/// which defaults to `iodepth_batch_complete_min` = 1 (init.c). So at any depth fio reaps
/// one completion, submits one I/O, reaps one…; the completions it has not taken yet wait
/// in the kernel's ring, are stamped later (longer clat) and are not yet replaced by new I/O
/// (fewer I/Os at the device). Taking a whole batch instead measured 1.2–1.4× fio's IOPS at
/// 0.6–0.8× its clat on a virtio disk (docs/fio-queue.md).
const REAP_MAX: usize = 1;

struct Loop<'a, 'b, B: IoPath> {
    ctx: &'b JobContext<'a>,
    be: &'b mut B,
    bufs: &'b Buffers,
    slots: Vec<Slot>,
    free: Vec<u32>,
    done: Vec<(u32, i64)>,
    inflight: usize,
    res: JobResult,
    live_pending: u64,
    /// End of the current series interval, and the I/Os completed in it per direction.
    tick_end: Instant,
    tick: [u32; 2],
}

/// Runs one job's timed phase on `fd` through back end `be`. On every exit, I/O still in
/// flight is reaped before the buffers are released.
pub fn run_job<B: IoPath>(ctx: &JobContext<'_>, be: &mut B) -> Result<JobResult, EngineError> {
    let job = ctx.job;
    let depth = job.iodepth as usize;
    let bufs = Buffers::new(
        depth,
        job.bs.0 as usize,
        0x6a09_e667_f3bc_c908 ^ ctx.index as u64,
    );
    let now = Instant::now();
    let idle = Slot {
        dir: Direction::Write,
        offset: 0,
        len: 0,
        done: 0,
        start: now,
        issue: now,
    };
    let mut l = Loop {
        ctx,
        be,
        bufs: &bufs,
        slots: vec![idle; depth],
        free: (0..depth as u32).rev().collect(),
        done: Vec::with_capacity(depth),
        inflight: 0,
        res: JobResult::default(),
        live_pending: 0,
        tick_end: now,
        tick: [0; 2],
    };
    let r = l.run();
    if !B::ASYNC {
        for d in &mut l.res.dirs {
            d.lat = d.clat.clone();
        }
    }
    let clean = r.is_ok() || l.drain_quietly();
    l.flush_live();
    let res = std::mem::take(&mut l.res);
    drop(l);
    if !clean {
        // Something may still be writing into the buffers: leaking them is the safe choice.
        std::mem::forget(bufs);
    }
    r.map(|()| res)
}

impl<B: IoPath> Loop<'_, '_, B> {
    fn run(&mut self) -> Result<(), EngineError> {
        let job = self.ctx.job;
        let bs = job.bs.0;
        let size = job.size.0;
        let nblocks = job.blocks();
        let runtime = job.runtime.0;
        let wrap = job.time_based;
        let direct = job.direct;
        let fd = self.ctx.fd;
        let (reads, writes) = (job.rw.reads(), job.rw.writes());
        let mut mix = (reads && writes).then(|| MixPicker::new(job.rwmixread, self.ctx.index));
        let mut offsets = if job.rw.random() {
            Offsets::Random(RandomBlocks::for_job(nblocks, self.ctx.index))
        } else {
            Offsets::Seq([SeqBlocks::new(nblocks), SeqBlocks::new(nblocks)])
        };
        let sync_every = [
            (job.fsync as u64, SyncKind::Fsync),
            (job.fdatasync as u64, SyncKind::Fdatasync),
        ];
        let mut sync_due: Option<SyncKind> = None;
        let mut last_was_sync = false;
        let mut writes_issued = 0u64;
        let mut bytes_issued = 0u64;
        let mut stamp = (self.ctx.index as u64) << 48;

        self.ctx.live.set_phase(Phase::Running);
        // t0: just before the first I/O (rule 7).
        let t0 = Instant::now();
        let mut now = t0;
        self.tick_end = t0 + INTERVAL;
        let intervals = (runtime.as_millis() / INTERVAL.as_millis()) as usize + 2;
        for v in &mut self.res.series {
            v.reserve(intervals.min(1 << 16));
        }
        let mut interrupted = false;
        'run: loop {
            while self.inflight < self.slots.len() {
                if now.duration_since(t0) >= runtime || self.ctx.live.finish.load(Ordering::Relaxed)
                {
                    break 'run;
                }
                if self.ctx.cancel.load(Ordering::Relaxed) || self.ctx.abort.load(Ordering::Relaxed)
                {
                    interrupted = true;
                    break 'run;
                }
                if !wrap && bytes_issued >= size {
                    break 'run;
                }
                if let Some(kind) = sync_due.take() {
                    // fio queues the sync after the Nth write; we let the writes it covers
                    // complete first, so it syncs them (identical at iodepth=1, and for
                    // posixaio, which runs one request per file at a time anyway).
                    self.drain()?;
                    let s = Instant::now();
                    self.be.sync(kind).map_err(|e| {
                        let op = match kind {
                            SyncKind::Fsync => "fsync",
                            SyncKind::Fdatasync => "fdatasync",
                        };
                        EngineError::Io {
                            op: op.into(),
                            source: e,
                        }
                    })?;
                    now = Instant::now();
                    self.res
                        .sync
                        .record(now.duration_since(s).as_nanos() as u64);
                    last_was_sync = true;
                    continue;
                }
                let dir = match &mut mix {
                    Some(m) => {
                        if m.is_read() {
                            Direction::Read
                        } else {
                            Direction::Write
                        }
                    }
                    None if writes => Direction::Write,
                    None => Direction::Read,
                };
                let pick = match &mut offsets {
                    Offsets::Random(r) => r.next(wrap),
                    Offsets::Seq(s) => s[dir as usize].next(wrap),
                };
                let block = match pick {
                    Pick::Block(b) => b,
                    Pick::NewPass(b) => {
                        // fio's loop_cache_invalidate: drop the file's pages (this starts
                        // writeback of the dirty ones), inside the timed interval.
                        if !direct {
                            sys::fadvise(fd, size, libc::POSIX_FADV_DONTNEED);
                        }
                        b
                    }
                    Pick::Done => break 'run,
                };
                let offset = block * bs;
                let tag = self
                    .free
                    .pop()
                    .expect("a free slot when the queue is not full");
                let buf = self.bufs.ptr(tag as usize);
                if dir == Direction::Write {
                    stamp += 1;
                    // SAFETY: this slot's buffer is not in flight.
                    unsafe { buffers::scramble(buf, bs as usize, offset, stamp) };
                    writes_issued += 1;
                }
                bytes_issued += bs;
                if let Err(e) = self.be.prep(offset) {
                    self.free.push(tag);
                    return Err(sys::io_err(
                        format!("lseek to offset {offset}"),
                        e.raw_os_error().unwrap_or(libc::EIO),
                    ));
                }
                let start = Instant::now();
                self.slots[tag as usize] = Slot {
                    dir,
                    offset,
                    len: bs as u32,
                    done: 0,
                    start,
                    issue: start,
                };
                now = self.issue(tag)?;
                last_was_sync = false;
                if dir == Direction::Write {
                    for (n, kind) in sync_every {
                        if n > 0 && writes_issued.is_multiple_of(n) {
                            sync_due = Some(kind);
                            break;
                        }
                    }
                }
            }
            // The queue is full: wait for one completion, as fio (REAP_MAX).
            now = self.reap(1, REAP_MAX)?;
        }

        if self.inflight > 0 {
            self.ctx.live.set_phase(Phase::Draining);
            self.drain()?;
        }
        // One instant ends the series and starts the end fsync, and the fsync's end is t1: the
        // series, the fsync and the runtime then add up exactly, whatever the scheduler does
        // between these lines.
        let drained = Instant::now();
        self.close_series(drained);
        let mut t1 = drained;
        if interrupted {
            return Err(EngineError::Interrupted);
        }
        // fio: `should_fsync` is false right after a sync, and read-only jobs never fsync.
        if job.end_fsync && writes && !last_was_sync {
            self.ctx.live.set_phase(Phase::FinalFsync);
            // In a child process rather than through the back end: see sys::fsync_in_child.
            super::sys::fsync_in_child(self.ctx.fd).map_err(|e| EngineError::Io {
                op: "fsync at the end of the job".into(),
                source: e,
            })?;
            t1 = Instant::now();
            self.res.end_fsync = Some(t1.duration_since(drained));
        }
        // t1: after the drain and the end fsync (§3.1 step 6).
        self.res.elapsed_us = t1.duration_since(t0).as_micros() as u64;
        Ok(())
    }

    /// Submits slot `tag` (a new I/O, or the rest of a short one). Returns the latest
    /// timestamp taken, for the next deadline check.
    #[inline]
    fn issue(&mut self, tag: u32) -> Result<Instant, EngineError> {
        loop {
            let s = self.slots[tag as usize];
            let req = Req {
                tag,
                dir: s.dir,
                // SAFETY: done < len, so still inside this slot's buffer.
                buf: unsafe { self.bufs.ptr(tag as usize).add(s.done as usize) },
                len: s.len - s.done,
                offset: s.offset + s.done as u64,
            };
            match self.be.submit(&req) {
                Ok(None) => {
                    let issue = Instant::now();
                    let slot = &mut self.slots[tag as usize];
                    if s.done == 0 {
                        slot.issue = issue;
                    }
                    self.inflight += 1;
                    return Ok(issue);
                }
                Ok(Some(res)) => {
                    // Completed inline (sync engine): issue time = start (§5.1).
                    let end = Instant::now();
                    self.inflight += 1;
                    if self.complete(tag, res, end)? {
                        return Ok(end);
                    }
                    // Short: the rest is re-issued by the next turn of this loop.
                    self.inflight -= 1;
                }
                Err(e) if e.raw_os_error() == Some(libc::EAGAIN) => {
                    // Out of resources for a moment (glibc could not queue the request).
                    // Not reaping here keeps `issue` usable from inside `reap`.
                    std::thread::yield_now();
                }
                Err(e) => return Err(self.io_error(&s, e.raw_os_error().unwrap_or(libc::EIO))),
            }
        }
    }

    /// Reaps at least `min` and at most `max` completions; returns the completion timestamp.
    fn reap(&mut self, min: usize, max: usize) -> Result<Instant, EngineError> {
        self.done.clear();
        if let Err(e) = self.be.reap(min, max, &mut self.done) {
            return Err(sys::io_err(
                "waiting for I/O completions",
                e.raw_os_error().unwrap_or(libc::EIO),
            ));
        }
        // One timestamp per reaped batch, as fio's init_icd().
        let end = Instant::now();
        // Every completion of the batch is accounted, even after an error, so that the count
        // of I/Os in flight stays true for the drain that follows an error.
        let mut first_err = None;
        for i in 0..self.done.len() {
            let (tag, res) = self.done[i];
            match self.complete(tag, res, end) {
                Ok(true) => {}
                Ok(false) => {
                    // Short I/O: submit the rest; it stays in flight.
                    self.inflight -= 1;
                    if first_err.is_none()
                        && let Err(e) = self.issue(tag)
                    {
                        first_err = Some(e);
                    }
                }
                Err(e) => {
                    first_err.get_or_insert(e);
                }
            }
        }
        match first_err {
            None => Ok(end),
            Some(e) => Err(e),
        }
    }

    /// Accounts one completion. Returns false when the I/O was short and must be continued.
    #[inline]
    fn complete(&mut self, tag: u32, res: i64, end: Instant) -> Result<bool, EngineError> {
        let s = self.slots[tag as usize];
        if res < 0 {
            self.inflight -= 1;
            self.free.push(tag);
            return Err(self.io_error(&s, (-res) as i32));
        }
        let got = res as u32;
        if got == 0 && s.len > s.done {
            self.inflight -= 1;
            self.free.push(tag);
            // A read at the end of the file, or a write the kernel refused to advance.
            let e = if s.dir == Direction::Read {
                libc::ENODATA
            } else {
                libc::EIO
            };
            return Err(self.io_error(&s, e));
        }
        if s.done + got < s.len {
            self.slots[tag as usize].done += got;
            return Ok(false);
        }
        self.inflight -= 1;
        self.free.push(tag);
        if end >= self.tick_end {
            self.next_interval(end);
        }
        self.tick[s.dir as usize] += 1;
        let d = &mut self.res.dirs[s.dir as usize];
        d.ios += 1;
        d.bytes += s.len as u64;
        d.clat.record(end.duration_since(s.issue).as_nanos() as u64);
        if B::ASYNC {
            d.lat.record(end.duration_since(s.start).as_nanos() as u64);
            d.slat
                .record(s.issue.duration_since(s.start).as_nanos() as u64);
        }
        // A sync engine's issue time is its start (§5.1): lat = clat, copied once at the end.
        self.live_pending += 1;
        if self.live_pending >= LIVE_BATCH {
            self.flush_live();
        }
        Ok(true)
    }

    /// Closes the series intervals that ended before `at` (empty ones too: a stall shows).
    #[cold]
    #[inline(never)]
    fn next_interval(&mut self, at: Instant) {
        while at >= self.tick_end {
            for (v, n) in self.res.series.iter_mut().zip(&mut self.tick) {
                v.push(std::mem::take(n));
            }
            self.tick_end += INTERVAL;
        }
    }

    /// Closes the series after the drain: the last, partial interval ends at `at`.
    fn close_series(&mut self, at: Instant) {
        self.next_interval(at);
        let start = self.tick_end - INTERVAL;
        for (v, n) in self.res.series.iter_mut().zip(&mut self.tick) {
            v.push(std::mem::take(n));
        }
        self.res.last_ms = at.duration_since(start).as_millis() as u32;
    }

    fn flush_live(&mut self) {
        if self.live_pending > 0 {
            self.ctx
                .live
                .ios
                .fetch_add(self.live_pending, Ordering::Relaxed);
            self.live_pending = 0;
        }
    }

    fn drain(&mut self) -> Result<(), EngineError> {
        // fio's end of loop: io_u_queued_complete(cur_depth), one call for all of them.
        while self.inflight > 0 {
            self.reap(self.inflight, self.inflight)?;
        }
        Ok(())
    }

    /// After an error: wait for whatever is still in flight (the kernel or glibc may still be
    /// using the buffers), ignoring further errors.
    /// Returns false when that failed too.
    fn drain_quietly(&mut self) -> bool {
        while self.inflight > 0 {
            self.done.clear();
            if self.be.reap(1, self.inflight, &mut self.done).is_err() {
                return false;
            }
            if self.done.is_empty() {
                // The back end has nothing left in flight.
                break;
            }
            self.inflight = self.inflight.saturating_sub(self.done.len());
        }
        true
    }

    fn io_error(&self, s: &Slot, errno: i32) -> EngineError {
        let op = format!("{} at offset {}", s.dir.as_str(), s.offset);
        if errno == libc::EINVAL && self.ctx.job.direct {
            return sys::direct_unsupported(&op, errno);
        }
        sys::io_err(op, errno)
    }
}
