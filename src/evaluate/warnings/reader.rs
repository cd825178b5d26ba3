//! The fio readers' notes on an output (`fio::Note`: facts), worded: the one place their
//! sentences are made, as an imported input's caveat (`Caveat::Reader`).

use std::fmt;

use crate::fio::note::{MailEncoding, Note};

/// The note's sentence; without `whole`, only what was found, up to the consequence or advice
/// that follows it after "; " (the table's short form, `Warning::headline`).
pub(super) fn write(f: &mut fmt::Formatter<'_>, note: &Note, whole: bool) -> fmt::Result {
    let (head, rest) = words(note);
    f.write_str(&head)?;
    match rest {
        Some(rest) if whole => write!(f, "; {rest}"),
        _ => Ok(()),
    }
}

/// The whole sentence, as an import's caveat says it after the input's name.
impl fmt::Display for Note {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write(f, self, true)
    }
}

/// "s" where `n` is not one.
fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// "a base64 mail part and a quoted-printable mail part".
fn mail_parts(parts: &[MailEncoding]) -> String {
    let kinds: Vec<&str> = parts
        .iter()
        .map(|p| match p {
            MailEncoding::Base64 => "a base64 mail part",
            MailEncoding::QuotedPrintable => "a quoted-printable mail part",
        })
        .collect();
    kinds.join(" and ")
}

