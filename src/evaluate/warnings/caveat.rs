//! What an import says of one of its inputs (`Warning::InputCaveat`): the facts, worded here.

use std::fmt;

use super::words::then;

/// A caveat of an imported input.
#[derive(Debug, Clone, PartialEq)]
pub enum Caveat {
    /// What the fio reader says of an output (the precision of text output, a date without a
    /// time zone): `fio::FioOutput::notes`, worded in `warnings/reader.rs`.
    Reader(crate::fio::Note),
    /// The output has no timestamp: the file's modification time places the run, or (without
    /// one) the time of the import; the run counts towards no day of evidence.
    NoTimestamp { file_time: bool },
    /// The job's shape was assumed with `--assume-job SPEC`.
    Assumed { spec: String },
    /// A pasted fio command line was read as the job's statement; `complete`: it names no job
    /// file (whose options the paste would not hold).
    CommandLine { line: usize, complete: bool },
    /// The output states `field` otherwise than the statement beside it: the output's value,
    /// then the statement's; the output's is used.
    StatedOtherwise {
        by: Statement,
        field: String,
        output: String,
        given: String,
    },
    /// The output's figures contradict the statement beside it.
    Contradicted { by: Statement, figures: Figures },
}

/// Who states a job beside an output.
#[derive(Debug, Clone, PartialEq)]
pub enum Statement {
    /// A fio command line pasted with the output, at this line.
    CommandLine { line: usize },
    /// `--assume-job SPEC`.
    AssumedJob { spec: String },
}

impl Statement {
    /// The customer's own statement (a command line): a field the output states otherwise is
    /// a contradiction, not only a note.
    pub fn is_customers(&self) -> bool {
        matches!(self, Statement::CommandLine { .. })
    }

    /// Who has a value the output states otherwise: the command line by its line, "the
    /// assumed job".
    fn holder(&self) -> String {
        match self {
            Statement::CommandLine { .. } => self.to_string(),
            Statement::AssumedJob { .. } => "the assumed job".into(),
        }
    }

    /// What the figures contradict.
    fn against(&self) -> &'static str {
        match self {
            Statement::CommandLine { .. } => "the command line",
            Statement::AssumedJob { .. } => "the assumed job",
        }
    }
}

/// "the fio command line at line 3", "--assume-job swimlane".
impl fmt::Display for Statement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Statement::CommandLine { line } => write!(f, "the fio command line at line {line}"),
            Statement::AssumedJob { spec } => write!(f, "--assume-job {spec}"),
        }
    }
}

/// What an output's figures show against a stated job field.
#[derive(Debug, Clone, PartialEq)]
pub enum Figures {
    /// It moved data in these directions ("reads only", "writes only", "reads and writes")
    /// where the statement has `rw`.
    Directions { did: &'static str, rw: String },
    /// This share of its I/Os were reads (a fraction) where the statement has `rwmixread`.
    Mix { reads: f64, rwmixread: u8 },
    /// Its bytes ÷ I/Os give this many bytes per I/O where the statement has `bs`.
    BlockSize { per_io: f64, bs: u64 },
    /// It ran this long (s) where the statement runs a time-based `runtime_s`.
    Runtime { ran_s: f64, runtime_s: f64 },
    /// It moved this much per job where the statement moves its `size` (not time-based).
    Size { per_job: u64, size: u64 },
}

impl Figures {
    /// The share of reads in words, as the caveat and the shape difference name it.
    pub fn reads_words(reads: f64) -> String {
        format!("about {:.0}% reads", reads * 100.0)
    }

    /// The bytes per I/O in words: whole KiB, as the figures are no finer.
    pub fn per_io_words(per_io: f64) -> String {
        if per_io >= 1024.0 {
            format!("{:.0} KiB", per_io / 1024.0)
        } else {
            format!("{per_io:.0} B")
        }
    }
}

impl fmt::Display for Caveat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.write(f, true)
    }
}

impl Caveat {
    /// What a run's time is where its output states none ([`Caveat::NoTimestamp`]): the
    /// record's `time_assumed`.
    pub fn assumed_time(file_time: bool) -> &'static str {
        if file_time {
            "the file's modification time"
        } else {
            "the time of the import"
        }
    }

    /// The caveat's sentence; without `whole`, what was found only (`Warning::headline`).
    pub(super) fn write(&self, f: &mut fmt::Formatter<'_>, whole: bool) -> fmt::Result {
        match self {
            Caveat::Reader(note) => super::reader::write(f, note, whole),
            Caveat::NoTimestamp { file_time } => {
                f.write_str("the output has no timestamp")?;
                then(
                    f,
                    whole,
                    format_args!(
                        "{} places the run, and it counts towards no day of evidence",
                        Caveat::assumed_time(*file_time)
                    ),
                )
            }
            Caveat::Assumed { spec } => write!(f, "{ASSUMED} (--assume-job {spec})"),
            Caveat::CommandLine { line, complete } => write!(
                f,
                "the fio command line at line {line} was read as the job's statement{}",
                if *complete {
                    ""
                } else {
                    " (it names a job file, whose options are not in the paste)"
                }
            ),
            Caveat::StatedOtherwise {
                by,
                field,
                output,
                given,
            } => {
                write!(
                    f,
                    "the output states {field}={output} where {} has {field}={given}",
                    by.holder()
                )?;
                then(f, whole, format_args!("the output's is used"))
            }
            Caveat::Contradicted { by, figures } => {
                write!(f, "the output's figures contradict {}: ", by.against())?;
                contradicted(f, by, figures, whole)
            }
        }
    }
}

/// What the figures show, after "the output's figures contradict the command line: ", and
/// (`whole`) what is taken from them.
fn contradicted(
    f: &mut fmt::Formatter<'_>,
    by: &Statement,
    figures: &Figures,
    whole: bool,
) -> fmt::Result {
    match figures {
        Figures::Directions { did, rw } => {
            write!(f, "it {did} where {by} has rw={rw}")?;
            then(f, whole, format_args!("rw is not taken from it"))
        }
        Figures::Mix { reads, rwmixread } => {
            write!(
                f,
                "{} of its I/Os where {by} has rwmixread={rwmixread}",
                Figures::reads_words(*reads)
            )?;
            then(f, whole, format_args!("the figures' mix is used"))
        }
        Figures::BlockSize { per_io, bs } => {
            write!(
                f,
                "its bytes ÷ I/Os give about {} per I/O where {by} has bs={}",
                Figures::per_io_words(*per_io),
                crate::units::format_size_fio(*bs)
            )?;
            then(f, whole, format_args!("bs is not taken from it"))
        }
        Figures::Runtime { ran_s, runtime_s } => {
            write!(
                f,
                "it ran {ran_s:.1} s where {by} runs {} (time_based)",
                crate::units::format_duration(std::time::Duration::from_secs_f64(*runtime_s))
            )?;
            then(f, whole, format_args!("runtime is not taken from it"))
        }
        Figures::Size { per_job, size } => {
            write!(
                f,
                "it moved {} per job where {by} moves its size, {} (not time-based)",
                crate::units::format_size(*per_job),
                crate::units::format_size(*size)
            )?;
            then(f, whole, format_args!("the size the figures show is used"))
        }
    }
}

/// What the output and the record say of a shape given with `--assume-job`.
pub const ASSUMED: &str = "job shape assumed by the user, not stated in the output";
