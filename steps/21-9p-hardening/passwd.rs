// SPDX-License-Identifier: GPL-2.0

//! Finding a user in a passwd file (`name:password:uid:gid:gecos:home:shell`,
//! one user a line).
//!
//! The kernel has no user database: a user name means nothing to it, and it
//! cannot tell whether uid 4242 "exists". User space decides, through
//! `/etc/passwd` (diod calls `getpwuid` and `getpwnam`). r9p reads the same
//! file, through the VFS (`user.rs`), and looks the user of a `Tattach` up
//! here. This file uses `core` only.
//!
//! Check your work with `make check STEP=21`.
#![forbid(unsafe_code)]

// ANCHOR: account
/// A user of the passwd file: the numbers the server's credentials take,
/// and the name its groups list (`group.rs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Account<'a> {
    /// The user's name.
    pub(crate) name: &'a [u8],
    /// The user id.
    pub(crate) uid: u32,
    /// The primary group id.
    pub(crate) gid: u32,
}

/// The user a `Tattach` names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Who<'a> {
    /// By number: `n_uname`, which v9fs sets to the fsuid of the process
    /// that reached the mount.
    Uid(u32),
    /// By name: `uname`, used when `n_uname` is `NONUNAME` (`!0`).
    Name(&'a [u8]),
}
// ANCHOR_END: account

// ANCHOR: find
/// The account of `who` in `passwd` (a passwd file's contents); `None` if
/// there is no such user. Lines that are not `name:pw:uid:gid...` with a
/// non-empty name and decimal ids are skipped, never trusted in part.
pub(crate) fn find<'a>(passwd: &'a [u8], who: Who<'_>) -> Option<Account<'a>> {
    // TODO (exercise 1): Split `passwd` into lines (`split(|&c| c == b'\n')`),
    // keep the lines `parse_line` understands (`filter_map`), and return the
    // account of the first one that matches `who`: by uid for `Who::Uid`, by
    // name for `Who::Name`.
    // Tests: on the host, `r9p_passwd_finds_users_by_uid_and_by_name`
    // (`scripts/host-test.sh --tree steps --filter r9p`); in the VM, every
    // check that attaches (the limits checks, "attach as uid 0 (root)" and
    // the access checks after it, "mount as root (msize 65536, cache=none)"):
    // until a user is found, every Tattach is refused and the stage stops
    // after the mount.
    let _ = (passwd, who);
    None
}

/// The account of one line.
fn parse_line(line: &[u8]) -> Option<Account<'_>> {
    // TODO (exercise 1): Split the line at each `:`; the fields are name,
    // password, uid, gid (what follows does not matter). `None` if a field is
    // missing, an id is not `decimal`, the name is empty or the line is a
    // comment (starts with `#`); else `Some(Account { name, uid, gid })`.
    // Tests: as for `find`: `r9p_passwd_finds_users_by_uid_and_by_name` on
    // the host, and every check that attaches.
    let _ = line;
    None
}

/// A decimal number that fits a `u32` (`-1`, `0x10`, `99999999999`: `None`).
pub(crate) fn decimal(s: &[u8]) -> Option<u32> {
    // TODO (exercise 1): Digits only, at least one; fold them into a `u32` with
    // `checked_mul` and `checked_add`, so that a number too big is `None`
    // rather than a wrapped-around uid (uid 4294967296 must not be root).
    // Tests: on the host, `r9p_passwd_decimal` and, through `group.rs`,
    // `r9p_group_finds_a_users_groups_like_initgroups`,
    // `r9p_group_matches_a_model` and `r9p_group_stops_at_max_groups`; through
    // `find`, as for `find`.
    let _ = s;
    None
}
// ANCHOR_END: find
