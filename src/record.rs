//! The record: one run's figures with their context, one history line. Declared once, in
//! [`record!`] below: the owned [`Record`], its borrowed form [`RecordRef`] (a history line
//! read with its strings left in the line), and [`RunInfo`], what the runs of one context
//! share, all come from that one list of fields, as do the conversions and comparisons between
//! them. A new field is one line there (and, where a run or an import sets it, the code that
//! knows its value).
//!
//! The line codec is [`decode`]: a history line read once into a [`RecordRef`], from which a
//! reader takes its head ([`RecordRef::head`]), the compact run (`run_index::Contexts`) or the
//! whole record ([`RecordRef::into_owned`]); a line that is no record is told why by the same
//! function, so every reader accepts and skips exactly the same lines.

use std::borrow::Cow;
use std::collections::BTreeMap;

use chrono::{DateTime, FixedOffset};
use serde::{Deserialize, Serialize};

use crate::chain::Chain;
use crate::fio::RunIdentity;
use crate::job::JobShape;
use crate::measure::changepoint::Sustained;
use crate::measure::device::DeviceSummary;
use crate::measure::{BwBasis, DiskStat, Measurement, Series};

mod repeats;
pub use repeats::ImportedRun;
pub(crate) use repeats::Repeats;

/// How a `run --sustained` ended (docs/sustained.md).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SustainedRun {
    /// The disk's rate held steady (after a step, or over the whole budget).
    pub reached: bool,
    /// How, or why not, in words.
    pub how: String,
}
pub use crate::metrics::Metrics;

/// Version of the record layout. Readers skip records from a newer version with a warning.
pub const SCHEMA_VERSION: u32 = 1;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Source {
    /// The native engine.
    Native,
    /// fio, run by iopscheck (`--engine fio`).
    Fio,
    /// A fio output read by `iopscheck import`.
    Imported,
}

impl Source {
    pub fn as_str(self) -> &'static str {
        match self {
            Source::Native => "native",
            Source::Fio => "fio",
            Source::Imported => "imported",
        }
    }
}

/// A field of a record in its borrowed form, and how it becomes (and compares with) its
/// owned form.
pub(crate) trait Field {
    type Owned;
    fn own(self) -> Self::Owned;
    fn same(&self, owned: &Self::Owned) -> bool;
}

impl Field for Cow<'_, str> {
    type Owned = String;
    fn own(self) -> String {
        self.into_owned()
    }
    fn same(&self, o: &String) -> bool {
        **self == **o
    }
}

impl Field for Option<Cow<'_, str>> {
    type Owned = Option<String>;
    fn own(self) -> Option<String> {
        self.map(Cow::into_owned)
    }
    fn same(&self, o: &Option<String>) -> bool {
        self.as_deref() == o.as_deref()
    }
}

/// Fields whose borrowed form is their owned form.
macro_rules! plain_fields {
    ($($t:ty),* $(,)?) => {$(
        impl Field for $t {
            type Owned = $t;
            fn own(self) -> $t {
                self
            }
            fn same(&self, o: &$t) -> bool {
                self == o
            }
        }
    )*};
}
plain_fields!(
    u32,
    u64,
    bool,
    f64,
    Option<bool>,
    Option<u32>,
    Option<u64>,
    DateTime<FixedOffset>,
    Source,
    JobShape,
    Metrics,
    BTreeMap<String, String>,
    Option<BwBasis>,
    Option<Series>,
    Option<Sustained>,
    Option<SustainedRun>,
    Option<DeviceSummary>,
    Option<Chain>,
    Option<Box<RunIdentity>>,
);

impl<T: Field> Field for Vec<T> {
    type Owned = Vec<T::Owned>;
    fn own(self) -> Vec<T::Owned> {
        self.into_iter().map(Field::own).collect()
    }
    fn same(&self, o: &Vec<T::Owned>) -> bool {
        self.len() == o.len() && self.iter().zip(o).all(|(a, b)| a.same(b))
    }
}

/// The value a field of a context has until it is set.
trait Blank {
    fn blank() -> Self;
}

impl<T: Default> Blank for T {
    fn blank() -> T {
        T::default()
    }
}

impl Blank for Source {
    fn blank() -> Source {
        Source::Native
    }
}

