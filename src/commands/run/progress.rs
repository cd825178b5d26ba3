//! The progress line on stderr.

use std::io::IsTerminal;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use crate::config::Ctx;
use crate::engine::{Live, Phase};
use crate::units;

use super::plan::Plan;

/// The progress line on stderr: the current run's phase and time, live IOPS, and the whole
/// check's progress and time left. One line, replaced in place and cleared when a run ends or
/// a signal stops the check. Hidden when stderr is not a terminal or with --quiet.
pub struct Progress {
    show: bool,
    bar: std::sync::Mutex<Option<indicatif::ProgressBar>>,
    runtime: Duration,
    runs: u32,
    interval: Duration,
    /// Whether each run ends with an fsync whose length depends on the disk.
    end_fsync: bool,
    last: std::sync::Mutex<(Instant, u64)>,
    /// When the current run started, and how long the finished ones took.
    run_started: std::sync::Mutex<Option<Instant>>,
    done: std::sync::Mutex<Vec<Duration>>,
}

impl Progress {
    pub(super) fn new(ctx: &Ctx, plan: &Plan) -> Progress {
        Progress {
            show: !ctx.quiet && std::io::stderr().is_terminal(),
            bar: std::sync::Mutex::new(None),
            runtime: plan.job.runtime.0,
            runs: plan.runs,
            interval: plan.interval,
            end_fsync: plan.job.end_fsync && plan.job.rw.writes(),
            last: std::sync::Mutex::new((Instant::now(), 0)),
            run_started: std::sync::Mutex::new(None),
            done: std::sync::Mutex::new(Vec::new()),
        }
    }

    /// Before the first run: how long the whole check will take.
    pub(super) fn estimate_line(&self) -> String {
        let runs = self.runs;
        let waits = runs.saturating_sub(1);
        let total = self.runtime * runs + self.interval * waits;
        let mut parts = vec![format!(
            "{runs} run{} of {}",
            if runs == 1 { "" } else { "s" },
            units::format_duration(self.runtime)
        )];
        if waits > 0 && !self.interval.is_zero() {
            parts.push(format!(
                "{waits} wait{} of {}",
                if waits == 1 { "" } else { "s" },
                units::format_duration(self.interval)
            ));
        }
        let mut line = format!(
            "the check takes about {} ({})",
            clock(total),
            parts.join(" + ")
        );
        if self.end_fsync {
            line.push_str(" plus each run's final fsync");
        }
        line
    }

    /// How long one run takes: the mean of the finished ones, else the runtime.
    pub(super) fn per_run(&self) -> Duration {
        let done = self.done.lock().map(|d| d.clone()).unwrap_or_default();
        if done.is_empty() {
            self.runtime
        } else {
            done.iter().sum::<Duration>() / done.len() as u32
        }
    }

    /// The whole check's share done and time left, during run `run` (1-based) `elapsed` in.
    pub(super) fn overall(&self, run: u32, elapsed: Duration) -> (f64, Duration) {
        let per = self.per_run();
        let total = per * self.runs + self.interval * self.runs.saturating_sub(1);
        let finished: Duration = self.done.lock().map(|d| d.iter().sum()).unwrap_or_default();
        let before = finished + self.interval * run.saturating_sub(1);
        // The current run counts as at most its expected length until it is done.
        let so_far = before + elapsed.min(per);
        let left = total.saturating_sub(so_far);
        let pct = if total.is_zero() {
            0.0
        } else {
            (so_far.as_secs_f64() / total.as_secs_f64() * 100.0).min(99.0)
        };
        (pct, left)
    }

    pub(super) fn start(&self, run: u32, what: &str) {
        if let Ok(mut l) = self.last.lock() {
            *l = (Instant::now(), 0);
        }
        if run > 0
            && let Ok(mut s) = self.run_started.lock()
        {
            *s = Some(Instant::now());
        }
        if !self.show {
            return;
        }
        // The previous line goes first, so the new one is drawn where it was.
        self.clear();
        let b = indicatif::ProgressBar::with_draw_target(
            None,
            indicatif::ProgressDrawTarget::term_like_with_hz(
                Box::new(crate::terminal::ProgressTerm),
                20,
            ),
        );
        b.set_style(
            indicatif::ProgressStyle::with_template("{spinner} {msg}").expect("valid template"),
        );
        b.set_message(if run == 0 {
            what.to_string()
        } else {
            format!("run {run}/{}: {what}", self.runs)
        });
        b.enable_steady_tick(Duration::from_millis(120));
        if let Ok(mut slot) = self.bar.lock() {
            *slot = Some(b);
        }
    }

    /// A run completed: its length refines the estimate of the others.
    pub(super) fn finished_run(&self) {
        if let Ok(mut s) = self.run_started.lock()
            && let Some(t) = s.take()
            && let Ok(mut d) = self.done.lock()
        {
            d.push(t.elapsed());
        }
    }

    pub fn set(&self, msg: String) {
        if let Ok(slot) = self.bar.lock()
            && let Some(b) = slot.as_ref()
        {
            b.set_message(msg);
        }
    }

    pub(super) fn waiting(&self, d: Duration) {
        self.start(
            0,
            &format!("waiting {} before the next run", units::format_duration(d)),
        );
    }

    pub(super) fn update(&self, run: u32, live: &Live, started: Instant) {
        if !self.show {
            return;
        }
        let phase = live.phase();
        if phase == Phase::LayingOut {
            let (done, total) = (
                live.layout_done.load(Ordering::Relaxed),
                live.layout_total.load(Ordering::Relaxed),
            );
            self.set(format!(
                "laying out the test file: {} of {}",
                units::format_size(done),
                units::format_size(total)
            ));
            return;
        }
        let elapsed = started.elapsed();
        let ios = live.ios.load(Ordering::Relaxed);
        let rate = match self.last.lock() {
            Ok(mut l) => {
                let dt = l.0.elapsed().as_secs_f64();
                let r = if dt > 0.0 {
                    ios.saturating_sub(l.1) as f64 / dt
                } else {
                    0.0
                };
                *l = (Instant::now(), ios);
                r
            }
            Err(_) => 0.0,
        };
        let head = format!("run {run}/{}", self.runs);
        let (pct, left) = self.overall(run, elapsed);
        let whole = if self.runs > 1 {
            format!(" · check {pct:.0}%, {} left", clock(left))
        } else {
            String::new()
        };
        self.set(match phase {
            Phase::Running => format!(
                "{head}: running {}s of {}s · {:.0} IOPS{whole}",
                elapsed.as_secs(),
                self.runtime.as_secs(),
                rate
            ),
            Phase::Draining => format!("{head}: draining in-flight I/O{whole}"),
            Phase::FinalFsync => format!(
                "{head}: final fsync (flushing the page cache) · {}s{whole}",
                elapsed.as_secs()
            ),
            other => format!("{head}: {}", other.label()),
        });
    }

    pub(super) fn clear(&self) {
        if let Ok(mut slot) = self.bar.lock()
            && let Some(b) = slot.take()
        {
            b.finish_and_clear();
        }
    }
}

/// A duration as a person reads it on a progress line: 45s, 3m10s, 1h05m.
pub(super) fn clock(d: Duration) -> String {
    let s = d.as_secs();
    if s < 60 {
        format!("{s}s")
    } else if s < 3600 {
        format!("{}m{:02}s", s / 60, s % 60)
    } else {
        format!("{}h{:02}m", s / 3600, (s % 3600) / 60)
    }
}
