//! fio's terse output (`--minimal`, `--output-format=terse`), versions 2–5 (3 is fio's
//! default). One `;`-separated record per job: bandwidth is a truncated KiB/s integer, IOPS a
//! truncated integer, latencies µs. Field positions: fio-semantics.md §7.3 and fio's HOWTO.

use super::{FioFormat, FioJob, FioOutput, Note, ParseError};
use crate::job::JobShape;
use crate::measure::{BwBasis, DirectionStats, Latency, Measurement};

/// Fields of one direction: io KiB, bw, iops, runtime, slat ×4, clat ×4, 20 percentiles,
/// lat ×4, bw stats ×5 (v5 adds bw samples and 5 iops fields).
const DIR_V2_4: usize = 41;
const DIR_V5: usize = 47;

/// A terse record found in the text: (line number, record).
pub(super) fn records(text: &str) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    for (i, line) in text.split(['\n', '\r']).enumerate() {
        let line = line.trim();
        if !line.contains(';') {
            continue;
        }
        // Records joined on one line (lost line breaks) are cut before `3;fio-…`.
        let mut starts: Vec<usize> = Vec::new();
        let bytes = line.as_bytes();
        for (at, _) in line.match_indices(';') {
            if at == 0 {
                continue;
            }
            let v = at - 1;
            let boundary = v == 0 || bytes[v - 1].is_ascii_whitespace();
            if !boundary || !(b'2'..=b'5').contains(&bytes[v]) {
                continue;
            }
            let next = &line[at + 1..];
            let field = next.split([';', ' ']).next().unwrap_or_default();
            let versioned = field.starts_with("fio-")
                || field.starts_with(|c: char| c.is_ascii_digit()) && field.contains('.');
            if v == 0 || (bytes[v] != b'2' && versioned) {
                starts.push(v);
            }
        }
        for (k, &s) in starts.iter().enumerate() {
            let end = starts.get(k + 1).copied().unwrap_or(line.len());
            let rec = line[s..end].trim();
            if rec.matches(';').count() >= 40 {
                out.push((i + 1, rec));
            }
        }
    }
    out
}

