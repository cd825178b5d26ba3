//! Engine tests with real I/O on small files in temporary directories: every back end, reads,
//! mixes, numjobs, fsync every N, O_DIRECT refusal, cancellation and a full disk. Runtimes are
//! a few hundred ms so the whole set stays within seconds.

use std::fs::File;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use super::*;
use crate::job::{IoEngine, Rw, Secs, Size, SyncMode};

const RUNTIME_MS: u64 = 300;

/// The Swimlane job's options (depth 1, one job, time based, end fsync, buffered) at a test's
/// scale: `rw`, `size` and `bs` as given, psync, [`RUNTIME_MS`].
fn job(rw: Rw, size: u64, bs: u64) -> Job {
    Job {
        name: "engine-test".into(),
        rw,
        bs: Size(bs),
        size: Size(size),
        ioengine: IoEngine::Psync,
        runtime: Secs(Duration::from_millis(RUNTIME_MS)),
        ..crate::job::tests::swimlane()
    }
}

fn new_file(dir: &Path, i: usize) -> File {
    File::options()
        .read(true)
        .write(true)
        .create_new(true)
        .open(dir.join(format!("engine-test.{i}.0")))
        .expect("create a test file")
}

/// Lays out `numjobs` files in `dir` and runs the job on them.
fn run_in(dir: &Path, j: &Job, backend: Backend) -> Result<Measurement, EngineError> {
    let live = Live::default();
    let cancel = AtomicBool::new(false);
    let files: Vec<File> = (0..j.numjobs as usize).map(|i| new_file(dir, i)).collect();
    for f in &files {
        layout(f, j, &live, &cancel)?;
    }
    let m = run(j, &files, backend, &live, &cancel, None)?;
    let total = m.read.as_ref().map_or(0, |d| d.ios) + m.write.as_ref().map_or(0, |d| d.ios);
    assert_eq!(live.ios.load(Ordering::Relaxed), total, "live counter");
    assert_eq!(live.phase(), Phase::Done);
    Ok(m)
}

fn run_tmp(j: &Job, backend: Backend) -> Result<Measurement, EngineError> {
    let dir = tempfile::tempdir().expect("tempdir");
    run_in(dir.path(), j, backend)
}

/// A temp dir on tmpfs when there is one, for tests whose point is not the disk: their speed
/// then does not depend on what else is using the disk.
fn fast_tempdir() -> tempfile::TempDir {
    let shm = Path::new("/dev/shm");
    if is_tmpfs(shm)
        && let Ok(d) = tempfile::tempdir_in(shm)
    {
        return d;
    }
    tempfile::tempdir().expect("tempdir")
}

fn run_fast(j: &Job, backend: Backend) -> Result<Measurement, EngineError> {
    let dir = fast_tempdir();
    run_in(dir.path(), j, backend)
}

/// Whether the io_uring cases can run. Where the build found io_uring usable (build.rs),
/// a refusal now is a failure, not a silent skip; elsewhere the cases are skipped, said once
/// per test.
fn uring_ok() -> bool {
    match probe_io_uring() {
        Ok(()) => true,
        Err(why) if cfg!(have_io_uring) => {
            panic!("the build found io_uring usable, but it is refused now: {why}")
        }
        Err(why) => {
            eprintln!("skipped: io_uring is not usable here: {why}");
            false
        }
    }
}

/// The back ends this machine runs: all of them, io_uring where it is usable.
fn runnable_backends() -> Vec<Backend> {
    let uring = uring_ok();
    Backend::ALL
        .into_iter()
        .filter(|&b| b != Backend::IoUring || uring)
        .collect()
}

/// The figures of one direction agree with each other as fio's would.
fn check_dir(d: &DirectionStats, bs: u64, min_runtime_ms: u64, async_engine: bool) {
    assert!(d.ios > 0, "no I/O done");
    assert_eq!(d.bytes, d.ios * bs, "bytes == ios × bs");
    assert!(
        d.runtime_ms >= min_runtime_ms,
        "runtime {} < {min_runtime_ms}",
        d.runtime_ms
    );
    let iops = d.ios as f64 * 1000.0 / d.runtime_ms as f64;
    assert!((d.iops - iops).abs() < 1e-6);
    assert!(
        (d.bw_bytes - d.iops * bs as f64).abs() <= 1.0,
        "bw {} vs iops×bs {}",
        d.bw_bytes,
        d.iops * bs as f64
    );
    let clat = d.clat.as_ref().expect("clat");
    let lat = d.lat.as_ref().expect("lat");
    assert_eq!(clat.n, d.ios);
    assert_eq!(lat.n, d.ios);
    assert!(lat.mean_ns >= clat.mean_ns);
    assert_eq!(d.slat.is_some(), async_engine);
    if let Some(s) = &d.slat {
        assert_eq!(s.n, d.ios);
    }
}

fn check_randwrite(backend: Backend, depth: u32) {
    let mut j = job(Rw::RandWrite, 4 << 20, 4096);
    j.iodepth = depth;
    let m = run_tmp(&j, backend).unwrap_or_else(|e| panic!("{backend} depth {depth}: {e}"));
    assert!(m.read.is_none());
    check_dir(
        m.write.as_ref().expect("write"),
        4096,
        RUNTIME_MS,
        backend.is_async(),
    );
    assert!(m.end_fsync_ms.is_some(), "end fsync timed");
    assert!(m.sync.is_none(), "the end fsync is not a sync sample");
    assert_eq!(m.bs, Some(4096));
    assert!(m.cpu_usr_pct.is_some() && m.cpu_sys_pct.is_some());
}

