//! fio's outputs and command line: parsers for every format fio has written since 2.1 (JSON,
//! json+, normal text in the old and new layouts, terse), format detection, and the command
//! line that runs a [`Job`] with the installed fio.

use chrono::{DateTime, FixedOffset};

use crate::job::JobShape;
use crate::measure::Measurement;

/// The format an output was recognised as.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Format {
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
}

/// A parsed output.
#[derive(Debug, Clone, PartialEq)]
pub struct FioOutput {
    pub format: Format,
    /// e.g. "3.33" (without the "fio-" prefix).
    pub fio_version: Option<String>,
    /// The output's own timestamp (JSON `timestamp`, text job header date).
    pub timestamp: Option<DateTime<FixedOffset>>,
    pub jobs: Vec<FioJob>,
    /// Things the reader should know: noise skipped, a local time read without its zone, a
    /// precision caveat of an old fio version…
    pub notes: Vec<String>,
}

#[derive(Debug, thiserror::Error, PartialEq)]
pub enum ParseError {
    #[error("empty input: no fio output to read")]
    Empty,
    #[error("not a fio output: {0}")]
    NotFio(String),
    #[error("truncated fio output: {0}")]
    Truncated(String),
    #[error("binary data, not a fio output")]
    Binary,
    #[error("larger than {0} bytes; fio outputs are far smaller")]
    TooLarge(usize),
}

/// Inputs larger than this are refused: fio outputs are far smaller.
pub const MAX_INPUT: usize = 64 << 20;

/// Reads any fio output, detecting its format.
pub fn parse(input: &[u8]) -> Result<FioOutput, ParseError> {
    let _ = input;
    todo!("parser helper")
}

/// The fio arguments that run `job` on `<dir>/<file_prefix>.<jobnum>` with JSON output.
pub fn command_line(
    job: &crate::job::Job,
    dir: &std::path::Path,
    file_prefix: &str,
) -> Vec<String> {
    let _ = (job, dir, file_prefix);
    todo!("parser helper")
}
