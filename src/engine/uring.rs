//! The io_uring back end (io-uring crate), set up as fio 3.33's io_uring engine with its
//! defaults (fio-semantics.md §4.2): SQ entries = iodepth, CQ = iodepth, COOP_TASKRUN and
//! SINGLE_ISSUER|DEFER_TASKRUN when the kernel takes them (dropped one by one on EINVAL, as
//! fio does), no SQPOLL, no IOPOLL, no fixed buffers or files; IORING_OP_WRITE/READ, each
//! submitted at once with `io_uring_enter(1, 0, GETEVENTS)`; syncs are IORING_OP_FSYNC.
//! Also the cached probe that says, in one sentence, why io_uring cannot be used.

use std::io;
use std::os::fd::RawFd;
use std::sync::OnceLock;

use io_uring::{IoUring, Probe, opcode, squeue, types};

use super::timed::{IoPath, Req, SyncKind};
use crate::measure::Direction;

/// user_data of a sync request (I/O tags are slot numbers, far below this).
const SYNC_TAG: u64 = u64::MAX;

/// IORING_ENTER_GETEVENTS from linux/io_uring.h (the crate keeps its flag type private).
const ENTER_GETEVENTS: u32 = 1;

pub struct Uring {
    ring: IoUring,
    fd: types::Fd,
    inflight: usize,
}

impl Uring {
    /// A ring for `depth` I/Os. Call it on the thread that will use it (SINGLE_ISSUER).
    pub fn new(fd: RawFd, depth: u32) -> io::Result<Uring> {
        let depth = depth.max(1);
        // Try fio's flags, most demanding first, and drop what the kernel refuses.
        let attempts: [(bool, bool, bool); 4] = [
            (true, true, true),
            (true, true, false),
            (true, false, false),
            (false, false, false),
        ];
        let mut last = None;
        for (cq, coop, defer) in attempts {
            let mut b = IoUring::builder();
            if cq {
                b.setup_cqsize(depth);
            }
            if coop {
                b.setup_coop_taskrun();
            }
            if defer {
                b.setup_single_issuer().setup_defer_taskrun();
            }
            match b.build(depth) {
                Ok(ring) => {
                    return Ok(Uring {
                        ring,
                        fd: types::Fd(fd),
                        inflight: 0,
                    });
                }
                Err(e) if e.raw_os_error() == Some(libc::EINVAL) => last = Some(e),
                Err(e) => return Err(e),
            }
        }
        Err(last.unwrap_or_else(|| io::Error::from_raw_os_error(libc::EINVAL)))
    }

    /// Queues one entry and submits it: `io_uring_enter(1, 0, GETEVENTS)` like fio's commit.
    fn push_submit(&mut self, e: &squeue::Entry) -> io::Result<()> {
        // SAFETY: the entry's buffer outlives the request (the loop keeps it until reaped).
        // The queue handle syncs the tail to the kernel when the temporary is dropped.
        if unsafe { self.ring.submission().push(e) }.is_err() {
            // Never more than depth in flight, so the queue cannot be full.
            return Err(io::Error::from_raw_os_error(libc::EAGAIN));
        }
        loop {
            match self.enter(1, 0) {
                Ok(_) => return Ok(()),
                Err(e) if e.raw_os_error() == Some(libc::EINTR) => continue,
                Err(e) => return Err(e),
            }
        }
    }

    /// io_uring_enter with GETEVENTS, which also runs deferred task work (DEFER_TASKRUN).
    fn enter(&self, to_submit: u32, want: u32) -> io::Result<usize> {
        // SAFETY: no extra argument is passed.
        unsafe {
            self.ring
                .submitter()
                .enter::<libc::sigset_t>(to_submit, want, ENTER_GETEVENTS, None)
        }
    }
}

impl IoPath for Uring {
    const ASYNC: bool = true;

