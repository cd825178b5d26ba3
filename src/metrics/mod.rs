//! Metric names (contract.md): one namespace `<direction>_<measure>` shared by policies,
//! records, summaries and rules; and the derivation of a record's metrics from a measurement.

mod values;
pub use values::Metrics;

use crate::measure::{Direction, DirectionStats, Latency, Measurement};

/// What a metric is, for rule checking and display.
#[derive(Debug, Clone, Copy)]
pub struct Info {
    pub name: &'static str,
    pub unit: &'static str,
    pub direction: Option<Direction>,
    /// Only measured by jobs that fsync/fdatasync every N writes.
    pub needs_sync: bool,
    /// What the figure is, in words: each metric documented where it is named, though no
    /// output prints it yet.
    #[allow(dead_code)]
    pub description: &'static str,
}

const fn m(
    name: &'static str,
    unit: &'static str,
    direction: Option<Direction>,
    description: &'static str,
) -> Info {
    Info {
        name,
        unit,
        direction,
        needs_sync: false,
        description,
    }
}

const R: Option<Direction> = Some(Direction::Read);
const W: Option<Direction> = Some(Direction::Write);

/// The percentiles every run reports, with their metric suffixes.
pub const PERCENTILES: [(f64, &str); 4] =
    [(50.0, "p50"), (90.0, "p90"), (99.0, "p99"), (99.9, "p99_9")];

