//! The date in a job block's header, which has no time zone.

use chrono::{DateTime, FixedOffset, Local, NaiveDate, NaiveDateTime, NaiveTime, TimeZone};

/// The date fio prints in a job header, ctime style: `Mon Nov 30 08:12:48 2026` (the weekday
/// is not checked; anything after the year is ignored).
pub(super) fn parse_ctime(s: &str) -> Option<NaiveDateTime> {
    let mut it = s.split_whitespace();
    let first = it.next()?;
    // the weekday may be missing
    let month_s = if month(first).is_some() {
        first
    } else {
        it.next()?
    };
    let m = month(month_s)?;
    let day: u32 = it.next()?.parse().ok()?;
    let time = it.next()?;
    let year: i32 = it.next()?.parse().ok()?;
    let mut hms = time.split(':').map(|p| p.parse::<u32>().ok());
    let (h, mi, sec) = (hms.next()??, hms.next()??, hms.next()??);
    Some(NaiveDateTime::new(
        NaiveDate::from_ymd_opt(year, m, day)?,
        NaiveTime::from_hms_opt(h, mi, sec)?,
    ))
}

fn month(s: &str) -> Option<u32> {
    const M: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    M.iter().position(|m| *m == s).map(|i| i as u32 + 1)
}

/// A naive local time with this machine's offset at that moment (the earlier one in a DST
/// overlap; for a time skipped by DST, the offset an hour later).
pub(super) fn local_time(naive: NaiveDateTime) -> DateTime<FixedOffset> {
    Local
        .from_local_datetime(&naive)
        .earliest()
        .or_else(|| {
            Local
                .from_local_datetime(&(naive + chrono::Duration::hours(1)))
                .earliest()
        })
        .map(|t| t.fixed_offset())
        .unwrap_or_else(|| naive.and_utc().fixed_offset())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ctime_dates() {
        let d = parse_ctime("Mon Nov 30 08:12:48 2026").unwrap();
        assert_eq!(d.to_string(), "2026-11-30 08:12:48");
        let d = parse_ctime("Fri Feb  9 12:56:50 2018").unwrap();
        assert_eq!(d.to_string(), "2018-02-09 12:56:50");
        assert!(parse_ctime("Mon Foo 30 08:12:48 2026").is_none());
        assert!(parse_ctime("").is_none());
    }
}
