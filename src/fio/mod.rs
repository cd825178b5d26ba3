//! fio's outputs and command line: parsers for every format fio has written since 2.1 (JSON,
//! json+, normal text in the old and new layouts, terse), format detection, and the command
//! line that runs a [`Job`](crate::job::Job) with the installed fio.
//!
//! What each format yields (see [`crate::measure::BwBasis`]):
//!
//! | format | bandwidth | IOPS | I/O count |
//! |---|---|---|---|
//! | JSON ≥ 2.21, json+ | exact: `bw_bytes`, or `io_bytes` × 1000 / runtime as fio computes it | fio's float | `total_ios`, exact |
//! | JSON ≤ 2.20 | from `io_bytes` in KiB: exact when the block size is a whole number of KiB, else `Printed` | fio's value | `total_ios`; fio 2.1 has none: bytes ÷ bs or IOPS × runtime |
//! | text | `Printed`: the binary `BW=` figure; `bw_mb_s_printed` = the decimal one in parentheses | as printed (`69.5k`) | the `issued` line when present, else IOPS × runtime (estimate) |
//! | terse | `Printed`: fio's truncated KiB/s integer × 1024 | truncated integer | IOPS × runtime (estimate) |
//!
//! One fio run is one run: a paste of several runs keeps each apart
//! ([`FioJob::invocation`]), a block that repeats an earlier one is marked
//! ([`FioJob::repeat_of`]), and clones are combined only within one run whose group line is
//! in the input ([`combine_clones`]).

mod clones;
mod cmdline;
mod concurrent;
mod disk;
mod identity;
mod identity_key;
pub mod installed;
mod json;
pub mod note;
mod num;
mod options;
mod paste;
mod terse;
mod text;

use chrono::{DateTime, FixedOffset};

pub use clones::combine as combine_clones;
pub use cmdline::{command_line_by_descriptor, customer_command};
pub use concurrent::{Alongside, alongside};
pub use identity::RunIdentity;
pub use identity_key::IdentityKey;
pub use note::Note;
pub use paste::StatedCommand;

use crate::job::{JobShape, Rw};
use crate::measure::Measurement;

/// The format an output was recognised as.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum FioFormat {
    Json,
    /// json+ (JSON with `clat_ns.bins`).
    JsonPlus,
    Text,
    Terse,
}

