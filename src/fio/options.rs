//! A job's shape from its options as an output lists them (fio's JSON, kubestr's job file, a
//! pasted command line): sizes read with the `kb_base` fio applied to them, in the order it
//! applied them where that is known, and fio's defaults for what a complete list leaves out.

use std::collections::HashMap;

use serde_json::Value;

use super::choose_bs;
use super::json::options;
use super::num::{fio_option_bool, fio_option_int, fio_option_size};
use crate::job::{IoEngine, JobShape, Rw, SyncMode};

/// fio's defaults for the options a job's option list (fio's JSON, a job file, a whole
/// command line) does not give, where giving one needs a value, so that an unlisted one is
/// the default: `end_fsync` 0, `iodepth` 1, `numjobs` 1. Options given as bare flags
/// (`--time_based`) are left out of fio's JSON even when given: those stay unknown.
pub(super) fn fill_defaults(shape: &mut JobShape) {
    shape.end_fsync.get_or_insert(false);
    shape.iodepth.get_or_insert(1);
    shape.numjobs.get_or_insert(1);
}

/// Options as listed, each as a string, in the list's order (serde_json's map: sorted).
pub(super) fn options_listed(v: Option<&Value>) -> Vec<(String, String)> {
    let mut m = options(v).into_iter().collect::<Vec<_>>();
    m.sort();
    m
}

/// One option as given: its name, its value and its rank in the order fio applied them (a
/// lower rank before; of one rank, the order is unknown).
pub(super) type RankedOption = (String, String, u32);

/// Lists of options each applied after the one before, the order within each unknown.
pub(super) fn ranked(lists: &[Vec<(String, String)>]) -> Vec<RankedOption> {
    let mut out = Vec::new();
    for (r, l) in lists.iter().enumerate() {
        for (k, v) in l {
            out.push((k.clone(), v.clone(), r as u32));
        }
    }
    out
}

/// The `kb_base` that option `key` was read with: fio applies options in order, so a
/// `kb_base` given after a size does not change it. None where it is not known: a
/// `kb_base` of another base has the same rank as the option (the output does not keep their
/// order).
fn kb_base_of(o: &[RankedOption], key: &str) -> Option<u64> {
    let base = |v: &str| match v.trim().parse::<u64>() {
        Ok(1000) => 1000,
        _ => 1024,
    };
    let Some(rank) = o.iter().rev().find(|(k, _, _)| k == key).map(|x| x.2) else {
        return Some(1024);
    };
    let bases = o.iter().filter(|(k, _, _)| k == "kb_base");
    let before = bases
        .clone()
        .rfind(|x| x.2 < rank)
        .map_or(1024, |(_, v, _)| base(v));
    bases
        .filter(|x| x.2 == rank)
        .all(|(_, v, _)| base(v) == before)
        .then_some(before)
}

/// The job's shape as its options say (the last of a name given twice); fio's defaults are
/// not filled in. A size whose `kb_base` is not known ([`kb_base_of`]) and reads differently
/// under the two is not stated: its name is listed. `force`: the sizes read with that base.
pub(super) fn shape_from_ranked(
    ranked: &[RankedOption],
    force: Option<u64>,
) -> (JobShape, Vec<&'static str>) {
    let o: HashMap<String, String> = ranked
        .iter()
        .map(|(k, v, _)| (k.clone(), v.clone()))
        .collect();
    let mut unknown: Vec<&'static str> = Vec::new();
    let mut size_of = |names: &[&'static str], read: &dyn Fn(u64) -> Option<u64>| {
        let name = names.iter().find(|k| o.contains_key(**k))?;
        match force.or_else(|| kb_base_of(ranked, name)) {
            Some(b) => read(b),
            None => {
                let (a, b) = (read(1000), read(1024));
                if a == b {
                    a
                } else {
                    unknown.push(names[0]);
                    None
                }
            }
        }
    };
    let get = |keys: &[&str]| keys.iter().find_map(|k| o.get(*k)).map(String::as_str);
    let rw = get(&["rw", "readwrite"])
        .and_then(|s| s.split(':').next())
        .and_then(|s| s.parse::<Rw>().ok());
    let bs = size_of(&["bs", "blocksize"], &|kb_base| {
        let s = get(&["bs", "blocksize"])?;
        let parts: Vec<Option<u64>> = s.split(',').map(|p| fio_option_size(p, kb_base)).collect();
        let read = parts.first().copied().flatten();
        // bs=r,w: a missing write size is the read size
        let write = match parts.get(1) {
            Some(w) if !s.split(',').nth(1).unwrap_or("").trim().is_empty() => *w,
            _ => read,
        };
        choose_bs(rw, read, write)
    });
    let rwmixread = get(&["rwmixread"])
        .and_then(fio_option_int)
        .or_else(|| {
            get(&["rwmixwrite"])
                .and_then(fio_option_int)
                .map(|w| 100u64.saturating_sub(w))
        })
        .and_then(|v| u8::try_from(v).ok())
        .filter(|&v| v <= 100);
    let positive = |key: &str| {
        get(&[key])
            .and_then(fio_option_int)
            .and_then(|v| u32::try_from(v).ok())
            .filter(|&v| v > 0)
    };
    let size = size_of(&["size"], &|kb_base| {
        get(&["size"]).and_then(|s| fio_option_size(s, kb_base))
    });
    let shape = JobShape {
        rw,
        bs,
        size,
        iodepth: positive("iodepth"),
        numjobs: positive("numjobs"),
        ioengine: get(&["ioengine"])
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(|s| IoEngine::from(s).as_str().to_string()),
        runtime_s: get(&["runtime", "timeout"])
            .and_then(|s| crate::units::parse_duration(s).ok())
            .map(|d| d.as_secs_f64()),
        // buffered=0 is direct=1 (fio's inverse of the same option)
        direct: get(&["direct"])
            .and_then(fio_option_bool)
            .or_else(|| get(&["buffered"]).and_then(fio_option_bool).map(|b| !b)),
        time_based: get(&["time_based"]).and_then(fio_option_bool),
        end_fsync: get(&["end_fsync"]).and_then(fio_option_bool),
        fsync: positive("fsync"),
        fdatasync: positive("fdatasync"),
        sync: get(&["sync"]).and_then(|s| match s.trim().to_ascii_lowercase().as_str() {
            "1" | "sync" | "true" | "" => Some(SyncMode::Sync),
            "dsync" => Some(SyncMode::Dsync),
            _ => None,
        }),
        synced: None,
        rwmixread,
        ramp_time_s: get(&["ramp_time"])
            .and_then(|s| crate::units::parse_duration(s).ok())
            .map(|d| d.as_secs_f64()),
        directory: get(&["directory"])
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_string),
        filename: get(&["filename"])
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_string),
        limits: None,
    };
    (shape, unknown)
}
