//! The field parsers: one line of fio's text (a direction line in either layout, a latency
//! line, percentile rows, an `issued` line, the header printed before the run) into its
//! figures, and the small scanners they share. Each takes a trimmed line and returns None when
//! the figures do not read.

use super::markers::{Ddir, LatKind, Marker, ddir_line_start, marker};
use crate::fio::choose_bs;
use crate::fio::num::{Base, Quantity, parse_bytes, parse_count, parse_rate};
use crate::job::{IoEngine, Rw};
use crate::measure::Latency;

/// The line fio prints before the run: `name: (g=0): rw=randwrite, bs=(R) 4096B-4096B, …,
/// ioengine=posixaio, iodepth=1`, followed by `...` when the job has clones.
#[derive(Debug, Default)]
pub(super) struct PreHeader {
    pub(super) name: String,
    pub(super) group: u32,
    pub(super) rw: Option<Rw>,
    pub(super) bs: Option<u64>,
    pub(super) ioengine: Option<String>,
    pub(super) iodepth: Option<u32>,
    pub(super) cloned: bool,
}

/// The figures of one direction line (`write: IOPS=…` or `read : io=…`).
#[derive(Debug, Clone)]
pub(super) struct DdirLine {
    pub(super) kind: Ddir,
    pub(super) iops: f64,
    pub(super) bw_bytes: f64,
    /// The decimal figure, bytes per second.
    pub(super) bw_decimal: Option<f64>,
    pub(super) bytes: f64,
    pub(super) runtime_ms: u64,
    pub(super) old_layout: bool,
    /// IOPS printed as a plain integer: fio's integer division truncated it.
    pub(super) iops_truncated: bool,
    pub(super) fraction: bool,
    /// The bandwidth and the figure in parentheses, as printed, where they disagree.
    pub(super) mismatch: Option<(String, String)>,
    pub(super) slat: Option<Latency>,
    pub(super) clat: Option<Latency>,
    pub(super) lat: Option<Latency>,
    /// `iops : min=…, max=…, avg=…, stdev=…, samples=…`
    pub(super) samples: Option<crate::measure::IopsSamples>,
}

/// `read: IOPS=…` / `write: io=…` (any indent, `read :` in the old layout).
pub(super) fn direction_line(t: &str) -> Option<(Ddir, DdirLine)> {
    let (kind, rest) = ddir_line_start(t)?;
    let dir = match rest.strip_prefix("IOPS=") {
        Some(r) => new_direction(r)?,
        None => old_direction(rest)?,
    };
    Some((kind, dir))
}

fn empty_ddir_line() -> DdirLine {
    DdirLine {
        kind: Ddir::Read,
        iops: 0.0,
        bw_bytes: 0.0,
        bw_decimal: None,
        bytes: 0.0,
        runtime_ms: 0,
        old_layout: false,
        iops_truncated: false,
        fraction: false,
        mismatch: None,
        slat: None,
        clat: None,
        lat: None,
        samples: None,
    }
}

/// `69.5k, BW=272MiB/s (285MB/s)(1408MiB/5185msec); 0 zone resets`
fn new_direction(r: &str) -> Option<DdirLine> {
    let iops_s = r.split(',').next()?.trim();
    let iops = parse_count(iops_s)?;
    let bw_at = r.find("BW=")? + 3;
    let after_bw = &r[bw_at..];
    let bw_end = after_bw.find(['(', ' ', ',']).unwrap_or(after_bw.len());
    let bw_s = after_bw[..bw_end].trim();
    let primary = rate(bw_s)?;
    let mut alt: Option<Quantity> = None;
    let mut io: Option<(Quantity, u64)> = None;
    let mut alt_s = "";
    // The parenthesised groups: the other unit system, then io/runtime.
    let mut rest = &after_bw[bw_end..];
    while let Some(open) = rest.find('(') {
        let Some(close) = rest[open..].find(')') else {
            break;
        };
        let inner = rest[open + 1..open + close].trim();
        if let Some(ms) = inner.strip_suffix("msec") {
            if let Some((amount, runt)) = ms.rsplit_once('/') {
                io = Some((parse_bytes(amount, false)?, leading_u64(runt.trim())?));
            }
        } else if alt.is_none()
            && let Some(q) = rate(inner)
        {
            alt = Some(q);
            alt_s = inner;
        }
        rest = &rest[open + close + 1..];
        if io.is_some() {
            break;
        }
    }
    let (io, runtime_ms) = io?;
    let (binary, decimal) = match (primary.base, alt.map(|a| a.base)) {
        (Base::Decimal, Some(Base::Binary)) => (alt?, Some(primary)),
        (Base::Decimal, _) => (primary, Some(primary)),
        (_, Some(Base::Decimal | Base::Plain)) => (primary, alt),
        _ => (primary, None),
    };
    let mismatch = decimal.and_then(|dec| {
        let (a, b) = (binary.bytes, dec.bytes);
        // each figure is within 0.5 % of the truth when printed with 3 or more digits
        ((a - b).abs() > 0.012 * a.max(b) && a.max(b) >= 1000.0)
            .then(|| (bw_s.to_string(), alt_s.to_string()))
    });
    Some(DdirLine {
        iops,
        bw_bytes: binary.bytes,
        bw_decimal: decimal.map(|d| d.bytes),
        bytes: io.bytes,
        runtime_ms,
        iops_truncated: iops_s.bytes().all(|b| b.is_ascii_digit()),
        fraction: iops_s.contains('.') || bw_s.contains('.'),
        mismatch,
        ..empty_ddir_line()
    })
}

