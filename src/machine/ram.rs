//! Whether a block device keeps its data in RAM, as the kernel describes it in /sys: a RAM
//! disk (`ram*`, `brd`), a compressed RAM disk (`zram*`), persistent memory the kernel emulates
//! in RAM (`pmem*` on the `e820` bus, made with `memmap=`), a loop device whose backing file is
//! on a RAM filesystem or on such a device, and a device-mapper or md device built only on
//! such devices (its `slaves/`). Each layer is followed, at most [`MAX_DEPTH`] deep.
//!
//! A real NVDIMM (an `ACPI.NFIT` bus) or a virtio-pmem device is persistent storage and is not
//! taken for RAM; neither is a device of which one part is not in RAM (a mirror of a RAM disk
//! and a disk writes at the disk's pace).

use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

use crate::deviation::{RAM_FS, ram_path};

/// How many layers (loop over a file on a device over …) are followed.
pub const MAX_DEPTH: u32 = 8;

/// What holds a loop device's backing file.
#[derive(Debug, Clone, PartialEq)]
pub enum Backing {
    /// The backing "file" is a block device node: its number.
    Device((u32, u32)),
    /// A file on a filesystem of this type, on the device of this number.
    File { fstype: String, dev: (u32, u32) },
}

/// The kernel as read here: /sys, and what holds a file.
pub struct Probe<'a> {
    sys: PathBuf,
    backing: &'a dyn Fn(&Path) -> Option<Backing>,
}

/// What holds `file` on this machine: a device node's number, or the filesystem (type and
/// device number) of a regular file.
fn backing_here(file: &Path) -> Option<Backing> {
    let numbers = |d: u64| (libc::major(d), libc::minor(d));
    match std::fs::metadata(file) {
        Ok(m) if m.file_type().is_block_device() => Some(Backing::Device(numbers(m.rdev()))),
        Ok(m) => Some(Backing::File {
            fstype: super::mount_of(file)?.fstype,
            dev: numbers(m.dev()),
        }),
        // Deleted, or not visible from here (another mount namespace): the mount table's
        // longest prefix, at best.
        Err(_) => super::mount_of(file).map(|m| Backing::File {
            fstype: m.fstype,
            dev: m.dev,
        }),
    }
}

impl Probe<'static> {
    /// This machine's /sys and files.
    pub fn here() -> Probe<'static> {
        Probe {
            sys: PathBuf::from("/sys"),
            backing: &backing_here,
        }
    }
}

impl<'a> Probe<'a> {
    /// A probe of another /sys tree (tests).
    #[cfg(test)]
    pub fn at(sys: &Path, backing: &'a dyn Fn(&Path) -> Option<Backing>) -> Probe<'a> {
        Probe {
            sys: sys.to_path_buf(),
            backing,
        }
    }

    /// Why the block device of this number keeps its data in RAM ("zram0 (a compressed RAM
    /// disk)"), or None: it does not, or /sys does not say.
    pub fn number(&self, dev: (u32, u32), depth: u32) -> Option<String> {
        let real = std::fs::canonicalize(self.sys.join(format!("dev/block/{}:{}", dev.0, dev.1)));
        let name = real.ok()?.file_name()?.to_string_lossy().into_owned();
        self.device(&name, depth)
    }

    /// Why the block device `name` (as /sys/class/block lists it) keeps its data in RAM.
    pub fn device(&self, name: &str, depth: u32) -> Option<String> {
        if depth > MAX_DEPTH || name.is_empty() || name.contains('/') {
            return None;
        }
        let real = std::fs::canonicalize(self.sys.join("class/block").join(name)).ok();
        // A partition is in RAM when its disk is.
        let disk = match &real {
            Some(r) if r.join("partition").exists() => r.parent().map(Path::to_path_buf),
            r => r.clone(),
        };
        let disk_name = disk
            .as_ref()
            .and_then(|d| d.file_name())
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| name.to_string());
        // By name: the kernel's RAM disks are named so on every system.
        if let Some(what) = ram_path(&format!("/dev/{disk_name}")) {
            return Some(format!("{name} ({what})"));
        }
        let disk = disk?;
        if disk_name.starts_with("pmem") && self.emulated_pmem(&disk) {
            return Some(format!(
                "{name} (persistent memory the kernel emulates in RAM, memmap=)"
            ));
        }
        if let Some(file) = read_trim(&disk.join("loop/backing_file")) {
            return self
                .loop_file(&file, depth)
                .map(|what| format!("{name} backed by {what}"));
        }
        let slaves = self.slaves(&disk);
        if slaves.is_empty() {
            return None;
        }
        let under: Vec<String> = slaves
            .iter()
            .map(|s| self.device(s, depth + 1))
            .collect::<Option<_>>()?;
        Some(format!("{name} over {}", under.join(" and ")))
    }

