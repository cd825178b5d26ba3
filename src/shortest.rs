//! An f64 as Rust's `Display` writes it (`format!("{v}")`: the shortest digits that read back
//! as the same number, never an exponent, no `.0` on a whole number), about ten times faster.
//! CSV writes 33 figures a row; a report of 100,000 runs formats 3.3 million of them.
//!
//! The digits come from `zmij` (the shortest-digits writer serde_json already uses for every
//! JSON number we write; the same digits as std's, see the tests), whose text has another form:
//! `1.0` for a whole number and an exponent outside 1e-5..1e16 (`1.5e+300`, `1e-7`). Here that
//! text is laid out again without the exponent, as `Display` does.

/// Appends `v` exactly as `write!(out, "{v}")` would: `NaN`, `inf` and `-inf` included.
pub fn push_f64(out: &mut String, v: f64) {
    if !v.is_finite() {
        out.push_str(if v.is_nan() {
            "NaN"
        } else if v > 0.0 {
            "inf"
        } else {
            "-inf"
        });
        return;
    }
    let mut buf = zmij::Buffer::new();
    let text = buf.format_finite(v);
    // Most figures: zmij's fixed form ("I.F", for 1e-5 ≤ |v| < 1e16), which is Display's but
    // for a whole number's ".0", and no tie to round otherwise (see `half_up`).
    let b = text.as_bytes();
    if !b[b.len().saturating_sub(5)..].contains(&b'e') && !may_tie(v) {
        out.push_str(text.strip_suffix(".0").unwrap_or(text));
        return;
    }
    if v.is_sign_negative() {
        out.push('-');
    }
    let v = v.abs();
    let text = text.trim_start_matches('-').as_bytes();
    let (mantissa, exp) = match text.iter().rposition(|&b| b == b'e') {
        Some(e) => {
            let x = std::str::from_utf8(&text[e + 1..]).expect("zmij writes ASCII");
            let x: i32 = x
                .trim_start_matches('+')
                .parse()
                .expect("zmij writes a decimal exponent");
            (&text[..e], x)
        }
        None => (text, 0),
    };
    let mut all = [0u8; 32];
    let mut m = 0;
    let mut before_point = None;
    for &b in mantissa {
        if b == b'.' {
            before_point = Some(m as i32);
        } else {
            all[m] = b;
            m += 1;
        }
    }
    // A leading zero ("0.00012") is one place less before the point.
    let lead = all[..m].iter().take_while(|&&b| b == b'0').count();
    let mut point = before_point.unwrap_or(m as i32) - lead as i32 + exp;
    let mut digits = [0u8; 32];
    let mut n = m - lead;
    digits[..n].copy_from_slice(&all[lead..m]);
    while n > 0 && digits[n - 1] == b'0' {
        n -= 1;
    }
    half_up(v, &mut digits, &mut n, &mut point);
    let digits = std::str::from_utf8(&digits[..n]).expect("ASCII digits");
    if point <= 0 {
        out.push_str("0.");
        push_zeros(out, (-point) as usize);
        out.push_str(digits);
    } else if point as usize >= n {
        out.push_str(digits);
        push_zeros(out, point as usize - n);
    } else {
        let (int, frac) = digits.split_at(point as usize);
        out.push_str(int);
        out.push('.');
        out.push_str(frac);
    }
}

/// Whether `v` can lie exactly halfway between two shortest candidates (see [`half_up`]): a
/// tie point is `(2D + 1) / (2^(j+1) × 5^j)` with `j` ≤ 27, not a whole number, so `v` has at
/// most 28 binary fraction digits. Exact: scaling by a power of two loses nothing.
fn may_tie(v: f64) -> bool {
    let scaled = v * 268_435_456.0;
    if scaled.abs() < 9.0e18 {
        // In i64's range: whole after scaling, and not before (a truncating conversion, one
        // instruction, where `fract` is a call).
        let i = scaled as i64;
        i as f64 == scaled && i & 0x0fff_ffff != 0
    } else {
        // 2^35 and more: every such f64 is whole after scaling (at most 17 fraction bits).
        v.fract() != 0.0
    }
}

/// Where `v` lies exactly halfway between two shortest candidates, std's `Display` takes the
/// one farther from zero, zmij the even one (`167581363823776.125`: std `…776.13`, zmij
/// `…776.12`). Such a tie needs `v` to be exactly `(DIGITS + ½) × 10^k`, a number of few
/// binary fraction digits; checked exactly in integers, and the last digit rounded up then.
fn half_up(v: f64, digits: &mut [u8; 32], n: &mut usize, point: &mut i32) {
    let k = *point - *n as i32;
    // A whole number (k ≥ 1 would make the tie an odd integer above 2^53: none) or a tie
    // point needing more than 27 powers of 5 (more than 17 digits): no tie.
    if !(-27..=0).contains(&k) || *n > 17 {
        return;
    }
    let j = (-k) as u32;
    let d: u64 = digits[..*n]
        .iter()
        .fold(0, |d, &b| d * 10 + u64::from(b - b'0'));
    // The point above the digits zmij chose: (D + ½) × 10^k = (2D + 1) / (2^(j+1) × 5^j).
    let p5 = 5u64.pow(j);
    let twice = 2 * d + 1;
    if !twice.is_multiple_of(p5) {
        return;
    }
    let want = twice / p5;
    let scaled = v * f64::from_bits(u64::from(1023 + j + 1) << 52);
    if scaled.fract() != 0.0 || scaled >= 1.8e19 || scaled as u64 != want {
        return;
    }
    // Round the last digit up, carrying.
    let mut i = *n;
    loop {
        if i == 0 {
            // 999… → 1000…: one digit, one place more before the point.
            digits[0] = b'1';
            *n = 1;
            *point += 1;
            return;
        }
        i -= 1;
        if digits[i] == b'9' {
            digits[i] = b'0';
        } else {
            digits[i] += 1;
            break;
        }
    }
    while *n > 0 && digits[*n - 1] == b'0' {
        *n -= 1;
    }
}

