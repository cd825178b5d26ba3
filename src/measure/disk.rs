//! The disks' own account of a native run, as fio's `Disk stats (read/write)`: deltas of
//! /proc/diskstats over the run for the device under the target directory and, through
//! device-mapper, md and partitions, the disks beneath it (fio's `aggr` figures come from the
//! same disks).

use std::path::{Path, PathBuf};
use std::time::Instant;

use super::DiskStat;

/// The block devices to watch for a directory: the device it is mounted from (a partition
/// counts as its disk), then every disk under it (slaves of dm/md devices, recursively).
/// Empty when the directory is not on a block device (tmpfs, overlay, NFS).
pub fn disks_under(dir: &Path) -> Vec<String> {
    let Some(mount) = std::fs::canonicalize(dir)
        .ok()
        .and_then(|d| crate::machine::mount_of(&d))
    else {
        return Vec::new();
    };
    let link = PathBuf::from(format!("/sys/dev/block/{}:{}", mount.dev.0, mount.dev.1));
    let Ok(real) = std::fs::canonicalize(link) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    add(&real, &mut out, 0);
    out
}

fn add(dev: &Path, out: &mut Vec<String>, depth: u32) {
    if depth > 8 {
        return;
    }
    // A partition's statistics are its disk's share; fio reports the disk.
    let disk = if dev.join("partition").exists() {
        dev.parent().unwrap_or(dev)
    } else {
        dev
    };
    let Some(name) = disk.file_name().map(|n| n.to_string_lossy().into_owned()) else {
        return;
    };
    if !out.contains(&name) {
        out.push(name);
    }
    // dm and md devices list what they are built on in slaves/ (of the device itself).
    if let Ok(entries) = std::fs::read_dir(dev.join("slaves")) {
        let mut under: Vec<PathBuf> = entries
            .flatten()
            .filter_map(|e| std::fs::canonicalize(e.path()).ok())
            .collect();
        under.sort();
        for u in under {
            add(&u, out, depth + 1);
        }
    }
}

/// /proc/diskstats counters of the watched disks at one moment.
#[derive(Debug, Clone)]
pub struct Snapshot {
    at: Instant,
    disks: Vec<(String, [u64; 11])>,
}

/// Reads the counters of `names` now. None when /proc/diskstats is unreadable.
pub fn snapshot(names: &[String]) -> Option<Snapshot> {
    if names.is_empty() {
        return None;
    }
    let text = std::fs::read_to_string("/proc/diskstats").ok()?;
    Some(Snapshot {
        at: Instant::now(),
        disks: parse(&text, names),
    })
}

/// The lines of `names`, in that order: the 11 classic fields after the name.
pub fn parse(text: &str, names: &[String]) -> Vec<(String, [u64; 11])> {
    let mut out = Vec::new();
    for want in names {
        for line in text.lines() {
            let f: Vec<&str> = line.split_whitespace().collect();
            if f.len() < 14 || f[2] != want {
                continue;
            }
            let mut v = [0u64; 11];
            for (i, slot) in v.iter_mut().enumerate() {
                *slot = f[3 + i].parse().unwrap_or(0);
            }
            out.push((want.clone(), v));
            break;
        }
    }
    out
}

/// What happened between two snapshots, per disk, as fio computes it (util = time the disk
/// had I/O in flight over the wall time).
pub fn delta(before: &Snapshot, after: &Snapshot) -> Vec<DiskStat> {
    let wall_ms = after.at.duration_since(before.at).as_secs_f64() * 1000.0;
    before
        .disks
        .iter()
        .filter_map(|(name, a)| {
            let (_, b) = after.disks.iter().find(|(n, _)| n == name)?;
            let d = |i: usize| b[i].saturating_sub(a[i]);
            Some(DiskStat {
                name: name.clone(),
                read_ios: d(0),
                read_merges: d(1),
                read_ticks_ms: d(3),
                write_ios: d(4),
                write_merges: d(5),
                write_ticks_ms: d(7),
                in_queue_ms: d(10),
                util_pct: if wall_ms > 0.0 {
                    (d(9) as f64 / wall_ms * 100.0).min(100.0)
                } else {
                    0.0
                },
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn diskstats_lines_give_fios_figures() {
        let names = vec!["dm-0".to_string(), "sda".to_string()];
        let t0 =
            " 8 0 sda 10 1 80 5 20 2 160 7 0 9 12 0 0 0 0\n 253 0 dm-0 3 0 24 1 4 0 32 2 0 3 3\n";
        let t1 = " 8 0 sda 15 1 120 9 470 30 960 107 1 59 116 0 0 0 0\n 253 0 dm-0 3 0 24 1 400 0 3200 90 0 40 91\n";
        let s0 = Snapshot {
            at: Instant::now(),
            disks: parse(t0, &names),
        };
        let mut s1 = Snapshot {
            at: s0.at + std::time::Duration::from_millis(100),
            disks: parse(t1, &names),
        };
        let d = delta(&s0, &s1);
        assert_eq!(d.len(), 2);
        assert_eq!(d[0].name, "dm-0");
        assert_eq!(
            d[1].fio_line(),
            "sda: ios=5/450, merge=0/28, ticks=4/100, in_queue=104, util=50.00%"
        );
        // A disk that went away is left out.
        s1.disks.truncate(1);
        assert_eq!(delta(&s0, &s1).len(), 1);
    }

    #[test]
    fn tmpfs_has_no_disk_and_the_root_filesystem_names_its_own() {
        if Path::new("/dev/shm").exists() {
            assert!(disks_under(Path::new("/dev/shm")).is_empty());
        }
        // Whatever / is on, each name is a disk /proc/diskstats knows.
        let names = disks_under(Path::new("/"));
        if let Some(s) = snapshot(&names) {
            assert_eq!(s.disks.len(), names.len(), "{names:?}");
        }
    }
}
