//! `--format summary`: one line a support engineer pastes back into a ticket. It says the
//! verdict, the deciding figure against its threshold, the evidence (runs over days), why, and
//! the first caveat, with the count of the others. Nothing here decides anything: it is the same
//! [`Evaluation`] every other format renders, in one line.

use std::io::{self, Write};

use super::fleet::Fleet;
use super::identity;
use crate::evaluate::Evaluation;
use crate::numbers::fmt_value;

/// One line, ended by a newline.
pub fn render(ev: &Evaluation, out: &mut dyn Write) -> io::Result<()> {
    writeln!(out, "{}", line(ev))
}

/// The longest line `--format summary` writes, in characters.
pub const MAX_CHARS: usize = 199;

/// The line, without its newline: the verdict, the policy and host, the deciding figure once
/// against its threshold, runs over days, and the one caveat that matters most (see
/// [`caveats`]), with the count of the others; shortened to [`MAX_CHARS`].
pub fn line(ev: &Evaluation) -> String {
    let id = identity(ev);
    let mut head = format!("{} {}", ev.verdict.as_str().to_uppercase(), ev.policy.name);
    if stated_host(&id.host) {
        head.push_str(&format!(" on {}", id.host));
    }
    if ev.group.is_some() {
        head.push_str(&format!(" ({}, {})", id.dir, id.engine));
    }
    // Which evidence the verdict is of, with its runs and days against the policy's rule.
    // (With --until-decided the decision states its own runs and days.)
    if ev.sequential.is_empty() {
        head.push(' ');
        head.push_str(&ev.judged_on_short());
    }
    let mut parts: Vec<String> = vec![head];
    // --until-decided: the sequence decides, and its bounds are the deciding figures.
    if let Some(d) = ev.sequential.first() {
        use crate::evaluate::sequential::Outcome;
        let said = match d.sequence.outcome {
            Outcome::Pass => "decided pass",
            Outcome::Fail => "decided fail",
            Outcome::AtThreshold | Outcome::Budget => "inconclusive",
            Outcome::Undecided | Outcome::NotPositive => "undecided",
        };
        parts.push(format!("{said} on {}: {}", d.metric, d.figures()));
    } else if let Some(why) = deciding(ev).and_then(|r| r.fails_on.as_ref()) {
        // The rule fails although its aggregate meets the threshold: why is the figure that
        // decides ("262 IOPS sustained after burst credits ran out …"), never the mean alone.
        parts.push(why.clone());
    } else if let Some(r) = deciding(ev) {
        let mut value = match r.value {
            Some(v) => format!("{} {}{}", r.aggregate.as_str(), fmt_value(v), unit(r.unit)),
            None => "not measured".to_string(),
        };
        // The latest day's beside the window's, when they differ in what they cover (left
        // out where a missed soft limit needs the room).
        let room = ev.soft_missed().next().is_none();
        if let Some(l) = r
            .latest_day
            .as_ref()
            .filter(|_| ev.evidence.dates() > 1 && room)
        {
            value.push_str(&format!(
                " (latest day {}: {}{})",
                l.date,
                fmt_value(l.value),
                unit(r.unit)
            ));
        }
        // A figure fio printed too coarsely to tell against the threshold says so.
        let undecided = if r.undecided.is_some() {
            " (as fio printed it: too coarse to tell)"
        } else {
            ""
        };
        parts.push(format!(
            "{} {value}, needs {}{}{undecided}",
            r.metric,
            r.threshold_text(crate::numbers::fmt_threshold),
            unit(r.unit)
        ));
    }
    // A soft limit missed stands beside the verdict, as in every format.
    let soft: Vec<String> = ev
        .soft_missed()
        .map(|r| {
            let value = r
                .value
                .map(|v| format!(" {} {}{}", r.aggregate.as_str(), fmt_value(v), unit(r.unit)))
                .unwrap_or_default();
            format!(
                "{}{value}, needs {}{}",
                r.metric,
                r.threshold_text(crate::numbers::fmt_threshold),
                unit(r.unit)
            )
        })
        .collect();
    if !soft.is_empty() {
        // never cut: where the whole does not fit, the limits by name
        let whole = format!("soft limit missed: {}", soft.join(", "));
        let names: Vec<&str> = ev.soft_missed().map(|r| r.metric.as_str()).collect();
        let fits =
            one_line(&parts.join("; ")).chars().count() + 2 + whole.chars().count() <= MAX_CHARS;
        parts.push(if fits {
            whole
        } else {
            format!("soft limit missed: {}", names.join(", "))
        });
    }
    let mut line = one_line(&parts.join("; "));
    let all = caveats(ev);
    if let Some(first) = all.first() {
        let more = if all.len() > 1 {
            format!(" (+{} more)", all.len() - 1)
        } else {
            String::new()
        };
        let room =
            MAX_CHARS.saturating_sub(line.chars().count() + "; ".len() + more.chars().count());
        let text = shorten(&one_line(first), room);
        if !text.is_empty() {
            line.push_str(&format!("; {text}{more}"));
        }
    }
    shorten(&line, MAX_CHARS)
}

