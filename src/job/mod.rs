//! The job: what to run, in fio's vocabulary. One type serves the policy (what the vendor
//! prescribes), the native engine, the fio command line, and imported outputs (as a
//! [`JobShape`], where any field may be unknown).

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;
use std::time::Duration;

mod options;
pub use options::{LIMITS, limits_of, reshape};

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::units;

/// fio's `rw=`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[allow(clippy::enum_variant_names)] // fio's own names: rw=rw, rw=randrw
pub enum Rw {
    Read,
    Write,
    #[serde(alias = "randomread")]
    RandRead,
    #[serde(alias = "randomwrite")]
    RandWrite,
    /// Sequential mixed reads and writes (`rw=rw` or `readwrite`).
    #[serde(alias = "readwrite")]
    Rw,
    /// Random mixed reads and writes (`rw=randrw`).
    RandRw,
}

impl Rw {
    pub fn reads(self) -> bool {
        matches!(self, Rw::Read | Rw::RandRead | Rw::Rw | Rw::RandRw)
    }
    pub fn writes(self) -> bool {
        matches!(self, Rw::Write | Rw::RandWrite | Rw::Rw | Rw::RandRw)
    }
    pub fn random(self) -> bool {
        matches!(self, Rw::RandRead | Rw::RandWrite | Rw::RandRw)
    }
    pub fn as_str(self) -> &'static str {
        match self {
            Rw::Read => "read",
            Rw::Write => "write",
            Rw::RandRead => "randread",
            Rw::RandWrite => "randwrite",
            Rw::Rw => "rw",
            Rw::RandRw => "randrw",
        }
    }
}

impl fmt::Display for Rw {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Rw {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Ok(match s.trim().to_ascii_lowercase().as_str() {
            "read" => Rw::Read,
            "write" => Rw::Write,
            "randread" | "randomread" => Rw::RandRead,
            "randwrite" | "randomwrite" => Rw::RandWrite,
            "rw" | "readwrite" => Rw::Rw,
            "randrw" => Rw::RandRw,
            other => {
                return Err(format!(
                    "unknown rw '{other}'; expected read, write, randread, randwrite, rw or randrw"
                ));
            }
        })
    }
}

/// fio's `ioengine=`, for the engines iopscheck runs itself (plus fio's other names, kept as
/// text so that an imported output can say which engine it used). The back end that runs it,
/// and what a record says ran, are in `engine/names.rs`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum IoEngine {
    Posixaio,
    IoUring,
    Psync,
    Libaio,
    Sync,
    Other(String),
}

impl IoEngine {
    pub fn as_str(&self) -> &str {
        match self {
            IoEngine::Posixaio => "posixaio",
            IoEngine::IoUring => "io_uring",
            IoEngine::Psync => "psync",
            IoEngine::Libaio => "libaio",
            IoEngine::Sync => "sync",
            IoEngine::Other(s) => s,
        }
    }
}

impl fmt::Display for IoEngine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl From<&str> for IoEngine {
    fn from(s: &str) -> Self {
        match s.trim().to_ascii_lowercase().as_str() {
            "posixaio" => IoEngine::Posixaio,
            "io_uring" | "iouring" => IoEngine::IoUring,
            "psync" | "pvsync" => IoEngine::Psync,
            "libaio" => IoEngine::Libaio,
            "sync" => IoEngine::Sync,
            other => IoEngine::Other(other.to_string()),
        }
    }
}

impl Serialize for IoEngine {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for IoEngine {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        Ok(IoEngine::from(s.as_str()))
    }
}

/// Synchronous writes requested at open time (fio's `sync=`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum SyncMode {
    #[default]
    None,
    /// O_SYNC (fio `sync=1` / `sync=sync`).
    Sync,
    /// O_DSYNC (fio `sync=dsync`, like `dd oflag=dsync`).
    Dsync,
}

/// A size in bytes, written in YAML as `4g`, `4k`, `2300` or a plain number.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Size(pub u64);

impl Serialize for Size {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&units::format_size_fio(self.0))
    }
}

