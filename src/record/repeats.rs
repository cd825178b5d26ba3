//! Records that repeat one read before: one fio run is one run, however many times its record
//! was written (a history concatenated with itself, two histories of one node merged, one run
//! imported from its JSON into one history and from its text into another).
//!
//! What names a run: an imported record's `source_digest` (the output and the block it was
//! read from) and its `fio_run` (the fio run, in any of its formats: `RunIdentity::same_run`);
//! a native record's time, host and figures; a record with none of these, its line's bytes.
//! What is held is a fixed-size key per run (a 64-bit hash and where its line is), never the
//! records: where a file is at hand, a key met again is confirmed by reading the earlier line
//! again by its offset; a stream (a fleet's stdin, a node's result) trusts the exact keys'
//! hashes, and compares a `fio_run` with the earlier ones' fixed-size summaries
//! (`fio::IdentityKey`, 160 bytes an imported run), since it cannot read them again.

use std::collections::HashMap;
use std::fs::File;
use std::hash::{Hash, Hasher};
use std::os::unix::fs::FileExt;
use std::sync::Arc;

use super::{RecordRef, Source};

/// What names an imported run across histories, in a fixed size: its `source_digest`'s
/// hash (the output it was read from) and its fio run's summary (`fio::IdentityKey`: the run
/// in any of its formats).
#[derive(Debug, Clone, PartialEq)]
pub struct ImportedRun {
    pub digest: Option<std::num::NonZeroU64>,
    pub fio: Option<crate::fio::IdentityKey>,
}

/// Where a run's line is: its number, byte offset and length; with the key it was put
/// under and the run's time (seconds), to forget the runs of a window narrowed
/// ([`Repeats::forget_before`]).
#[derive(Debug, Clone, Copy)]
struct Slot {
    offset: u64,
    line: u32,
    len: u32,
    key: u64,
    secs: i64,
}

/// A stream's imported fio run: its line, its summary, and the key and time of [`Slot`].
type Streamed = (u32, Arc<ImportedRun>, u64, i64);

/// How many runs sharing a coarse key are compared with a new one before it is taken as
/// another run (a bound on the work, far above what a history holds).
const MAX_PROBES: u64 = 64;

/// The runs read so far, by what names them.
#[derive(Default)]
pub(crate) struct Repeats {
    slots: HashMap<u64, Slot>,
    /// A stream's imported fio runs, by the places their coarse keys probe: their lines and
    /// summaries (shared with the runs, `Run::imported`).
    streamed: HashMap<u64, Streamed>,
    /// For a fleet: a record repeats only one of its own host's. The same run under two
    /// hosts counts for each, and the fleet finds it in both nodes' evidence
    /// (`fleet::shared`), so that neither passes on it.
    pub(crate) per_host: bool,
}

/// What names one record, borrowed from its line.
enum Name<'a> {
    Digest(&'a str),
    Native,
    Line,
}

fn hash_of(f: impl FnOnce(&mut std::collections::hash_map::DefaultHasher)) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    f(&mut h);
    h.finish()
}

/// The exact key of a record: its digest, its native identity or its bytes.
fn name_of<'a>(r: &'a RecordRef<'_>, text: &'a [u8]) -> (Name<'a>, u64) {
    if let Some(d) = r.source_digest.as_deref() {
        return (Name::Digest(d), hash_of(|h| ("digest", d).hash(h)));
    }
    if r.source == Source::Native {
        return (Name::Native, native_key(r));
    }
    (Name::Line, hash_of(|h| ("line", text).hash(h)))
}

/// A native run: its time, host and every figure (name and bits).
fn native_key(r: &RecordRef<'_>) -> u64 {
    hash_of(|h| {
        "native".hash(h);
        r.timestamp.hash(h);
        r.host.as_ref().hash(h);
        for (k, v) in &r.metrics {
            k.hash(h);
            v.to_bits().hash(h);
        }
    })
}

/// The coarse keys of an imported fio run: what `same_run` needs equal (job, group, error,
/// each direction's runtime), with each direction's exact I/O count where every direction
/// states one (JSON, text's `issued` line), else the range's own key (terse's counts are a
/// range), so that only runs sharing a key are compared.
fn coarse_key(id: &crate::fio::RunIdentity, ios: Option<[u64; 2]>) -> u64 {
    hash_of(|h| {
        "fio_run".hash(h);
        (&id.job, id.groupid, id.error).hash(h);
        for d in [&id.read, &id.write] {
            d.as_ref().map(|d| d.runtime_ms).hash(h);
        }
        ios.hash(h);
    })
}

/// Each direction's I/O counts as a range (0, 0 where it moved nothing).
fn ios_of(id: &crate::fio::RunIdentity) -> [(u64, u64); 2] {
    [&id.read, &id.write].map(|d| d.as_ref().map_or((0, 0), |d| d.ios))
}

