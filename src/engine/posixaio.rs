//! The posixaio back end: glibc's `aio_write`/`aio_read`, reaped as fio's posixaio engine does
//! (fio-semantics.md §4.1): poll `aio_error` over the requests in flight, and when fewer than
//! needed have finished, sleep in `aio_suspend` with no timeout and poll again. Syncs are
//! `aio_fsync(O_SYNC)` (or O_DSYNC for fdatasync), run by glibc's helper thread.
//!
//! glibc runs every request for one descriptor on one helper thread, one after another, so
//! iodepth adds no parallelism on a file; that is what fio measures too, so it is kept.

use std::io;
use std::os::fd::RawFd;
use std::ptr;

use super::sys;
use super::timed::{IoPath, Req, SyncKind};
use crate::measure::Direction;

pub struct PosixAio {
    fd: RawFd,
    /// One control block per queue slot plus one for syncs, at fixed addresses: glibc's helper
    /// thread writes into them while they are in flight, so they are only touched via raw
    /// pointers.
    cbs: *mut libc::aiocb,
    ncbs: usize,
    inflight: Vec<u32>,
    wait: Vec<*const libc::aiocb>,
}

fn blank_cb(fd: RawFd) -> libc::aiocb {
    // SAFETY: aiocb is plain data; all-zero is a valid starting point.
    let mut cb: libc::aiocb = unsafe { std::mem::zeroed() };
    cb.aio_fildes = fd;
    // Zero would mean SIGEV_SIGNAL: fio asks for no notification and polls.
    cb.aio_sigevent.sigev_notify = libc::SIGEV_NONE;
    cb
}

impl PosixAio {
    pub fn new(fd: RawFd, depth: usize) -> PosixAio {
        let ncbs = depth + 1;
        let boxed: Box<[libc::aiocb]> = (0..ncbs).map(|_| blank_cb(fd)).collect();
        PosixAio {
            fd,
            cbs: Box::into_raw(boxed).cast::<libc::aiocb>(),
            ncbs,
            inflight: Vec::with_capacity(depth),
            wait: Vec::with_capacity(depth + 1),
        }
    }

    #[inline]
    fn cb(&self, i: usize) -> *mut libc::aiocb {
        debug_assert!(i < self.ncbs);
        // SAFETY: i < ncbs.
        unsafe { self.cbs.add(i) }
    }

    /// Waits for the sync control block, polling and suspending like the I/O reap.
    fn wait_one(&mut self, cb: *mut libc::aiocb) -> io::Result<isize> {
        loop {
            // SAFETY: cb is one of ours and was submitted.
            let e = unsafe { libc::aio_error(cb) };
            if e == libc::EINPROGRESS {
                let list = [cb as *const libc::aiocb];
                // SAFETY: a one-element list of a submitted control block, no timeout.
                let r = unsafe { libc::aio_suspend(list.as_ptr(), 1, ptr::null()) };
                if r != 0 {
                    let e = sys::errno();
                    if e != libc::EINTR && e != libc::EAGAIN {
                        return Err(io::Error::from_raw_os_error(e));
                    }
                }
                continue;
            }
            if e < 0 {
                return Err(io::Error::last_os_error());
            }
            // SAFETY: the request has finished; aio_return may be called once.
            let r = unsafe { libc::aio_return(cb) };
            if r < 0 {
                return Err(io::Error::from_raw_os_error(e));
            }
            return Ok(r);
        }
    }
}

impl IoPath for PosixAio {
    const ASYNC: bool = true;

    #[inline]
    fn submit(&mut self, req: &Req) -> io::Result<Option<i64>> {
        let cb = self.cb(req.tag as usize);
        // SAFETY: this slot's control block is not in flight (the loop only submits free or
        // completed slots), so writing it races with nobody.
        let r = unsafe {
            (*cb).aio_buf = req.buf.cast();
            (*cb).aio_nbytes = req.len as usize;
            (*cb).aio_offset = req.offset as libc::off_t;
            match req.dir {
                Direction::Write => libc::aio_write(cb),
                Direction::Read => libc::aio_read(cb),
            }
        };
        if r != 0 {
            return Err(io::Error::last_os_error());
        }
        self.inflight.push(req.tag);
        Ok(None)
    }

    /// Takes every finished request it finds, whatever `max` says: fio's posixaio getevents
    /// does the same (it walks all I/Os in flight and ignores its `max`).
    fn reap(&mut self, min: usize, _max: usize, out: &mut Vec<(u32, i64)>) -> io::Result<()> {
        let mut got = 0usize;
        loop {
            self.wait.clear();
            let mut i = 0;
            while i < self.inflight.len() {
                let tag = self.inflight[i];
                let cb = self.cb(tag as usize);
                // SAFETY: a submitted control block of ours.
                let e = unsafe { libc::aio_error(cb) };
                if e == libc::EINPROGRESS {
                    self.wait.push(cb);
                    i += 1;
                    continue;
                }
                if e < 0 {
                    return Err(io::Error::last_os_error());
                }
                // SAFETY: finished; aio_return is called exactly once per request.
                let r = unsafe { libc::aio_return(cb) };
                out.push((tag, if r < 0 { -(e as i64) } else { r as i64 }));
                self.inflight.swap_remove(i);
                got += 1;
            }
            if got >= min || self.inflight.is_empty() {
                return Ok(());
            }
            // SAFETY: every listed control block is in flight; NULL timeout = wait.
            let r = unsafe {
                libc::aio_suspend(self.wait.as_ptr(), self.wait.len() as i32, ptr::null())
            };
            if r != 0 {
                let e = sys::errno();
                if e != libc::EINTR && e != libc::EAGAIN {
                    return Err(io::Error::from_raw_os_error(e));
                }
            }
        }
    }

    fn sync(&mut self, kind: SyncKind) -> io::Result<()> {
        let cb = self.cb(self.ncbs - 1);
        let op = match kind {
            SyncKind::Fsync => libc::O_SYNC,
            SyncKind::Fdatasync => libc::O_DSYNC,
        };
        // SAFETY: the sync block is never in flight here (syncs are waited for at once).
        let r = unsafe {
            *cb = blank_cb(self.fd);
            libc::aio_fsync(op, cb)
        };
        if r != 0 {
            return Err(io::Error::last_os_error());
        }
        self.wait_one(cb).map(|_| ())
    }
}

impl Drop for PosixAio {
    fn drop(&mut self) {
        // glibc writes the result into the control block when a request ends: never free one
        // that is still in flight.
        let mut out = Vec::new();
        while !self.inflight.is_empty() {
            if self.reap(1, usize::MAX, &mut out).is_err() {
                return; // leak the blocks rather than free memory glibc may still write
            }
        }
        // SAFETY: built by Box::into_raw of a boxed slice of ncbs blocks, nothing in flight.
        unsafe {
            drop(Box::from_raw(ptr::slice_from_raw_parts_mut(
                self.cbs, self.ncbs,
            )));
        }
    }
}
