//! Selection and grouping: which records of a history a report, a bundle or a fleet judges
//! (policy, host, directory, engine and window), and the groups they are judged in (one host,
//! policy, directory and engine each, never mixed). Pure, like `evaluate`: the caller passes
//! `now` and streams the records in.

use std::cell::Cell;
use std::collections::{BTreeMap, HashMap};
use std::hash::{BuildHasher, RandomState};
use std::rc::Rc;
use std::sync::Arc;

use chrono::{DateTime, Duration as ChronoDuration, FixedOffset, Local, NaiveDate, TimeZone, Utc};

use crate::evaluate::{self, Evaluation, Group, Options, Scope};
use crate::history::{self, Record};
use crate::policy::Policy;
use crate::run_index::{Records, Run, RunFields};

/// Where a window starts (`--since`): a duration back from now (7d, 36h), or a moment (a date,
/// at local midnight, or an RFC 3339 timestamp).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Since {
    Back(std::time::Duration),
    At(DateTime<Utc>),
}

impl Since {
    /// Parses a `--since` value (clap's value parser: the flag is named by clap).
    pub fn parse(s: &str) -> Result<Since, String> {
        match crate::units::parse_duration(s) {
            Ok(d) => return Ok(Since::Back(d)),
            // A duration, but longer than any clock: the range is wrong, not the syntax.
            Err(crate::units::UnitError::TooLarge(_)) => {
                return Err(format!(
                    "'{s}' reaches back further than a window can (at most 1e12 seconds, about 31,000 years); for every run in the history, pass a date such as 1970-01-01"
                ));
            }
            Err(_) => {}
        }
        if let Ok(t) = DateTime::parse_from_rfc3339(s.trim()) {
            return Ok(Since::At(t.with_timezone(&Utc)));
        }
        if let Ok(d) = NaiveDate::parse_from_str(s.trim(), "%Y-%m-%d") {
            let midnight = d.and_hms_opt(0, 0, 0).expect("valid time");
            if let Some(t) = Local.from_local_datetime(&midnight).earliest() {
                return Ok(Since::At(t.with_timezone(&Utc)));
            }
        }
        Err(format!(
            "'{s}' is neither a duration (7d, 36h) nor a date (2026-11-28)"
        ))
    }

    /// The window's start, for a window ending at `now`.
    pub fn start(self, now: DateTime<Utc>) -> DateTime<Utc> {
        match self {
            Since::Back(d) => window_start(now, d),
            Since::At(t) => t,
        }
    }
}

/// Records within the window ending at `now`.
pub fn in_window(r: &impl RunFields, since: DateTime<Utc>) -> bool {
    r.timestamp().with_timezone(&Utc) >= since
}

/// The start of a window of `window` ending at `now`.
/// A window longer than the time since 1970 starts in 1970: no record is older, and a
/// date before it (year -711 for `--since 999999d`) would only puzzle.
pub fn window_start(now: DateTime<Utc>, window: std::time::Duration) -> DateTime<Utc> {
    ChronoDuration::from_std(window)
        .ok()
        .and_then(|w| now.checked_sub_signed(w))
        .unwrap_or(DateTime::UNIX_EPOCH)
        .max(DateTime::UNIX_EPOCH)
}

/// Which records a report looks at.
pub struct Filter {
    pub host: Option<String>,
    pub dir: Option<String>,
    pub engine: Option<String>,
    pub policy: String,
    pub since: DateTime<Utc>,
}

impl Filter {
    /// The records of one group (its host, policy, directory and engine) since `since`.
    pub fn group(g: &Group, since: DateTime<Utc>) -> Filter {
        Filter {
            host: Some(g.host.clone()),
            dir: Some(g.dir.clone()),
            engine: Some(g.engine.clone()),
            policy: g.policy.clone(),
            since,
        }
    }

