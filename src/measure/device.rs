//! The device's own series: what the disk under the target completed in each 500 ms of a
//! native run (/proc/diskstats), with the page cache's dirty and writeback memory beside it
//! (/proc/meminfo). With buffered I/O the application's series shows the page cache; this one
//! shows the disk. It runs from the first timed I/O to the end of the end fsync, on the
//! same 500 ms grid as the application's series.

use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use super::series::INTERVAL_MS;

/// One disk's counts per interval, and the page cache's state at each interval's end.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DeviceSeries {
    pub interval_ms: u32,
    /// The disk, as /proc/diskstats names it (the one the target's filesystem is on).
    pub disk: String,
    /// Reads and writes the disk completed in each interval.
    pub read: Vec<u32>,
    pub write: Vec<u32>,
    /// KiB read and written in each interval.
    pub kib: Vec<u32>,
    /// Time the disk had I/O in flight in each interval, ms (util = busy / interval).
    pub busy_ms: Vec<u32>,
    /// The page cache's Dirty and Writeback at each interval's end, KiB (the whole system's).
    pub dirty_kib: Vec<u64>,
    pub writeback_kib: Vec<u64>,
    /// Length of the last interval, ms (it ends with the end fsync).
    pub last_ms: u32,
    /// The kernel's dirty-page thresholds when the run began, KiB: above the background one
    /// writeback starts, and writers are throttled from halfway between it and the other.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dirty_background_kib: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dirty_threshold_kib: Option<u64>,
}

/// The disk's own series of a run in a few figures, as a record keeps it: the whole series
/// stays in the measurement.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DeviceSummary {
    /// The disk, as /proc/diskstats names it.
    pub disk: String,
    pub interval_ms: u32,
    /// Intervals sampled, end fsync included.
    pub intervals: usize,
    /// Reads and writes the disk completed a second, over the whole series.
    pub ios_per_s: f64,
    /// Share of the time the disk had I/O in flight, percent.
    pub busy_pct: f64,
    /// The most the page cache held dirty and under writeback at an interval's end, KiB.
    pub dirty_kib_max: u64,
    pub writeback_kib_max: u64,
}

impl DeviceSeries {
    /// The series in a few figures.
    pub fn summary(&self) -> DeviceSummary {
        let ms = (self.write.len().saturating_sub(1) as f64 * self.interval_ms as f64
            + self.last_ms as f64)
            .max(1.0);
        let ios: f64 = self.ios().iter().sum();
        let busy: f64 = self.busy_ms.iter().map(|&b| b as f64).sum();
        DeviceSummary {
            disk: self.disk.clone(),
            interval_ms: self.interval_ms,
            intervals: self.write.len(),
            ios_per_s: ios * 1000.0 / ms,
            busy_pct: (busy / ms * 100.0).min(100.0),
            dirty_kib_max: self.dirty_kib.iter().copied().max().unwrap_or(0),
            writeback_kib_max: self.writeback_kib.iter().copied().max().unwrap_or(0),
        }
    }

    /// Reads and writes the disk completed in each interval.
    pub fn ios(&self) -> Vec<f64> {
        self.read
            .iter()
            .zip(&self.write)
            .map(|(r, w)| (*r + *w) as f64)
            .collect()
    }
}

/// The /proc/diskstats counters the series uses, of one disk at one moment.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Counters {
    pub reads: u64,
    pub writes: u64,
    /// 512-byte sectors read and written.
    pub sectors: u64,
    /// Milliseconds with I/O in flight (io_ticks).
    pub busy_ms: u64,
}

/// The counters of disk `name` in /proc/diskstats' text.
pub fn counters(text: &str, name: &str) -> Option<Counters> {
    let (_, v) = super::disk::parse(text, &[name.to_string()]).pop()?;
    Some(Counters {
        reads: v[0],
        writes: v[4],
        sectors: v[2] + v[6],
        busy_ms: v[9],
    })
}

/// Dirty and Writeback from /proc/meminfo's text, KiB.
pub fn dirty(meminfo: &str) -> Option<(u64, u64)> {
    let field = |key: &str| {
        meminfo.lines().find_map(|l| {
            let rest = l.strip_prefix(key)?.strip_prefix(':')?;
            rest.split_whitespace().next()?.parse::<u64>().ok()
        })
    };
    Some((field("Dirty")?, field("Writeback")?))
}

/// The dirty-page thresholds from /proc/vmstat's text, in pages: (background, throttle).
pub fn thresholds(vmstat: &str) -> (Option<u64>, Option<u64>) {
    let field = |key: &str| {
        vmstat.lines().find_map(|l| {
            let mut w = l.split_whitespace();
            (w.next()? == key).then(|| w.next()?.parse::<u64>().ok())?
        })
    };
    (
        field("nr_dirty_background_threshold"),
        field("nr_dirty_threshold"),
    )
}

struct Reading {
    at: Instant,
    disk: Counters,
    dirty: (u64, u64),
}