#[test]
fn psync_randwrite() {
    check_randwrite(Backend::Psync, 1);
}

#[test]
fn sync_randwrite() {
    check_randwrite(Backend::Sync, 1);
}

#[test]
fn posixaio_randwrite() {
    check_randwrite(Backend::Posixaio, 1);
    check_randwrite(Backend::Posixaio, 4);
}

#[test]
fn libaio_randwrite() {
    check_randwrite(Backend::Libaio, 1);
    check_randwrite(Backend::Libaio, 8);
}

#[test]
#[cfg_attr(not(have_io_uring), ignore = "needs io_uring")]
fn io_uring_randwrite() {
    check_randwrite(Backend::IoUring, 1);
    check_randwrite(Backend::IoUring, 8);
}

#[test]
fn reads_read_the_laid_out_data() {
    let dir = tempfile::tempdir().unwrap();
    let mut j = job(Rw::RandRead, 2 << 20, 4096);
    j.end_fsync = true; // ignored: a read job never fsyncs
    let f = new_file(dir.path(), 0);
    let live = Live::default();
    let cancel = AtomicBool::new(false);
    layout(&f, &j, &live, &cancel).unwrap();
    assert_eq!(live.layout_done.load(Ordering::Relaxed), 2 << 20);
    let data = std::fs::read(dir.path().join("engine-test.0.0")).unwrap();
    assert_eq!(data.len(), 2 << 20);
    let zeros = data.iter().filter(|&&b| b == 0).count();
    assert!(
        zeros < data.len() / 100,
        "layout wrote data, not zeros: {zeros} {:?}",
        &data[..64]
    );
    assert_ne!(&data[..4096], &data[1 << 20..(1 << 20) + 4096]);
    for b in runnable_backends() {
        j.runtime = Secs(Duration::from_millis(150));
        let m = run(&j, std::slice::from_ref(&f), b, &live, &cancel, None)
            .unwrap_or_else(|e| panic!("{b}: {e}"));
        assert!(m.write.is_none());
        check_dir(m.read.as_ref().unwrap(), 4096, 150, b.is_async());
        assert!(m.end_fsync_ms.is_none(), "{b}: no fsync for a read job");
    }
}

#[test]
fn randrw_splits_by_rwmixread() {
    // One pass of 1024 blocks, so the split does not depend on the machine's speed.
    let mut j = job(Rw::RandRw, 4 << 20, 4096);
    j.rwmixread = 70;
    j.time_based = false;
    j.runtime = Secs(Duration::from_secs(30));
    let m = run_fast(&j, Backend::Psync).unwrap();
    let (r, w) = (m.read.unwrap(), m.write.unwrap());
    assert_eq!(r.ios + w.ios, 1024);
    let share = r.ios as f64 / (r.ios + w.ios) as f64;
    assert!((share - 0.7).abs() < 0.05, "read share {share}");
    assert_eq!(r.runtime_ms, w.runtime_ms);
    assert!(m.end_fsync_ms.is_some());
}

#[test]
fn sequential_rw_keeps_a_position_per_direction() {
    let mut j = job(Rw::Rw, 1 << 20, 4096);
    j.time_based = false;
    j.runtime = Secs(Duration::from_secs(20));
    let t = Instant::now();
    let m = run_fast(&j, Backend::Psync).unwrap();
    assert!(t.elapsed() < Duration::from_secs(10));
    // One pass: size bytes in all, split between the directions.
    let (r, w) = (m.read.unwrap(), m.write.unwrap());
    assert_eq!(r.bytes + w.bytes, 1 << 20);
}

#[test]
fn without_time_based_one_pass_is_done() {
    for rw in [Rw::RandWrite, Rw::Write] {
        let mut j = job(rw, 1 << 20, 4096);
        j.time_based = false;
        j.runtime = Secs(Duration::from_secs(20));
        let m = run_fast(&j, Backend::Posixaio).unwrap();
        let w = m.write.unwrap();
        assert_eq!(w.ios, 256, "{rw}: exactly the N blocks of one pass");
    }
}

#[test]
fn numjobs_two_are_summed() {
    let mut j = job(Rw::RandWrite, 2 << 20, 4096);
    j.numjobs = 2;
    j.fsync = 16;
    let m = run_fast(&j, Backend::Posixaio).unwrap();
    let w = m.write.as_ref().unwrap();
    check_dir(w, 4096, RUNTIME_MS, true);
    let s = m.sync.as_ref().expect("syncs of both jobs");
    // Each job syncs after every 16 of its writes: floor(w_i/16) or one less per job.
    let most = w.ios / 16;
    assert!(
        s.n <= most && s.n + 2 >= most,
        "{} syncs for {} writes",
        s.n,
        w.ios
    );
}

