//! `--format reply`: the few sentences a support engineer sends the customer. The verdict in
//! plain words; what was measured and what it means; when the verdict is inconclusive, the
//! exact fio command of the policy's test and how many runs over how many days to attach, as
//! JSON. Nothing in it is meant for us (no option of iopscheck, no "use --host"): it is the
//! same [`Evaluation`] every other format renders, told to the person who ran the test.

use std::io::{self, Write};

use super::fleet::Fleet;
use super::summary::{plural, stated_host, unit};
use crate::deviation::Effect;
use crate::evaluate::{Evaluation, RuleResult, Verdict};
use crate::numbers::{fmt_threshold, fmt_value};

pub fn render(ev: &Evaluation, out: &mut dyn Write) -> io::Result<()> {
    write!(out, "{}", text(ev))
}

/// The reply, paragraphs separated by blank lines, ending with a newline.
pub fn text(ev: &Evaluation) -> String {
    let who = vendor(ev);
    let storage = storage(&super::identity(ev).host);
    let mut paras: Vec<String> = Vec::new();
    let requirement = requirement(ev);
    let e = &ev.evidence;
    // the runs over the calendar days they fall on, as they are; and as the vendor's rule
    // counts its days, where some do not count (too few runs, or too soon after the day
    // before)
    let calendar = e.calendar_days.max(e.days);
    // a run whose output states no date is on no day: said, never given one
    let across = if calendar == 0 && e.undated_runs > 0 {
        format!("{} run{}", e.runs, plural(e.runs))
    } else {
        format!(
            "{} run{} over {} day{}",
            e.runs,
            plural(e.runs),
            calendar,
            plural(calendar)
        )
    };
    let undated = match e.undated_runs {
        0 => String::new(),
        1 => " (one run's output states no date, so it counts towards no day)".to_string(),
        n => format!(" ({n} runs' outputs state no date, so they count towards no day)"),
    };
    let counted = if calendar > e.days || e.undated_runs > 0 {
        format!(
            "{} run{} over {} day{} that count{undated}",
            e.runs,
            plural(e.runs),
            e.days,
            plural(e.days)
        )
    } else {
        across.clone()
    };
    let measured = measured(ev);

    match ev.verdict {
        Verdict::Pass => passed(
            ev,
            &mut paras,
            &who,
            &storage,
            &requirement,
            (&across, &counted),
            measured.as_deref(),
        ),
        Verdict::Fail => {
            paras.push(format!(
                "{} does not meet {who}'s requirement{requirement}.",
                capital(&storage)
            ));
            if let Some(m) = &measured {
                paras.push(format!(
                    "Across {across}, {m}. The storage needs to be faster for this requirement: a faster disk or volume class, or one that is not shared with other busy workloads."
                ));
            }
        }
        Verdict::Inconclusive => {
            paras.push(format!(
                "The result is inconclusive: we cannot tell yet whether {storage} meets {who}'s requirement{requirement}."
            ));
            let mut why: Vec<String> = Vec::new();
            let flattering: Vec<String> = ev
                .deviations
                .iter()
                .filter(|d| d.effect == Effect::Flatters)
                .map(|d| customer(&d.to_string()))
                .collect();
            let either: Vec<String> = ev
                .deviations
                .iter()
                .filter(|d| d.effect == Effect::EitherWay)
                .map(|d| customer(&d.to_string()))
                .collect();
            if !flattering.is_empty() {
                why.push(format!(
                    "The test that was run is not the one {who} prescribes ({}), and the difference can make the storage look faster than it is, so its figures cannot show that the requirement is met.",
                    flattering.join("; ")
                ));
            }
            if !either.is_empty() {
                why.push(format!(
                    "The test that was run differs from the one {who} prescribes ({}), which changes its figures either way.",
                    either.join("; ")
                ));
            }
            let other: Vec<String> = ev
                .differences
                .iter()
                .filter(|d| !ev.deviations.iter().any(|x| x.field == d.field))
                .map(|d| {
                    customer(&format!(
                        "{} {} instead of {}",
                        d.field, d.found, d.expected
                    ))
                })
                .collect();
            if !other.is_empty() {
                why.push(format!(
                    "The output shows another test than the prescribed one: {}.",
                    other.join("; ")
                ));
            }
            let unstated: Vec<String> = ev.caveats.iter().map(|c| unstated(c)).collect();
            if !unstated.is_empty() {
                why.push(format!(
                    "The output does not show {}; fio's JSON output states {}.",
                    unstated.join(", nor "),
                    if unstated.len() == 1 { "it" } else { "them" }
                ));
            }
            if !e.enough {
                why.push(format!(
                    "{who} asks for at least {} runs over at least {} different days{}, averaged, because a single run varies with caching; we have {counted}.",
                    e.min_runs,
                    e.min_days,
                    per_day(e)
                ));
            }
            if let Some(m) = &measured {
                why.push(format!(
                    "What you sent shows that {m}; on its own that figure does not decide."
                ));
            }
            if !why.is_empty() {
                paras.push(why.join(" "));
            }
        }
    }
    if let Some(soft) = soft_missed(ev, &who) {
        paras.push(soft);
    }
    if !ev.not_counted.is_empty() {
        let items: Vec<String> = ev.not_counted.iter().map(|n| customer(&n.reason)).collect();
        paras.push(format!(
            "Not counted from what you sent: {}.",
            items.join("; ")
        ));
    }
    if ev.verdict == Verdict::Inconclusive || (ev.verdict == Verdict::Pass && !e.enough) {
        paras.push(ask(ev, &who));
    }
    let mut s = paras.join("\n\n");
    s.push('\n');
    s
}