/// Reads the terse records. `Ok(None)`: there are none.
pub(super) fn parse(text: &str) -> Result<Option<FioOutput>, ParseError> {
    let recs = records(text);
    if recs.is_empty() {
        return Ok(None);
    }
    let mut jobs = Vec::new();
    let mut version = None;
    let mut notes = Vec::new();
    for (line, rec) in &recs {
        let f: Vec<&str> = rec.split(';').collect();
        let ver: u32 = f[0].trim().parse().unwrap_or(0);
        let (head, dir_len, trim) = match ver {
            2 => (4, DIR_V2_4, true),
            3 => (5, DIR_V2_4, false),
            4 => (5, DIR_V2_4, true),
            5 => (5, DIR_V5, true),
            _ => continue,
        };
        if f.len() < head + 2 * dir_len {
            return Err(ParseError::Truncated(format!(
                "the terse record at line {line} has {} fields where terse v{ver} has at least {}",
                f.len(),
                head + 2 * dir_len
            )));
        }
        if ver >= 3 && version.is_none() {
            version = Some(f[1].trim().trim_start_matches("fio-").to_string());
        }
        let name = f[head - 3].to_string();
        let read = direction(&f[head..head + dir_len]);
        let write = direction(&f[head + dir_len..head + 2 * dir_len]);
        let cpu_at = head + dir_len * if trim { 3 } else { 2 };
        let pct = |i: usize| {
            f.get(i)
                .and_then(|s| s.trim().trim_end_matches('%').parse::<f64>().ok())
                .filter(|v| v.is_finite())
        };
        let error: i32 = f[head - 1].trim().parse().unwrap_or(0);
        let mut job = FioJob::new(
            name,
            f[head - 2].trim().parse().unwrap_or(0),
            JobShape::default(),
            Measurement {
                read,
                write,
                cpu_usr_pct: pct(cpu_at),
                cpu_sys_pct: pct(cpu_at + 1),
                ..Measurement::default()
            },
            error,
        );
        // A terse line has no group line, no process and no date: each stands alone, one
        // run of its own (numjobs clones printed one by one cannot be told from runs).
        job.place = format!("terse record {} (line {line})", jobs.len() + 1);
        // usr, sys, ctx, majf, minf, then the seven shares of the I/O depth distribution
        job.depths = f
            .get(cpu_at + 5..cpu_at + 12)
            .and_then(|d| super::depth_shares(d.iter().copied()));
        job.invocation = jobs.len();
        jobs.push(job);
    }
    if jobs.is_empty() {
        return Ok(None);
    }
    let mut named: Vec<(&str, u32, Vec<&Measurement>)> = Vec::new();
    for j in &jobs {
        match named
            .iter_mut()
            .find(|(n, g, _)| *n == j.name && *g == j.groupid)
        {
            Some((_, _, ms)) => {
                if !ms.contains(&&j.measurement) {
                    ms.push(&j.measurement);
                }
            }
            None => named.push((&j.name, j.groupid, vec![&j.measurement])),
        }
    }
    // Several lines of one job in one output: numjobs clones of one run (each a fraction of
    // it) or runs of their own, which terse does not say. Unknown, so none of them counts as
    // a run of the policy's test: never one run counted as several, nor a clone as a run.
    let mut clones: Vec<(String, u32, usize)> = Vec::new();
    for (name, group, ms) in named.iter().filter(|(_, _, ms)| ms.len() > 1) {
        notes.push(Note::TerseLines {
            job: name.to_string(),
            group: *group,
            lines: ms.len(),
        });
        clones.push((name.to_string(), *group, ms.len()));
    }
    for (name, group, lines) in clones {
        for j in jobs
            .iter_mut()
            .filter(|j| j.name == name && j.groupid == group)
        {
            j.mixed = Some(format!(
                "one of {lines} terse lines of job '{name}' (group {group}) in one output: terse does not say whether they are numjobs clones of one run (each a fraction of it) or runs of their own, so none is counted as a run (send each run's output in a file of its own, or fio's JSON output)"
            ));
        }
    }
    let first_line = recs[0].0;
    let before: Vec<&str> = text
        .split(['\n', '\r'])
        .take(first_line - 1)
        .filter(|l| !l.trim().is_empty())
        .collect();
    let errors = before
        .iter()
        .filter(|l| l.trim_start().starts_with("fio: "))
        .count();
    if errors > 0 {
        notes.push(Note::ErrorLines {
            count: errors,
            first: before
                .iter()
                .find(|l| l.trim_start().starts_with("fio: "))
                .map(|l| l.trim())
                .unwrap_or_default()
                .to_string(),
        });
    }
    if before.len() > errors {
        notes.push(Note::NoiseBefore {
            lines: before.len() - errors,
            json: false,
        });
    }
    if text.contains("terminating on signal") {
        notes.push(Note::Interrupted);
    }
    notes.push(Note::TersePrecision);
    Ok(Some(FioOutput {
        format: FioFormat::Terse,
        fio_version: version,
        timestamp: None,
        jobs,
        notes,
        command: None,
    }))
}

fn int(s: &str) -> u64 {
    let s = s.trim();
    s.parse::<u64>()
        .ok()
        .or_else(|| {
            s.parse::<f64>()
                .ok()
                .filter(|v| v.is_finite() && *v >= 0.0)
                .map(|v| v as u64)
        })
        .unwrap_or(0)
}

fn float(s: &str) -> f64 {
    s.trim()
        .trim_end_matches('%')
        .parse::<f64>()
        .ok()
        .filter(|v| v.is_finite())
        .unwrap_or(0.0)
}

