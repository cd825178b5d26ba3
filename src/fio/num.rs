//! Numbers as fio prints and reads them: `num2str()` counts (`69.5k`, `1235k`, and `3509.5K` from
//! fio ≤ 2.16), byte amounts and rates in the three unit systems fio has used (binary
//! `KiB`/`MiB`, decimal `kB`/`MB`, and the old layout's `KB`/`MB` that meant 1024), and sizes in
//! job options with fio's own `kb_base` rules.

/// Which unit system a printed figure used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Base {
    /// Powers of 1024 (`KiB/s`, or `KB/s` in the old layout).
    Binary,
    /// Powers of 1000 (`kB/s`, `MB/s` in the ≥ 2.17 layout).
    Decimal,
    /// No prefix (`923956B/s`): the same in both systems.
    Plain,
}

/// A byte amount or rate read from fio's text, in bytes (or bytes per second).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Quantity {
    pub bytes: f64,
    pub base: Base,
}

/// Splits a leading decimal number (`12.5` in `12.5kB/s`) from its suffix.
fn split_number(s: &str) -> Option<(f64, &str)> {
    let s = s.trim();
    let end = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(s.len());
    let (num, rest) = s.split_at(end);
    if !num.bytes().any(|b| b.is_ascii_digit()) || num.matches('.').count() > 1 {
        return None;
    }
    let v: f64 = num.parse().ok()?;
    v.is_finite().then_some((v, rest))
}

/// A count printed by `num2str()` without a unit: IOPS (`3994`, `69.5k`, `1235k`, `3509.5K`) or
/// a latency min/max (`2832.6k`). Its prefixes are powers of 1000 in every fio version.
pub fn parse_count(s: &str) -> Option<f64> {
    let (v, rest) = split_number(s)?;
    let mult = match rest.trim() {
        "" => 1.0,
        "k" | "K" => 1e3,
        "M" => 1e6,
        "G" => 1e9,
        "T" => 1e12,
        "P" => 1e15,
        "E" => 1e18,
        _ => return None,
    };
    Some(v * mult)
}

/// A byte amount as fio prints it: `1408MiB`, `19.0GiB`, `1476MB`, `603kB`, `2449.0MB` (old
/// layout, 1024-based), `54148KB`, `512B`.
pub fn parse_bytes(s: &str, old_layout: bool) -> Option<Quantity> {
    let (v, unit) = split_number(s)?;
    let unit = unit.trim();
    let (prefix, bits) = if let Some(p) = unit.strip_suffix("bit") {
        (p, true)
    } else if let Some(p) = unit.strip_suffix('B') {
        (p, false)
    } else {
        return None;
    };
    let (mult, base) = prefix_multiplier(prefix, old_layout)?;
    let bytes = v * mult / if bits { 8.0 } else { 1.0 };
    bytes.is_finite().then_some(Quantity { bytes, base })
}

/// A rate as fio prints it: `9.82KiB/s`, `35.1GiB/s`, `10.1kB/s`, `923956B/s`, `1473.8KB/s`
/// (old layout, 1024-based), `Kibit/s` with `unit_base=1`.
pub fn parse_rate(s: &str, old_layout: bool) -> Option<Quantity> {
    parse_bytes(s.trim().strip_suffix("/s")?, old_layout)
}

/// The multiplier of a unit prefix. `Ki`…`Ei` are binary in every version. Without the `i`,
/// fio ≥ 2.17 means powers of 1000; fio ≤ 2.16 printed binary values with `K`, `M`, `G`, and
/// its prefix list lacked `T`, so its `P` followed `G` (1024⁴).
fn prefix_multiplier(prefix: &str, old_layout: bool) -> Option<(f64, Base)> {
    if prefix.is_empty() {
        return Some((1.0, Base::Plain));
    }
    if let Some(p) = prefix.strip_suffix('i') {
        return Some((1024f64.powi(power(p)?), Base::Binary));
    }
    if old_layout {
        let pow = match prefix {
            "P" | "T" => 4,
            "E" => 5,
            p => power(p).filter(|&n| n <= 3)?,
        };
        return Some((1024f64.powi(pow), Base::Binary));
    }
    Some((1000f64.powi(power(prefix)?), Base::Decimal))
}

/// The power of the unit a prefix names: k (or K) 1, M 2, G 3, T 4, P 5, E 6.
fn power(prefix: &str) -> Option<i32> {
    Some(match prefix {
        "k" | "K" => 1,
        "M" => 2,
        "G" => 3,
        "T" => 4,
        "P" => 5,
        "E" => 6,
        _ => return None,
    })
}

