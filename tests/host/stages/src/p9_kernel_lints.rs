//! The codec must build as part of a kernel module: `no_std`, no `alloc`,
//! under the kernel's rustc and clippy lints (`rust_common_flags` in the
//! kernel's Makefile), and rustfmt-clean. The kernel build itself is stage
//! 17's; this compiles the same files in a tiny `no_std` crate with the same
//! flags, using Debian's compiler (the one the kernel is built with).
//!
//! For `RKW_TREE=steps` only "it compiles" is checked: a skeleton's stubs
//! may leave unused variables behind.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The kernel's `rust_common_flags` that apply here (7.3's Makefile).
pub(crate) const RUSTC_FLAGS: &[&str] = &[
    "--edition=2021",
    "--crate-type=lib",
    "-Cpanic=abort",
    "-Dnon_ascii_idents",
    "-Dunsafe_op_in_unsafe_fn",
    "-Wmissing_docs",
    "-Wrust_2018_idioms",
    "-Wunreachable_pub",
];

pub(crate) const CLIPPY_FLAGS: &[&str] = &[
    "-Wclippy::all",
    "-Wclippy::as_ptr_cast_mut",
    "-Wclippy::as_underscore",
    "-Wclippy::cast_lossless",
    "-Aclippy::collapsible_if",
    "-Aclippy::collapsible_match",
    "-Wclippy::ignored_unit_patterns",
    "-Aclippy::incompatible_msrv",
    "-Wclippy::mut_mut",
    "-Wclippy::needless_bitwise_bool",
    "-Aclippy::needless_lifetimes",
    "-Wclippy::no_mangle_with_rust_abi",
    "-Wclippy::ptr_as_ptr",
    "-Wclippy::ptr_cast_constness",
    "-Wclippy::ref_as_ptr",
    "-Wclippy::undocumented_unsafe_blocks",
    "-Aclippy::uninlined_format_args",
    "-Wclippy::unnecessary_safety_comment",
    "-Wclippy::unnecessary_safety_doc",
    "-Aclippy::unwrap_or_default",
    "-Wclippy::float_arithmetic",
];

fn stage_dir() -> PathBuf {
    Path::new(crate::REPO).join(crate::TREE).join("27-9p-protocol")
}

/// A `no_std` crate that includes the codec the way a kernel module does.
fn wrapper(name: &str) -> (PathBuf, PathBuf) {
    let body = format!(
        "#[allow(dead_code)] // a server uses only half of the codec\n\
         #[path = {:?}]\nmod p9;\n",
        stage_dir().join("p9.rs").display().to_string()
    );
    stand_in_crate(&format!("p9-kernel-lints-{name}"), &body)
}

/// A `no_std` crate in `OUT_DIR/<dir>/lib.rs`, a stand-in for a kernel
/// module crate, whose `body` includes the files under test by `#[path]`.
/// Returns the folder and the crate root.
pub(crate) fn stand_in_crate(dir: &str, body: &str) -> (PathBuf, PathBuf) {
    let dir = Path::new(env!("OUT_DIR")).join(dir);
    std::fs::create_dir_all(&dir).unwrap();
    let lib = dir.join("lib.rs");
    let code = format!("//! Stand-in for a kernel module crate.\n#![no_std]\n\n{body}");
    std::fs::write(&lib, code).unwrap();
    (dir, lib)
}

/// The crate `lib` (in `dir`) under the kernel's rustc lints: warnings are
/// errors on the solutions' tree; a skeleton's stubs may leave unused
/// variables behind, so on the steps tree it need only compile.
pub(crate) fn check_rustc_lints(dir: &Path, lib: &Path) {
    let mut args = RUSTC_FLAGS.to_vec();
    args.push(if crate::TREE == "solutions" { "-Dwarnings" } else { "-Awarnings" });
    run("/usr/bin/rustc", &args, lib, &dir.join("libstandin.rlib"));
}

