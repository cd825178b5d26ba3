//! The psync back end: `pwrite`/`pread` in the worker thread (fio's psync, §4.3). Every I/O
//! completes inside `submit`, so there is no submission latency; syncs are fsync/fdatasync.

use std::io;
use std::os::fd::RawFd;

use super::sys;
use super::timed::{IoPath, Req, SyncKind};
use crate::measure::Direction;

pub struct Psync {
    fd: RawFd,
}

impl Psync {
    pub fn new(fd: RawFd) -> Psync {
        Psync { fd }
    }
}

impl IoPath for Psync {
    const ASYNC: bool = false;

    #[inline]
    fn submit(&mut self, req: &Req) -> io::Result<Option<i64>> {
        loop {
            // SAFETY: the loop hands us a buffer of at least `len` bytes that it does not touch
            // until this returns.
            let r = unsafe {
                match req.dir {
                    Direction::Write => libc::pwrite(
                        self.fd,
                        req.buf.cast(),
                        req.len as usize,
                        req.offset as libc::off_t,
                    ),
                    Direction::Read => libc::pread(
                        self.fd,
                        req.buf.cast(),
                        req.len as usize,
                        req.offset as libc::off_t,
                    ),
                }
            };
            if r >= 0 {
                return Ok(Some(r as i64));
            }
            let e = sys::errno();
            if e != libc::EINTR {
                return Ok(Some(-(e as i64)));
            }
        }
    }

    fn reap(&mut self, _min: usize, _max: usize, _out: &mut Vec<(u32, i64)>) -> io::Result<()> {
        // Nothing is ever queued.
        Ok(())
    }

    fn sync(&mut self, kind: SyncKind) -> io::Result<()> {
        sys::fsync(self.fd, kind == SyncKind::Fdatasync)
    }
}
