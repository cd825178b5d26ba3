//! The reader as a whole: text in, jobs and notes out.

use super::parse;
use crate::fio::ParseError;
use crate::job::Rw;

const SYNC_JOB: &str = "\
fsync: (g=0): rw=randwrite, bs=(R) 4096B-4096B, (W) 4096B-4096B, (T) 4096B-4096B, ioengine=psync, iodepth=1
fio-3.33
Starting 1 process

fsync: (groupid=0, jobs=1): err= 0: pid=7: Mon Nov 30 08:12:48 2026
  write: IOPS=1024, BW=4096KiB/s (4194kB/s)(40.0MiB/10001msec); 0 zone resets
clat (usec): min=3, max=120, avg= 5.10, stdev= 2.00
 lat (usec): min=3, max=121, avg= 5.20, stdev= 2.01
clat percentiles (usec):
 |  1.00th=[    4],  5.00th=[    4], 50.00th=[    5], 99.00th=[   11]
  fsync/fdatasync/sync_file_range:
sync (usec): min=455, max=42010, avg=1195.57, stdev=1331.19
sync percentiles (usec):
 |  1.00th=[  611],  5.00th=[  693], 50.00th=[  799], 99.00th=[ 2835]
  cpu          : usr=1.00%, sys=2.00%, ctx=1, majf=0, minf=1
 issued rwts: total=0,10240,0,1280 short=0,0,0,0 dropped=0,0,0,0
broken: (groupid=1, jobs=1): err= 5 (file:io_u.c:1787, func=io_u error, error=Input/output error): pid=8: Mon Nov 30 08:12:49 2026
  cpu          : usr=0.00%, sys=0.00%, ctx=1, majf=0, minf=1

Run status group 0 (all jobs):
";

#[test]
fn sync_latency_and_failed_jobs() {
    let out = parse(SYNC_JOB).unwrap().unwrap();
    assert_eq!(out.jobs.len(), 2);
    let m = &out.jobs[0].measurement;
    let sync = m.sync.as_ref().unwrap();
    assert_eq!(sync.n, 1280);
    assert_eq!(sync.max_ns, 42_010_000.0);
    assert_eq!(sync.percentile(99.0), Some(2_835_000.0));
    let w = m.write.as_ref().unwrap();
    assert_eq!(w.ios, 10_240);
    assert_eq!(w.clat.as_ref().unwrap().percentile(50.0), Some(5000.0));
    assert_eq!(out.jobs[1].error, 5);
    assert!(out.jobs[1].measurement.write.is_none());
}

#[test]
fn a_job_name_like_a_version_is_not_the_version() {
    let text = SYNC_JOB
        .replace("fio-3.33\n", "")
        .replace("fsync:", "fio-4k:");
    let out = parse(&text).unwrap().unwrap();
    assert_eq!(out.fio_version, None);
    assert_eq!(out.jobs[0].name, "fio-4k");
}

const CLIENT: &str = "\
hostname=node-a, be=0, 64-bit, os=Linux, arch=x86-64, fio=fio-3.36, flags=1
<node-a> w: (g=0): rw=randwrite, bs=(R) 4096B-4096B, (W) 4096B-4096B, (T) 4096B-4096B, ioengine=posixaio, iodepth=1
<node-b> w: (g=0): rw=randwrite, bs=(R) 4096B-4096B, (W) 4096B-4096B, (T) 4096B-4096B, ioengine=posixaio, iodepth=1
<node-a> Starting 1 process
<node-a>
w: (groupid=0, jobs=1): err= 0: pid=11: Thu Jun 12 12:38:19 2025
  write: IOPS=6015, BW=23.5Mi (24.6M)(1410MiB/60001msec); 0 zone resets
<node-b> w: (groupid=0, jobs=1): err= 0: pid=12: Thu Jun 12 12:38:19 2025
  write: IOPS=5882, BW=29.4Gi (31.6G)(1379MiB/60001msec); 0 zone resets
All clients: (groupid=0, jobs=2): err= 0: pid=0: Thu Jun 12 12:38:19 2025
  write: IOPS=11.9k, BW=45.5Mi (47.7M)(2789MiB/60001msec); 0 zone resets
";

#[test]
fn client_server_blocks_are_named_per_host_and_read_without_b_per_s() {
    let out = parse(CLIENT).unwrap().unwrap();
    let names: Vec<&str> = out.jobs.iter().map(|j| j.name.as_str()).collect();
    assert_eq!(names, ["<node-a> w", "<node-b> w", "All clients"]);
    assert_eq!(out.fio_version.as_deref(), Some("3.36"));
    let w = out.jobs[1].measurement.write.as_ref().unwrap();
    assert_eq!(w.bw_bytes, 29.4 * 1024f64.powi(3));
    assert_eq!(w.bw_mb_s_printed, Some(31_600.0));
    assert_eq!(out.jobs[0].shape.rw, Some(Rw::RandWrite));
    assert!(
        !out.notes
            .iter()
            .any(|n| n.to_string().contains("lost line breaks")),
        "{:?}",
        out.notes
    );
}

