//! Nothing read from an input reaches a terminal raw. Host names, directories, engines and
//! messages come from histories, fio outputs, nodes' results and pod logs, which anyone may
//! have written: an ESC there could clear the screen, retitle the window or move the cursor
//! over a verdict; a CR could print a line over another; a BEL ring; a NUL cut a C reader's
//! string short.
//!
//! So every byte iopscheck prints (stdout, stderr, and the report files of `-o`/`--export`)
//! passes through [`Filter`]: a control character becomes its Unicode picture (ESC `␛`,
//! BEL `␇`, CR `␍`, NUL `␀`: U+2400 plus its code; DEL `␡`), a C1 control (U+0080–U+009F,
//! which some terminals obey as ESC sequences) becomes U+FFFD. Line feeds, tabs and CR LF
//! line ends stay. Where the output is coloured, the few colour sequences the tables use
//! (bold, red, green, yellow, reset) stay too; an input can do no more with them than colour
//! text, never hide it, move the cursor or write anything else.

use std::borrow::Cow;

/// The colour sequences the tables write (`ESC [ … m`): their parameters.
const COLOURS: [&[u8]; 7] = [b"0", b"31", b"32", b"33", b"1;31", b"1;32", b"1;33"];

/// A stream filter: bytes in, the same text with every control character made visible out.
#[derive(Debug, Default)]
pub struct Filter {
    /// Keep the tables' colour sequences.
    pub colour: bool,
    /// The start of a sequence or a character that the next bytes complete.
    pending: Vec<u8>,
}

/// The picture of a C0 control character or DEL.
fn picture(b: u8) -> char {
    if b == 0x7f {
        '\u{2421}'
    } else {
        char::from_u32(0x2400 + u32::from(b)).unwrap_or('\u{fffd}')
    }
}

fn push_char(out: &mut Vec<u8>, c: char) {
    let mut buf = [0u8; 4];
    out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
}

impl Filter {
    pub fn new(colour: bool) -> Filter {
        Filter {
            colour,
            pending: Vec::new(),
        }
    }

    /// Whether no sequence is held back, waiting for the next bytes.
    pub fn is_idle(&self) -> bool {
        self.pending.is_empty()
    }

    /// Filters `buf` into `out`; the end of a sequence cut by the end of `buf` waits for the
    /// next call (or [`Filter::finish`]).
    pub fn feed(&mut self, buf: &[u8], out: &mut Vec<u8>) {
        let mut data = std::mem::take(&mut self.pending);
        data.extend_from_slice(buf);
        let rest = self.run(&data, out, false);
        self.pending = data[rest..].to_vec();
    }

    /// What is left of a cut sequence, filtered as it stands.
    pub fn finish(&mut self, out: &mut Vec<u8>) {
        let data = std::mem::take(&mut self.pending);
        self.run(&data, out, true);
    }

    /// Filters `data` into `out`; returns where a sequence the data cuts short begins (its
    /// length when none does, or at the `end`).
    fn run(&self, data: &[u8], out: &mut Vec<u8>, end: bool) -> usize {
        let mut i = 0;
        while i < data.len() {
            let b = data[i];
            match b {
                b'\n' | b'\t' => {
                    out.push(b);
                    i += 1;
                }
                b'\r' => match data.get(i + 1) {
                    Some(b'\n') => {
                        out.extend_from_slice(b"\r\n");
                        i += 2;
                    }
                    None if !end => return i,
                    _ => {
                        push_char(out, picture(b));
                        i += 1;
                    }
                },
                0x1b if self.colour => match colour_at(&data[i..]) {
                    Colour::Is(n) => {
                        out.extend_from_slice(&data[i..i + n]);
                        i += n;
                    }
                    Colour::Cut if !end => return i,
                    _ => {
                        push_char(out, picture(b));
                        i += 1;
                    }
                },
                0..0x20 | 0x7f => {
                    push_char(out, picture(b));
                    i += 1;
                }
                // U+0080..=U+009F are 0xC2 0x80..=0xC2 0x9F in UTF-8.
                0xc2 => match data.get(i + 1) {
                    Some(0x80..=0x9f) => {
                        push_char(out, '\u{fffd}');
                        i += 2;
                    }
                    None if !end => return i,
                    _ => {
                        out.push(b);
                        i += 1;
                    }
                },
                _ => {
                    out.push(b);
                    i += 1;
                }
            }
        }
        data.len()
    }
}