#[test]
fn combine_sums_ios_and_takes_the_longest_runtime() {
    let mk = |ios: u64, us: u64, lat: u64| {
        let mut r = JobResult::default();
        let d = &mut r.dirs[Direction::Write as usize];
        d.ios = ios;
        d.bytes = ios * 4096;
        for _ in 0..ios {
            d.clat.record(lat);
            d.lat.record(lat + 10);
            d.slat.record(10);
        }
        r.elapsed_us = us;
        r.end_fsync = Some(Duration::from_millis(us / 2000));
        r
    };
    let j = job(Rw::RandWrite, 1 << 20, 4096);
    let m = combine(
        &j,
        Backend::Posixaio,
        &[mk(100, 1_000_001, 1000), mk(300, 999_000, 3000)],
    );
    let w = m.write.unwrap();
    assert_eq!(w.ios, 400);
    assert_eq!(w.bytes, 400 * 4096);
    assert_eq!(w.runtime_ms, 1001, "max over jobs, rounded up");
    assert_eq!(w.bw_bytes, (400u64 * 4096 * 1000 / 1001) as f64);
    let clat = w.clat.unwrap();
    assert_eq!(clat.n, 400);
    assert!((clat.mean_ns - 2500.0).abs() < 1e-6);
    assert_eq!(m.end_fsync_ms, Some(500.0));
    assert!(m.read.is_none());
}

/// fsync=N and fdatasync=N: a timed sync after every Nth write. One pass over 66 blocks
/// rather than a time-based run, so that the count is exact on a loaded machine too: a
/// deadline can fall between the Nth write and its sync, and a machine busy enough may not
/// reach N writes before it. 66 is no multiple of 8 or 4, so no sync falls due as the pass
/// ends (the end fsync covers the last writes).
#[test]
fn fsync_every_n_gives_sync_latencies() {
    const BLOCKS: u64 = 66;
    for b in runnable_backends() {
        for (fsync, fdatasync) in [(8, 0), (0, 4)] {
            let mut j = job(Rw::RandWrite, BLOCKS * 4096, 4096);
            j.time_based = false;
            // A bound the pass never reaches.
            j.runtime = Secs(Duration::from_secs(3600));
            j.fsync = fsync;
            j.fdatasync = fdatasync;
            let m = run_tmp(&j, b).unwrap();
            let w = m.write.unwrap();
            assert_eq!(w.ios, BLOCKS, "{b}: one pass");
            let s = m.sync.expect("sync histogram");
            let every = u64::from(fsync.max(fdatasync));
            assert_eq!(
                s.n,
                BLOCKS / every,
                "{b}: fsync={fsync} fdatasync={fdatasync}: {} syncs for {} writes",
                s.n,
                w.ios
            );
        }
    }
}

#[test]
fn sync_and_dsync_open_flags_work() {
    for mode in [SyncMode::Sync, SyncMode::Dsync] {
        let mut j = job(Rw::RandWrite, 1 << 20, 4096);
        j.sync = mode;
        j.runtime = Secs(Duration::from_millis(100));
        let m = run_tmp(&j, Backend::Psync).unwrap();
        check_dir(m.write.as_ref().unwrap(), 4096, 100, false);
    }
}

fn is_tmpfs(p: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(p.as_os_str().as_bytes()).unwrap();
    let mut st: libc::statfs = unsafe { std::mem::zeroed() };
    unsafe { libc::statfs(c.as_ptr(), &mut st) == 0 && st.f_type as i64 == 0x0102_1994 }
}

#[test]
fn direct_io_on_tmpfs_is_unsupported_or_works() {
    let shm = Path::new("/dev/shm");
    if !is_tmpfs(shm) {
        eprintln!("skipped: /dev/shm is not a tmpfs here");
        return;
    }
    let dir = tempfile::tempdir_in(shm).unwrap();
    let mut j = job(Rw::RandWrite, 1 << 20, 4096);
    j.direct = true;
    j.runtime = Secs(Duration::from_millis(100));
    match run_in(dir.path(), &j, Backend::Psync) {
        Err(EngineError::Unsupported(why)) => {
            assert!(
                why.starts_with("direct I/O (O_DIRECT) is not supported"),
                "{why}"
            );
        }
        Ok(m) => {
            // Linux ≥ 6.6 gives tmpfs O_DIRECT; then the run must simply work.
            eprintln!("skipped: this kernel's tmpfs accepts O_DIRECT (Linux >= 6.6)");
            check_dir(m.write.as_ref().unwrap(), 4096, 100, false);
        }
        Err(e) => panic!("unexpected: {e}"),
    }
}

#[test]
fn the_direct_io_sentence_is_clear() {
    let e = sys::direct_unsupported("open", libc::EINVAL).to_string();
    assert!(e.starts_with("direct I/O (O_DIRECT) is not supported by this filesystem (open: "));
    assert!(e.contains("direct=0"));
}

#[test]
fn direct_io_on_the_temp_dir() {
    // The usual temp dir is on a real filesystem here; O_DIRECT with aligned buffers works.
    let mut j = job(Rw::RandWrite, 1 << 20, 4096);
    j.direct = true;
    j.runtime = Secs(Duration::from_millis(100));
    for b in runnable_backends() {
        j.iodepth = if b == Backend::Psync { 1 } else { 4 };
        match run_tmp(&j, b) {
            Ok(m) => check_dir(m.write.as_ref().unwrap(), 4096, 100, b.is_async()),
            Err(EngineError::Unsupported(why)) => {
                eprintln!("skipped: {b}: the temp dir refuses O_DIRECT: {why}");
                return;
            }
            Err(e) => panic!("{b}: {e}"),
        }
    }
}

