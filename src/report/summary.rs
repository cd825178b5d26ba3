//! `--format summary`: one line a support engineer pastes back into a ticket. It says the
//! verdict, the deciding figure against its threshold, the evidence (runs over days), why, and
//! the first caveat, with the count of the others. Nothing here decides anything: it is the same
//! [`Evaluation`] every other format renders, in one line.

use std::io::{self, Write};

use super::fleet::Fleet;
use super::{fmt_value, identity};
use crate::evaluate::Evaluation;

/// One line, ended by a newline.
pub fn render(ev: &Evaluation, out: &mut dyn Write) -> io::Result<()> {
    writeln!(out, "{}", line(ev))
}

/// The line, without its newline.
pub fn line(ev: &Evaluation) -> String {
    let id = identity(ev);
    let mut parts: Vec<String> = Vec::new();
    let mut head = format!("{} {}", ev.verdict.as_str().to_uppercase(), ev.policy.name);
    if !id.host.is_empty() {
        head.push_str(&format!(" on {}", id.host));
    }
    if ev.group.is_some() {
        head.push_str(&format!(" ({}, {})", id.dir, id.engine));
    }
    // Which evidence the verdict is of, with its runs and days against the policy's rule.
    head.push(' ');
    head.push_str(&ev.judged_on());
    parts.push(head);
    if let Some(r) = ev.primary_rule() {
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
            "{} {value}, needs {} {}{}",
            r.metric,
            r.op,
            fmt_value(r.threshold),
            unit(r.unit)
        ));
    }
    if !ev.reason.trim().is_empty() {
        parts.push(ev.reason.trim().to_string());
    }
    if let Some(first) = ev.warnings.first() {
        let more = ev.warnings.len() - 1;
        parts.push(format!(
            "caveat: {first}{}",
            if more > 0 {
                format!(" (+{more} more)")
            } else {
                String::new()
            }
        ));
    }
    one_line(&parts.join("; "))
}

/// The fleet in one line: its verdict, the nodes by verdict, and why.
pub fn render_fleet(fleet: &Fleet, out: &mut dyn Write) -> io::Result<()> {
    let count = |v: crate::evaluate::Verdict| fleet.rows.iter().filter(|r| r.verdict == v).count();
    use crate::evaluate::Verdict::*;
    let mut line = format!(
        "{} {} fleet: {} node{} ({} pass, {} fail, {} inconclusive)",
        fleet.verdict.as_str().to_uppercase(),
        fleet.policy.name,
        fleet.rows.len(),
        plural(fleet.rows.len()),
        count(Pass),
        count(Fail),
        count(Inconclusive)
    );
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

fn unit(u: &str) -> String {
    if u.is_empty() {
        String::new()
    } else {
        format!(" {u}")
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// Newlines and runs of spaces from reasons and warnings, to one space.
fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}
