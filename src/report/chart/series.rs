//! IOPS inside one run, every 500 ms, with the final fsync as its own phase.

use std::fmt::Write as _;

use super::*;

/// The threshold a run's IOPS series is drawn against: the first rule in IOPS, if any.
pub fn series_threshold(ev: &crate::evaluate::Evaluation) -> Option<f64> {
    ev.rules
        .iter()
        .find(|r| r.unit == "IOPS")
        .map(|r| r.threshold)
}

const SERIES: Frame = Frame {
    w: 640.0,
    h: 170.0,
    left: 56.0,
    right: 12.0,
    top: 14.0,
    bottom: 30.0,
};

/// One run's IOPS in each interval against `threshold`, the final fsync a shaded band after
/// the I/O. The last interval is drawn only when it is a full one: a partial interval's
/// handful of I/Os over a few milliseconds is noise (fio leaves it out of its samples too).
pub fn series(s: &crate::measure::series::Series, threshold: Option<f64>, label: &str) -> String {
    let f = SERIES;
    let dir = s.main_dir();
    let rates = s.rates(dir);
    let full = if s.last_ms >= s.interval_ms || rates.len() <= 1 {
        rates.len()
    } else {
        rates.len() - 1
    };
    let interval_s = s.interval_ms as f64 / 1000.0;
    let fsync_s = s.end_fsync_ms.unwrap_or(0.0) / 1000.0;
    let io_s =
        (rates.len().saturating_sub(1) as f64 * s.interval_ms as f64 + s.last_ms as f64) / 1000.0;
    let total_s = (io_s + fsync_s).max(0.001);
    let a = Axis::new(rates[..full].iter().copied().chain(threshold), true);
    let x = |t: f64| f.left + t / total_s * f.plot_w();

    let mut h = String::new();
    open(&mut h, "series-run", &f, label);
    value_grid(&mut h, &f, &a);
    // Seconds along the bottom, on a round step that gives at most about eight labels.
    let step = nice_step(total_s / 8.0);
    let decimals = if step >= 1.0 { 0 } else { 1 };
    let mut labels = Vec::new();
    let mut t = 0.0;
    while t <= total_s + 1e-9 {
        labels.push((x(t), format!("{t:.decimals$}s")));
        t += step;
    }
    x_labels(&mut h, &f, &labels);
    let mut taken = Vec::new();
    if fsync_s > 0.0 {
        let dur = if fsync_s < 1.0 {
            format!("{:.0} ms", fsync_s * 1000.0)
        } else {
            format!("{fsync_s:.1} s")
        };
        let band_w = (x(total_s) - x(io_s)).max(1.0);
        let _ = writeln!(
            h,
            "<rect class=\"zone fsync\" x=\"{:.1}\" y=\"{:.1}\" width=\"{band_w:.1}\" height=\"{:.1}\"><title>final fsync {dur}</title></rect>",
            x(io_s),
            f.top,
            f.plot_h()
        );
        // Its label above the plot, ending at the band's right edge.
        let lx = f.x_end();
        let l = format!("final fsync {dur}");
        let _ = writeln!(
            h,
            "<text class=\"fsync-label\" x=\"{lx:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
            f.top - 3.0,
            text(&l)
        );
        taken.push((lx - text_w(&l), lx, f.top - 13.0, f.top - 1.0));
    }
    let mut pts = Vec::new();
    for (k, v) in rates[..full].iter().enumerate() {
        let mid = (k as f64 + 0.5) * interval_s;
        pts.push((x(mid.min(io_s)), a.y(&f, *v)));
    }
    // The policy's threshold judges a run's figure over the whole run, never a 500 ms
    // sample: drawn as a reference only, and labelled so.
    if let Some(th) = threshold {
        let label = format!("reference: {} for the whole run", fmt_value(th));
        let tip = format!(
            "the policy's threshold {} applies to the run's figure over the whole run, not to a 500 ms sample: a reference, not a line each sample must clear",
            fmt_value(th)
        );
        hline(
            &mut h,
            &f,
            "threshold reference",
            a.y(&f, th),
            &label,
            &tip,
            &pts,
            &taken,
        );
    }
    let list: Vec<String> = pts.iter().map(|(x, y)| format!("{x:.1},{y:.1}")).collect();
    let _ = writeln!(
        h,
        "<polyline class=\"series-line\" points=\"{}\"/>",
        list.join(" ")
    );
    h.push_str("</svg>\n");
    h
}