/// A PASS: on the vendor's evidence over days, or on fewer runs than it asks (an import, a
/// sitting), which every other format says too.
fn passed(
    ev: &Evaluation,
    paras: &mut Vec<String>,
    who: &str,
    storage: &str,
    requirement: &str,
    (across, counted): (&str, &str),
    measured: Option<&str>,
) {
    let e = &ev.evidence;
    // A sitting or an import passes on the runs given; the vendor's evidence over
    // days may still be short of what it asks (every other format says so too).
    paras.push(if e.enough {
        format!("Good news: {storage} meets {who}'s requirement{requirement}.")
    } else {
        format!(
            "Good news so far: in what you sent, {storage} meets {who}'s requirement{requirement}."
        )
    });
    let unstated: Vec<String> = ev.caveats.iter().map(|c| unstated(c)).collect();
    let run_as = if unstated.is_empty() {
        format!("run as {who} prescribes")
    } else {
        format!("run as {who} prescribes as far as the output shows")
    };
    let mut said = Vec::new();
    if let Some(m) = measured {
        said.push(format!("Across {across}, {run_as}, {m}."));
    }
    if !unstated.is_empty() {
        said.push(format!(
            "The output does not show {}; fio's JSON output states {}.",
            unstated.join(", nor "),
            if unstated.len() == 1 { "it" } else { "them" }
        ));
    }
    said.push(if e.enough {
        format!(
            "That is the evidence {who} asks for: at least {} runs over at least {} days{}, averaged, because a single run varies with caching.",
            e.min_runs,
            e.min_days,
            per_day(e)
        )
    } else {
        format!(
            "{who} asks for at least {} runs over at least {} different days{}, averaged, because a single run varies with caching; we have {counted}, so this is a good sign, not yet that evidence.",
            e.min_runs,
            e.min_days,
            per_day(e)
        )
    });
    paras.push(said.join(" "));
}

/// ", at least 3 runs a day, each day's 12 hours or more after the day before": what makes
/// a day count, where the policy asks more than one run a day; "" otherwise.
fn per_day(e: &crate::evaluate::EvidenceStatus) -> String {
    if e.min_days < 2 {
        return String::new();
    }
    let k = e.min_runs_per_day.max(1);
    let runs = if k == 1 {
        String::new()
    } else {
        format!("at least {k} runs a day, ")
    };
    format!(
        ", {runs}each day's runs {} hours or more after the day before's",
        crate::evaluate::DAY_GAP_HOURS
    )
}

/// What to run and attach: the policy's fio command, how many runs over how many days.
fn ask(ev: &Evaluation, who: &str) -> String {
    let e = &ev.evidence;
    let runs = (e.min_runs as usize).max(1);
    let days = (e.min_days as usize).max(1);
    let when = if days > 1 {
        format!(
            "{runs} times spread over {days} different days (a few runs a day, at different times{})",
            per_day(e)
        )
    } else if runs > 1 {
        format!("{runs} times, at different times")
    } else {
        "once".to_string()
    };
    let mut s = format!(
        "Please run this exact command on the node, from a directory on the storage to be checked (it writes a test file there and leaves it; delete it afterwards), {when}, and attach every JSON file it writes:"
    );
    if ev.policy.fio_command.is_empty() {
        s.push_str(&format!(
            "\n\n    the fio command of {who}'s published test, with --output-format=json"
        ));
    } else {
        s.push_str(&format!("\n\n    {}", ev.policy.fio_command));
    }
    s.push_str(
        "\n\nPlease send the files as they are (attached, not pasted), so that nothing in them is lost.",
    );
    s
}