pub static KNOWN: &[Info] = &[
    m(
        "write_iops",
        "IOPS",
        W,
        "writes per second over the run, end fsync included (fio's IOPS=)",
    ),
    m(
        "read_iops",
        "IOPS",
        R,
        "reads per second over the run (fio's IOPS=)",
    ),
    m(
        "write_bw_bytes",
        "B/s",
        W,
        "write bandwidth, bytes per second",
    ),
    m(
        "read_bw_bytes",
        "B/s",
        R,
        "read bandwidth, bytes per second",
    ),
    m(
        "write_bw_mb_s",
        "MB/s",
        W,
        "write bandwidth, decimal MB/s as fio's (16.4MB/s)",
    ),
    m("read_bw_mb_s", "MB/s", R, "read bandwidth, decimal MB/s"),
    m(
        "write_bw_mib_s",
        "MiB/s",
        W,
        "write bandwidth, MiB/s as fio's BW=15.6MiB/s",
    ),
    m("read_bw_mib_s", "MiB/s", R, "read bandwidth, MiB/s"),
    m(
        "write_iops_formula",
        "IOPS",
        W,
        "(MB/s ÷ block size in KiB) × 1024; for 4k the Swimlane formula",
    ),
    m(
        "read_iops_formula",
        "IOPS",
        R,
        "(MB/s ÷ block size in KiB) × 1024",
    ),
    m(
        "total_iops",
        "IOPS",
        None,
        "reads and writes per second together (mixed jobs)",
    ),
    m(
        "write_iops_min",
        "IOPS",
        W,
        "the smallest of the run's IOPS samples (full 500 ms intervals, fio's iops min=)",
    ),
    m(
        "read_iops_min",
        "IOPS",
        R,
        "the smallest of the run's IOPS samples (full 500 ms intervals, fio's iops min=)",
    ),
    m(
        "write_iops_mean",
        "IOPS",
        W,
        "the mean of the run's IOPS samples (full 500 ms intervals, fio's iops avg=)",
    ),
    m(
        "read_iops_mean",
        "IOPS",
        R,
        "the mean of the run's IOPS samples (full 500 ms intervals, fio's iops avg=)",
    ),
    m(
        "write_runtime_ms",
        "ms",
        W,
        "runtime of the writes, end fsync included",
    ),
    m("read_runtime_ms", "ms", R, "runtime of the reads"),
    m("write_ios", "I/Os", W, "writes completed"),
    m("read_ios", "I/Os", R, "reads completed"),
    m(
        "end_fsync_ms",
        "ms",
        W,
        "duration of the end fsync (inside the runtime)",
    ),
    m("cpu_usr_pct", "%", None, "user CPU time over the run"),
    m("cpu_sys_pct", "%", None, "system CPU time over the run"),
    m(
        "write_clat_p50_us",
        "µs",
        W,
        "write completion latency, 50th percentile",
    ),
    m(
        "write_clat_p90_us",
        "µs",
        W,
        "write completion latency, 90th percentile",
    ),
    m(
        "write_clat_p99_us",
        "µs",
        W,
        "write completion latency, 99th percentile",
    ),
    m(
        "write_clat_p99_9_us",
        "µs",
        W,
        "write completion latency, 99.9th percentile",
    ),
    m(
        "write_clat_max_us",
        "µs",
        W,
        "write completion latency, maximum",
    ),
    m(
        "write_clat_mean_us",
        "µs",
        W,
        "write completion latency, mean",
    ),
    m(
        "read_clat_p50_us",
        "µs",
        R,
        "read completion latency, 50th percentile",
    ),
    m(
        "read_clat_p90_us",
        "µs",
        R,
        "read completion latency, 90th percentile",
    ),
    m(
        "read_clat_p99_us",
        "µs",
        R,
        "read completion latency, 99th percentile",
    ),
    m(
        "read_clat_p99_9_us",
        "µs",
        R,
        "read completion latency, 99.9th percentile",
    ),
    m(
        "read_clat_max_us",
        "µs",
        R,
        "read completion latency, maximum",
    ),
    m(
        "read_clat_mean_us",
        "µs",
        R,
        "read completion latency, mean",
    ),
    m(
        "write_lat_p50_us",
        "µs",
        W,
        "write total latency (submission + completion), 50th percentile",
    ),
    m(
        "write_lat_p90_us",
        "µs",
        W,
        "write total latency, 90th percentile",
    ),
    m(
        "write_lat_p99_us",
        "µs",
        W,
        "write total latency, 99th percentile",
    ),
    m(
        "write_lat_p99_9_us",
        "µs",
        W,
        "write total latency, 99.9th percentile",
    ),
    m("write_lat_max_us", "µs", W, "write total latency, maximum"),
    m(
        "read_lat_p50_us",
        "µs",
        R,
        "read total latency, 50th percentile",
    ),
    m(
        "read_lat_p90_us",
        "µs",
        R,
        "read total latency, 90th percentile",
    ),
    m(
        "read_lat_p99_us",
        "µs",
        R,
        "read total latency, 99th percentile",
    ),
    m(
        "read_lat_p99_9_us",
        "µs",
        R,
        "read total latency, 99.9th percentile",
    ),
    m("read_lat_max_us", "µs", R, "read total latency, maximum"),
    Info {
        name: "sync_p50_us",
        unit: "µs",
        direction: W,
        needs_sync: true,
        description: "fsync/fdatasync latency, 50th percentile",
    },
    Info {
        name: "sync_p90_us",
        unit: "µs",
        direction: W,
        needs_sync: true,
        description: "fsync/fdatasync latency, 90th percentile",
    },
    Info {
        name: "sync_p99_us",
        unit: "µs",
        direction: W,
        needs_sync: true,
        description: "fsync/fdatasync latency, 99th percentile",
    },
    Info {
        name: "sync_p99_9_us",
        unit: "µs",
        direction: W,
        needs_sync: true,
        description: "fsync/fdatasync latency, 99.9th percentile",
    },
    Info {
        name: "sync_max_us",
        unit: "µs",
        direction: W,
        needs_sync: true,
        description: "fsync/fdatasync latency, maximum",
    },
];

pub fn lookup(name: &str) -> Option<&'static Info> {
    KNOWN.iter().find(|i| i.name == name)
}

pub fn known_names() -> Vec<&'static str> {
    KNOWN.iter().map(|i| i.name).collect()
}

/// The metric of that name, or the error a policy states for a name it does not know: the
/// name and every known one.
pub fn known(name: &str) -> Result<&'static Info, String> {
    lookup(name).ok_or_else(|| {
        format!(
            "unknown metric '{name}'; known metrics: {}",
            known_names().join(", ")
        )
    })
}

pub fn unit(name: &str) -> &'static str {
    lookup(name).map(|i| i.unit).unwrap_or("")
}

/// The most a figure of a metric can be from any storage iopscheck can test, with room to
/// spare: a figure beyond it is no measurement (an overflow in the tool that wrote it, an
/// edited file) and is refused, naming the metric. The ceilings also keep every aggregate
/// finite: a sum of a billion figures of at most 1e15 is far from `f64::MAX`, and so are
/// their squares.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ceiling {
    pub max: f64,
    /// What the ceiling is, in words ("100 M IOPS").
    pub what: &'static str,
}

