"""rkw.rust, the Rust source facts: the parser on every .rs file of the
repository, the facts of a few files checked by hand, and the masking of
what hand-written lexers get wrong."""

import os
import re
import subprocess

import pytest
from conftest import REPO

from rkw import rust

FILES = subprocess.run(["git", "-C", REPO, "ls-files", "*.rs"], capture_output=True, text=True,
                       check=True).stdout.split()


def facts(rel):
    return rust.parse(os.path.join(REPO, rel))


def test_there_are_rust_files():
    assert len(FILES) > 200


@pytest.mark.parametrize("rel", FILES)
def test_parses_without_error_nodes(rel):
    src = facts(rel)
    assert src.errors() == [], f"{rel}: ERROR or MISSING nodes at rows {src.errors()}"
    masked = src.masked()
    assert len(masked) == len(src.text)
    assert [i for i, c in enumerate(masked) if c == "\n"] == [i for i, c in enumerate(src.text) if c == "\n"]


@pytest.mark.parametrize("rel", FILES)
def test_anchor_markers_are_comments(rel):
    """mdbook takes any line with `ANCHOR:` for a marker: in the Rust
    sources every such line is a comment (never a string), so the book's
    text-based handling of anchors and the parser agree."""
    src = facts(rel)
    text_markers = [(n, m.group(1), m.group(2)) for n, line in enumerate(src.lines) for m in rust.ANCHOR.finditer(line)]
    assert src.anchors() == text_markers


# ---- masking -------------------------------------------------------------------------
def masked(code):
    return rust.Source(code).masked()


def test_nested_block_comments():
    code = "fn f() { /* a /* b { */ c } */ x(); }\n"
    assert masked(code) == "fn f() {" + " " * 23 + "x(); }\n"


def test_raw_strings():
    code = 'fn f() { let s = r#"a " } // "#; let t = br"{"; g(s, t); }\n'
    m = masked(code)
    assert "}" not in m[10:45] and "//" not in m
    assert m.endswith("g(s, t); }\n")
    assert m.count("{") == 1 and m.count("}") == 1


def test_char_literals_and_lifetimes():
    code = "fn f<'a>(x: &'a u8) -> char { let q = '\\''; let b = b'\"'; if *x > 0 { '{' } else { '}' } }\n"
    m = masked(code)
    assert "<'a>" in m and "&'a u8" in m  # lifetimes are code
    assert m.count("{") == 3 and m.count("}") == 3  # the brace chars are blanked
    assert '"' not in m and "\\" not in m


def test_strings_escapes_and_c_strings():
    code = 'fn f() { g("a \\" } b", c"x}y"); } // } "\n'
    assert masked(code) == "fn f() { g(" + " " * 10 + "," + " " * 7 + "); }" + " " * 7 + "\n"


def test_doc_comments_keep_newlines():
    code = "/// doc {\n//! inner }\nfn f() {}\n"
    assert masked(code) == "         \n           \nfn f() {}\n"


def test_offsets_are_characters_not_bytes():
    code = "// naïve — ✓\nfn f() { g('é', \"ü\") }\n"
    src = rust.Source(code)
    assert src.masked() == "            \nfn f() { g(   ,    ) }\n"
    assert src.items() == [(1, 1, "fn")]


# ---- facts of hand-checked files ---------------------------------------------------------
def test_unsafe_sites_of_rmisc():
    sites = facts("solutions/03-miscdev/rmisc.rs").unsafe_sites()
    assert [(u.kind, u.decl, u.row + 1) for u in sites] == [("decl", "(uninit) static", 68), ("block", None, 101)]
    decl, block = sites
    assert decl.reason.strip().startswith("`RMiscModule::init` calls `BUFFER.init()` before it registers")
    assert (decl.top + 1, decl.last + 1) == (66, 68)
    assert block.reason.strip() == "Called once, before the device (the only user of `BUFFER`) exists."
    assert (block.top + 1, block.last + 1) == (99, 101)


def test_unsafe_fn_and_impl_and_fn_pointer_type():
    code = (
        "/// Does it.\n///\n/// # Safety\n///\n/// `p` is valid.\nunsafe extern \"C\" fn f(p: *mut u8) {}\n"
        "// SAFETY: nothing to share.\nunsafe impl Send for X {}\n"
        "fn g() { let h = f as unsafe extern \"C\" fn(*mut u8); }\n"
        "unsafe impl Sync for Y {}\n"
    )
    sites = rust.Source(code).unsafe_sites()
    assert [(u.kind, u.row, u.reason) for u in sites] == [
        ("fn", 5, "`p` is valid."), ("impl", 7, " nothing to share."), ("impl", 9, None)]


def test_todos_and_anchors_of_the_hello_skeleton():
    src = facts("steps/01-hello/rhello.rs")
    assert [(row + 1, n) for row, n, _ in src.todos()] == [(32, 1), (47, 2)]
    anchors = src.anchors()
    assert ("ANCHOR", "init") in [(k, n) for _, k, n in anchors]
    assert [(row + 1, k, n) for row, k, n in anchors][:2] == [(11, "ANCHOR", "module"), (19, "ANCHOR_END", "module")]


def test_mod_decls_with_path():
    decls = facts("solutions/35-9p-async-reads/" + next(
        f for f in sorted(os.listdir(os.path.join(REPO, "solutions/35-9p-async-reads")))
        if f.endswith(".rs") and "mod executor;" in open(os.path.join(REPO, "solutions/35-9p-async-reads", f)).read()
    )).mod_decls()
    by_name = {d.name: d for d in decls}
    assert by_name["executor"].path == "../../solutions/23-executor/executor.rs"
    assert by_name["executor"].row + 1 == 35 and by_name["executor"].top
    assert by_name["queue"].path == "../../solutions/lib/kshim/owned_queue.rs"


def test_mod_decls_top_level_and_nested():
    code = '#[path = "a/x.rs"]\n#[allow(dead_code)]\nmod x;\nmod y;\nmod z { mod w; }\nmod inline {}\n'
    assert [tuple(d) for d in rust.Source(code).mod_decls()] == [
        ("x", "a/x.rs", 2, True), ("y", None, 3, True), ("w", None, 4, False)]
    assert rust.Source(code).path_attrs() == {0: "a/x.rs"}


def test_items_uses_and_comment_rows():
    code = (
        "use a::{\n    b,\n};\n"          # rows 0-2
        "// a comment\n"                   # 3
        "#[inline]\n"                      # 4
        "pub(crate) fn f(\n    x: u8,\n) -> u8 {\n    *y = x; // set\n    x\n}\n"  # 5-10
        "impl A {\n    fn g() {}\n}\n"      # 11-13
        "m! { impl B for C { fn h() {} } }\n"  # 14: a macro's input is not an item
    )
    src = rust.Source(code)
    assert src.items() == [(5, 10, "fn"), (11, 13, "impl"), (12, 12, "fn")]
    assert src.use_rows() == {0, 1, 2}
    assert src.comment_rows() == {3}  # `*y = x;` is code, not a comment's `*`
