//! Where evidence may come from. As root, iopscheck reads and writes a history only where
//! nobody but root could have put or changed it, by the rule sudo applies to its sudoers
//! file and OpenSSH's StrictModes to authorized_keys, over the whole path:
//!
//! - every directory from `/` down to the file's own, as the kernel walks them (each symbolic
//!   link on the way followed, and the link itself owned by root), is owned by root and is not
//!   writable by others or by a group other than root's, unless it has the sticky bit (as
//!   `/tmp`), where others may add names but never replace root's;
//! - the file itself, where it exists, is owned by root and writable by nobody else.
//!
//! "Writable by" is the mode bits' and, where a file or directory has a POSIX access ACL
//! (`setfacl`; the group bits then show its mask), the ACL's: a named user or group, or the
//! owning group, that the ACL lets write is another writer.
//!
//! Directories not yet there are not checked: the first record creates them, as root, 0755.
//! Other users are not checked: what they can write, they could also have measured.

use std::ffi::OsString;
use std::os::unix::fs::MetadataExt;
use std::path::{Component, Path, PathBuf};

/// Why a path is not trusted: the part of it at fault, and what is wrong with it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Untrusted {
    pub at: PathBuf,
    pub why: String,
}

impl std::fmt::Display for Untrusted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}", self.at.display(), self.why)
    }
}

/// Symbolic links followed on one path before giving up, as the kernel's limit (ELOOP).
const MAX_LINKS: usize = 40;

/// Checks `path` (a file that may not exist yet) by the rule above, when running as root.
/// A directory that cannot be looked at is left for the open that follows to report.
pub fn check(path: &Path) -> Result<(), Untrusted> {
    if !crate::syscalls::is_root() {
        return Ok(());
    }
    check_as(path, 0, None)
}

/// [`check`] for a file read as root that decides something (a policy): the whole path as the
/// kernel resolves it, a symbolic link at its end followed like any other (the link owned by
/// root, its target judged), and the file it ends at owned by root and writable by nobody else.
pub fn check_read(path: &Path) -> Result<(), Untrusted> {
    if !crate::syscalls::is_root() {
        return Ok(());
    }
    check_read_as(path, 0, None)
}

fn check_read_as(path: &Path, uid: u32, trusted: Option<&Path>) -> Result<(), Untrusted> {
    let abs = if path.is_absolute() {
        path.to_path_buf()
    } else {
        match std::env::current_dir() {
            Ok(d) => d.join(path),
            Err(_) => return Ok(()),
        }
    };
    walk(&abs, uid, trusted, true)
}

/// [`check`] for the user `uid`, taking `trusted` and its ancestors as given (the tests' own
/// temporary directory, whose ancestors they cannot choose).
fn check_as(path: &Path, uid: u32, trusted: Option<&Path>) -> Result<(), Untrusted> {
    let abs = if path.is_absolute() {
        path.to_path_buf()
    } else {
        match std::env::current_dir() {
            Ok(d) => d.join(path),
            Err(_) => return Ok(()),
        }
    };
    let (Some(dir), Some(_)) = (abs.parent(), abs.file_name()) else {
        return Ok(());
    };
    walk(dir, uid, trusted, false)?;
    // The file itself, not followed: a history that is a link is refused by its reader.
    if let Ok(m) = std::fs::symlink_metadata(&abs)
        && !m.file_type().is_symlink()
    {
        judge(&abs, &m, uid)?;
    }
    Ok(())
}

/// What a walk meets on a path.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Met {
    Link,
    Dir,
    /// What the path ends at, neither a directory nor a link.
    End,
}

/// The history's rule for what a walk meets: links and directories and the file owned by
/// `uid`, directories and the file writable by nobody else.
fn owned_by(uid: u32) -> impl Fn(&Path, &std::fs::Metadata, Met) -> Result<(), Untrusted> {
    move |p, m, met| match met {
        Met::Link if m.uid() != uid => Err(Untrusted {
            at: p.to_path_buf(),
            why: format!(
                "is a symbolic link owned by {}, who could point it elsewhere",
                user(m.uid())
            ),
        }),
        Met::Link => Ok(()),
        Met::Dir | Met::End => judge(p, m, uid),
    }
}

