//! What fio's outputs say beyond the job's figures: the per-interval IOPS samples
//! (`iops : min=…, samples=…`, JSON `iops_min`…) and the disks' own account (`Disk stats`,
//! JSON `disk_util`). Only what the output states is kept.

use serde_json::{Map, Value};

use crate::measure::{DiskStat, IopsSamples};

/// `min=56792, max=131072, avg=91700.70, stdev=29678.44, samples=10` (after `iops :`).
pub fn samples_line(rest: &str) -> Option<IopsSamples> {
    let field = |k: &str| -> Option<f64> {
        rest.split(',')
            .map(str::trim)
            .find_map(|f| f.strip_prefix(k))
            .and_then(|v| v.trim().parse::<f64>().ok())
            .filter(|v| v.is_finite() && *v >= 0.0)
    };
    let samples = field("samples=")?;
    if samples < 1.0 {
        return None;
    }
    Some(IopsSamples {
        min: field("min=")?,
        max: field("max=")?,
        mean: field("avg=")?,
        stdev: field("stdev=")?,
        samples: samples as u64,
    })
}

/// JSON `iops_min`, `iops_max`, `iops_mean`, `iops_stddev`, `iops_samples` (fio ≥ 3.0).
pub fn samples_json(d: &Map<String, Value>) -> Option<IopsSamples> {
    let f = |k: &str| {
        d.get(k)
            .and_then(Value::as_f64)
            .filter(|v| v.is_finite() && *v >= 0.0)
    };
    let samples = f("iops_samples")?;
    if samples < 1.0 {
        return None;
    }
    Some(IopsSamples {
        min: f("iops_min")?,
        max: f("iops_max")?,
        mean: f("iops_mean")?,
        stdev: f("iops_stddev")?,
        samples: samples as u64,
    })
}

/// JSON `disk_util[]`.
pub fn from_json(v: Option<&Value>) -> Vec<DiskStat> {
    let Some(list) = v.and_then(Value::as_array) else {
        return Vec::new();
    };
    list.iter()
        .filter_map(|d| {
            let d = d.as_object()?;
            let n = |k: &str| d.get(k).and_then(Value::as_u64).unwrap_or(0);
            Some(DiskStat {
                name: d.get("name")?.as_str()?.to_string(),
                read_ios: n("read_ios"),
                write_ios: n("write_ios"),
                read_merges: n("read_merges"),
                write_merges: n("write_merges"),
                read_ticks_ms: n("read_ticks"),
                write_ticks_ms: n("write_ticks"),
                in_queue_ms: n("in_queue"),
                util_pct: d
                    .get("util")
                    .and_then(Value::as_f64)
                    .filter(|u| u.is_finite() && *u >= 0.0)
                    .unwrap_or(0.0),
            })
        })
        .collect()
}

/// The lines after `Disk stats (read/write):`, e.g.
/// `vda: ios=0/3301, merge=0/142, ticks=0/69202, in_queue=71576, util=50.52%`.
pub fn from_text(text: &str) -> Vec<DiskStat> {
    let mut out = Vec::new();
    let mut inside = false;
    for line in text.lines() {
        let t = line.trim();
        if t.starts_with("Disk stats") {
            inside = true;
            continue;
        }
        if !inside {
            continue;
        }
        match disk_line(t) {
            Some(d) => out.push(d),
            None => inside = false,
        }
    }
    out
}

fn disk_line(t: &str) -> Option<DiskStat> {
    let (name, rest) = t.split_once(':')?;
    let name = name.trim();
    if name.is_empty() || name.contains(char::is_whitespace) {
        return None;
    }
    let field = |k: &str| -> Option<&str> {
        rest.split(',')
            .map(str::trim)
            .find_map(|f| f.strip_prefix(k))
    };
    let pair = |k: &str| -> Option<(u64, u64)> {
        let (a, b) = field(k)?.split_once('/')?;
        Some((a.trim().parse().ok()?, b.trim().parse().ok()?))
    };
    let (read_ios, write_ios) = pair("ios=")?;
    let (read_merges, write_merges) = pair("merge=").unwrap_or((0, 0));
    let (read_ticks_ms, write_ticks_ms) = pair("ticks=").unwrap_or((0, 0));
    Some(DiskStat {
        name: name.to_string(),
        read_ios,
        write_ios,
        read_merges,
        write_merges,
        read_ticks_ms,
        write_ticks_ms,
        in_queue_ms: field("in_queue=")
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(0),
        util_pct: field("util=")
            .and_then(|v| v.trim().trim_end_matches('%').parse::<f64>().ok())
            .filter(|u| u.is_finite() && *u >= 0.0)
            .unwrap_or(0.0),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fios_disk_stats_and_samples_lines_are_read() {
        let text = "Run status group 0 (all jobs):\n  WRITE: bw=1MiB/s\n\nDisk stats (read/write):\n  vda: ios=0/3301, merge=0/142, ticks=0/69202, in_queue=71576, util=50.52%\n";
        let d = from_text(text);
        assert_eq!(d.len(), 1);
        assert_eq!(
            d[0].fio_line(),
            "vda: ios=0/3301, merge=0/142, ticks=0/69202, in_queue=71576, util=50.52%"
        );
        let s = samples_line(" min=56792, max=131072, avg=91700.70, stdev=29678.44, samples=10")
            .unwrap();
        assert_eq!(
            s.fio_line(),
            "iops : min=56792, max=131072, avg=91700.70, stdev=29678.44, samples=10"
        );
    }
}