/// "the storage on node7", "the storage".
fn storage(host: &str) -> String {
    if stated_host(host) && !host.contains(',') {
        format!("the storage on {host}")
    } else {
        "the storage".into()
    }
}

fn vendor(ev: &Evaluation) -> String {
    if ev.policy.vendor.trim().is_empty() {
        format!("the {} policy", ev.policy.name)
    } else {
        ev.policy.vendor.trim().to_string()
    }
}

/// " (write IOPS by the vendor's formula at least 3000 IOPS)": every deciding rule's
/// threshold, in words ("…, and sync p99 us at most 10000 µs").
fn requirement(ev: &Evaluation) -> String {
    let rules: Vec<String> = ev.deciding_rules().map(limit).collect();
    if rules.is_empty() {
        return String::new();
    }
    format!(" ({})", and_list(&rules))
}

/// "write IOPS as fio reports them at least 10.00 IOPS".
fn limit(r: &RuleResult) -> String {
    format!(
        "{} {} {}{}",
        metric_words(&r.metric),
        op_words(r.op),
        fmt_threshold(r.threshold),
        unit(r.unit)
    )
}

/// "a", "a and b", "a, b and c".
fn and_list(items: &[String]) -> String {
    match items.split_last() {
        None => String::new(),
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
    }
}

/// What the deciding rules measured, against their thresholds: of a failing verdict, the
/// rules that fail (the first deciding rule where none is marked failed). None when nothing
/// was measured.
fn measured(ev: &Evaluation) -> Option<String> {
    let failed: Vec<&RuleResult> = ev
        .deciding_rules()
        .filter(|r| r.passed == Some(false))
        .collect();
    let rules: Vec<&RuleResult> = if ev.verdict == Verdict::Fail && !failed.is_empty() {
        failed
    } else {
        ev.deciding_rules().collect()
    };
    let said: Vec<String> = rules
        .iter()
        .filter_map(|r| figure(r, "is required"))
        .collect();
    (!said.is_empty()).then(|| said.join("; "))
}

/// The soft limits missed, told as what they are: recommended, not required. None when none
/// is missed.
fn soft_missed(ev: &Evaluation, who: &str) -> Option<String> {
    let said: Vec<String> = ev
        .soft_missed()
        .filter_map(|r| figure(r, "is recommended"))
        .collect();
    (!said.is_empty()).then(|| {
        format!(
            "{} also recommends, without requiring it, a limit the storage misses: {}.",
            capital(who),
            said.join("; ")
        )
    })
}

/// "the average of write IOPS (by the vendor's formula) was 4198 IOPS, where at least 3000 IOPS
/// is required". None when the rule measured nothing.
fn figure(r: &RuleResult, wanted: &str) -> Option<String> {
    let v = r.value?;
    let how = match r.aggregate.as_str() {
        "mean" => "the average",
        "median" => "the median",
        "min" => "the lowest",
        "max" => "the highest",
        other => other,
    };
    let note = r
        .note
        .as_deref()
        .map(|n| format!(" ({})", customer(n)))
        .unwrap_or_default();
    Some(format!(
        "{how} {}{note} was {}{}, where {} {}{} {wanted}",
        metric_words(&r.metric),
        fmt_value(v),
        unit(r.unit),
        op_words(r.op),
        fmt_threshold(r.threshold),
        unit(r.unit)
    ))
}

fn metric_words(m: &str) -> String {
    let (dir, rest) = match m.split_once('_') {
        Some((d @ ("write" | "read" | "total" | "sync"), r)) => (d, r),
        _ => ("", m),
    };
    let what = match rest {
        "iops_formula" => "IOPS by the vendor's formula".to_string(),
        "iops" => "IOPS as fio reports them".to_string(),
        "bw_mb_s" => "bandwidth in MB/s".to_string(),
        "bw_mib_s" => "bandwidth in MiB/s".to_string(),
        "bw_bytes" => "bandwidth".to_string(),
        other => other.replace('_', " "),
    };
    if dir.is_empty() {
        what
    } else {
        format!("{dir} {what}")
    }
}