/// The exact keys a run stating ranges of counts may share with one stating them exactly:
/// one per combination of counts, none where they are more than [`MAX_EXACT`].
fn exact_keys(id: &crate::fio::RunIdentity) -> impl Iterator<Item = u64> + '_ {
    let [r, w] = ios_of(id);
    let n = (r.1.saturating_sub(r.0) + 1).saturating_mul(w.1.saturating_sub(w.0) + 1);
    let (r, w) = if n <= MAX_EXACT {
        (r, w)
    } else {
        ((1, 0), (1, 0))
    };
    (r.0..=r.1).flat_map(move |a| (w.0..=w.1).map(move |b| coarse_key(id, Some([a, b]))))
}

/// How many exact counts a range is looked for as (a terse line of a 60 s run spans about
/// 62; past this many, runs of other formats are not looked for).
const MAX_EXACT: u64 = 4096;

/// The `k`th place a key probes.
fn probe(key: u64, k: u64) -> u64 {
    if k == 0 {
        key
    } else {
        hash_of(|h| (key, k).hash(h))
    }
}

impl Repeats {
    /// What names an imported run across histories (its `source_digest`, hashed, and its
    /// `fio_run`, summarised), for a fleet to find one fio run in two nodes' evidence, in
    /// any of its formats; None for another record (a native run, or one of `--engine fio`,
    /// is its own host's: its record names the machine that made it).
    pub(crate) fn imported_key(r: &RecordRef<'_>) -> Option<Arc<ImportedRun>> {
        if r.source != Source::Imported {
            return None;
        }
        let digest = r
            .source_digest
            .as_deref()
            .and_then(|d| std::num::NonZeroU64::new(hash_of(|h| ("digest", d).hash(h))));
        let fio = r.fio_run.as_deref().map(crate::fio::IdentityKey::of);
        (digest.is_some() || fio.is_some()).then(|| Arc::new(ImportedRun { digest, fio }))
    }