/// One direction's fields; None for an idle direction.
fn direction(f: &[&str]) -> Option<DirectionStats> {
    let (kib, bw, iops, runtime_ms) = (int(f[0]), int(f[1]), int(f[2]), int(f[3]));
    if kib == 0 && runtime_ms == 0 {
        return None;
    }
    // fio truncates IOPS to an integer: N means N to N + 1, so the middle.
    let ios = ((iops as f64 + 0.5) * runtime_ms as f64 / 1000.0).round() as u64;
    let lat = |at: usize, pcts: Option<&[&str]>| {
        let us = |i: usize| float(f[at + i]) * 1000.0;
        let (min, max, mean) = (us(0), us(1), us(2));
        let percentiles: Vec<(f64, f64)> = pcts
            .unwrap_or_default()
            .iter()
            .filter_map(|p| {
                let (q, v) = p.split_once("%=")?;
                let q: f64 = q.trim().parse().ok()?;
                let v: f64 = v.trim().parse().ok()?;
                (q > 0.0 && q <= 100.0 && v.is_finite()).then_some((q, v * 1000.0))
            })
            .collect();
        (min != 0.0 || max != 0.0 || mean != 0.0 || !percentiles.is_empty()).then(|| Latency {
            n: ios,
            min_ns: min,
            max_ns: max,
            mean_ns: mean,
            stddev_ns: us(3),
            percentiles,
        })
    };
    Some(DirectionStats {
        ios,
        bytes: kib.saturating_mul(1024),
        runtime_ms,
        iops: iops as f64,
        bw_bytes: bw as f64 * 1024.0,
        bw_mb_s_printed: None,
        bw_basis: BwBasis::Printed,
        slat: lat(4, None),
        clat: lat(8, Some(&f[12..32])),
        lat: lat(32, None),
        samples: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn joined_records_are_cut_apart() {
        let one = format!("3;fio-3.33;a;0;0{}", ";1".repeat(120));
        let two = format!("{one} {}", one.replace(";a;", ";b;"));
        let r = records(&two);
        assert_eq!(r.len(), 2);
        assert!(r[1].1.starts_with("3;fio-3.33;b;"));
    }

    /// A record of terse version `ver` with one write direction and cpu 1.5 % / 2.5 %.
    fn record(ver: u32) -> String {
        let dir_len = if ver == 5 { DIR_V5 } else { DIR_V2_4 };
        let idle: Vec<String> = (0..dir_len)
            .map(|i| {
                if (12..32).contains(&i) {
                    "0%=0".into()
                } else {
                    "0".into()
                }
            })
            .collect();
        let mut write = idle.clone();
        write[..4].clone_from_slice(&["4000".into(), "400".into(), "100".into(), "10000".into()]);
        write[8..12].clone_from_slice(&["5".into(), "900".into(), "10.5".into(), "3.0".into()]);
        write[12] = "99.000000%=250".into();
        let mut f: Vec<String> = if ver == 2 {
            vec!["2".into(), "job".into(), "1".into(), "0".into()]
        } else {
            vec![
                ver.to_string(),
                "fio-3.33".into(),
                "job".into(),
                "1".into(),
                "0".into(),
            ]
        };
        f.extend(idle.clone());
        f.extend(write);
        if ver != 3 {
            f.extend(idle);
        }
        f.extend(["1.5%", "2.5%", "10", "0", "5"].map(String::from));
        f.extend(std::iter::repeat_n("0.0%".to_string(), 29));
        f.join(";")
    }

    #[test]
    fn every_terse_version_puts_the_fields_where_fio_does() {
        for ver in 2..=5 {
            let out = parse(&record(ver)).unwrap().unwrap();
            let j = &out.jobs[0];
            assert_eq!((j.name.as_str(), j.groupid), ("job", 1), "v{ver}");
            assert!(j.measurement.read.is_none(), "v{ver}");
            let w = j.measurement.write.as_ref().unwrap();
            assert_eq!(
                (w.bytes, w.bw_bytes, w.iops, w.runtime_ms),
                (4_096_000, 409_600.0, 100.0, 10_000),
                "v{ver}"
            );
            let clat = w.clat.as_ref().unwrap();
            assert_eq!((clat.min_ns, clat.max_ns), (5000.0, 900_000.0), "v{ver}");
            assert_eq!(clat.percentile(99.0), Some(250_000.0), "v{ver}");
            assert_eq!(j.measurement.cpu_usr_pct, Some(1.5), "v{ver}");
            assert_eq!(j.measurement.cpu_sys_pct, Some(2.5), "v{ver}");
            let version = if ver == 2 { None } else { Some("3.33") };
            assert_eq!(out.fio_version.as_deref(), version, "v{ver}");
        }
    }

    #[test]
    fn short_lines_with_semicolons_are_not_records() {
        assert!(records("a;b;c\n3;fio-3.33;x").is_empty());
    }
}