#[test]
fn cancel_interrupts_quickly() {
    for b in [Backend::Psync, Backend::Posixaio] {
        let dir = tempfile::tempdir().unwrap();
        let mut j = job(Rw::RandWrite, 4 << 20, 4096);
        j.runtime = Secs(Duration::from_secs(30));
        let f = new_file(dir.path(), 0);
        let live = Live::default();
        let cancel = AtomicBool::new(false);
        layout(&f, &j, &live, &cancel).unwrap();
        let t = Instant::now();
        let r = std::thread::scope(|s| {
            s.spawn(|| {
                std::thread::sleep(Duration::from_millis(100));
                cancel.store(true, Ordering::Relaxed);
            });
            run(&j, std::slice::from_ref(&f), b, &live, &cancel, None)
        });
        assert!(matches!(r, Err(EngineError::Interrupted)), "{b}: {r:?}");
        assert!(
            t.elapsed() < Duration::from_secs(3),
            "{b}: {:?}",
            t.elapsed()
        );
    }
}

#[test]
fn cancel_stops_layout() {
    let dir = tempfile::tempdir().unwrap();
    let j = job(Rw::Read, 8 << 20, 4096);
    let f = new_file(dir.path(), 0);
    let live = Live::default();
    let cancel = AtomicBool::new(true);
    assert!(matches!(
        layout(&f, &j, &live, &cancel),
        Err(EngineError::Interrupted)
    ));
}

#[test]
fn wrong_number_of_files_is_an_error() {
    let mut j = job(Rw::RandWrite, 1 << 20, 4096);
    j.numjobs = 2;
    let dir = tempfile::tempdir().unwrap();
    let f = new_file(dir.path(), 0);
    let r = run(
        &j,
        std::slice::from_ref(&f),
        Backend::Psync,
        &Live::default(),
        &AtomicBool::new(false),
        None,
    );
    assert!(matches!(r, Err(EngineError::Unsupported(_))));
}

/// A small tmpfs mounted for one test, unmounted when dropped.
struct SmallTmpfs(tempfile::TempDir);

impl SmallTmpfs {
    fn mount(size: &str) -> Result<SmallTmpfs, String> {
        if !crate::syscalls::is_root() {
            return Err("not root".into());
        }
        let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
        let c = |s: &str| std::ffi::CString::new(s).unwrap();
        let target = c(dir.path().to_str().unwrap());
        let opts = c(&format!("size={size}"));
        let r = unsafe {
            libc::mount(
                c("tmpfs").as_ptr(),
                target.as_ptr(),
                c("tmpfs").as_ptr(),
                0,
                opts.as_ptr().cast(),
            )
        };
        if r != 0 {
            return Err(format!("mount: {}", std::io::Error::last_os_error()));
        }
        Ok(SmallTmpfs(dir))
    }
    fn path(&self) -> &Path {
        self.0.path()
    }
}

impl Drop for SmallTmpfs {
    fn drop(&mut self) {
        let c = std::ffi::CString::new(self.0.path().to_str().unwrap()).unwrap();
        unsafe { libc::umount2(c.as_ptr(), libc::MNT_DETACH) };
    }
}

#[test]
fn a_full_disk_is_enospc() {
    let fs = match SmallTmpfs::mount("8m") {
        Ok(fs) => fs,
        Err(why) => {
            eprintln!("skipped: cannot mount a small tmpfs ({why})");
            return;
        }
    };
    let live = Live::default();
    let cancel = AtomicBool::new(false);
    // Layout of a file larger than the filesystem: fallocate says ENOSPC, for both layouts.
    for rw in [Rw::RandWrite, Rw::RandRead] {
        let j = job(rw, 16 << 20, 4096);
        let f = File::options()
            .read(true)
            .write(true)
            .create_new(true)
            .open(fs.path().join(format!("big-{rw}")))
            .unwrap();
        let e = layout(&f, &j, &live, &cancel).unwrap_err();
        assert_eq!(e.raw_os_error(), Some(libc::ENOSPC), "{rw}: {e}");
        assert!(e.to_string().starts_with("fallocate"), "{e}");
        drop(f);
        std::fs::remove_file(fs.path().join(format!("big-{rw}"))).unwrap();
    }

    // A write that finds no space during the run: lay out, punch the blocks out, fill the
    // filesystem with something else, then run (iodepth 4: several writes fail in one batch,
    // and the drain after the first error must still end).
    let mut j = job(Rw::RandWrite, 2 << 20, 4096);
    j.iodepth = 4;
    let f = File::options()
        .read(true)
        .write(true)
        .create_new(true)
        .open(fs.path().join("test"))
        .unwrap();
    layout(&f, &j, &live, &cancel).unwrap();
    let punch = libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE;
    assert_eq!(
        unsafe { libc::fallocate(f.as_raw_fd(), punch, 0, 2 << 20) },
        0
    );
    let filler = File::create(fs.path().join("filler")).unwrap();
    let mut len = 0u64;
    while unsafe { libc::fallocate(filler.as_raw_fd(), 0, len as i64, 1 << 16) } == 0 {
        len += 1 << 16;
    }
    for b in runnable_backends() {
        let e = run(&j, std::slice::from_ref(&f), b, &live, &cancel, None).unwrap_err();
        assert_eq!(e.raw_os_error(), Some(libc::ENOSPC), "{b}: {e}");
        assert!(e.to_string().starts_with("write at offset "), "{b}: {e}");
    }
}

