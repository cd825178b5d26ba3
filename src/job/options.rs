//! fio's options that change what a job measures beyond its shape: the limits a job puts on
//! its own I/O ([`LIMITS`]) and the options that reshape it ([`RESHAPES`]), as an output lists
//! them.

use std::collections::BTreeMap;

/// fio's options by which a job holds back its own I/O, each under its name and fio's alias
/// (options.c, the groups `FIO_OPT_G_RATE`, `FIO_OPT_G_THINKTIME`, `FIO_OPT_G_IO_FLOW` and
/// `FIO_OPT_G_LATPROF`). Only those that act on their own are here: `rate_process`,
/// `rate_cycle`, `thinktime_blocks`, `flow_id`, `latency_window` and the like only change how
/// one of these acts.
pub const LIMITS: &[(&str, &[&str])] = &[
    // a bandwidth or IOPS cap, per direction ("500k", ",2800")
    ("rate", &[]),
    ("rate_iops", &[]),
    // a minimum: below it fio ends the job
    ("rate_min", &["ratemin"]),
    ("rate_iops_min", &[]),
    // idle time (or CPU cycles) between I/Os
    ("thinktime", &[]),
    ("thinkcycles", &[]),
    // token-based flow control between jobs
    ("flow", &[]),
    // the queue depth lowered until a latency is met; the job ended when one is exceeded
    ("latency_target", &[]),
    ("max_latency", &[]),
];

/// An option of fio's that changes what a job measures, though its `rw`, `bs`, `size` and the
/// rest of the shape say the policy's test.
pub struct Reshape {
    /// fio's name, then its aliases.
    pub names: &'static [&'static str],
    /// The values that leave the job as it was (fio's default among them), in lower case;
    /// empty: any value set changes it.
    pub unchanged: &'static [&'static str],
    /// What the policy's test has, said as the deviation's expected value.
    pub expected: &'static str,
    /// Why it matters, for the warnings.
    pub why: &'static str,
}

const BLOCKS: &str = "I/Os of other sizes than bs: fio's IOPS and the vendor's formula (MB/s over the block size) no longer measure the policy's blocks";
const REGION: &str = "the job writes a smaller region or less data than its size says, which fits more of itself in the page cache or the disk's own cache";
const ACCESS: &str = "a skewed or partly sequential access pattern hits caches the policy's uniform random I/O does not";
const DATA: &str = "zeroed, repeated or compressible data flatters storage that compresses or deduplicates (cloud volumes, ZFS, arrays)";
const CACHE: &str = "what is already in the page cache is not read or written from the disk";
const VERIFY: &str = "verifying adds reads of what was written, which the policy's job does not do";

/// fio's options (options.c) that change what a job measures while its shape stays the
/// policy's: a job given one is not the policy's test. Options fio's JSON lists only with a
/// value: a flag given bare (`--zero_buffers`) is not listed there, and cannot be seen.
pub const RESHAPES: &[Reshape] = &[
    Reshape {
        names: &["bsrange", "blocksize_range"],
        unchanged: &[],
        expected: "none",
        why: BLOCKS,
    },
    Reshape {
        names: &["bssplit"],
        unchanged: &[],
        expected: "none",
        why: BLOCKS,
    },
    Reshape {
        names: &["bs_unaligned", "blocksize_unaligned"],
        unchanged: &["0"],
        expected: "0",
        why: BLOCKS,
    },
    Reshape {
        names: &["bs_is_seq_rand"],
        unchanged: &["0"],
        expected: "0",
        why: BLOCKS,
    },
    Reshape {
        names: &["filesize"],
        unchanged: &[],
        expected: "none",
        why: REGION,
    },
    Reshape {
        names: &["offset", "fileoffset"],
        unchanged: &["0"],
        expected: "0",
        why: REGION,
    },
    Reshape {
        names: &["offset_increment"],
        unchanged: &["0"],
        expected: "0",
        why: REGION,
    },
    Reshape {
        names: &["io_size", "io_limit"],
        unchanged: &["0"],
        expected: "none",
        why: REGION,
    },
    Reshape {
        names: &["number_ios"],
        unchanged: &["0"],
        expected: "none",
        why: REGION,
    },
    Reshape {
        names: &["nrfiles", "nr_files"],
        unchanged: &["1"],
        expected: "1",
        why: REGION,
    },
    Reshape {
        names: &["zonemode"],
        unchanged: &["none"],
        expected: "none",
        why: REGION,
    },
    Reshape {
        names: &["zonesize"],
        unchanged: &["0"],
        expected: "none",
        why: REGION,
    },
    Reshape {
        names: &["zonerange"],
        unchanged: &["0"],
        expected: "none",
        why: REGION,
    },
    Reshape {
        names: &["random_distribution"],
        unchanged: &["random"],
        expected: "random",
        why: ACCESS,
    },
    Reshape {
        names: &["percentage_random"],
        unchanged: &["100"],
        expected: "100",
        why: ACCESS,
    },
    Reshape {
        names: &["zero_buffers"],
        unchanged: &["0"],
        expected: "0",
        why: DATA,
    },
    Reshape {
        names: &["buffer_compress_percentage"],
        unchanged: &["0"],
        expected: "0",
        why: DATA,
    },
    Reshape {
        names: &["dedupe_percentage"],
        unchanged: &["0"],
        expected: "0",
        why: DATA,
    },
    Reshape {
        names: &["scramble_buffers"],
        unchanged: &["1"],
        expected: "1",
        why: DATA,
    },
    Reshape {
        names: &["buffer_pattern"],
        unchanged: &[],
        expected: "none",
        why: DATA,
    },
    Reshape {
        names: &["invalidate"],
        unchanged: &["1"],
        expected: "1",
        why: CACHE,
    },
    Reshape {
        names: &["pre_read"],
        unchanged: &["0"],
        expected: "0",
        why: CACHE,
    },
    Reshape {
        names: &["verify"],
        unchanged: &["0", "none"],
        expected: "none",
        why: VERIFY,
    },
];

/// The [`RESHAPES`] entry of an option's name (fio's own name or an alias).
pub fn reshape(name: &str) -> Option<&'static Reshape> {
    RESHAPES.iter().find(|r| r.names.contains(&name))
}

/// The limits ([`LIMITS`]) and the options that reshape the job ([`RESHAPES`]) among a job's
/// options (names in lower case), under fio's own name. A limit counts where it is set to
/// something other than zero ("0", "0k" and "" set nothing; a value that cannot be read
/// counts, as it cannot be confirmed to be zero); a reshaping option where its value is not
/// one that leaves the job as it was.
pub fn limits_of<'a>(
    options: impl IntoIterator<Item = (&'a str, &'a str)>,
) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for (key, value) in options {
        if let Some((name, _)) = LIMITS
            .iter()
            .find(|(name, aliases)| *name == key || aliases.contains(&key))
        {
            if value.split([',', ':']).any(sets_a_limit) {
                out.insert(name.to_string(), value.trim().to_string());
            }
        } else if let Some(r) = reshape(key) {
            let v = value.trim().to_ascii_lowercase();
            if !r.unchanged.contains(&v.as_str()) {
                out.insert(r.names[0].to_string(), value.trim().to_string());
            }
        }
    }
    out
}

/// Whether one part of a limit's value ("2800", "10ms", " 0k") is other than zero.
fn sets_a_limit(part: &str) -> bool {
    let p = part.trim().trim_start_matches(['+', '-']);
    if p.is_empty() {
        return false;
    }
    let digits: String = p
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '.')
        .collect();
    match digits.parse::<f64>() {
        Ok(v) => v != 0.0,
        Err(_) => true,
    }
}
