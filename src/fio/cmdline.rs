//! The fio command line that runs a [`Job`] with the installed fio and writes JSON.

use std::path::Path;

use crate::job::{Job, Rw, SyncMode};

/// fio's arguments (without the program name) for `job`, JSON output on stdout.
///
/// Files: each of the `numjobs` clones writes its own file, `<dir>/<prefix>.<jobnum>` for
/// jobnum 0..numjobs. A single
/// `--filename` would make every clone share one file; `--directory` with
/// `--filename_format=<prefix>.$jobnum` avoids that. `file_prefix` is reduced to letters,
/// digits, `.`, `-` and `_` (others become `_`) so that fio sees no keyword or path in it.
///
/// Sizes are plain bytes: with fio's default `kb_base=1024`, `4KiB` would mean 4000 bytes.
/// The runtime is whole seconds, or milliseconds (`1500ms`) when it has a fraction.
/// `--group_reporting` is passed whenever numjobs > 1: a run is recorded as the job's whole,
/// as the native engine measures it, and fio then merges the clones' latency histograms
/// itself instead of printing one entry per clone.
pub fn command_line(job: &Job, dir: &Path, file_prefix: &str) -> Vec<String> {
    command_line_with(
        job,
        vec![
            format!("--directory={}", escape_colons(&dir.to_string_lossy())),
            format!("--filename_format={}.$jobnum", safe_prefix(file_prefix)),
        ],
    )
}

/// fio's arguments for `job` run on files it is handed open, never by name: job `j` (fio's
/// `$jobnum`) opens `/proc/self/fd/<lead><j>` (lead 1: descriptors 10…19, then 110…199, …),
/// the magic link that reopens the very file behind that descriptor, whatever has become of
/// its name. The caller places the files at those numbers, inherited by fio.
pub fn command_line_by_descriptor(job: &Job, lead: u32) -> Vec<String> {
    command_line_with(
        job,
        vec![format!("--filename_format=/proc/self/fd/{lead}$jobnum")],
    )
}

fn command_line_with(job: &Job, files: Vec<String>) -> Vec<String> {
    let mut a = vec![format!("--name={}", job.name)];
    a.extend(files);
    a.extend([
        format!("--rw={}", job.rw.as_str()),
        format!("--bs={}", job.bs.0),
        format!("--size={}", job.size.0),
        format!("--ioengine={}", job.ioengine.as_str()),
        format!("--iodepth={}", job.iodepth),
        format!("--numjobs={}", job.numjobs),
    ]);
    let ms = job.runtime.0.as_millis();
    a.push(if ms.is_multiple_of(1000) {
        format!("--runtime={}", ms / 1000)
    } else {
        format!("--runtime={ms}ms")
    });
    if job.time_based {
        a.push("--time_based".into());
    }
    if job.end_fsync {
        a.push("--end_fsync=1".into());
    }
    if job.direct {
        a.push("--direct=1".into());
    }
    if job.fsync > 0 {
        a.push(format!("--fsync={}", job.fsync));
    }
    if job.fdatasync > 0 {
        a.push(format!("--fdatasync={}", job.fdatasync));
    }
    match job.sync {
        SyncMode::None => {}
        // `sync=1` is understood by every fio version; `dsync` needs fio ≥ 3.25.
        SyncMode::Sync => a.push("--sync=1".into()),
        SyncMode::Dsync => a.push("--sync=dsync".into()),
    }
    if matches!(job.rw, Rw::Rw | Rw::RandRw) {
        a.push(format!("--rwmixread={}", job.rwmixread));
    }
    if job.numjobs > 1 {
        a.push("--group_reporting".into());
    }
    a.push("--output-format=json".into());
    a
}

/// The fio command that runs `job` as a customer types it, in the current directory, its
/// result written as JSON to a file named by the time it ran: fio's own option words (`4k`,
/// `4g`), nothing of ours.
pub fn customer_command(job: &Job) -> String {
    let mut words = vec!["fio".to_string()];
    for a in command_line(job, Path::new("."), &job.name) {
        if a.starts_with("--directory=")
            || a.starts_with("--filename_format=")
            || a.starts_with("--output-format=")
        {
            continue;
        }
        let a = match a.split_once('=') {
            Some((k @ ("--bs" | "--size"), v)) => match v.parse::<u64>() {
                Ok(n) => format!("{k}={}", crate::units::format_size_fio(n)),
                Err(_) => a,
            },
            _ => a,
        };
        words.push(a);
    }
    words.push("--output-format=json".into());
    words.push("--output=\"fio-$(hostname)-$(date +%Y%m%d-%H%M%S).json\"".into());
    words.join(" ")
}

fn safe_prefix(p: &str) -> String {
    let s: String = p
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "._-".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect();
    if s.is_empty() || s.chars().all(|c| c == '.') {
        "iopscheck".into()
    } else {
        s
    }
}

/// fio splits `directory=` on `:` (several directories); `\:` is a literal colon.
fn escape_colons(s: &str) -> String {
    s.replace(':', "\\:")
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::job::Secs;

    use crate::job::tests::swimlane;

    #[test]
    fn the_swimlane_job() {
        let a = command_line(&swimlane(), Path::new("/data/t"), "iopscheck-1234");
        assert_eq!(
            a,
            [
                "--name=random-write",
                "--directory=/data/t",
                "--filename_format=iopscheck-1234.$jobnum",
                "--rw=randwrite",
                "--bs=4096",
                "--size=4294967296",
                "--ioengine=posixaio",
                "--iodepth=1",
                "--numjobs=1",
                "--runtime=60",
                "--time_based",
                "--end_fsync=1",
                "--output-format=json",
            ]
        );
    }

    #[test]
    fn by_descriptor_fio_is_given_no_directory_and_no_name() {
        let a = command_line_by_descriptor(&swimlane(), 3);
        assert_eq!(a[1], "--filename_format=/proc/self/fd/3$jobnum");
        assert!(!a.iter().any(|x| x.starts_with("--directory=")));
        // the rest as by name
        let by_name = command_line(&swimlane(), Path::new("/data/t"), "x");
        assert_eq!(a[2..], by_name[3..]);
    }

    #[test]
    fn options_appear_only_when_set() {
        let mut j = swimlane();
        j.rw = Rw::RandRw;
        j.rwmixread = 70;
        j.numjobs = 4;
        j.direct = true;
        j.fsync = 8;
        j.fdatasync = 2;
        j.sync = SyncMode::Dsync;
        j.time_based = false;
        j.end_fsync = false;
        j.runtime = Secs(Duration::from_millis(1500));
        let a = command_line(&j, Path::new("/mnt/a:b"), "we/ird $x");
        for want in [
            "--directory=/mnt/a\\:b",
            "--filename_format=we_ird__x.$jobnum",
            "--rw=randrw",
            "--rwmixread=70",
            "--numjobs=4",
            "--direct=1",
            "--fsync=8",
            "--fdatasync=2",
            "--sync=dsync",
            "--runtime=1500ms",
            "--group_reporting",
        ] {
            assert!(a.iter().any(|x| x == want), "{want} missing from {a:?}");
        }
        assert!(
            !a.iter()
                .any(|x| x == "--time_based" || x.starts_with("--end_fsync"))
        );
    }
}
