//! A fleet's nodes: one bar each, failures first, against the threshold.

use std::fmt::Write as _;

use super::*;

/// One node of a fleet as its chart shows it.
pub struct NodeBar {
    pub label: String,
    pub value: Option<f64>,
    pub threshold: Option<f64>,
    /// pass, fail or inconclusive.
    pub verdict: &'static str,
    pub tip: String,
}

/// How many nodes the chart draws; the table lists them all.
pub const NODES_DRAWN: usize = 200;

/// One horizontal bar per node, failures first, then the inconclusive, then the passing
/// (the order given within each), against the threshold; a node without a figure is a row
/// with its label and "no figure".
pub fn nodes(rows: &[NodeBar], unit: &str) -> String {
    let mut order: Vec<&NodeBar> = rows.iter().collect();
    let rank = |v: &str| match v {
        "fail" => 0,
        "inconclusive" => 1,
        _ => 2,
    };
    order.sort_by_key(|r| rank(r.verdict));
    order.truncate(NODES_DRAWN);
    let label_w = order
        .iter()
        .map(|r| text_w(&short(&r.label)))
        .fold(60.0, f64::max)
        .min(260.0);
    let row_h = 22.0;
    let f = Frame {
        w: 760.0,
        h: 50.0 + row_h * order.len() as f64,
        left: label_w + 12.0,
        right: 70.0,
        top: 10.0,
        bottom: 40.0,
    };
    let a = Axis::new(
        order.iter().flat_map(|r| [r.value, r.threshold]).flatten(),
        true,
    );
    let x = |v: f64| f.left + f.plot_w() * (v - a.lo) / (a.hi - a.lo);
    let unit_s = if unit.is_empty() {
        String::new()
    } else {
        format!(" {unit}")
    };
    let mut s = String::new();
    open(
        &mut s,
        "nodes",
        &f,
        &format!("the deciding figure of each node{unit_s}, failures first, against the threshold"),
    );
    // Vertical grid at the value ticks, labelled under the plot.
    let mut labels = Vec::new();
    for t in &a.ticks {
        let _ = writeln!(
            s,
            "<line class=\"grid\" x1=\"{tx:.1}\" y1=\"{:.1}\" x2=\"{tx:.1}\" y2=\"{:.1}\"/>",
            f.top,
            f.y_end(),
            tx = x(*t)
        );
        labels.push((x(*t), a.label(*t)));
    }
    x_labels(&mut s, &f, &labels);
    let _ = writeln!(
        s,
        "<text class=\"axis-label\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>",
        f.left + f.plot_w() / 2.0,
        f.h - 6.0,
        text(&format!(
            "{}{}the node's threshold: the red mark across its bar",
            unit.trim(),
            if unit.trim().is_empty() { "" } else { "; " }
        ))
    );
    for (i, r) in order.iter().enumerate() {
        let cy = f.top + row_h * (i as f64 + 0.5);
        let _ = writeln!(
            s,
            "<g class=\"node {}\"><title>{}</title>",
            r.verdict,
            text(&r.tip)
        );
        let _ = writeln!(
            s,
            "<text class=\"node-label\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
            f.left - 6.0,
            cy + 4.0,
            text(&short(&r.label))
        );
        match r.value {
            Some(v) => {
                let (x0, x1) = (x(a.lo), x(v));
                let _ = writeln!(
                    s,
                    "<rect class=\"bar {}\" x=\"{x0:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{:.1}\"/>",
                    r.verdict,
                    cy - row_h * 0.3,
                    (x1 - x0).max(1.0),
                    row_h * 0.6
                );
                let _ = writeln!(
                    s,
                    "<text class=\"bar-value\" x=\"{:.1}\" y=\"{:.1}\">{}</text>",
                    x1 + 4.0,
                    cy + 4.0,
                    text(&fmt_value(v))
                );
            }
            None => {
                let _ = writeln!(
                    s,
                    "<text class=\"bar-value none\" x=\"{:.1}\" y=\"{:.1}\">no figure</text>",
                    f.left + 4.0,
                    cy + 4.0
                );
            }
        }
        // The node's own threshold as a tick across its row.
        if let Some(t) = r.threshold {
            let _ = writeln!(
                s,
                "<line class=\"threshold\" x1=\"{tx:.1}\" y1=\"{:.1}\" x2=\"{tx:.1}\" y2=\"{:.1}\"/>",
                cy - row_h / 2.0,
                cy + row_h / 2.0,
                tx = x(t)
            );
        }
        s.push_str("</g>\n");
    }
    let _ = writeln!(
        s,
        "<line class=\"axis\" x1=\"{l:.1}\" y1=\"{:.1}\" x2=\"{l:.1}\" y2=\"{:.1}\"/>",
        f.top,
        f.y_end(),
        l = f.left
    );
    s.push_str("</svg>\n");
    s
}

/// A node label short enough for the chart's left margin (the tooltip has it whole).
fn short(label: &str) -> String {
    const MAX: usize = 38;
    if label.chars().count() <= MAX {
        label.to_string()
    } else {
        let head: String = label.chars().take(MAX - 1).collect();
        format!("{head}…")
    }
}
