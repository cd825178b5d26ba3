//! What kind of disk the target is on, from what sysfs shows of it (vendor, model, NVMe model,
//! size), and whether its provider documents burst credits for disks of that kind and size.
//! Only what the system shows: a volume type (gp2 or gp3, Premium or Standard SSD) is never
//! visible from inside the machine, so it is never guessed. The providers' own words, with
//! the day they were read, are in docs/sustained.md.

use std::path::Path;

/// A disk as its provider presents it to the guest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DiskClass {
    /// NVMe model "Amazon Elastic Block Store".
    AwsEbs,
    /// NVMe model "Amazon EC2 NVMe Instance Storage": the instance's own disk.
    AwsInstanceStore,
    /// SCSI vendor "Msft", model "Virtual Disk": an Azure managed disk (or a Hyper-V disk).
    AzureDisk,
    /// SCSI vendor "Google", model "PersistentDisk".
    GooglePersistentDisk,
    /// A virtio disk (virtio-blk): some hypervisor's, whose provider the guest is not told.
    Virtio,
    /// Anything else, with what sysfs said.
    Other {
        vendor: Option<String>,
        model: Option<String>,
    },
}

/// A disk's class and size.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Disk {
    pub name: String,
    pub class: DiskClass,
    /// Bytes, from sysfs `size` (512-byte sectors).
    pub size: Option<u64>,
}

const GIB: u64 = 1 << 30;

impl DiskClass {
    /// How the class is named to users.
    pub fn label(&self) -> String {
        match self {
            DiskClass::AwsEbs => "an Amazon EBS volume".into(),
            DiskClass::AwsInstanceStore => "an Amazon EC2 instance store disk".into(),
            DiskClass::AzureDisk => "an Azure managed disk (Msft Virtual Disk)".into(),
            DiskClass::GooglePersistentDisk => "a Google Persistent Disk".into(),
            DiskClass::Virtio => "a virtio disk".into(),
            DiskClass::Other { vendor, model } => {
                let s: Vec<&str> = [vendor, model]
                    .into_iter()
                    .flatten()
                    .map(|s| s.as_str())
                    .collect();
                if s.is_empty() {
                    "a disk of unknown make".into()
                } else {
                    format!("a disk \"{}\"", s.join(" "))
                }
            }
        }
    }
}

impl Disk {
    /// Why this disk may run on burst credits, in one sentence, when its provider documents
    /// them for a disk of this kind and size; None when no provider's document says so (or
    /// the size rules them out).
    pub fn burst_caveat(&self) -> Option<String> {
        let gib = self.size.map(|b| b as f64 / GIB as f64);
        let size = gib.map(|g| format!(" of {g:.0} GiB")).unwrap_or_default();
        match self.class {
            // AWS: gp2 volumes smaller than 1 TiB burst to 3,000 IOPS on I/O credits and fall
            // to 3 IOPS per GiB (at least 100) when they run out.
            DiskClass::AwsEbs if gib.is_none_or(|g| g < 1000.0) => Some(format!(
                "{} is {}{size}: if it is gp2, it bursts to 3,000 IOPS on I/O credits and then falls to {} (AWS); the volume type does not show from here",
                self.name,
                self.class.label(),
                gib.map(|g| format!("{:.0} IOPS", (3.0 * g).max(100.0)))
                    .unwrap_or_else(|| "3 IOPS per GiB".into()),
            )),
            // Azure: credit-based bursting for Premium SSDs of 512 GiB or less and Standard
            // SSDs of 1,024 GiB or less, on by default.
            DiskClass::AzureDisk if gib.is_none_or(|g| g <= 1024.0) => Some(format!(
                "{} is {}{size}: Premium SSDs up to 512 GiB and Standard SSDs up to 1,024 GiB burst on credits for up to 30 minutes, then fall to their provisioned IOPS (Azure); the disk type does not show from here",
                self.name,
                self.class.label(),
            )),
            _ => None,
        }
    }
}

fn read_trim(p: &Path) -> Option<String> {
    std::fs::read_to_string(p)
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
}

