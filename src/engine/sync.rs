//! The sync back end: `read`/`write` at the file's position, as fio's `sync` engine
//! (engines/sync.c, its `ioengine_rw`). fio moves the position with `lseek` in the engine's
//! `prep`, before the I/O's clock starts, and only when its record of the position (the end of
//! the last transfer) is not the next offset: a sequential job seeks once, a random one before
//! each I/O. This back end does the same through [`IoPath::prep`]. Every I/O completes inside
//! `submit`, so there is no submission latency; syncs are fsync/fdatasync.
//!
//! fio's `psync` (pwrite/pread, `psync.rs`) does the same I/O without moving the position;
//! a policy that names `sync` (etcd's published test) runs here.

use std::io;
use std::os::fd::RawFd;

use super::sys;
use super::timed::{IoPath, Req, SyncKind};
use crate::measure::Direction;

pub struct SyncRw {
    fd: RawFd,
    /// Where the descriptor's position is, as far as this back end moved it (fio's
    /// `LAST_POS`); None when unknown (after a failed transfer).
    pos: Option<u64>,
    /// lseek calls made: one per I/O that did not start where the last one ended.
    seeks: u64,
}

impl SyncRw {
    /// The back end on `fd`, starting from the descriptor's current position.
    pub fn new(fd: RawFd) -> SyncRw {
        // SAFETY: lseek with SEEK_CUR and offset 0 only reads the position.
        let at = unsafe { libc::lseek(fd, 0, libc::SEEK_CUR) };
        SyncRw {
            fd,
            pos: u64::try_from(at).ok(),
            seeks: 0,
        }
    }

    /// How many times the position was moved.
    #[cfg(test)]
    pub fn seeks(&self) -> u64 {
        self.seeks
    }

    fn seek_to(&mut self, offset: u64) -> io::Result<()> {
        if self.pos == Some(offset) {
            return Ok(());
        }
        self.seeks += 1;
        let to = libc::off_t::try_from(offset)
            .map_err(|_| io::Error::from_raw_os_error(libc::EINVAL))?;
        // SAFETY: moves the position of a descriptor this back end was given; no memory.
        if unsafe { libc::lseek(self.fd, to, libc::SEEK_SET) } < 0 {
            self.pos = None;
            return Err(io::Error::last_os_error());
        }
        self.pos = Some(offset);
        Ok(())
    }
}

impl IoPath for SyncRw {
    const ASYNC: bool = false;

    #[inline]
    fn prep(&mut self, offset: u64) -> io::Result<()> {
        self.seek_to(offset)
    }

    #[inline]
    fn submit(&mut self, req: &Req) -> io::Result<Option<i64>> {
        // The rest of a short transfer starts where it ended: no seek. Anything else was
        // prepared; this only guards the position.
        self.seek_to(req.offset)?;
        loop {
            // SAFETY: the loop hands us a buffer of at least `len` bytes that it does not touch
            // until this returns.
            let r = unsafe {
                match req.dir {
                    Direction::Write => libc::write(self.fd, req.buf.cast(), req.len as usize),
                    Direction::Read => libc::read(self.fd, req.buf.cast(), req.len as usize),
                }
            };
            if r >= 0 {
                self.pos = Some(req.offset + r as u64);
                return Ok(Some(r as i64));
            }
            let e = sys::errno();
            if e != libc::EINTR {
                self.pos = None;
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Seek, SeekFrom, Write};
    use std::os::fd::AsRawFd;

    fn req(dir: Direction, buf: &mut [u8], offset: u64) -> Req {
        Req {
            tag: 0,
            dir,
            buf: buf.as_mut_ptr(),
            len: buf.len() as u32,
            offset,
        }
    }

    /// Where the descriptor's position is now.
    fn position(f: &mut std::fs::File) -> u64 {
        f.stream_position().unwrap()
    }

    #[test]
    fn it_writes_and_reads_at_the_position_and_seeks_only_where_fio_does() {
        let mut f = tempfile::tempfile().unwrap();
        f.write_all(&[0u8; 8 * 4096]).unwrap();
        f.seek(SeekFrom::Start(0)).unwrap();
        let mut be = SyncRw::new(f.as_raw_fd());

        // Sequential writes from 0: the position is already there after each, as fio's
        // LAST_POS says, so fio's prep makes no lseek; write(2) moves the position (pwrite(2)
        // would not).
        for i in 0..4u8 {
            let offset = u64::from(i) * 4096;
            be.prep(offset).unwrap();
            let mut buf = [i + 1; 4096];
            let r = be.submit(&req(Direction::Write, &mut buf, offset)).unwrap();
            assert_eq!(r, Some(4096));
            assert_eq!(
                position(&mut f),
                offset + 4096,
                "write(2) moved the position"
            );
        }
        assert_eq!(
            be.seeks(),
            0,
            "a sequential pass from the start never seeks"
        );

        // Elsewhere: one lseek, then the write lands there.
        be.prep(6 * 4096).unwrap();
        let mut buf = [9u8; 4096];
        be.submit(&req(Direction::Write, &mut buf, 6 * 4096))
            .unwrap();
        assert_eq!(be.seeks(), 1);
        assert_eq!(position(&mut f), 7 * 4096);

        // A read back: lseek then read(2), which moves the position too.
        be.prep(4096).unwrap();
        let mut back = [0u8; 4096];
        let r = be.submit(&req(Direction::Read, &mut back, 4096)).unwrap();
        assert_eq!(r, Some(4096));
        assert_eq!(back, [2u8; 4096], "the second block as written");
        assert_eq!(be.seeks(), 2);
        assert_eq!(position(&mut f), 2 * 4096);

        // The file holds what was written where it was written.
        let mut all = Vec::new();
        f.seek(SeekFrom::Start(0)).unwrap();
        f.read_to_end(&mut all).unwrap();
        for (block, want) in [
            (0, 1u8),
            (1, 2),
            (2, 3),
            (3, 4),
            (4, 0),
            (5, 0),
            (6, 9),
            (7, 0),
        ] {
            assert!(
                all[block * 4096..(block + 1) * 4096]
                    .iter()
                    .all(|&b| b == want),
                "block {block}"
            );
        }
    }

    #[test]
    fn like_fio_it_trusts_its_own_record_of_the_position() {
        // fio's prep seeks only when LAST_POS differs from the offset; it never asks the
        // kernel. A position moved behind its back is not noticed, which shows that no lseek
        // was made: the write lands at the moved position.
        let mut f = tempfile::tempfile().unwrap();
        f.write_all(&[0u8; 2 * 4096]).unwrap();
        let mut be = SyncRw::new(f.as_raw_fd());
        assert_eq!(
            be.pos,
            Some(2 * 4096),
            "it starts from the descriptor's position"
        );
        be.prep(0).unwrap();
        assert_eq!(be.seeks(), 1);
        let mut buf = [7u8; 4096];
        be.submit(&req(Direction::Write, &mut buf, 0)).unwrap();
        f.seek(SeekFrom::Start(0)).unwrap();
        be.prep(4096).unwrap();
        assert_eq!(
            be.seeks(),
            1,
            "no lseek: its record says the position is 4096"
        );
        be.submit(&req(Direction::Write, &mut buf, 4096)).unwrap();
        let mut all = Vec::new();
        f.seek(SeekFrom::Start(0)).unwrap();
        f.read_to_end(&mut all).unwrap();
        assert!(
            all[4096..].iter().all(|&b| b == 0),
            "the second block untouched"
        );
    }
}