/// The rule whose figure the line gives: of a failing verdict the first deciding rule that
/// fails (the figure that fails it, not the one that passes), else the first deciding rule.
fn deciding(ev: &Evaluation) -> Option<&crate::evaluate::RuleResult> {
    let failed = ev
        .deciding_rules()
        .find(|r| r.passed == Some(false))
        .filter(|_| ev.verdict == crate::evaluate::Verdict::Fail);
    failed.or_else(|| ev.primary_rule())
}

/// What qualifies the verdict, the most important first: how the test differs from the
/// policy's (what flatters first), what decided an inconclusive verdict beyond the evidence,
/// for a pass what the output does not state ("end fsync not stated"), the runs not counted,
/// then what the output does not state, then every other note (parsing notes last).
pub fn caveats(ev: &Evaluation) -> Vec<String> {
    use crate::deviation::Effect;
    use crate::evaluate::Verdict;
    let mut out: Vec<String> = Vec::new();
    for effect in [Effect::Flatters, Effect::EitherWay] {
        for d in ev.deviations.iter().filter(|d| d.effect == effect) {
            out.push(format!("{}: {d}", d.headline()));
        }
    }
    for d in &ev.differences {
        if !ev.deviations.iter().any(|x| x.field == d.field) {
            out.push(format!("not the policy's test: {d}"));
        }
    }
    let explained = !ev.deviations.is_empty() || !ev.differences.is_empty() || !ev.evidence.enough;
    if ev.verdict == Verdict::Inconclusive && !explained && !ev.reason.trim().is_empty() {
        out.push(ev.reason.trim().to_string());
    }
    let not_counted = ev.not_counted.iter().map(|n| match n.runs {
        1 => format!("not counted: {}", n.reason),
        k => format!("{k} runs not counted: {}", n.reason),
    });
    // of what the output does not state, the end fsync first: it decides what a write is
    let mut stated = ev.caveats.clone();
    stated.sort_by_key(|c| !c.starts_with("end fsync"));
    if ev.verdict == Verdict::Pass {
        out.extend(stated);
        out.extend(not_counted);
    } else {
        out.extend(not_counted);
        out.extend(stated);
    }
    for w in &ev.warnings {
        // the deviations and differences again, as warnings
        if matches!(w, crate::evaluate::Warning::NotPolicysTest(_)) {
            continue;
        }
        let w = w.to_string();
        if out.contains(&w) {
            continue;
        }
        out.push(w);
    }
    out
}

/// Whether a host is one a record names (not the placeholder of an import without one).
pub fn stated_host(host: &str) -> bool {
    !host.is_empty() && host != crate::machine::HOST_NOT_STATED
}

/// At most `max` characters, an ellipsis ending what was cut.
fn shorten(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    if max == 0 {
        return String::new();
    }
    let mut t: String = s.chars().take(max - 1).collect();
    t = t.trim_end().to_string();
    t.push('…');
    t
}

