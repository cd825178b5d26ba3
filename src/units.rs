//! Sizes, durations and rates: parsing as fio reads them, and printing as fio prints them.
//!
//! Sizes: `4k`, `4g`, `512m`, `4KiB`, `4kB`, plain bytes. Every prefix is a power of 1024,
//! as in fio's default `kb_base=1024`. (fio's compatibility mode reads `KiB` as 1000; we read
//! it as 1024 because that is what anyone typing it means, and we always hand fio plain bytes.)
//! Durations: `60` (seconds, as fio's `runtime=60`), `60s`, `500ms`, `10m`, `2h`, `3d`.

use std::time::Duration;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UnitError {
    #[error("'{0}' is empty; expected a number such as 4k, 512m or 4g")]
    Empty(String),
    #[error("'{0}' is negative; expected a positive size")]
    Negative(String),
    #[error(
        "'{0}' is not a size; expected a number with an optional k, m, g or t suffix (4k, 512m, 4g, 4KiB)"
    )]
    BadSize(String),
    #[error(
        "'{0}' is not a duration; expected seconds or a number with ms, s, m, h or d (60, 60s, 10m)"
    )]
    BadDuration(String),
    #[error("'{0}' is too large")]
    TooLarge(String),
}

/// Parses a size the way fio reads `size=` and `bs=`: k/m/g/t/p are powers of 1024.
pub fn parse_size(input: &str) -> Result<u64, UnitError> {
    let s = input.trim();
    if s.is_empty() {
        return Err(UnitError::Empty(input.to_string()));
    }
    if s.starts_with('-') {
        return Err(UnitError::Negative(input.to_string()));
    }
    let split = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(s.len());
    let (num, suffix) = s.split_at(split);
    if num.is_empty() || num.chars().filter(|&c| c == '.').count() > 1 {
        return Err(UnitError::BadSize(input.to_string()));
    }
    let mult: u64 = match suffix.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kb" | "kib" => 1 << 10,
        "m" | "mb" | "mib" => 1 << 20,
        "g" | "gb" | "gib" => 1 << 30,
        "t" | "tb" | "tib" => 1 << 40,
        "p" | "pb" | "pib" => 1 << 50,
        _ => return Err(UnitError::BadSize(input.to_string())),
    };
    if num.contains('.') {
        let v: f64 = num
            .parse()
            .map_err(|_| UnitError::BadSize(input.to_string()))?;
        let bytes = v * mult as f64;
        if !bytes.is_finite() || bytes >= u64::MAX as f64 {
            return Err(UnitError::TooLarge(input.to_string()));
        }
        if bytes.fract() != 0.0 {
            return Err(UnitError::BadSize(input.to_string()));
        }
        Ok(bytes as u64)
    } else {
        let v: u64 = num
            .parse()
            .map_err(|_| UnitError::TooLarge(input.to_string()))?;
        v.checked_mul(mult)
            .ok_or_else(|| UnitError::TooLarge(input.to_string()))
    }
}

/// Parses a duration: a bare number is seconds, as fio's `runtime=`.
pub fn parse_duration(input: &str) -> Result<Duration, UnitError> {
    let s = input.trim();
    if s.is_empty() {
        return Err(UnitError::Empty(input.to_string()));
    }
    if s.starts_with('-') {
        return Err(UnitError::BadDuration(input.to_string()));
    }
    let split = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(s.len());
    let (num, suffix) = s.split_at(split);
    let v: f64 = num
        .parse()
        .map_err(|_| UnitError::BadDuration(input.to_string()))?;
    let secs_per_unit = match suffix.trim().to_ascii_lowercase().as_str() {
        "" | "s" | "sec" | "secs" => 1.0,
        "ms" | "msec" => 0.001,
        "us" | "usec" => 0.000_001,
        "m" | "min" | "mins" => 60.0,
        "h" | "hour" | "hours" => 3600.0,
        "d" | "day" | "days" => 86400.0,
        _ => return Err(UnitError::BadDuration(input.to_string())),
    };
    let secs = v * secs_per_unit;
    if !secs.is_finite() || secs > 1e12 {
        return Err(UnitError::TooLarge(input.to_string()));
    }
    Ok(Duration::from_secs_f64(secs))
}

/// A size for people: `4 GiB`, `64 MiB`, `4 KiB`, `2300 B`.
pub fn format_size(bytes: u64) -> String {
    const UNITS: [(&str, u64); 5] = [
        ("PiB", 1 << 50),
        ("TiB", 1 << 40),
        ("GiB", 1 << 30),
        ("MiB", 1 << 20),
        ("KiB", 1 << 10),
    ];
    for (name, unit) in UNITS {
        if bytes >= unit {
            if bytes.is_multiple_of(unit) {
                return format!("{} {}", bytes / unit, name);
            }
            return format!("{:.1} {}", bytes as f64 / unit as f64, name);
        }
    }
    format!("{bytes} B")
}

/// The same size in fio's own spelling, for fio command lines and YAML: `4g`, `64m`, `2300`.
pub fn format_size_fio(bytes: u64) -> String {
    for (suffix, unit) in [
        ("t", 1u64 << 40),
        ("g", 1 << 30),
        ("m", 1 << 20),
        ("k", 1 << 10),
    ] {
        if bytes >= unit && bytes.is_multiple_of(unit) {
            return format!("{}{}", bytes / unit, suffix);
        }
    }
    bytes.to_string()
}