/// What the note says was found, and what follows from it (or what to do), if it says more.
fn words(note: &Note) -> (String, Option<String>) {
    let one = |s: String| (s, None);
    let two = |s: String, rest: &str| (s, Some(rest.to_string()));
    match note {
        Note::MailParts(parts) => one(format!("{} decoded before reading", mail_parts(parts))),
        Note::QuotedPrintable => {
            one("quoted-printable text (=3D, soft line breaks) decoded before reading".into())
        }
        Note::HtmlEntities => {
            one("HTML entities (&gt;, &#39;…) decoded, as from a copied web page".into())
        }
        Note::CommandLines { lines } => one(format!(
            "{} different fio command lines (lines {}): none was read as the job's statement, the paste does not say which one ran",
            lines.len(),
            lines
                .iter()
                .map(|l| l.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        )),
        Note::NoiseBefore { lines, json } => one(format!(
            "skipped {lines} line{} of noise before the {}",
            plural(*lines),
            if *json { "JSON" } else { "output" }
        )),
        Note::AfterJson { lines } => one(format!(
            "ignored {lines} line{} after the JSON",
            plural(*lines)
        )),
        Note::Interrupted => one(
            "interrupted run (fio: terminating on signal): the figures cover the time until the interruption".into(),
        ),
        Note::ErrorLines { count, first } => one(format!(
            "fio reported {count} error line{} before the results, e.g. '{first}'",
            plural(*count)
        )),
        Note::CutRun { line } => one(format!(
            "line {line}: another fio run begins here, but its job results are missing (the paste is cut?)"
        )),
        Note::JsonRuns { count } => two(
            format!("the input holds {count} JSON reports of different fio runs"),
            "each is read on its own",
        ),
        Note::StatusReports { count } => two(
            format!(
                "{count} JSON reports of one fio run (the same start: fio --status-interval)"
            ),
            "the last one was used",
        ),
        Note::TextRuns { count } => two(
            format!("the text holds {count} fio runs one after another"),
            "each is read on its own",
        ),
        Note::PrintedAgain { blocks } => one(format!(
            "{blocks} job block{} printed again later by the same fio process (status reports, --status-interval?): the last print of each was used",
            if *blocks == 1 { " was" } else { "s were" }
        )),
        Note::DamagedReport { line } => two(
            format!("a later JSON report is incomplete or damaged (line {line})"),
            "the last complete one was used",
        ),
        Note::Kubestr => one(
            "kubestr's JSON (kubestr fio -o json): fio's JSON report inside it was read, with the job file kubestr ran (fioConfig)".into(),
        ),
        Note::ResultLinesAlone { runs } => two(
            format!(
                "fio's result line{} alone, without {} job header: the job's name, its error status (err=) and its options are not stated",
                plural(*runs),
                if *runs == 1 { "its" } else { "their" }
            ),
            "each line was read as one run of the job stated by the user",
        ),
        Note::KibIo => two(
            "fio ≤ 2.20 JSON: io_bytes is in KiB".into(),
            "bytes and bandwidth were computed from it",
        ),
        Note::NoBwBytes => one(
            "no bw_bytes in this fio version (added in 3.2): bandwidth was computed from io_bytes and runtime as fio does".into(),
        ),
        Note::UnifiedRw { job } => two(
            format!(
                "job '{job}': unified_rw_reporting mixes reads and writes into one figure"
            ),
            "it was not used",
        ),
        Note::KbBaseOrder { job, options } => one(format!("job '{job}': kb_base=1000 is listed with {} and fio applies it only to sizes given after it, an order the JSON does not keep: those sizes (4k: 4000 or 4096 bytes) are not stated", options.join(", "))),
        Note::Clones { job, group, clones } => two(
            format!(
                "job '{job}' (group {group}): {clones} clones reported one by one (numjobs without group_reporting) were combined into one run, as fio's 'Run status group' line combines them: I/Os and bytes summed over the longest runtime"
            ),
            "their latency percentiles and IOPS samples cannot be combined from the output and are not stated",
        ),
        Note::TerseLines { job, group, lines } => two(
            format!(
                "{lines} terse lines of job '{job}' (group {group}): terse output does not say whether they are numjobs clones of one run or runs of their own, and has no group line to combine clones by"
            ),
            "none of them is counted as a run",
        ),
        Note::TersePrecision => two(
            "terse output: bandwidth is fio's truncated KiB/s integer and IOPS a truncated integer".into(),
            "I/O counts are estimated as IOPS × runtime; job options (rw, bs, ioengine…) are not in terse output",
        ),
        Note::TerseIgnored => one("terse lines in the same output were ignored".into()),
        Note::LostLineBreaks => two(
            "the text had lost line breaks".into(),
            "it was re-split on fio's markers (a job name containing spaces may keep only its last word)",
        ),
        Note::Unreadable(u) => one(u.to_string()),
        Note::SummaryWithoutBlock {
            line,
            group,
            direction,
        } => one(format!(
            "line {line}: group {group}'s summary shows {} figures, but no job block of the group has a {direction} line that was read: they are missing",
            direction.to_uppercase()
        )),
        Note::NoTimeZone { date, offset } => (
            format!("the text's date '{date}' has no time zone"),
            // FixedOffset prints as "+01:00", as fio's dates' zones are named.
            Some(format!(
                "it was read as this machine's local time (UTC{offset})"
            )),
        ),
        Note::TextPrecision { estimated } => (
            "text output: bandwidth and IOPS are the figures fio printed (3–4 significant digits)"
                .into(),
            Some(format!(
                "I/O counts {}",
                if *estimated {
                    "are estimated as IOPS × runtime where fio printed no 'issued' line"
                } else {
                    "come from fio's 'issued' lines"
                }
            )),
        ),
        Note::UnreliableLastDigit => two(
            "fio before 2.20 printed fractions with an unreliable last digit (e.g. 35.1GiB/s for 35.9)".into(),
            "treat decimals in this output with care",
        ),
        Note::NoGroupSummary => one(
            "no 'Run status group' summary: the output may be cut after the job results".into(),
        ),
        Note::MisprintedBandwidth { job, bw, decimal } => two(
            format!("job '{job}': BW={bw} and ({decimal}) disagree"),
            "fio before 3.26 misprinted values just below a whole unit (11.99MiB/s as 11.0MiB/s), so the figure in parentheses is likely the right one",
        ),
    }
}

#[cfg(test)]
pub(super) use tests::examples;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fio::note::{Place, Unreadable};

    /// One note of each kind, with facts that stand out, and the words of its facts its
    /// sentence must hold. The match has no catch-all: a new kind of note fails to compile
    /// here until it is given its facts, and [`KINDS`] counts the arms.
    fn facts(n: &Note) -> (usize, Vec<&str>) {
        match n {
            Note::MailParts(_) => (
                0,
                vec!["a base64 mail part and a quoted-printable mail part"],
            ),
            Note::QuotedPrintable => (1, vec!["quoted-printable"]),
            Note::HtmlEntities => (2, vec!["HTML entities"]),
            Note::CommandLines { .. } => (3, vec!["2 different fio command lines (lines 4, 9)"]),
            Note::NoiseBefore { json: true, .. } => (4, vec!["skipped 3 lines", "JSON"]),
            Note::NoiseBefore { json: false, .. } => (5, vec!["skipped 1 line of", "output"]),
            Note::AfterJson { .. } => (6, vec!["ignored 5 lines after"]),
            Note::Interrupted => (7, vec!["terminating on signal"]),
            Note::ErrorLines { .. } => (8, vec!["16 error lines", "'fio: io_u error'"]),
            Note::CutRun { .. } => (9, vec!["line 77:", "another fio run"]),
            Note::JsonRuns { .. } => (10, vec!["6 JSON reports of different fio runs"]),
            Note::StatusReports { .. } => (11, vec!["7 JSON reports of one fio run"]),
            Note::TextRuns { .. } => (12, vec!["8 fio runs"]),
            Note::PrintedAgain { .. } => (13, vec!["9 job blocks were printed again"]),
            Note::DamagedReport { .. } => (14, vec!["(line 41)"]),
            Note::Kubestr => (15, vec!["kubestr"]),
            Note::ResultLinesAlone { .. } => (16, vec!["result lines alone", "their job header"]),
            Note::KibIo => (17, vec!["io_bytes is in KiB"]),
            Note::NoBwBytes => (18, vec!["no bw_bytes"]),
            Note::UnifiedRw { .. } => (19, vec!["job 'mixjob'", "unified_rw_reporting"]),
            Note::Clones { .. } => (20, vec!["job 'clonejob' (group 3): 4 clones"]),
            Note::KbBaseOrder { .. } => (KINDS - 1, vec!["job 'kbjob'", "kb_base=1000", "size"]),
            Note::TerseLines { .. } => (21, vec!["11 terse lines of job 'tersejob' (group 2)"]),
            Note::TersePrecision => (22, vec!["terse output"]),
            Note::TerseIgnored => (23, vec!["terse lines"]),
            Note::LostLineBreaks => (24, vec!["lost line breaks"]),
            Note::Unreadable(Unreadable {
                place: Place::Job { .. },
                ..
            }) => (
                25,
                vec!["line 12: job 'badjob' has a write line", "'write: IOPS=?'"],
            ),
            Note::Unreadable(Unreadable {
                place: Place::Outside,
                ..
            }) => (26, vec!["line 13: a result line outside", "'read: IOPS=?'"]),
            Note::SummaryWithoutBlock { .. } => (27, vec!["line 30: group 5's summary shows READ"]),
            Note::NoTimeZone { .. } => (28, vec!["'Tue Dec  1 10:00:00 2026'", "UTC+05:30"]),
            Note::TextPrecision { estimated: true } => (29, vec!["estimated as IOPS × runtime"]),
            Note::TextPrecision { estimated: false } => (30, vec!["from fio's 'issued' lines"]),
            Note::UnreliableLastDigit => (31, vec!["before 2.20"]),
            Note::NoGroupSummary => (32, vec!["no 'Run status group' summary"]),
            Note::MisprintedBandwidth { .. } => {
                (33, vec!["job 'bwjob': BW=11.0MiB/s and (12.6MB/s)"])
            }
        }
    }

    /// The arms of [`facts`].
    const KINDS: usize = 35;

    pub(in crate::evaluate) fn examples() -> Vec<Note> {
        let unreadable = |line, text: &str, place| Unreadable {
            line,
            text: text.into(),
            place,
        };
        vec![
            Note::MailParts(vec![MailEncoding::Base64, MailEncoding::QuotedPrintable]),
            Note::QuotedPrintable,
            Note::HtmlEntities,
            Note::CommandLines { lines: vec![4, 9] },
            Note::NoiseBefore {
                lines: 3,
                json: true,
            },
            Note::NoiseBefore {
                lines: 1,
                json: false,
            },
            Note::AfterJson { lines: 5 },
            Note::Interrupted,
            Note::ErrorLines {
                count: 16,
                first: "fio: io_u error".into(),
            },
            Note::CutRun { line: 77 },
            Note::JsonRuns { count: 6 },
            Note::StatusReports { count: 7 },
            Note::TextRuns { count: 8 },
            Note::PrintedAgain { blocks: 9 },
            Note::DamagedReport { line: 41 },
            Note::Kubestr,
            Note::ResultLinesAlone { runs: 2 },
            Note::KibIo,
            Note::NoBwBytes,
            Note::UnifiedRw {
                job: "mixjob".into(),
            },
            Note::KbBaseOrder {
                job: "kbjob".into(),
                options: vec!["size".into()],
            },
            Note::Clones {
                job: "clonejob".into(),
                group: 3,
                clones: 4,
            },
            Note::TerseLines {
                job: "tersejob".into(),
                group: 2,
                lines: 11,
            },
            Note::TersePrecision,
            Note::TerseIgnored,
            Note::LostLineBreaks,
            Note::Unreadable(unreadable(
                12,
                "write: IOPS=?",
                Place::Job {
                    job: "badjob".into(),
                    direction: "write",
                    other_read: false,
                },
            )),
            Note::Unreadable(unreadable(13, "read: IOPS=?", Place::Outside)),
            Note::SummaryWithoutBlock {
                line: 30,
                group: 5,
                direction: "read",
            },
            Note::NoTimeZone {
                date: "Tue Dec  1 10:00:00 2026".into(),
                offset: chrono::FixedOffset::east_opt(5 * 3600 + 1800).unwrap(),
            },
            Note::TextPrecision { estimated: true },
            Note::TextPrecision { estimated: false },
            Note::UnreliableLastDigit,
            Note::NoGroupSummary,
            Note::MisprintedBandwidth {
                job: "bwjob".into(),
                bw: "11.0MiB/s".into(),
                decimal: "12.6MB/s".into(),
            },
        ]
    }

    #[test]
    fn every_kind_of_reader_note_is_a_sentence_naming_its_facts() {
        let mut kinds = std::collections::BTreeSet::new();
        for n in examples() {
            let (kind, words) = facts(&n);
            kinds.insert(kind);
            // As an import prints it: after the input's name, in every format.
            let caveat = crate::evaluate::Warning::InputCaveat {
                about: "out.txt".into(),
                caveat: super::super::caveat::Caveat::Reader(n.clone()),
            }
            .to_string();
            let sentence = caveat.strip_prefix("out.txt: ").unwrap();
            assert!(sentence.len() > 20, "{n:?}: {sentence}");
            for w in words {
                assert!(sentence.contains(w), "{n:?}: no '{w}' in: {sentence}");
            }
        }
        assert_eq!(kinds, (0..KINDS).collect(), "an example of each kind");
    }
}