/// The fleet in one line of at most [`MAX_CHARS`]: its verdict, the nodes by verdict and which
/// evidence they were judged on, what decides (the rules over the fleet that do not pass, the
/// nodes that fail with the worst figure, the nodes undecided; for a pass the figure closest
/// to the threshold), and the one caveat that matters most (see [`fleet_caveats`]), with the
/// count of the others.
///
/// What decides is never cut, nor the caveat that makes the verdict inconclusive (or says why
/// a node without a figure fails): where the line has no room for them, the rest is said
/// shorter first, by [`Detail`] — node lists as their counts, then zero counts, a failing
/// rule's nodes without a figure and the evidence's words, then the evidence and the count of
/// other caveats.
pub fn render_fleet(fleet: &Fleet, out: &mut dyn Write) -> io::Result<()> {
    if fleet.of_devices {
        // One host's drives: the reason (the spread rule that fails, the drives that do)
        // first, cut to one line as every summary is; the warnings repeat it.
        let mut line = counts_head(fleet, Detail::Full);
        if !fleet.reason.trim().is_empty() {
            line.push_str("; ");
            line.push_str(fleet.reason.trim());
        }
        return writeln!(out, "{}", shorten(&one_line(&line), MAX_CHARS));
    }
    writeln!(out, "{}", fleet_line(fleet))
}

/// How much of a fleet's line is said in full, the most first; each level says less than the
/// one before, in the order of what matters least.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Detail {
    /// Everything: the other failing and the undecided nodes by name.
    Full,
    /// Nodes by count only: no names beyond the deciding figure's, a rule's nodes without a
    /// figure counted.
    Counted,
    /// Besides, no zero counts, no nodes without a figure for a rule that fails, and mixed
    /// evidence in its fewest words.
    Brief,
    /// Besides, no evidence (but `--require-evidence`) and no count of other caveats.
    Least,
}

const DETAILS: [Detail; 4] = [Detail::Full, Detail::Counted, Detail::Brief, Detail::Least];

/// The least of a caveat a line keeps when the caveat is not whole (in characters).
const CAVEAT_LEAST: usize = 80;

/// "FAIL swimlane fleet: 12 nodes (8 pass, 2 fail, 2 inconclusive)"; zero counts left out
/// from [`Detail::Brief`] on (the total still says them).
fn counts_head(fleet: &Fleet, detail: Detail) -> String {
    use crate::evaluate::Verdict::*;
    let count = |v: crate::evaluate::Verdict| fleet.rows.iter().filter(|r| r.verdict == v).count();
    let counts: Vec<String> = [
        (Pass, "pass"),
        (Fail, "fail"),
        (Inconclusive, "inconclusive"),
    ]
    .into_iter()
    .map(|(v, word)| (count(v), word))
    .filter(|(k, _)| detail < Detail::Brief || *k > 0)
    .map(|(k, word)| format!("{k} {word}"))
    .collect();
    let n = fleet.rows.len();
    let mut head = format!(
        "{} {} {}: {n} {}{}",
        fleet.verdict.as_str().to_uppercase(),
        fleet.policy.name,
        fleet.nouns().set,
        fleet.nouns().one,
        plural(n),
    );
    if !counts.is_empty() {
        head.push_str(&format!(" ({})", counts.join(", ")));
    }
    head
}

/// Which evidence the nodes were judged on: where every node was judged on the same, those
/// few words after the counts; else the words every format says it in.
fn evidence(fleet: &Fleet, detail: Detail) -> String {
    use crate::fleet::Basis;
    let n = fleet.rows.len();
    let count = |b: Basis| fleet.rows.iter().filter(|r| r.basis() == b).count();
    let mut said = if detail == Detail::Least {
        String::new()
    } else if n > 0 && count(Basis::History) == n {
        if n == 1 {
            " judged on its history"
        } else {
            " judged on their history"
        }
        .to_string()
    } else if n > 0 && count(Basis::Sitting) == n {
        if n == 1 {
            " judged on one sitting"
        } else {
            " judged on one sitting each"
        }
        .to_string()
    } else if detail == Detail::Brief && n > 0 {
        let parts: Vec<String> = [
            (Basis::Sitting, "on one sitting"),
            (Basis::History, "on history"),
            (Basis::Nothing, "with nothing to judge"),
        ]
        .into_iter()
        .map(|(b, words)| (count(b), words))
        .filter(|(k, _)| *k > 0)
        .map(|(k, words)| format!("{k} {words}"))
        .collect();
        format!("; {}", parts.join(", "))
    } else {
        format!("; {}", fleet.judged_on_short())
    };
    if fleet.require_evidence {
        said.push_str(" (--require-evidence)");
    }
    said
}