/// A rate of the new layout: `272MiB/s`, `285MB/s`, or as fio's client/server mode prints it,
/// without `B/s`: `29.4Gi`, `31.6G`.
fn rate(s: &str) -> Option<Quantity> {
    if s.ends_with("/s") {
        return parse_rate(s, false);
    }
    if s.ends_with('B') || s.is_empty() || s.contains('/') {
        return None;
    }
    parse_bytes(&format!("{s}B"), false)
}

/// `io=2449.0MB, bw=15980KB/s, iops=3994, runt=156935msec`
fn old_direction(r: &str) -> Option<DdirLine> {
    let field = |k: &str| {
        r.split(',')
            .map(str::trim)
            .find_map(|f| f.strip_prefix(k))
            .map(str::trim)
    };
    let io = parse_bytes(field("io=")?, true)?;
    let bw_s = field("bw=")?;
    let bw = parse_rate(bw_s, true)?;
    let iops_s = field("iops=")?;
    let iops = parse_count(iops_s)?;
    let runt = field("runt=")?;
    let runtime_ms = leading_u64(runt.trim_end_matches("msec").trim())?;
    Some(DdirLine {
        iops,
        bw_bytes: bw.bytes,
        bytes: io.bytes,
        runtime_ms,
        old_layout: true,
        iops_truncated: iops_s.bytes().all(|b| b.is_ascii_digit()),
        fraction: iops_s.contains('.') || bw_s.contains('.'),
        ..empty_ddir_line()
    })
}

fn unit_ns(u: &str) -> Option<f64> {
    Some(match u.trim() {
        "nsec" => 1.0,
        "usec" => 1e3,
        "msec" => 1e6,
        "sec" => 1e9,
        _ => return None,
    })
}

/// `clat (nsec): min=101, max=2829.5k, avg=9063.87, stdev=35430.77`
pub(super) fn latency_line(t: &str) -> Option<(LatKind, Latency)> {
    let (Marker::Latency(kind), rest) = marker(t)? else {
        return None;
    };
    let close = rest.find(')')?;
    let unit = unit_ns(&rest[..close])?;
    let body = &rest[close + 1..];
    let min = parse_count(value_of(body, "min=")?)?;
    let max = parse_count(value_of(body, "max=")?)?;
    let avg = parse_count(value_of(body, "avg=")?)?;
    let stdev = value_of(body, "stdev=")
        .and_then(parse_count)
        .unwrap_or(0.0);
    Some((
        kind,
        Latency {
            n: 0,
            min_ns: min * unit,
            max_ns: max * unit,
            mean_ns: avg * unit,
            stddev_ns: stdev * unit,
            percentiles: Vec::new(),
        },
    ))
}

/// `clat percentiles (usec):` and, when the lines were joined, the rows that follow on the
/// same line.
pub(super) fn percentile_header(t: &str) -> Option<(LatKind, f64, &str)> {
    let (Marker::Percentiles(kind), rest) = marker(t)? else {
        return None;
    };
    let rest = rest.strip_prefix(" (")?;
    let close = rest.find(')')?;
    let unit = unit_ns(&rest[..close])?;
    Some((kind, unit, &rest[close + 1..]))
}

