//! The libaio back end: Linux native AIO through raw system calls (io_setup, io_submit,
//! io_getevents, io_destroy), with the `iocb`/`io_event` layouts of linux/aio_abi.h. One
//! io_submit per I/O, and io_getevents(min, max) with the loop's bounds: one completion per
//! call while the queue is full, as fio's libaio engine with its defaults. Syncs are plain fsync/fdatasync once the queue is empty (fio does the
//! same: IOCB_CMD_FSYNC is refused by many filesystems).
//!
//! Native AIO is only asynchronous with O_DIRECT; on buffered files io_submit does the copy
//! itself, which is also what fio measures.

use std::io;
use std::os::fd::RawFd;
use std::ptr;

use super::sys;
use super::timed::{IoPath, Req, SyncKind};
use crate::measure::Direction;

const IOCB_CMD_PREAD: u16 = 0;
const IOCB_CMD_PWRITE: u16 = 1;

/// `struct iocb` from linux/aio_abi.h (64 bytes). `aio_key` and `aio_rw_flags` swap places on
/// big-endian machines.
#[repr(C)]
#[derive(Clone, Copy)]
struct Iocb {
    aio_data: u64,
    #[cfg(target_endian = "little")]
    aio_key: u32,
    #[cfg(target_endian = "little")]
    aio_rw_flags: i32,
    #[cfg(target_endian = "big")]
    aio_rw_flags: i32,
    #[cfg(target_endian = "big")]
    aio_key: u32,
    aio_lio_opcode: u16,
    aio_reqprio: i16,
    aio_fildes: u32,
    aio_buf: u64,
    aio_nbytes: u64,
    aio_offset: i64,
    aio_reserved2: u64,
    aio_flags: u32,
    aio_resfd: u32,
}

/// `struct io_event` from linux/aio_abi.h.
#[repr(C)]
#[derive(Clone, Copy, Default)]
struct IoEvent {
    data: u64,
    obj: u64,
    res: i64,
    res2: i64,
}

const _: () = assert!(std::mem::size_of::<Iocb>() == 64);
const _: () = assert!(std::mem::size_of::<IoEvent>() == 32);

pub struct Libaio {
    fd: RawFd,
    ctx: libc::c_ulong,
    iocbs: Box<[Iocb]>,
    events: Box<[IoEvent]>,
    inflight: usize,
}

impl Libaio {
    pub fn new(fd: RawFd, depth: usize) -> io::Result<Libaio> {
        let mut ctx: libc::c_ulong = 0;
        // SAFETY: io_setup writes the new context id into `ctx`.
        let r = unsafe { libc::syscall(libc::SYS_io_setup, depth as libc::c_long, &mut ctx) };
        if r < 0 {
            return Err(io::Error::last_os_error());
        }
        let blank = Iocb {
            aio_data: 0,
            aio_key: 0,
            aio_rw_flags: 0,
            aio_lio_opcode: 0,
            aio_reqprio: 0,
            aio_fildes: fd as u32,
            aio_buf: 0,
            aio_nbytes: 0,
            aio_offset: 0,
            aio_reserved2: 0,
            aio_flags: 0,
            aio_resfd: 0,
        };
        Ok(Libaio {
            fd,
            ctx,
            iocbs: vec![blank; depth].into_boxed_slice(),
            events: vec![IoEvent::default(); depth].into_boxed_slice(),
            inflight: 0,
        })
    }
}

impl IoPath for Libaio {
    const ASYNC: bool = true;

    #[inline]
    fn submit(&mut self, req: &Req) -> io::Result<Option<i64>> {
        let cb = &mut self.iocbs[req.tag as usize];
        cb.aio_data = req.tag as u64;
        cb.aio_lio_opcode = match req.dir {
            Direction::Write => IOCB_CMD_PWRITE,
            Direction::Read => IOCB_CMD_PREAD,
        };
        cb.aio_buf = req.buf as u64;
        cb.aio_nbytes = req.len as u64;
        cb.aio_offset = req.offset as i64;
        let list = [cb as *mut Iocb];
        loop {
            // SAFETY: one valid iocb that stays put until its completion is reaped.
            let r = unsafe {
                libc::syscall(
                    libc::SYS_io_submit,
                    self.ctx,
                    1 as libc::c_long,
                    list.as_ptr(),
                )
            };
            if r == 1 {
                self.inflight += 1;
                return Ok(None);
            }
            let e = if r < 0 { sys::errno() } else { libc::EAGAIN };
            if e != libc::EINTR {
                return Err(io::Error::from_raw_os_error(e));
            }
        }
    }

    fn reap(&mut self, min: usize, max: usize, out: &mut Vec<(u32, i64)>) -> io::Result<()> {
        let mut got = 0usize;
        let min = min.min(self.inflight);
        let max = max.clamp(min, self.events.len());
        while got < min {
            // SAFETY: `events` has room for `max` ≤ len events; no timeout = block until
            // `min - got` have completed.
            let r = unsafe {
                libc::syscall(
                    libc::SYS_io_getevents,
                    self.ctx,
                    (min - got) as libc::c_long,
                    (max - got) as libc::c_long,
                    self.events.as_mut_ptr(),
                    ptr::null_mut::<libc::timespec>(),
                )
            };
            if r < 0 {
                let e = sys::errno();
                if e == libc::EINTR {
                    continue;
                }
                return Err(io::Error::from_raw_os_error(e));
            }
            for ev in &self.events[..r as usize] {
                out.push((ev.data as u32, ev.res));
            }
            got += r as usize;
            self.inflight -= r as usize;
        }
        Ok(())
    }

    fn sync(&mut self, kind: SyncKind) -> io::Result<()> {
        sys::fsync(self.fd, kind == SyncKind::Fdatasync)
    }
}

impl Drop for Libaio {
    fn drop(&mut self) {
        // io_destroy waits for requests still in flight before it returns.
        // SAFETY: our own context.
        unsafe {
            libc::syscall(libc::SYS_io_destroy, self.ctx);
        }
    }
}