/// IOPS: a hundred times the fastest NVMe device of 2026 (a few million IOPS).
pub const MAX_IOPS: f64 = 1e8;
/// Bandwidth: 1 TB/s, far beyond any one node's storage (an NVMe device gives 15 GB/s).
pub const MAX_BW_BYTES: f64 = 1e12;
/// A latency: an hour for one I/O or one sync is a device that has stopped, not a latency.
pub const MAX_LATENCY_US: f64 = 3.6e9;
/// A run's duration (its runtime, its end fsync): 30 days.
pub const MAX_DURATION_MS: f64 = 30.0 * 86_400.0 * 1000.0;
/// A count (I/Os, samples): 100 M IOPS for 30 days is 2.6e14.
pub const MAX_COUNT: f64 = 1e15;
/// CPU time as a percentage of one CPU: a thousand CPUs fully busy.
pub const MAX_CPU_PCT: f64 = 1e5;
/// Any other figure (a metric this version does not know): no known unit reaches it.
pub const MAX_OTHER: f64 = 1e15;

/// The ceiling of `name`, from its unit (the suffix of its name: contract.md's namespace).
pub fn ceiling(name: &str) -> Ceiling {
    let c = |max, what| Ceiling { max, what };
    if name.ends_with("_pct") {
        c(MAX_CPU_PCT, "100000% (a thousand CPUs fully busy)")
    } else if name.ends_with("_us") {
        c(MAX_LATENCY_US, "an hour")
    } else if name.ends_with("_ms") {
        c(MAX_DURATION_MS, "30 days")
    } else if name.ends_with("_bw_bytes") {
        c(MAX_BW_BYTES, "1 TB/s")
    } else if name.ends_with("_bw_mb_s") {
        c(MAX_BW_BYTES / 1e6, "1 TB/s")
    } else if name.ends_with("_bw_mib_s") {
        c(MAX_BW_BYTES / 1_048_576.0, "1 TB/s")
    } else if name.ends_with("_samples") || name.ends_with("_ios") {
        c(MAX_COUNT, "1e15")
    } else if name.contains("iops") {
        c(MAX_IOPS, "100 M IOPS")
    } else {
        c(MAX_OTHER, "1e15")
    }
}

/// The Swimlane article's conversion, generalised to any block size:
/// IOPS = (MB/s ÷ block size in KiB) × 1024. For 4k: (MB/s ÷ 4) × 1024.
pub fn iops_formula(mb_s: f64, bs: u64) -> f64 {
    mb_s / (bs as f64 / 1024.0) * 1024.0
}

/// The flat metric map of a record, derived from a measurement.
pub fn from_measurement(m: &Measurement) -> Metrics {
    let mut out = Metrics::new();
    let bs = m.bs;
    for (dir, stats) in [(Direction::Read, &m.read), (Direction::Write, &m.write)] {
        if let Some(d) = stats {
            direction(&mut out, dir.as_str(), d, bs);
        }
    }
    if let (Some(r), Some(w)) = (&m.read, &m.write) {
        out.insert("total_iops".into(), r.iops + w.iops);
    }
    if let Some(s) = &m.sync {
        latency(&mut out, "sync", s);
    }
    let mut put = |k: &str, v: Option<f64>| {
        if let Some(v) = v.filter(|v| v.is_finite()) {
            out.insert(k.to_string(), v);
        }
    };
    put("end_fsync_ms", m.end_fsync_ms);
    put("cpu_usr_pct", m.cpu_usr_pct);
    put("cpu_sys_pct", m.cpu_sys_pct);
    out
}

fn direction(out: &mut Metrics, p: &str, d: &DirectionStats, bs: Option<u64>) {
    let mb_s = d.bw_mb_s_printed.unwrap_or(d.bw_bytes / 1e6);
    out.insert(format!("{p}_iops"), d.iops);
    out.insert(format!("{p}_bw_bytes"), d.bw_bytes);
    out.insert(format!("{p}_bw_mb_s"), mb_s);
    out.insert(format!("{p}_bw_mib_s"), d.bw_bytes / 1_048_576.0);
    if let Some(bs) = bs.filter(|&b| b > 0) {
        out.insert(format!("{p}_iops_formula"), iops_formula(mb_s, bs));
    }
    out.insert(format!("{p}_runtime_ms"), d.runtime_ms as f64);
    out.insert(format!("{p}_ios"), d.ios as f64);
    if let Some(c) = &d.clat {
        latency(out, &format!("{p}_clat"), c);
        if c.n > 0 {
            out.insert(format!("{p}_clat_mean_us"), c.mean_ns / 1000.0);
        }
    }
    if let Some(l) = &d.lat {
        latency(out, &format!("{p}_lat"), l);
    }
    if let Some(s) = &d.slat {
        latency(out, &format!("{p}_slat"), s);
        if s.n > 0 {
            out.insert(format!("{p}_slat_mean_us"), s.mean_ns / 1000.0);
        }
    }
    if let Some(s) = &d.samples {
        out.insert(format!("{p}_iops_min"), s.min);
        out.insert(format!("{p}_iops_max"), s.max);
        out.insert(format!("{p}_iops_mean"), s.mean);
        out.insert(format!("{p}_iops_stdev"), s.stdev);
        out.insert(format!("{p}_iops_samples"), s.samples as f64);
    }
}