/// `|  1.00th=[  109],  5.00th=[  209], …` → [(1.0, 109 × unit), …]
pub(super) fn percentile_pairs(text: &str, unit: f64) -> Vec<(f64, f64)> {
    let mut out = Vec::new();
    let bytes = text.as_bytes();
    let mut from = 0;
    while let Some(off) = text[from..].find("th=[") {
        let at = from + off;
        let mut s = at;
        while s > 0 && (bytes[s - 1].is_ascii_digit() || bytes[s - 1] == b'.') {
            s -= 1;
        }
        let value_start = at + 4;
        let Some(close) = text[value_start..].find(']') else {
            break;
        };
        if let (Ok(p), Ok(v)) = (
            text[s..at].parse::<f64>(),
            text[value_start..value_start + close].trim().parse::<f64>(),
        ) && p > 0.0
            && p <= 100.0
            && v.is_finite()
        {
            out.push((p, v * unit));
        }
        from = value_start + close;
    }
    out
}

/// `total=0,360410,0,0 short=…` (≥ 2.17) or `total=r=421146001/w=0/d=0, short=…` (2.x).
pub(super) fn issued_totals(total: &str, line: &str) -> Option<[u64; 4]> {
    if total.starts_with("r=") {
        let after = &line[line.find("total=")? + 6..];
        let seg = after.split([',', ' ']).next()?;
        let mut out = [0u64; 4];
        for part in seg.split('/') {
            let (k, v) = part.split_once('=')?;
            let v = leading_u64(v)?;
            match k {
                "r" => out[0] = v,
                "w" => out[1] = v,
                "d" | "t" => out[2] = v,
                _ => {}
            }
        }
        return Some(out);
    }
    let after = &line[line.find("total=")? + 6..];
    let seg = after.split(' ').next()?;
    let nums: Vec<u64> = seg
        // fio 2.0: `total=0/12345/0`
        .split([',', '/'])
        .filter(|s| !s.is_empty())
        .map(leading_u64)
        .collect::<Option<_>>()?;
    let at = |i: usize| nums.get(i).copied().unwrap_or(0);
    Some([*nums.first()?, at(1), at(2), at(3)])
}

/// `name: (g=0): rw=randwrite, bs=(R) 4096B-4096B, (W) 4096B-4096B, (T) 4096B-4096B,
/// ioengine=posixaio, iodepth=1` (also `bs=4K-4K/4K-4K/4K-4K` and
/// `bs=4096B-4096B,4096B-4096B,4096B-4096B` in 2.x).
pub(super) fn pre_header(t: &str) -> Option<PreHeader> {
    let idx = t.find(": (g=")?;
    let rest = &t[idx + 5..];
    let group = leading_u64(rest).and_then(|g| u32::try_from(g).ok())?;
    let rw = value_of(rest, "rw=")
        .and_then(|v| v.split(':').next())
        .and_then(|v| v.parse::<Rw>().ok());
    let bs_field = rest.find("bs=").map(|i| {
        let s = &rest[i + 3..];
        let end = s.find(", ioengine=").unwrap_or(s.len());
        &s[..end]
    });
    let bs = bs_field.and_then(|f| {
        let (read, write) = bs_ranges(f);
        choose_bs(rw, read, write)
    });
    Some(PreHeader {
        name: t[..idx].trim().to_string(),
        group,
        rw,
        bs,
        ioengine: value_of(rest, "ioengine=")
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(|s| IoEngine::from(s).as_str().to_string()),
        iodepth: value_of(rest, "iodepth=")
            .and_then(leading_u64)
            .and_then(|d| u32::try_from(d).ok())
            .filter(|&d| d > 0),
        cloned: false,
    })
}

/// The read and write block sizes of a `bs=` field, each when its range is a single size.
fn bs_ranges(f: &str) -> (Option<u64>, Option<u64>) {
    let single = |range: &str| {
        let range = range.trim().trim_end_matches(',').trim();
        let (lo, hi) = range.split_once('-').unwrap_or((range, range));
        let lo = crate::units::parse_size(lo).ok()?;
        let hi = crate::units::parse_size(hi).ok()?;
        (lo == hi).then_some(lo)
    };
    if f.contains("(R)") {
        let part = |tag: &str, next: &str| {
            let s = &f[f.find(tag)? + tag.len()..];
            let end = s.find(next).unwrap_or(s.len());
            single(&s[..end])
        };
        (part("(R)", "(W)"), part("(W)", "(T)"))
    } else {
        let mut parts = f.split(['/', ',']);
        let read = parts.next().and_then(single);
        let write = parts.next().and_then(single);
        (read, write)
    }
}