/// A size in a job option (JSON `"job options"`), read as fio reads it: `k`/`m`/`g`/`t`/`p` (and
/// `kb`…) are powers of `kb_base` (1024 by default), while `KiB`…`PiB` are the *other* base
/// (1000 by default: fio's compatibility quirk, so `4KiB` is 4000 bytes). `16Mi` has no `b` and
/// so is 16 × 1024². Percentages (`100%`), ranges (`4k-64k`) and lists (`4k,8k`) are not a
/// single size: None.
pub fn fio_option_size(s: &str, kb_base: u64) -> Option<u64> {
    let s = s.trim();
    if s.contains(['%', ',', ':']) || s.chars().skip(1).any(|c| c == '-') {
        return None;
    }
    let (v, rest) = split_number(s)?;
    let rest = rest.trim().to_ascii_lowercase();
    let other = if kb_base == 1000 { 1024 } else { 1000 };
    let (mult, pow) = match rest.as_str() {
        "" | "b" => (1, 0),
        "kib" => (other, 1),
        "mib" => (other, 2),
        "gib" => (other, 3),
        "tib" => (other, 4),
        "pib" => (other, 5),
        "k" | "kb" | "ki" => (kb_base, 1),
        "m" | "mb" | "mi" => (kb_base, 2),
        "g" | "gb" | "gi" => (kb_base, 3),
        "t" | "tb" | "ti" => (kb_base, 4),
        "p" | "pb" | "pi" => (kb_base, 5),
        _ => return None,
    };
    let bytes = v * (mult as f64).powi(pow);
    (bytes.is_finite() && bytes >= 0.0 && bytes < u64::MAX as f64 && bytes.fract() == 0.0)
        .then_some(bytes as u64)
}

/// A plain integer option (`"4"`, `" 16"`); fio also accepts a size suffix (`1k` = 1024).
pub fn fio_option_int(s: &str) -> Option<u64> {
    let s = s.trim();
    s.parse().ok().or_else(|| fio_option_size(s, 1024))
}

/// A boolean option: fio writes `1`/`0`, and a bare flag (`--time_based`) may appear empty.
pub fn fio_option_bool(s: &str) -> Option<bool> {
    match s.trim().to_ascii_lowercase().as_str() {
        "" | "1" | "true" | "yes" | "on" => Some(true),
        "0" | "false" | "no" | "off" => Some(false),
        other => other.parse::<u64>().ok().map(|n| n != 0),
    }
}