fn op_words(op: crate::policy::Op) -> &'static str {
    use crate::policy::Op;
    match op {
        Op::Ge => "at least",
        Op::Gt => "more than",
        Op::Le => "at most",
        Op::Lt => "less than",
    }
}

/// What an output does not state, told to the one who can send it: what it does not show.
fn unstated(caveat: &str) -> String {
    let c = customer(caveat);
    if c.starts_with("end fsync not stated") {
        "whether fio ended the test with an fsync (end_fsync=1), as the prescribed test does".into()
    } else if c.starts_with("job options not stated") {
        "the test's options, so a limit on its own speed (such as rate_iops) cannot be ruled out"
            .into()
    } else {
        match c.split_once(": ") {
            Some((_, why)) => why.trim_end_matches('.').to_string(),
            None => c,
        }
    }
}

/// Text meant for us made fit for the customer: our options and hints taken out, "the policy's
/// test" said as what it is.
fn customer(s: &str) -> String {
    let mut t = s.to_string();
    // "(use --host)", "(--assume-job swimlane)": hints and flags of ours in parentheses
    while let Some(at) = t.find("(use --").or_else(|| t.find("(--")) {
        match t[at..].find(')') {
            Some(end) => {
                t.replace_range(at..at + end + 1, "");
            }
            None => break,
        }
    }
    t = t
        .replace("the policy's test", "the prescribed test")
        .replace("the policy's job", "the prescribed test")
        .replace("the policy", "the requirement");
    t.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn capital(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().collect::<String>() + c.as_str(),
        None => String::new(),
    }
}

/// A fleet's reply: how many nodes meet the requirement, which do not, which cannot be judged.
pub fn render_fleet(fleet: &Fleet, out: &mut dyn Write) -> io::Result<()> {
    if fleet.of_devices {
        return render_devices(fleet, out);
    }
    let who = if fleet.policy.vendor.trim().is_empty() {
        format!("the {} policy", fleet.policy.name)
    } else {
        fleet.policy.vendor.trim().to_string()
    };
    let names = |v: Verdict| -> Vec<String> {
        fleet
            .rows
            .iter()
            .filter(|r| r.verdict == v)
            .map(|r| r.host.clone())
            .collect()
    };
    let (pass, fail, inc) = (
        names(Verdict::Pass),
        names(Verdict::Fail),
        names(Verdict::Inconclusive),
    );
    // The policy's rules over the fleet that decide, and did not pass: a fleet can fail (or
    // be undecided) by them while no node does.
    let deciding: Vec<&crate::fleet::FleetRuleResult> = fleet.deciding_rules().collect();
    let rules_failed: Vec<&str> = deciding
        .iter()
        .filter(|r| r.passed == Some(false))
        .map(|r| r.text.as_str())
        .collect();
    let rules_open: Vec<&str> = deciding
        .iter()
        .filter(|r| r.passed.is_none())
        .map(|r| r.text.as_str())
        .collect();
    let mut paras = vec![match fleet.verdict {
        Verdict::Pass => format!(
            "Good news: every node ({}) meets {who}'s requirement.",
            fleet.rows.len()
        ),
        // Only a rule over the fleet fails (or cannot be judged): no node is named for it.
        Verdict::Fail if fail.is_empty() => {
            format!("The nodes together do not meet {who}'s requirement.")
        }
        Verdict::Fail => format!(
            "Not every node meets {who}'s requirement: {} do{} not ({}).",
            fail.len(),
            if fail.len() == 1 { "es" } else { "" },
            fail.join(", ")
        ),
        Verdict::Inconclusive if fleet.rows.is_empty() => format!(
            "We cannot tell whether the nodes meet {who}'s requirement: no node's results were given."
        ),
        Verdict::Inconclusive if inc.is_empty() => {
            format!("We cannot tell yet whether the nodes together meet {who}'s requirement.")
        }
        Verdict::Inconclusive => format!(
            "We cannot tell yet whether every node meets {who}'s requirement: {} of {} cannot be judged yet ({}).",
            inc.len(),
            fleet.rows.len(),
            inc.join(", ")
        ),
    }];
    if fleet.verdict != Verdict::Pass && !pass.is_empty() {
        paras.push(if rules_failed.is_empty() && rules_open.is_empty() {
            format!("These nodes meet it: {}.", pass.join(", "))
        } else {
            format!("On its own, each of these meets it: {}.", pass.join(", "))
        });
    }
    // A fleet that fails still has its undecided nodes named: each needs its own answer.
    if fleet.verdict == Verdict::Fail && !inc.is_empty() {
        paras.push(match inc.len() {
            1 => format!(
                "We cannot tell yet whether this node meets it on its own: {}.",
                inc[0]
            ),
            _ => format!(
                "We cannot tell yet whether these {} nodes meet it on their own: {}.",
                inc.len(),
                inc.join(", ")
            ),
        });
    }
    for t in rules_failed {
        paras.push(format!("Together they differ more than {who} allows: {t}."));
    }
    for t in rules_open {
        paras.push(format!("How alike they are cannot be judged yet: {t}."));
    }
    if !inc.is_empty() && !fleet.policy.fio_command.is_empty() {
        paras.push(format!(
            "For each node that cannot be judged yet, please run this exact command from a directory on the storage to be checked, several times over several days, and attach every JSON file it writes:\n\n    {}",
            fleet.policy.fio_command
        ));
    }
    writeln!(out, "{}", paras.join("\n\n"))
}

