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
//! Check your work with `make check STEP=32` (on the host: no VM).
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
    // TODO (exercise 1): The account of the first line that is one (what
    // `parse_line` accepts) and matches `who`: by uid for `Who::Uid`, by
    // name for `Who::Name`. The first, as `getpwuid` finds it, when two lines
    // share a uid or a name; a line that is not an account is skipped, never
    // trusted in part. The file's last line may lack its `\n`.
    // Tests (on the host: `make check STEP=32`):
    // `r9p_passwd_finds_users_by_uid_and_by_name`,
    // `r9p_passwd_skips_what_it_does_not_understand`; in stage 33, every
    // attach.
    let _ = (passwd, who);
    None
}

/// The account of one line.
fn parse_line(line: &[u8]) -> Option<Account<'_>> {
    // TODO (exercise 1): `name:password:uid:gid`, then anything (or
    // nothing): `Some(Account { name, uid, gid })`. `None` for a line with
    // fewer fields, an id that is not a `decimal`, an empty name, or a
    // comment: `#eve:x:1000:1000::/:/bin/sh` is no account of eve's, nor of
    // anyone's.
    // Tests: `r9p_passwd_skips_what_it_does_not_understand`,
    // `r9p_passwd_skips_a_commented_out_account`.
    let _ = line;
    None
}

/// A decimal number that fits a `u32` (`-1`, `0x10`, `99999999999`: `None`).
pub(crate) fn decimal(s: &[u8]) -> Option<u32> {
    // TODO (exercise 1): The value of a field of decimal digits: at least
    // one digit and nothing else (no sign, no space, no `0x`), and a value
    // that fits a `u32`. Beyond it, `None`: not the value wrapped around, as
    // uid 4294967296 would wrap to 0, which is root.
    // Tests: `r9p_passwd_decimal`; through the given `group.rs`, which reads
    // its gids with it: `r9p_group_finds_a_users_groups_like_initgroups`,
    // `r9p_group_matches_a_model`, `r9p_group_stops_at_max_groups`.
    let _ = s;
    None
}
// ANCHOR_END: find