/// A manual benchmark against fio, not run by default:
/// `IOPSCHECK_BENCH_DIR=/dev/shm IOPSCHECK_BENCH=posixaio,randwrite,256m,5,1 \
///  cargo test --release --lib engine::tests::bench -- --ignored --nocapture`
/// (engine, rw, size, runtime seconds, iodepth[, numjobs]). Prints fio-like figures.
#[test]
#[ignore]
fn bench() {
    let dir = std::env::var("IOPSCHECK_BENCH_DIR").unwrap_or_else(|_| "/dev/shm".into());
    let spec =
        std::env::var("IOPSCHECK_BENCH").unwrap_or_else(|_| "posixaio,randwrite,256m,5,1".into());
    let p: Vec<&str> = spec.split(',').collect();
    let backend = Backend::for_engine(&IoEngine::from(p[0])).expect("engine");
    let rw: Rw = p[1].parse().unwrap();
    let size = crate::units::parse_size(p[2]).unwrap();
    let mut j = job(rw, size, 4096);
    j.runtime = Secs(Duration::from_secs_f64(p[3].parse().unwrap()));
    j.iodepth = p[4].parse().unwrap();
    j.numjobs = p.get(5).map_or(1, |v| v.parse().unwrap());
    let d = tempfile::tempdir_in(dir).unwrap();
    let live = Live::default();
    let cancel = AtomicBool::new(false);
    let files: Vec<File> = (0..j.numjobs as usize)
        .map(|i| new_file(d.path(), i))
        .collect();
    let t = Instant::now();
    for f in &files {
        layout(f, &j, &live, &cancel).unwrap();
    }
    eprintln!("layout {:?}", t.elapsed());
    let ru0 = sys::cpu_times();
    let m = run(&j, &files, backend, &live, &cancel, None).unwrap();
    let ru1 = sys::cpu_times();
    for (name, d) in [("read", &m.read), ("write", &m.write)] {
        if let Some(d) = d {
            eprintln!(
                "{name}: ios={} IOPS={:.0} bw={:.1}MiB/s runtime={}ms",
                d.ios,
                d.iops,
                d.bw_bytes / 1048576.0,
                d.runtime_ms
            );
            for (k, l) in [("slat", &d.slat), ("clat", &d.clat), ("lat", &d.lat)] {
                if let Some(l) = l {
                    eprintln!(
                        "  {k}: avg={:.0}ns min={} max={} p50={} p99={}",
                        l.mean_ns,
                        l.min_ns,
                        l.max_ns,
                        l.percentile(50.0).unwrap(),
                        l.percentile(99.0).unwrap()
                    );
                }
            }
            let cpu = (ru1.0 - ru0.0 + ru1.1 - ru0.1).as_nanos() as f64;
            eprintln!("  cpu per I/O: {:.0} ns", cpu / d.ios as f64);
        }
    }
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    eprintln!(
        "end_fsync={:?}ms usr={:.1}% sys={:.1}% sync={:?} maxrss={}KiB",
        m.end_fsync_ms,
        m.cpu_usr_pct.unwrap_or(0.0),
        m.cpu_sys_pct.unwrap_or(0.0),
        m.sync.as_ref().map(|s| s.n),
        ru.ru_maxrss
    );
}

/// The series of a run: one count per 500 ms interval up to the drain, the last one partial;
/// together they are the run's I/O count, and their sample statistics are fio's.
fn check_series(m: &Measurement, dir: &str, jobs: usize) {
    let d = if dir == "read" { &m.read } else { &m.write };
    let d = d.as_ref().unwrap();
    let s = m.series.as_ref().expect("a native run has a series");
    let c = s.counts(dir);
    assert_eq!(s.interval_ms, 500);
    assert_eq!(
        c.iter().map(|&n| n as u64).sum::<u64>(),
        d.ios,
        "{dir}: the intervals add up to the run's I/Os"
    );
    // The intervals cover the time from the first I/O to the drain: the run's time without
    // its end fsync (runtime_ms is rounded up to the ms). In a group the runtime is the
    // longest job's and the fsync the longest one, not always the same job's (one thread
    // held up by the scheduler drains later, another's fsync takes longer): the series of
    // the job that drained last then lies between the two.
    let fsync = m.end_fsync_ms.unwrap_or(0.0);
    let covered = (c.len() as f64 - 1.0) * 500.0 + s.last_ms as f64;
    let timed = d.runtime_ms as f64 - fsync;
    let (low, high) = if jobs == 1 {
        (timed - 2.0, timed + 2.0)
    } else {
        (timed - 2.0, d.runtime_ms as f64 + 2.0)
    };
    assert!(
        (low..=high).contains(&covered),
        "{dir}: {} intervals and {} ms cover {covered} ms of a {timed} ms run",
        c.len(),
        s.last_ms
    );
    assert!(s.last_ms <= 500);
    let full = if s.last_ms == 500 {
        c.len()
    } else {
        c.len() - 1
    };
    match &d.samples {
        Some(x) => assert_eq!(x.samples as usize, full, "{dir}: samples"),
        None => assert_eq!(full, 0, "{dir}: sample statistics of {full} full intervals"),
    }
    assert_eq!(
        s.end_fsync_ms, m.end_fsync_ms,
        "the end fsync is its own phase"
    );
}

#[test]
fn a_run_has_one_sample_per_half_second_adding_up_to_its_ios() {
    let mut j = job(Rw::RandWrite, 4 << 20, 4096);
    j.runtime = Secs(Duration::from_millis(1200));
    let m = run_fast(&j, Backend::Psync).unwrap();
    check_series(&m, "write", 1);
    let s = m.series.as_ref().unwrap();
    assert!(s.write.len() >= 3, "1.2 s: two full intervals and a part");
    assert!(s.read.is_empty(), "a write job has no read series");
    let x = m.write.as_ref().unwrap().samples.as_ref().unwrap();
    assert!(x.min <= x.mean && x.mean <= x.max && x.min > 0.0);

    // Two jobs: their intervals are added; a mix has both directions.
    let mut j = job(Rw::RandRw, 2 << 20, 4096);
    j.numjobs = 2;
    j.iodepth = 4;
    j.runtime = Secs(Duration::from_millis(700));
    let m = run_fast(&j, Backend::Posixaio).unwrap();
    check_series(&m, "write", 2);
    check_series(&m, "read", 2);
}