/// Walks `dir` from `/` as the kernel resolves it, judging every directory and link met by
/// `judge`, and with `file`, what the path ends at too (whatever it is).
fn walk(dir: &Path, uid: u32, trusted: Option<&Path>, file: bool) -> Result<(), Untrusted> {
    walk_with(dir, trusted, file, &owned_by(uid))
}

fn walk_with(
    dir: &Path,
    trusted: Option<&Path>,
    file: bool,
    judge: &dyn Fn(&Path, &std::fs::Metadata, Met) -> Result<(), Untrusted>,
) -> Result<(), Untrusted> {
    let given = |p: &Path| trusted.is_some_and(|t| t.starts_with(p));
    let mut todo: Vec<OsString> = Vec::new();
    push_components(&mut todo, dir);
    let mut at = PathBuf::from("/");
    let Ok(root) = std::fs::metadata(&at) else {
        return Ok(());
    };
    if !given(&at) {
        judge(&at, &root, Met::Dir)?;
    }
    let mut links = 0;
    while let Some(c) = todo.pop() {
        if c == "." {
            continue;
        }
        if c == ".." {
            // `at` is a physical path (every link on it resolved), so its parent is the real one.
            at.pop();
            continue;
        }
        let next = at.join(&c);
        let Ok(m) = std::fs::symlink_metadata(&next) else {
            // Not there yet (created by the first record, as root), or not ours to look at.
            return Ok(());
        };
        if m.file_type().is_symlink() {
            if !given(&at) {
                judge(&next, &m, Met::Link)?;
            }
            links += 1;
            let Ok(target) = std::fs::read_link(&next) else {
                return Ok(());
            };
            if links > MAX_LINKS {
                return Ok(());
            }
            if target.is_absolute() {
                at = PathBuf::from("/");
            }
            push_components(&mut todo, &target);
        } else if m.is_dir() {
            if !given(&next) {
                judge(&next, &m, Met::Dir)?;
            }
            at = next;
        } else {
            if file && todo.is_empty() && !given(&next) {
                judge(&next, &m, Met::End)?;
            }
            // Otherwise not a directory on the way: opening the file will say so.
            return Ok(());
        }
    }
    Ok(())
}

/// A user who reads: iopscheck's invoker, to whom what it shows or packs is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reader {
    pub uid: u32,
    pub gid: u32,
    /// Their supplementary groups (the primary one may be among them).
    pub groups: &'static [u32],
}

impl Reader {
    /// Whether the reader is in group `gid`, as primary or supplementary group.
    fn in_group(&self, gid: u32) -> bool {
        gid == self.gid || self.groups.contains(&gid)
    }
}

/// The user iopscheck acts for: under sudo (root, with `SUDO_UID` set) the user who ran sudo,
/// with `SUDO_GID` and the groups /etc/group lists them in; else the effective user, with
/// their groups (getgroups(2)).
pub fn invoker() -> Reader {
    static SUDO_GROUPS: std::sync::OnceLock<Vec<u32>> = std::sync::OnceLock::new();
    static OWN_GROUPS: std::sync::OnceLock<Vec<u32>> = std::sync::OnceLock::new();
    let euid = crate::syscalls::euid();
    let id = |v: &str| std::env::var(v).ok().and_then(|s| s.parse::<u32>().ok());
    match id("SUDO_UID") {
        Some(uid) if euid == 0 => {
            let gid = id("SUDO_GID");
            let groups = SUDO_GROUPS.get_or_init(|| {
                let mut g = name_in("/etc/passwd", uid)
                    .map(|n| groups_naming("/etc/group", &n))
                    .unwrap_or_default();
                g.extend(gid);
                g
            });
            Reader {
                uid,
                gid: gid.unwrap_or(u32::MAX),
                groups,
            }
        }
        _ => Reader {
            uid: euid,
            gid: crate::syscalls::egid(),
            groups: OWN_GROUPS.get_or_init(crate::syscalls::groups),
        },
    }
}

