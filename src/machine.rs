//! The machine's context for a record: host name, kernel, memory, and the filesystem and
//! device under a directory (from /proc/self/mountinfo and /sys/dev/block). Best effort:
//! anything unreadable is left out, never an error.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use crate::history::Target;

pub mod ram;

/// This machine's host name.
pub fn hostname() -> String {
    crate::syscalls::hostname()
        .map(|h| h.trim().to_string())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "localhost".to_string())
}

/// The host of an import without `--host`.
pub const HOST_NOT_STATED: &str = "host not stated (use --host)";

/// The environment variable that names this node, for machines whose host name is not the
/// node's (a Kubernetes pod: the manifests fill it from `spec.nodeName`).
pub const HOST_ENV: &str = "IOPSCHECK_HOST";

/// The node name given with `--host` or `$IOPSCHECK_HOST`, checked: `Ok(None)` when neither
/// names one; an error that names the flag or the variable when the name cannot be a host's.
pub fn host_from(flag: Option<&str>) -> Result<Option<String>, String> {
    if let Some(h) = flag {
        return check_host(h)
            .map(|h| Some(h.to_string()))
            .map_err(|e| format!("--host: {e}"));
    }
    match std::env::var(HOST_ENV) {
        Ok(v) => check_host(&v)
            .map(|h| Some(h.to_string()))
            .map_err(|e| format!("{HOST_ENV}: {e}")),
        Err(std::env::VarError::NotPresent) => Ok(None),
        Err(std::env::VarError::NotUnicode(_)) => Err(format!("{HOST_ENV}: not valid UTF-8")),
    }
}

/// A control character, or an invisible one that changes how the text around it is shown
/// (a bidi override, a zero-width space: [`crate::printable::is_hidden`]).
fn unprintable(c: char) -> bool {
    c.is_control() || crate::printable::is_hidden(c)
}

/// A name looked for in records (`report --host`, `bundle --host`, `fleet --expect`): not
/// empty, printable; of any length, as a record of another tool may hold.
pub fn check_name(h: &str) -> Result<&str, String> {
    let t = h.trim();
    if t.is_empty() {
        return Err("empty; give the node's name".into());
    }
    if t.chars().any(unprintable) {
        return Err(format!(
            "'{}' is not a host name (control or invisible format characters)",
            t.escape_debug()
        ));
    }
    Ok(t)
}

/// A host name as records carry it: not empty, one line, printable.
pub fn check_host(h: &str) -> Result<&str, String> {
    let t = h.trim();
    if t.is_empty() {
        return Err("empty; give the node's name".into());
    }
    if t.chars().any(unprintable) || t.len() > 253 {
        return Err(format!(
            "'{}' is not a host name (control or invisible format characters, or longer than 253 bytes)",
            t.escape_debug()
        ));
    }
    Ok(t)
}

/// The running kernel's release, e.g. "6.1.0-18-amd64".
pub fn kernel() -> Option<String> {
    std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .ok()
        .map(|s| s.trim().to_string())
}

/// Total RAM in bytes (sysinfo).
pub fn memory_bytes() -> Option<u64> {
    let mut s = sysinfo::System::new();
    s.refresh_memory_specifics(sysinfo::MemoryRefreshKind::nothing().with_ram());
    Some(s.total_memory()).filter(|&b| b > 0)
}

/// The machine's logical CPUs, as its vCPUs are counted (sysinfo); not the ones this process
/// may be limited to.
pub fn cpus() -> Option<u32> {
    let mut s = sysinfo::System::new();
    s.refresh_cpu_list(sysinfo::CpuRefreshKind::nothing());
    u32::try_from(s.cpus().len()).ok().filter(|&n| n > 0)
}

/// The operating system by name and version ("Debian GNU/Linux 13"), from sysinfo.
pub fn os() -> Option<String> {
    sysinfo::System::long_os_version().filter(|s| !s.trim().is_empty())
}

/// Size of the filesystem holding `dir`, in bytes: the target's capacity.
pub fn capacity_bytes(dir: &Path) -> Option<u64> {
    let s = crate::syscalls::statvfs(dir).ok()?;
    Some(s.f_blocks as u64 * s.f_frsize as u64).filter(|&b| b > 0)
}

/// One line of /proc/self/mountinfo.
#[derive(Debug, Clone, PartialEq)]
pub struct Mount {
    pub dev: (u32, u32),
    pub mount_point: PathBuf,
    pub options: String,
    pub fstype: String,
    pub source: String,
    /// The filesystem's own options (after the fstype and source): `discard` is one.
    pub super_options: String,
}

