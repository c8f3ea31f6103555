// SPDX-License-Identifier: GPL-2.0

//! A user's groups, from a group file (`name:password:gid:user,user,...`,
//! one group a line), as `initgroups(3)` finds them.
//!
//! diod, before it acts for a user, calls `initgroups()`: the user's
//! primary group (from the passwd file) and every group whose member list
//! names the user become the thread's supplementary groups, so a file that
//! one of those groups may read is readable. r9p reads the same file
//! through the VFS (`user.rs`) and finds the groups here. This file uses
//! `core` only.
#![forbid(unsafe_code)]

use crate::passwd::decimal;

// ANCHOR: groups_of
/// The most groups a user gets, the primary one included; groups past it
/// are left out (which can only refuse an access, never grant one). It
/// bounds what each attach holds: 4 bytes a group, in the user's
/// credentials (`struct group_info`), for as long as its fids live.
pub(crate) const MAX_GROUPS: usize = 32;

/// The groups of the user `name`, whose primary group is `primary`, in
/// `group` (a group file's contents): `primary` first, then the gid of each
/// group whose member list names the user, in the file's order, each gid
/// once, at most [`MAX_GROUPS`]. Lines that are not `name:pw:gid:members`
/// with a non-empty name and a decimal gid are skipped.
pub(crate) fn groups_of<'o>(
    group: &[u8],
    name: &[u8],
    primary: u32,
    out: &'o mut [u32; MAX_GROUPS],
) -> &'o [u32] {
    let member_of = group
        .split(|&c| c == b'\n')
        .filter_map(parse_line)
        .filter(|(_, members)| {
            // An empty list splits into one empty member: nobody's name.
            members
                .split(|&c| c == b',')
                .any(|m| !m.is_empty() && m == name)
        })
        .map(|(gid, _)| gid);
    let mut n = 0;
    for gid in core::iter::once(primary).chain(member_of) {
        let (taken, free) = out.split_at_mut(n);
        if taken.contains(&gid) {
            continue;
        }
        let Some(slot) = free.first_mut() else {
            break;
        };
        *slot = gid;
        n += 1;
    }
    out.split_at(n).0
}

/// The gid and the member list of one line.
fn parse_line(line: &[u8]) -> Option<(u32, &[u8])> {
    let mut fields = line.split(|&c| c == b':');
    let name = fields.next()?;
    let _password = fields.next()?;
    let gid = decimal(fields.next()?)?;
    let members = fields.next()?;
    if fields.next().is_some() || name.is_empty() || name.first() == Some(&b'#') {
        return None;
    }
    Some((gid, members))
}
// ANCHOR_END: groups_of