    /// The part of the filter a history line's head can answer: policy, host and window.
    /// Other engines pass, for the mixed-engine warning.
    pub fn keeps_head(&self, h: &history::RecordHead) -> bool {
        h.policy == self.policy
            && self.host.as_ref().is_none_or(|x| &h.host == x)
            && h.timestamp.with_timezone(&Utc) >= self.since
    }

    pub fn keeps(&self, r: &impl RunFields) -> bool {
        r.policy() == self.policy
            && self.host.as_ref().is_none_or(|h| r.host() == h)
            && self.dir.as_ref().is_none_or(|d| &r.target().dir == d)
            && self.engine.as_ref().is_none_or(|e| r.engine() == e)
            && in_window(r, self.since)
    }
}

/// A node's test on one directory: (host, policy, dir).
type NodeKey = (String, String, String);

/// A [`NodeKey`] borrowed, to hash.
fn node_key<'a>(host: &'a str, policy: &'a str, dir: &'a str) -> (&'a str, &'a str, &'a str) {
    (host, policy, dir)
}

/// Records sorted into their groups as they are streamed in, with the engines each node,
/// test and directory used in the window (for the mixed-engine warning). A record is moved
/// into its group, never copied, and no list of all records is built first.
pub struct Grouping {
    filter: Filter,
    /// The filter without its engine: the records the mixed-engine warning counts.
    all_engines: Filter,
    /// (host, policy, dir) → runs per engine.
    engines: Vec<(NodeKey, BTreeMap<String, usize>)>,
    groups: Vec<(Group, Vec<Run>)>,
    /// `engines` and `groups` by the hash of their key: only those of a record's hash are
    /// compared with it (a search of every node for every record was quadratic in the nodes).
    engines_by_hash: HashMap<u64, Vec<usize>>,
    groups_by_hash: HashMap<u64, Vec<usize>>,
    hasher: RandomState,
    /// The group the last record went to: a history's records come in long runs of one group.
    last: usize,
    /// What the runs held cost (`hold::cost`), and what they may: past it, the oldest go.
    held: u64,
    limit: u64,
    /// The context of the run taken last, so that a context shared by the runs read after
    /// it costs once.
    last_context: usize,
    /// The window narrowed to what could be held: the latest run let go, and how many were.
    through: Option<DateTime<FixedOffset>>,
    left_out: usize,
    /// Where the narrowed window starts, for the history's reader to pass over the lines
    /// before it and forget their runs (`history::RunScanner::moved`).
    moved: Rc<Cell<Option<DateTime<Utc>>>>,
}

