//! Numbers as iopscheck writes them, in one place for every format, the fleet and the
//! messages: [`fmt_value`] for tables and charts (decimals by size), [`fmt_precise`] for
//! sentences that must not round a miss into a pass, [`fmt_exact`] for machines (reads back
//! as the same f64), [`short`] and [`short_tenths`] for figures inside warnings and details.
//! A renderer that writes a figure takes it from here, never from another renderer.

/// How far a figure fio printed to 3–4 significant digits may be from the exact one: half a
/// unit of the last digit of a 3-digit figure is 0.5%, with a margin for fio's rounding (and
/// more than terse's truncation to whole KiB/s or IOPS ever is above 200 of them).
pub const PRINTED: f64 = 0.006;

/// A threshold with the digits it has: as [`fmt_value`] writes a figure of its size where that
/// is the threshold itself (3000, 11.75, 12.00), else with the decimals the threshold needs
/// (191.95, not 191.9 or 192), so that a figure beside it never reads as meeting it when it
/// does not.
pub fn fmt_threshold(v: f64) -> String {
    threshold_as(v, fmt_value)
}

/// A threshold as `figure` writes a figure where that is the threshold itself, else with the
/// decimals it needs ([`fmt_threshold`]).
pub fn threshold_as(v: f64, figure: impl Fn(f64) -> String) -> String {
    let s = figure(v);
    if !v.is_finite() || s.parse::<f64>().ok() == Some(v) {
        return s;
    }
    let exact = fmt_exact(v);
    let decimals = exact.split_once('.').map_or(0, |(_, d)| d.len());
    if decimals <= 6 && !exact.contains(['e', 'E']) {
        exact
    } else {
        fmt_precise(v)
    }
}

/// A figure with as many decimals as its size deserves.
pub fn fmt_value(v: f64) -> String {
    let a = v.abs();
    if a >= 1000.0 {
        format!("{v:.0}")
    } else if a >= 100.0 {
        format!("{v:.1}")
    } else if a >= 1.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.3}")
    }
}

/// A number for machines: the shortest text that reads back as the same f64.
pub fn fmt_exact(v: f64) -> String {
    if v.is_nan() {
        "NaN".into()
    } else if v.is_infinite() {
        if v > 0.0 {
            "+Inf".into()
        } else {
            "-Inf".into()
        }
    } else {
        crate::shortest::f64_text(v)
    }
}

/// A number for messages: up to two decimals (four significant digits below 1), trailing
/// zeros dropped, so 2995.2 stays 2995.2 where the table would round it to 2995.
pub fn fmt_precise(v: f64) -> String {
    if !v.is_finite() {
        return fmt_exact(v);
    }
    let decimals = if v.abs() >= 1.0 || v == 0.0 {
        2
    } else {
        (3 - v.abs().log10().floor() as i32).clamp(2, 12) as usize
    };
    let s = format!("{v:.decimals$}");
    let s = if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.')
    } else {
        &s
    };
    if s == "-0" { "0".into() } else { s.to_string() }
}

/// A figure in a sentence: whole from 100 up, else two decimals (3994, 16.40).
pub fn short(v: f64) -> String {
    if v.abs() >= 100.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.2}")
    }
}

/// A figure in a detail line: whole from 100 up, else one decimal (3994, 16.4).
pub fn short_tenths(v: f64) -> String {
    if v >= 100.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.1}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn precise_numbers_keep_what_matters() {
        assert_eq!(fmt_precise(2995.2), "2995.2");
        assert_eq!(fmt_precise(3000.0), "3000");
        assert_eq!(fmt_precise(11.71875), "11.72");
        assert_eq!(fmt_precise(0.012345), "0.01235");
        assert_eq!(fmt_precise(-0.0), "0");
        assert_eq!(fmt_exact(f64::INFINITY), "+Inf");
        assert_eq!(fmt_exact(4198.4), "4198.4");
    }

    #[test]
    fn thresholds_keep_their_digits() {
        assert_eq!(fmt_threshold(191.95), "191.95");
        assert_eq!(fmt_threshold(3000.0), "3000");
        assert_eq!(fmt_threshold(11.75), "11.75");
        assert_eq!(fmt_threshold(12.0), "12.00");
        assert_eq!(fmt_threshold(2999.5), "2999.5");
        assert_eq!(fmt_threshold(0.1 + 0.2), "0.3");
        assert_eq!(threshold_as(191.95, short), "191.95");
        assert_eq!(threshold_as(0.5, short), "0.50");
    }

    #[test]
    fn figures_get_decimals_by_size() {
        assert_eq!(fmt_value(3994.4), "3994");
        assert_eq!(fmt_value(123.45), "123.5");
        assert_eq!(fmt_value(16.4), "16.40");
        assert_eq!(fmt_value(0.5), "0.500");
        assert_eq!(short(-123.4), "-123");
        assert_eq!(short(16.4), "16.40");
        assert_eq!(short_tenths(16.44), "16.4");
    }
}