    /// Why a loop device's backing file is in RAM: "a file on tmpfs (in RAM)", "a file on
    /// zram0 (…)", "/dev/ram0 (a RAM disk)".
    fn loop_file(&self, file: &str, depth: u32) -> Option<String> {
        let file = file.strip_suffix(" (deleted)").unwrap_or(file);
        match (self.backing)(Path::new(file)) {
            Some(Backing::Device(dev)) => self
                .number(dev, depth + 1)
                .or_else(|| ram_path(file).map(|what| format!("{file} ({what})"))),
            Some(Backing::File { fstype, dev }) => {
                if RAM_FS.contains(&fstype.as_str()) {
                    Some(format!("a file on {fstype} (in RAM)"))
                } else {
                    self.number(dev, depth + 1)
                        .map(|what| format!("a file on {what}"))
                }
            }
            None => ram_path(file).map(|what| format!("{file} ({what})")),
        }
    }

    /// The devices a dm or md device is built on, by name, sorted.
    fn slaves(&self, disk: &Path) -> Vec<String> {
        let mut out: Vec<String> = std::fs::read_dir(disk.join("slaves"))
            .map(|entries| {
                entries
                    .flatten()
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default();
        out.sort();
        out
    }

    /// A pmem device on the `e820` nvdimm bus: memory the kernel was told (memmap=) to treat
    /// as persistent, which is RAM. The bus names its provider in a `provider` file above the
    /// device's namespace.
    fn emulated_pmem(&self, disk: &Path) -> bool {
        let Ok(dev) = std::fs::canonicalize(disk.join("device")) else {
            return false;
        };
        dev.ancestors()
            .take(MAX_DEPTH as usize)
            .find_map(|a| read_trim(&a.join("provider")))
            .is_some_and(|p| p == "e820")
    }
}

fn read_trim(p: &Path) -> Option<String> {
    std::fs::read_to_string(p)
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
}

/// Why the block device `name` keeps its data in RAM, on this machine.
pub fn device_in_ram(name: &str) -> Option<String> {
    Probe::here().device(name, 0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    /// A fake /sys: devices under devices/…, linked from class/block and dev/block.
    struct Sys {
        tmp: tempfile::TempDir,
    }

    impl Sys {
        fn new() -> Sys {
            let tmp = tempfile::tempdir().unwrap();
            for d in ["class/block", "dev/block", "devices/virtual/block"] {
                std::fs::create_dir_all(tmp.path().join(d)).unwrap();
            }
            Sys { tmp }
        }

        fn root(&self) -> &Path {
            self.tmp.path()
        }

        /// A disk `name` numbered `num`, at `dir` under devices/; its directory.
        fn disk_at(&self, dir: &str, name: &str, num: &str) -> PathBuf {
            let d = self.root().join("devices").join(dir).join(name);
            std::fs::create_dir_all(&d).unwrap();
            symlink(&d, self.root().join("class/block").join(name)).unwrap();
            symlink(&d, self.root().join("dev/block").join(num)).unwrap();
            d
        }

        fn disk(&self, name: &str, num: &str) -> PathBuf {
            self.disk_at("virtual/block", name, num)
        }

        fn slaves(&self, of: &Path, names: &[&str]) {
            std::fs::create_dir_all(of.join("slaves")).unwrap();
            for n in names {
                symlink(
                    self.root().join("class/block").join(n),
                    of.join("slaves").join(n),
                )
                .unwrap();
            }
        }
    }

    fn on(
        map: &'static [(&'static str, &'static str, (u32, u32))],
    ) -> impl Fn(&Path) -> Option<Backing> {
        move |p: &Path| {
            map.iter()
                .find(|(f, _, _)| Path::new(f) == p)
                .map(|(_, fs, dev)| {
                    if *fs == "block" {
                        Backing::Device(*dev)
                    } else {
                        Backing::File {
                            fstype: fs.to_string(),
                            dev: *dev,
                        }
                    }
                })
        }
    }

    #[test]
    fn ram_disks_loops_over_ram_and_dm_over_them_are_in_ram_and_disks_are_not() {
        let sys = Sys::new();
        sys.disk("zram0", "252:0");
        sys.disk("ram1", "1:1");
        let vda = sys.disk_at("pci0000:00/virtio1/block", "vda", "253:0");
        let vda1 = vda.join("vda1");
        std::fs::create_dir_all(&vda1).unwrap();
        std::fs::write(vda1.join("partition"), "1\n").unwrap();
        symlink(&vda1, sys.root().join("class/block/vda1")).unwrap();
        symlink(&vda1, sys.root().join("dev/block/253:1")).unwrap();
        for (name, num, file) in [
            ("loop0", "7:0", "/dev/shm/x.img"),
            ("loop1", "7:1", "/srv/on-zram.img"),
            ("loop2", "7:2", "/srv/on-disk.img (deleted)"),
            ("loop3", "7:3", "/dev/zram0"),
            ("loop4", "7:4", "/dev/vda"),
            ("loop5", "7:5", "/mnt/on-loop1.img"),
        ] {
            let d = sys.disk(name, num);
            std::fs::create_dir_all(d.join("loop")).unwrap();
            std::fs::write(d.join("loop/backing_file"), format!("{file}\n")).unwrap();
        }
        let dm0 = sys.disk("dm-0", "254:0");
        sys.slaves(&dm0, &["zram0", "loop0"]);
        let dm1 = sys.disk("dm-1", "254:1");
        sys.slaves(&dm1, &["zram0", "vda1"]);
        let md0 = sys.disk("md0", "9:0");
        sys.slaves(&md0, &["dm-0", "ram1"]);
        static FILES: &[(&str, &str, (u32, u32))] = &[
            ("/dev/shm/x.img", "tmpfs", (0, 25)),
            ("/srv/on-zram.img", "ext4", (252, 0)),
            ("/srv/on-disk.img", "ext4", (253, 1)),
            ("/dev/zram0", "block", (252, 0)),
            ("/dev/vda", "block", (253, 0)),
            ("/mnt/on-loop1.img", "xfs", (7, 1)),
        ];
        let backing = on(FILES);
        let p = Probe::at(sys.root(), &backing);
        let cases = [
            ("zram0", Some("zram0 (a compressed RAM disk)")),
            ("ram1", Some("ram1 (a RAM disk)")),
            ("vda", None),
            ("vda1", None),
            ("loop0", Some("loop0 backed by a file on tmpfs (in RAM)")),
            (
                "loop1",
                Some("loop1 backed by a file on zram0 (a compressed RAM disk)"),
            ),
            ("loop2", None),
            (
                "loop3",
                Some("loop3 backed by zram0 (a compressed RAM disk)"),
            ),
            // a loop over a disk's node is the disk, not /dev's devtmpfs
            ("loop4", None),
            (
                "loop5",
                Some(
                    "loop5 backed by a file on loop1 backed by a file on zram0 (a compressed RAM disk)",
                ),
            ),
            (
                "dm-0",
                Some(
                    "dm-0 over loop0 backed by a file on tmpfs (in RAM) and zram0 (a compressed RAM disk)",
                ),
            ),
            ("dm-1", None),
            (
                "md0",
                Some(
                    "md0 over dm-0 over loop0 backed by a file on tmpfs (in RAM) and zram0 (a compressed RAM disk) and ram1 (a RAM disk)",
                ),
            ),
            ("nvme0n1", None),
        ];
        for (name, want) in cases {
            assert_eq!(p.device(name, 0).as_deref(), want, "{name}");
        }
    }

    #[test]
    fn a_loop_over_itself_ends_at_the_depth_limit() {
        let sys = Sys::new();
        let d = sys.disk("loop0", "7:0");
        std::fs::create_dir_all(d.join("loop")).unwrap();
        std::fs::write(d.join("loop/backing_file"), "/a.img\n").unwrap();
        static FILES: &[(&str, &str, (u32, u32))] = &[("/a.img", "ext4", (7, 0))];
        let backing = on(FILES);
        assert_eq!(Probe::at(sys.root(), &backing).device("loop0", 0), None);
    }

    #[test]
    fn pmem_is_ram_only_where_the_kernel_emulates_it() {
        let sys = Sys::new();
        let backing = |_: &Path| None;
        for (i, (bus, provider, want)) in [
            ("e820", "e820", true),
            ("nfit", "ACPI.NFIT", false),
            ("virtio", "virtio_pmem", false),
        ]
        .into_iter()
        .enumerate()
        {
            let ns = sys
                .root()
                .join(format!("devices/{bus}/ndbus0/region0/namespace0.0"));
            std::fs::create_dir_all(&ns).unwrap();
            let provider_file = sys.root().join(format!("devices/{bus}/ndbus0/provider"));
            std::fs::write(provider_file, format!("{provider}\n")).unwrap();
            let name = format!("pmem{i}");
            let under = format!("{bus}/ndbus0/region0/namespace0.0/block");
            let d = sys.disk_at(&under, &name, &format!("259:{i}"));
            symlink(&ns, d.join("device")).unwrap();
            let got = Probe::at(sys.root(), &backing).device(&name, 0);
            assert_eq!(got.is_some(), want, "{provider}: {got:?}");
        }
    }
}
