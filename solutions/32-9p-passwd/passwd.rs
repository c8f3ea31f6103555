// SPDX-License-Identifier: GPL-2.0

//! Finding a user in a passwd file (`name:password:uid:gid:gecos:home:shell`,
//! one user a line).
//!
//! The kernel has no user database: a user name means nothing to it, and it
//! cannot tell whether uid 4242 "exists". User space decides, through
//! `/etc/passwd` (diod calls `getpwuid` and `getpwnam`). r9p reads the same
//! file, through the VFS (`user.rs`), and looks the user of a `Tattach` up
//! here. This file uses `core` only.
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
    passwd
        .split(|&c| c == b'\n')
        .filter_map(parse_line)
        .find(|account| match who {
            Who::Uid(uid) => account.uid == uid,
            Who::Name(wanted) => account.name == wanted,
        })
}

/// The account of one line.
fn parse_line(line: &[u8]) -> Option<Account<'_>> {
    let mut fields = line.split(|&c| c == b':');
    let name = fields.next()?;
    let _password = fields.next()?;
    let uid = decimal(fields.next()?)?;
    let gid = decimal(fields.next()?)?;
    if name.is_empty() || name.first() == Some(&b'#') {
        return None;
    }
    Some(Account { name, uid, gid })
}

/// A decimal number that fits a `u32` (`-1`, `0x10`, `99999999999`: `None`).
pub(crate) fn decimal(s: &[u8]) -> Option<u32> {
    if s.is_empty() || !s.iter().all(u8::is_ascii_digit) {
        return None;
    }
    s.iter().try_fold(0u32, |n, &d| {
        n.checked_mul(10)?.checked_add(u32::from(d - b'0'))
    })
}
// ANCHOR_END: find