fn read(name: &str) -> Option<Reading> {
    let text = std::fs::read_to_string("/proc/diskstats").ok()?;
    let disk = counters(&text, name)?;
    let mem = std::fs::read_to_string("/proc/meminfo").ok();
    Some(Reading {
        at: Instant::now(),
        disk,
        dirty: mem.as_deref().and_then(dirty).unwrap_or_default(),
    })
}

/// Samples disk `name` every 500 ms from when `start` returns (the jobs' barrier) until
/// `stop` receives (or its sender is dropped), then once more. The counters are read first,
/// before `start`: the jobs start as it returns, and a sampler woken late on a loaded machine
/// would otherwise miss their first I/Os. Blocks: run it on its own thread. None when the
/// disk's counters cannot be read (`start` is called all the same).
pub fn sample(name: &str, stop: &Receiver<()>, start: impl FnOnce()) -> Option<DeviceSeries> {
    let before = read(name);
    start();
    let mut first = before?;
    // the grid starts with the jobs
    first.at = Instant::now();
    let page_kib = crate::syscalls::page_size() / 1024;
    let (bg, hard) = std::fs::read_to_string("/proc/vmstat")
        .map(|t| thresholds(&t))
        .unwrap_or_default();
    let mut out = DeviceSeries {
        interval_ms: INTERVAL_MS,
        disk: name.to_string(),
        dirty_background_kib: bg.map(|p| p * page_kib),
        dirty_threshold_kib: hard.map(|p| p * page_kib),
        ..DeviceSeries::default()
    };
    let interval = Duration::from_millis(INTERVAL_MS as u64);
    let start = first.at;
    let mut prev = first;
    let mut next = start + interval;
    loop {
        let wait = next.saturating_duration_since(Instant::now());
        let last = match stop.recv_timeout(wait) {
            Err(RecvTimeoutError::Timeout) => false,
            Ok(()) | Err(RecvTimeoutError::Disconnected) => true,
        };
        let Some(now) = read(name) else { break };
        let d = |a: u64, b: u64| b.saturating_sub(a).min(u32::MAX as u64) as u32;
        out.read.push(d(prev.disk.reads, now.disk.reads));
        out.write.push(d(prev.disk.writes, now.disk.writes));
        out.kib.push(d(prev.disk.sectors, now.disk.sectors) / 2);
        out.busy_ms.push(d(prev.disk.busy_ms, now.disk.busy_ms));
        out.dirty_kib.push(now.dirty.0);
        out.writeback_kib.push(now.dirty.1);
        if last {
            let began = start + interval * (out.read.len() as u32 - 1);
            out.last_ms = now.at.saturating_duration_since(began).as_millis() as u32;
            break;
        }
        prev = now;
        // The grid stays the first reading + k × 500 ms: a late wake-up (a loaded machine)
        // moves a few I/Os into the next interval, and the next wait is shorter.
        next += interval;
    }
    (!out.read.is_empty()).then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn diskstats_meminfo_and_vmstat_give_the_series_figures() {
        let ds = "   7       0 loop0 120 0 960 40 3000 10 24000 900 0 1400 940 0 0 0 0 0 0\n 254 0 vda 1 2 3 4 5 6 7 8 0 10 11\n";
        assert_eq!(
            counters(ds, "loop0"),
            Some(Counters {
                reads: 120,
                writes: 3000,
                sectors: 24960,
                busy_ms: 1400
            })
        );
        assert_eq!(counters(ds, "loop1"), None);
        let mem = "MemTotal:       48000000 kB\nDirty:            191148 kB\nWriteback:          64 kB\nWritebackTmp:   9 kB\n";
        assert_eq!(dirty(mem), Some((191148, 64)));
        assert_eq!(dirty("MemTotal: 1 kB\n"), None);
        let vm =
            "nr_dirty 47787\nnr_dirty_threshold 1129844\nnr_dirty_background_threshold 564232\n";
        assert_eq!(thresholds(vm), (Some(564232), Some(1129844)));
    }

    #[test]
    fn a_disk_told_to_stop_at_once_gives_one_short_interval() {
        // Whatever / is on (a virtual disk on this machine and CI's), its counters are read.
        let Some(name) = super::super::disk::disks_under(std::path::Path::new("/"))
            .into_iter()
            .next()
        else {
            return;
        };
        let (tx, rx) = std::sync::mpsc::channel();
        tx.send(()).unwrap();
        let s = sample(&name, &rx, || {}).expect("the root disk's counters");
        assert_eq!(s.disk, name);
        assert_eq!((s.read.len(), s.write.len(), s.kib.len()), (1, 1, 1));
        assert_eq!((s.busy_ms.len(), s.dirty_kib.len()), (1, 1));
        assert!(s.dirty_threshold_kib.is_some(), "{s:?}");
        // A disk that is not there has no series.
        assert_eq!(sample("no-such-disk", &rx, || {}), None);
    }
}