impl<'de> Deserialize<'de> for Size {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = Size;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str(SIZE_EXPECTED)
            }
            fn visit_u64<E: serde::de::Error>(self, n: u64) -> Result<Size, E> {
                Ok(Size(n))
            }
            fn visit_i64<E: serde::de::Error>(self, n: i64) -> Result<Size, E> {
                u64::try_from(n)
                    .map(Size)
                    .map_err(|_| E::custom(format!("expected {SIZE_EXPECTED}, not {n}")))
            }
            fn visit_f64<E: serde::de::Error>(self, f: f64) -> Result<Size, E> {
                Err(E::custom(format!("expected {SIZE_EXPECTED}, not {f}")))
            }
            fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<Size, E> {
                units::parse_size(s).map(Size).map_err(E::custom)
            }
        }
        d.deserialize_any(V)
    }
}

/// What a size in a policy is, for its errors.
const SIZE_EXPECTED: &str = "a size such as 4g or 4096 (a whole number of bytes)";
/// What a duration in a policy is, for its errors.
const SECS_EXPECTED: &str = "a duration such as 60s, 10m or 7d (a number alone is seconds)";

/// A duration, written in YAML as `60` (seconds), `60s`, `10m`, `7d`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Secs(pub Duration);

impl Serialize for Secs {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&units::format_duration(self.0))
    }
}

impl<'de> Deserialize<'de> for Secs {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = Secs;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str(SECS_EXPECTED)
            }
            fn visit_u64<E: serde::de::Error>(self, n: u64) -> Result<Secs, E> {
                Ok(Secs(Duration::from_secs(n)))
            }
            fn visit_i64<E: serde::de::Error>(self, n: i64) -> Result<Secs, E> {
                u64::try_from(n)
                    .map(|n| Secs(Duration::from_secs(n)))
                    .map_err(|_| E::custom(format!("expected {SECS_EXPECTED}, not {n}")))
            }
            fn visit_f64<E: serde::de::Error>(self, f: f64) -> Result<Secs, E> {
                if f.is_finite() && (0.0..1e12).contains(&f) {
                    Ok(Secs(Duration::from_secs_f64(f)))
                } else {
                    Err(E::custom(format!("{f} is not a duration in seconds")))
                }
            }
            fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<Secs, E> {
                units::parse_duration(s).map(Secs).map_err(E::custom)
            }
        }
        d.deserialize_any(V)
    }
}

fn default_name() -> String {
    "iopscheck".to_string()
}
fn one() -> u32 {
    1
}
fn default_mix() -> u8 {
    50
}
fn default_true() -> bool {
    true
}