/// A duration for people: `60s`, `2m30s`, `1.5s`, `250ms`.
pub fn format_duration(d: Duration) -> String {
    let ms = d.as_millis();
    if ms < 1000 {
        return format!("{ms}ms");
    }
    if !ms.is_multiple_of(1000) {
        return format!("{:.1}s", d.as_secs_f64());
    }
    let s = d.as_secs();
    match s {
        s if s % 86400 == 0 => format!("{}d", s / 86400),
        s if s % 3600 == 0 => format!("{}h", s / 3600),
        s if s >= 60 && s % 60 == 0 => format!("{}m", s / 60),
        s if s >= 60 => format!("{}m{}s", s / 60, s % 60),
        s => format!("{s}s"),
    }
}

/// fio's `num2str()` with 4 significant figures: how fio prints IOPS and bandwidth.
/// `pow2` selects 1024 and Ki/Mi prefixes; otherwise 1000 and k/M.
pub fn num2str(num: u64, pow2: bool) -> String {
    const MAXLEN: u32 = 4;
    let (base, prefixes): (u64, [&str; 7]) = if pow2 {
        (1024, ["", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"])
    } else {
        (1000, ["", "k", "M", "G", "T", "P", "E"])
    };
    let digits = |n: u64| if n == 0 { 1 } else { n.ilog10() + 1 };
    let mut n = num;
    let mut rem = 0u64;
    let mut level = 0usize;
    let mut divided = false;
    while digits(n) > MAXLEN && level + 1 < prefixes.len() {
        rem = n % base;
        n /= base;
        level += 1;
        divided = true;
    }
    if !divided {
        return n.to_string();
    }
    let carry = rem >= base / 2;
    let decimals = MAXLEN as i64 - digits(n) as i64 - 1;
    if decimals <= 0 {
        return format!("{}{}", n + u64::from(carry), prefixes[level]);
    }
    let frac = rem as f64 / base as f64;
    let text = format!("{:.*}", decimals as usize, frac);
    if text.starts_with('1') {
        // the fraction rounded up to a whole unit
        return format!(
            "{}.{}{}",
            n + 1,
            "0".repeat(decimals as usize),
            prefixes[level]
        );
    }
    format!("{}{}{}", n, &text[1..], prefixes[level])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_are_powers_of_1024_as_in_fio() {
        assert_eq!(parse_size("4k"), Ok(4096));
        assert_eq!(parse_size("4K"), Ok(4096));
        assert_eq!(parse_size("4KiB"), Ok(4096));
        assert_eq!(parse_size("4kB"), Ok(4096));
        assert_eq!(parse_size("512m"), Ok(512 << 20));
        assert_eq!(parse_size("4g"), Ok(4 << 30));
        assert_eq!(parse_size("1t"), Ok(1 << 40));
        assert_eq!(parse_size("2300"), Ok(2300));
        assert_eq!(parse_size("1.5k"), Ok(1536));
    }

    #[test]
    fn bad_sizes_are_refused_with_the_input_named() {
        assert_eq!(parse_size("-1"), Err(UnitError::Negative("-1".into())));
        assert!(matches!(parse_size("abc"), Err(UnitError::BadSize(_))));
        assert!(matches!(parse_size(""), Err(UnitError::Empty(_))));
        assert!(matches!(parse_size("4q"), Err(UnitError::BadSize(_))));
        assert!(matches!(parse_size("1.2.3k"), Err(UnitError::BadSize(_))));
        assert!(matches!(parse_size("0.3"), Err(UnitError::BadSize(_))));
        assert!(matches!(
            parse_size("99999999999p"),
            Err(UnitError::TooLarge(_))
        ));
        let msg = parse_size("abc").unwrap_err().to_string();
        assert!(msg.contains("'abc'"), "{msg}");
    }

    #[test]
    fn durations_default_to_seconds_as_fio_runtime() {
        assert_eq!(parse_duration("60"), Ok(Duration::from_secs(60)));
        assert_eq!(parse_duration("60s"), Ok(Duration::from_secs(60)));
        assert_eq!(parse_duration("10m"), Ok(Duration::from_secs(600)));
        assert_eq!(parse_duration("2h"), Ok(Duration::from_secs(7200)));
        assert_eq!(parse_duration("3d"), Ok(Duration::from_secs(3 * 86400)));
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("1.5"), Ok(Duration::from_millis(1500)));
        assert!(parse_duration("soon").is_err());
        assert!(parse_duration("-5").is_err());
        assert!(parse_duration("5y").is_err());
    }

    #[test]
    fn sizes_and_durations_print_back() {
        assert_eq!(format_size(4 << 30), "4 GiB");
        assert_eq!(format_size(2300), "2.2 KiB");
        assert_eq!(format_size(100), "100 B");
        assert_eq!(format_size_fio(4 << 30), "4g");
        assert_eq!(format_size_fio(2300), "2300");
        assert_eq!(format_duration(Duration::from_secs(60)), "1m");
        assert_eq!(format_duration(Duration::from_secs(90)), "1m30s");
        assert_eq!(format_duration(Duration::from_secs(5)), "5s");
        assert_eq!(format_duration(Duration::from_millis(1500)), "1.5s");
    }

    #[test]
    fn num2str_matches_the_figures_fio_printed() {
        // fio-semantics.md §3.3 and §7.1: every one of these was printed by fio 3.33.
        assert_eq!(num2str(3994, false), "3994");
        assert_eq!(num2str(69_510, false), "69.5k");
        assert_eq!(num2str(25_974, false), "26.0k");
        assert_eq!(num2str(158_000, false), "158k");
        assert_eq!(num2str(1_235_000, false), "1235k");
        assert_eq!(num2str(99_950, false), "99.9k");
        assert_eq!(num2str(284_713_473, true), "272Mi");
        assert_eq!(num2str(284_713_473, false), "285M");
        assert_eq!(num2str(16_363_320, true), "15.6Mi");
        assert_eq!(num2str(16_363_320, false), "16.4M");
    }
}
