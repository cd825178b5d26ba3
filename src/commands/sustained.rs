//! `iopscheck run --sustained`: a watcher beside the one run that reads the disk's own series
//! every 500 ms, says on stderr where the run stands, ends the timed phase once the disk's
//! rate held steady after its burst credits ran out (`measure::steady`), and says at the end
//! whether the level the disk sustains was reached.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::sync::mpsc::{self, RecvTimeoutError, Sender};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::engine::{Live, Phase};
use crate::evaluate::SustainedCheck;
use crate::measure::device;
use crate::measure::series::INTERVAL_MS;
use crate::measure::steady::{State, WINDOW_MS, Watched};
use crate::units::format_duration;

/// A progress line this often.
const PROGRESS_EVERY: u32 = 20;

pub struct Watcher {
    stop: Sender<()>,
    handle: JoinHandle<Watched>,
    live: Arc<Live>,
    buffered: bool,
    budget: Duration,
    disk: String,
}

impl Watcher {
    /// Starts watching `disk` for a run of at most `budget` and at least `least` (the
    /// policy's own runtime: a sustained run is never shorter than its test); it reads from
    /// the timed phase's start (`live`'s phase).
    pub fn spawn(
        disk: String,
        live: Arc<Live>,
        buffered: bool,
        budget: Duration,
        least: Duration,
    ) -> Watcher {
        live.finish.store(false, Ordering::Relaxed);
        crate::out::err_line(crate::terminal::wrap(
            "sustained: ",
            &format!(
                "one run of the policy's job until the disk ({disk}) holds a steady rate after its burst credits run out (a step down, then {} s whose trend moves under {:.0}%), or for the budget of {}. A disk whose rate never steps down runs the whole budget: a burst is as flat as a baseline.",
                WINDOW_MS / 1000,
                crate::measure::steady::SLOPE * 100.0,
                format_duration(budget)
            ),
            crate::terminal::stderr_width(),
        ));
        let (stop, rx) = mpsc::channel::<()>();
        let (d, l) = (disk.clone(), live.clone());
        let handle = std::thread::spawn(move || watch(&d, &l, buffered, budget, least, &rx));
        Watcher {
            stop,
            handle,
            live,
            buffered,
            budget,
            disk,
        }
    }

    /// Stops watching (the run has ended) and says what was found.
    pub fn finish(self) -> SustainedCheck {
        let _ = self.stop.send(());
        let w = self.handle.join().unwrap_or_default();
        let stopped_early = self.live.finish.load(Ordering::Relaxed);
        let check = judge(&w, self.buffered, self.budget, stopped_early, &self.disk);
        let line = match &check {
            SustainedCheck::Reached(s) | SustainedCheck::NotReached(s) => s,
        };
        crate::out::err_line(crate::terminal::wrap(
            "sustained: ",
            line,
            crate::terminal::stderr_width(),
        ));
        check
    }
}

fn judge(
    w: &Watched,
    buffered: bool,
    budget: Duration,
    stopped_early: bool,
    disk: &str,
) -> SustainedCheck {
    let secs = w.ios.len() as f64 * w.interval_ms as f64 / 1000.0;
    match w.state(buffered) {
        State::Steady { step, level } => SustainedCheck::Reached(format!(
            "the disk ({disk}) stepped down from {:.0} to {:.0} I/Os a second after {:.1} s (burst credits ran out) and held steady at {level:.0} for {} s; the run {} after {secs:.0} s",
            step.before,
            step.after,
            step.at_s,
            WINDOW_MS / 1000,
            if stopped_early { "stopped" } else { "ended" },
        )),
        State::Settling { step, .. } => SustainedCheck::NotReached(format!(
            "the budget of {} ended {:.0} s after the disk ({disk}) stepped down from {:.0} to {:.0} I/Os a second, before its rate held steady for {} s: run again with a longer --sustained-budget",
            format_duration(budget),
            secs - step.at_s,
            step.before,
            step.after,
            WINDOW_MS / 1000
        )),
        State::NoStep => match w.steady_at_end() {
            Some(level) => SustainedCheck::Reached(format!(
                "the disk ({disk}) kept a steady {level:.0} I/Os a second to the end of the budget of {} without a step down: its figures are what it sustains for that long",
                format_duration(budget)
            )),
            None => SustainedCheck::NotReached(format!(
                "the budget of {} ended before the disk's ({disk}) rate held steady: run again with a longer --sustained-budget",
                format_duration(budget)
            )),
        },
    }
}

fn watch(
    disk: &str,
    live: &Live,
    buffered: bool,
    budget: Duration,
    least: Duration,
    stop: &mpsc::Receiver<()>,
) -> Watched {
    let mut w = Watched {
        interval_ms: INTERVAL_MS,
        ..Watched::default()
    };
    let read = || {
        std::fs::read_to_string("/proc/diskstats")
            .ok()
            .and_then(|t| device::counters(&t, disk))
    };
    // From the timed phase's start, as the engine's own series.
    while live.phase() != Phase::Running {
        match stop.recv_timeout(Duration::from_millis(10)) {
            Err(RecvTimeoutError::Timeout) => {}
            _ => return w,
        }
    }
    let t0 = Instant::now();
    let mut prev = read();
    let interval = Duration::from_millis(INTERVAL_MS as u64);
    for tick in 1u32.. {
        let next = t0 + interval * tick;
        match stop.recv_timeout(next.saturating_duration_since(Instant::now())) {
            Err(RecvTimeoutError::Timeout) => {}
            _ => break,
        }
        let now = read();
        if let (Some(a), Some(b)) = (prev, now) {
            w.ios
                .push(((b.reads + b.writes).saturating_sub(a.reads + a.writes)) as f64);
            w.busy_ms.push(b.busy_ms.saturating_sub(a.busy_ms) as f64);
            w.kib.push(b.sectors.saturating_sub(a.sectors) as f64 / 2.0);
        }
        prev = now;
        if live.finish.load(Ordering::Relaxed) {
            continue;
        }
        let state = w.state(buffered);
        let elapsed = Duration::from_millis(INTERVAL_MS as u64 * tick as u64);
        if let State::Steady { .. } = state
            && elapsed >= least
        {
            live.finish.store(true, Ordering::Relaxed);
        }
        if tick % PROGRESS_EVERY == 0 {
            let left = budget.saturating_sub(elapsed);
            let at = match state {
                State::NoStep => format!(
                    "no step down yet: the run goes on until the disk's credits run out, at most {} more",
                    clock(left)
                ),
                State::Settling { step, left_s } => format!(
                    "stepped down after {:.1} s from {:.0}: a steady rate for {} s would end it in about {:.0} s (at most {} more)",
                    step.at_s,
                    step.before,
                    WINDOW_MS / 1000,
                    left_s.max(1.0),
                    clock(left)
                ),
                State::Steady { level, .. } if elapsed >= least => {
                    format!("steady at {level:.0} I/Os a second: ending the run")
                }
                State::Steady { level, .. } => format!(
                    "steady at {level:.0} I/Os a second; the run goes on to the policy's runtime of {}",
                    format_duration(least)
                ),
            };
            crate::out::err_line(format!(
                "sustained: {} of at most {}: the disk did {:.0} I/Os a second over the last 10 s; {at}",
                clock(elapsed),
                clock(budget),
                w.recent(10.0)
            ));
        }
    }
    w
}

/// "2:05", "1:02:05".
fn clock(d: Duration) -> String {
    let s = d.as_secs();
    if s >= 3600 {
        format!("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
    } else {
        format!("{}:{:02}", s / 60, s % 60)
    }
}
