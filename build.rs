//! Puts the commit the binary was built from into `iopscheck --version`, and tells the tests
//! which of their prerequisites this machine has (root, fio, io_uring, chromium, FUSE,
//! ssh-keygen): a test that
//! needs one that is missing is marked ignored with the reason (`#[cfg_attr(not(have_fio),
//! ignore = "needs fio")]`), so the test runner shows it as not run instead of a silent pass.

use std::process::Command;

fn main() {
    let version = std::env::var("CARGO_PKG_VERSION").unwrap_or_default();
    let commit = std::env::var("IOPSCHECK_COMMIT").ok().or_else(|| {
        let out = Command::new("git")
            .args(["rev-parse", "--short=12", "HEAD"])
            .output()
            .ok()?;
        out.status
            .success()
            .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
    });
    let full = match commit.filter(|c| !c.is_empty()) {
        Some(c) => format!("{version} (commit {c})"),
        None => version,
    };
    println!("cargo:rustc-env=IOPSCHECK_VERSION={full}");
    println!("cargo:rerun-if-env-changed=IOPSCHECK_COMMIT");
    println!("cargo:rerun-if-changed=.git/HEAD");
    println!("cargo:rerun-if-changed=.git/refs/heads");

    // Test prerequisites. Detected when the build script runs: after installing fio or
    // chromium, or running as another user, `touch build.rs` (or change PATH) to detect them
    // again.
    println!("cargo:rerun-if-env-changed=PATH");
    println!("cargo:rerun-if-changed=build.rs");
    for (cfg, present) in [
        ("have_root", is_root()),
        ("have_fio", has_fio()),
        ("have_io_uring", has_io_uring()),
        ("have_chromium", has_chromium()),
        ("have_fuse", has_fuse()),
        ("have_ssh_keygen", has_ssh_keygen()),
    ] {
        println!("cargo::rustc-check-cfg=cfg({cfg})");
        if present {
            println!("cargo::rustc-cfg={cfg}");
        }
    }
}

/// The effective uid, from /proc (the second field of `Uid:`).
fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status").is_ok_and(|s| {
        s.lines()
            .find_map(|l| l.strip_prefix("Uid:"))
            .and_then(|ids| ids.split_whitespace().nth(1).map(|e| e == "0"))
            .unwrap_or(false)
    })
}

/// Debian's headless-capable browser, for the tests that render the HTML pages.
fn has_chromium() -> bool {
    Command::new("chromium")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// What the emulated burst disk (bench/burstdisk.c) needs to be built and mounted: /dev/fuse,
/// libfuse3's headers (Debian: libfuse3-dev) and a C compiler. Mounting it also needs root.
fn has_fuse() -> bool {
    std::path::Path::new("/dev/fuse").exists()
        && Command::new("pkg-config")
            .args(["--exists", "fuse3"])
            .status()
            .is_ok_and(|s| s.success())
        && Command::new("cc")
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
}

fn has_fio() -> bool {
    Command::new("fio")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// OpenSSH's ssh-keygen (Debian: openssh-client), for the tests that check a bundle's signature
/// with `ssh-keygen -Y verify` and sign one with `ssh-keygen -Y sign`. It has no `--version`:
/// looked for on PATH.
fn has_ssh_keygen() -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::env::var_os("PATH").is_some_and(|path| {
        std::env::split_paths(&path).any(|d| {
            std::fs::metadata(d.join("ssh-keygen"))
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
    })
}

/// Whether this kernel lets this process set up an io_uring (it may be absent, disabled by
/// `kernel.io_uring_disabled`, or refused by a seccomp profile).
fn has_io_uring() -> bool {
    // struct io_uring_params is 120 bytes; zeroed asks for the defaults.
    let mut params = [0u8; 120];
    // SAFETY: io_uring_setup(2) with a valid, writable params buffer of the kernel's size.
    let fd = unsafe { libc::syscall(libc::SYS_io_uring_setup, 2u32, params.as_mut_ptr()) };
    if fd < 0 {
        return false;
    }
    // SAFETY: closing the ring we just created.
    unsafe { libc::close(fd as i32) };
    true
}
