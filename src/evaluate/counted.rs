//! Which runs count towards the verdict, and why the others do not.

use std::collections::BTreeMap;

use crate::deviation::{self, Deviation};
use crate::policy::Policy;
use crate::run_index::Run;

use super::{FUTURE_REASON, NotCounted, Options, RunLines, Scope, Warning, is_future};

/// The runs left out of the verdict and what the counted ones deviate by.
pub(super) struct Counted {
    /// The runs left out, each with its reason: those the caller gave, then the others'.
    pub excluded: Vec<(Run, String)>,
    /// How the counted runs' test differs from the policy's, in the order found, each once.
    pub deviations: Vec<Deviation>,
    /// Those of [`deviations`](Self::deviations) that every run showing one shows because its
    /// record carries what its output's figures contradict of the job stated beside it
    /// (`Options::contradicted`, which names the file): said there, not again.
    pub restated: Vec<Deviation>,
    pub caveats: Vec<String>,
    pub run_deviations: RunLines,
    pub run_effects: Vec<Option<deviation::Effect>>,
    pub not_counted: Vec<NotCounted>,
    pub future_warning: Option<Warning>,
}

/// Why a record that repeats an earlier one (`Run::repeat_of`) is not counted: one fio run
/// is one run.
pub(crate) fn repeat_reason(line: u32) -> String {
    format!("the same run as line {line}, repeated: counted once")
}

/// The runs that repeat earlier ones, as the tally of runs not counted names them (each
/// run's own line is in the table of runs not counted).
pub(crate) const REPEATED: &str = "the same run as an earlier line, repeated: counted once";

/// Takes out of `runs` (in time order) those that do not count, after the runs the caller
/// left out (`given`, each with its reason).
pub(super) fn sort_out(
    runs: &mut Vec<Run>,
    given: Vec<(Run, String)>,
    policy: &Policy,
    opts: &Options,
) -> Counted {
    // Which runs count. A run dated in the future never does (its clock is wrong); in a
    // report, only runs of the policy's test do. A run or an import judges what it was given,
    // and the deviations decide what its verdict can be.
    let mut future: Vec<Run> = Vec::new();
    let mut excluded: Vec<(Run, String)> = given;
    // In the order found, each once.
    let mut deviations: Vec<Deviation> = Vec::new();
    // Whether every run showing each of `deviations` has a contradiction of its field.
    let mut only_contradicted: Vec<bool> = Vec::new();
    let contradicts = |r: &Run, field: &str| match r.at {
        crate::run_index::At::Index(i) => opts
            .contradicted
            .iter()
            .any(|c| c.record == Some(i) && c.difference.field == field),
        crate::run_index::At::Line { .. } => false,
    };
    let mut caveats: Vec<String> = Vec::new();
    let mut run_deviations = RunLines::default();
    let mut run_effects: Vec<Option<deviation::Effect>> = Vec::new();
    // The runs left out are taken out in place (None: dated in the future), so that a year
    // of runs is never held twice; each with its reason and what it is tallied under
    // (`not_counted`): its reason less what is the run's own (the line it repeats, the
    // runtime it measured), so that a year of runs cut short makes one reason, not one a run.
    let mut left_out: Vec<Option<(String, String)>> = Vec::new();
    // Runs of one context are checked once.
    let mut checker = deviation::Checker::new(policy);
    let out: Vec<Run> = runs
        .extract_if(.., |r| {
            if let Some(line) = r.repeat_of {
                left_out.push(Some((repeat_reason(line), REPEATED.into())));
                return true;
            }
            if is_future(r, opts.now) {
                left_out.push(None);
                return true;
            }
            let c = checker.check(r);
            if opts.scope == Scope::Report && !c.check.is_policy_test() {
                left_out.push(Some((c.list.clone(), c.class.clone())));
                return true;
            }
            run_deviations.push(&c.list);
            run_effects.push(c.check.effect());
            for d in &c.check.deviations {
                let contradicted = contradicts(r, d.field);
                match deviations.iter().position(|x| x == d) {
                    Some(i) => only_contradicted[i] &= contradicted,
                    None => {
                        deviations.push(d.clone());
                        only_contradicted.push(contradicted);
                    }
                }
            }
            for c in &c.check.caveats {
                if !caveats.contains(c) {
                    caveats.push(c.clone());
                }
            }
            false
        })
        .collect();
    // Those the caller gave, by their reason; then the others', by their class, named by
    // their reason where every run of the class has the same one.
    let mut tally: BTreeMap<String, (usize, Option<String>)> = BTreeMap::new();
    let mut count = |class: String, reason: &String| {
        let (n, same) = tally
            .entry(class)
            .or_insert_with(|| (0, Some(reason.clone())));
        *n += 1;
        if same.as_ref().is_some_and(|s| s != reason) {
            *same = None;
        }
    };
    for (_, reason) in &excluded {
        count(reason.clone(), reason);
    }
    for (r, why) in out.into_iter().zip(left_out) {
        match why {
            None => future.push(r),
            Some((reason, class)) => {
                count(class, &reason);
                excluded.push((r, reason));
            }
        }
    }
    let mut not_counted: BTreeMap<String, usize> = BTreeMap::new();
    for (class, (n, same)) in tally {
        *not_counted.entry(same.unwrap_or(class)).or_default() += n;
    }
    let mut future_warning = None;
    if !future.is_empty() {
        let latest = future.iter().map(|r| r.timestamp).max().expect("non-empty");
        not_counted.insert(FUTURE_REASON.into(), future.len());
        future_warning = Some(Warning::FutureRuns {
            count: future.len(),
            latest,
        });
        for r in future {
            excluded.push((r, FUTURE_REASON.into()));
        }
    }
    let not_counted: Vec<NotCounted> = not_counted
        .into_iter()
        .map(|(reason, runs)| NotCounted { reason, runs })
        .collect();
    let restated = deviations
        .iter()
        .zip(only_contradicted)
        .filter(|(_, only)| *only)
        .map(|(d, _)| d.clone())
        .collect();
    Counted {
        excluded,
        deviations,
        restated,
        caveats,
        run_deviations,
        run_effects,
        not_counted,
        future_warning,
    }
}
