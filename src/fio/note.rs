//! What a fio reader says of an output beside its figures ([`super::FioOutput::notes`]): each
//! kind of note a variant holding its facts (which job, which line, how many), never a
//! sentence. An import shows each as a caveat of its input, worded in one place:
//! `evaluate::warnings::reader`. (An unreadable result line is also an error where nothing
//! else reads, so its words are here, with the reader's other errors: [`Unreadable`].)

use std::fmt;

use chrono::FixedOffset;

/// One thing the reader should know about an output.
#[derive(Debug, Clone, PartialEq)]
pub enum Note {
    /// Mail parts (MIME) decoded before reading, by their encodings in the order met.
    MailParts(Vec<MailEncoding>),
    /// A mail body in quoted-printable without its headers, decoded.
    QuotedPrintable,
    /// HTML entities decoded, as from a copied web page.
    HtmlEntities,
    /// Several different fio command lines in the paste (their line numbers): none is the
    /// job's statement.
    CommandLines { lines: Vec<usize> },
    /// Lines of noise skipped before the output (`json`: before a JSON report).
    NoiseBefore { lines: usize, json: bool },
    /// Lines ignored after the JSON report.
    AfterJson { lines: usize },
    /// fio said "terminating on signal".
    Interrupted,
    /// fio's error lines before the results: how many, and the first.
    ErrorLines { count: usize, first: String },
    /// Another fio run begins at this line, without its job results.
    CutRun { line: usize },
    /// JSON reports of different fio runs in one input.
    JsonRuns { count: usize },
    /// JSON reports of one fio run (`--status-interval`): the last was used.
    StatusReports { count: usize },
    /// fio runs one after another in one text.
    TextRuns { count: usize },
    /// Job blocks printed again later by the same fio process: the last print was used.
    PrintedAgain { blocks: usize },
    /// A later JSON report, damaged at this line: the last complete one was used.
    DamagedReport { line: usize },
    /// kubestr's JSON, with fio's report inside.
    Kubestr,
    /// fio's result lines alone, read as this many runs of the job the user states.
    ResultLinesAlone { runs: usize },
    /// fio ≤ 2.20 JSON: `io_bytes` in KiB.
    KibIo,
    /// No `bw_bytes` (fio before 3.2): bandwidth computed from `io_bytes` and runtime.
    NoBwBytes,
    /// A job's `unified_rw_reporting` figure, which mixes reads and writes: not used.
    UnifiedRw { job: String },
    /// A job's `kb_base=1000` in the same option list as these sizes, whose order the JSON
    /// does not keep: fio reads with it only the sizes given after it, so each is unknown.
    KbBaseOrder { job: String, options: Vec<String> },
    /// Clones of a job printed one by one, combined into one run.
    Clones {
        job: String,
        group: u32,
        clones: usize,
    },
    /// Terse lines of one job (name, group): whether clones or runs is not said.
    TerseLines {
        job: String,
        group: u32,
        lines: usize,
    },
    /// What terse output states and what it does not.
    TersePrecision,
    /// Terse lines in a text output, ignored.
    TerseIgnored,
    /// The text had lost its line breaks and was re-split.
    LostLineBreaks,
    /// A result line whose figures could not be read.
    Unreadable(Unreadable),
    /// A group's summary shows a direction no job block of the group has a line for.
    SummaryWithoutBlock {
        line: usize,
        group: u32,
        direction: &'static str,
    },
    /// The text's date (its words) has no time zone: read at this machine's offset.
    NoTimeZone { date: String, offset: FixedOffset },
    /// What text output states; `estimated`: some I/O counts are IOPS × runtime.
    TextPrecision { estimated: bool },
    /// fio before 2.20 printed fractions with an unreliable last digit.
    UnreliableLastDigit,
    /// No "Run status group" summary.
    NoGroupSummary,
    /// A job's binary and decimal bandwidths that disagree, as printed (fio before 3.26).
    MisprintedBandwidth {
        job: String,
        bw: String,
        decimal: String,
    },
}

/// How a mail part was encoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MailEncoding {
    Base64,
    QuotedPrintable,
}

/// A result line whose figures could not be read, at this line, as it was (shortened).
#[derive(Debug, Clone, PartialEq)]
pub struct Unreadable {
    pub line: usize,
    pub text: String,
    /// Where the line stood: in a job block, or outside any.
    pub place: Place,
}

/// Where an unreadable result line stood.
#[derive(Debug, Clone, PartialEq)]
pub enum Place {
    /// In job `job`'s block, a line of `direction`; `other_read`: another line of it was
    /// read.
    Job {
        job: String,
        direction: &'static str,
        other_read: bool,
    },
    /// Outside any job block.
    Outside,
}

/// "line 7: job 'w' has a write line whose figures could not be read (its write figures are
/// missing): '…'": a note, and the error where nothing else reads.
impl fmt::Display for Unreadable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (line, text) = (self.line, &self.text);
        match &self.place {
            Place::Job {
                job,
                direction,
                other_read,
            } => {
                write!(
                    f,
                    "line {line}: job '{job}' has a {direction} line whose figures could not be read ("
                )?;
                if *other_read {
                    f.write_str("another one was read")?;
                } else {
                    write!(f, "its {direction} figures are missing")?;
                }
                write!(f, "): '{text}'")
            }
            Place::Outside => write!(
                f,
                "line {line}: a result line outside any job block could not be read: '{text}'"
            ),
        }
    }
}