/// A complete job, as a policy prescribes it and the engine runs it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Job {
    /// fio's `--name`; also names fio's test file when `--engine fio` runs it.
    #[serde(default = "default_name")]
    pub name: String,
    pub rw: Rw,
    pub bs: Size,
    pub size: Size,
    pub ioengine: IoEngine,
    #[serde(default = "one")]
    pub iodepth: u32,
    #[serde(default = "one")]
    pub numjobs: u32,
    pub runtime: Secs,
    #[serde(default = "default_true")]
    pub time_based: bool,
    #[serde(default)]
    pub end_fsync: bool,
    #[serde(default)]
    pub direct: bool,
    /// fsync after every N writes (fio `fsync=N`); 0 = never.
    #[serde(default)]
    pub fsync: u32,
    /// fdatasync after every N writes (fio `fdatasync=N`); 0 = never.
    #[serde(default)]
    pub fdatasync: u32,
    #[serde(default)]
    pub sync: SyncMode,
    /// Percentage of reads in a mixed job (fio `rwmixread`).
    #[serde(default = "default_mix")]
    pub rwmixread: u8,
    /// fio's `group_reporting`, accepted as fio's job files write it. A run's numjobs clones
    /// are recorded as one either way, as fio's `Run status group` line reports them: the
    /// native engine combines them, fio is run with `--group_reporting`, and an import
    /// combines clones reported one by one (`fio::combine_clones`).
    #[serde(default = "default_true")]
    pub group_reporting: bool,
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum JobError {
    #[error("{field}: {msg}")]
    Invalid { field: &'static str, msg: String },
}

fn invalid(field: &'static str, msg: impl Into<String>) -> JobError {
    JobError::Invalid {
        field,
        msg: msg.into(),
    }
}

/// Largest block size accepted: several MiB, as fio jobs use for sequential throughput.
pub const MAX_BS: u64 = 64 << 20;
pub const MAX_JOBS: u32 = 256;
pub const MAX_IODEPTH: u32 = 4096;

impl Job {
    /// Checks that the engine can run this job; every message names the field.
    pub fn validate(&self) -> Result<(), JobError> {
        if self.bs.0 == 0 {
            return Err(invalid("bs", "must be at least 1 byte (e.g. 4k)"));
        }
        if self.bs.0 > MAX_BS {
            return Err(invalid(
                "bs",
                format!(
                    "{} is larger than the {} iopscheck supports",
                    units::format_size(self.bs.0),
                    units::format_size(MAX_BS)
                ),
            ));
        }
        if self.size.0 == 0 {
            return Err(invalid("size", "must be more than 0 bytes (e.g. 4g)"));
        }
        if self.bs.0 > self.size.0 {
            return Err(invalid(
                "size",
                format!(
                    "{} is smaller than the block size bs={}; the file must hold at least one block",
                    units::format_size(self.size.0),
                    units::format_size(self.bs.0)
                ),
            ));
        }
        if self.runtime.0.is_zero() {
            return Err(invalid("runtime", "must be more than 0 seconds (e.g. 60s)"));
        }
        if self.iodepth == 0 || self.iodepth > MAX_IODEPTH {
            return Err(invalid("iodepth", format!("must be 1 to {MAX_IODEPTH}")));
        }
        if self.numjobs == 0 || self.numjobs > MAX_JOBS {
            return Err(invalid("numjobs", format!("must be 1 to {MAX_JOBS}")));
        }
        if self.rwmixread > 100 {
            return Err(invalid("rwmixread", "is a percentage, 0 to 100"));
        }
        if self.direct && !self.bs.0.is_multiple_of(512) {
            return Err(invalid(
                "bs",
                "direct I/O needs a block size that is a multiple of 512 bytes",
            ));
        }
        if self.name.is_empty()
            || !self
                .name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
        {
            return Err(invalid(
                "name",
                "must be letters, digits, '-', '_' or '.' (it names fio's job)",
            ));
        }
        Ok(())
    }

    /// Number of blocks in the file: fio's N.
    pub fn blocks(&self) -> u64 {
        self.size.0 / self.bs.0
    }

    pub fn shape(&self) -> JobShape {
        JobShape {
            rw: Some(self.rw),
            bs: Some(self.bs.0),
            size: Some(self.size.0),
            iodepth: Some(self.iodepth),
            numjobs: Some(self.numjobs),
            ioengine: Some(self.ioengine.as_str().to_string()),
            runtime_s: Some(self.runtime.0.as_secs_f64()),
            direct: Some(self.direct),
            time_based: Some(self.time_based),
            end_fsync: Some(self.end_fsync),
            fsync: (self.fsync > 0).then_some(self.fsync),
            fdatasync: (self.fdatasync > 0).then_some(self.fdatasync),
            sync: (self.sync != SyncMode::None).then_some(self.sync),
            rwmixread: matches!(self.rw, Rw::Rw | Rw::RandRw).then_some(self.rwmixread),
            ..JobShape::default()
        }
    }
}

/// What a shape difference's `found` says of a field the output does not state.
pub const NOT_STATED: &str = "not stated in the output";

/// What a job looked like, as far as it is known: every field of a record's `job`, and what
/// the fio parsers extract from an output. `None` means the output did not say.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct JobShape {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rw: Option<Rw>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bs: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub iodepth: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub numjobs: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ioengine: Option<String>,
    /// Runtime in seconds as configured (not as measured).
    #[serde(default, rename = "runtime", skip_serializing_if = "Option::is_none")]
    pub runtime_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub direct: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_based: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end_fsync: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fsync: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fdatasync: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sync: Option<SyncMode>,
    /// Syncs shown without their option (fio's text): unstated fsync, fdatasync are unknown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub synced: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rwmixread: Option<u8>,
    /// fio's `ramp_time` in seconds: the start of the run that is not counted.
    #[serde(default, rename = "ramp_time", skip_serializing_if = "Option::is_none")]
    pub ramp_time_s: Option<f64>,
    /// fio's `directory` option, as an output states it (imports).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub directory: Option<String>,
    /// fio's `filename` option, as an output states it (imports).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filename: Option<String>,
    /// The options by which the job held back its own I/O ([`LIMITS`]: `rate_iops`,
    /// `thinktime`…) or changed what it measures ([`RESHAPES`]: block sizes, the region or
    /// amount of I/O, the data written, the cache, where it lands), as the output lists them
    /// with their values: empty when the output lists the job's options and none of these is
    /// set (fio's JSON), None when it does not list options at all (text, terse) or the job is
    /// ours (`run`: never limited).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limits: Option<BTreeMap<String, String>>,
}