/// The crate `lib` (in `dir`) under the kernel's clippy lints, on the
/// solutions' tree only (a skeleton's stubs are not clippy-clean).
pub(crate) fn check_clippy_lints(dir: &Path, lib: &Path) {
    if crate::TREE != "solutions" {
        return;
    }
    let mut args = RUSTC_FLAGS.to_vec();
    args.extend_from_slice(CLIPPY_FLAGS);
    args.push("-Dwarnings");
    run("/usr/bin/clippy-driver", &args, lib, &dir.join("libstandin.rlib"));
}

/// `file` is `core`-only code a kernel module can include: the SPDX line,
/// `#![forbid(unsafe_code)]`, and no `std`, `alloc`, `kernel`, `unsafe`,
/// `unwrap()`, `expect(` or `panic!` outside comments.
pub(crate) fn assert_core_only_and_no_unsafe(file: &Path) {
    let text = std::fs::read_to_string(file).unwrap();
    assert!(text.starts_with("// SPDX-License-Identifier: GPL-2.0\n"), "{file:?}");
    assert!(text.contains("\n#![forbid(unsafe_code)]\n"), "{file:?} forbids unsafe code");
    for (n, line) in text.lines().enumerate() {
        if line == "#![forbid(unsafe_code)]" {
            continue;
        }
        let code = line.split("//").next().unwrap();
        for banned in ["std::", "alloc::", "kernel::", "unsafe", "unwrap()", "expect(", "panic!"] {
            assert!(
                !code.contains(banned) || code.contains("core::"),
                "{}:{}: `{banned}` in core-only code: {line}",
                file.display(),
                n + 1
            );
        }
    }
}

pub(crate) fn run(tool: &str, args: &[&str], lib: &Path, out: &Path) {
    let result = Command::new(tool)
        .args(args)
        .arg(lib)
        .arg("-o")
        .arg(out)
        .output()
        .unwrap_or_else(|e| panic!("{tool}: {e} (run `make setup`)"));
    let stderr = String::from_utf8_lossy(&result.stderr);
    assert!(result.status.success() && stderr.trim().is_empty(), "{tool} says:\n{stderr}");
}

#[test]
fn p9_builds_with_the_kernel_rustc_lints() {
    let (dir, lib) = wrapper("rustc");
    check_rustc_lints(&dir, &lib);
}

#[test]
fn p9_is_clippy_clean_with_the_kernel_lints() {
    let (dir, lib) = wrapper("clippy");
    check_clippy_lints(&dir, &lib);
}

#[test]
fn p9_is_rustfmt_clean() {
    if crate::TREE != "solutions" {
        return;
    }
    let result = Command::new("/usr/bin/rustfmt")
        .args(["--edition", "2021", "--check"])
        .arg(stage_dir().join("p9.rs"))
        .output()
        .expect("/usr/bin/rustfmt (run `make setup`)");
    assert!(
        result.status.success(),
        "rustfmt --check:\n{}",
        String::from_utf8_lossy(&result.stdout)
    );
}

#[test]
fn p9_uses_core_only_and_no_unsafe() {
    let mut files = vec![stage_dir().join("p9.rs")];
    for entry in std::fs::read_dir(stage_dir().join("p9")).unwrap() {
        files.push(entry.unwrap().path());
    }
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        assert!(text.starts_with("// SPDX-License-Identifier: GPL-2.0\n"), "{file:?}");
        // The compiler holds the codec to it: the attribute covers p9/ too.
        if file.ends_with("p9.rs") {
            assert!(text.contains("\n#![forbid(unsafe_code)]\n"), "{file:?} forbids unsafe code");
        }
        for (n, line) in text.lines().enumerate() {
            if line == "#![forbid(unsafe_code)]" {
                continue;
            }
            let code = line.split("//").next().unwrap();
            for banned in ["std::", "alloc::", "kernel::", "unsafe", "unwrap()", "expect(", "panic!"]
            {
                assert!(
                    !code.contains(banned) || code.contains("core::"),
                    "{}:{}: `{banned}` in the shared codec: {line}",
                    file.display(),
                    n + 1
                );
            }
        }
    }
}