/// The class of disk `name` (as /sys/block names it) under the sysfs root `sys` (/sys).
pub fn classify(sys: &Path, name: &str) -> Disk {
    let dir = sys.join("block").join(name);
    let dev = dir.join("device");
    // SCSI disks have vendor and model; NVMe namespaces' device/ is the controller, with model.
    let vendor = read_trim(&dev.join("vendor"));
    let model = read_trim(&dev.join("model"));
    let size = read_trim(&dir.join("size"))
        .and_then(|s| s.parse::<u64>().ok())
        .map(|sectors| sectors * 512);
    let is = |v: &Option<String>, want: &str| v.as_deref() == Some(want);
    let class = if is(&model, "Amazon Elastic Block Store") {
        DiskClass::AwsEbs
    } else if is(&model, "Amazon EC2 NVMe Instance Storage") {
        DiskClass::AwsInstanceStore
    } else if is(&vendor, "Msft") && is(&model, "Virtual Disk") {
        DiskClass::AzureDisk
    } else if is(&vendor, "Google") && is(&model, "PersistentDisk") {
        DiskClass::GooglePersistentDisk
    } else if read_trim(&dev.join("modalias")).is_some_and(|m| m.starts_with("virtio:d00000002")) {
        DiskClass::Virtio
    } else {
        DiskClass::Other { vendor, model }
    };
    Disk {
        name: name.to_string(),
        class,
        size,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fake /sys with one disk: `files` are (path under block/NAME, content).
    fn fake(name: &str, files: &[(&str, &str)]) -> tempfile::TempDir {
        let root = tempfile::tempdir().unwrap();
        for (path, text) in files {
            let p = root.path().join("block").join(name).join(path);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        }
        root
    }

    /// A disk's name, its sysfs files, and the class they give.
    type Case<'a> = (&'a str, Vec<(&'a str, &'a str)>, DiskClass);

    #[test]
    fn each_providers_strings_name_its_class() {
        let cases: Vec<Case> = vec![
            (
                "nvme1n1",
                vec![("device/model", "Amazon Elastic Block Store              \n")],
                DiskClass::AwsEbs,
            ),
            (
                "nvme2n1",
                vec![("device/model", "Amazon EC2 NVMe Instance Storage        \n")],
                DiskClass::AwsInstanceStore,
            ),
            (
                "sdc",
                vec![
                    ("device/vendor", "Msft    \n"),
                    ("device/model", "Virtual Disk    \n"),
                ],
                DiskClass::AzureDisk,
            ),
            (
                "sdb",
                vec![
                    ("device/vendor", "Google  \n"),
                    ("device/model", "PersistentDisk  \n"),
                ],
                DiskClass::GooglePersistentDisk,
            ),
            (
                "vda",
                vec![("device/modalias", "virtio:d00000002v00001AF4\n")],
                DiskClass::Virtio,
            ),
            (
                "sda",
                vec![
                    ("device/vendor", "ATA     \n"),
                    ("device/model", "Samsung SSD 870\n"),
                ],
                DiskClass::Other {
                    vendor: Some("ATA".into()),
                    model: Some("Samsung SSD 870".into()),
                },
            ),
        ];
        for (name, files, want) in cases {
            let root = fake(name, &files);
            assert_eq!(classify(root.path(), name).class, want, "{name}");
        }
        // A disk sysfs says nothing of.
        let root = fake("loop0", &[("size", "262144\n")]);
        let d = classify(root.path(), "loop0");
        assert_eq!(
            d.class,
            DiskClass::Other {
                vendor: None,
                model: None
            }
        );
        assert_eq!(d.size, Some(128 << 20));
    }

    #[test]
    fn a_burst_caveat_only_where_the_provider_documents_credits_for_that_size() {
        let ebs = |gib: u64| {
            let root = fake(
                "nvme1n1",
                &[
                    ("device/model", "Amazon Elastic Block Store"),
                    ("size", &(gib * 2 * 1024 * 1024).to_string()),
                ],
            );
            classify(root.path(), "nvme1n1").burst_caveat()
        };
        let c = ebs(100).unwrap();
        assert!(c.contains("of 100 GiB: if it is gp2"), "{c}");
        assert!(c.contains("falls to 300 IOPS (AWS)"), "{c}");
        assert!(ebs(20).unwrap().contains("falls to 100 IOPS"));
        // From 1,000 GiB a gp2 volume's baseline is 3,000 IOPS or more: nothing to run out.
        assert_eq!(ebs(1000), None);
        let azure = |gib: u64| {
            let root = fake(
                "sdc",
                &[
                    ("device/vendor", "Msft"),
                    ("device/model", "Virtual Disk"),
                    ("size", &(gib * 2 * 1024 * 1024).to_string()),
                ],
            );
            classify(root.path(), "sdc").burst_caveat()
        };
        assert!(azure(128).unwrap().contains("up to 30 minutes"));
        assert_eq!(azure(2048), None);
        // No provider's document of burst credits for these.
        for files in [
            vec![("device/model", "Amazon EC2 NVMe Instance Storage")],
            vec![("device/modalias", "virtio:d00000002v00001AF4")],
            vec![
                ("device/vendor", "Google"),
                ("device/model", "PersistentDisk"),
            ],
        ] {
            let root = fake("x", &files);
            assert_eq!(classify(root.path(), "x").burst_caveat(), None, "{files:?}");
        }
    }
}
