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

use super::{FioOutput, Note, ParseError};
use rejoin::rejoin;
use resplit::split_lines;
use state::State;

/// A line of the (re-split) text with the line number it came from.
pub(super) struct TextLine<'a> {
    pub(super) text: &'a str,
    pub(super) no: usize,
}

/// Reads a normal-format output. `Ok(None)`: no fio job block in the text.
///
/// A paste may hold several fio runs (a command run twice, an output quoted again in a
/// reply): each is read on its own, its blocks marked with the run they belong to
/// ([`FioJob::invocation`](crate::fio::FioJob::invocation)), so that clones are combined only
/// within one run. Where a run's results were printed more than once by the same processes
/// (`--status-interval`), the last print is the run's.
pub(super) fn parse(text: &str) -> Result<Option<FioOutput>, ParseError> {
    let (physical, _rejoined) = rejoin(text);
    let (lines, resplit) = split_lines(&physical);
    // Each run: its state and the number of its first line.
    let mut runs: Vec<(State, usize)> = Vec::new();
    let mut st = State::default();
    let mut first_line = 1;
    for line in &lines {
        if st.begins_another_run(line.text) {
            st.close_block();
            runs.push((std::mem::take(&mut st), first_line));
            first_line = line.no;
        }
        st.line(line);
    }
    st.close_block();
    runs.push((st, first_line));

    let all_lines = text.split('\n').count();
    let count = runs.len();
    // Each run's lines end where the next begins (its disk statistics are among them).
    let ends: Vec<usize> = runs
        .iter()
        .skip(1)
        .map(|(_, from)| from.saturating_sub(1))
        .chain([all_lines])
        .collect();
    let mut out: Option<FioOutput> = None;
    let mut cut_runs = Vec::new();
    debug_assert!(physical.windows(2).all(|w| w[0].1 <= w[1].1));
    let mut cursor = 0;
    for (k, (st, from)) in runs.into_iter().enumerate() {
        let last = k + 1 == count;
        if st.blocks.is_empty() {
            if k == 0 {
                if let Some((no, text)) = st.orphan_unreadable.first() {
                    return Err(ParseError::Unreadable(format!(
                        "line {no}: a result line without its job block ('NAME: (groupid=…)'): '{}'",
                        shorten(text)
                    )));
                }
                return Ok(None);
            }
            cut_runs.push(from);
            continue;
        }
        if last
            && let Some(b) = st.blocks.last()
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
        if k == 0 && st.noise_before > 0 {
            notes.push(Note::NoiseBefore {
                lines: st.noise_before,
                json: false,
            });
        }
        if resplit {
            notes.push(Note::LostLineBreaks);
        }
        // The disks' lines as fio wrote them (joined again where a mail client wrapped them):
        // the lines are in order and the runs one after another, so one cursor walks them
        // all once (a filter over every line per run was quadratic in the input).
        let to = ends[k];
        while cursor < physical.len() && physical[cursor].1 < from {
            cursor += 1;
            count_line_visited();
        }
        let start = cursor;
        while cursor < physical.len() && physical[cursor].1 <= to {
            cursor += 1;
            count_line_visited();
        }
        let own: Vec<&str> = physical[start..cursor]
            .iter()
            .map(|(l, _)| l.as_str())
            .collect();
        let disk = crate::fio::disk::from_text(&own.join("\n"));
        let mut run = st.finish(notes)?;
        for j in &mut run.jobs {
            j.invocation = k;
            j.measurement.disk = disk.clone();
        }
        out = Some(match out {
            None => run,
            Some(all) => all.followed_by(run),
        });
    }
    let Some(mut out) = out else {
        return Ok(None);
    };
    for from in cut_runs {
        out.notes.push(Note::CutRun { line: from });
    }
    let runs = out.jobs.iter().map(|j| j.invocation).max().unwrap_or(0) + 1;
    if runs > 1 {
        out.notes.push(Note::TextRuns { count: runs });
    }
    last_print_of_each_process(&mut out);
    Ok(Some(out))
}

#[cfg(test)]
thread_local! {
    /// Lines looked at to gather each run's disk lines (the tests' measure of the work).
    pub(super) static LINES_VISITED: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

fn count_line_visited() {
    #[cfg(test)]
    LINES_VISITED.with(|c| c.set(c.get() + 1));
}

/// A job's results printed more than once by the same process in one text (fio
/// `--status-interval` prints the whole report again and again): the last print is the run's,
/// the earlier ones are left out with a note. A print repeated figure for figure is a repeat,
/// left to [`crate::fio::parse`] to name.
fn last_print_of_each_process(out: &mut FioOutput) {
    let n = out.jobs.len();
    // The last print of each process.
    let mut last: std::collections::HashMap<(&str, u32, &str), usize> = Default::default();
    for (i, j) in out.jobs.iter().enumerate() {
        if let Some(p) = j.process.as_deref() {
            last.insert((j.name.as_str(), j.groupid, p), i);
        }
    }
    let mut superseded = vec![false; n];
    for (i, a) in out.jobs.iter().enumerate() {
        let Some(p) = a.process.as_deref() else {
            continue;
        };
        let b = &out.jobs[last[&(a.name.as_str(), a.groupid, p)]];
        superseded[i] = b.invocation != a.invocation && b.measurement != a.measurement;
    }
    let dropped = superseded.iter().filter(|&&s| s).count();
    if dropped == 0 {
        return;
    }
    let mut i = 0;
    out.jobs.retain(|_| {
        i += 1;
        !superseded[i - 1]
    });
    out.notes.push(Note::PrintedAgain { blocks: dropped });
}

/// fio's result lines alone (what `grep write` leaves of an output): the text with a job
/// header put before each run's lines, so that each is read as one job named
/// [`RESULT_LINES_ONLY`](crate::fio::RESULT_LINES_ONLY), with no error stated. A run
/// begins where a direction comes again (`read:` then `write:` of a mixed job are one run).
/// Returns the text and the number of runs.
pub(in crate::fio) fn with_headers_for_result_lines(text: &str) -> (String, usize) {
    let mut out = String::with_capacity(text.len() + 64);
    let mut runs = 0;
    let mut seen: Vec<markers::Ddir> = Vec::new();
    for l in text.split_inclusive('\n') {
        let t = l.trim();
        if let Some(d) = markers::direction_marker(t) {
            if seen.is_empty() || seen.contains(&d) {
                runs += 1;
                seen.clear();
                out.push_str(&format!(
                    "{}: (groupid=0, jobs=1): err= 0\n",
                    crate::fio::RESULT_LINES_ONLY
                ));
            }
            seen.push(d);
        }
        out.push_str(l);
    }
    (out, runs)
}

/// A line of the input shown in a message: at most 120 characters.
pub(super) fn shorten(t: &str) -> String {
    if t.chars().count() <= 120 {
        t.to_string()
    } else {
        format!("{}…", t.chars().take(119).collect::<String>())
    }
}