/// Refuses a file `reader` could not have read themselves, which iopscheck must then neither
/// quote (`policy check`) nor pack into a bundle anyone can read (`bundle FILE`): reached
/// through a symbolic link owned by someone other than `reader` or root (it may lead anywhere
/// its owner likes), through a directory `reader` may not search, or a file neither owned by
/// `reader` nor readable by them ([`readable_file`]). Every directory on the way, from `/`, as
/// the kernel resolves the path, needs search permission for `reader`, as POSIX decides it:
/// the owner's bits if `reader` owns it, else the group's if one of their groups is its
/// group, else the others' (the first that applies decides, even if it denies), and where
/// the directory has a POSIX access ACL, its entries for `reader` and their groups, masked.
/// Root as the reader may read everything. A path that cannot be followed is left for the
/// open that follows to report; the file opened is judged again by [`readable_file`].
pub fn readable_by(path: &Path, reader: Reader) -> Result<(), Untrusted> {
    let abs = if path.is_absolute() {
        path.to_path_buf()
    } else {
        match std::env::current_dir() {
            Ok(d) => d.join(path),
            Err(_) => return Ok(()),
        }
    };
    walk_with(&abs, None, true, &|p, m, met| match met {
        Met::Link if m.uid() != reader.uid && m.uid() != 0 => Err(Untrusted {
            at: p.to_path_buf(),
            why: format!(
                "is a symbolic link owned by {}, which may lead to a file {} could not read",
                user(m.uid()),
                user(reader.uid)
            ),
        }),
        Met::Link => Ok(()),
        Met::Dir => permitted(p, m, reader, ACL_EXECUTE),
        Met::End => readable_file(p, m, reader),
    })
}

/// The file itself (open, or at the end of a path): owned by `reader` (who may always make it
/// readable), or readable by them by its mode or its access ACL as the kernel decides (see
/// [`readable_by`]).
pub fn readable_file(p: &Path, m: &std::fs::Metadata, reader: Reader) -> Result<(), Untrusted> {
    if m.uid() == reader.uid {
        return Ok(());
    }
    // The ACL is the file's, not a link's on the way to it.
    let at = match std::fs::symlink_metadata(p) {
        Ok(l) if l.file_type().is_symlink() => {
            std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf())
        }
        _ => p.to_path_buf(),
    };
    permitted(&at, m, reader, ACL_READ).map_err(|u| Untrusted {
        at: p.to_path_buf(),
        ..u
    })
}

/// Refuses `p` unless `reader` has the permission `want` on it ([`ACL_READ`] for a file,
/// [`ACL_EXECUTE`], search, for a directory).
fn permitted(p: &Path, m: &std::fs::Metadata, reader: Reader, want: u16) -> Result<(), Untrusted> {
    let fail = |why: String| {
        Err(Untrusted {
            at: p.to_path_buf(),
            why,
        })
    };
    let verb = if want == ACL_EXECUTE {
        "searchable"
    } else {
        "readable"
    };
    match permits(p, m, reader, want) {
        Ok((true, _)) => Ok(()),
        Ok((false, acl)) => fail(format!(
            "is {}'s and not {verb} by {} (mode {:o}{})",
            user(m.uid()),
            user(reader.uid),
            m.mode() & 0o7777,
            if acl { "+" } else { "" }
        )),
        Err(why) => fail(format!(
            "is {}'s and not known to be {verb} by {}: its access ACL {why}",
            user(m.uid()),
            user(reader.uid)
        )),
    }
}

/// Whether `reader` has every permission in `want` on `p` (`m` its metadata) as the kernel
/// decides (acl_permission_check, posix_acl_permission): root always; the owner by the owner's
/// bits; else a named user's ACL entry, masked; else the owning group's or a named group's
/// entry that grants it, masked, any group entry that matches but grants nothing denying;
/// else the others' bits. Without an ACL, the group's bits stand for the owning group's
/// entry. With it: whether `p` has an access ACL; or why its ACL cannot be judged.
fn permits(
    p: &Path,
    m: &std::fs::Metadata,
    reader: Reader,
    want: u16,
) -> Result<(bool, bool), String> {
    let bits = |shift: u32| ((m.mode() >> shift) & 0o7) as u16;
    let has = |perm: u16| perm & want == want;
    if reader.uid == 0 {
        return Ok((true, false));
    }
    if m.uid() == reader.uid {
        return Ok((has(bits(6)), false));
    }
    let Some(entries) = access_acl(p)? else {
        let class = if reader.in_group(m.gid()) {
            bits(3)
        } else {
            bits(0)
        };
        return Ok((has(class), false));
    };
    let mask = entries
        .iter()
        .find(|e| e.0 == ACL_MASK)
        .map_or(0o7, |e| e.1);
    if let Some(&(_, perm, _)) = entries
        .iter()
        .find(|e| e.0 == ACL_USER && e.2 == reader.uid)
    {
        return Ok((has(perm & mask), true));
    }
    let mut in_a_group = false;
    for &(tag, perm, id) in &entries {
        let member = match tag {
            ACL_GROUP_OBJ => reader.in_group(m.gid()),
            ACL_GROUP => reader.in_group(id),
            _ => false,
        };
        if member && has(perm) {
            return Ok((has(mask), true));
        }
        in_a_group |= member;
    }
    Ok((!in_a_group && has(bits(0)), true))
}