    #[inline]
    fn submit(&mut self, req: &Req) -> io::Result<Option<i64>> {
        let e = match req.dir {
            Direction::Write => opcode::Write::new(self.fd, req.buf, req.len)
                .offset(req.offset)
                .build(),
            Direction::Read => opcode::Read::new(self.fd, req.buf, req.len)
                .offset(req.offset)
                .build(),
        }
        .user_data(req.tag as u64);
        self.push_submit(&e)?;
        self.inflight += 1;
        Ok(None)
    }

    fn reap(&mut self, min: usize, max: usize, out: &mut Vec<(u32, i64)>) -> io::Result<()> {
        let need = min.min(self.inflight);
        let max = max.max(need);
        let mut got = 0usize;
        loop {
            // At most `max`: the rest stay in the CQ ring (fio's cqring_reap stops at max).
            for cqe in self.ring.completion().take(max - got) {
                out.push((cqe.user_data() as u32, cqe.result() as i64));
                got += 1;
                self.inflight -= 1;
            }
            if got >= need {
                return Ok(());
            }
            match self.enter(0, (need - got) as u32) {
                Ok(_) => {}
                Err(e) if e.raw_os_error() == Some(libc::EINTR) => {}
                Err(e) => return Err(e),
            }
        }
    }

    fn sync(&mut self, kind: SyncKind) -> io::Result<()> {
        let mut f = opcode::Fsync::new(self.fd);
        if kind == SyncKind::Fdatasync {
            f = f.flags(types::FsyncFlags::DATASYNC);
        }
        self.push_submit(&f.build().user_data(SYNC_TAG))?;
        loop {
            if let Some(cqe) = self.ring.completion().next() {
                debug_assert_eq!(cqe.user_data(), SYNC_TAG);
                let r = cqe.result();
                return if r < 0 {
                    Err(io::Error::from_raw_os_error(-r))
                } else {
                    Ok(())
                };
            }
            match self.enter(0, 1) {
                Ok(_) => {}
                Err(e) if e.raw_os_error() == Some(libc::EINTR) => {}
                Err(e) => return Err(e),
            }
        }
    }
}

/// Checks once per process that io_uring can run this engine's opcodes.
pub fn probe() -> Result<(), String> {
    static PROBE: OnceLock<Result<(), String>> = OnceLock::new();
    PROBE.get_or_init(probe_now).clone()
}

fn probe_now() -> Result<(), String> {
    let ring = IoUring::new(2).map_err(|e| setup_reason(&e))?;
    let mut p = Probe::new();
    if let Err(e) = ring.submitter().register_probe(&mut p) {
        return Err(match e.raw_os_error() {
            Some(libc::EINVAL) => {
                "the kernel's io_uring is too old for this engine (no opcode probe, Linux < 5.6)"
                    .to_string()
            }
            _ => setup_reason(&e),
        });
    }
    for (code, name) in [
        (opcode::Write::CODE, "IORING_OP_WRITE"),
        (opcode::Read::CODE, "IORING_OP_READ"),
        (opcode::Fsync::CODE, "IORING_OP_FSYNC"),
    ] {
        if !p.is_supported(code) {
            return Err(format!(
                "the kernel's io_uring does not support {name} (Linux < 5.6, or it is restricted here)"
            ));
        }
    }
    Ok(())
}

/// One sentence for a failed io_uring_setup.
pub fn setup_reason(e: &io::Error) -> String {
    match e.raw_os_error() {
        Some(libc::ENOSYS) => "the kernel has no io_uring (Linux < 5.1)".to_string(),
        Some(libc::EPERM) | Some(libc::EACCES) => {
            "io_uring is disabled here (kernel.io_uring_disabled or a seccomp profile in a container)"
                .to_string()
        }
        Some(libc::ENOMEM) => format!(
            "io_uring could not be set up: not enough locked memory for its rings (RLIMIT_MEMLOCK; {e})"
        ),
        _ => format!("io_uring could not be set up ({e})"),
    }
}
