//! The terminal the output goes to: its width, and word wrapping to it.

use std::io::IsTerminal;
use std::os::fd::AsFd;

/// The width piped output keeps, so that files and tickets do not change with the terminal.
pub const PIPED_WIDTH: usize = 100;
/// Narrower than this, lines are still wrapped at 80: ssh sessions are at least that wide.
pub const MIN_WIDTH: usize = 80;
/// Wider than this, text gets hard to read.
pub const MAX_WIDTH: usize = 200;

/// The width of the terminal on `fd`, if it is one and says.
fn tty_width(fd: &impl AsFd) -> Option<usize> {
    crate::syscalls::terminal_columns(fd.as_fd()).map(usize::from)
}

/// `COLUMNS` when set to a number.
fn columns_env() -> Option<usize> {
    std::env::var("COLUMNS")
        .ok()
        .and_then(|v| v.trim().parse::<usize>().ok())
        .filter(|&c| c > 0)
}

/// The width to write stdout at: `COLUMNS`, else the terminal's, else [`PIPED_WIDTH`]
/// (piped); kept within [`MIN_WIDTH`]..=[`MAX_WIDTH`].
pub fn stdout_width() -> usize {
    let out = std::io::stdout();
    let w = columns_env()
        .or_else(|| out.is_terminal().then(|| tty_width(&out)).flatten())
        .unwrap_or(PIPED_WIDTH);
    w.clamp(MIN_WIDTH, MAX_WIDTH)
}

/// The same for stderr (notes, warnings, progress).
pub fn stderr_width() -> usize {
    let err = std::io::stderr();
    let w = columns_env()
        .or_else(|| err.is_terminal().then(|| tty_width(&err)).flatten())
        .unwrap_or(PIPED_WIDTH);
    w.clamp(MIN_WIDTH, MAX_WIDTH)
}

/// Word-wraps `text` after `first` (e.g. "warning: ") to `width` columns, continuation lines
/// indented under the text. A word longer than a line (a URL) stays whole on its own line.
/// A label longer than a third of the width or 40 columns (a fleet node's host and directory) gets a line of
/// its own, the text indented by four under it, rather than a column of single words.
pub fn wrap(first: &str, text: &str, width: usize) -> String {
    let indent = first.chars().count();
    let text_len = text
        .split_whitespace()
        .map(|w| w.chars().count() + 1)
        .sum::<usize>();
    if indent > (width / 3).min(40) && !first.trim().is_empty() && indent + text_len > width + 1 {
        return format!("{}\n{}", first.trim_end(), wrap("    ", text, width));
    }
    let mut out = String::from(first);
    let mut col = indent;
    let mut at_start = true;
    for word in text.split_whitespace() {
        let len = word.chars().count();
        if !at_start && col + 1 + len > width {
            out.push('\n');
            out.push_str(&" ".repeat(indent));
            col = indent;
            at_start = true;
        }
        if !at_start {
            out.push(' ');
            col += 1;
        }
        out.push_str(word);
        col += len;
        at_start = false;
    }
    out
}

/// stderr as the progress line's terminal, a few columns narrower than it is: indicatif pads
/// its line to the width, and the `^C` the terminal echoes after a full-width line would wrap
/// onto a new line, leaving the spinner behind when the line is cleared.
#[derive(Debug)]
pub struct ProgressTerm;

impl ProgressTerm {
    fn out(s: &str) -> std::io::Result<()> {
        use std::io::Write;
        std::io::stderr().write_all(s.as_bytes())
    }
}

impl indicatif::TermLike for ProgressTerm {
    fn width(&self) -> u16 {
        let w = tty_width(&std::io::stderr()).unwrap_or(PIPED_WIDTH);
        w.saturating_sub(4).clamp(20, u16::MAX as usize) as u16
    }
    fn move_cursor_up(&self, n: usize) -> std::io::Result<()> {
        if n > 0 {
            Self::out(&format!("\x1b[{n}A"))
        } else {
            Ok(())
        }
    }
    fn move_cursor_down(&self, n: usize) -> std::io::Result<()> {
        if n > 0 {
            Self::out(&format!("\x1b[{n}B"))
        } else {
            Ok(())
        }
    }
    fn move_cursor_right(&self, n: usize) -> std::io::Result<()> {
        if n > 0 {
            Self::out(&format!("\x1b[{n}C"))
        } else {
            Ok(())
        }
    }
    fn move_cursor_left(&self, n: usize) -> std::io::Result<()> {
        if n > 0 {
            Self::out(&format!("\x1b[{n}D"))
        } else {
            Ok(())
        }
    }
    // The line's text (not the cursor moves above) is shown, never obeyed: see printable.rs.
    fn write_line(&self, s: &str) -> std::io::Result<()> {
        Self::out(&format!("{}\n", crate::printable::text(s)))
    }
    fn write_str(&self, s: &str) -> std::io::Result<()> {
        Self::out(&crate::printable::text(s))
    }
    fn clear_line(&self) -> std::io::Result<()> {
        Self::out("\r\x1b[2K")
    }
    fn flush(&self) -> std::io::Result<()> {
        use std::io::Write;
        std::io::stderr().flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrapping_never_breaks_a_word_and_keeps_to_the_width() {
        let text = "the check takes about 3m05s (3 runs of 1m + 2 waits of 2s), plus the final fsync of each run";
        for w in [80, 100, 200] {
            let s = wrap("note: ", text, w);
            assert!(s.lines().all(|l| l.chars().count() <= w), "{w}: {s}");
            let words: Vec<&str> = s.split_whitespace().collect();
            let want: Vec<&str> = "note:"
                .split_whitespace()
                .chain(text.split_whitespace())
                .collect();
            assert_eq!(words, want);
        }
    }

    #[test]
    fn a_long_label_gets_its_own_line_rather_than_a_column_of_words() {
        let label =
            "node-c.prod.example.internal /mnt/very/long/path/to/swimlane/storage posixaio: ";
        let text = "INCONCLUSIVE — no runs of the policy's test to judge (15 runs not counted)";
        let s = wrap(label, text, 80);
        assert!(s.lines().all(|l| l.chars().count() <= 80), "{s}");
        assert_eq!(s.lines().count(), 2, "{s}");
        assert_eq!(s.lines().next(), Some(label.trim_end()));
        // A short label keeps its hanging indent.
        let s = wrap("node-b: ", text, 60);
        assert!(s.lines().nth(1).unwrap().starts_with("        "), "{s}");
    }
}
