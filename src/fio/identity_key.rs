//! A fixed-size summary of a [`RunIdentity`], for finding one fio run among many without
//! holding the runs (a fleet's nodes' evidence, read as it streams in).
//!
//! It keeps what [`RunIdentity::same_run`] compares, compactly: the job, group, error and
//! each direction's runtime as one hash (they must be equal); the fio version, the process
//! and the date as 32-bit hashes; the exact ranges of I/O counts and bytes; and the latency
//! means and CPU shares as `f32` ranges rounded outwards. [`IdentityKey::same_run`] holds two
//! outputs of one run the same whenever `same_run` does (a range widened by an `f32` step
//! still overlaps what it overlapped); it may also hold the same two runs `same_run` keeps
//! apart by less than a ten-millionth of a figure, or by a hash collision (a 2⁻³² chance):
//! never one run taken for two.

use std::hash::{Hash, Hasher};

use super::RunIdentity;

/// A range of a figure printed with decimals, as `f32`s rounded outwards; NaN: not stated.
type Span = [f32; 2];

const UNSTATED: Span = [f32::NAN, f32::NAN];

/// One direction's figures.
#[derive(Debug, Clone, PartialEq, Default)]
struct DirKey {
    ios: (u64, u64),
    bytes: (u64, u64),
    /// clat, lat and slat means, ns.
    means: [Span; 3],
}

/// What names one fio run, in 160 bytes.
#[derive(Debug, Clone, PartialEq)]
pub struct IdentityKey {
    coarse: u64,
    /// The fio version's hash; 0: not stated.
    version: u32,
    /// Which of `dirs` moved data (bit 0 read, bit 1 write).
    present: u8,
    /// The process and the date: (kind, value) hashes; (0, 0): not stated.
    marks: [(u32, u32); 2],
    /// Read and write (zero where it moved nothing).
    dirs: [DirKey; 2],
    /// usr and sys CPU shares, %.
    cpu: [Span; 2],
}

fn hash32(v: impl Hash) -> u32 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    v.hash(&mut h);
    (h.finish() as u32).max(1)
}

/// `lo`..`hi` as `f32`s that hold it.
fn span(r: Option<(f64, f64)>) -> Span {
    let Some((lo, hi)) = r.filter(|(a, b)| !a.is_nan() && !b.is_nan()) else {
        return UNSTATED;
    };
    let (mut a, mut b) = (lo as f32, hi as f32);
    if f64::from(a) > lo {
        a = a.next_down();
    }
    if f64::from(b) < hi {
        b = b.next_up();
    }
    [a, b]
}

fn overlap(a: Span, b: Span) -> Option<bool> {
    if a[0].is_nan() || b[0].is_nan() {
        return None;
    }
    Some(a[0] <= b[1] && b[0] <= a[1])
}

fn overlap_u((a0, a1): (u64, u64), (b0, b1): (u64, u64)) -> bool {
    a0 <= b1 && b0 <= a1
}

impl IdentityKey {
    pub fn of(id: &RunIdentity) -> IdentityKey {
        let mut h = std::collections::hash_map::DefaultHasher::new();
        ("fio_run", &id.job, id.groupid, id.error).hash(&mut h);
        for d in [&id.read, &id.write] {
            d.as_ref().map(|d| d.runtime_ms).hash(&mut h);
        }
        let mark = |m: &Option<String>| {
            m.as_deref().map_or((0, 0), |s| {
                (
                    hash32(s.split([':', '=']).next().unwrap_or_default()),
                    hash32(s),
                )
            })
        };
        let dir = |d: &Option<super::identity::DirectionIdentity>| {
            d.as_ref().map_or_else(DirKey::default, |d| DirKey {
                ios: d.ios,
                bytes: d.bytes,
                means: [
                    span(d.clat_mean_ns),
                    span(d.lat_mean_ns),
                    span(d.slat_mean_ns),
                ],
            })
        };
        IdentityKey {
            coarse: h.finish(),
            version: id.fio_version.as_deref().map_or(0, hash32),
            present: u8::from(id.read.is_some()) | u8::from(id.write.is_some()) << 1,
            marks: [mark(&id.process), mark(&id.time)],
            dirs: [dir(&id.read), dir(&id.write)],
            cpu: [span(id.cpu_usr_pct), span(id.cpu_sys_pct)],
        }
    }

    /// What two outputs of one run always share exactly: the job, group, error and each
    /// direction's runtime, hashed.
    pub fn coarse(&self) -> u64 {
        self.coarse
    }