/// One job block of an output (one `jobs[]` entry, one text job block, one terse line).
#[derive(Debug, Clone, PartialEq)]
pub struct FioJob {
    pub name: String,
    pub groupid: u32,
    /// What the output says about the job; unknown fields stay None.
    pub shape: JobShape,
    pub measurement: Measurement,
    /// fio's `err=` for the job (0 = ok).
    pub error: i32,
    /// Why this block is not one job's test though it has figures (text: `group_reporting`
    /// over several job definitions); such a block is never given one shape.
    pub mixed: Option<String>,
    /// fio's own words for `error`, where the output has them (text: `error=Input/output
    /// error`).
    pub error_text: Option<String>,
    /// Where the block is in the input, for messages: "line 6", "JSON report 1, job 2",
    /// "terse line 3".
    pub place: String,
    /// Which fio run of the input the block belongs to (0, 1, …). A paste may hold several:
    /// text is cut where a run's own lines begin again (the header printed before the run,
    /// `fio-3.33`, `Starting N processes`, a job block after the group summaries), JSON by
    /// report, and every terse line stands alone.
    pub invocation: usize,
    /// That run's own timestamp (JSON `timestamp`, the text block's date), when stated.
    pub timestamp: Option<DateTime<FixedOffset>>,
    /// What names the job's process beyond its figures: text `pid=…`, JSON `job_start` (fio
    /// ≥ 3.36). Two blocks of one process are one run of it.
    pub process: Option<String>,
    /// fio's own accounting of the job's group is part of the same run in the input (text: its
    /// `Run status group N` line; JSON: every job of one report), so numjobs clones printed
    /// one by one may be combined as that accounting combines them.
    pub grouped: bool,
    /// The block repeats an earlier one of the input (the same run pasted or given twice):
    /// where that one is. It is never counted again.
    pub repeat_of: Option<String>,
    /// The syncs (fsync, fdatasync) the job issued while it ran, as the output counts them
    /// (text: the fourth `issued rwts` column; JSON: the `sync` object), as the least and the
    /// most the count allows: fio 3.4–3.16 also counted the end fsync, one per job's file, so
    /// there a count of n is n − jobs to n syncs during the run. None where the output has no
    /// count (terse, text before fio 3.4, JSON without `sync`): unknown, never 0.
    pub syncs: Option<(u64, u64)>,
    /// The I/O counts are fio's own (JSON `total_ios`, the text `issued` line), not estimated
    /// from the IOPS and the runtime.
    pub ios_counted: bool,
    /// fio's I/O depth distribution (`IO depths : 1=…%, 2=…`, terse's seven fields after
    /// ctx/majf/minf): the share (%) of I/Os issued while the job had 1, 2–3, 4–7, 8–15,
    /// 16–31, 32–63 and 64 or more I/Os in flight ([`DEPTH_BUCKETS`]). None where the output
    /// does not state it.
    pub depths: Option<[f64; 7]>,
    /// Whether the job waited for every job before it in the job file to end before it
    /// started (fio's `stonewall`, alias `wait_for_previous`), where the output states it
    /// (a JSON job option); fio 3.33 does not list it, text and terse never (None: unknown).
    pub stonewall: Option<bool>,
    /// When the job ran, in ms since the epoch: JSON `job_start` (fio ≥ 3.36) to that plus
    /// its `job_runtime`. None where the output does not state both.
    pub window_ms: Option<(u64, u64)>,
}

/// The least depth of each bucket of fio's I/O depth distribution (`io_u_mark_depth()`: the
/// label is the bucket's lower bound, `>=64` the last).
pub const DEPTH_BUCKETS: [u32; 7] = [1, 2, 4, 8, 16, 32, 64];

/// The I/O depth distribution from its seven printed shares (`3.1%`, `1=3.1%`, `>=64=0.0%`),
/// None unless all seven read as shares from 0 to 100.
pub(crate) fn depth_shares<'a>(fields: impl IntoIterator<Item = &'a str>) -> Option<[f64; 7]> {
    let mut out = [0.0; 7];
    let mut n = 0;
    for f in fields {
        if n == 7 {
            return None;
        }
        let v = f.trim();
        let v = v.rsplit_once('=').map_or(v, |(_, v)| v);
        let v: f64 = v.trim().trim_end_matches('%').parse().ok()?;
        if !(0.0..=100.0).contains(&v) {
            return None;
        }
        out[n] = v;
        n += 1;
    }
    (n == 7).then_some(out)
}

impl FioJob {
    /// A job block with what only some formats state left unknown: one run of its own, not
    /// covered by a group line.
    pub fn new(
        name: String,
        groupid: u32,
        shape: JobShape,
        measurement: Measurement,
        error: i32,
    ) -> FioJob {
        FioJob {
            name,
            groupid,
            shape,
            measurement,
            error,
            mixed: None,
            error_text: None,
            place: String::new(),
            invocation: 0,
            timestamp: None,
            process: None,
            grouped: false,
            repeat_of: None,
            syncs: None,
            ios_counted: false,
            depths: None,
            stonewall: None,
            window_ms: None,
        }
    }

    /// fio's error for the job in words: "err=5, Input/output error". None when it ran
    /// without one.
    pub fn error_words(&self) -> Option<String> {
        if self.error == 0 {
            return None;
        }
        let words = self.error_text.clone().or_else(|| {
            // fio's errors are errno values (td_verror); outside errno's range, fio's own.
            (1..4096).contains(&self.error).then(|| {
                let e = std::io::Error::from_raw_os_error(self.error).to_string();
                e.split(" (os error").next().unwrap_or(&e).to_string()
            })
        });
        Some(match words {
            Some(w) if !w.starts_with("Unknown error") => format!("err={}, {w}", self.error),
            _ => format!("err={}", self.error),
        })
    }

