//! Re-joining lines that a mail client, a forum or a terminal wrapped.

use super::fields::direction_line;
use super::markers::{begins_line, direction_marker, host_tag};

/// The text's lines as fio wrote them: a line that a mail client, a forum or a terminal wrapped
/// at a fixed width (`write: IOPS=7667, BW=29.0MiB/s` / `(31.4MB/s)(1026MiB/34256msec)`, a
/// header's `iodepth=1` or a date's year on the next line) is joined to the line it continues.
/// Each line keeps the number of the line it started on. Returns whether anything was joined.
///
/// A continuation is a non-blank line that does not begin one of fio's lines, following a
/// line of fio's output at least [`MIN_WRAPPED`] characters long. Where most wrapped lines
/// have exactly the same length, the wrap cut at a fixed column (possibly inside a figure), and
/// those are joined as they were cut; otherwise the wrap was at a space, and one space joins
/// them.
pub(super) fn rejoin(text: &str) -> (Vec<(String, usize)>, bool) {
    let mut physical: Vec<(&str, usize)> = Vec::new();
    for (i, l) in text.split('\n').enumerate() {
        let l = l.strip_suffix('\r').unwrap_or(l);
        // \r inside a line: ETA updates written to a terminal
        for part in l.split('\r') {
            physical.push((part, i + 1));
        }
    }
    // Which lines continue the one before.
    let mut cont = vec![false; physical.len()];
    let mut in_output = false;
    // The line being joined so far: a line wrapped more than once (a job's header at 40
    // columns takes four) is incomplete until its last piece.
    let mut logical = String::new();
    // Text reflowed at a narrow width (a chat, a mail at 40–100 columns): its longest line is
    // the width, and a line was broken there when the next line's first word would not have
    // fitted after it (as `fold -s` and every word-wrapping tool decide).
    // The space a wrap breaks at stays at the end of the line (`fold -s`) or is dropped (most
    // chat tools): either way the line and the word do not fit together.
    let width = physical
        .iter()
        .map(|(l, _)| l.chars().count())
        .max()
        .unwrap_or(0);
    let narrow = (NARROWEST..=NARROW).contains(&width);
    let broken_before = |prev: &str, next: &str| {
        let used = prev
            .chars()
            .count()
            .max(prev.trim_end().chars().count() + 1);
        let word = next.split_whitespace().next().unwrap_or("").chars().count();
        narrow && used + word >= width
    };
    for i in 0..physical.len() {
        let t = physical[i].0.trim();
        if t.is_empty() {
            logical.clear();
            continue;
        }
        if begins_line(t) {
            in_output = true;
            logical = t.to_string();
            continue;
        }
        if in_output && i > 0 {
            let prev = physical[i - 1].0;
            if !prev.trim().is_empty()
                && (prev.trim_end().chars().count() >= MIN_WRAPPED
                    || incomplete(logical.trim())
                    || broken_before(prev, t))
            {
                cont[i] = true;
                logical.push(' ');
                logical.push_str(t);
                continue;
            }
        }
        logical = t.to_string();
    }
    if !cont.iter().any(|&c| c) {
        return (
            physical
                .into_iter()
                .map(|(l, n)| (l.to_string(), n))
                .collect(),
            false,
        );
    }
    // The wrap width: the most common length of a wrapped line, when most share it.
    let mut lengths: Vec<usize> = Vec::new();
    for i in 0..physical.len() {
        if cont[i] {
            lengths.push(physical[i - 1].0.chars().count());
        }
    }
    let mut counts: std::collections::BTreeMap<usize, usize> = Default::default();
    for &l in &lengths {
        *counts.entry(l).or_default() += 1;
    }
    let (width, n) = counts
        .iter()
        .max_by_key(|(l, n)| (**n, **l))
        .map(|(l, n)| (*l, *n))
        .unwrap_or((0, 0));
    let fixed = n >= 2 && n * 10 >= lengths.len() * 8;
    // One wrapped line only: it was cut at a column when it is the text's longest and the cut
    // falls inside a `key=value` (a space there would split a figure).
    let longest = physical
        .iter()
        .map(|(l, _)| l.chars().count())
        .max()
        .unwrap_or(0);
    let inside_value = |prev: &str, next: &str| {
        let last = prev.rsplit(' ').next().unwrap_or("");
        let first = next.split([' ', ',']).next().unwrap_or("");
        let word = |c: char| c.is_ascii_alphanumeric() || c == '.';
        let open = !last.is_empty() && !last.ends_with([',', ':', ')', ']', ';']);
        // `iodepth` / `=1`, `iodepth=` / `1`
        next.starts_with('=') || last.ends_with('=')
            // `ioengine=posix` / `aio,`
            || (open && last.contains('=') && next.starts_with(word))
            // `…, iodep` / `th=1`
            || (open
                && last.chars().all(|c| c.is_ascii_alphabetic() || c == '_')
                && prev.trim_end_matches(last).ends_with(", ")
                && first.contains('=')
                && first.starts_with(|c: char| c.is_ascii_alphabetic()))
    };
    let mut out: Vec<(String, usize)> = Vec::new();
    for (i, (l, no)) in physical.iter().enumerate() {
        if cont[i]
            && let Some(last) = out.last_mut()
        {
            // the length of the physical line just before, not of what was joined so far
            let prev = physical[i - 1].0;
            let len = prev.chars().count();
            let cut_at_column = if fixed {
                len == width
            } else {
                len == longest && inside_value(prev, l)
            };
            if cut_at_column {
                last.0.push_str(l);
            } else {
                let kept = last.0.trim_end().len();
                last.0.truncate(kept);
                last.0.push(' ');
                last.0.push_str(l.trim_start());
            }
            continue;
        }
        out.push((l.to_string(), *no));
    }
    (out, true)
}

/// Lines shorter than this are never taken as wrapped by length alone: wraps happen at 60
/// columns or more, narrower ones are found by the width of the whole text.
pub(super) const MIN_WRAPPED: usize = 40;

/// The narrowest and widest reflow read by the text's width: fio's own lines (a job's
/// header, `(g=0): rw=…, bs=(R) …`) are wider than [`NARROW`].
const NARROWEST: usize = 30;
const NARROW: usize = 100;

/// A line of fio's that cannot be whole: a direction line whose figures do not read, a job's
/// header line without its `iodepth=`.
fn incomplete(t: &str) -> bool {
    let t = host_tag(t).map_or(t, |(_, r)| r);
    (direction_marker(t).is_some() && direction_line(t).is_none())
        || (t.contains(": (g=") && !t.contains("iodepth="))
        // a job's results header cut before its date's year (`err= 0: pid=…: Mon Nov 30 …`)
        || (t.contains(": (groupid=")
            && (!t.contains("err=")
                || (t.contains("pid=")
                    && !t
                        .rsplit(' ')
                        .next()
                        .is_some_and(|y| y.len() == 4 && y.bytes().all(|b| b.is_ascii_digit())))))
}