#[test]
fn a_one_pass_run_stops_its_series_where_the_data_ends() {
    let mut j = job(Rw::Write, 1 << 20, 4096);
    j.time_based = false;
    j.runtime = Secs(Duration::from_secs(20));
    let m = run_tmp(&j, Backend::Psync).unwrap();
    check_series(&m, "write", 1);
}

/// A back end that counts what each reap returned, around a real one.
struct CountingPath<B> {
    inner: B,
    /// (min asked, completions returned) of every reap.
    reaps: Vec<(usize, usize)>,
}

impl<B: timed::IoPath> timed::IoPath for CountingPath<B> {
    const ASYNC: bool = B::ASYNC;
    fn submit(&mut self, req: &timed::Req) -> std::io::Result<Option<i64>> {
        self.inner.submit(req)
    }
    fn reap(&mut self, min: usize, max: usize, out: &mut Vec<(u32, i64)>) -> std::io::Result<()> {
        let before = out.len();
        let r = self.inner.reap(min, max, out);
        self.reaps.push((min, out.len() - before));
        r
    }
    fn sync(&mut self, kind: timed::SyncKind) -> std::io::Result<()> {
        self.inner.sync(kind)
    }
}

/// What a counted run measured, and each reap's (min asked, completions returned).
type CountedRun = (timed::JobResult, Vec<(usize, usize)>);

/// Runs `j` through the timed loop on a laid-out file with back end `make(fd)`, counting reaps.
fn counted_run<B: timed::IoPath>(
    j: &Job,
    make: impl FnOnce(std::os::fd::RawFd) -> B,
) -> CountedRun {
    let dir = fast_tempdir();
    let f = new_file(dir.path(), 0);
    let (live, cancel, abort) = (
        Live::default(),
        AtomicBool::new(false),
        AtomicBool::new(false),
    );
    layout(&f, j, &live, &cancel).unwrap();
    let fd = sys::reopen(&f, sys::job_open_flags(j)).unwrap();
    let mut be = CountingPath {
        inner: make(fd.as_raw_fd()),
        reaps: Vec::new(),
    };
    let ctx = JobContext {
        job: j,
        index: 0,
        fd: fd.as_raw_fd(),
        live: &live,
        cancel: &cancel,
        abort: &abort,
    };
    let res = timed::run_job(&ctx, &mut be).unwrap();
    (res, be.reaps)
}

/// fio reaps one completion per getevents call while the queue is full
/// (iodepth_batch_complete_max = iodepth_batch_complete_min = 1), then submits one I/O; the
/// drain at the end takes the rest in one call. Reaping every finished I/O at once instead
/// kept more I/Os at the device and stamped completions earlier: 1.37× fio's IOPS at 0.6× its
/// clat with libaio at depth 64. On a buffered file every libaio write completes inside
/// io_submit, so a full queue of 8 is 8 finished I/Os waiting: only the cap keeps it to one.
#[test]
fn async_back_ends_reap_one_completion_at_a_time_as_fio() {
    let mut j = job(Rw::RandRw, 4 << 20, 4096);
    j.iodepth = 8;
    j.runtime = Secs(Duration::from_millis(100));
    j.end_fsync = false;
    let mut cases: Vec<(&str, CountedRun)> = vec![(
        "libaio",
        counted_run(&j, |fd| libaio::Libaio::new(fd, 8).unwrap()),
    )];
    if uring_ok() {
        cases.push((
            "io_uring",
            counted_run(&j, |fd| uring::Uring::new(fd, 8).unwrap()),
        ));
    }
    for (name, (res, reaps)) in cases {
        let ios = res.dirs[0].ios + res.dirs[1].ios;
        let (running, drain) = reaps.split_at(reaps.len() - 1);
        assert!(running.len() > 100, "{name}: only {} reaps", running.len());
        for &(min, got) in running {
            assert_eq!(
                (min, got),
                (1, 1),
                "{name}: a reap while the queue was full"
            );
        }
        let (min, got) = drain[0];
        assert!(
            min > 1 && got == min,
            "{name}: the drain takes the rest at once: {min} {got}"
        );
        assert_eq!(reaps.iter().map(|r| r.1 as u64).sum::<u64>(), ios, "{name}");
    }
}

/// An ext4 on a loop device over an image in /dev/shm, mounted in a temp dir, and a cgroup v1
/// blkio group limiting this thread's writes to it. Everything is undone on drop.
struct Throttled {
    mnt: tempfile::TempDir,
    group: std::path::PathBuf,
}

const BLKIO: &str = "/sys/fs/cgroup/blkio";

