//! Measurements: what fio reports for a job, whichever way it was obtained (the native engine,
//! fio run by us, or a parsed fio output). Metrics for rules and records derive from it.

pub mod changepoint;
pub mod device;
pub mod disk;
pub mod histogram;
pub mod limits;
pub mod series;
pub mod steady;

pub use series::{DiskStat, IopsSamples, Series};

use serde::{Deserialize, Serialize};

/// Read or write: of one I/O in the engine, of a measurement's figures, of a metric. The
/// value is the index of per-direction arrays (`[read, write]`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    Read = 0,
    Write = 1,
}

impl Direction {
    /// The word metric names and messages use ("read", "write").
    pub fn as_str(self) -> &'static str {
        match self {
            Direction::Read => "read",
            Direction::Write => "write",
        }
    }
}

/// Latency statistics of one kind (clat, lat, slat or sync), in nanoseconds.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Latency {
    /// Number of samples.
    pub n: u64,
    pub min_ns: f64,
    pub max_ns: f64,
    pub mean_ns: f64,
    pub stddev_ns: f64,
    /// (percentile, value in ns), e.g. (99.0, 1234.0); values are histogram bucket midpoints
    /// as in fio.
    pub percentiles: Vec<(f64, f64)>,
}

impl Latency {
    /// The value reported for a percentile, if it was computed.
    pub fn percentile(&self, p: f64) -> Option<f64> {
        self.percentiles
            .iter()
            .find(|(q, _)| (q - p).abs() < 1e-9)
            .map(|&(_, v)| v)
    }
}

/// Where a bandwidth figure came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum BwBasis {
    /// Computed from exact byte counts (native runs, fio JSON with `bw_bytes` or `io_bytes`).
    #[default]
    Exact,
    /// Read from a figure fio printed, rounded to 3–4 significant digits (text output), or a
    /// truncated KiB/s integer (terse, old JSON).
    Printed,
}

/// One direction (read or write) of a job.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DirectionStats {
    /// I/Os issued (equal to completed after the drain).
    pub ios: u64,
    /// Bytes completed.
    pub bytes: u64,
    /// Milliseconds from the first I/O to the end of the end fsync, rounded up as fio does.
    pub runtime_ms: u64,
    /// I/Os per second: ios × 1000 / runtime_ms.
    pub iops: f64,
    /// Bytes per second.
    pub bw_bytes: f64,
    /// The decimal MB/s figure as fio printed it, when the output only had printed figures
    /// (the Swimlane article reads this number).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bw_mb_s_printed: Option<f64>,
    pub bw_basis: BwBasis,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clat: Option<Latency>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lat: Option<Latency>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slat: Option<Latency>,
    /// fio's per-interval IOPS samples (`iops : min=…, max=…, avg=…, stdev=…, samples=…`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub samples: Option<IopsSamples>,
}

impl DirectionStats {
    /// Fills iops and bw from the counts, as fio's stat.c computes them.
    pub fn from_counts(ios: u64, bytes: u64, runtime_ms: u64) -> DirectionStats {
        let (iops, bw) = if runtime_ms == 0 {
            (0.0, 0.0)
        } else {
            (
                ios as f64 * 1000.0 / runtime_ms as f64,
                // fio: (1000 × io_bytes) / runtime, integer
                ((bytes as u128 * 1000) / runtime_ms as u128) as f64,
            )
        };
        DirectionStats {
            ios,
            bytes,
            runtime_ms,
            iops,
            bw_bytes: bw,
            bw_basis: BwBasis::Exact,
            ..DirectionStats::default()
        }
    }
}

/// Everything measured in one run of a job (all of its numjobs, reported as a group).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Measurement {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read: Option<DirectionStats>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write: Option<DirectionStats>,
    /// Latency of fsync/fdatasync issued every N writes (not the end fsync).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sync: Option<Latency>,
    /// How long the end fsync took, inside the timed interval.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end_fsync_ms: Option<f64>,
    /// Layout (fallocate) time, outside the timed interval.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub layout_ms: Option<f64>,
    /// CPU time of the process over the run, as percentages of the run's wall time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_usr_pct: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_sys_pct: Option<f64>,
    /// Block size, needed for the formula metric.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bs: Option<u64>,
    /// I/Os completed per interval inside the run (native engine).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub series: Option<Series>,
    /// The disks' own account of the run (fio's `Disk stats`), one entry per disk.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub disk: Vec<DiskStat>,
    /// The disk's own series through the run (native engine).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device: Option<device::DeviceSeries>,
}