    /// The same block as `other`, figure for figure, of the same process where one is named.
    pub fn same_run(&self, other: &FioJob) -> bool {
        self.name == other.name
            && self.groupid == other.groupid
            && self.error == other.error
            && self.process == other.process
            && self.shape == other.shape
            && self.measurement == other.measurement
            && self.mixed == other.mixed
    }
}

/// The syncs a job issued while it ran, from the count an output states: fio 3.4–3.16 (and an
/// output that does not state its version) may have counted the end fsync too, once per job.
pub(crate) fn syncs_in_run(count: u64, version: Option<&str>, jobs: u32) -> (u64, u64) {
    let end_counted = version
        .and_then(num::version_tuple)
        .is_none_or(|v| ((3, 4)..(3, 17)).contains(&v));
    let least = if end_counted {
        count.saturating_sub(u64::from(jobs.max(1)))
    } else {
        count
    };
    (least, count)
}

/// Marks every block that repeats an earlier one (the same run given twice in one input:
/// a text pasted again, a JSON report or a `jobs[]` entry repeated, a terse line twice).
fn mark_repeats(out: &mut FioOutput) {
    // By everything `same_run` compares, written out once per block: linear in the input.
    let mut first: std::collections::HashMap<String, usize> = Default::default();
    for j in 0..out.jobs.len() {
        let b = &out.jobs[j];
        let key = format!(
            "{:?}",
            (
                &b.name,
                b.groupid,
                b.error,
                &b.process,
                &b.shape,
                &b.measurement,
                &b.mixed
            )
        );
        match first.get(&key) {
            Some(&e) if out.jobs[e].same_run(b) => {
                let e = &out.jobs[e];
                out.jobs[j].repeat_of = Some(format!("the block at {} ({})", e.place, e.name));
            }
            _ => {
                first.insert(key, j);
            }
        }
    }
}

/// A parsed output.
#[derive(Debug, Clone, PartialEq)]
pub struct FioOutput {
    pub format: FioFormat,
    /// e.g. "3.33" (without the "fio-" prefix).
    pub fio_version: Option<String>,
    /// The output's own timestamp (JSON `timestamp`, text job header date).
    pub timestamp: Option<DateTime<FixedOffset>>,
    pub jobs: Vec<FioJob>,
    /// Things the reader should know: noise skipped, a local time read without its zone, a
    /// precision caveat of an old fio version…
    pub notes: Vec<Note>,
    /// The fio command line pasted with the output: the customer's statement of the job.
    pub command: Option<StatedCommand>,
}

impl FioOutput {
    /// This output with the next fio run's of the same input after it: its jobs after these,
    /// the first version and time stated, each note once.
    pub(crate) fn followed_by(mut self, run: FioOutput) -> FioOutput {
        self.fio_version = self.fio_version.or(run.fio_version);
        self.timestamp = self.timestamp.or(run.timestamp);
        self.jobs.extend(run.jobs);
        for n in run.notes {
            if !self.notes.contains(&n) {
                self.notes.push(n);
            }
        }
        self
    }
}

/// How [`parse_with`] reads what an output leaves out.
#[derive(Debug, Clone, Copy, Default)]
pub struct ParseOptions {
    /// fio's result lines alone (`write: IOPS=…`, what `fio … | grep write` leaves) are read
    /// as one job each: the caller states the job they come from (`--assume-job`). Without
    /// it they are refused, naming what is missing.
    pub result_lines_alone: bool,
}

/// The name given to a job read from its result lines alone.
pub const RESULT_LINES_ONLY: &str = "result lines only";

#[derive(Debug, thiserror::Error, PartialEq)]
pub enum ParseError {
    #[error("empty input: no fio output to read")]
    Empty,
    #[error("not a fio output: {0}")]
    NotFio(String),
    #[error("fio output with a figure that cannot be read: {0}")]
    Unreadable(String),
    #[error("truncated fio output: {0}")]
    Truncated(String),
    #[error("binary data, not a fio output")]
    Binary,
    #[error("larger than {0} bytes; fio outputs are far smaller")]
    TooLarge(usize),
    /// A paste that lacks what a verdict needs: where, what is missing, what to ask for.
    #[error("{0}")]
    Lacking(String),
}

