//! `policy diff`: how one policy departs from another (an edited copy from the vendor's
//! built-in, say) in its rules, thresholds, job, engines and evidence. Pure: two parsed
//! policies in, lines of text out.

use serde_json::Value;

use super::schema::{FleetRule, Policy, Rule};

/// One section of the differences ("rules", "job", …) and its lines.
#[derive(Debug, Clone, PartialEq)]
pub struct Section {
    pub name: &'static str,
    pub lines: Vec<String>,
}

/// The differences from `a` to `b`, section by section; empty when they judge alike.
pub fn diff(a: &Policy, b: &Policy) -> Vec<Section> {
    let mut out = Vec::new();
    let mut push = |name, lines: Vec<String>| {
        if !lines.is_empty() {
            out.push(Section { name, lines });
        }
    };
    push("rules", rules(&a.rules, &b.rules));
    push("fleet", fleet(&a.fleet, &b.fleet));
    push(
        "devices",
        super::devices::diff(a.devices.as_ref(), b.devices.as_ref()),
    );
    push("job", fields(&a.job, &b.job));
    let engines = |p: &Policy| -> String {
        let e: Vec<String> = p.accepted_engines().iter().map(|e| e.to_string()).collect();
        e.join(", ")
    };
    let mut run = Vec::new();
    if engines(a) != engines(b) {
        run.push(format!("engines: [{}] → [{}]", engines(a), engines(b)));
    }
    if a.runs != b.runs {
        run.push(format!("runs: {} → {}", a.runs, b.runs));
    }
    push("runs", run);
    push("evidence", fields(&a.evidence, &b.evidence));
    let mut source = Vec::new();
    for (key, x, y) in [
        ("name", &a.name, &b.name),
        ("vendor", &a.vendor, &b.vendor),
        ("source.url", &a.source.url, &b.source.url),
    ] {
        if x != y {
            source.push(format!("{key}: {x} → {y}"));
        }
    }
    if a.source.seen != b.source.seen {
        source.push(format!(
            "source.seen: {} → {}",
            a.source.seen, b.source.seen
        ));
    }
    if a.source.test != b.source.test {
        source.push(format!(
            "source.test: {} → {}",
            a.source.test, b.source.test
        ));
    }
    push("source", source);
    out
}

/// Rules are paired by metric and level, in order (a policy may give a metric twice, as a
/// fail and a warn rule): a rule of `a` without a partner is removed, one of `b` added.
fn rules(a: &[Rule], b: &[Rule]) -> Vec<String> {
    let mut lines = Vec::new();
    let mut used = vec![false; b.len()];
    for ra in a {
        let partner = b
            .iter()
            .enumerate()
            .find(|(j, rb)| !used[*j] && rb.metric == ra.metric && rb.level == ra.level)
            .or_else(|| {
                b.iter()
                    .enumerate()
                    .find(|(j, rb)| !used[*j] && rb.metric == ra.metric)
            });
        let Some((j, rb)) = partner else {
            lines.push(format!("removed: {}", describe(ra)));
            continue;
        };
        used[j] = true;
        let name = format!("{} ({})", ra.metric, ra.level.as_str());
        if ra.threshold != rb.threshold || ra.op != rb.op || ra.per != rb.per {
            lines.push(format!(
                "{name}: {} → {}{}",
                ra.describe_threshold(),
                rb.describe_threshold(),
                easier(ra, rb)
                    .map(|e| format!(" ({e})"))
                    .unwrap_or_default()
            ));
        }
        if ra.level != rb.level {
            lines.push(format!(
                "{name}: level {} → {}",
                ra.level.as_str(),
                rb.level.as_str()
            ));
        }
    }
    for (j, rb) in b.iter().enumerate() {
        if !used[j] {
            lines.push(format!("added: {}", describe(rb)));
        }
    }
    lines
}

/// Fleet rules, paired by metric.
fn fleet(a: &[FleetRule], b: &[FleetRule]) -> Vec<String> {
    let show = |r: &FleetRule| {
        format!(
            "{} max/min ≤ {} (level {})",
            r.metric,
            crate::numbers::fmt_precise(r.max_over_min),
            r.level.as_str()
        )
    };
    let mut lines = Vec::new();
    for ra in a {
        match b.iter().find(|rb| rb.metric == ra.metric) {
            None => lines.push(format!("removed: {}", show(ra))),
            Some(rb) if rb != ra => lines.push(format!("{} → {}", show(ra), show(rb))),
            Some(_) => {}
        }
    }
    for rb in b {
        if !a.iter().any(|ra| ra.metric == rb.metric) {
            lines.push(format!("added: {}", show(rb)));
        }
    }
    lines
}

fn describe(r: &Rule) -> String {
    format!(
        "{} {} (level {})",
        r.metric,
        r.describe_threshold(),
        r.level.as_str()
    )
}

/// Whether the second rule is easier or harder to pass than the first, where the two can be
/// compared (the same operator's direction and a threshold of the same kind).
fn easier(a: &Rule, b: &Rule) -> Option<&'static str> {
    if a.op.higher_is_better() != b.op.higher_is_better() || a.per != b.per {
        return None;
    }
    let (x, y) = (a.threshold, b.threshold);
    if x == y {
        return None;
    }
    let lower = y < x;
    Some(if lower == a.op.higher_is_better() {
        "easier to pass"
    } else {
        "harder to pass"
    })
}

/// Field-by-field differences of two values of one type, as their serialized fields.
fn fields<T: serde::Serialize>(a: &T, b: &T) -> Vec<String> {
    let (Ok(Value::Object(a)), Ok(Value::Object(b))) =
        (serde_json::to_value(a), serde_json::to_value(b))
    else {
        return Vec::new();
    };
    let show = |v: Option<&Value>| match v {
        None => "(not set)".to_string(),
        Some(Value::String(s)) => s.clone(),
        Some(v) => v.to_string(),
    };
    let mut keys: Vec<&String> = a.keys().chain(b.keys()).collect();
    keys.sort();
    keys.dedup();
    keys.into_iter()
        .filter(|k| a.get(*k) != b.get(*k))
        .map(|k| format!("{k}: {} → {}", show(a.get(k)), show(b.get(k))))
        .collect()
}