fn push_zeros(out: &mut String, n: usize) {
    const ZEROS: &str = "0000000000000000000000000000000000000000000000000000000000000000";
    let mut n = n;
    while n > 0 {
        let k = n.min(ZEROS.len());
        out.push_str(&ZEROS[..k]);
        n -= k;
    }
}

/// `v` as `format!("{v}")` writes it.
pub fn f64_text(v: f64) -> String {
    let mut s = String::with_capacity(24);
    push_f64(&mut s, v);
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(v: f64) {
        assert_eq!(f64_text(v), format!("{v}"), "bits {:#018x}", v.to_bits());
    }

    /// A small, seeded generator (xorshift64*): the same sample every run.
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
        }
    }

    #[test]
    fn special_values_are_written_as_display_writes_them() {
        for v in [
            0.0,
            -0.0,
            f64::NAN,
            -f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::MAX,
            f64::MIN,
            f64::MIN_POSITIVE,
            -f64::MIN_POSITIVE,
            f64::EPSILON,
            f64::from_bits(1),
            -f64::from_bits(1),
            f64::from_bits(0x000f_ffff_ffff_ffff),
            1.0,
            -1.0,
            0.1,
            0.3,
            1e-5,
            1e-6,
            1.5e-7,
            1e16_f64.next_down(),
            1e15,
            1e16,
            1.5e16,
            123456789012345680.0,
            1e21,
            1e22,
            1e23,
            5e-324,
            1.7976931348623157e308,
            4000.0,
            3733.3333333333335,
            17.607380999999997,
            5.444310685350916e14,
            2f64.powi(53),
            2f64.powi(53) + 2.0,
            2f64.powi(64),
        ] {
            check(v);
            check(-v);
        }
    }

    #[test]
    fn whole_numbers_and_powers_of_ten_are_written_as_display_writes_them() {
        for i in 0..20_000 {
            check(f64::from(i));
            check(f64::from(i) * 1024.0);
        }
        // 1e15..1e22 and beyond, where an exponent form begins, and every power's neighbours.
        for e in -325..=308 {
            let v: f64 = format!("1e{e}").parse().unwrap();
            for v in [v, v.next_up(), v.next_down(), v * 3.0, v * 7.5] {
                check(v);
                check(-v);
            }
        }
        for k in 0..2_000u64 {
            check((1_000_000_000_000_000 + k * 999_999_937) as f64);
            check(1e21 + k as f64 * 1_000_000_007.0);
        }
    }

    #[test]
    fn figures_of_every_magnitude_are_written_as_display_writes_them() {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        for _ in 0..300_000 {
            // Any bit pattern: every exponent, subnormals, NaNs with payloads.
            check(f64::from_bits(rng.next()));
            // Figures as a run has them: a few decimals, up to millions.
            let r = rng.next();
            let v = (r >> 11) as f64 / (1u64 << 53) as f64 * 10f64.powi((r % 13) as i32 - 4);
            check(v);
            check((v * 1000.0).round() / 1000.0);
        }
    }

    /// Numbers of few binary fraction digits, k / 2^q: many lie exactly halfway between two
    /// shortest candidates (1 + 2^-17 = 1.00000762939453125), where std takes the one farther
    /// from zero.
    #[test]
    fn exact_ties_are_rounded_as_display_rounds_them() {
        // -167581363823776.125
        check(f64::from_bits(0xc2e3_0d42_752c_9404));
        check(1.0 + 2f64.powi(-17));
        check(2f64.powi(-25));
        let mut rng = Rng(0x0123_4567_89ab_cdef);
        for q in 1..=64 {
            for _ in 0..3_000 {
                let k = (rng.next() >> (11 + rng.next() % 40)) | 1;
                let v = k as f64 / 2f64.powi(q);
                check(v);
                check(-v);
            }
        }
        for k in (1u64 << 17..1 << 18).step_by(2) {
            check(k as f64 / 131072.0);
        }
    }

    /// `cargo test --release -- --ignored shortest`: a hundred million more.
    #[test]
    #[ignore]
    fn a_hundred_million_bit_patterns_are_written_as_display_writes_them() {
        let mut rng = Rng(0x2545_f491_4f6c_dd1d);
        let mut s = String::new();
        for _ in 0..100_000_000 {
            let v = f64::from_bits(rng.next());
            s.clear();
            push_f64(&mut s, v);
            assert_eq!(s, format!("{v}"), "bits {:#018x}", v.to_bits());
        }
    }
}
