//! Stage 32: finding a `Tattach`'s user in a passwd file (`passwd.rs`) and
//! its groups in a group file (`group.rs`), as `getpwuid`/`getpwnam` and
//! `initgroups` would: hand-written files (comments, malformed lines, ids
//! out of range), then a proptest against a model.

use crate::r9p_group::{groups_of, MAX_GROUPS};
use crate::r9p_passwd::{decimal, find, Account, Who};
use proptest::prelude::*;

const PASSWD: &[u8] = b"root:x:0:0:root:/root:/bin/sh\n\
# alice:x:7:7 is a comment\n\
broken:x:notanumber:1::/:\n\
:x:5:5:no name:/:\n\
short:x:6\n\
alice:x:1000:1000::/home/alice:/bin/sh\n\
bob:x:1001:1001::/home/bob:/bin/sh\n\
wrapped:x:4294967296:0::/:\n\
negative:x:-1:0::/:\n\
hex:x:0x10:0::/:\n\
alice:x:1002:1002:a second alice:/:\n\
nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin";

const GROUP: &[u8] = b"root:x:0:\n\
# staff:x:9:alice is a comment\n\
wheel:x:10:carol,alice\n\
staff:x:2000:carol,alice,dave\n\
broken:x:2001:alice:extra\n\
nonumber:x:abc:alice\n\
:x:2002:alice\n\
big:x:4294967296:alice\n\
prefix:x:2003:alicex,xalice,ALICE, alice\n\
again:x:2000:alice\n\
bob:x:1001:\n\
users:x:100:bob,alice";