impl Throttled {
    fn new(image_dir: &Path) -> Result<Throttled, String> {
        if !crate::syscalls::is_root() {
            return Err("needs root (a loop device and a blkio group)".into());
        }
        if !Path::new(BLKIO)
            .join("blkio.throttle.write_iops_device")
            .exists()
        {
            return Err(format!("no cgroup v1 blkio throttle at {BLKIO}"));
        }
        let img = image_dir.join("throttled.img");
        File::create(&img)
            .and_then(|f| f.set_len(64 << 20))
            .map_err(|e| e.to_string())?;
        let ok = |c: &mut std::process::Command| c.status().is_ok_and(|s| s.success());
        if !ok(std::process::Command::new("mkfs.ext4")
            .args(["-q", "-F"])
            .arg(&img))
        {
            return Err("mkfs.ext4 (e2fsprogs) failed or is not installed".into());
        }
        let mnt = tempfile::tempdir().map_err(|e| e.to_string())?;
        if !ok(std::process::Command::new("mount")
            .args(["-o", "loop"])
            .arg(&img)
            .arg(mnt.path()))
        {
            return Err("mount -o loop failed (no loop devices?)".into());
        }
        let group = Path::new(BLKIO).join(format!("iopscheck-test-{}", std::process::id()));
        let t = Throttled { mnt, group };
        std::fs::create_dir(&t.group).map_err(|e| e.to_string())?;
        // This thread only: the engine runs a single job on its caller's thread.
        // SAFETY: gettid has no preconditions.
        let tid = unsafe { libc::gettid() };
        std::fs::write(t.group.join("tasks"), tid.to_string()).map_err(|e| e.to_string())?;
        Ok(t)
    }

    /// Sets the write IOPS limit (which opens a new throttle slice, as any limit change does).
    fn limit(&self, iops: u32) {
        use std::os::unix::fs::MetadataExt;
        let dev = std::fs::metadata(self.mnt.path()).unwrap().dev();
        let line = format!("{}:{} {iops}", libc::major(dev), libc::minor(dev));
        std::fs::write(self.group.join("blkio.throttle.write_iops_device"), line).unwrap();
    }
}

impl Drop for Throttled {
    fn drop(&mut self) {
        // SAFETY: gettid has no preconditions.
        let tid = unsafe { libc::gettid() };
        let _ = std::fs::write(Path::new(BLKIO).join("tasks"), tid.to_string());
        let _ = std::fs::remove_dir(&self.group);
        // -d: the loop device goes with the mount.
        let _ = std::process::Command::new("umount")
            .arg("-d")
            .arg(self.mnt.path())
            .status();
    }
}

#[test]
fn a_throttled_device_gives_each_run_its_rate_from_the_first_io_not_a_slice_more() {
    // fio's first I/O never comes within 100 ms of its layout or of a previous run
    // (IDLE_BEFORE_RUN); under blk-throttle a run that starts sooner inherits the slice that
    // the limit change or the previous run opened, and counts up to one slice's worth
    // (limit x 100 ms) of I/Os more than the device's rate: 550 instead of 500 here.
    let shm = tempfile::tempdir_in("/dev/shm").or_else(|_| tempfile::tempdir());
    let shm = shm.unwrap();
    let t = match Throttled::new(shm.path()) {
        Ok(t) => t,
        Err(why) => return eprintln!("skipped: {why}"),
    };
    let mut j = job(Rw::RandWrite, 16 << 20, 4096);
    j.direct = true;
    j.end_fsync = false;
    j.runtime = Secs(Duration::from_secs(1));
    let f = new_file(t.mnt.path(), 0);
    let live = Live::default();
    let cancel = AtomicBool::new(false);
    layout(&f, &j, &live, &cancel).unwrap();
    const LIMIT: u64 = 500;
    // The limit is set just before the first run, and each run follows the one before at
    // once, as the runs of one check do.
    t.limit(LIMIT as u32);
    for run_no in 1..=3 {
        let m = run(
            &j,
            std::slice::from_ref(&f),
            Backend::Psync,
            &live,
            &cancel,
            None,
        )
        .unwrap();
        let w = m.write.unwrap();
        let series = m.series.unwrap().write;
        // At most the rate from the first I/O: LIMIT / 2 by the end of each 500 ms interval,
        // plus the one I/O that opens the slice (fio: 1001 writes in 2 s at 500). A run held
        // back for a moment may catch up later, never get ahead.
        let mut done = 0u64;
        for (i, &n) in series.iter().enumerate() {
            done += u64::from(n);
            let allowed = LIMIT * (i as u64 + 1) / 2 + 2;
            assert!(
                done <= allowed,
                "run {run_no}: {series:?} writes per 500 ms ({} in {} ms) under a {LIMIT} IOPS \
                 throttle: {done} by {} ms, more than its rate allows ({allowed}); the run \
                 started inside a slice opened before it",
                w.ios,
                w.runtime_ms,
                (i + 1) * 500
            );
        }
        // The throttle and the run both worked (a loaded machine may fall short of the rate).
        assert!(w.ios >= LIMIT / 4, "run {run_no}: only {} writes", w.ios);
    }
    drop(f);
}

