//! The table's details of what happened inside each run, as fio's text gives them: the
//! per-interval IOPS samples, submission latency, the final fsync's share of the run, and the
//! disks' own account.

use crate::history::Record;

/// Lines for the table, empty when no run carries any of these details.
pub fn lines(runs: &[Record]) -> Vec<String> {
    let mut out = Vec::new();
    for (i, r) in runs.iter().enumerate() {
        let m = &r.metrics;
        let mut parts: Vec<String> = Vec::new();
        for dir in ["write", "read"] {
            let get = |k: &str| m.get(&format!("{dir}_{k}")).copied();
            if let (Some(min), Some(max), Some(mean), Some(stdev), Some(n)) = (
                get("iops_min"),
                get("iops_max"),
                get("iops_mean"),
                get("iops_stdev"),
                get("iops_samples"),
            ) {
                parts.push(format!(
                    "{dir} iops : min={min:.0}, max={max:.0}, avg={mean:.2}, stdev={stdev:.2}, samples={n:.0}"
                ));
            }
            if let (Some(p50), Some(p99)) = (get("slat_p50_us"), get("slat_p99_us")) {
                parts.push(format!(
                    "{dir} slat (µs): p50={}, p99={}{}",
                    short(p50),
                    short(p99),
                    get("slat_max_us")
                        .map(|v| format!(", max={}", short(v)))
                        .unwrap_or_default()
                ));
            }
        }
        if let (Some(f), Some(t)) = (
            m.get("end_fsync_ms"),
            m.get("write_runtime_ms")
                .or_else(|| m.get("read_runtime_ms")),
        ) && *t > 0.0
        {
            parts.push(format!(
                "final fsync {:.1} s of the run's {:.1} s ({:.0}%)",
                f / 1000.0,
                t / 1000.0,
                f / t * 100.0
            ));
        }
        for d in &r.disk_stats {
            parts.push(format!("disk {}", d.fio_line()));
        }
        if parts.is_empty() {
            continue;
        }
        let head = format!("  run {}: ", i + 1);
        let pad = " ".repeat(head.chars().count());
        let width = crate::terminal::stdout_width();
        for (j, p) in parts.iter().enumerate() {
            let first = if j == 0 { &head } else { &pad };
            out.push(crate::terminal::wrap(first, p, width));
        }
    }
    out
}

fn short(v: f64) -> String {
    if v >= 100.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.1}")
    }
}
