//! Nothing read from an input reaches a terminal raw. Host names, directories, engines and
//! messages come from histories, fio outputs, nodes' results and pod logs, which anyone may
//! have written: an ESC there could clear the screen, retitle the window or move the cursor
//! over a verdict; a CR could print a line over another; a BEL ring; a NUL cut a C reader's
//! string short.
//!
//! So every byte iopscheck prints (stdout, stderr, and the report files of `-o`/`--export`)
//! passes through [`Filter`]: a control character becomes its Unicode picture (ESC `␛`,
//! BEL `␇`, CR `␍`, NUL `␀`: U+2400 plus its code; DEL `␡`), a C1 control (U+0080–U+009F,
//! which some terminals obey as ESC sequences) becomes U+FFFD, and so does an invisible
//! format character (see [`is_hidden`]: the bidi overrides, embeddings, isolates and marks
//! that make a terminal, browser or editor show the rest of a line reversed, as "Trojan
//! Source" does; zero-width spaces and joiners; the byte order mark; the line and paragraph
//! separators some viewers break a line at). Line feeds, tabs and CR LF line ends stay.
//!
//! A string read from a record and printed within a line of text (a host, a directory, an
//! engine) goes through [`line`] as well, which shows its line feeds and tabs too: a line
//! feed in a directory's name must not start a line of its own reading "verdict: PASS". Where the output is coloured, the few colour sequences the tables use
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

/// An invisible character that changes how the text around it is shown: a bidi control
/// (U+061C, U+200E–U+200F, U+202A–U+202E, U+2066–U+2069), a zero-width or invisible format
/// character (soft hyphen, U+180E, U+200B–U+200D, U+2060–U+2064, U+206A–U+206F, U+FEFF,
/// U+FFF9–U+FFFB, the tags U+E0000–U+E007F), or a line or paragraph separator (U+2028,
/// U+2029). Format characters that are seen (the Arabic number signs) are not among them.
pub fn is_hidden(c: char) -> bool {
    matches!(c,
        '\u{ad}'
        | '\u{61c}'
        | '\u{180e}'
        | '\u{200b}'..='\u{200f}'
        | '\u{2028}'..='\u{202e}'
        | '\u{2060}'..='\u{2064}'
        | '\u{2066}'..='\u{206f}'
        | '\u{feff}'
        | '\u{fff9}'..='\u{fffb}'
        | '\u{e0000}'..='\u{e007f}')
}

/// A character the filter shows as U+FFFD: a C1 control or a hidden one ([`is_hidden`]).
fn shown_as_replacement(c: char) -> bool {
    ('\u{80}'..='\u{9f}').contains(&c) || is_hidden(c)
}