/// Pushes the components of `p` so that the first is popped first.
fn push_components(todo: &mut Vec<OsString>, p: &Path) {
    let parts: Vec<OsString> = p
        .components()
        .filter_map(|c| match c {
            Component::Normal(n) => Some(n.to_os_string()),
            Component::ParentDir => Some("..".into()),
            Component::CurDir | Component::RootDir | Component::Prefix(_) => None,
        })
        .collect();
    todo.extend(parts.into_iter().rev());
}

/// One directory or the file: owned by `uid`, writable by nobody else (a sticky directory
/// excepted, and a group-writable one whose group is root's).
fn judge(p: &Path, m: &std::fs::Metadata, uid: u32) -> Result<(), Untrusted> {
    let fail = |why: String| {
        Err(Untrusted {
            at: p.to_path_buf(),
            why,
        })
    };
    if m.uid() != uid {
        return fail(format!("is owned by {}", user(m.uid())));
    }
    let mode = m.mode();
    let sticky = m.is_dir() && mode & 0o1000 != 0;
    if sticky {
        return Ok(());
    }
    if mode & 0o002 != 0 {
        return fail(format!("is world-writable (mode {:o})", mode & 0o7777));
    }
    // With an access ACL the group bits are its mask: the ACL's own entries say who writes.
    match acl_writer(p, uid, m.gid()) {
        Acl::None => {}
        Acl::Writer(who) => {
            return fail(format!(
                "is writable by {who} through its access ACL (mode {:o}+)",
                mode & 0o7777
            ));
        }
        Acl::Sound => return Ok(()),
    }
    if mode & 0o020 != 0 && m.gid() != 0 {
        return fail(format!(
            "is writable by group {} (mode {:o})",
            group(m.gid()),
            mode & 0o7777
        ));
    }
    Ok(())
}

/// What a POSIX access ACL (`setfacl`) says of who may write.
enum Acl {
    /// None: the mode bits say it all.
    None,
    /// One lets someone other than `uid`, root or root's group write (named), or the ACL
    /// cannot be read.
    Writer(String),
    /// Only the owner, root and root's group may write.
    Sound,
}

/// The ACL entries' tags (Linux's `system.posix_acl_access` xattr: a u32 version, 2, then
/// entries of a u16 tag, a u16 permission and a u32 id, little-endian).
const ACL_USER_OBJ: u16 = 0x01;
const ACL_USER: u16 = 0x02;
const ACL_GROUP_OBJ: u16 = 0x04;
const ACL_GROUP: u16 = 0x08;
const ACL_MASK: u16 = 0x10;
const ACL_OTHER: u16 = 0x20;
const ACL_READ: u16 = 0x04;
const ACL_WRITE: u16 = 0x02;
const ACL_EXECUTE: u16 = 0x01;

/// A POSIX access ACL's entries: (tag, permission, id).
type AclEntries = Vec<(u16, u16, u32)>;

/// `p`'s access ACL (a symbolic link not followed), `None` where it has none; else why it
/// cannot be read.
fn access_acl(p: &Path) -> Result<Option<AclEntries>, String> {
    let raw = match crate::syscalls::path_xattr(p, c"system.posix_acl_access") {
        Ok(Some(raw)) => raw,
        Ok(None) => return Ok(None),
        Err(e) => return Err(format!("cannot be read: {e}")),
    };
    let version = raw
        .get(..4)
        .map(|v| u32::from_le_bytes([v[0], v[1], v[2], v[3]]));
    if version != Some(2) || (raw.len() - 4) % 8 != 0 {
        return Err("is of a format iopscheck does not read".into());
    }
    Ok(Some(
        raw[4..]
            .chunks_exact(8)
            .map(|e| {
                (
                    u16::from_le_bytes([e[0], e[1]]),
                    u16::from_le_bytes([e[2], e[3]]),
                    u32::from_le_bytes([e[4], e[5], e[6], e[7]]),
                )
            })
            .collect(),
    ))
}