/// The fleet's line of at most [`MAX_CHARS`], without its newline (see [`render_fleet`]).
fn fleet_line(fleet: &Fleet) -> String {
    use crate::evaluate::Verdict::*;
    // What decides: the deciding rules over the fleet that do not pass (each with its
    // figure), the nodes that fail with the worst figure among them, the nodes undecided.
    let deciding: Vec<&crate::fleet::FleetRuleResult> = fleet
        .deciding_rules()
        .filter(|r| r.passed != Some(true))
        .collect();
    let worst = deciding_figure(fleet, Fail);
    let others = named(fleet, Fail, worst.as_ref().map(|w| w.0));
    let closest = if fleet.verdict == Pass {
        deciding_figure(fleet, Pass).map(|(_, figure)| figure)
    } else {
        None
    };
    let open = named(fleet, Inconclusive, None);
    // The line up to the caveat, at a level of detail.
    let body = |detail: Detail| -> String {
        let mut parts = vec![format!(
            "{}{}",
            counts_head(fleet, detail),
            evidence(fleet, detail)
        )];
        parts.extend(deciding.iter().map(|r| {
            if detail == Detail::Full {
                r.text.clone()
            } else {
                r.brief.clone()
            }
        }));
        match (&worst, &others) {
            (Some((_, figure)), Some(others)) if detail == Detail::Full => {
                parts.push(format!("fail: {figure}, also {others}"))
            }
            (Some((_, figure)), _) => parts.push(format!("fail: {figure}")),
            (None, Some(fails)) if detail == Detail::Full => parts.push(format!("fail: {fails}")),
            (None, _) => {}
        }
        if let Some(figure) = &closest {
            parts.push(format!("closest to the threshold: {figure}"));
        }
        if let Some(open) = open.as_ref().filter(|_| detail == Detail::Full) {
            parts.push(format!("inconclusive: {open}"));
        }
        one_line(&parts.join("; "))
    };
    let all = fleet_caveats(fleet);
    let Some(first) = all.first().map(|c| one_line(c)) else {
        // Nothing to qualify the verdict: the most said that fits.
        let fitting = DETAILS
            .iter()
            .map(|&d| body(d))
            .find(|l| l.chars().count() <= MAX_CHARS);
        return fitting.unwrap_or_else(|| shorten(&body(Detail::Least), MAX_CHARS));
    };
    // The caveat is the verdict's reason where the fleet is undecided, or where a node
    // fails with no figure to say.
    let needed = fleet.verdict == Inconclusive
        || (fleet.verdict == Fail
            && worst.is_none()
            && !deciding.iter().any(|r| r.passed == Some(false)));
    let with_caveat = |detail: Detail, room_least: usize| -> Option<String> {
        let more = if all.len() > 1 && detail < Detail::Least {
            format!(" (+{} more)", all.len() - 1)
        } else {
            String::new()
        };
        let line = body(detail);
        let room = MAX_CHARS
            .checked_sub(line.chars().count() + "; caveat: ".len() + more.chars().count())?;
        if room < room_least.min(first.chars().count()) || room == 0 {
            return None;
        }
        Some(format!("{line}; caveat: {}{more}", shorten(&first, room)))
    };
    let whole = first.chars().count();
    // The caveat whole, at the most detail that leaves room for it (a caveat the verdict
    // does not rest on takes the room of node lists only); then its first characters.
    let (levels, least) = if needed {
        (&DETAILS[..], CAVEAT_LEAST)
    } else {
        (&DETAILS[..2], CAVEAT_LEAST / 2)
    };
    levels
        .iter()
        .find_map(|&d| with_caveat(d, whole))
        .or_else(|| levels.iter().find_map(|&d| with_caveat(d, least)))
        .or_else(|| {
            // No room for the caveat: a caveat the verdict rests on is cut to what is left;
            // any other is left out, for what decides.
            if needed {
                with_caveat(Detail::Least, 1)
            } else {
                DETAILS
                    .iter()
                    .map(|&d| body(d))
                    .find(|l| l.chars().count() <= MAX_CHARS)
            }
        })
        .unwrap_or_else(|| shorten(&body(Detail::Least), MAX_CHARS))
}

