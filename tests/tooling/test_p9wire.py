"""tests/p9raw.py's framing is the codec's: the requests it sends, built by
tests/p9wire.rs (the servers' codec, solutions/27-9p-protocol/p9.rs, for
the host), decode by that codec to what p9raw meant; what it makes by hand
(malformed frames, types the codec has not) is refused for the reason it
is sent; and when the codec changes, p9raw follows."""

import errno
import importlib
import os
import re
import shutil
import subprocess
import sys

import pytest
from conftest import REPO

from rkw import venv

BUILD = os.path.join(REPO, "scripts", "build-p9wire.sh")


@pytest.fixture(scope="module")
def p9raw():
    """p9raw.py, on the codec as the working tree has it."""
    subprocess.run([BUILD], check=True)
    sys.path.insert(0, os.path.join(REPO, "tests"))
    try:
        yield importlib.import_module("p9raw")
    finally:
        sys.path.remove(os.path.join(REPO, "tests"))


# One request of each kind the codec has, with its fields in the order of
# the codec's structs; odd strings (a NUL, empty, not ASCII) and numbers at
# their limits.
REQUESTS = [
    ("version", 65536, b"9P2000.L"),
    ("auth", 5, b"u", b"", 0),
    ("attach", 1, 0xFFFFFFFF, b"root", b"", 1000),
    ("flush", 0xFFFF),
    ("walk", 1, 2),
    ("walk", 1, 2, b"d", b"", b"a\0b", "ünï".encode(), *[b".."] * 12),
    ("lopen", 2, 0o1000),
    ("read", 9, (1 << 64) - 1, 1 << 30),
    ("readdir", 11, 5, 300),
    ("getattr", 6, 0x7FF),
    ("readlink", 7),
    ("statfs", 1),
    ("xattrwalk", 1, 10, b"user.x"),
    ("clunk", 999),
]


@pytest.mark.parametrize("request_", REQUESTS, ids=lambda r: r[0])
def test_a_request_decodes_to_its_fields(p9raw, request_):
    data = p9raw.frame(request_, 7)
    assert p9raw.CODEC.decode(data, len(data)) == (request_[0], 7, *request_[1:])
    assert data[4] == getattr(p9raw, "T" + request_[0].upper())


def test_a_request_the_codec_would_not_make_is_refused(p9raw):
    with pytest.raises(ValueError, match=r": TooManyWalkElements\(17\)$"):
        p9raw.frame(("walk", 1, 2, *["d"] * 17), 1)
    with pytest.raises(ValueError, match=r": out of range: 65536$"):
        p9raw.frame(("flush", 65536), 1)


def test_the_hand_made_frames_fail_as_they_are_meant_to(p9raw):
    def refusal(request, msize=1 << 20):
        with pytest.raises(ValueError) as e:
            p9raw.CODEC.decode(p9raw.frame(request, 3), msize)
        return str(e.value).rsplit(": ", 1)[1]

    assert refusal(p9raw.twalk_truncated(1, 12)) == "Truncated"
    assert refusal(p9raw.twalk_too_long(1, 12)) == "TooManyWalkElements(17)"
    # The server answers these EROFS or EOPNOTSUPP: the codec has no such
    # requests.
    assert refusal(p9raw.tmkdir(1, "x", 0o755, 0)) == f"UnknownType({p9raw.TMKDIR})"
    assert refusal(p9raw.twrite(1, 0, b"x" * 60000)) == f"UnknownType({p9raw.TWRITE})"
    assert refusal((p9raw.TUNKNOWN, b"")) == f"UnknownType({p9raw.TUNKNOWN})"
    # The headers alone (oversized): beyond msize, or below the header.
    for size, why in ((1 << 20, "TooLarge { size: 1048576, msize: 8192 }"), (0, "BadSize(0)"), (6, "BadSize(6)")):
        with pytest.raises(ValueError, match=re.escape(f": {why}") + "$"):
            p9raw.CODEC.decode(p9raw.header(size, p9raw.TWALK, 78), 8192)


def test_the_errnos_are_linux_errnos(p9raw):
    """An oracle the codec does not write: Python's errno module (Linux's
    numbers on Linux)."""
    names = [n for n in p9raw.CODEC.constants if n.startswith("E")]
    assert len(names) >= 15
    assert {n: p9raw.CODEC.constants[n] for n in names} == {n: getattr(errno, n) for n in names}


def test_the_types_are_linux_v9fs_types(p9raw):
    """An oracle the codec does not write: the kernel's enum p9_msg_t
    (include/net/9p/9p.h of the source make setup unpacked), for the types
    of the codec and the two p9raw adds; 200 is none of them."""
    cache = os.path.dirname(venv())
    try:
        with open(os.path.join(cache, "src", "current-version")) as f:
            header = os.path.join(cache, "src", f"linux-source-{f.read().strip()}", "include", "net", "9p", "9p.h")
        with open(header) as f:
            enum = re.search(r"enum p9_msg_t \{(.*?)\};", f.read(), re.S).group(1)
    except OSError:
        pytest.skip("no kernel source: make setup unpacks it")
    linux, n = {}, -1
    for name, value in re.findall(r"^\s*P9_(\w+)(?:\s*=\s*(\d+))?,", enum, re.M):
        n = int(value) if value else n + 1
        linux[name] = n
    types = {n: v for n, v in p9raw.CODEC.constants.items() if re.fullmatch(r"[TR][A-Z]+", n)}
    types.update(TMKDIR=p9raw.TMKDIR, TWRITE=p9raw.TWRITE)
    assert len(types) >= 27
    assert types == {n: linux.get(n) for n in types}
    assert p9raw.TUNKNOWN not in linux.values()


def test_p9raw_follows_a_changed_codec(tmp_path):
    """A scratch copy of the codec with TWALK and EPROTO renumbered: p9raw
    frames its walks, the codec's and its hand-made truncated one, with the
    new type, and expects the new errno (before p9wire, p9raw typed its own
    110 and 71, and its frames were no longer the server's)."""
    for d in ("solutions/27-9p-protocol", "solutions/lib/p9"):
        shutil.copytree(os.path.join(REPO, d), tmp_path / d)
    (tmp_path / "tests").mkdir()
    shutil.copy(os.path.join(REPO, "tests", "p9wire.rs"), tmp_path / "tests")
    for name, old, new in (("frame.rs", "TWALK: u8 = 110;", "TWALK: u8 = 112;"),
                           ("error.rs", "EPROTO: u32 = 71;", "EPROTO: u32 = 72;")):
        f = tmp_path / "solutions/lib/p9" / name
        text = f.read_text()
        assert old in text
        f.write_text(text.replace(old, new))
    binary = tmp_path / "p9wire"
    subprocess.run([BUILD, tmp_path / "tests/p9wire.rs", binary], check=True)
    out = subprocess.run(
        [sys.executable, "-c", "import p9raw as p; print(p.frame(('walk', 1, 2, 'd'), 1)[4], "
         "p.frame(p.twalk_truncated(1, 2), 1)[4], p.EPROTO, p.CODEC.decode(p.frame(('walk', 1, 2, 'd'), 1), 8192))"],
        cwd=os.path.join(REPO, "tests"), env=dict(os.environ, RKW_P9WIRE=str(binary)),
        capture_output=True, text=True, check=True,
    ).stdout
    assert out.split(" ", 3) == ["112", "112", "72", "('walk', 1, 1, 2, b'd')\n"]
