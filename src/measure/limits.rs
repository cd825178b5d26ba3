//! What limited the disk in one run, in one sentence, from what the run measured: how long
//! the page cache absorbed the writes, how busy the disk was, whether its burst credits ran
//! out (`changepoint`) and what it kept up, and the end fsync.

use super::Measurement;
use super::changepoint::{self, Finding};

/// The sentence, or None when the run has no series to read it from.
pub fn sentence(m: &Measurement, buffered: bool) -> Option<String> {
    let app = m.series.as_ref()?;
    let dir = app.main_dir();
    let app_counts = app.counts(dir);
    let per_s = 1000.0 / app.interval_ms.max(1) as f64;
    let mut parts: Vec<String> = Vec::new();
    let dev = m.device.as_ref();
    // Where the page cache took every write, the disk's rate says what it was asked, not
    // what it can do.
    let mut absorbed = false;
    if let Some(d) = dev {
        // Only the timed part: the fsync's intervals follow it.
        let n = app_counts.len().min(d.write.len()).saturating_sub(1).max(1);
        let ios = d.ios();
        if buffered {
            // The writer runs ahead of the disk while the page cache takes its writes; from
            // the first interval where it completes no more than 1.2 × what the disk does,
            // the disk sets its pace.
            let caught = (0..n).find(|&i| app_counts[i] as f64 <= 1.2 * ios[i].max(1.0));
            match caught {
                Some(0) => {}
                Some(i) => parts.push(format!(
                    "the page cache absorbed the first {:.1} s",
                    i as f64 / per_s
                )),
                None => {
                    absorbed = true;
                    parts.push("the page cache absorbed the writes of the whole run".into())
                }
            }
        }
        let busy: f64 = d.busy_ms[..n].iter().map(|&b| b as f64).sum::<f64>()
            / (n as f64 * d.interval_ms as f64);
        parts.push(format!(
            "the disk ({}) was {:.0}% busy",
            d.disk,
            (busy * 100.0).min(100.0)
        ));
    }
    match changepoint::of_run(m, buffered) {
        Finding::Exhausted(s) => parts.push(format!(
            "its rate stepped down after {:.1} s from {:.0} to {:.0} IOPS and stayed there: burst credits running out look like this (a bucket of about {:.0} I/Os)",
            s.at_s,
            s.before,
            s.after,
            s.bucket()
        )),
        _ => {
            if let Some(d) = dev.filter(|_| !absorbed) {
                let n = app_counts.len().min(d.write.len()).saturating_sub(1).max(1);
                let ios = d.ios();
                // The disk's own rate over the second half of the timed part: what it kept up.
                let half = &ios[n / 2..n];
                if !half.is_empty() {
                    let rate = half.iter().sum::<f64>() / half.len() as f64 * per_s;
                    parts.push(format!("it completed {rate:.0} IOPS in the run's second half"));
                }
            }
        }
    }
    if let Some(f) = m.end_fsync_ms.filter(|&f| f >= 1000.0) {
        parts.push(format!("the end fsync took {:.1} s", f / 1000.0));
    }
    (!parts.is_empty()).then(|| parts.join("; "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::Series;
    use crate::measure::device::DeviceSeries;

    fn run(app: Vec<u32>, dev: Vec<u32>, busy: Vec<u32>, fsync_ms: Option<f64>) -> Measurement {
        let n = dev.len();
        Measurement {
            series: Some(Series {
                interval_ms: 500,
                write: app,
                last_ms: 100,
                ..Series::default()
            }),
            device: Some(DeviceSeries {
                interval_ms: 500,
                disk: "loop0".into(),
                read: vec![0; n],
                kib: dev.iter().map(|&w| w * 4).collect(),
                write: dev,
                busy_ms: busy,
                dirty_kib: vec![0; n],
                writeback_kib: vec![0; n],
                last_ms: 300,
                ..DeviceSeries::default()
            }),
            end_fsync_ms: fsync_ms,
            ..Measurement::default()
        }
    }

    #[test]
    fn a_burst_disk_behind_the_page_cache_is_told_in_one_sentence() {
        // The writer runs far ahead for 2 s, then at the disk's pace; the disk falls from 500
        // to 125 a 500 ms interval at 3 s.
        let mut app = vec![4000, 3000, 2500, 2000];
        app.extend([500, 500, 130, 125, 125, 125, 125, 125, 10]);
        let mut dev = vec![500; 6];
        dev.extend([125; 8]);
        let m = run(app, dev, vec![500; 14], Some(2900.0));
        let s = sentence(&m, true).unwrap();
        assert_eq!(
            s,
            "the page cache absorbed the first 2.0 s; the disk (loop0) was 100% busy; its rate stepped down after 3.0 s from 1000 to 250 IOPS and stayed there: burst credits running out look like this (a bucket of about 2250 I/Os); the end fsync took 2.9 s"
        );
    }

    #[test]
    fn a_steady_disk_gets_its_rate_and_no_step() {
        let m = run(vec![300; 13], vec![300; 14], vec![250; 14], Some(40.0));
        assert_eq!(
            sentence(&m, false).unwrap(),
            "the disk (loop0) was 50% busy; it completed 600 IOPS in the run's second half"
        );
        // Buffered, the writer far ahead all along: the disk's rate is what it was asked.
        let m = run(vec![5000; 13], vec![300; 14], vec![250; 14], Some(1500.0));
        assert_eq!(
            sentence(&m, true).unwrap(),
            "the page cache absorbed the writes of the whole run; the disk (loop0) was 50% busy; the end fsync took 1.5 s"
        );
        // Without any series there is nothing to say.
        assert_eq!(sentence(&Measurement::default(), false), None);
    }
}