/// `: Laying out IO file (1 file / 4096MiB)` (fio ≥ 3.0, `… files / total 8192MiB` for several)
/// or `: Laying out IO file(s) (1 file(s) / 4096MB)` (fio ≤ 2.16, where MB meant MiB): the
/// bytes laid out, which fio computes as the files' size shifted right by 20 and prints in MiB.
pub(super) fn laid_out_size(t: &str) -> Option<u64> {
    let after = &t[t.find('/')? + 1..];
    let after = after.trim_start();
    let after = after.strip_prefix("total ").unwrap_or(after).trim_start();
    let end = after.find(|c: char| !c.is_ascii_digit())?;
    let n: u64 = after[..end].parse().ok()?;
    let unit = after[end..].trim_start();
    if unit.starts_with("MiB") || unit.starts_with("MB") {
        n.checked_mul(1 << 20)
    } else {
        None
    }
}

/// `word` then optional spaces and a colon: the rest after the colon.
pub(super) fn word_colon<'a>(t: &'a str, word: &str) -> Option<&'a str> {
    t.strip_prefix(word)?
        .trim_start_matches(' ')
        .strip_prefix(':')
}

/// The value after `key` (at a word start) up to the next comma or whitespace.
pub(super) fn value_of<'a>(s: &'a str, key: &str) -> Option<&'a str> {
    let bytes = s.as_bytes();
    let mut from = 0;
    while let Some(off) = s[from..].find(key) {
        let at = from + off;
        let boundary = at == 0 || !(bytes[at - 1].is_ascii_alphanumeric() || bytes[at - 1] == b'_');
        if boundary {
            let v = s[at + key.len()..].trim_start();
            let end = v
                .find(|c: char| c == ',' || c.is_whitespace())
                .unwrap_or(v.len());
            return Some(&v[..end]);
        }
        from = at + key.len();
    }
    None
}

/// `3.33`, `2.1.11`, `2.17-17-g9cf1` (not a job name such as `fio-4k-test:`).
pub(super) fn is_version(v: &str) -> bool {
    let number = v.split('-').next().unwrap_or_default();
    number.contains('.')
        && number.starts_with(|c: char| c.is_ascii_digit())
        && number.bytes().all(|b| b.is_ascii_digit() || b == b'.')
        && !v.contains(':')
}

pub(super) fn leading_u64(s: &str) -> Option<u64> {
    let end = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    s[..end].parse().ok()
}

