//! What a report, a bundle or a fleet holds of the runs of its window: a stated bound.
//!
//! The runs a window holds are kept in memory to be judged (`select::Grouping`), a few
//! hundred bytes each, and the history's reader keeps a slot for each to find a record
//! repeated (`record::Repeats`). A window of a year over a large history holds them all, so
//! their memory is bounded here, whatever the history and the window: at most [`limit`]
//! bytes, estimated as they are taken ([`cost`]). Where the window holds more, the oldest
//! runs are let go until the rest fit in three quarters of the limit, the window is narrowed
//! to the runs kept, the reader passes over the lines before it, and the verdict cannot be a
//! pass or a fail: it was asked of the whole window, and only its latest part was judged
//! ([`Narrowed`], `evaluate::decide`).

use std::sync::OnceLock;

use chrono::{DateTime, FixedOffset};

use crate::run_index::{Run, RunInfo};

/// The runs of a window held at most, in bytes, unless `IOPSCHECK_HOLD` says otherwise: a
/// year of a run every five minutes (105,000 runs) takes about half of it.
pub const DEFAULT_LIMIT: u64 = 40 << 20;

/// The least `IOPSCHECK_HOLD` may give: below it a single day of runs would not fit.
pub const LEAST: u64 = 64 << 10;

static LIMIT: OnceLock<u64> = OnceLock::new();

/// `$IOPSCHECK_HOLD` (a size: 64m, 512k), else [`DEFAULT_LIMIT`]; unset or empty is the
/// default. A value that is not a size, or less than [`LEAST`], is a usage error that names
/// the variable: checked before any command runs (`app`).
pub fn from_env() -> anyhow::Result<u64> {
    const NAME: &str = "IOPSCHECK_HOLD";
    let v = match std::env::var(NAME) {
        Ok(v) if v.trim().is_empty() => return Ok(DEFAULT_LIMIT),
        Ok(v) => v,
        Err(std::env::VarError::NotPresent) => return Ok(DEFAULT_LIMIT),
        Err(std::env::VarError::NotUnicode(_)) => {
            return Err(crate::error::usage(format!("{NAME}: not valid UTF-8")));
        }
    };
    let shown = crate::printable::line(v.trim());
    let bytes = crate::units::parse_size(&v).map_err(|_| {
        crate::error::usage(format!("{NAME}: '{shown}' is not a size (e.g. 64m, 512k)"))
    })?;
    if bytes < LEAST {
        return Err(crate::error::usage(format!(
            "{NAME}: '{shown}' is less than the least a window may hold ({})",
            crate::units::format_size(LEAST)
        )));
    }
    Ok(bytes)
}

/// Reads `IOPSCHECK_HOLD` once, before any command runs: an error is the command's.
pub fn init() -> anyhow::Result<()> {
    let bytes = from_env()?;
    let _ = LIMIT.set(bytes);
    Ok(())
}

/// The bytes the runs of a window may hold ([`init`]; the default where it was not called).
pub fn limit() -> u64 {
    *LIMIT.get_or_init(|| from_env().unwrap_or(DEFAULT_LIMIT))
}

/// What holding `r` costs, in bytes, estimated from above: the run itself, its figures, what
/// it alone has (a step, a burst, a name), the reader's slot for it, and its context where
/// it is the first run of it (`new_context`): its fields' text as JSON (more than the
/// strings it holds) and its own size. What judging makes of each run (its
/// warnings' columns, the sort) comes to less than a third of it.
pub fn cost(r: &Run, new_context: bool) -> u64 {
    const ALLOC: usize = 16;
    let mut bytes = std::mem::size_of::<Run>() + 8 * r.metrics.len() + ALLOC;
    // the reader's slot and its share of the table (`record::Repeats`)
    bytes += 48;
    if r.series_step.is_some() {
        bytes += 24 + ALLOC;
    }
    if r.burst.is_some() {
        bytes += std::mem::size_of::<crate::measure::changepoint::Sustained>() + ALLOC;
    }
    if r.imported.is_some() {
        bytes += std::mem::size_of::<crate::record::ImportedRun>() + 2 * ALLOC;
    }
    if new_context {
        // each of its strings and maps an allocation
        bytes += std::mem::size_of::<RunInfo>() + r.context().text_len() + 24 * ALLOC;
        if let Some(i) = &r.invocation {
            bytes += i.len() + 2 * ALLOC;
        }
    }
    bytes as u64
}

/// The window narrowed to what could be held: the runs let go and the time they reach to.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Narrowed {
    /// Runs of the window (of every group) let go.
    pub left_out: usize,
    /// The latest of them: the runs judged are all later.
    pub through: DateTime<FixedOffset>,
    /// The bytes the runs could hold ([`limit`]).
    pub limit: u64,
}

impl Narrowed {
    /// Why the verdict is not a pass or a fail, in the words of every format.
    pub fn reason(&self) -> String {
        let from = self.through.format("%Y-%m-%d %H:%M:%S %:z");
        format!(
            "the window holds more runs than a report holds at once ({} of runs, IOPSCHECK_HOLD): \
             its {} oldest run{}, through {from}, were let go and the verdict judges only the runs after them; \
             narrow the window (--since {}) or raise IOPSCHECK_HOLD for a verdict on it",
            crate::units::format_size(self.limit),
            self.left_out,
            if self.left_out == 1 { "" } else { "s" },
            (self.through + chrono::Duration::seconds(1)).format("%Y-%m-%dT%H:%M:%S%:z"),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_context_costs_its_text_once() {
        let mut r = crate::history::tests::record("2026-11-30T10:00:00Z", 1.0);
        r.target.dir = "d".repeat(5000);
        let run = Run::of(&r, 0);
        let alone = cost(&run, false);
        let first = cost(&run, true);
        assert!(first >= alone + 5000, "{first} vs {alone}");
        assert!(alone as usize >= std::mem::size_of::<Run>());
    }

    #[test]
    fn the_reason_names_the_flag_and_the_setting() {
        let n = Narrowed {
            left_out: 3,
            through: DateTime::parse_from_rfc3339("2026-11-30T10:00:00+01:00").unwrap(),
            limit: 1 << 20,
        };
        let r = n.reason();
        assert!(
            r.contains("its 3 oldest runs, through 2026-11-30 10:00:00 +01:00"),
            "{r}"
        );
        assert!(r.contains("--since 2026-11-30T10:00:01+01:00"), "{r}");
        assert!(r.contains("IOPSCHECK_HOLD"), "{r}");
    }
}