fn latency(out: &mut Metrics, p: &str, l: &Latency) {
    if l.n == 0 && l.percentiles.is_empty() {
        return;
    }
    for (q, suffix) in PERCENTILES {
        if let Some(v) = l.percentile(q) {
            out.insert(format!("{p}_{suffix}_us"), v / 1000.0);
        }
    }
    if l.max_ns > 0.0 {
        out.insert(format!("{p}_max_us"), l.max_ns / 1000.0);
    }
}

/// A throughput figure of one direction: what a run's sustained level scales.
pub fn throughput(metric: &str) -> Option<Direction> {
    let (dir, what) = metric.split_once('_')?;
    let d = match dir {
        "read" => Direction::Read,
        "write" => Direction::Write,
        _ => return None,
    };
    matches!(
        what,
        "iops" | "iops_formula" | "bw_bytes" | "bw_mb_s" | "bw_mib_s"
    )
    .then_some(d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_articles_worked_example() {
        // 16.4 MB/s → 4198.4 IOPS
        assert!((iops_formula(16.4, 4096) - 4198.4).abs() < 1e-9);
        // the 11.7 edge: 2995.2, and 3000 needs 11.71875 MB/s
        assert!((iops_formula(11.7, 4096) - 2995.2).abs() < 1e-9);
        assert!((iops_formula(11.71875, 4096) - 3000.0).abs() < 1e-9);
        assert!(iops_formula(11.6, 4096) < 3000.0);
    }

    #[test]
    fn metrics_from_a_measurement_follow_fio() {
        // fio-3.33-sample.json: 262,145 writes, 1,073,745,920 bytes, 5064 ms.
        let d = DirectionStats::from_counts(262_145, 1_073_745_920, 5064);
        let m = Measurement {
            write: Some(d),
            bs: Some(4096),
            ..Measurement::default()
        };
        let x = from_measurement(&m);
        assert_eq!(x["write_bw_bytes"], 212_035_134.0);
        assert!((x["write_iops"] - 51_766.390205).abs() < 1e-6);
        assert!((x["write_bw_mb_s"] - 212.035134).abs() < 1e-9);
        assert!((x["write_iops_formula"] - 212.035134 / 4.0 * 1024.0).abs() < 1e-6);
        assert!(!x.contains_key("read_iops"));
    }

    #[test]
    fn every_known_metric_has_the_ceiling_of_its_unit() {
        for i in KNOWN {
            let c = ceiling(i.name);
            let want = match i.unit {
                "IOPS" => MAX_IOPS,
                "B/s" => MAX_BW_BYTES,
                "MB/s" => MAX_BW_BYTES / 1e6,
                "MiB/s" => MAX_BW_BYTES / 1_048_576.0,
                "µs" => MAX_LATENCY_US,
                "ms" => MAX_DURATION_MS,
                "I/Os" => MAX_COUNT,
                "%" => MAX_CPU_PCT,
                u => panic!("{}: unit {u} has no ceiling", i.name),
            };
            assert_eq!(c.max, want, "{}", i.name);
        }
        // the metrics a measurement derives beyond the known ones
        assert_eq!(ceiling("write_iops_samples").max, MAX_COUNT);
        assert_eq!(ceiling("write_iops_stdev").max, MAX_IOPS);
        assert_eq!(ceiling("write_slat_mean_us").max, MAX_LATENCY_US);
        assert_eq!(ceiling("something_new").max, MAX_OTHER);
    }

    #[test]
    fn every_metric_has_a_unique_name() {
        let mut names = known_names();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), KNOWN.len());
    }
}