#[test]
fn the_disks_own_series_runs_beside_the_jobs_on_the_same_grid() {
    // Direct writes on the disk under the temp dir (none on tmpfs: then nothing to sample).
    let dir = tempfile::tempdir().expect("tempdir");
    let Some(disk) = crate::measure::disk::disks_under(dir.path())
        .into_iter()
        .next()
    else {
        eprintln!("skipped: the temp dir is not on a block device");
        return;
    };
    let mut j = job(Rw::RandWrite, 1 << 20, 4096);
    j.direct = true;
    j.runtime = Secs(Duration::from_millis(1200));
    j.numjobs = 2;
    let live = Live::default();
    let cancel = AtomicBool::new(false);
    let files: Vec<File> = (0..2).map(|i| new_file(dir.path(), i)).collect();
    for f in &files {
        layout(f, &j, &live, &cancel).unwrap();
    }
    let m = match run(&j, &files, Backend::Psync, &live, &cancel, Some(&disk)) {
        Err(EngineError::Unsupported(why)) => {
            eprintln!("skipped: {why}");
            return;
        }
        r => r.unwrap(),
    };
    let app = m.series.as_ref().unwrap();
    let dev = m.device.as_ref().expect("the disk's series");
    assert_eq!(dev.disk, disk);
    assert_eq!(dev.interval_ms, app.interval_ms);
    // It starts with the jobs and ends after their end fsync, so it has the application's
    // intervals (one fewer at most, where the sampler's first reading came a moment late).
    assert!(dev.write.len() + 1 >= app.write.len(), "{dev:?} {app:?}");
    for v in [&dev.read, &dev.kib, &dev.busy_ms] {
        assert_eq!(v.len(), dev.write.len());
    }
    assert_eq!(dev.dirty_kib.len(), dev.write.len());
    // Every direct write reached the disk (others' I/O on a shared disk only adds).
    let written: u32 = dev.write.iter().sum();
    assert!(
        written as u64 >= m.write.as_ref().unwrap().ios,
        "{written} < {:?}",
        m.write
    );
    assert!(dev.kib.iter().sum::<u32>() > 0, "{dev:?}");
    assert!(dev.dirty_threshold_kib.is_some(), "{dev:?}");
}

#[path = "../../tests/common/burst.rs"]
mod burst;

/// Runs `j` (libaio, 32 MiB, 6 s) on the emulated disk with `bucket`, sampling the
/// loop device, and analyses the run.
#[cfg(all(have_root, have_fuse))]
fn on_burst_disk(
    bucket: burst::Bucket,
    j: &Job,
) -> (
    burst::BurstDisk,
    Measurement,
    crate::measure::changepoint::Finding,
) {
    let disk = burst::BurstDisk::up(bucket, Some(4 << 20));
    let dir = tempfile::tempdir_in(&disk.mount).unwrap();
    let live = Live::default();
    let cancel = AtomicBool::new(false);
    let f = new_file(dir.path(), 0);
    layout(&f, j, &live, &cancel).unwrap();
    disk.refill();
    let m = run(j, &[f], Backend::Libaio, &live, &cancel, Some(&disk.disk)).unwrap();
    let found = crate::measure::changepoint::of_run(&m, !j.direct);
    (disk, m, found)
}

#[cfg(all(have_root, have_fuse))]
fn burst_job(direct: bool) -> Job {
    let mut j = job(Rw::RandWrite, 32 << 20, 4096);
    j.direct = direct;
    j.ioengine = IoEngine::Libaio;
    // A deep queue keeps the disk fed through the pauses a loaded machine gives the test.
    j.iodepth = 64;
    j.runtime = Secs(Duration::from_secs(6));
    j
}

#[test]
#[cfg_attr(
    not(all(have_root, have_fuse)),
    ignore = "needs root and FUSE (libfuse3-dev)"
)]
fn a_bucket_that_runs_dry_inside_the_run_is_found_at_its_time_level_and_size() {
    #[cfg(all(have_root, have_fuse))]
    'direct: for direct in [true, false] {
        let bucket = burst::Bucket {
            burst: 1000,
            baseline: 250,
            size: 2250,
        };
        // A run on a loaded machine in which the emulated disk itself stalled, or its burst
        // dipped, tests nothing (`kept_busy_throughout`): it is said and run again, up to
        // three times, then skipped with the reason (the machine cannot give the disk this
        // test needs).
        let mut tries = 0;
        let (disk, m, found) = loop {
            tries += 1;
            let (disk, m, found) = on_burst_disk(bucket, &burst_job(direct));
            match disk.kept_busy_throughout() {
                Ok(()) => break (disk, m, found),
                Err(why) if tries < 3 => {
                    eprintln!("direct={direct}: the emulated disk stalled ({why}); again")
                }
                Err(why) => {
                    eprintln!(
                        "skipped: direct={direct}: the emulated disk stalled in 3 runs, the last: {why}; the machine is too loaded to test on it"
                    );
                    continue 'direct;
                }
            }
        };
        let dev = m.device.as_ref().unwrap();
        let s = found
            .exhausted()
            .unwrap_or_else(|| panic!("direct={direct}: {found:?} {dev:?}"));
        let dry = disk.seconds_to_dry().expect("the bucket ran dry");
        assert!((s.at_s - dry).abs() <= 0.5, "{s:?} dry at {dry} {dev:?}");
        let base = bucket.baseline as f64;
        assert!((s.after - base).abs() <= 0.1 * base, "{s:?} {dev:?}");
        let size = bucket.size as f64;
        assert!((s.bucket() - size).abs() <= 0.25 * size, "{s:?} {dev:?}");
    }
}

#[test]
#[cfg_attr(
    not(all(have_root, have_fuse)),
    ignore = "needs root and FUSE (libfuse3-dev)"
)]
fn a_bucket_that_never_runs_dry_shows_no_step() {
    #[cfg(all(have_root, have_fuse))]
    {
        let bucket = burst::Bucket {
            burst: 1000,
            baseline: 250,
            size: 100_000,
        };
        let (disk, m, found) = on_burst_disk(bucket, &burst_job(true));
        assert_eq!(disk.seconds_to_dry(), None);
        assert!(
            found.exhausted().is_none(),
            "{found:?} {:?}",
            m.device.as_ref().unwrap()
        );
    }
}