/// The nodes with a verdict (but the one left out), by label: "node2, node5, node7 and 3
/// more"; None for none.
fn named(
    fleet: &Fleet,
    v: crate::evaluate::Verdict,
    but: Option<&crate::fleet::NodeRow>,
) -> Option<String> {
    const NAMED: usize = 3;
    let labels: Vec<String> = fleet
        .rows
        .iter()
        .filter(|r| r.verdict == v && !but.is_some_and(|b| std::ptr::eq(b, *r)))
        .map(|r| r.label(fleet))
        .collect();
    match labels.len() {
        0 => None,
        n if n <= NAMED => Some(labels.join(", ")),
        n => Some(format!(
            "{} and {} more",
            labels[..NAMED].join(", "),
            n - NAMED
        )),
    }
}

/// The deciding rule's figure of the node furthest on the wrong side of its threshold among
/// those with the verdict (the lowest, for a rule of "at least"): "slow 1200 IOPS, needs ≥
/// 3000 IOPS", with its row. None without a deciding rule or a figure.
fn deciding_figure(
    fleet: &Fleet,
    v: crate::evaluate::Verdict,
) -> Option<(&crate::fleet::NodeRow, String)> {
    use crate::policy::Op;
    let head = fleet.head.as_ref()?;
    let measured = fleet
        .rows
        .iter()
        .filter(|r| r.verdict == v)
        .filter_map(|r| Some((r, r.value?, r.threshold?)));
    let (row, value, threshold) = match head.op {
        Op::Ge | Op::Gt => measured.min_by(|a, b| a.1.total_cmp(&b.1)),
        Op::Le | Op::Lt => measured.max_by(|a, b| a.1.total_cmp(&b.1)),
    }?;
    let figure = format!(
        "{} {}{}, needs {} {}{}",
        row.label(fleet),
        fmt_value(value),
        unit(head.unit),
        head.op,
        crate::numbers::fmt_threshold(threshold),
        unit(head.unit)
    );
    Some((row, figure))
}

/// What qualifies the fleet's verdict, the most important first: nodes judged on another
/// test than the policy's (those whose figure flatters first), why the first node undecided is
/// (and a failing one without a figure), rules over the fleet that do not decide and do not
/// pass, then the nodes' warnings (each said once with its nodes) and
/// those about the files. A deciding rule already said is not said again.
fn fleet_caveats(fleet: &Fleet) -> Vec<String> {
    use crate::deviation::Effect;
    let mut out = Vec::new();
    for effect in [Effect::Flatters, Effect::EitherWay] {
        for r in fleet.rows.iter().filter(|r| r.standing == Some(effect)) {
            out.push(format!(
                "{}: not the policy's test{}",
                r.label(fleet),
                if effect == Effect::Flatters {
                    ", which flatters it"
                } else {
                    ""
                }
            ));
        }
    }
    // Why a node that fails has no figure said, and why the first undecided one is.
    use crate::evaluate::Verdict;
    let unsaid_fail = fleet
        .rows
        .iter()
        .filter(|r| r.verdict == Verdict::Fail && r.value.is_none());
    let undecided = fleet
        .rows
        .iter()
        .filter(|r| r.verdict == Verdict::Inconclusive);
    for r in unsaid_fail.take(1).chain(undecided.take(1)) {
        out.push(format!("{}: {}", r.label(fleet), r.reason));
    }
    let deciding: Vec<&crate::fleet::FleetRuleResult> = fleet.deciding_rules().collect();
    let others = fleet
        .rules
        .iter()
        .filter(|r| r.passed != Some(true) && !deciding.contains(r));
    out.extend(others.map(|r| r.text.clone()));
    let rule_texts: Vec<&str> = fleet.rules.iter().map(|r| r.text.as_str()).collect();
    for note in super::view_fleet::fleet_view(fleet).notes {
        if rule_texts.contains(&note.text.as_str()) {
            continue;
        }
        out.push(match note.node {
            Some(node) => format!("{node}: {}", note.text),
            None => note.text,
        });
    }
    out
}

/// " IOPS" for a unit, nothing for none: a figure's unit as the one-line formats print it.
pub(super) fn unit(u: &str) -> String {
    if u.is_empty() {
        String::new()
    } else {
        format!(" {u}")
    }
}

pub(super) fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// Newlines and runs of spaces from reasons and warnings, to one space.
fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}
