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
    } else if let Some(why) = ev.primary_rule().and_then(|r| r.fails_on.as_ref()) {
        // The rule fails although its aggregate meets the threshold: why is the figure that
        // decides ("262 IOPS sustained after burst credits ran out …"), never the mean alone.
        parts.push(why.clone());
    } else if let Some(r) = ev.primary_rule() {
        let mut value = match r.value {
            Some(v) => format!("{} {}{}", r.aggregate.as_str(), fmt_value(v), unit(r.unit)),
            None => "not measured".to_string(),
        };
        // The latest day's beside the window's, when they differ in what they cover.
        if let Some(l) = r.latest_day.as_ref().filter(|_| ev.evidence.days > 1) {
            value.push_str(&format!(
                " (latest day {}: {}{})",
                l.date,
                fmt_value(l.value),
                unit(r.unit)
            ));
        }
        parts.push(format!(
            "{} {value}, needs {}{}",
            r.metric,
            r.threshold_text(fmt_value),
            unit(r.unit)
        ));
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
            out.push(format!("not the policy's test: {d}"));
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

/// The fleet in one line: its verdict, the nodes by verdict, and why.
pub fn render_fleet(fleet: &Fleet, out: &mut dyn Write) -> io::Result<()> {
    let count = |v: crate::evaluate::Verdict| fleet.rows.iter().filter(|r| r.verdict == v).count();
    use crate::evaluate::Verdict::*;
    let mut line = format!(
        "{} {} {}: {} {}{} ({} pass, {} fail, {} inconclusive)",
        fleet.verdict.as_str().to_uppercase(),
        fleet.policy.name,
        fleet.nouns().set,
        fleet.rows.len(),
        fleet.nouns().one,
        plural(fleet.rows.len()),
        count(Pass),
        count(Fail),
        count(Inconclusive)
    );
    if fleet.of_devices {
        // One host's drives: the reason (the spread rule that fails, the drives that do)
        // first, cut to one line as every summary is; the warnings repeat it.
        if !fleet.reason.trim().is_empty() {
            line.push_str("; ");
            line.push_str(fleet.reason.trim());
        }
        return writeln!(out, "{}", shorten(&one_line(&line), MAX_CHARS));
    }
    line.push_str("; ");
    line.push_str(&fleet.judged_on());
    if !fleet.reason.trim().is_empty() {
        line.push_str("; ");
        line.push_str(fleet.reason.trim());
    }
    if let Some(first) = fleet.warnings.first() {
        line.push_str(&format!("; caveat: {first}"));
        if fleet.warnings.len() > 1 {
            line.push_str(&format!(" (+{} more)", fleet.warnings.len() - 1));
        }
    }
    writeln!(out, "{}", one_line(&line))
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