/// Parses /proc/self/mountinfo: "36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw".
pub fn parse_mountinfo(text: &str) -> Vec<Mount> {
    text.lines()
        .filter_map(|line| {
            let (left, right) = line.split_once(" - ")?;
            let f: Vec<&str> = left.split(' ').collect();
            let r: Vec<&str> = right.split(' ').collect();
            if f.len() < 6 || r.len() < 2 {
                return None;
            }
            let (maj, min) = f[2].split_once(':')?;
            Some(Mount {
                dev: (maj.parse().ok()?, min.parse().ok()?),
                mount_point: PathBuf::from(unescape(f[4])),
                options: f[5].to_string(),
                fstype: r[0].to_string(),
                source: unescape(r[1]),
                super_options: r.get(2).map(|o| o.to_string()).unwrap_or_default(),
            })
        })
        .collect()
}

/// mountinfo escapes space, tab, newline and backslash as octal (\040).
fn unescape(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\'
            && i + 3 < b.len()
            && b[i + 1..i + 4].iter().all(|c| (b'0'..=b'7').contains(c))
        {
            let v = (b[i + 1] - b'0') * 64 + (b[i + 2] - b'0') * 8 + (b[i + 3] - b'0');
            out.push(v);
            i += 4;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn major_minor(dev: u64) -> (u32, u32) {
    (libc::major(dev), libc::minor(dev))
}

/// The mount holding `dir` (canonical): the longest mount point that prefixes it, preferring
/// entries with the same device number.
pub fn mount_of(dir: &Path) -> Option<Mount> {
    let text = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    let mounts = parse_mountinfo(&text);
    let dev = std::fs::metadata(dir).ok().map(|m| major_minor(m.dev()));
    let candidates = mounts.iter().filter(|m| dir.starts_with(&m.mount_point));
    let best = |same_dev: bool| {
        candidates
            .clone()
            .filter(|m| !same_dev || Some(m.dev) == dev)
            .max_by_key(|m| m.mount_point.as_os_str().len())
            .cloned()
    };
    best(true).or_else(|| best(false))
}

/// The mount point holding `dir`, when its filesystem is mounted with `discard` (or
/// `discard=sync`): freeing a large file's blocks there trims every extent, which can take
/// minutes. Asynchronous discard (`discard=async`) frees at once and is not counted.
pub fn discards(dir: &Path) -> Option<PathBuf> {
    let m = mount_of(dir)?;
    m.super_options
        .split(',')
        .chain(m.options.split(','))
        .any(|o| o == "discard" || o == "discard=sync")
        .then_some(m.mount_point)
}

fn read_trim(p: impl AsRef<Path>) -> Option<String> {
    std::fs::read_to_string(p)
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
}

/// The block device behind a device number: name, model, rotational, scheduler, write cache.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Device {
    pub name: Option<String>,
    pub model: Option<String>,
    pub rotational: Option<bool>,
    pub scheduler: Option<String>,
    pub write_cache: Option<String>,
}

pub fn device_of(dev: (u32, u32)) -> Device {
    let link = PathBuf::from(format!("/sys/dev/block/{}:{}", dev.0, dev.1));
    let Ok(real) = std::fs::canonicalize(&link) else {
        return Device::default();
    };
    // A partition's queue/ and device/ live in its parent disk's directory.
    let disk = if real.join("partition").exists() {
        real.parent().map(Path::to_path_buf).unwrap_or(real.clone())
    } else {
        real.clone()
    };
    let scheduler = read_trim(disk.join("queue/scheduler")).map(|s| {
        s.split_whitespace()
            .find(|w| w.starts_with('['))
            .map(|w| w.trim_matches(|c| c == '[' || c == ']').to_string())
            .unwrap_or(s)
    });
    Device {
        name: real.file_name().map(|n| n.to_string_lossy().into_owned()),
        model: read_trim(disk.join("device/model")),
        rotational: read_trim(disk.join("queue/rotational")).map(|s| s == "1"),
        scheduler,
        write_cache: read_trim(disk.join("queue/write_cache")),
    }
}

/// What decides a directory's numbers, as read now: the mount it is on with its options, the
/// device under it, and the filesystem's free space. The one reading of a target's context: a
/// record's [`Target`] is made from it ([`target_of`]), and a bundle's context.json lists it
/// as it is (as JSON, in this order).
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct TargetContext {
    pub dir: String,
    pub exists: bool,
    pub mount_point: Option<String>,
    pub filesystem: Option<String>,
    pub mount_source: Option<String>,
    pub mount_options: Option<String>,
    /// The block device's name (`sda1`, `nvme0n1`); none for a filesystem without one.
    pub device: Option<String>,
    pub model: Option<String>,
    pub rotational: Option<bool>,
    pub scheduler: Option<String>,
    pub write_cache: Option<String>,
    /// Why the device keeps its data in RAM ([`ram`]): "loop0 backed by a file on tmpfs (in
    /// RAM)"; none for a disk, or a filesystem without a device.
    pub in_ram: Option<String>,
    pub free_bytes: Option<u64>,
    pub read_only: Option<bool>,
}

/// Why the device a mount is on keeps its data in RAM: found by its number, or, where the
/// number is not a block device's (btrfs gives each subvolume its own), by its source's name.
fn device_in_ram(m: &Mount) -> Option<String> {
    let probe = ram::Probe::here();
    probe.number(m.dev, 0).or_else(|| {
        let dev =
            std::fs::canonicalize(m.source.starts_with("/dev/").then_some(&m.source)?).ok()?;
        let name = dev.strip_prefix("/dev").ok()?.to_str()?;
        probe.device(name, 0)
    })
}

/// The context of `dir`, as given (not resolved).
pub fn context_of(dir: &Path) -> TargetContext {
    let mount = mount_of(dir);
    let device = mount.as_ref().map(|m| device_of(m.dev)).unwrap_or_default();
    let space = fs_space(dir).ok();
    let in_ram = mount.as_ref().and_then(device_in_ram);
    TargetContext {
        dir: dir.display().to_string(),
        exists: dir.is_dir(),
        mount_point: mount.as_ref().map(|m| m.mount_point.display().to_string()),
        filesystem: mount.as_ref().map(|m| m.fstype.clone()),
        mount_source: mount.as_ref().map(|m| m.source.clone()),
        mount_options: mount.as_ref().map(|m| m.options.clone()),
        device: device.name,
        model: device.model,
        rotational: device.rotational,
        scheduler: device.scheduler,
        write_cache: device.write_cache,
        in_ram,
        free_bytes: space.map(|s| s.available),
        read_only: space.map(|s| s.read_only),
    }
}

/// Everything a record says about where the test ran: its directory's [`TargetContext`]
/// (resolved first) and the machine's.
pub fn target_of(dir: &Path) -> Target {
    let canonical = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    let c = context_of(&canonical);
    Target {
        dir: c.dir,
        filesystem: c.filesystem,
        // a filesystem without a block device (NFS, tmpfs) is named by its source
        device: c.device.or(c.mount_source),
        mount_point: c.mount_point,
        mount_options: c.mount_options,
        model: c.model,
        rotational: c.rotational,
        scheduler: c.scheduler,
        in_ram: c.in_ram,
        kernel: kernel(),
        memory_bytes: memory_bytes(),
        cpus: cpus(),
        os: os(),
        capacity_bytes: capacity_bytes(&canonical),
    }
}

/// Free space and flags of the filesystem holding `dir`.
#[derive(Debug, Clone, Copy)]
pub struct FsSpace {
    pub available: u64,
    pub read_only: bool,
    /// False for filesystems that report no capacity at all (ramfs, some FUSE mounts).
    pub sized: bool,
}

pub fn fs_space(dir: &Path) -> std::io::Result<FsSpace> {
    let s = crate::syscalls::statvfs(dir)?;
    Ok(FsSpace {
        available: s.f_bavail as u64 * s.f_frsize as u64,
        read_only: s.f_flag & libc::ST_RDONLY != 0,
        sized: s.f_blocks > 0,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mountinfo_lines_parse_with_escapes_and_optional_fields() {
        let text = "36 35 98:0 /mnt1 /mnt\\040two rw,noatime master:1 - ext3 /dev/root rw,errors=continue\n\
                    22 1 0:21 / /dev/shm rw,nosuid,nodev shared:2 - tmpfs tmpfs rw\n\
                    garbage line\n";
        let m = parse_mountinfo(text);
        assert_eq!(m.len(), 2);
        assert_eq!(m[0].mount_point, PathBuf::from("/mnt two"));
        assert_eq!(m[0].dev, (98, 0));
        assert_eq!(m[0].fstype, "ext3");
        assert_eq!(m[1].fstype, "tmpfs");
    }

    #[test]
    fn the_current_directory_has_a_mount_and_a_host_name() {
        let t = target_of(Path::new("."));
        assert!(t.filesystem.is_some(), "{t:?}");
        assert!(t.dir.starts_with('/'));
        assert!(!hostname().is_empty());
        assert!(memory_bytes().unwrap() > 0);
        assert_eq!(t.cpus, cpus());
        assert!(t.cpus.unwrap() >= 1);
        assert!(t.capacity_bytes.unwrap() > 0);
    }
}
