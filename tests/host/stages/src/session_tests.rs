//! r9p's session logic (`solutions/lib/r9p/session.rs`) over the fake VFS:
//! one program for the harness (`r9p_session_harness.rs`) per rule the
//! security review asked for, each replayed here as a deterministic check
//! (it passes on the session as it is, and breaks its invariant if the rule
//! is reverted: see the fuzz page of the book); and the session's files
//! under the kernel's lints.

use crate::p9_kernel_lints::{
    assert_core_only_and_no_unsafe, check_clippy_lints, check_rustc_lints, stand_in_crate,
};
use crate::r9p_session_harness::{run, run_traced};
use std::path::Path;

// The program's opcodes (see `r9p_session_harness::step`).
/// `Tversion` of 9P2000.L, msize 65536.
const VERSION: [u8; 3] = [0, 0, 2];
/// `Tattach fid` as user `who` (0 uid 0, 1 alice, 2 bob, 3 uid 1002, 4
/// "root", 5 "alice", 6 "carol", 7 uid 42), afid NOFID.
fn attach(fid: u8, who: u8) -> Vec<u8> {
    vec![1, fid, who, 0]
}
/// `Twalk fid newfid` of the dictionary's names (`NAMES`: 0 ".", 1 "..",
/// 2 "a", 3 "b", 4 "f", 5 "private", 6 "g", 7 "link", 8 "fifo",
/// 9 "leased", 10 "deep", 11 "d", 12 "mnt", 13 "x", 14 "proc", 15 "self",
/// 16 "cwd", 17 "hang", 18 "y", 19 "secret").
fn walk(fid: u8, newfid: u8, names: &[u8]) -> Vec<u8> {
    assert!(names.len() < 5);
    let mut op = vec![2, fid, newfid, names.len() as u8];
    op.extend_from_slice(names);
    op
}
/// `Twalk fid fid` of 16 times `d`.
fn deep_walk(fid: u8) -> Vec<u8> {
    let mut op = vec![3, fid, fid];
    op.extend_from_slice(&[0; 16]);
    op
}
/// `Tlopen fid` read-only.
fn lopen(fid: u8) -> Vec<u8> {
    vec![4, fid, 0]
}
/// `Tread fid` of 100 bytes at 0.
fn read(fid: u8) -> Vec<u8> {
    vec![5, fid, 0, 100, 0]
}
/// `Treaddir fid` from 0, 8192 bytes.
fn readdir(fid: u8) -> Vec<u8> {
    vec![6, fid, 4]
}
/// `Treadlink fid`.
fn readlink(fid: u8) -> Vec<u8> {
    vec![8, fid]
}
/// `Tgetattr fid`.
fn getattr(fid: u8) -> Vec<u8> {
    vec![7, fid]
}
/// `Tclunk fid`.
fn clunk(fid: u8) -> Vec<u8> {
    vec![10, fid]
}
/// A change of the fake (0 rename `a` into `b`, 1 swap `a` for a symlink,
/// 2 chmod, 3 useradd/userdel carol, 4 the lease).
fn mutate(what: u8) -> Vec<u8> {
    vec![12, 0, what]
}

/// The configuration byte: bit 0 `cross_mounts`, bit 1 `allow_root`.
const DEFAULT: u8 = 0;
const CROSS_MOUNTS: u8 = 1;
const ALLOW_ROOT: u8 = 2;

/// Runs `config` and `ops`; the trace, after checking every invariant held.
fn replay(config: u8, ops: &[Vec<u8>]) -> Vec<String> {
    let mut program = vec![config];
    for op in ops {
        program.extend_from_slice(op);
    }
    let (result, trace) = run_traced(&program);
    if let Err(broken) = result {
        panic!("{broken}\ntrace:\n{}", trace.join("\n"));
    }
    trace
}

/// `trace` has `line` at `index` (0-based).
#[track_caller]
fn answered(trace: &[String], index: usize, line: &str) {
    assert_eq!(
        trace.get(index).map(String::as_str),
        Some(line),
        "trace:\n{}",
        trace.join("\n")
    );
}

#[test]
fn session_serves_the_export() {
    let trace = replay(
        DEFAULT,
        &[
            VERSION.to_vec(),
            attach(0, 1),
            walk(0, 1, &[2, 4]),
            lopen(1),
            read(1),
            walk(0, 2, &[2]),
            lopen(2),
            readdir(2),
            getattr(1),
            clunk(1),
            clunk(2),
            clunk(0),
        ],
    );
    for (i, line) in [
        "TVersion: RVersion",
        "TAttach: RAttach",
        "TWalk: Rwalk 2",
        "TLopen: RLopen",
        "TRead: RRead",
        "TWalk: Rwalk 1",
        "TLopen: RLopen",
        "TReaddir: RReaddir",
        "TGetattr: RGetattr",
        "TClunk: RClunk",
    ]
    .iter()
    .enumerate()
    {
        answered(&trace, i, line);
    }
}

