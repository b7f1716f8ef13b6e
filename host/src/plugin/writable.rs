//! Who could have written a plugin library. Loading a library runs its code, so a file or directory that
//! someone else can write is refused before it is opened. Group write is common and harmless where the group
//! is the owner's own: with umask 002, the default for users on many Linux distributions, cargo writes
//! `target/release` as mode 775 and every library in it as 775, under the user's private group (one group per
//! user, named after it, with no other member). That case is accepted; any other group write, and any world
//! write, is refused with the `chmod` that fixes it.

use std::os::unix::fs::MetadataExt;
use std::path::Path;

/// Why `path` must not be loaded, when its file or its directory is writable by someone but its owner.
pub fn writable_by_others(path: &Path) -> Option<String> {
    let dir = path.parent()?;
    [("file", path), ("directory", dir)].into_iter().find_map(|(what, p)| {
        let meta = std::fs::metadata(p).ok()?;
        let mode = meta.mode() & 0o7777;
        let world = mode & 0o002 != 0;
        let group = mode & 0o020 != 0 && !private_group(meta.uid(), meta.gid());
        (world || group).then(|| {
            let who = if world { "anyone" } else { "other members of its group" };
            format!(
                "refused: its {what} {} is writable by {who} (mode {mode:o}), so loading it could run their code; \
                 fix it with `chmod go-w {}`, or pass --allow-writable-plugins (unsafe)",
                p.display(),
                p.display()
            )
        })
    })
}

/// Whether `gid` is the private group of user `uid`: the user's primary group, with no other user in it,
/// neither as a listed member nor as another user's primary group (read from /etc/passwd and /etc/group).
fn private_group(uid: u32, gid: u32) -> bool {
    let passwd = std::fs::read_to_string("/etc/passwd").unwrap_or_default();
    let group = std::fs::read_to_string("/etc/group").unwrap_or_default();
    is_private(uid, gid, &passwd, &group)
}

fn is_private(uid: u32, gid: u32, passwd: &str, group: &str) -> bool {
    // passwd: name:x:uid:gid:...; group: name:x:gid:member,member
    let users: Vec<(&str, u32, u32)> = passwd
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split(':').collect();
            Some((*f.first()?, f.get(2)?.parse().ok()?, f.get(3)?.parse().ok()?))
        })
        .collect();
    let Some(&(owner, _, primary)) = users.iter().find(|(_, u, _)| *u == uid) else { return false };
    let shares_primary = users.iter().any(|&(_, u, g)| g == gid && u != uid);
    let listed = group.lines().find_map(|l| {
        let f: Vec<&str> = l.split(':').collect();
        (f.get(2)?.parse::<u32>().ok()? == gid).then(|| f.get(3).copied().unwrap_or(""))
    });
    let Some(members) = listed else { return false };
    let others_listed = members.split(',').any(|m| !m.trim().is_empty() && m.trim() != owner);
    primary == gid && !shares_primary && !others_listed
}

#[cfg(test)]
mod tests {
    use super::is_private;

    const PASSWD: &str = "root:x:0:0:root:/root:/bin/bash\nann:x:1000:1000::/home/ann:/bin/sh\n\
bob:x:1001:100::/home/bob:/bin/sh\ncid:x:1002:100::/home/cid:/bin/sh\n";
    const GROUP: &str = "root:x:0:\nann:x:1000:\nusers:x:100:\ndev:x:2000:ann,dan\nsolo:x:3000:ann\n";

    #[test]
    fn only_the_owners_own_group_counts_as_private() {
        assert!(is_private(1000, 1000, PASSWD, GROUP), "ann's own group, as umask 002 leaves it");
        assert!(is_private(0, 0, PASSWD, GROUP));
        assert!(!is_private(1001, 100, PASSWD, GROUP), "users: cid has it as primary group too");
        assert!(!is_private(1000, 2000, PASSWD, GROUP), "dev: dan is a member");
        assert!(!is_private(1000, 3000, PASSWD, GROUP), "not ann's primary group");
        assert!(!is_private(4242, 1000, PASSWD, GROUP), "an owner unknown to passwd");
    }
}