/// The largest input [`parse`] reads (64 MiB). fio outputs are kilobytes; a caller reading a
/// file or stdin should stop at `MAX_INPUT + 1` bytes and pass what it has, so that the
/// refusal costs bounded memory.
pub const MAX_INPUT: usize = 64 << 20;

/// Reads any fio output, detecting its format: JSON or json+ (fio 2.1 → 3.4x, noise before and
/// after allowed), normal text (old and new layouts, also when its line breaks were lost) or
/// terse (v2–v5). Never panics; every failure is a [`ParseError`].
pub fn parse(input: &[u8]) -> Result<FioOutput, ParseError> {
    parse_with(input, ParseOptions::default())
}

/// [`parse`], with what the medium did to the paste undone first (a mail's quoted-printable
/// and base64 parts, HTML entities, markdown; each said in a note), and a fio command line in
/// the paste read as the job's statement ([`FioOutput::command`]).
pub fn parse_with(input: &[u8], opts: ParseOptions) -> Result<FioOutput, ParseError> {
    if input.len() > MAX_INPUT {
        return Err(ParseError::TooLarge(MAX_INPUT));
    }
    let (text, medium) = paste::unwrap(decode(input)?);
    let text = unquote(text);
    if text.trim().is_empty() {
        return Err(ParseError::Empty);
    }
    if let Some(line) = paste::kubestr_summary(&text) {
        return Err(ParseError::Lacking(format!(
            "line {line}: kubestr's text summary: it states IOPS and KiB/s but not how long the run lasted, how many I/Os it made, its engine or how it ended, so no verdict can rest on it; ask the customer for `kubestr fio -o json` (fio's own JSON is inside it)"
        )));
    }
    let command = paste::stated_command(&text);
    let mut out = match parse_text(&text) {
        Err(ParseError::Unreadable(e)) if e.contains(NO_JOB_BLOCK) => {
            if opts.result_lines_alone {
                let (with_headers, n) = text::with_headers_for_result_lines(&text);
                let mut out = parse_text(&with_headers)?;
                out.notes.push(Note::ResultLinesAlone { runs: n });
                out
            } else {
                return Err(ParseError::Lacking(format!(
                    "{e}; the job's name, its error status (err=) and its options are missing; ask the customer for fio's whole output (not only the lines grep kept), or state the job they ran with --assume-job"
                )));
            }
        }
        r => r?,
    };
    for n in medium.into_iter().rev() {
        out.notes.insert(0, n);
    }
    match command {
        Ok(c) => out.command = c,
        Err(note) => out.notes.push(note),
    }
    Ok(out)
}

/// How the text parser names result lines found without their job block.
const NO_JOB_BLOCK: &str = "without its job block";

fn parse_text(text: &str) -> Result<FioOutput, ParseError> {
    let text = text.to_string();
    let mut json_error = None;
    if let Some(start) = json::find_start(&text, 0) {
        match json::parse(&text, start) {
            Ok(Some(mut out)) => {
                mark_repeats(&mut out);
                return Ok(out);
            }
            Ok(None) => {}
            Err(e) => {
                let rest = &text[start..];
                if rest.contains("\"jobs\"") || rest.contains("\"fio version\"") {
                    json_error = Some(e);
                }
            }
        }
    }
    match text::parse(&text) {
        Ok(Some(mut out)) => {
            mark_repeats(&mut out);
            return Ok(out);
        }
        Ok(None) => {}
        // a result line that cannot be read: unless the text is terse after all
        Err(e @ ParseError::Unreadable(_)) => {
            return match terse::parse(&text) {
                Ok(Some(mut out)) => {
                    mark_repeats(&mut out);
                    Ok(out)
                }
                _ => Err(e),
            };
        }
        Err(e) => return Err(e),
    }
    if let Some(mut out) = terse::parse(&text)? {
        mark_repeats(&mut out);
        return Ok(out);
    }
    Err(json_error.unwrap_or_else(|| {
        ParseError::NotFio(
            "no fio job results found; expected fio's JSON, text or terse output".into(),
        )
    }))
}