/// One way an output's job differs from the policy's.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ShapeDifference {
    pub field: &'static str,
    pub expected: String,
    pub found: String,
}

impl fmt::Display for ShapeDifference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} is {} (the policy's test uses {})",
            self.field, self.found, self.expected
        )
    }
}

impl JobShape {
    /// Differences in what the job *is* (rw, bs, ioengine, iodepth, numjobs, direct, sync
    /// options): a result of another shape says nothing about the policy's test. A field the
    /// output does not state is reported as unknown, since it cannot be confirmed.
    pub fn shape_differences(&self, policy: &JobShape) -> Vec<ShapeDifference> {
        self.differences(policy, true)
    }

    /// [`JobShape::shape_differences`] in the fields the output states (or whose fio default
    /// it implies: buffered I/O, no sync option): where the job is known to be another one.
    pub fn stated_differences(&self, policy: &JobShape) -> Vec<ShapeDifference> {
        self.differences(policy, false)
    }

    /// The differences in what the job is; with `unstated`, a field the output does not state
    /// too, as unknown.
    fn differences(&self, policy: &JobShape, unstated: bool) -> Vec<ShapeDifference> {
        let mut out = Vec::new();
        fn cmp<T: PartialEq + fmt::Debug>(
            (out, unstated): (&mut Vec<ShapeDifference>, bool),
            field: &'static str,
            found: &Option<T>,
            expected: &Option<T>,
            show: impl Fn(&T) -> String,
        ) {
            if let Some(e) = expected {
                match found {
                    Some(f) if f == e => {}
                    Some(f) => out.push(ShapeDifference {
                        field,
                        expected: show(e),
                        found: show(f),
                    }),
                    None if unstated => out.push(ShapeDifference {
                        field,
                        expected: show(e),
                        found: NOT_STATED.into(),
                    }),
                    None => {}
                }
            }
        }
        cmp((&mut out, unstated), "rw", &self.rw, &policy.rw, |v| {
            v.to_string()
        });
        cmp((&mut out, unstated), "bs", &self.bs, &policy.bs, |v| {
            units::format_size_fio(*v)
        });
        cmp(
            (&mut out, unstated),
            "ioengine",
            &self.ioengine,
            &policy.ioengine,
            |v| v.clone(),
        );
        cmp(
            (&mut out, unstated),
            "iodepth",
            &self.iodepth,
            &policy.iodepth,
            |v| v.to_string(),
        );
        cmp(
            (&mut out, unstated),
            "numjobs",
            &self.numjobs,
            &policy.numjobs,
            |v| v.to_string(),
        );
        // An output that does not mention direct ran buffered (fio's default).
        let direct = self.direct.or(Some(false));
        cmp(
            (&mut out, unstated),
            "direct",
            &direct,
            &policy.direct,
            |v| u8::from(*v).to_string(),
        );
        let zero = |v: Option<u32>| v.or(Some(0));
        // An output that shows syncs without their option: fsync and fdatasync unknown.
        let own = |v: Option<u32>| v.or((self.synced != Some(true)).then_some(0));
        for (field, found, want) in [
            ("fsync", self.fsync, policy.fsync),
            ("fdatasync", self.fdatasync, policy.fdatasync),
        ] {
            let found = own(found);
            cmp((&mut out, unstated), field, &found, &zero(want), |v| {
                v.to_string()
            });
        }
        let sync = |v: Option<SyncMode>| v.or(Some(SyncMode::None));
        cmp(
            (&mut out, unstated),
            "sync",
            &sync(self.sync),
            &sync(policy.sync),
            |v| format!("{v:?}").to_lowercase(),
        );
        if matches!(policy.rw, Some(Rw::Rw | Rw::RandRw)) {
            let mix = |v: Option<u8>| v.or(Some(50));
            cmp(
                (&mut out, unstated),
                "rwmixread",
                &mix(self.rwmixread),
                &mix(policy.rwmixread),
                |v| v.to_string(),
            );
        }
        out
    }

