//! Notes an import adds to the verdict's warnings.

use crate::evaluate::Warning;
use crate::evaluate::caveat::Caveat;
use crate::measure::{Direction, Measurement};

/// The notes of the files that give a run of their own: a file whose every block is a copy of
/// a run counted from another of its outputs (the text beside the JSON) says nothing of the
/// figures judged, so what its reader noted of it (figures printed to 3–4 digits, a date
/// without a zone) is not said. Files are told apart by name as their notes are: of two
/// files of one name, the notes stay while either gives a run.
pub(super) fn of_files_counted(
    file_notes: Vec<(String, Caveat)>,
    candidates: &[super::select::Candidate],
) -> Vec<(String, Caveat)> {
    let only_copies = |file: &str| {
        let mut of_file = candidates
            .iter()
            .filter(|c| c.record.source_file.as_deref() == Some(file))
            .peekable();
        of_file.peek().is_some() && of_file.all(|c| c.copy)
    };
    file_notes
        .into_iter()
        .filter(|(file, _)| !only_copies(file))
        .collect()
}

/// Notes from several files: one that several files share is said once, with the count and
/// names of the files.
pub(super) fn said_once(file_notes: Vec<(String, Caveat)>) -> Vec<Warning> {
    // each caveat in the order first said, with its files; two that read alike are one
    let mut said: Vec<(Caveat, Vec<String>)> = Vec::new();
    let mut at: std::collections::HashMap<String, usize> = Default::default();
    for (file, note) in file_notes {
        let i = *at.entry(note.to_string()).or_insert_with(|| {
            said.push((note, Vec::new()));
            said.len() - 1
        });
        if !said[i].1.contains(&file) {
            said[i].1.push(file);
        }
    }
    said.into_iter()
        .map(|(note, f)| {
            let about = if f.len() == 1 {
                f[0].clone()
            } else {
                let shown: Vec<&str> = f.iter().take(3).map(String::as_str).collect();
                format!(
                    "{} files ({}{})",
                    f.len(),
                    shown.join(", "),
                    if f.len() > 3 { ", …" } else { "" }
                )
            };
            Warning::InputCaveat {
                about,
                caveat: note,
            }
        })
        .collect()
}

/// What an import cannot tell of burst credits: fio's output summarises a run's per-interval
/// IOPS (min, mean, max over its samples) but gives no series, so the step a disk's credits
/// running out makes inside a run cannot be found as a native run finds it
/// (`measure::changepoint`). Said when a deciding rule judges a throughput figure, with the
/// runs whose lowest interval lies under the step's 0.8 × their mean, which a step would
/// make so (and which a noisy disk can make so too).
pub(super) fn no_series_note(
    measurements: &[Measurement],
    policy: &crate::policy::Policy,
) -> Option<Warning> {
    let dir = policy
        .deciding_rules()
        .find_map(|r| crate::metrics::throughput(&r.metric))?;
    if measurements.is_empty() || measurements.iter().any(|m| m.series.is_some()) {
        return None;
    }
    let low: Vec<(usize, f64, f64)> = measurements
        .iter()
        .enumerate()
        .filter_map(|(i, m)| {
            let d = match dir {
                Direction::Read => m.read.as_ref(),
                Direction::Write => m.write.as_ref(),
            };
            let s = d?.samples.as_ref()?;
            (s.samples >= 8 && s.min < crate::measure::changepoint::FALL * s.mean).then_some((
                i + 1,
                s.min,
                s.mean,
            ))
        })
        .collect();
    Some(Warning::NoSeries {
        runs: measurements.len(),
        low,
    })
}
