//! fio's normal (human-readable) output: the old layout (fio ≤ 2.16, `write: io=…, bw=…,
//! iops=…, runt=…`) and the new one (fio ≥ 2.17, `write: IOPS=…, BW=… (…)(…/…msec)`), with the
//! noise customers paste around it, and text that lost its line breaks on the way.
//!
//! Text as customers paste it is read as fio wrote it: lines wrapped by mail clients, forums or
//! terminals (at spaces or at a fixed column) are joined again, quote marks dropped, and fio's
//! client/server text (`<host>` tags, `All clients:`, units without `B/s`) read per host. A
//! result line whose figures cannot be read is never dropped silently. What the text proves
//! about the job (size, numjobs, end fsync by fio version) is in docs/fio-text.md.
//!
//! Every figure here is one fio printed, rounded to 3–4 significant digits: bandwidth is
//! [`BwBasis::Printed`](crate::measure::BwBasis::Printed). The I/O count comes from the
//! `issued` line when there is one (exact), otherwise it is estimated as IOPS × runtime.
//!
//! Where things are — for a new quirk of fio's text, the one file to change:
//!
//! - [`markers`]: the one table of how fio's lines begin (a new kind of line starts here);
//! - [`rejoin`](mod@rejoin): lines wrapped by a mail client or a terminal, joined again;
//! - [`resplit`]: text that lost its line breaks, cut before each marker;
//! - [`state`]: the state machine that reads the lines in order into job blocks;
//! - [`fields`]: the field parsers, one line into its figures (a new layout of a line);
//! - [`assemble`]: the blocks into the output, with the notes on what the text does not
//!   prove (what the text proves about the job);
//! - [`date`]: the job header's date, which has no time zone.

mod assemble;
mod date;
mod fields;
mod markers;
mod rejoin;
mod resplit;
mod state;
#[cfg(test)]
mod tests;

use super::{FioOutput, ParseError};
use rejoin::rejoin;
use resplit::split_lines;
use state::State;

/// A line of the (re-split) text with the line number it came from.
pub(super) struct TextLine<'a> {
    pub(super) text: &'a str,
    pub(super) no: usize,
}

/// Reads a normal-format output. `Ok(None)`: no fio job block in the text.
pub(super) fn parse(text: &str) -> Result<Option<FioOutput>, ParseError> {
    let (physical, _rejoined) = rejoin(text);
    let (lines, resplit) = split_lines(&physical);
    let mut st = State::default();
    for line in &lines {
        st.line(line);
    }
    st.close_block();
    if st.blocks.is_empty() {
        if let Some((no, text)) = st.orphan_unreadable.first() {
            return Err(ParseError::Unreadable(format!(
                "line {no}: a result line that could not be read, and no job block: '{}'",
                shorten(text)
            )));
        }
        return Ok(None);
    }
    if let Some(b) = st.blocks.last()
        && b.dirs.is_empty()
        && b.unreadable.is_empty()
        && b.err == 0
    {
        return Err(ParseError::Truncated(format!(
            "job '{}' has a header but no results: the output is cut after line {}",
            b.name, st.last_line
        )));
    }
    let mut notes = Vec::new();
    if st.noise_before > 0 {
        notes.push(format!(
            "skipped {} line{} of noise before the output",
            st.noise_before,
            if st.noise_before == 1 { "" } else { "s" }
        ));
    }
    if resplit {
        notes.push("the text had lost line breaks; it was re-split on fio's markers (a job name containing spaces may keep only its last word)".into());
    }
    st.finish(notes).map(Some)
}

/// A line of the input shown in a message: at most 120 characters.
pub(super) fn shorten(t: &str) -> String {
    if t.chars().count() <= 120 {
        t.to_string()
    } else {
        format!("{}…", t.chars().take(119).collect::<String>())
    }
}