    /// The line of the earlier run `r` (line `line`, at `offset`, `len` bytes, text `text`)
    /// repeats, or None, remembering `r` as read. `file` is the history the lines are read
    /// from, for reading an earlier line again; None for a stream. `named`: what names `r`
    /// across histories, where the caller keeps it ([`Repeats::imported_key`]).
    pub(crate) fn earlier(
        &mut self,
        r: &RecordRef<'_>,
        text: &[u8],
        at: (usize, u64, u32),
        file: Option<&File>,
        named: Option<&Arc<ImportedRun>>,
    ) -> Option<usize> {
        let secs = r.timestamp.timestamp();
        let slot = Slot {
            line: u32::try_from(at.0).unwrap_or(u32::MAX),
            offset: at.1,
            len: at.2,
            key: 0,
            secs,
        };
        // every key of a fleet's record is its host's
        let salt = if self.per_host {
            hash_of(|h| ("host", r.host.as_ref()).hash(h))
        } else {
            0
        };
        let per_host = self.per_host;
        let host_of = |earlier: &RecordRef<'_>| !per_host || earlier.host == r.host;
        let (name, key) = name_of(r, text);
        let key = key ^ salt;
        if let Some(line) = self.find_or_put(key, slot, text, file, |earlier| match &name {
            Name::Digest(d) => earlier.source_digest.as_deref() == Some(*d) && host_of(earlier),
            Name::Native => {
                earlier.source == Source::Native
                    && earlier.timestamp == r.timestamp
                    && earlier.host == r.host
                    && earlier.metrics == r.metrics
            }
            Name::Line => false,
        }) {
            return Some(line);
        }
        // The same fio run from another of its outputs: compared with the earlier record,
        // read again where a file is at hand, else with its summary. Under its own key (its
        // exact counts, or the key of ranges), then under the other kind's: a range under
        // each exact count it holds, exact counts under the key of ranges.
        let id = r.fio_run.as_deref()?;
        let exact = ios_of(id)
            .iter()
            .all(|(lo, hi)| lo == hi)
            .then(|| ios_of(id).map(|(lo, _)| lo));
        let own = coarse_key(id, exact) ^ salt;
        let Some(file) = file else {
            let named = match named.filter(|n| n.fio.is_some()) {
                Some(n) => n.clone(),
                None => Arc::new(ImportedRun {
                    digest: None,
                    fio: Some(crate::fio::IdentityKey::of(id)),
                }),
            };
            return self.streamed_earlier(id, exact.is_some(), salt, (slot.line, secs), named);
        };
        let same = |earlier: &RecordRef<'_>| {
            host_of(earlier) && earlier.fio_run.as_deref().is_some_and(|e| e.same_run(id))
        };
        let free = match self.find(own, text, Some(file), same) {
            Ok(line) => return Some(line),
            Err(free) => free,
        };
        let found = if exact.is_some() {
            self.find(coarse_key(id, None) ^ salt, text, Some(file), same)
                .ok()
        } else {
            exact_keys(id).find_map(|k| self.find(k ^ salt, text, Some(file), same).ok())
        };
        if found.is_none()
            && let Some(place) = free
        {
            self.slots.insert(place, Slot { key: own, ..slot });
        }
        found
    }

    /// In a stream, the line of the earlier fio run `id` (its counts `exact` or not, its
    /// keys salted by `salt`) repeats, compared by the summaries; else `id`'s summary
    /// (`named.fio`) kept under its own key's first free place.
    fn streamed_earlier(
        &mut self,
        id: &crate::fio::RunIdentity,
        exact: bool,
        salt: u64,
        (line, secs): (u32, i64),
        named: Arc<ImportedRun>,
    ) -> Option<usize> {
        let own = coarse_key(id, exact.then(|| ios_of(id).map(|(lo, _)| lo))) ^ salt;
        let key = named.fio.as_ref()?;
        let look = |k: u64| {
            for place in (0..MAX_PROBES).map(|i| probe(k, i)) {
                let (l, e, _, _) = self.streamed.get(&place)?;
                if e.fio.as_ref().is_some_and(|e| e.same_run(key)) {
                    return Some(*l as usize);
                }
            }
            None
        };
        let found = look(own).or_else(|| {
            if exact {
                look(coarse_key(id, None) ^ salt)
            } else {
                exact_keys(id).find_map(|k| look(k ^ salt))
            }
        });
        if found.is_none()
            && let Some(place) = (0..MAX_PROBES)
                .map(|i| probe(own, i))
                .find(|p| !self.streamed.contains_key(p))
        {
            self.streamed
                .insert(place, (line, named.clone(), own, secs));
        }
        found
    }

    /// The line of the run under `key` that this one (`text`) repeats, byte for byte or as
    /// `same` says given the earlier record read again; else `slot` put under the key's first
    /// free place.
    fn find_or_put(
        &mut self,
        key: u64,
        slot: Slot,
        current: &[u8],
        file: Option<&File>,
        same: impl Fn(&RecordRef<'_>) -> bool,
    ) -> Option<usize> {
        match self.find(key, current, file, same) {
            Ok(line) => Some(line),
            Err(free) => {
                if let Some(place) = free {
                    self.slots.insert(place, Slot { key, ..slot });
                }
                None
            }
        }
    }

    /// Forgets the runs dated before `secs` (a window narrowed, `hold`): the others are put
    /// again under their keys, each at its first free place, so that every key's places
    /// stay unbroken for [`Repeats::find`], and the memory of the others is given back.
    pub(crate) fn forget_before(&mut self, secs: i64) {
        let slots: Vec<Slot> = self
            .slots
            .drain()
            .map(|(_, s)| s)
            .filter(|s| s.secs >= secs)
            .collect();
        self.slots.shrink_to(slots.len());
        for s in slots {
            if let Some(place) = (0..MAX_PROBES)
                .map(|i| probe(s.key, i))
                .find(|p| !self.slots.contains_key(p))
            {
                self.slots.insert(place, s);
            }
        }
        let streamed: Vec<Streamed> = self
            .streamed
            .drain()
            .map(|(_, s)| s)
            .filter(|s| s.3 >= secs)
            .collect();
        self.streamed.shrink_to(streamed.len());
        for s in streamed {
            if let Some(place) = (0..MAX_PROBES)
                .map(|i| probe(s.2, i))
                .find(|p| !self.streamed.contains_key(p))
            {
                self.streamed.insert(place, s);
            }
        }
    }

    /// The line of the run under `key` that this one (`text`) repeats, byte for byte or as
    /// `same` says given the earlier record read again; else the key's first free place
    /// (None past [`MAX_PROBES`]).
    fn find(
        &self,
        key: u64,
        current: &[u8],
        file: Option<&File>,
        same: impl Fn(&RecordRef<'_>) -> bool,
    ) -> Result<usize, Option<u64>> {
        let mut buf = Vec::new();
        for k in 0..MAX_PROBES {
            let place = probe(key, k);
            let Some(earlier) = self.slots.get(&place).copied() else {
                return Err(Some(place));
            };
            let Some(file) = file else {
                // a stream: the hash is the key's word
                return Ok(earlier.line as usize);
            };
            buf.resize(earlier.len as usize, 0);
            let text = match file.read_exact_at(&mut buf, earlier.offset) {
                Ok(()) => buf.trim_ascii(),
                Err(_) => continue,
            };
            if text == current {
                return Ok(earlier.line as usize);
            }
            let parsed = std::str::from_utf8(text)
                .ok()
                .and_then(|t| serde_json::from_str::<RecordRef>(t).ok());
            if parsed.as_ref().is_some_and(&same) {
                return Ok(earlier.line as usize);
            }
        }
        Err(None)
    }
}