/// A struct declared once in an owned and a borrowed form: the same keys, types (strings
/// borrowed), defaults and serialisation, so that a line is accepted or refused alike and a
/// borrowed value is written out as the owned one read from the same line would be.
/// `{borrow}` marks the fields whose borrowed form borrows from the line.
macro_rules! owned_and_borrowed {
    (
        $(#[$meta:meta])*
        pub struct $owned:ident / $borrowed:ident<'a> as $name_lit:literal {
            $(
                $(#[doc = $doc:literal])*
                $([$($attr:meta),*])? $({$($battr:meta),*})? $name:ident : $ot:ty => $bt:ty,
            )*
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
        pub struct $owned {
            $(
                $(#[doc = $doc])*
                $($(#[serde($attr)])*)?
                pub $name: $ot,
            )*
        }

        #[doc = concat!("[`", stringify!($owned), "`] with its strings borrowed from the line it was read from.")]
        #[derive(Serialize, Deserialize)]
        #[serde(rename = $name_lit)]
        pub(crate) struct $borrowed<'a> {
            $(
                $($(#[serde($attr)])*)?
                $($(#[serde($battr)])*)?
                pub(crate) $name: $bt,
            )*
        }

        impl<'a> Field for $borrowed<'a> {
            type Owned = $owned;
            fn own(self) -> $owned {
                $owned { $($name: Field::own(self.$name),)* }
            }
            fn same(&self, o: &$owned) -> bool {
                true $(&& self.$name.same(&o.$name))*
            }
        }
    };
}

owned_and_borrowed! {
    /// Where the test ran.
    #[derive(Default)]
    pub struct Target / TargetRef<'a> as "Target" {
        {borrow} dir: String => Cow<'a, str>,
        [default, skip_serializing_if = "Option::is_none"] {borrow} filesystem: Option<String> => Option<Cow<'a, str>>,
        [default, skip_serializing_if = "Option::is_none"] {borrow} device: Option<String> => Option<Cow<'a, str>>,
        [default, skip_serializing_if = "Option::is_none"] {borrow} mount_point: Option<String> => Option<Cow<'a, str>>,
        [default, skip_serializing_if = "Option::is_none"] {borrow} mount_options: Option<String> => Option<Cow<'a, str>>,
        [default, skip_serializing_if = "Option::is_none"] {borrow} model: Option<String> => Option<Cow<'a, str>>,
        [default, skip_serializing_if = "Option::is_none"] rotational: Option<bool> => Option<bool>,
        [default, skip_serializing_if = "Option::is_none"] {borrow} scheduler: Option<String> => Option<Cow<'a, str>>,
        /// Why the device keeps its data in RAM, as the kernel said when the run was made
        /// ("loop0 backed by a file on tmpfs (in RAM)"): a deviation wherever it is judged.
        [default, skip_serializing_if = "Option::is_none"] {borrow} in_ram: Option<String> => Option<Cow<'a, str>>,
        [default, skip_serializing_if = "Option::is_none"] {borrow} kernel: Option<String> => Option<Cow<'a, str>>,
        /// RAM of the machine, for the page-cache warning and rules per GiB of memory.
        [default, skip_serializing_if = "Option::is_none"] memory_bytes: Option<u64> => Option<u64>,
        /// The machine's logical CPUs (vCPUs), for rules per vCPU.
        [default, skip_serializing_if = "Option::is_none"] cpus: Option<u32> => Option<u32>,
        /// The operating system and its version.
        [default, skip_serializing_if = "Option::is_none"] {borrow} os: Option<String> => Option<Cow<'a, str>>,
        /// Size of the filesystem holding the target, for rules per TiB of capacity.
        [default, skip_serializing_if = "Option::is_none"] capacity_bytes: Option<u64> => Option<u64>,
    }
}

impl Default for TargetRef<'_> {
    fn default() -> Self {
        TargetRef {
            dir: Cow::Borrowed(""),
            filesystem: None,
            device: None,
            mount_point: None,
            mount_options: None,
            model: None,
            rotational: None,
            scheduler: None,
            in_ram: None,
            kernel: None,
            memory_bytes: None,
            cpus: None,
            os: None,
            capacity_bytes: None,
        }
    }
}

/// `DiskStat` with its name borrowed; the same keys and serialisation.
#[derive(Deserialize, Serialize)]
#[serde(rename = "DiskStat")]
pub(crate) struct DiskStatRef<'a> {
    #[serde(borrow)]
    name: Cow<'a, str>,
    read_ios: u64,
    write_ios: u64,
    read_merges: u64,
    write_merges: u64,
    read_ticks_ms: u64,
    write_ticks_ms: u64,
    in_queue_ms: u64,
    util_pct: f64,
}

impl Field for DiskStatRef<'_> {
    type Owned = DiskStat;
    fn own(self) -> DiskStat {
        DiskStat {
            name: self.name.into_owned(),
            read_ios: self.read_ios,
            write_ios: self.write_ios,
            read_merges: self.read_merges,
            write_merges: self.write_merges,
            read_ticks_ms: self.read_ticks_ms,
            write_ticks_ms: self.write_ticks_ms,
            in_queue_ms: self.in_queue_ms,
            util_pct: self.util_pct,
        }
    }
    fn same(&self, o: &DiskStat) -> bool {
        self.name == o.name
            && self.read_ios == o.read_ios
            && self.write_ios == o.write_ios
            && self.read_merges == o.read_merges
            && self.write_merges == o.write_merges
            && self.read_ticks_ms == o.read_ticks_ms
            && self.write_ticks_ms == o.write_ticks_ms
            && self.in_queue_ms == o.in_queue_ms
            && self.util_pct == o.util_pct
    }
}

/// A writer that only counts the bytes written to it.
struct ByteCount(usize);

impl std::io::Write for ByteCount {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0 += buf.len();
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The record, declared once. Each field is `context` (what the runs of one context share:
/// held once, in [`RunInfo`], for all of them) or `run` (this run's own: its time, figures,
/// series), with its serde attributes, whether its borrowed form borrows from the line, and
/// its owned and borrowed types. The order is the order of the keys in a history line.
macro_rules! record {
    (
        $(
            $(#[doc = $doc:literal])*
            $kind:ident $([$($attr:meta),*])? $({$($battr:meta),*})? $name:ident : $ot:ty => $bt:ty,
        )*
    ) => {
        /// One run: a measurement's metrics with their context. One history line.
        #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
        pub struct Record {
            $(
                $(#[doc = $doc])*
                $($(#[serde($attr)])*)?
                pub $name: $ot,
            )*
        }

        /// A history line read for judging: every key of [`Record`], with the same types,
        /// defaults and serialisation, the strings borrowed from the line.
        #[derive(Serialize, Deserialize)]
        #[serde(rename = "Record")]
        pub(crate) struct RecordRef<'a> {
            $(
                $($(#[serde($attr)])*)?
                $($(#[serde($battr)])*)?
                pub(crate) $name: $bt,
            )*
        }

        impl RecordRef<'_> {
            /// The whole record, owned.
            pub(crate) fn into_owned(self) -> Record {
                Record { $($name: Field::own(self.$name),)* }
            }
        }

        record!(@context [] [] $($kind $name: $ot,)*);
    };
    // The `context` fields, gathered into `RunInfo`; the `run` fields into `RunPart`.
    (@context [$($cn:ident: $ct:ty,)*] [$($rn:ident: $rt:ty,)*]) => {
        /// What the runs of one context share: every `context` field of a record. Held once
        /// for all the runs that share it.
        #[derive(Debug, Clone, PartialEq)]
        pub struct RunInfo {
            $(pub $cn: $ct,)*
        }

        /// A record's own fields, those of one run (not shared with the runs of its context).
        #[derive(Debug, Clone, PartialEq)]
        pub struct RunPart {
            $(pub $rn: $rt,)*
        }

        impl RunInfo {
            /// The context of `r`.
            pub fn of(r: &Record) -> RunInfo {
                RunInfo { $($cn: r.$cn.clone(),)* }
            }

            /// The context of a line, its `run` fields left behind.
            pub(crate) fn of_line(r: RecordRef<'_>) -> RunInfo {
                RunInfo { $($cn: Field::own(r.$cn),)* }
            }

            /// Whether the line's context is this one.
            pub(crate) fn matches(&self, r: &RecordRef<'_>) -> bool {
                true $(&& r.$cn.same(&self.$cn))*
            }

            /// The bytes the context's fields take as JSON: an estimate from above of the
            /// text it holds (`hold::cost`).
            pub fn text_len(&self) -> usize {
                let mut n = ByteCount(0);
                $(let _ = serde_json::to_writer(&mut n, &self.$cn);)*
                n.0
            }

            /// A context with every field blank (empty, none, zero), for [`RunInfo::new`].
            fn blank() -> RunInfo {
                RunInfo { $($cn: Blank::blank(),)* }
            }

            /// The record of a run of this context.
            pub fn join(self, run: RunPart) -> Record {
                Record { $($cn: self.$cn,)* $($rn: run.$rn,)* }
            }
        }
    };
    (@context [$($c:tt)*] [$($r:tt)*] context $name:ident: $t:ty, $($rest:tt)*) => {
        record!(@context [$($c)* $name: $t,] [$($r)*] $($rest)*);
    };
    (@context [$($c:tt)*] [$($r:tt)*] run $name:ident: $t:ty, $($rest:tt)*) => {
        record!(@context [$($c)*] [$($r)* $name: $t,] $($rest)*);
    };
}

record! {
    context schema_version: u32 => u32,
    run [deserialize_with = "de_timestamp"] timestamp: DateTime<FixedOffset> => DateTime<FixedOffset>,
    context {borrow} host: String => Cow<'a, str>,
    context source: Source => Source,
    context [default, skip_serializing_if = "Option::is_none"] {borrow} source_file: Option<String> => Option<Cow<'a, str>>,
    /// Digest of the imported output, to refuse recording it twice.
    run [default, skip_serializing_if = "Option::is_none"] {borrow} source_digest: Option<String> => Option<Cow<'a, str>>,
    /// What names the imported fio run in any of its formats (`fio::RunIdentity`), to refuse
    /// recording one run twice from two of its outputs. Boxed: only imports have one.
    run [default, skip_serializing_if = "Option::is_none"] fio_run: Option<Box<RunIdentity>> => Option<Box<RunIdentity>>,
    /// The engine that actually ran (after any fallback).
    context {borrow} engine: String => Cow<'a, str>,
    /// Why the engine differs from the one asked for, when it does.
    context [default, skip_serializing_if = "Option::is_none"] {borrow} engine_note: Option<String> => Option<Cow<'a, str>>,
    /// Imports: the job shape was asserted with `--assume-job`, not stated in the output.
    context [default, skip_serializing_if = "Option::is_none"] {borrow} job_assumed: Option<String> => Option<Cow<'a, str>>,
    /// Imports: the output states no time, so the run's time was assumed ("the file's
    /// modification time", "the time of the import"): it places the run, and counts towards no
    /// day of evidence (`Run::stated_time`).
    context [default, skip_serializing_if = "Option::is_none"] {borrow} time_assumed: Option<String> => Option<Cow<'a, str>>,
    context job: JobShape => JobShape,
    run metrics: Metrics => Metrics,
    context [default] {borrow} target: Target => TargetRef<'a>,
    context {borrow} tool_version: String => Cow<'a, str>,
    context {borrow} policy: String => Cow<'a, str>,
    /// Flags that changed the policy's test, e.g. {"size": "64m"}.
    context [default, skip_serializing_if = "BTreeMap::is_empty"] overrides: BTreeMap<String, String> => BTreeMap<String, String>,
    /// Whether bandwidth came from byte counts or a printed figure ("exact" | "printed").
    context [default, skip_serializing_if = "Option::is_none"] bw_basis: Option<BwBasis> => Option<BwBasis>,
    context [default, skip_serializing_if = "Option::is_none"] {borrow} fio_version: Option<String> => Option<Cow<'a, str>>,
    /// Groups the runs of one `iopscheck run` invocation.
    run [default, skip_serializing_if = "Option::is_none"] {borrow} invocation: Option<String> => Option<Cow<'a, str>>,
    /// I/Os completed per interval inside the run (native runs).
    run [default, skip_serializing_if = "Option::is_none"] iops_series: Option<Series> => Option<Series>,
    /// The disks' own account of the run (fio's `Disk stats`).
    run [default, skip_serializing_if = "Vec::is_empty"] {borrow} disk_stats: Vec<DiskStat> => Vec<DiskStatRef<'a>>,
    /// The disk's own series through the run, in a few figures (native runs).
    run [default, skip_serializing_if = "Option::is_none"] device: Option<DeviceSummary> => Option<DeviceSummary>,
    /// Where the disk's burst credits ran out inside the run, and what its throughput kept up
    /// after (`measure::changepoint::sustained`): a report judges the run at that level too.
    run [default, skip_serializing_if = "Option::is_none"] burst: Option<Sustained> => Option<Sustained>,
    /// How a `run --sustained` ended.
    run [default, skip_serializing_if = "Option::is_none"] sustained: Option<SustainedRun> => Option<SustainedRun>,
    /// The link to the line before (`crate::chain`), set by `history::append` alone, last.
    run [default, skip_serializing_if = "Option::is_none"] chain: Option<Chain> => Option<Chain>,
}

impl RunInfo {
    /// The context of a run measured or imported by this iopscheck: this schema and version,
    /// the fields every record states, and every other field unset.
    pub fn new(
        host: String,
        source: Source,
        engine: String,
        job: JobShape,
        target: Target,
        policy: String,
    ) -> RunInfo {
        RunInfo {
            schema_version: SCHEMA_VERSION,
            host,
            source,
            engine,
            job,
            target,
            tool_version: crate::version::VERSION.to_string(),
            policy,
            ..RunInfo::blank()
        }
    }
}

impl Record {
    /// The record of a run of the context `info`, measured as `m` and started at
    /// `timestamp`: its figures (`metrics::from_measurement`), its IOPS series and the disks'
    /// own account come from the measurement. The one place a record is made from a
    /// measurement (`run`, `import`).
    pub fn measured(info: RunInfo, timestamp: DateTime<FixedOffset>, m: &Measurement) -> Record {
        // What the page cache stands between the job and the disk: with buffered I/O, a fall
        // in the job's own series is no step of the disk.
        let buffered = info.job.direct != Some(true);
        info.join(RunPart {
            timestamp,
            source_digest: None,
            fio_run: None,
            metrics: crate::metrics::from_measurement(m),
            invocation: None,
            iops_series: m.series.clone(),
            disk_stats: m.disk.clone(),
            device: m.device.as_ref().map(|d| d.summary()),
            burst: crate::measure::changepoint::sustained(m, buffered),
            sustained: None,
            chain: None,
        })
    }
}

/// The fields a reader filters on: a line whose head a reader does not want is not read
/// further (nor reported when damaged after its head).
#[derive(Debug, Clone, Deserialize)]
pub struct RecordHead {
    pub schema_version: u32,
    pub timestamp: DateTime<FixedOffset>,
    pub host: String,
    pub policy: String,
    #[serde(default)]
    pub engine: String,
}

impl RecordRef<'_> {
    /// The line's head.
    pub(crate) fn head(&self) -> RecordHead {
        RecordHead {
            schema_version: self.schema_version,
            timestamp: self.timestamp,
            host: self.host.to_string(),
            policy: self.policy.to_string(),
            engine: self.engine.to_string(),
        }
    }
}

/// The heads of the lines read, built once for consecutive lines of one host, policy and
/// engine (a history's lines mostly are).
#[derive(Default)]
pub(crate) struct Heads(Option<RecordHead>);

impl Heads {
    /// The head of `r`.
    pub(crate) fn of(&mut self, r: &RecordRef<'_>) -> &RecordHead {
        let same = matches!(&self.0,
            Some(h) if h.host == r.host && h.policy == r.policy && h.engine == r.engine);
        if !same {
            return self.0.insert(r.head());
        }
        let h = self.0.as_mut().expect("the same head");
        h.schema_version = r.schema_version;
        h.timestamp = r.timestamp;
        h
    }
}

/// Why a record with no figures is not read as a run.
pub const NO_FIGURES: &str =
    "no figures (its metrics are empty): a record without figures is not a run";

/// The rule every record's figures keep, on the way into the history and out of it: at least
/// one figure (a record without any is no run, and would count towards the evidence rule
/// with nothing measured), each finite, not negative (no metric iopscheck knows can be below
/// zero) and within its ceiling (`metrics::ceiling`: no disk gives more, and no aggregate of
/// such figures overflows). The error names the metric.
pub fn check_metrics(metrics: &Metrics) -> Result<(), String> {
    if metrics.is_empty() {
        return Err(NO_FIGURES.into());
    }
    for (k, &v) in metrics {
        if !v.is_finite() {
            return Err(format!("metric {k} is {v}, not a finite number"));
        }
        if v < 0.0 {
            return Err(format!("metric {k} is {v}: no metric can be negative"));
        }
        let c = crate::metrics::ceiling(k);
        if v > c.max {
            return Err(format!(
                "metric {k} is {v:e}, beyond what any disk gives (at most {}): not a measurement",
                c.what
            ));
        }
    }
    Ok(())
}

/// The rule a record's derived figures keep with what they are derived from
/// (`metrics::from_measurement`): a derived figure is never trusted over its source. Each
/// direction's `iops_formula` is its `bw_mb_s` ÷ (block size in KiB) × 1024 (exactly, where
/// the job states its block size), and needs its `bw_mb_s`; `bw_mb_s` and `bw_mib_s` are its
/// `bw_bytes` in MB/s and MiB/s (exactly where the bandwidth came from byte counts, within
/// the rounding of fio's three printed digits where it was printed or is not said);
/// `total_iops` is `read_iops` + `write_iops` and needs both. The error says which figures
/// contradict each other, or which one is missing.
pub fn check_derived(
    metrics: &Metrics,
    bs: Option<u64>,
    basis: Option<BwBasis>,
) -> Result<(), String> {
    let get = |k: &str| metrics.get(k).copied();
    let contradict = |what: String| Err(format!("its figures contradict each other: {what}"));
    let near = |a: f64, b: f64, rel: f64| (a - b).abs() <= rel * a.abs().max(b.abs()) + 1e-9;
    // fio prints 3 digits: each printed figure is within 0.5% of what it stands for
    let printed = if basis == Some(BwBasis::Exact) {
        1e-9
    } else {
        0.011
    };
    for p in ["read", "write"] {
        let (formula, mb_s, mib_s, bytes) = (
            get(&format!("{p}_iops_formula")),
            get(&format!("{p}_bw_mb_s")),
            get(&format!("{p}_bw_mib_s")),
            get(&format!("{p}_bw_bytes")),
        );
        match (formula, mb_s, bs.filter(|&b| b > 0)) {
            (Some(_), None, _) => {
                return Err(format!(
                    "its figures contradict each other: {p}_iops_formula without the {p}_bw_mb_s it is derived from"
                ));
            }
            (Some(f), Some(m), Some(bs)) if !near(f, crate::metrics::iops_formula(m, bs), 1e-9) => {
                return contradict(format!(
                    "{p}_iops_formula {f} where its {p}_bw_mb_s {m} at block size {bs} B gives {}",
                    crate::metrics::iops_formula(m, bs)
                ));
            }
            _ => {}
        }
        for (name, v, unit) in [("bw_mb_s", mb_s, 1e6), ("bw_mib_s", mib_s, 1_048_576.0)] {
            if let (Some(v), Some(b)) = (v, bytes)
                && !near(v, b / unit, printed)
            {
                return contradict(format!(
                    "{p}_{name} {v} where its {p}_bw_bytes {b} gives {}",
                    b / unit
                ));
            }
        }
    }
    if let Some(t) = get("total_iops") {
        match (get("read_iops"), get("write_iops")) {
            (Some(r), Some(w)) if !near(t, r + w, 1e-9) => {
                return contradict(format!(
                    "total_iops {t} where read_iops + write_iops is {}",
                    r + w
                ));
            }
            (Some(_), Some(_)) => {}
            _ => {
                return Err(
                    "its figures contradict each other: total_iops without the read_iops and write_iops it is derived from".into(),
                );
            }
        }
    }
    Ok(())
}

/// Why a schema version is not read.
fn newer(v: impl std::fmt::Display) -> String {
    format!(
        "schema_version {v} is newer than this iopscheck understands ({SCHEMA_VERSION}); upgrade iopscheck to read it"
    )
}

/// The line codec: a history line (trimmed) read as a record, its strings borrowed from the
/// line, or nothing when `keep` does not want its head; or why it is not a record. Every
/// reader of a history reads its lines through this one function (whole records, runs, heads),
/// so that they accept and skip exactly the same lines. A line `keep` does not want is never
/// reported, whatever is wrong with it after its head.
pub(crate) fn decode<'t>(
    text: &'t [u8],
    keep: impl FnOnce(&RecordRef<'t>) -> bool,
    head_wanted: impl FnOnce(&RecordHead) -> bool,
) -> Result<Option<RecordRef<'t>>, String> {
    // Checked as UTF-8 once, then read as text: serde_json then checks no string again
    // (a record's are many). Not UTF-8: read as bytes, for serde_json's own error.
    let parsed: Result<RecordRef, _> = match std::str::from_utf8(text) {
        Ok(t) => serde_json::from_str(t),
        Err(_) => serde_json::from_slice(text),
    };
    let r = match parsed {
        Ok(r) => r,
        // The slow path, for bad lines only: why, unless the head says the line is not
        // wanted anyway.
        Err(e) => {
            let head: RecordHead = match serde_json::from_slice(text) {
                Ok(h) => h,
                Err(_) => return Err(diagnose(text)),
            };
            if head.schema_version > SCHEMA_VERSION {
                return Err(newer(head.schema_version));
            }
            if !head_wanted(&head) {
                return Ok(None);
            }
            return Err(format!("not a valid record ({e})"));
        }
    };
    if r.schema_version > SCHEMA_VERSION {
        return Err(newer(r.schema_version));
    }
    if !keep(&r) {
        return Ok(None);
    }
    check_metrics(&r.metrics)?;
    check_derived(&r.metrics, r.job.bs, r.bw_basis)?;
    Ok(Some(r))
}

/// Why a line is not a record, for the warning (the slow path, for bad lines only).
fn diagnose(text: &[u8]) -> String {
    let value: serde_json::Value = match serde_json::from_slice(text) {
        Ok(v) => v,
        Err(e) => return format!("not a JSON record ({e})"),
    };
    match value.get("schema_version").and_then(|v| v.as_u64()) {
        None => "no schema_version".into(),
        Some(v) if v > SCHEMA_VERSION as u64 => newer(v),
        Some(_) => match serde_json::from_value::<Record>(value) {
            Err(e) => format!("not a valid record ({e})"),
            Ok(_) => "not a valid record".into(),
        },
    }
}
/// A timestamp in the one form the tool writes, `2026-11-30T10:00:00+01:00` or
/// `2026-11-30T10:00:00Z`, read directly; None for any other form or an impossible date, for
/// chrono's parser to read or refuse. What this reads, chrono reads to the same instant and
/// offset (a test compares them); it is only quicker, and a history has a million of them.
pub(crate) fn tool_timestamp(s: &str) -> Option<DateTime<FixedOffset>> {
    use chrono::{NaiveDate, NaiveTime, TimeZone};
    let b = s.as_bytes();
    let number = |from: usize, to: usize| -> Option<u32> {
        b.get(from..to)?.iter().try_fold(0u32, |n, &c| {
            c.is_ascii_digit().then(|| n * 10 + u32::from(c - b'0'))
        })
    };
    if b.len() < 20
        || b[4] != b'-'
        || b[7] != b'-'
        || b[10] != b'T'
        || b[13] != b':'
        || b[16] != b':'
    {
        return None;
    }
    let offset = match &b[19..] {
        b"Z" => 0,
        [sign @ (b'+' | b'-'), _, _, b':', _, _] => {
            let (h, m) = (number(20, 22)?, number(23, 25)?);
            if h > 23 || m > 59 {
                return None;
            }
            let east = (h * 3600 + m * 60) as i32;
            if *sign == b'-' { -east } else { east }
        }
        _ => return None,
    };
    let date = NaiveDate::from_ymd_opt(number(0, 4)? as i32, number(5, 7)?, number(8, 10)?)?;
    let second = number(17, 19)?;
    // A leap second (60) is chrono's to read.
    if second > 59 {
        return None;
    }
    let time = NaiveTime::from_hms_opt(number(11, 13)?, number(14, 16)?, second)?;
    FixedOffset::east_opt(offset)?
        .from_local_datetime(&date.and_time(time))
        .single()
}

/// Deserialises a record's timestamp as chrono does, through [`tool_timestamp`] first.
pub(crate) fn de_timestamp<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<DateTime<FixedOffset>, D::Error> {
    struct V;
    impl serde::de::Visitor<'_> for V {
        type Value = DateTime<FixedOffset>;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("an RFC 3339 formatted date and time string")
        }
        fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<Self::Value, E> {
            match tool_timestamp(s) {
                Some(t) => Ok(t),
                None => s.parse().map_err(E::custom),
            }
        }
    }
    d.deserialize_str(V)
}