#[cfg(test)]
thread_local! {
    /// Nodes and groups compared with a record (the tests' measure of the work).
    static LOOKED_AT: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// Where `key`'s entry is among the `hashed` ones of `entries`, comparing only those.
fn find<T>(entries: &[T], hashed: Option<&Vec<usize>>, is: impl Fn(&T) -> bool) -> Option<usize> {
    hashed?.iter().copied().find(|&i| {
        #[cfg(test)]
        LOOKED_AT.with(|c| c.set(c.get() + 1));
        is(&entries[i])
    })
}

impl Grouping {
    pub fn new(filter: &Filter) -> Grouping {
        Grouping {
            filter: Filter {
                host: filter.host.clone(),
                dir: filter.dir.clone(),
                engine: filter.engine.clone(),
                policy: filter.policy.clone(),
                since: filter.since,
            },
            all_engines: Filter {
                engine: None,
                host: filter.host.clone(),
                dir: filter.dir.clone(),
                policy: filter.policy.clone(),
                since: filter.since,
            },
            engines: Vec::new(),
            groups: Vec::new(),
            engines_by_hash: HashMap::new(),
            groups_by_hash: HashMap::new(),
            hasher: RandomState::new(),
            last: 0,
            held: 0,
            limit: crate::hold::limit(),
            last_context: 0,
            through: None,
            left_out: 0,
            moved: Rc::new(Cell::new(None)),
        }
    }

    /// [`Grouping::new`] holding at most `limit` bytes of runs (`hold`).
    #[cfg(test)]
    fn holding_at_most(filter: &Filter, limit: u64) -> Grouping {
        Grouping {
            limit,
            ..Grouping::new(filter)
        }
    }

    /// Where the window starts once narrowed to what could be held, as it moves: for the
    /// history's reader (`history::RunScanner::moved`).
    pub fn moved(&self) -> Rc<Cell<Option<DateTime<Utc>>>> {
        self.moved.clone()
    }

    /// The window narrowed to what could be held, if it was.
    pub fn narrowed(&self) -> Option<crate::hold::Narrowed> {
        Some(crate::hold::Narrowed {
            left_out: self.left_out,
            through: self.through?,
            limit: self.limit,
        })
    }

    /// Takes one record: counted for the engines if the filter (but for its engine) keeps
    /// it, and put in its group if the filter keeps it.
    pub fn add(&mut self, r: Run) {
        if !self.all_engines.keeps(&r) {
            return;
        }
        // a run of the part of the window let go: neither held nor counted for the engines
        if self.through.is_some_and(|t| r.timestamp <= t) {
            if self.filter.keeps(&r) {
                self.left_out += 1;
            }
            return;
        }
        let node =
            |k: &(String, String, String)| k.0 == r.host && k.1 == r.policy && k.2 == r.target.dir;
        let hash = self
            .hasher
            .hash_one(node_key(&r.host, &r.policy, &r.target.dir));
        let found = find(&self.engines, self.engines_by_hash.get(&hash), |(k, _)| {
            node(k)
        });
        let counts = match found {
            Some(i) => &mut self.engines[i].1,
            None => {
                let key = (r.host.clone(), r.policy.clone(), r.target.dir.clone());
                let at = self.engines.len();
                self.engines_by_hash.entry(hash).or_default().push(at);
                self.engines.push((key, BTreeMap::new()));
                &mut self.engines[at].1
            }
        };
        match counts.get_mut(r.engine.as_str()) {
            Some(n) => *n += 1,
            None => {
                counts.insert(r.engine.clone(), 1);
            }
        }
        if !self.filter.keeps(&r) {
            return;
        }
        let same = |g: &Group| {
            g.host == r.host
                && g.policy == r.policy
                && g.dir == r.target.dir
                && g.engine == r.engine
        };
        let i = if self.groups.get(self.last).is_some_and(|(g, _)| same(g)) {
            self.last
        } else {
            let key = (
                node_key(&r.host, &r.policy, &r.target.dir),
                r.engine.as_str(),
            );
            let hash = self.hasher.hash_one(key);
            let found = find(&self.groups, self.groups_by_hash.get(&hash), |(g, _)| {
                same(g)
            });
            found.unwrap_or_else(|| {
                let at = self.groups.len();
                self.groups_by_hash.entry(hash).or_default().push(at);
                self.groups.push((Group::of(&r), Vec::new()));
                at
            })
        };
        self.last = i;
        let context = Arc::as_ptr(r.context()) as usize;
        self.held += crate::hold::cost(&r, context != self.last_context);
        self.last_context = context;
        self.groups[i].1.push(r);
        if self.held > self.limit {
            self.let_go();
        }
    }

    /// The cost of each run held, with its time, in no order.
    fn costs(&self) -> Vec<(DateTime<FixedOffset>, u64)> {
        let mut out = Vec::new();
        for (_, runs) in &self.groups {
            let mut last = 0;
            for r in runs {
                let context = Arc::as_ptr(r.context()) as usize;
                out.push((r.timestamp, crate::hold::cost(r, context != last)));
                last = context;
            }
        }
        out
    }

    /// Lets the oldest runs go until the rest fit in three quarters of the limit (the runs of
    /// the latest time let go go too, whatever their group): the window then starts after
    /// them, and runs read later at or before that time are not held either.
    fn let_go(&mut self) {
        let mut costs = self.costs();
        costs.sort_unstable_by_key(|c| std::cmp::Reverse(c.0));
        let target = self.limit / 4 * 3;
        let mut sum = 0u64;
        let Some(through) = costs.iter().find_map(|&(t, c)| {
            sum += c;
            (sum > target).then_some(t)
        }) else {
            return;
        };
        drop(costs);
        for (_, runs) in &mut self.groups {
            let before = runs.len();
            runs.retain(|r| r.timestamp > through);
            runs.shrink_to_fit();
            self.left_out += before - runs.len();
        }
        self.through = Some(self.through.map_or(through, |t| t.max(through)));
        self.held = self.costs().iter().map(|c| c.1).sum();
        self.last_context = 0;
        self.moved.set(Some(
            through.with_timezone(&Utc) + ChronoDuration::nanoseconds(1),
        ));
    }

    /// Evaluates every group, in the order of their names (host, policy, directory, engine).
    pub fn evaluate(self, policy: &Policy, now: DateTime<Utc>, strict: bool) -> Vec<Evaluation> {
        self.evaluate_in(policy, now, strict, None, &Records::None)
            .expect("runs that hold every figure are judged without reading their records")
    }

    /// [`Grouping::evaluate`] of runs that hold only some figures (`Run::holding`), the rest
    /// read again from `records`, each group decided by the sequential rule where `until` (and
    /// the group's runs) allow it (`report --until-decided`); an error says the history could
    /// not be read again.
    pub fn evaluate_in(
        self,
        policy: &Policy,
        now: DateTime<Utc>,
        strict: bool,
        until: Option<evaluate::sequential::Settings>,
        records: &Records,
    ) -> std::io::Result<Vec<Evaluation>> {
        let narrowed = self.narrowed();
        let Grouping {
            engines,
            mut groups,
            engines_by_hash,
            hasher,
            ..
        } = self;
        groups.sort_by(|a, b| a.0.cmp(&b.0));
        groups
            .into_iter()
            .map(|(g, recs)| {
                let mut opts = Options::new(Scope::Report, now);
                opts.strict = strict;
                opts.sequential = until;
                opts.narrowed = narrowed.clone();
                let hash = hasher.hash_one(node_key(&g.host, &g.policy, &g.dir));
                let node = engines_by_hash.get(&hash).into_iter().flatten();
                if let Some((_, e)) = node
                    .map(|&i| &engines[i])
                    .find(|(k, _)| k.0 == g.host && k.1 == g.policy && k.2 == g.dir)
                {
                    opts.other_engines = e
                        .iter()
                        .filter(|(name, _)| **name != g.engine)
                        .map(|(k, v)| (k.clone(), *v))
                        .collect();
                }
                let mut ev = evaluate::evaluate_runs_in(recs, policy, &opts, records)?;
                ev.group = Some(g);
                Ok(ev)
            })
            .collect()
    }
}

/// Evaluates every group of records held in memory that passes the filter (see [`Grouping`]),
/// with where the runs' whole records are read again (the records given). Held already,
/// they are judged whole, whatever `IOPSCHECK_HOLD` says (`hold`).
pub fn evaluate_groups(
    records: Vec<Record>,
    policy: &Policy,
    filter: &Filter,
    now: DateTime<Utc>,
    strict: bool,
) -> (Vec<Evaluation>, Records) {
    // the records are held already, by the caller (`compare`): no run of them is let go
    let mut grouping = Grouping {
        limit: u64::MAX,
        ..Grouping::new(filter)
    };
    for (i, r) in records.iter().enumerate() {
        grouping.add(Run::of(r, i));
    }
    (
        grouping.evaluate(policy, now, strict),
        Records::Memory(std::sync::Arc::new(records)),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evaluate::Verdict;
    use crate::evaluate::tests::rec;

    fn now() -> DateTime<Utc> {
        DateTime::parse_from_rfc3339("2026-12-02T12:00:00Z")
            .unwrap()
            .with_timezone(&Utc)
    }

    #[test]
    fn since_is_a_duration_a_date_or_a_timestamp_and_says_so_otherwise() {
        let n = now();
        let parse_since = |s: &str, n| Since::parse(s).map(|x| x.start(n));
        assert_eq!(
            parse_since("36h", n).unwrap(),
            n - ChronoDuration::hours(36)
        );
        assert_eq!(
            parse_since("2026-11-30T08:00:00+02:00", n).unwrap(),
            DateTime::parse_from_rfc3339("2026-11-30T06:00:00Z").unwrap()
        );
        let midnight = Local
            .from_local_datetime(
                &NaiveDate::from_ymd_opt(2026, 11, 28)
                    .unwrap()
                    .and_hms_opt(0, 0, 0)
                    .unwrap(),
            )
            .earliest()
            .unwrap();
        assert_eq!(parse_since("2026-11-28", n).unwrap(), midnight);
        let e = parse_since("last tuesday", n).unwrap_err();
        assert!(e.starts_with("'last tuesday' is neither a duration"), "{e}");
    }

    /// Runs every ten minutes back from `now`, the latest last, each sharing one context.
    fn every_ten_minutes(n: usize) -> Vec<Record> {
        (0..n)
            .map(|i| {
                let t = now() - ChronoDuration::minutes(10 * (n - i) as i64);
                rec(&t.to_rfc3339(), 16.0)
            })
            .collect()
    }

    #[test]
    fn a_window_past_what_may_be_held_keeps_its_latest_runs_and_says_so() {
        let policy = crate::policy::resolve("swimlane").unwrap().policy;
        let filter = Filter {
            host: None,
            dir: None,
            engine: None,
            policy: "swimlane".into(),
            since: window_start(now(), std::time::Duration::from_secs(400 * 86400)),
        };
        // each run its own context here (a history's reader shares one between runs): about
        // 1.2 KiB a run
        let records = every_ten_minutes(2000);
        let limit = 512 << 10;
        // in time order, and shuffled (a merged history): the latest runs are kept
        let mut orders = vec![(0..records.len()).collect::<Vec<_>>()];
        let mut shuffled: Vec<usize> = (0..records.len()).collect();
        shuffled.sort_by_key(|&i| (i * 7919) % records.len());
        orders.push(shuffled);
        for order in orders {
            let mut g = Grouping::holding_at_most(&filter, limit);
            for &i in &order {
                g.add(Run::of(&records[i], i));
            }
            assert!(g.held <= limit, "{} bytes held", g.held);
            let n = g.narrowed().expect("narrowed");
            let kept: Vec<usize> = g.groups[0]
                .1
                .iter()
                .map(|r| match r.at {
                    crate::run_index::At::Index(i) => i,
                    _ => unreachable!(),
                })
                .collect();
            assert_eq!(n.left_out + kept.len(), records.len());
            assert!(kept.len() > 100, "{} kept", kept.len());
            // every run kept is later than every run let go
            assert!(kept.iter().all(|&i| records[i].timestamp > n.through));
            let mut sorted = kept.clone();
            sorted.sort_unstable();
            assert_eq!(
                sorted,
                (records.len() - kept.len()..records.len()).collect::<Vec<_>>()
            );
            // the verdict is on the whole window or on nothing: inconclusive, saying why
            let ev = g.evaluate(&policy, now(), false).remove(0);
            assert_eq!(ev.verdict, Verdict::Inconclusive);
            assert!(ev.reason.contains("were let go"), "{}", ev.reason);
            assert!(
                ev.reason
                    .contains("judged alone, the runs after them would pass"),
                "{}",
                ev.reason
            );
            assert_eq!(ev.narrowed.as_ref(), Some(&n));
        }
        // what fits is never narrowed
        let mut g = Grouping::holding_at_most(&filter, 64 << 20);
        for (i, r) in records.iter().enumerate() {
            g.add(Run::of(r, i));
        }
        assert!(g.narrowed().is_none());
        assert_eq!(g.groups[0].1.len(), records.len());
    }

    #[test]
    fn groups_never_mix_and_other_engines_are_counted_for_the_warning() {
        let policy = crate::policy::resolve("swimlane").unwrap().policy;
        let mut io_uring = rec("2026-12-01T11:00:00Z", 16.0);
        io_uring.engine = "io_uring".into();
        let mut other_dir = rec("2026-12-01T12:00:00Z", 16.0);
        other_dir.target.dir = "/other".into();
        let old = rec("2026-11-01T10:00:00Z", 16.0);
        let records = vec![rec("2026-12-01T10:00:00Z", 16.0), io_uring, other_dir, old];
        let filter = Filter {
            host: Some("node1".into()),
            dir: None,
            engine: Some("posixaio".into()),
            policy: "swimlane".into(),
            since: window_start(now(), std::time::Duration::from_secs(7 * 86400)),
        };
        let (evs, _) = evaluate_groups(records, &policy, &filter, now(), false);
        let groups: Vec<(&str, usize)> = evs
            .iter()
            .map(|e| (e.group.as_ref().unwrap().dir.as_str(), e.runs.len()))
            .collect();
        assert_eq!(groups, [("/data", 1), ("/other", 1)]);
        let mixed = evs[0].warnings.iter().any(|w| {
            matches!(w, crate::evaluate::Warning::MixedEngines { engines }
                if engines.get("io_uring") == Some(&1) && engines.get("posixaio") == Some(&1))
        });
        assert!(mixed, "{:?}", evs[0].warnings);
        assert!(
            evs[1]
                .warnings
                .iter()
                .all(|w| !matches!(w, crate::evaluate::Warning::MixedEngines { .. }))
        );
        // The report's verdict: every group must pass.
        assert_eq!(
            Verdict::worst(evs.iter().map(|e| e.verdict)),
            Verdict::Inconclusive
        );
    }

    #[test]
    fn the_worst_verdict_fails_first_and_nothing_is_inconclusive() {
        use Verdict::*;
        assert_eq!(Verdict::worst([Pass, Inconclusive, Fail, Pass]), Fail);
        assert_eq!(Verdict::worst([Pass, Inconclusive]), Inconclusive);
        assert_eq!(Verdict::worst([Pass, Pass]), Pass);
        assert_eq!(Verdict::worst([]), Inconclusive);
    }

    #[test]
    fn the_work_of_grouping_grows_with_the_records_and_no_faster() {
        let filter = Filter {
            host: None,
            dir: None,
            engine: None,
            policy: "swimlane".into(),
            since: window_start(now(), std::time::Duration::from_secs(7 * 86400)),
        };
        let mut per_record = Vec::new();
        for n in [500, 2000] {
            // two records of each of n nodes, the nodes' second records after all first ones
            let records: Vec<Record> = (0..2 * n)
                .map(|i| {
                    let mut r = rec("2026-12-01T10:00:00Z", 16.0);
                    r.host = format!("node{}", i % n);
                    r
                })
                .collect();
            let mut grouping = Grouping::new(&filter);
            LOOKED_AT.with(|c| c.set(0));
            for (i, r) in records.iter().enumerate() {
                grouping.add(Run::of(r, i));
            }
            assert_eq!(grouping.groups.len(), n);
            assert!(grouping.groups.iter().all(|(_, runs)| runs.len() == 2));
            let looked_at = LOOKED_AT.with(|c| c.get());
            // each record is compared with its own node and group, and hardly any other
            let len = records.len() as u64;
            assert!(
                looked_at <= 2 * len,
                "{looked_at} compared for {len} records"
            );
            per_record.push(looked_at as f64 / len as f64);
        }
        // Four times the nodes, the same work per record.
        assert!(
            (per_record[1] / per_record[0] - 1.0).abs() < 0.01,
            "{per_record:?}"
        );
    }
}