/// Bytes to text: UTF-8 (a BOM is dropped, invalid bytes replaced), or UTF-16 as Windows
/// PowerShell writes redirected output. NUL bytes or mostly non-text bytes: [`ParseError::Binary`].
fn decode(input: &[u8]) -> Result<String, ParseError> {
    if input.is_empty() {
        return Err(ParseError::Empty);
    }
    if let Some(units) = utf16_units(input) {
        let text: String = char::decode_utf16(units)
            .map(|c| c.unwrap_or(char::REPLACEMENT_CHARACTER))
            .collect();
        if text.contains('\0') {
            return Err(ParseError::Binary);
        }
        return Ok(plain_spaces(text));
    }
    if input.contains(&0) {
        return Err(ParseError::Binary);
    }
    let input = input.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(input);
    let text = String::from_utf8_lossy(input);
    let odd = text
        .chars()
        .filter(|&c| {
            c == char::REPLACEMENT_CHARACTER
                || (c.is_control() && !matches!(c, '\n' | '\r' | '\t' | '\x0c' | '\x1b'))
        })
        .count();
    if odd * 10 > text.chars().count() {
        return Err(ParseError::Binary);
    }
    Ok(plain_spaces(text.into_owned()))
}

/// Text copied from a web page or a ticket carries no-break and other Unicode spaces where
/// fio wrote plain ones, and sometimes zero-width characters: back to fio's ASCII spacing.
fn plain_spaces(text: String) -> String {
    let odd_space = |c: char| {
        matches!(
            c,
            '\u{a0}' | '\u{2000}'..='\u{200a}' | '\u{202f}' | '\u{3000}'
        )
    };
    let invisible = |c: char| matches!(c, '\u{200b}'..='\u{200d}' | '\u{2060}' | '\u{feff}');
    if !text.chars().any(|c| odd_space(c) || invisible(c)) {
        return text;
    }
    text.chars()
        .filter(|&c| !invisible(c))
        .map(|c| if odd_space(c) { ' ' } else { c })
        .collect()
}

/// UTF-16 code units when the input is UTF-16 (a BOM, or ASCII text with every other byte 0).
fn utf16_units(input: &[u8]) -> Option<impl Iterator<Item = u16> + '_> {
    let (le, body) = if let Some(b) = input.strip_prefix(b"\xFF\xFE") {
        (true, b)
    } else if let Some(b) = input.strip_prefix(b"\xFE\xFF") {
        (false, b)
    } else {
        if input.len() < 16 || !input.len().is_multiple_of(2) {
            return None;
        }
        let sample = &input[..input.len().min(4096)];
        let pairs = sample.len() / 2;
        let zero_hi = sample
            .chunks_exact(2)
            .filter(|p| p[1] == 0 && p[0] != 0)
            .count();
        let zero_lo = sample
            .chunks_exact(2)
            .filter(|p| p[0] == 0 && p[1] != 0)
            .count();
        if zero_hi * 10 >= pairs * 9 {
            (true, input)
        } else if zero_lo * 10 >= pairs * 9 {
            (false, input)
        } else {
            return None;
        }
    };
    Some(body.chunks_exact(2).map(move |p| {
        if le {
            u16::from_le_bytes([p[0], p[1]])
        } else {
            u16::from_be_bytes([p[0], p[1]])
        }
    }))
}

