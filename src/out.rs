//! Standard output and error that a reader may close at any time (`| head -1`, `| true`, a
//! logger that died). A closed pipe ends the printing, never the command: what remains to be
//! printed is dropped, and the exit code stays the verdict's (contract.md). Nothing here
//! panics, unlike `println!`, which does on EPIPE. Nothing passes raw that could steer the
//! terminal: every byte goes through [`crate::printable::Filter`].

use std::io::{self, Write};
use std::sync::atomic::{AtomicBool, Ordering};

use crate::printable::Filter;

static STDOUT_CLOSED: AtomicBool = AtomicBool::new(false);
static STDERR_CLOSED: AtomicBool = AtomicBool::new(false);
/// Whether stdout is coloured: the tables' colour sequences pass (see `crate::printable`).
static COLOUR: AtomicBool = AtomicBool::new(false);

/// Says whether stdout is coloured (`Ctx::color`), once, before anything is printed.
pub fn set_colour(colour: bool) {
    COLOUR.store(colour, Ordering::Relaxed);
}

/// Standard output for reports and listings: a closed pipe turns every later write into a
/// no-op. Other errors (a full disk behind `> file`) are returned as they are.
pub fn stdout() -> Sink<io::StdoutLock<'static>> {
    Sink {
        inner: io::stdout().lock(),
        closed: &STDOUT_CLOSED,
        filter: Filter::new(COLOUR.load(Ordering::Relaxed)),
    }
}

/// Ends standard output: what is buffered is written, then the descriptor is pointed at
/// /dev/null, so a reader (`| jq`, a pipe to a logger) has all of it and its end at once,
/// although the command goes on (freeing a test file's blocks can take minutes).
pub fn finish_stdout() {
    let _ = stdout().flush();
    crate::syscalls::stdout_to_null();
}

/// One line on stderr; never fails and never panics.
pub fn err_line(msg: impl std::fmt::Display) {
    let mut e = Sink {
        inner: io::stderr().lock(),
        closed: &STDERR_CLOSED,
        filter: Filter::new(false),
    };
    let _ = writeln!(e, "{msg}");
    let _ = e.flush();
}

pub struct Sink<W: Write> {
    inner: W,
    closed: &'static AtomicBool,
    filter: Filter,
}

impl<W: Write> Sink<W> {
    fn absorb(&self, r: io::Result<usize>, len: usize) -> io::Result<usize> {
        match r {
            Err(e) if e.kind() == io::ErrorKind::BrokenPipe => {
                self.closed.store(true, Ordering::Relaxed);
                Ok(len)
            }
            r => r,
        }
    }
}

impl<W: Write> Write for Sink<W> {
    /// Takes all of `buf` (what the filter holds back waits for the next write or the flush).
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.closed.load(Ordering::Relaxed) {
            return Ok(buf.len());
        }
        // Most of what is printed has nothing to filter: written as it is, with no copy.
        let r = if self.filter.is_idle() && crate::printable::is_plain(buf) {
            self.inner.write_all(buf)
        } else {
            let mut shown = Vec::with_capacity(buf.len() + 16);
            self.filter.feed(buf, &mut shown);
            self.inner.write_all(&shown)
        };
        let r = r.map(|()| buf.len());
        self.absorb(r, buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        if self.closed.load(Ordering::Relaxed) {
            return Ok(());
        }
        let mut rest = Vec::new();
        self.filter.finish(&mut rest);
        let r = self.inner.write_all(&rest);
        self.absorb(r.map(|()| 0), 0)?;
        let r = self.inner.flush().map(|()| 0);
        self.absorb(r, 0).map(drop)
    }
}

impl<W: Write> Drop for Sink<W> {
    fn drop(&mut self) {
        let _ = self.flush();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Closed;
    impl Write for Closed {
        fn write(&mut self, _: &[u8]) -> io::Result<usize> {
            Err(io::ErrorKind::BrokenPipe.into())
        }
        fn flush(&mut self) -> io::Result<()> {
            Err(io::ErrorKind::BrokenPipe.into())
        }
    }

    #[test]
    fn a_closed_pipe_ends_the_printing_without_an_error() {
        static FLAG: AtomicBool = AtomicBool::new(false);
        let mut s = Sink {
            inner: Closed,
            closed: &FLAG,
            filter: Filter::new(false),
        };
        assert!(writeln!(s, "verdict").is_ok());
        assert!(s.flush().is_ok());
        assert!(FLAG.load(Ordering::Relaxed));
    }
}