/// A version such as `3.33`, `2.17-17-g9cf1` or `3.6-31-g4386` as (major, minor).
pub fn version_tuple(v: &str) -> Option<(u32, u32)> {
    let v = v.trim().trim_start_matches("fio-");
    let mut parts = v.split(|c: char| !c.is_ascii_digit());
    let major = parts.next()?.parse().ok()?;
    let minor = parts.next().and_then(|m| m.parse().ok()).unwrap_or(0);
    Some((major, minor))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-9 * b.abs().max(1.0)
    }

    fn rate(s: &str, old: bool) -> f64 {
        parse_rate(s, old).unwrap().bytes
    }

    #[test]
    fn binary_rates_are_powers_of_1024() {
        assert!(close(rate("9.82KiB/s", false), 10_055.68));
        assert!(close(rate("35.1GiB/s", false), 35.1 * 1_073_741_824.0));
        assert!(close(rate("15.6MiB/s", false), 15.6 * 1_048_576.0));
        assert_eq!(parse_rate("272MiB/s", false).unwrap().base, Base::Binary);
    }

    #[test]
    fn decimal_rates_are_powers_of_1000() {
        assert!(close(rate("10.1kB/s", false), 10_100.0));
        assert!(close(rate("16.4MB/s", false), 16_400_000.0));
        assert!(close(rate("38.6GB/s", false), 38_600_000_000.0));
        assert_eq!(parse_rate("285MB/s", false).unwrap().base, Base::Decimal);
    }

    #[test]
    fn plain_bytes_per_second_have_no_prefix() {
        let q = parse_rate("923956B/s", true).unwrap();
        assert_eq!(q.bytes, 923_956.0);
        assert_eq!(q.base, Base::Plain);
        assert_eq!(rate("923956B/s", false), 923_956.0);
    }

    #[test]
    fn the_old_layout_labels_binary_values_kb_and_mb() {
        assert!(close(rate("1473.8KB/s", true), 1_509_171.2));
        assert!(close(rate("15980KB/s", true), 16_363_520.0));
        assert!(close(rate("9132.5MB/s", true), 9_576_120_320.0));
        assert_eq!(parse_rate("27418MB/s", true).unwrap().base, Base::Binary);
        // no T in fio ≤ 2.16: P followed G
        assert!(close(
            parse_bytes("1.5PB", true).unwrap().bytes,
            1.5 * 1024f64.powi(4)
        ));
        assert!(close(
            parse_bytes("2EB", true).unwrap().bytes,
            2.0 * 1024f64.powi(5)
        ));
        assert!(close(
            parse_bytes("3TB", true).unwrap().bytes,
            3.0 * 1024f64.powi(4)
        ));
        assert!(parse_bytes("3ZB", true).is_none());
    }

    #[test]
    fn bits_are_divided_by_eight() {
        assert!(close(rate("8Kibit/s", false), 1024.0));
        assert!(close(rate("80bit/s", false), 10.0));
    }

    #[test]
    fn byte_amounts() {
        assert_eq!(
            parse_bytes("1408MiB", false).unwrap().bytes,
            1408.0 * 1_048_576.0
        );
        assert!(close(
            parse_bytes("19.0GiB", false).unwrap().bytes,
            19.0 * 1_073_741_824.0
        ));
        assert_eq!(parse_bytes("1476MB", false).unwrap().bytes, 1_476_000_000.0);
        assert!(close(
            parse_bytes("2449.0MB", true).unwrap().bytes,
            2449.0 * 1_048_576.0
        ));
        assert_eq!(
            parse_bytes("54148KB", true).unwrap().bytes,
            54_148.0 * 1024.0
        );
        assert!(parse_bytes("12", false).is_none());
        assert!(parse_bytes("MiB", false).is_none());
        assert!(parse_bytes("1.2.3MiB", false).is_none());
    }

    #[test]
    fn counts_take_k_and_m_as_powers_of_1000() {
        assert_eq!(parse_count("3994"), Some(3994.0));
        assert_eq!(parse_count("3509.5K"), Some(3_509_500.0));
        assert_eq!(parse_count("1235k"), Some(1_235_000.0));
        assert_eq!(parse_count("69.5k"), Some(69_500.0));
        assert_eq!(parse_count("2832.6k"), Some(2_832_600.0));
        assert!(close(parse_count("1409.9K").unwrap(), 1_409_900.0));
        assert_eq!(parse_count("9410k"), Some(9_410_000.0));
        assert_eq!(parse_count("110120k"), Some(110_120_000.0));
        assert_eq!(parse_count(" 7.63"), Some(7.63));
        assert_eq!(parse_count("12q"), None);
        assert_eq!(parse_count(""), None);
        assert_eq!(parse_count("."), None);
    }

    #[test]
    fn job_option_sizes_follow_fio_kb_base() {
        assert_eq!(fio_option_size("4k", 1024), Some(4096));
        assert_eq!(fio_option_size("4K", 1024), Some(4096));
        assert_eq!(fio_option_size("256m", 1024), Some(256 << 20));
        assert_eq!(fio_option_size("1gb", 1024), Some(1 << 30));
        assert_eq!(fio_option_size("16Mi", 1024), Some(16 << 20));
        assert_eq!(fio_option_size("50000Mi", 1024), Some(50_000 << 20));
        assert_eq!(fio_option_size("4KiB", 1024), Some(4000));
        assert_eq!(fio_option_size("4KiB", 1000), Some(4096));
        assert_eq!(fio_option_size("4k", 1000), Some(4000));
        assert_eq!(fio_option_size("4096", 1024), Some(4096));
        assert_eq!(fio_option_size("100%", 1024), None);
        assert_eq!(fio_option_size("4k-64k", 1024), None);
        assert_eq!(fio_option_size("4k,8k", 1024), None);
        assert_eq!(fio_option_size("", 1024), None);
        assert_eq!(fio_option_size("-", 1024), None);
    }

    #[test]
    fn versions() {
        assert_eq!(version_tuple("3.33"), Some((3, 33)));
        assert_eq!(version_tuple("fio-2.17-17-g9cf1"), Some((2, 17)));
        assert_eq!(version_tuple("3.6-31-g4386"), Some((3, 6)));
        assert_eq!(version_tuple("3"), Some((3, 0)));
        assert_eq!(version_tuple("x"), None);
    }
}