/// How many bytes the UTF-8 character led by `b` (a lead byte, 0xC0 or more) takes.
fn utf8_len(b: u8) -> usize {
    if b < 0xe0 {
        2
    } else if b < 0xf0 {
        3
    } else {
        4
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
                // U+0080..=U+009F are 0xC2 0x80..=0xC2 0x9F in UTF-8; the hidden characters
                // start with 0xC2, 0xD8, 0xE1, 0xE2, 0xEF or 0xF3.
                0xc2 | 0xd8 | 0xe1 | 0xe2 | 0xef | 0xf3 => {
                    let n = utf8_len(b);
                    match data.get(i..i + n).map(std::str::from_utf8) {
                        None if !end && data[i + 1..].iter().all(|&c| c & 0xc0 == 0x80) => {
                            return i;
                        }
                        Some(Ok(s)) => {
                            let c = s.chars().next().unwrap_or_default();
                            if shown_as_replacement(c) {
                                push_char(out, '\u{fffd}');
                            } else {
                                out.extend_from_slice(s.as_bytes());
                            }
                            i += n;
                        }
                        _ => {
                            out.push(b);
                            i += 1;
                        }
                    }
                }
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
    // What may need the filter: a control character, or the first byte of a character that
    // may be hidden. Looked for 32 bytes at a time (no early exit: the compiler vectorises
    // it), then byte by byte in a block that has one.
    fn may_need(b: u8) -> bool {
        (b < 0x20 && b != b'\n' && b != b'\t')
            || matches!(b, 0x7f | 0xc2 | 0xd8 | 0xe1 | 0xe2 | 0xef | 0xf3)
    }
    const BLOCK: usize = 32;
    let mut i = 0;
    while i < bytes.len() {
        let end = (i + BLOCK).min(bytes.len());
        if !bytes[i..end].iter().fold(false, |a, &b| a | may_need(b)) {
            i = end;
            continue;
        }
        while i < end {
            let b = bytes[i];
            if !may_need(b) {
                i += 1;
                continue;
            }
            if b < 0x80 {
                return false;
            }
            // plain only where the character is whole here and not one the filter changes
            // ("—", "≥", "µ" are not)
            let n = utf8_len(b);
            let c = bytes
                .get(i..i + n)
                .and_then(|s| std::str::from_utf8(s).ok())
                .and_then(|s| s.chars().next());
            match c {
                Some(c) if !shown_as_replacement(c) => i += n,
                _ => return false,
            }
        }
    }
    true
}

/// `s` with its control characters made visible, line feeds and tabs kept: for a message.
pub fn text(s: &str) -> Cow<'_, str> {
    if !s
        .chars()
        .any(|c| (c.is_control() && !matches!(c, '\n' | '\t')) || is_hidden(c))
    {
        return Cow::Borrowed(s);
    }
    let mut out = Vec::with_capacity(s.len() + 8);
    let mut f = Filter::new(false);
    f.feed(s.as_bytes(), &mut out);
    f.finish(&mut out);
    Cow::Owned(String::from_utf8_lossy(&out).into_owned())
}

/// A string read from an input, to be shown within a line: [`text`], with its line feeds and
/// tabs shown too (`␊`, `␉`), so that it can start no line of its own.
pub fn line(s: &str) -> Cow<'_, str> {
    if !s.chars().any(|c| c.is_control() || is_hidden(c)) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            '\0'..='\x1f' | '\x7f' => out.push(picture(c as u8)),
            c if shown_as_replacement(c) => out.push('\u{fffd}'),
            c => out.push(c),
        }
    }
    Cow::Owned(out)
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
    fn hidden_format_characters_are_shown_and_lines_in_a_field_too() {
        let s = "node\u{202e}SSAP \u{2066}a\u{2069} z\u{200b}w\u{feff} \u{61c}\u{e0041}\u{2028}é ✓ ⚠ ❔\n";
        let want = "node\u{fffd}SSAP \u{fffd}a\u{fffd} z\u{fffd}w\u{fffd} \u{fffd}\u{fffd}\u{fffd}é ✓ ⚠ ❔\n";
        assert_eq!(through(false, &[s.as_bytes()]), want);
        let b = s.as_bytes();
        for cut in 0..b.len() {
            assert_eq!(
                through(false, &[&b[..cut], &b[cut..]]),
                want,
                "cut at {cut}"
            );
        }
        assert_eq!(text(s), want);
        assert!(!is_plain(s.as_bytes()));
        assert_eq!(
            line("/data\nverdict: PASS\t\u{202e}x\r"),
            "/data␊verdict: PASS␉\u{fffd}x␍"
        );
        assert!(matches!(line("/data/é"), Cow::Borrowed(_)));
    }

    #[test]
    fn plain_is_what_the_filter_leaves_as_it_is() {
        let ranges = [
            0x80..0x100,
            0x600..0x620,
            0x1800..0x1810,
            0x2000..0x2100,
            0x2400..0x2430,
            0xfe00..0x10000,
            0xe0000..0xe0090,
        ];
        for c in ranges.into_iter().flatten().filter_map(char::from_u32) {
            let s = format!("a{c}b—≥µ\n");
            let unchanged = through(false, &[s.as_bytes()]) == s;
            assert_eq!(is_plain(s.as_bytes()), unchanged, "U+{:04X}", c as u32);
        }
        // a character cut at the end of a write is left to the filter
        assert!(!is_plain(&"≥".as_bytes()[..2]));
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