    /// The range of I/O counts of the first direction that moved data: two outputs of one run
    /// state overlapping ranges. None where no direction moved data (such a block names no
    /// run).
    pub fn ios(&self) -> Option<(u64, u64)> {
        (0..2)
            .find(|i| self.present >> i & 1 == 1)
            .map(|i| self.dirs[i].ios)
    }

    /// [`RunIdentity::same_run`] on the summaries (see the module's note on its margins).
    pub fn same_run(&self, other: &IdentityKey) -> bool {
        if self.coarse != other.coarse {
            return false;
        }
        if self.version != 0 && other.version != 0 && self.version != other.version {
            return false;
        }
        for (a, b) in self.marks.iter().zip(&other.marks) {
            if a.0 != 0 && a.0 == b.0 && a.1 != b.1 {
                return false;
            }
        }
        if self.present == 0 || self.present != other.present {
            return false;
        }
        let mut specific = 0;
        let mut agree = |a: Span, b: Span| match overlap(a, b) {
            None => true,
            Some(o) => {
                specific += 1;
                o
            }
        };
        for (i, (a, b)) in self.dirs.iter().zip(&other.dirs).enumerate() {
            if self.present >> i & 1 == 0 {
                continue;
            }
            if !overlap_u(a.ios, b.ios) || !overlap_u(a.bytes, b.bytes) {
                return false;
            }
            for (x, y) in a.means.iter().zip(&b.means) {
                if !agree(*x, *y) {
                    return false;
                }
            }
        }
        for (x, y) in self.cpu.iter().zip(&other.cpu) {
            if !agree(*x, *y) {
                return false;
            }
        }
        specific > 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_summary_is_small() {
        assert!(std::mem::size_of::<IdentityKey>() <= 160);
    }

    #[test]
    fn a_span_holds_the_range_it_stands_for() {
        for (lo, hi) in [
            (32317.821499967682, 32317.82250003232),
            (3.1904284999968096, 3.1904295000031904),
            (1e-9, 1e-9),
            (1e40, 1e41),
        ] {
            let [a, b] = span(Some((lo, hi)));
            assert!(
                f64::from(a) <= lo && f64::from(b) >= hi,
                "{lo} {hi}: {a} {b}"
            );
        }
        assert!(span(None)[0].is_nan());
    }

    #[test]
    fn the_summary_agrees_with_same_run() {
        let base: RunIdentity = serde_json::from_value(serde_json::json!({
            "fio_version": "3.33", "job": "random-write", "groupid": 0, "error": 0,
            "write": {"runtime_ms": 1004, "ios": [25125, 25125], "bytes": [102912000, 102912000],
                "clat_mean_ns": [32317.82182796768, 32317.822828032316]},
            "time": "json:1796262833",
            "cpu_usr_pct": [3.1904284999968096, 3.1904295000031904]
        }))
        .unwrap();
        let text: RunIdentity = serde_json::from_value(serde_json::json!({
            "fio_version": "3.33", "job": "random-write", "groupid": 0, "error": 0,
            "write": {"runtime_ms": 1004, "ios": [25125, 25125], "bytes": [102248114, 103483522],
                "clat_mean_ns": [32156.2259, 32479.414099999998]},
            "process": "pid=7544", "time": "text:1796262833",
            "cpu_usr_pct": [3.18499999999681, 3.1950000000031897]
        }))
        .unwrap();
        type Edit = fn(&mut RunIdentity);
        let edits: [(&str, Edit); 7] = [
            ("as it is", |_| {}),
            ("another runtime", |i| {
                i.write.as_mut().unwrap().runtime_ms += 1
            }),
            ("another count", |i| {
                i.write.as_mut().unwrap().ios = (25127, 25127)
            }),
            ("another mean", |i| {
                i.write.as_mut().unwrap().clat_mean_ns = Some((32490.0, 32490.001))
            }),
            ("another share", |i| i.cpu_usr_pct = Some((3.2, 3.2))),
            ("another version", |i| i.fio_version = Some("3.36".into())),
            ("no specific figure", |i| {
                i.write.as_mut().unwrap().clat_mean_ns = None;
                i.cpu_usr_pct = None;
            }),
        ];
        for (what, edit) in edits {
            for other in [&base, &text] {
                let mut b = other.clone();
                edit(&mut b);
                let exact = base.same_run(&b);
                let key = IdentityKey::of(&base).same_run(&IdentityKey::of(&b));
                assert_eq!(key, exact, "{what}");
                assert_eq!(exact, what == "as it is", "{what}");
            }
        }
    }
}