pub(super) fn parse_f64(s: &str) -> Option<f64> {
    s.trim().parse::<f64>().ok().filter(|v| v.is_finite())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn new_layout_direction_line() {
        let (k, d) = direction_line(
            "write: IOPS=69.5k, BW=272MiB/s (285MB/s)(1408MiB/5185msec); 0 zone resets",
        )
        .unwrap();
        assert_eq!(k, Ddir::Write);
        assert_eq!(d.iops, 69_500.0);
        assert_eq!(d.bw_bytes, 272.0 * 1_048_576.0);
        assert_eq!(d.bw_decimal, Some(285e6));
        assert_eq!(d.runtime_ms, 5185);
        assert_eq!(d.bytes, 1408.0 * 1_048_576.0);
        assert!(d.mismatch.is_none());
    }

    #[test]
    fn old_layout_direction_line() {
        let (k, d) =
            direction_line("read : io=3213.1GB, bw=27418MB/s, iops=3509.5K, runt=120003msec")
                .unwrap();
        assert_eq!(k, Ddir::Read);
        assert_eq!(d.iops, 3_509_500.0);
        assert_eq!(d.bw_bytes, 27418.0 * 1_048_576.0);
        assert_eq!(d.bw_decimal, None);
        assert_eq!(d.runtime_ms, 120_003);
        let (_, d) =
            direction_line("write: io=53580KB, bw=914264B/s, iops=223, runt= 60011msec").unwrap();
        assert_eq!(d.bw_bytes, 914_264.0);
        assert_eq!(d.runtime_ms, 60_011);
    }

    #[test]
    fn a_misprinted_binary_figure_is_flagged() {
        let (_, d) =
            direction_line("write: IOPS=3068, BW=11.0MiB/s (12.6MB/s)(4096MiB/341704msec)")
                .unwrap();
        assert!(d.mismatch.is_some());
        let (_, d) =
            direction_line("read: IOPS=10.1k, BW=9.82KiB/s (10.1kB/s)(589KiB/60001msec)").unwrap();
        assert!(d.mismatch.is_none(), "{:?}", d.mismatch);
    }

    #[test]
    fn latency_lines_with_num2str_suffixes() {
        let (k, l) =
            latency_line("slat (nsec): min=288, max=2832.6k, avg=993.27, stdev=9954.46").unwrap();
        assert_eq!(k, LatKind::Slat);
        assert_eq!(l.max_ns, 2_832_600.0);
        let (k, l) = latency_line("lat (usec): min=4, max=2834, avg=10.06, stdev=36.74").unwrap();
        assert_eq!(k, LatKind::Lat);
        assert_eq!(l.min_ns, 4000.0);
        assert!((l.mean_ns - 10_060.0).abs() < 1e-6);
        let (_, l) = latency_line("clat (usec): min=2, max=1841, avg= 7.63, stdev= 5.14").unwrap();
        assert!((l.mean_ns - 7630.0).abs() < 1e-6);
        assert!(latency_line("lat (usec)   : 2=0.01%, 4=0.01%").is_none());
    }

    #[test]
    fn percentile_rows() {
        let p = percentile_pairs(
            " |  1.00th=[  109],  5.00th=[  209], 99.99th=[1531904]",
            1.0,
        );
        assert_eq!(p, vec![(1.0, 109.0), (5.0, 209.0), (99.99, 1_531_904.0)]);
        let p = percentile_pairs(" 99.00th=[13435], 99.50th=[", 1000.0);
        assert_eq!(p, vec![(99.0, 13_435_000.0)]);
    }

    #[test]
    fn issued_lines_of_every_version() {
        let t = "issued rwts: total=0,360410,0,0 short=0,0,0,0 dropped=0,0,0,0";
        assert_eq!(
            issued_totals(value_of(t, "total=").unwrap(), t),
            Some([0, 360_410, 0, 0])
        );
        let t = "issued rwt: total=282686912,0,0, short=0,0,0, dropped=0,0,0";
        assert_eq!(
            issued_totals(value_of(t, "total=").unwrap(), t),
            Some([282_686_912, 0, 0, 0])
        );
        let t = "issued r/w/d: total=0/12345/0, short=0/0/0";
        assert_eq!(
            issued_totals(value_of(t, "total=").unwrap(), t),
            Some([0, 12_345, 0, 0])
        );
        let t = "issued    : total=r=421146001/w=0/d=0, short=r=0/w=0/d=0";
        assert_eq!(
            issued_totals(value_of(t, "total=").unwrap(), t),
            Some([421_146_001, 0, 0, 0])
        );
    }

    #[test]
    fn pre_headers_of_every_version() {
        let p = pre_header("random-write: (g=0): rw=randwrite, bs=(R) 4096B-4096B, (W) 4096B-4096B, (T) 4096B-4096B, ioengine=posixaio, iodepth=1").unwrap();
        assert_eq!(
            (p.rw, p.bs, p.iodepth),
            (Some(Rw::RandWrite), Some(4096), Some(1))
        );
        assert_eq!(p.ioengine.as_deref(), Some("posixaio"));
        let p = pre_header("read64k-seq: (g=1): rw=read, bs=512K-512K/512K-512K/512K-512K, ioengine=libaio, iodepth=128").unwrap();
        assert_eq!((p.group, p.bs, p.iodepth), (1, Some(512 << 10), Some(128)));
        let p = pre_header("x: (g=0): rw=randread, bs=4096B-4096B,4096B-4096B,4096B-4096B, ioengine=psync, iodepth=1").unwrap();
        assert_eq!(p.bs, Some(4096));
        let p = pre_header("x: (g=0): rw=randwrite, bs=(R) 4096B-65536B, (W) 4096B-65536B, (T) 4096B-4096B, ioengine=psync, iodepth=1").unwrap();
        assert_eq!(p.bs, None);
    }

    #[test]
    fn laid_out_sizes_of_every_version() {
        assert_eq!(
            laid_out_size(": Laying out IO file (1 file / 4096MiB)"),
            Some(4 << 30)
        );
        assert_eq!(
            laid_out_size(": Laying out IO file(s) (1 file(s) / 400MB)"),
            Some(400 << 20)
        );
        assert_eq!(
            laid_out_size(": Laying out IO files (2 files / total 8192MiB)"),
            Some(8 << 30)
        );
        assert_eq!(laid_out_size(": Laying out IO file (1 file / lots)"), None);
    }
}