// ANCHOR: replays
/// Finding 10: nothing is served before `Tversion` (`EPROTO`).
#[test]
fn session_eproto_before_tversion() {
    let trace = replay(
        DEFAULT,
        &[attach(0, 1), getattr(0), VERSION.to_vec(), attach(0, 1)],
    );
    answered(&trace, 0, "TAttach: errno 71");
    answered(&trace, 1, "TGetattr: errno 71");
    answered(&trace, 3, "TAttach: RAttach");
}

/// Confinement: `..` stops at the export root, the link is not followed,
/// names with `/` or NUL are refused before the VFS sees them.
#[test]
fn session_dotdot_stays_in_the_export() {
    let trace = replay(
        DEFAULT,
        &[
            VERSION.to_vec(),
            attach(0, 1),
            walk(0, 1, &[1, 1, 19]),
            walk(0, 2, &[7]),
            readlink(2),
            lopen(2),
            walk(0, 3, &[21]),
            walk(0, 4, &[22]),
            walk(0, 5, &[2, 1, 1, 2]),
            // `a` swapped for a symlink to `/` while fid 5 is in it: `..`
            // from fid 5 is still the export root.
            mutate(1),
            walk(5, 6, &[1, 1, 19]),
            walk(0, 6, &[2, 4]),
        ],
    );
    answered(&trace, 2, "TWalk: Rwalk 2");
    answered(&trace, 4, "TReadlink: RReadlink");
    answered(&trace, 5, "TLopen: errno 40");
    answered(&trace, 6, "TWalk: errno 22");
    answered(&trace, 7, "TWalk: errno 22");
    answered(&trace, 9, "TWalk: Rwalk 2");
    answered(&trace, 10, "TWalk: Rwalk 1");
}

/// Finding 1: root acts as the anonymous user unless `allow_root`.
#[test]
fn session_root_is_squashed() {
    let squashed = replay(
        DEFAULT,
        &[VERSION.to_vec(), attach(0, 0), walk(0, 1, &[3, 6])],
    );
    answered(&squashed, 2, "TWalk: Rwalk 1");
    let by_name = replay(
        DEFAULT,
        &[VERSION.to_vec(), attach(0, 4), walk(0, 1, &[3, 6])],
    );
    answered(&by_name, 2, "TWalk: Rwalk 1");
    let root = replay(
        ALLOW_ROOT,
        &[VERSION.to_vec(), attach(0, 0), walk(0, 1, &[3, 6])],
    );
    answered(&root, 2, "TWalk: Rwalk 2");
}

/// Finding 2: a magic link is never read.
#[test]
fn session_magic_links_are_refused() {
    let trace = replay(
        CROSS_MOUNTS,
        &[
            VERSION.to_vec(),
            attach(0, 1),
            walk(0, 1, &[14, 16]),
            readlink(1),
            walk(0, 2, &[14, 15]),
            readlink(2),
        ],
    );
    answered(&trace, 3, "TReadlink: errno 95");
    answered(&trace, 5, "TReadlink: RReadlink");
}

/// Finding 3: mounts are `EXDEV` unless `cross_mounts` (the FUSE mount
/// that never answers is not touched); a FIFO is not opened; a leased file
/// is opened without waiting.
#[test]
fn session_never_blocks() {
    let trace = replay(
        DEFAULT,
        &[
            VERSION.to_vec(),
            attach(0, 1),
            walk(0, 1, &[17, 18]),
            walk(0, 1, &[12]),
            walk(0, 1, &[8]),
            lopen(1),
            walk(0, 2, &[9]),
            lopen(2),
            mutate(4),
            lopen(2),
            read(2),
        ],
    );
    answered(&trace, 2, "TWalk: errno 18");
    answered(&trace, 3, "TWalk: errno 18");
    answered(&trace, 5, "TLopen: errno 95");
    answered(&trace, 7, "TLopen: errno 11");
    answered(&trace, 8, "TLopen: RLopen");
}

/// Finding 4: a deep tree is walked within the walked-name budget.
#[test]
fn session_deep_walks_stay_within_the_budget() {
    let mut ops = vec![VERSION.to_vec(), attach(0, 1), walk(0, 1, &[10])];
    ops.extend((0..6).map(|_| deep_walk(1)));
    let trace = replay(DEFAULT, &ops);
    answered(&trace, 3, "TWalk: Rwalk 16");
    // 1 + 3 * 16 + 15 = 64 names: the 16th of the fourth walk is one too
    // many, and the fid stays where it was.
    answered(&trace, 6, "TWalk: Rwalk 15");
    answered(&trace, 8, "TWalk: Rwalk 15");
}

/// Finding 7: two file systems' equal inode numbers get distinct qids.
#[test]
fn session_qids_fold_the_device() {
    let trace = replay(
        CROSS_MOUNTS,
        &[
            VERSION.to_vec(),
            attach(0, 1),
            walk(0, 1, &[12]),
            walk(0, 2, &[2]),
            walk(0, 3, &[12, 13]),
            walk(0, 4, &[2, 4]),
        ],
    );
    answered(&trace, 4, "TWalk: Rwalk 2");
    answered(&trace, 5, "TWalk: Rwalk 2");
}