fn account(name: &'static [u8], uid: u32, gid: u32) -> Account<'static> {
    Account { name, uid, gid }
}

#[test]
fn r9p_passwd_finds_users_by_uid_and_by_name() {
    assert_eq!(find(PASSWD, Who::Uid(0)), Some(account(b"root", 0, 0)));
    assert_eq!(find(PASSWD, Who::Uid(1000)), Some(account(b"alice", 1000, 1000)));
    assert_eq!(find(PASSWD, Who::Name(b"bob")), Some(account(b"bob", 1001, 1001)));
    assert_eq!(
        find(PASSWD, Who::Uid(65534)),
        Some(account(b"nobody", 65534, 65534)),
        "the last line, without a newline"
    );
    // The first line that matches wins, as in getpwnam.
    assert_eq!(find(PASSWD, Who::Name(b"alice")), Some(account(b"alice", 1000, 1000)));
    assert_eq!(find(PASSWD, Who::Uid(1002)), Some(account(b"alice", 1002, 1002)));
}

#[test]
fn r9p_passwd_skips_what_it_does_not_understand() {
    assert_eq!(find(PASSWD, Who::Uid(7)), None, "a comment");
    assert_eq!(find(PASSWD, Who::Name(b"# alice")), None, "a comment");
    assert_eq!(find(PASSWD, Who::Name(b"broken")), None, "a uid that is not a number");
    assert_eq!(find(PASSWD, Who::Uid(5)), None, "an empty name");
    assert_eq!(find(PASSWD, Who::Name(b"")), None, "an empty name");
    assert_eq!(find(PASSWD, Who::Name(b"short")), None, "no gid");
    // uid 4294967296 must not wrap around to root.
    assert_eq!(find(PASSWD, Who::Name(b"wrapped")), None);
    assert_eq!(find(PASSWD, Who::Name(b"negative")), None);
    assert_eq!(find(PASSWD, Who::Name(b"hex")), None);
    assert_eq!(find(PASSWD, Who::Uid(4242)), None);
    assert_eq!(find(PASSWD, Who::Name(b"mallory")), None);
    assert_eq!(find(b"", Who::Uid(0)), None);
}

#[test]
fn r9p_passwd_skips_a_commented_out_account() {
    // An account an administrator disabled by commenting it out: every
    // field of it parses, and still it is no account.
    let passwd = b"#eve:x:1000:1000:eve:/home/eve:/bin/sh\nalice:x:1000:1000::/:/bin/sh\n";
    assert_eq!(find(passwd, Who::Uid(1000)), Some(account(b"alice", 1000, 1000)));
    assert_eq!(find(passwd, Who::Name(b"#eve")), None);
}

#[test]
fn r9p_passwd_decimal() {
    assert_eq!(decimal(b"0"), Some(0));
    assert_eq!(decimal(b"007"), Some(7));
    assert_eq!(decimal(b"4294967295"), Some(u32::MAX));
    assert_eq!(decimal(b"4294967296"), None);
    assert_eq!(decimal(b"99999999999"), None);
    for bad in [&b""[..], b"-1", b"+1", b" 1", b"1 ", b"0x10", b"1e3"] {
        assert_eq!(decimal(bad), None, "{:?}", String::from_utf8_lossy(bad));
    }
}

fn groups(group: &[u8], name: &[u8], primary: u32) -> Vec<u32> {
    let mut out = [0u32; MAX_GROUPS];
    groups_of(group, name, primary, &mut out).to_vec()
}

#[test]
fn r9p_group_finds_a_users_groups_like_initgroups() {
    // The primary group first, then each group that lists the user, in the
    // file's order, each gid once (staff appears twice).
    assert_eq!(groups(GROUP, b"alice", 1000), [1000, 10, 2000, 100]);
    assert_eq!(groups(GROUP, b"bob", 1001), [1001, 100]);
    assert_eq!(groups(GROUP, b"carol", 3000), [3000, 10, 2000]);
    assert_eq!(groups(GROUP, b"dave", 3001), [3001, 2000], "the last member of a list");
    // The primary gid is not repeated when a group lists the user too.
    assert_eq!(groups(GROUP, b"alice", 2000), [2000, 10, 100]);
    assert_eq!(groups(GROUP, b"mallory", 4242), [4242], "a user in no group");
    assert_eq!(groups(b"", b"alice", 1000), [1000], "an empty group file");
}

#[test]
fn r9p_group_skips_what_it_does_not_understand() {
    let alice = groups(GROUP, b"alice", 1000);
    // A field too many, a gid that is not a number or does not fit, an
    // empty name, a comment: none of these lines counts.
    for gid in [2001, 2002, 9, 0] {
        assert!(!alice.contains(&gid), "{gid} in {alice:?}");
    }
    // Members are matched whole: not a prefix, a suffix, another case, or
    // with a space.
    assert!(!alice.contains(&2003));
    // An empty name is nobody's: the empty member of an empty list does
    // not make every group the group of "".
    assert_eq!(groups(GROUP, b"", 5), [5]);
}

#[test]
fn r9p_group_stops_at_max_groups() {
    let file: Vec<u8> = (0..100u32)
        .flat_map(|g| format!("g{g}:x:{}:alice\n", 5000 + g).into_bytes())
        .collect();
    let got = groups(&file, b"alice", 1000);
    assert_eq!(got.len(), MAX_GROUPS);
    assert_eq!(got[0], 1000);
    assert_eq!(got[1..], (5000..5000 + MAX_GROUPS as u32 - 1).collect::<Vec<_>>()[..]);
}

/// What `groups_of` should say, written the plain way.
fn model(lines: &[(String, String, u32, Vec<String>, bool)], name: &str, primary: u32) -> Vec<u32> {
    let mut out = vec![primary];
    for (gname, _, gid, members, well_formed) in lines {
        if *well_formed
            && !gname.is_empty()
            && !gname.starts_with('#')
            && members.iter().any(|m| !m.is_empty() && m == name)
            && !out.contains(gid)
        {
            out.push(*gid);
        }
    }
    out.truncate(MAX_GROUPS);
    out
}

proptest! {
    #[test]
    fn r9p_group_matches_a_model(
        lines in prop::collection::vec(
            (
                prop::sample::select(vec!["", "#c", "staff", "wheel", "g"]).prop_map(String::from),
                prop::sample::select(vec!["x", "", "*"]).prop_map(String::from),
                0u32..50,
                prop::collection::vec(
                    prop::sample::select(vec!["alice", "bob", "", "alicex", "Alice"]).prop_map(String::from),
                    0..4,
                ),
                prop::bool::weighted(0.8),
            ),
            0..80,
        ),
        name in prop::sample::select(vec!["alice", "bob", "carol", ""]),
        primary in 0u32..50,
    ) {
        let file: String = lines
            .iter()
            .map(|(gname, pw, gid, members, well_formed)| {
                let extra = if *well_formed { "" } else { ":extra" };
                format!("{gname}:{pw}:{gid}:{}{extra}\n", members.join(","))
            })
            .collect();
        let got = groups(file.as_bytes(), name.as_bytes(), primary);
        prop_assert_eq!(got, model(&lines, name, primary));
    }
}