/// A set of drives' reply: which drives meet the requirement alone, whether they are alike
/// enough together, and for what cannot be judged, the vendor's test on each drive.
fn render_devices(set: &Fleet, out: &mut dyn Write) -> io::Result<()> {
    let who = if set.policy.vendor.trim().is_empty() {
        format!("the {} policy", set.policy.name)
    } else {
        set.policy.vendor.trim().to_string()
    };
    let host = set
        .rows
        .first()
        .map(|r| r.host.clone())
        .unwrap_or_else(|| "the node".into());
    let drives = |v: Verdict| -> Vec<String> {
        set.rows
            .iter()
            .filter(|r| r.verdict == v)
            .map(|r| r.dir.clone())
            .collect()
    };
    let (pass, inc) = (drives(Verdict::Pass), drives(Verdict::Inconclusive));
    let spread_failed: Vec<&str> = set
        .rules
        .iter()
        .filter(|r| r.passed == Some(false))
        .map(|r| r.text.as_str())
        .collect();
    let spread_open: Vec<&str> = set
        .rules
        .iter()
        .filter(|r| r.passed.is_none())
        .map(|r| r.text.as_str())
        .collect();
    let mut paras = vec![match set.verdict {
        Verdict::Pass => format!(
            "Good news: every drive of {host} that was tested ({}) meets {who}'s requirement, each on its own and all of them together.",
            pass.join(", ")
        ),
        Verdict::Fail => format!("The drives of {host} do not meet {who}'s requirement."),
        Verdict::Inconclusive => {
            format!("We cannot tell yet whether the drives of {host} meet {who}'s requirement.")
        }
    }];
    for r in set.rows.iter().filter(|r| r.verdict != Verdict::Pass) {
        paras.push(format!("{}: {}.", r.dir, r.reason));
    }
    if set.verdict != Verdict::Pass && !pass.is_empty() {
        paras.push(format!(
            "On its own, each of these meets it: {}.",
            pass.join(", ")
        ));
    }
    for t in spread_failed {
        paras.push(format!("Together they differ more than {who} allows: {t}."));
    }
    for t in spread_open {
        paras.push(format!("How alike they are cannot be judged yet: {t}."));
    }
    if (!inc.is_empty() || set.verdict == Verdict::Inconclusive)
        && !set.policy.fio_command.is_empty()
    {
        // The vendor's test reads each raw drive: no size (the whole drive), read-only.
        let mut words: Vec<&str> = set
            .policy
            .fio_command
            .split(' ')
            .filter(|w| !w.starts_with("--size="))
            .collect();
        // One output file per drive (the output's name holds a space: it ends the command).
        if let Some(i) = words.iter().position(|w| w.starts_with("--output=")) {
            words.truncate(i);
            words.push("--output=\"fio-$(hostname)-DRIVE-$(date +%Y%m%d-%H%M%S).json\"");
        }
        words.insert(2.min(words.len()), "--filename=/dev/DRIVE --readonly");
        paras.push(format!(
            "Please run this exact command as root on {host} once for each drive, with /dev/DRIVE replaced by the drive (it only reads the drive; nothing may be using it), and attach every JSON file it writes:\n\n    {}",
            words.join(" ")
        ));
    }
    writeln!(out, "{}", paras.join("\n\n"))
}
