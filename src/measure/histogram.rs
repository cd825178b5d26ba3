//! fio's latency histogram: 64 linear buckets per power of two (relative error ≤ 1/128),
//! percentiles reported as bucket midpoints, and exact min/max/mean/stddev kept beside it
//! (Welford, n − 1), as fio's stat.c does.

use super::Latency;

const BITS: u32 = 6;
const VAL: u64 = 1 << BITS; // 64 buckets per group
const GROUPS: usize = 29;
const BUCKETS: usize = GROUPS * VAL as usize; // 1856

/// fio's default percentile list.
pub const DEFAULT_PERCENTILES: [f64; 17] = [
    1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.95,
    99.99,
];

#[derive(Clone)]
pub struct Histogram {
    buckets: Box<[u64; BUCKETS]>,
    n: u64,
    min: u64,
    max: u64,
    mean: f64,
    m2: f64,
}

impl Default for Histogram {
    fn default() -> Self {
        Histogram {
            buckets: Box::new([0; BUCKETS]),
            n: 0,
            min: u64::MAX,
            max: 0,
            mean: 0.0,
            m2: 0.0,
        }
    }
}

impl std::fmt::Debug for Histogram {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Histogram").field("n", &self.n).finish()
    }
}

/// Bucket index of a value in ns (fio's `plat_val_to_idx`).
pub fn bucket_of(v: u64) -> usize {
    let msb = if v == 0 { 0 } else { 63 - v.leading_zeros() };
    if msb <= BITS {
        return v as usize;
    }
    let error_bits = msb - BITS;
    let base = (error_bits as u64 + 1) << BITS;
    let offset = (v >> error_bits) & (VAL - 1);
    ((base + offset) as usize).min(BUCKETS - 1)
}

/// The value fio reports for a bucket: the value itself below 128, else the midpoint.
pub fn bucket_value(i: usize) -> f64 {
    if i < (2 * VAL) as usize {
        return i as f64;
    }
    let error_bits = (i as u64 >> BITS) - 1;
    let base = 1u64 << (error_bits + BITS as u64);
    let k = i as u64 & (VAL - 1);
    base as f64 + (k as f64 + 0.5) * (1u64 << error_bits) as f64
}

impl Histogram {
    pub fn record(&mut self, ns: u64) {
        self.buckets[bucket_of(ns)] += 1;
        self.n += 1;
        self.min = self.min.min(ns);
        self.max = self.max.max(ns);
        let x = ns as f64;
        let delta = x - self.mean;
        self.mean += delta / self.n as f64;
        self.m2 += delta * (x - self.mean);
    }

    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// Adds another histogram's samples (fio's group reporting merges members this way).
    pub fn merge(&mut self, other: &Histogram) {
        if other.n == 0 {
            return;
        }
        for (a, b) in self.buckets.iter_mut().zip(other.buckets.iter()) {
            *a += b;
        }
        let n = self.n + other.n;
        let delta = other.mean - self.mean;
        let mean = self.mean + delta * other.n as f64 / n as f64;
        self.m2 += other.m2 + delta * delta * self.n as f64 * other.n as f64 / n as f64;
        self.mean = mean;
        self.n = n;
        self.min = self.min.min(other.min);
        self.max = self.max.max(other.max);
    }

    /// The value of percentile `p`: the first bucket whose running count reaches p% of n.
    pub fn percentile(&self, p: f64) -> f64 {
        if self.n == 0 {
            return 0.0;
        }
        let target = p / 100.0 * self.n as f64;
        let mut seen = 0u64;
        for (i, &c) in self.buckets.iter().enumerate() {
            seen += c;
            if c > 0 && seen as f64 >= target {
                return bucket_value(i);
            }
        }
        bucket_value(BUCKETS - 1)
    }

    pub fn summary(&self) -> Latency {
        if self.n == 0 {
            return Latency::default();
        }
        let stddev = if self.n > 1 {
            (self.m2 / (self.n - 1) as f64).sqrt()
        } else {
            0.0
        };
        Latency {
            n: self.n,
            min_ns: self.min as f64,
            max_ns: self.max as f64,
            mean_ns: self.mean,
            stddev_ns: stddev,
            percentiles: DEFAULT_PERCENTILES
                .iter()
                .map(|&p| (p, self.percentile(p)))
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_match_fio() {
        // fio-semantics.md §5.2: 6240 is the midpoint of bucket [6208, 6271].
        let i = bucket_of(6208);
        assert_eq!(bucket_of(6271), i);
        assert_ne!(bucket_of(6272), i);
        assert_eq!(bucket_value(i), 6240.0);
        for v in 0..128 {
            assert_eq!(bucket_value(bucket_of(v)), v as f64);
        }
        assert_eq!(bucket_of(u64::MAX), BUCKETS - 1);
    }

    #[test]
    fn the_reported_value_is_within_one_percent() {
        let mut v = 1u64;
        while v < (1u64 << 33) {
            let r = bucket_value(bucket_of(v));
            assert!(
                ((r - v as f64) / v as f64).abs() <= 1.0 / 128.0 + 1e-12,
                "{v} → {r}"
            );
            v = v * 3 / 2 + 1;
        }
    }

    #[test]
    fn percentiles_and_moments() {
        let mut h = Histogram::default();
        for v in 1..=1000u64 {
            h.record(v * 1000);
        }
        let s = h.summary();
        assert_eq!(s.n, 1000);
        assert_eq!(s.min_ns, 1000.0);
        assert_eq!(s.max_ns, 1_000_000.0);
        assert!((s.mean_ns - 500_500.0).abs() < 1e-6);
        // sample stddev of 1..=1000 scaled by 1000
        assert!((s.stddev_ns - 288_819.436).abs() < 0.01);
        let p50 = s.percentile(50.0).unwrap();
        assert!((p50 - 500_000.0).abs() / 500_000.0 < 0.01, "{p50}");
        let p99 = s.percentile(99.0).unwrap();
        assert!((p99 - 990_000.0).abs() / 990_000.0 < 0.01, "{p99}");
    }

    #[test]
    fn merging_equals_recording_together() {
        let (mut a, mut b, mut all) = (
            Histogram::default(),
            Histogram::default(),
            Histogram::default(),
        );
        for v in 0..500u64 {
            a.record(v * 37 + 100);
            all.record(v * 37 + 100);
        }
        for v in 0..300u64 {
            b.record(v * 91 + 5000);
            all.record(v * 91 + 5000);
        }
        a.merge(&b);
        let (x, y) = (a.summary(), all.summary());
        assert_eq!(x.n, y.n);
        assert_eq!(x.percentiles, y.percentiles);
        assert!((x.mean_ns - y.mean_ns).abs() < 1e-6);
        assert!((x.stddev_ns - y.stddev_ns).abs() < 1e-6);
    }
}