#[test]
fn fio_2_0_version_line_and_numjobs_from_the_block_header() {
    let text = "fio 2.0.6\nx: (groupid=0, jobs=4): err= 0: pid=1\n  write: io=53580KB, bw=914264B/s, iops=223, runt= 60011msec\n\nRun status group 0 (all jobs):\n";
    let out = parse(text).unwrap().unwrap();
    assert_eq!(out.fio_version.as_deref(), Some("2.0.6"));
    assert_eq!(out.jobs[0].shape.numjobs, Some(4));
    // pasted from the first result block on: jobs=1 is the job's numjobs when no other
    // block has its name and the output is not cut
    let one = text.replace("jobs=4", "jobs=1");
    assert_eq!(parse(&one).unwrap().unwrap().jobs[0].shape.numjobs, Some(1));
    let two = format!(
        "{}{}",
        one.replace("\nRun status group 0 (all jobs):\n", ""),
        one
    );
    let out = parse(&two).unwrap().unwrap();
    assert_eq!(out.jobs[0].shape.numjobs, None);
    // fio 2.0.7's spacing, as real outputs print it: `iops=1087 ,`, `bw=663015 B/s`,
    // `min=50 ,`, and the `issued    : total=r=…/w=…/d=…` line
    let text = "fio 2.0.7\nx: (groupid=0, jobs=32): err= 0: pid=32245\n  write: io=2044.2MB, bw=17406KB/s, iops=1087 , runt=120256msec\n    clat (usec): min=50 , max=1439.2K, avg=29404.01, stdev=109807.76\n     issued    : total=r=0/w=130823/d=0, short=r=0/w=0/d=0\ny: (groupid=1, jobs=20): err= 0: pid=15273\n  read : io=38912KB, bw=663015 B/s, iops=161 , runt= 60098msec\n";
    let out = parse(text).unwrap().unwrap();
    assert_eq!(out.fio_version.as_deref(), Some("2.0.7"));
    let w = out.jobs[0].measurement.write.as_ref().unwrap();
    assert_eq!((w.iops, w.ios, w.runtime_ms), (1087.0, 130_823, 120_256));
    assert_eq!(w.clat.as_ref().unwrap().max_ns, 1_439_200_000.0);
    let r = out.jobs[1].measurement.read.as_ref().unwrap();
    assert_eq!((r.iops, r.bw_bytes), (161.0, 663_015.0));
}

#[test]
fn end_fsync_is_read_from_the_sync_count_only_where_fio_counted_it() {
    let job = |version: &str, sync: u64| {
        let t = SYNC_JOB
            .replace("fio-3.33", version)
            .replace("total=0,10240,0,1280", &format!("total=0,10240,0,{sync}"));
        parse(&t).unwrap().unwrap().jobs[0].shape.end_fsync
    };
    assert_eq!(job("fio-3.7", 1), Some(true));
    assert_eq!(job("fio-3.16", 0), Some(false));
    assert_eq!(job("fio-3.4", 0), Some(false));
    // periodic fsyncs hide whether the end one was there
    assert_eq!(job("fio-3.7", 1280), None);
    // fio 3.17 on stopped counting it; before 3.4 there was no count
    assert_eq!(job("fio-3.17", 0), None);
    assert_eq!(job("fio-3.33", 1), None);
    assert_eq!(job("fio-3.3", 0), None);
    assert_eq!(job("fio-unknown", 0), None);
}

#[test]
fn a_result_line_outside_any_block_that_cannot_be_read_is_an_error() {
    let e = parse("fio-3.33\n  write: IOPS=x, BW=?\n").unwrap_err();
    assert!(
        matches!(e, ParseError::Unreadable(ref m) if m.contains("line 2")),
        "{e:?}"
    );
}

#[test]
fn the_work_of_reading_many_runs_grows_with_the_input_and_no_faster() {
    use super::LINES_VISITED;
    let one = include_str!("../../../tests/fixtures/fio-outputs/fio-3.33-posixaio-randwrite.txt");
    let mut per_line = Vec::new();
    for n in [50, 200] {
        // n runs one after another, each its own job (a customer's log of fio runs)
        let text: String = (0..n)
            .map(|i| one.replace("random-write", &format!("random-write-{i}")))
            .collect();
        let lines = text.split('\n').count() as u64;
        LINES_VISITED.with(|c| c.set(0));
        let out = parse(&text).unwrap().unwrap();
        assert_eq!(out.jobs.len(), n);
        assert!(out.jobs.iter().all(|j| !j.measurement.disk.is_empty()));
        let visited = LINES_VISITED.with(|c| c.get());
        // each line is looked at once to find the run whose disk lines it is among
        assert!(visited <= lines, "{visited} lines visited for {lines}");
        per_line.push(visited as f64 / lines as f64);
    }
    // Four times the runs, the same work per line.
    assert!(
        (per_line[1] / per_line[0] - 1.0).abs() < 0.01,
        "{per_line:?}"
    );
}