/// Finding 8: opening checks `open(2)`'s permission, as the fid's user.
#[test]
fn session_open_checks_permission() {
    let trace = replay(
        DEFAULT,
        &[
            VERSION.to_vec(),
            attach(0, 2),
            walk(0, 1, &[2, 5]),
            lopen(1),
            mutate(2),
            lopen(1),
            read(1),
            attach(2, 1),
            walk(2, 3, &[2, 5]),
            lopen(3),
        ],
    );
    answered(&trace, 3, "TLopen: errno 13");
    answered(&trace, 4, "TLopen: RLopen");
    answered(&trace, 8, "TLopen: RLopen");
}

/// Finding 9: the user database is asked at every attach.
#[test]
fn session_users_are_looked_up_at_each_attach() {
    let trace = replay(
        DEFAULT,
        &[
            VERSION.to_vec(),
            attach(0, 6),
            mutate(3),
            attach(0, 6),
            attach(1, 3),
            mutate(3),
            attach(2, 6),
            attach(3, 7),
        ],
    );
    answered(&trace, 0, "TVersion: RVersion");
    answered(&trace, 1, "TAttach: errno 13");
    answered(&trace, 2, "TAttach: RAttach");
    answered(&trace, 3, "TAttach: RAttach");
    answered(&trace, 4, "TAttach: errno 13");
    answered(&trace, 5, "TAttach: errno 13");
}
// ANCHOR_END: replays

/// The fuzzer's first find in the harness itself: raw bytes that decode
/// into a `Tversion` start a new session, which the model must follow
/// (it took the fids the session had just forgotten for held).
#[test]
fn session_raw_frames_keep_the_model_in_step() {
    let program = [
        0x40, 0x00, 0x00, 0x00, 0x02, 0x1d, 0x02, 0x04, 0x19, 0x01, 0x7e, 0x01, 0x91, 0x00, 0x02,
        0x01, 0x1d, 0xff, 0x05, 0x08, 0x64, 0x00, 0x02, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00,
        0x00, 0x00, 0x01, 0x91, 0x00, 0x02, 0x01, 0x91, 0x00, 0x02, 0x01, 0x1d, 0x05, 0x08, 0x64,
        0x01, 0x1d, 0x64, 0x00, 0x02, 0x00, 0x01, 0x91, 0x00, 0x02, 0x01, 0x1d, 0x05, 0x08, 0x64,
        0x00, 0x02, 0x05, 0x08, 0x00,
    ];
    let (result, trace) = run_traced(&program);
    assert!(result.is_ok(), "{result:?}\ntrace:\n{}", trace.join("\n"));
    assert!(
        trace.iter().any(|l| l == "Traw: RVersion"),
        "{}",
        trace.join("\n")
    );
}

/// Any bytes are a program: a few fixed ones, and the empty one.
#[test]
fn session_any_bytes_run() {
    for program in [
        &[][..],
        &[0xff; 64],
        &[
            7, 0, 0, 2, 3, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15,
        ],
    ] {
        run(program).unwrap();
    }
}

/// The session's files, as a kernel module includes them beside the codec.
fn session_wrapper(name: &str) -> (std::path::PathBuf, std::path::PathBuf) {
    let p9 = Path::new(crate::REPO).join("solutions/27-9p-protocol/p9.rs");
    let body = format!(
        "#[allow(dead_code)]\n#[path = {:?}]\nmod p9;\n#[allow(dead_code)]\n#[path = {:?}]\nmod session;\n",
        p9.display().to_string(),
        crate::R9P_SESSION_FILE
    );
    stand_in_crate(&format!("r9p-session-lints-{name}"), &body)
}

#[test]
fn session_builds_with_the_kernel_rustc_lints() {
    let (dir, lib) = session_wrapper("rustc");
    check_rustc_lints(&dir, &lib);
}

#[test]
fn session_is_clippy_clean_with_the_kernel_lints() {
    let (dir, lib) = session_wrapper("clippy");
    check_clippy_lints(&dir, &lib);
}

#[test]
fn session_is_core_only_and_rustfmt_clean() {
    let session = Path::new(crate::R9P_SESSION_FILE);
    assert_core_only_and_no_unsafe(session);
    let mut files = vec![session.to_path_buf()];
    for entry in std::fs::read_dir(session.with_extension("")).unwrap() {
        files.push(entry.unwrap().path());
    }
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        for banned in [
            "std::", "alloc::", "kernel::", "unsafe {", "unwrap()", "expect(", "panic!",
        ] {
            assert!(
                !text
                    .lines()
                    .any(|l| l.split("//").next().unwrap().contains(banned)),
                "{file:?}: {banned}"
            );
        }
    }
    let result = std::process::Command::new("/usr/bin/rustfmt")
        .args(["--edition", "2021", "--check"])
        .args(&files)
        .output()
        .expect("/usr/bin/rustfmt");
    assert!(
        result.status.success(),
        "rustfmt --check:\n{}",
        String::from_utf8_lossy(&result.stdout)
    );
}