    /// Differences in scale (a smaller file, a shorter runtime, no end fsync): the same test,
    /// but one that flatters the result. Each entry explains why.
    pub fn scale_differences(&self, policy: &JobShape) -> Vec<String> {
        let mut out = Vec::new();
        if let (Some(found), Some(want)) = (self.size, policy.size)
            && found < want
        {
            out.push(format!(
                "the test file was {} instead of {}: more of it fits in the page cache, which flatters buffered results",
                units::format_size(found),
                units::format_size(want)
            ));
        }
        if let (Some(found), Some(want)) = (self.runtime_s, policy.runtime_s)
            && found + 1e-9 < want
        {
            out.push(format!(
                "the runtime was {} instead of {}: a shorter run leaves less dirty data to flush and may never exhaust burst credits",
                units::format_duration(Duration::from_secs_f64(found)),
                units::format_duration(Duration::from_secs_f64(want))
            ));
        }
        if policy.end_fsync == Some(true) && self.end_fsync == Some(false) {
            out.push(
                "the job had no end_fsync: data still in the page cache was never counted, which flatters buffered writes"
                    .to_string(),
            );
        }
        out
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// The Swimlane job, field by field: for tests here and in the fio command line's.
    pub(crate) fn swimlane() -> Job {
        Job {
            name: "random-write".into(),
            rw: Rw::RandWrite,
            bs: Size(4096),
            size: Size(4 << 30),
            ioengine: IoEngine::Posixaio,
            iodepth: 1,
            numjobs: 1,
            runtime: Secs(Duration::from_secs(60)),
            time_based: true,
            end_fsync: true,
            direct: false,
            fsync: 0,
            fdatasync: 0,
            sync: SyncMode::None,
            rwmixread: 50,
            group_reporting: true,
        }
    }

    #[test]
    fn the_swimlane_job_is_valid_and_has_a_million_blocks() {
        let j = swimlane();
        j.validate().unwrap();
        assert_eq!(j.blocks(), 1_048_576);
    }

    #[test]
    fn invalid_jobs_name_the_field() {
        let mut j = swimlane();
        j.bs = Size(8192);
        j.size = Size(4096);
        let e = j.validate().unwrap_err().to_string();
        assert!(e.starts_with("size:"), "{e}");
        let mut j = swimlane();
        j.runtime = Secs(Duration::ZERO);
        assert!(
            j.validate()
                .unwrap_err()
                .to_string()
                .starts_with("runtime:")
        );
        let mut j = swimlane();
        j.numjobs = 0;
        assert!(
            j.validate()
                .unwrap_err()
                .to_string()
                .starts_with("numjobs:")
        );
    }

    #[test]
    fn shape_differences_name_each_field() {
        let policy = swimlane().shape();
        let mut other = swimlane();
        other.bs = Size(8192);
        other.ioengine = IoEngine::Libaio;
        let d = other.shape().shape_differences(&policy);
        let fields: Vec<_> = d.iter().map(|d| d.field).collect();
        assert_eq!(fields, vec!["bs", "ioengine"]);
        assert!(swimlane().shape().shape_differences(&policy).is_empty());
    }

    #[test]
    fn a_limit_is_an_option_of_fios_rate_think_flow_or_latency_groups_set_to_other_than_zero() {
        let got = limits_of([
            ("rate_iops", "2800"),
            ("ratemin", "1m"),
            ("thinktime", "0"),
            ("rate", "0k,"),
            ("flow", "-1"),
            ("rate_iops_min", ",0"),
            ("latency_target", "10ms"),
            ("rate_process", "poisson"),
            ("bs", "4k"),
            ("max_latency", "soon"),
        ]);
        let got: Vec<(&str, &str)> = got.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        assert_eq!(
            got,
            [
                ("flow", "-1"),
                ("latency_target", "10ms"),
                ("max_latency", "soon"),
                ("rate_iops", "2800"),
                ("rate_min", "1m"),
            ]
        );
        assert!(limits_of([("rate", ","), ("thinktime", "")]).is_empty());
        assert_eq!(
            limits_of([("rate", "0,5m")])
                .get("rate")
                .map(String::as_str),
            Some("0,5m")
        );
    }

    #[test]
    fn a_smaller_file_is_a_scale_difference_with_a_reason() {
        let policy = swimlane().shape();
        let mut small = swimlane();
        small.size = Size(64 << 20);
        small.runtime = Secs(Duration::from_secs(2));
        let s = small.shape().scale_differences(&policy);
        assert_eq!(s.len(), 2);
        assert!(s[0].contains("page cache"));
        assert!(small.shape().shape_differences(&policy).is_empty());
    }
}