/// The first writer `p`'s access ACL lets in besides the owner `uid`, root and root's group
/// (`gid` is the file's group). The named users and groups and the owning group write only
/// as far as the mask allows; others' entry is the mode's world bits, judged already.
fn acl_writer(p: &Path, uid: u32, gid: u32) -> Acl {
    let entries = match access_acl(p) {
        Ok(Some(entries)) => entries,
        Ok(None) => return Acl::None,
        Err(why) => {
            // "(it cannot be read: …)", "(of a format iopscheck does not read)"
            let why = why
                .strip_prefix("is ")
                .map_or(format!("it {why}"), str::to_string);
            return Acl::Writer(format!("whoever its access ACL names ({why})"));
        }
    };
    let mask = entries
        .iter()
        .find(|e| e.0 == ACL_MASK)
        .map_or(0xffff, |e| e.1);
    for &(tag, perm, id) in &entries {
        let writes = perm & ACL_WRITE != 0;
        let masked = writes && mask & ACL_WRITE != 0;
        let who = match tag {
            ACL_USER if masked && id != uid && id != 0 => user(id),
            ACL_GROUP if masked && id != 0 => format!("group {}", group(id)),
            ACL_GROUP_OBJ if masked && gid != 0 => format!("group {}", group(gid)),
            ACL_OTHER if writes => "every user".into(),
            ACL_USER_OBJ | ACL_USER | ACL_GROUP | ACL_GROUP_OBJ | ACL_MASK | ACL_OTHER => continue,
            _ => format!("whoever its access ACL's entry {tag:#x} names"),
        };
        return Acl::Writer(who);
    }
    Acl::Sound
}

/// "user alice (uid 1000)", or "uid 1000" when /etc/passwd does not name it.
pub fn user(uid: u32) -> String {
    match name_in("/etc/passwd", uid) {
        Some(n) => format!("user {n} (uid {uid})"),
        None => format!("uid {uid}"),
    }
}

fn group(gid: u32) -> String {
    match name_in("/etc/group", gid) {
        Some(n) => format!("{n} (gid {gid})"),
        None => format!("gid {gid}"),
    }
}

/// The name of id `id` in a passwd-style file (name:x:id:...).
fn name_in(file: &str, id: u32) -> Option<String> {
    let text = std::fs::read_to_string(file).ok()?;
    text.lines().find_map(|l| {
        let mut f = l.split(':');
        let name = f.next()?;
        f.next()?;
        (f.next()?.parse::<u32>().ok()? == id).then(|| name.to_string())
    })
}

