//! The table's details of what happened inside each run, as fio's text gives them: the
//! per-interval IOPS samples, submission latency, the final fsync's share of the run, and the
//! disks' own account.

use crate::run_index::{Records, Run};

/// Past [`super::by_day::MAX_RUN_ROWS`] runs (when the table summarises them by day), the
/// details of this many runs, the latest, are shown: four lines a run for a year of runs is
/// read by no one. The warnings drawn from inside every run stay in the verdict's warnings.
pub const LATEST_SHOWN: usize = 10;

/// Lines for the table, empty when no run carries any of these details. The disks' account
/// is read from each shown run's whole record, again from `records`.
pub fn lines(runs: &[Run], records: &Records) -> std::io::Result<Vec<String>> {
    let mut reader = records.reader();
    let mut out = Vec::new();
    let first = if runs.len() > super::by_day::MAX_RUN_ROWS {
        runs.len() - LATEST_SHOWN
    } else {
        0
    };
    for (i, r) in runs.iter().enumerate().skip(first) {
        // Every figure of the run, read again where it holds only some (`Run::holding`).
        let m = &reader.metrics(r)?;
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
                    crate::numbers::short_tenths(p50),
                    crate::numbers::short_tenths(p99),
                    get("slat_max_us")
                        .map(|v| format!(", max={}", crate::numbers::short_tenths(v)))
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
        for d in reader.with(r, |whole| whole.disk_stats.clone())? {
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
    if first > 0 && !out.is_empty() {
        out.insert(
            0,
            format!(
                "  the {LATEST_SHOWN} latest of {} runs (`--format json` has every run's figures):",
                runs.len()
            ),
        );
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::by_day::MAX_RUN_ROWS;

    fn lines_of(n: usize) -> Vec<String> {
        let records: Vec<crate::history::Record> = (0..n)
            .map(|i| {
                let mut r = crate::evaluate::tests::rec("2026-12-01T10:00:00Z", 16.0);
                r.metrics.insert("end_fsync_ms".into(), 100.0 + i as f64);
                r.metrics.insert("write_runtime_ms".into(), 1000.0);
                r
            })
            .collect();
        let runs: Vec<Run> = records
            .iter()
            .enumerate()
            .map(|(i, r)| Run::of(r, i))
            .collect();
        lines(&runs, &Records::Memory(std::sync::Arc::new(records))).unwrap()
    }

    #[test]
    fn every_run_is_detailed_up_to_the_by_day_limit_then_the_latest_ones() {
        let all = lines_of(MAX_RUN_ROWS);
        assert_eq!(all.len(), MAX_RUN_ROWS);
        assert!(
            all[0].starts_with("  run 1: final fsync 0.1 s"),
            "{}",
            all[0]
        );

        let n = MAX_RUN_ROWS + 1;
        let latest = lines_of(n);
        assert_eq!(latest.len(), LATEST_SHOWN + 1);
        assert_eq!(
            latest[0],
            format!(
                "  the {LATEST_SHOWN} latest of {n} runs (`--format json` has every run's figures):"
            )
        );
        let first_shown = n - LATEST_SHOWN + 1;
        assert!(
            latest[1].starts_with(&format!("  run {first_shown}: ")),
            "{}",
            latest[1]
        );
        assert!(latest[LATEST_SHOWN].starts_with(&format!("  run {n}: ")));
    }
}