enum Colour {
    /// One of the tables' colour sequences, of this many bytes.
    Is(usize),
    /// The start of one, cut by the end of the data.
    Cut,
    No,
}

fn colour_at(data: &[u8]) -> Colour {
    for c in COLOURS {
        let want = [b"\x1b[".as_slice(), c, b"m"].concat();
        if data.starts_with(&want) {
            return Colour::Is(want.len());
        }
        if data.len() < want.len() && want.starts_with(data) {
            return Colour::Cut;
        }
    }
    Colour::No
}

/// Whether `bytes` hold nothing [`Filter`] would change (colour aside): no control character
/// but line feeds and tabs, no C1 control.
pub fn is_plain(bytes: &[u8]) -> bool {
    !bytes
        .iter()
        .any(|&b| (b < 0x20 && b != b'\n' && b != b'\t') || b == 0x7f || b == 0xc2)
}

/// `s` with its control characters made visible, line feeds and tabs kept: for a message.
pub fn text(s: &str) -> Cow<'_, str> {
    if !s
        .chars()
        .any(|c| c.is_control() && !matches!(c, '\n' | '\t'))
    {
        return Cow::Borrowed(s);
    }
    let mut out = Vec::with_capacity(s.len() + 8);
    let mut f = Filter::new(false);
    f.feed(s.as_bytes(), &mut out);
    f.finish(&mut out);
    Cow::Owned(String::from_utf8_lossy(&out).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn through(colour: bool, parts: &[&[u8]]) -> String {
        let mut f = Filter::new(colour);
        let mut out = Vec::new();
        for p in parts {
            f.feed(p, &mut out);
        }
        f.finish(&mut out);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn control_characters_become_pictures_and_lines_tabs_and_crlf_stay() {
        let s = "a\x1b[2Jb\x07c\rd\0e\x7ff\u{9b}g\n\th\r\n";
        assert_eq!(
            through(false, &[s.as_bytes()]),
            "a␛[2Jb␇c␍d␀e␡f\u{fffd}g\n\th\r\n"
        );
        // cut anywhere, the same
        let b = s.as_bytes();
        for cut in 0..b.len() {
            assert_eq!(
                through(false, &[&b[..cut], &b[cut..]]),
                through(false, &[b]),
                "cut at {cut}"
            );
        }
        assert_eq!(text(s), "a␛[2Jb␇c␍d␀e␡f\u{fffd}g\n\th\r\n");
    }

    #[test]
    fn only_the_tables_own_colours_pass_and_only_when_coloured() {
        let ours = "\x1b[1;32mPASS\x1b[0m";
        assert_eq!(through(true, &[ours.as_bytes()]), ours);
        assert_eq!(through(false, &[ours.as_bytes()]), "␛[1;32mPASS␛[0m");
        let b = ours.as_bytes();
        for cut in 0..b.len() {
            assert_eq!(through(true, &[&b[..cut], &b[cut..]]), ours, "cut at {cut}");
        }
        // conceal, clear, a title, a cursor move: never
        for bad in [
            "\x1b[8m",
            "\x1b[2J",
            "\x1b]0;x\x07",
            "\x1b[1A",
            "\x1b[31;8m",
        ] {
            let got = through(true, &[bad.as_bytes()]);
            assert!(!got.contains('\x1b'), "{bad:?} -> {got:?}");
        }
    }
}