/// An output quoted in an e-mail reply (`> ` before every line) without the quote marks, when
/// nearly every non-empty line has one.
fn unquote(text: String) -> String {
    let (mut lines, mut quoted) = (0usize, 0usize);
    for l in text.lines().filter(|l| !l.trim().is_empty()) {
        lines += 1;
        quoted += usize::from(l.trim_start().starts_with('>'));
    }
    if quoted == 0 || quoted * 10 < lines * 8 {
        return text;
    }
    let mut out = String::with_capacity(text.len());
    for l in text.split_inclusive('\n') {
        let t = l.trim_start();
        match t.strip_prefix('>') {
            Some(rest) => {
                // nested quotes (`> > `) and the one space after the mark
                let mut rest = rest;
                while let Some(r) = rest.strip_prefix(" >").or_else(|| rest.strip_prefix('>')) {
                    rest = r;
                }
                out.push_str(rest.strip_prefix(' ').unwrap_or(rest));
            }
            None => out.push_str(l),
        }
    }
    out
}

/// Newlines before a position: the line number of what follows, less one.
fn count_lines(s: &str) -> usize {
    s.bytes().filter(|&b| b == b'\n').count()
}

/// The block size that matters for a job: the write size for a write job, the read size for
/// a read job, and for a mixed job (or an unknown rw) the size both share.
fn choose_bs(rw: Option<Rw>, read: Option<u64>, write: Option<u64>) -> Option<u64> {
    match rw {
        Some(rw) if rw.writes() && !rw.reads() => write,
        Some(rw) if rw.reads() && !rw.writes() => read,
        _ => (read == write).then_some(read).flatten(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_and_blank_inputs_are_empty() {
        assert_eq!(parse(b""), Err(ParseError::Empty));
        assert_eq!(parse(b" \n\t\r\n"), Err(ParseError::Empty));
    }

    #[test]
    fn nul_bytes_are_binary() {
        assert_eq!(parse(b"\x7fELF\x02\x01\x01\0\0\0"), Err(ParseError::Binary));
        assert_eq!(
            parse(&[0xff, 0xd8, 0xff, 0xe0, 0x10, 0x4a]),
            Err(ParseError::Binary)
        );
    }

    #[test]
    fn too_large_inputs_are_refused_before_reading() {
        let big = vec![b' '; MAX_INPUT + 1];
        assert_eq!(parse(&big), Err(ParseError::TooLarge(MAX_INPUT)));
    }

    #[test]
    fn prose_is_not_fio() {
        let e = parse(b"Hello, the disk is slow; please check {it}.\n").unwrap_err();
        assert!(matches!(e, ParseError::NotFio(_)), "{e:?}");
    }

    #[test]
    fn utf16_text_from_powershell_is_read() {
        let text = "t: (groupid=0, jobs=1): err= 0: pid=1: Mon Nov 30 08:12:48 2026\r\n  write: IOPS=3994, BW=15.6MiB/s (16.4MB/s)(2449MiB/156935msec)\r\n";
        let mut bytes = vec![0xff, 0xfe];
        for u in text.encode_utf16() {
            bytes.extend_from_slice(&u.to_le_bytes());
        }
        let out = parse(&bytes).unwrap();
        assert_eq!(out.jobs[0].measurement.write.as_ref().unwrap().iops, 3994.0);
        // and without the BOM
        let out = parse(&bytes[2..]).unwrap();
        assert_eq!(out.jobs.len(), 1);
    }

    #[test]
    fn quoted_replies_are_unquoted() {
        let q = "> {\n>   \"a\" : 1\n> }\n> > nested\n";
        assert_eq!(unquote(q.into()), "{\n  \"a\" : 1\n}\nnested\n");
        let not = "x > y\nplain\nmore\n> one\n";
        assert_eq!(unquote(not.into()), not);
    }

    #[test]
    fn the_block_size_follows_the_direction() {
        assert_eq!(
            choose_bs(Some(Rw::RandWrite), Some(8192), Some(4096)),
            Some(4096)
        );
        assert_eq!(
            choose_bs(Some(Rw::Read), Some(8192), Some(4096)),
            Some(8192)
        );
        assert_eq!(choose_bs(Some(Rw::RandRw), Some(8192), Some(4096)), None);
        assert_eq!(choose_bs(None, Some(4096), Some(4096)), Some(4096));
    }
}