/// The groups a group-style file (name:x:gid:member,member) lists `name` as a member of.
fn groups_naming(file: &str, name: &str) -> Vec<u32> {
    let Ok(text) = std::fs::read_to_string(file) else {
        return Vec::new();
    };
    text.lines()
        .filter_map(|l| {
            let mut f = l.split(':');
            f.next()?;
            f.next()?;
            let gid = f.next()?.parse::<u32>().ok()?;
            f.next()?
                .split(',')
                .any(|m| m.trim() == name)
                .then_some(gid)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn a_file_read_is_judged_through_a_link_at_its_end() {
        let d = tempfile::tempdir().unwrap();
        let real = d.path().join("real.yaml");
        std::fs::write(&real, b"").unwrap();
        std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o644)).unwrap();
        let link = d.path().join("link.yaml");
        std::os::unix::fs::symlink("real.yaml", &link).unwrap();
        assert_eq!(check_read_as(&link, me(), d.path().parent()), Ok(()));
        std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o666)).unwrap();
        let e = check_read_as(&link, me(), d.path().parent()).unwrap_err();
        assert_eq!(e.at, real, "{e}");
        // a link to a directory others can write
        let open = d.path().join("open");
        std::fs::create_dir(&open).unwrap();
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).unwrap();
        std::fs::write(open.join("p.yaml"), b"").unwrap();
        std::os::unix::fs::symlink("open/p.yaml", d.path().join("to-open.yaml")).unwrap();
        let e = check_read_as(&d.path().join("to-open.yaml"), me(), d.path().parent()).unwrap_err();
        assert_eq!(e.at, open, "{e}");
    }

    fn me() -> u32 {
        crate::syscalls::euid()
    }

    /// The temporary directory's parent and above are taken as given.
    fn below(d: &Path, p: &Path, uid: u32) -> Result<(), Untrusted> {
        check_as(p, uid, d.parent())
    }

    #[test]
    fn a_private_tree_is_trusted_and_others_writing_anywhere_on_it_is_not() {
        let d = tempfile::tempdir().unwrap();
        let a = d.path().join("a");
        std::fs::create_dir(&a).unwrap();
        let h = a.join("h.jsonl");
        std::fs::write(&h, b"").unwrap();
        std::fs::set_permissions(&a, std::fs::Permissions::from_mode(0o755)).unwrap();
        std::fs::set_permissions(&h, std::fs::Permissions::from_mode(0o644)).unwrap();
        assert_eq!(below(d.path(), &h, me()), Ok(()));
        // not there yet: fine, whatever is missing
        assert_eq!(below(d.path(), &a.join("x/y/h.jsonl"), me()), Ok(()));
        // a directory anyone can write
        std::fs::set_permissions(&a, std::fs::Permissions::from_mode(0o777)).unwrap();
        let e = below(d.path(), &h, me()).unwrap_err();
        assert_eq!(e.at, a);
        assert!(e.why.contains("world-writable"), "{e}");
        // unless sticky, as /tmp
        std::fs::set_permissions(&a, std::fs::Permissions::from_mode(0o1777)).unwrap();
        assert_eq!(below(d.path(), &h, me()), Ok(()));
        // the file itself
        std::fs::set_permissions(&h, std::fs::Permissions::from_mode(0o666)).unwrap();
        let e = below(d.path(), &h, me()).unwrap_err();
        assert_eq!(e.at, h);
        std::fs::set_permissions(&h, std::fs::Permissions::from_mode(0o644)).unwrap();
        // owned by someone else: the file, as the directories
        let e = below(d.path(), &h, me() + 1).unwrap_err();
        assert!(e.why.contains("is owned by"), "{e}");
    }

    /// An access ACL as `setfacl` sets it: (tag, permission, id) entries.
    fn set_acl(p: &Path, entries: &[(u16, u16, u32)]) {
        let mut raw = 2u32.to_le_bytes().to_vec();
        for (tag, perm, id) in entries {
            raw.extend(tag.to_le_bytes());
            raw.extend(perm.to_le_bytes());
            raw.extend(id.to_le_bytes());
        }
        let f = std::fs::File::open(p).unwrap();
        crate::syscalls::set_xattr(&f, c"system.posix_acl_access", &raw).unwrap();
    }

    #[test]
    fn an_access_acl_letting_another_user_or_group_write_is_not_trusted() {
        const ANY: u32 = u32::MAX;
        let d = tempfile::tempdir().unwrap();
        let a = d.path().join("a");
        std::fs::create_dir(&a).unwrap();
        let h = a.join("h.jsonl");
        std::fs::write(&h, b"").unwrap();
        // setfacl -m u:nobody:rw h.jsonl: the group bits show the mask, rw
        set_acl(
            &h,
            &[
                (1, 6, ANY),
                (2, 6, 65534),
                (4, 4, ANY),
                (0x10, 6, ANY),
                (0x20, 4, ANY),
            ],
        );
        let e = below(d.path(), &h, me()).unwrap_err();
        assert_eq!(e.at, h);
        assert!(e.why.contains("uid 65534") && e.why.contains("ACL"), "{e}");
        // the mask takes the write away: sound
        set_acl(
            &h,
            &[
                (1, 6, ANY),
                (2, 6, 65534),
                (4, 4, ANY),
                (0x10, 4, ANY),
                (0x20, 4, ANY),
            ],
        );
        assert_eq!(below(d.path(), &h, me()), Ok(()));
        // reading only, for a user and a group: sound
        set_acl(
            &h,
            &[
                (1, 6, ANY),
                (2, 4, 65534),
                (4, 4, ANY),
                (8, 4, 65534),
                (0x10, 6, ANY),
                (0x20, 4, ANY),
            ],
        );
        assert_eq!(below(d.path(), &h, me()), Ok(()));
        // a named group that writes
        set_acl(
            &h,
            &[
                (1, 6, ANY),
                (4, 4, ANY),
                (8, 6, 65534),
                (0x10, 6, ANY),
                (0x20, 4, ANY),
            ],
        );
        let e = below(d.path(), &h, me()).unwrap_err();
        assert!(e.why.contains("group") && e.why.contains("ACL"), "{e}");
        std::fs::remove_file(&h).unwrap();
        // the directory: setfacl -m u:nobody:rwx a
        set_acl(
            &a,
            &[
                (1, 7, ANY),
                (2, 7, 65534),
                (4, 5, ANY),
                (0x10, 7, ANY),
                (0x20, 5, ANY),
            ],
        );
        let e = below(d.path(), &h, me()).unwrap_err();
        assert_eq!(e.at, a, "{e}");
        let e = check_read_as(&a.join("p.yaml"), me(), d.path().parent()).unwrap_err();
        assert_eq!(e.at, a, "{e}");
    }

    #[test]
    fn a_link_on_the_way_is_followed_and_its_target_judged() {
        let d = tempfile::tempdir().unwrap();
        let real = d.path().join("real");
        let open = d.path().join("open");
        std::fs::create_dir(&real).unwrap();
        std::fs::create_dir(&open).unwrap();
        std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o755)).unwrap();
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).unwrap();
        let to_real = d.path().join("to-real");
        let to_open = d.path().join("to-open");
        std::os::unix::fs::symlink("real", &to_real).unwrap();
        std::os::unix::fs::symlink(&open, &to_open).unwrap();
        assert_eq!(below(d.path(), &to_real.join("h.jsonl"), me()), Ok(()));
        let e = below(d.path(), &to_open.join("h.jsonl"), me()).unwrap_err();
        assert_eq!(e.at, open, "{e}");
        // a link up and back down resolves as the kernel does
        let e = below(d.path(), &to_real.join("../open/h.jsonl"), me()).unwrap_err();
        assert_eq!(e.at, open, "{e}");
    }

    /// A user of no account here, with `groups`.
    fn reader(uid: u32, gid: u32, groups: &'static [u32]) -> Reader {
        Reader { uid, gid, groups }
    }

    fn chmod(p: &Path, mode: u32) {
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap();
    }

    /// A temporary directory everyone may search, holding `private/p.yaml` (0644, root's).
    fn private_file() -> (tempfile::TempDir, PathBuf, PathBuf) {
        let d = tempfile::tempdir().unwrap();
        chmod(d.path(), 0o755);
        let dir = d.path().join("private");
        std::fs::create_dir(&dir).unwrap();
        let f = dir.join("p.yaml");
        std::fs::write(&f, b"name: x\n").unwrap();
        chmod(&f, 0o644);
        (d, dir, f)
    }

    #[test]
    fn a_readable_file_in_a_directory_the_reader_cannot_search_is_refused_naming_it() {
        let (_d, dir, f) = private_file();
        let alice = reader(4242, 4242, &[]);
        chmod(&dir, 0o700);
        let e = readable_by(&f, alice).unwrap_err();
        assert_eq!(e.at, dir, "{e}");
        assert!(
            e.why.contains("not searchable by uid 4242 (mode 700)") && e.why.contains("(uid 0)'s"),
            "{e}"
        );
        // through a relative link of root's to it: the directory all the same
        let link = dir.parent().unwrap().join("to-p.yaml");
        std::os::unix::fs::symlink("private/p.yaml", &link).unwrap();
        assert_eq!(readable_by(&link, alice).unwrap_err().at, dir);
        chmod(&dir, 0o711);
        assert_eq!(readable_by(&f, alice), Ok(()));
        assert_eq!(readable_by(&link, alice), Ok(()));
        // the group's bits decide for a member, even where the others' would let them in
        std::os::unix::fs::chown(&dir, None, Some(4343)).unwrap();
        chmod(&dir, 0o701);
        assert_eq!(readable_by(&f, alice), Ok(()));
        let e = readable_by(&f, reader(4242, 4343, &[])).unwrap_err();
        assert_eq!(e.at, dir, "{e}");
        // the owner's bits for the owner
        std::os::unix::fs::chown(&dir, Some(4242), None).unwrap();
        chmod(&dir, 0o075);
        let e = readable_by(&f, alice).unwrap_err();
        assert_eq!(e.at, dir, "{e}");
    }

    #[test]
    fn a_supplementary_group_lets_its_member_search_and_read() {
        let (_d, dir, f) = private_file();
        std::os::unix::fs::chown(&dir, None, Some(4343)).unwrap();
        chmod(&dir, 0o750);
        let staff = reader(4242, 4242, &[4242, 4343]);
        assert_eq!(readable_by(&f, staff), Ok(()));
        let e = readable_by(&f, reader(4242, 4242, &[4242])).unwrap_err();
        assert_eq!(e.at, dir, "{e}");
        // the file itself, 0640 root:staff
        std::os::unix::fs::chown(&f, None, Some(4343)).unwrap();
        chmod(&f, 0o640);
        assert_eq!(readable_by(&f, staff), Ok(()));
        let opened = std::fs::metadata(&f).unwrap();
        assert_eq!(readable_file(&f, &opened, staff), Ok(()));
        chmod(&dir, 0o755);
        let e = readable_by(&f, reader(4242, 4242, &[4242])).unwrap_err();
        assert_eq!(e.at, f, "{e}");
        assert!(e.why.contains("not readable by uid 4242 (mode 640)"), "{e}");
    }

    #[test]
    fn an_access_acl_on_a_directory_lets_in_whom_it_names_as_far_as_its_mask_allows() {
        const ANY: u32 = u32::MAX;
        let (_d, dir, f) = private_file();
        chmod(&dir, 0o700);
        // setfacl -m u:4242:x private
        set_acl(
            &dir,
            &[
                (1, 7, ANY),
                (2, 1, 4242),
                (4, 0, ANY),
                (0x10, 1, ANY),
                (0x20, 0, ANY),
            ],
        );
        assert_eq!(readable_by(&f, reader(4242, 4242, &[])), Ok(()));
        let e = readable_by(&f, reader(4243, 4243, &[])).unwrap_err();
        assert_eq!(e.at, dir, "{e}");
        assert!(e.why.contains("(mode 710+)"), "{e}");
        // the mask takes it away
        set_acl(
            &dir,
            &[
                (1, 7, ANY),
                (2, 1, 4242),
                (4, 0, ANY),
                (0x10, 0, ANY),
                (0x20, 0, ANY),
            ],
        );
        assert_eq!(
            readable_by(&f, reader(4242, 4242, &[])).unwrap_err().at,
            dir
        );
        // a named group, for a supplementary member
        set_acl(
            &dir,
            &[
                (1, 7, ANY),
                (4, 0, ANY),
                (8, 5, 4343),
                (0x10, 5, ANY),
                (0x20, 0, ANY),
            ],
        );
        assert_eq!(readable_by(&f, reader(4242, 4242, &[4343])), Ok(()));
        assert_eq!(
            readable_by(&f, reader(4242, 4242, &[])).unwrap_err().at,
            dir
        );
    }

    #[test]
    fn root_as_the_reader_reads_everything() {
        let (_d, dir, f) = private_file();
        chmod(&dir, 0o700);
        std::os::unix::fs::chown(&f, Some(4242), Some(4242)).unwrap();
        chmod(&f, 0o600);
        let root = reader(0, 0, &[]);
        assert_eq!(readable_by(&f, root), Ok(()));
        chmod(&dir, 0o000);
        assert_eq!(readable_by(&f, root), Ok(()));
    }

    #[test]
    fn the_groups_naming_a_user_are_read_from_a_group_file() {
        let d = tempfile::tempdir().unwrap();
        let g = d.path().join("group");
        std::fs::write(
            &g,
            "root:x:0:\nstaff:x:50:bob,alice\nalicia:x:60:alicia\nwheel:x:10:alice\n",
        )
        .unwrap();
        assert_eq!(groups_naming(g.to_str().unwrap(), "alice"), vec![50, 10]);
        assert_eq!(
            groups_naming(g.to_str().unwrap(), "carol"),
            Vec::<u32>::new()
        );
    }
}
