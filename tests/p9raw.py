#!/usr/bin/env python3
"""A small 9P2000.L client that speaks the raw protocol to the server of
stages 28 to 30 and checks what a mount never sends.

Usage: p9raw.py PORT session  (stage 28: requests before Tversion, msize,
                               Tauth, fids reused, Tflush,
                               unknown and write-like types, a truncated
                               message, a request larger than the first 8
                               KiB, after Tversion raised msize)
       p9raw.py PORT walks  (stage 29: `..` at the root, names with a `/` or
                             a NUL, a symlink opened or walked through, walks
                             from a file, a file read; the export must hold
                             the fixture of tests/p9-lib.sh)
       p9raw.py PORT readdirs  (stage 30: a directory of 2000 entries listed
                                in small pieces, and a count too small)
       p9raw.py PORT oversized  (a frame whose size field is beyond msize,
                                 or below the 7-byte header: Rlerror EPROTO,
                                 then the close)
       p9raw.py PORT list DIR COUNT  (the names in the export's directory
                            DIR, read with Treaddir in replies of at most
                            COUNT bytes, one a line, without . and ..)
       p9raw.py PORT lease PATH  (PATH, leased by `p9raw.py hold PATH SECONDS`:
                                  Tlopen gets EAGAIN at once)
       p9raw.py PORT fifo PATH  (PATH, a FIFO in the export: Tlopen gets
                                 EOPNOTSUPP at once, the server goes on)
       p9raw.py PORT mounts [cross]  (tmpfs mounts on mnt-a and mnt-b in the
                                      export: EXDEV, or with cross, read)
       p9raw.py PORT fair  (with workers=1: a connection floods the server
                            with pipelined requests; another is answered
                            long before the flood ends: tasks take turns)
Prints "ok: N checks" and exits 0, or prints what failed and exits 1.

The requests are framed by the servers' own codec
(solutions/27-9p-protocol/p9.rs, built for the host as tests/p9wire.rs by
scripts/build-p9wire.sh, which scripts/vm.sh runs before every boot), and
so are the constants (message types, NOFID, the errnos): the framing cannot
drift from the server's. Only what the codec would not make is made here:
malformed frames and types it has not. The replies are read here, not by
the codec: a layout the codec's encoder and decoder got wrong alike would
pass unseen by a client that shares them. The independent implementation
is Linux's v9fs, which the stages' tests mount the server with."""

import errno as errnos
import os
import socket
import struct
import subprocess
import sys
import threading
import time

# Types the codec has not: a read-only server decodes no write-like request
# (it answers them EROFS before decoding), and 200 is no type at all.
TMKDIR, TWRITE, TUNKNOWN = 72, 118, 200


class Codec:
    """The workshop's 9P2000.L codec, the servers' own
    (solutions/27-9p-protocol/p9.rs), as tests/p9wire.rs serves it over a
    pipe: its constants, and requests encoded and decoded.
    scripts/build-p9wire.sh builds it on the host (scripts/vm.sh runs that
    before every boot)."""

    def __init__(self, path):
        if not os.access(path, os.X_OK):
            sys.exit(f"FAIL: {path} is missing: scripts/build-p9wire.sh builds it (scripts/vm.sh runs it before "
                     "every boot)")
        self.proc = subprocess.Popen([path], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.lock = threading.Lock()
        self.constants = {name: self.value(v) for name, v in (kv.split("=") for kv in self.proc.stdout.readline().split())}

    @staticmethod
    def value(word):
        """A number, or a string written x and its bytes in hex."""
        return bytes.fromhex(word[1:]) if word.startswith("x") else int(word)

    def ask(self, command, *fields):
        """p9wire's answer to COMMAND (a request's kind, or decode) with its
        fields (numbers, strings or bytes)."""
        line = " ".join([command] + [str(f) if isinstance(f, int) else "x" + (f.encode() if isinstance(f, str) else f).hex()
                                     for f in fields])
        with self.lock:
            self.proc.stdin.write(line + "\n")
            self.proc.stdin.flush()
            answer = self.proc.stdout.readline().rstrip("\n")
        if not answer:
            raise OSError(f"p9wire ended without answering {line[:80]}")
        if answer.startswith("! "):
            raise ValueError(f"the codec refuses {line[:80]}: {answer[2:]}")
        return answer

    def encode(self, kind, tag, *fields):
        """The frame of the request KIND ("walk", ...: the codec's Request
        variants) with its fields in the order its struct declares them."""
        return bytes.fromhex(self.ask(kind, tag, *fields))

    def decode(self, data, msize):
        """The request at the start of DATA, as the fields that encode it
        (kind, tag, fields...; strings as bytes)."""
        kind, *fields = self.ask("decode", msize, data).split()
        return (kind, *map(self.value, fields))


CODEC = Codec(os.environ.get("RKW_P9WIRE")
              or os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "build", "p9wire", "p9wire"))
# The codec's constants by their names there: TWALK, NOFID, HEADER_SIZE,
# EPROTO, ... (tests/p9wire.rs lists them).
globals().update(CODEC.constants)


def s(b):
    """A string, by hand: len[2] and its bytes (for frames the codec would
    not make)."""
    if isinstance(b, str):
        b = b.encode()
    return struct.pack("<H", len(b)) + b


def header(size, ty, tag):
    """A frame's header, size[4] type[1] tag[2], by hand."""
    return struct.pack("<IBH", size, ty, tag)


def frame(request, tag):
    """The frame of REQUEST: a request's kind and fields, ("walk", fid,
    newfid, *names), which the codec encodes; or, for a frame the codec
    would not make (a type it has not, a malformed body), a type code and
    a body made by hand."""
    if isinstance(request[0], str):
        return CODEC.encode(request[0], tag, *request[1:])
    ty, body = request
    return header(HEADER_SIZE + len(body), ty, tag) + body


# What p9raw sends on purpose malformed, or of types the codec has not.
def twalk_truncated(fid, newfid):
    """A Twalk whose nwname (5) promises names that are not there."""
    return TWALK, struct.pack("<IIH", fid, newfid, 5)


def twalk_too_long(fid, newfid):
    """A Twalk of one name more than the protocol allows."""
    names = ["d"] * (MAX_WALK_ELEMENTS + 1)
    return TWALK, struct.pack("<IIH", fid, newfid, len(names)) + b"".join(s(n) for n in names)


def tmkdir(dfid, name, mode, gid):
    """Tmkdir: dfid[4] name[s] mode[4] gid[4]."""
    return TMKDIR, struct.pack("<I", dfid) + s(name) + struct.pack("<II", mode, gid)


def twrite(fid, offset, data):
    """Twrite: fid[4] offset[8] count[4] data[count]."""
    return TWRITE, struct.pack("<IQI", fid, offset, len(data)) + data


class Conn:
    def __init__(self, port):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=20)
        self.tag = 1

    def send(self, *request, tag=None):
        """Sends REQUEST (see frame) with the next tag, or TAG; returns the
        tag and the request's type."""
        tag = self.tag if tag is None else tag
        self.tag = (self.tag + 1) % 0xFFFF
        data = frame(request, tag)
        self.sock.sendall(data)
        return tag, data[4]

    def recv(self):
        head = self.exactly(HEADER_SIZE)
        size, ty, tag = struct.unpack("<IBH", head)
        return ty, tag, self.exactly(size - HEADER_SIZE)

    def exactly(self, n):
        data = b""
        while len(data) < n:
            chunk = self.sock.recv(n - len(data))
            if not chunk:
                raise EOFError("the server closed the connection")
            data += chunk
        return data

    def exchange(self, request, tag=None):
        """(request's type, reply's type, reply's body) of REQUEST."""
        sent, ty = self.send(*request, tag=tag)
        rty, rtag, rbody = self.recv()
        if rtag != sent:
            raise AssertionError(f"reply tag {rtag} for request tag {sent}")
        return ty, rty, rbody

    def rpc(self, *request, tag=None):
        _, rty, rbody = self.exchange(request, tag)
        return rty, rbody

    def ok(self, *request):
        ty, rty, rbody = self.exchange(request)
        if rty == RLERROR:
            raise AssertionError(f"type {ty} failed with errno {struct.unpack('<I', rbody)[0]}")
        if rty != ty + 1:
            raise AssertionError(f"type {ty} answered with type {rty}")
        return rbody

    def error(self, *request):
        """The errno of the Rlerror the request gets (fails if it succeeds)."""
        ty, rty, rbody = self.exchange(request)
        if rty != RLERROR:
            raise AssertionError(f"type {ty} should fail, got type {rty}")
        return struct.unpack("<I", rbody)[0]

    def outcome(self, *request):
        """The errno of the Rlerror the request gets, or None if it succeeds."""
        rty, rbody = self.rpc(*request)
        return struct.unpack("<I", rbody)[0] if rty == RLERROR else None

    def version(self, msize=65536):
        body = self.ok("version", msize, VERSION)
        return struct.unpack("<I", body[:4])[0]

    def attach(self, fid):
        return self.ok("attach", fid, NOFID, "root", "", 0)

    def walk(self, fid, newfid, names):
        """The qids ((type, path) pairs) of a successful or partial walk."""
        body = self.ok("walk", fid, newfid, *names)
        (n,) = struct.unpack("<H", body[:2])
        return [(body[2 + 13 * i], struct.unpack("<Q", body[2 + 13 * i + 5 : 2 + 13 * i + 13])[0]) for i in range(n)]

    def getattr_qid(self, fid):
        body = self.ok("getattr", fid, GETATTR_BASIC)
        return (body[8], struct.unpack("<Q", body[13:21])[0])

    def clunk(self, fid):
        self.ok("clunk", fid)

    def readdir_all(self, fid, count):
        names, offset, calls = [], 0, 0
        while True:
            body = self.ok("readdir", fid, offset, count)
            calls += 1
            (n,) = struct.unpack("<I", body[:4])
            data = body[4 : 4 + n]
            if not data:
                return names, calls
            i = 0
            while i < len(data):
                offset = struct.unpack("<Q", data[i + 13 : i + 21])[0]
                (ln,) = struct.unpack("<H", data[i + 22 : i + 24])
                names.append(data[i + 24 : i + 24 + ln])
                i += 24 + ln


class Checks:
    """Counts the checks that held; the first that does not raises."""

    def __init__(self):
        self.n = 0

    def __call__(self, cond, what):
        if not cond:
            raise AssertionError(what)
        self.n += 1


def session():
    """Stage 28: what a server of the export's root alone must answer."""
    expect = Checks()
    # Nothing is served before a Tversion is agreed to: the session starts
    # with one.
    c = Conn(int(sys.argv[1]))
    attach_root = ("attach", 1, NOFID, "root", "", 0)
    for request, what in ((attach_root, "Tattach"), (("statfs", 1), "Tstatfs"), (("flush", 3), "Tflush")):
        got = c.outcome(*request)
        expect(got == EPROTO, f"a {what} before Tversion gets Rlerror EPROTO, got "
               + ("an answer: it was served" if got is None else f"errno {got}"))
    body = c.ok("version", 8192, "9P2000")
    expect(body[4:] == s("unknown"), f"Tversion of 9P2000 gets 'unknown': {body[4:]!r}")
    expect(c.outcome(*attach_root) == EPROTO, "a Tattach after a Tversion answered 'unknown' gets EPROTO")
    c.version(8192)
    c.attach(1)
    c.sock.close()
    c = Conn(int(sys.argv[1]))
    msize = c.version(1 << 24)
    expect(msize == 1 << 20, f"msize 16 MiB is capped to 1 MiB, got {msize}")
    msize = c.version(65536)
    expect(msize == 65536, f"msize 64 KiB is kept, got {msize}")
    expect(c.error("auth", 5, "u", "", 0) > 0, "Tauth is refused")
    c.attach(1)
    root = c.getattr_qid(1)
    expect(root[0] == QTDIR, "the root is a directory")
    # A walk of no names clones the fid: no name, no step.
    expect(c.walk(1, 2, []) == [], "a walk of no names clones the fid")
    expect(c.getattr_qid(2) == root, "the clone is the root")
    expect(c.error("attach", 1, NOFID, "root", "", 0) == EEXIST,
           "Tattach to a fid in use is refused")
    expect(c.error("walk", 1, 2) == EEXIST, "Twalk to a newfid in use is refused")
    c.clunk(2)
    expect(c.walk(1, 2, []) == [], "after Tclunk the fid number can be used again")
    expect(c.error("clunk", 999) == EBADF, "Tclunk of an unknown fid fails")
    for flags in (1, 2, 0o100, 0o1000, 0o2000):
        expect(c.error("lopen", 2, flags) == EROFS, f"Tlopen flags {flags:#o} fail with EROFS")
    expect(c.error("read", 2, 0, 10) == EBADF, "Tread on a fid not opened fails")
    expect(c.error("xattrwalk", 1, 10, "user.x") == ENODATA, "Txattrwalk: no such attribute")
    c.ok("statfs", 1)

    # Flush, unknown types, write-like types, malformed messages.
    rty, _ = c.rpc("flush", 4242)
    expect(rty == RFLUSH, "Tflush of an unknown tag gets Rflush")
    expect(c.error(TUNKNOWN, b"") == EOPNOTSUPP, "an unknown type gets Rlerror EOPNOTSUPP")
    expect(c.error(*tmkdir(1, "x", 0o755, 0)) == EROFS, "Tmkdir gets EROFS")
    expect(c.error(*twrite(1, 0, b"x")) == EROFS, "Twrite gets EROFS")
    # msize is 64 KiB now: a request of 60 KiB must be read whole, so the
    # server's input buffer must have grown beyond its first 8 KiB.
    try:
        got = c.error(*twrite(1, 0, b"x" * 60000))
    except EOFError:
        raise AssertionError("a 60 KiB Twrite (msize 64 KiB): the server closed the connection instead of "
                             "answering (does its input buffer grow to msize after Tversion?)")
    expect(got == EROFS, f"a 60 KiB Twrite (msize 64 KiB) gets EROFS, got errno {got}")
    expect(c.error(*twalk_truncated(1, 12)) == EPROTO, "a truncated Twalk gets EPROTO")
    expect(c.error(*twalk_too_long(1, 12)) == EPROTO, f"a Twalk of {MAX_WALK_ELEMENTS + 1} names gets EPROTO")
    expect(c.walk(1, 12, []) == [], "and the connection still serves")
    c.sock.close()
    print(f"ok: {expect.n} checks")


def walks():
    """Stage 29: walking, confined to the export (the fixture of
    tests/p9-lib.sh)."""
    expect = Checks()
    c = Conn(int(sys.argv[1]))
    msize = c.version(65536)
    c.attach(1)
    root = c.getattr_qid(1)

    # `..` at the root stays at the root, however often.
    qids = c.walk(1, 2, ["..", "..", ".."])
    expect(len(qids) == 3 and all(q == root for q in qids), f"'..' from the root is the root: {qids}")
    expect(c.getattr_qid(2) == root, "a fid walked to '..' of the root is the root")
    sub = c.walk(1, 3, ["d"])[0]
    expect(c.walk(3, 4, [".."]) == [root], "'..' of a subdirectory is the root")
    expect(c.walk(3, 5, [".", "..", "d", ".."]) == [sub, root, sub, root], "'.' and '..' walk as names do")

    # Names are single components. "one\0x" would reach the file `one` if
    # the name were cut at its NUL (as a C string is) instead of refused.
    for bad in ["d/big", "../etc", "/etc", "", "a\0b", "one\0x"]:
        got = c.outcome("walk", 1, 6, bad)
        expect(got in (ENOENT, EINVAL), f"the name {bad!r} is refused with ENOENT or EINVAL, got "
               + ("a walk that succeeded" if got is None else f"errno {got}"))
    expect(c.error("getattr", 6, GETATTR_BASIC) == EBADF, "a refused walk creates no fid")

    # A symlink is reported, never followed: not opened, not walked through.
    lnk = c.walk(1, 7, ["links", "out"])
    expect(len(lnk) == 2 and lnk[1][0] == QTSYMLINK, f"a symlink walks to a symlink qid: {lnk}")
    expect(c.error("lopen", 7, 0) == ELOOP, "Tlopen on a symlink fid is refused (ELOOP)")
    body = c.ok("readlink", 7)
    expect(body[2:].startswith(b"/"), f"Treadlink answers the target: {body[2:]!r}")
    partial = c.walk(1, 8, ["links", "out", "secret"])
    expect(len(partial) == 2, f"a walk through a symlink stops at the link: {len(partial)} of 3 names walked")
    expect(c.error("getattr", 8, GETATTR_BASIC) == EBADF, "a partial walk creates no fid")
    expect(c.error("walk", 7, 8, "secret") == ENOTDIR, "walking from a symlink fid fails with ENOTDIR")
    # A walk goes from a directory: from a file even '.' and '..' are refused.
    c.walk(1, 13, ["one"])
    for names in (["x"], ["."], [".."]):
        expect(c.error("walk", 13, 14, *names) == ENOTDIR, f"walking {names[0]!r} from a file fid fails with ENOTDIR")
    c.clunk(13)

    expect(c.error("walk", 1, 2, "d") == EEXIST, "Twalk to a newfid in use is refused")
    c.clunk(2)
    expect(c.walk(1, 2, ["d"]) == [sub], "after Tclunk the fid number can be used again")

    # Opening and reading a file.
    c.walk(1, 9, ["one"])
    for flags in (1, 2, 0o100, 0o1000, 0o2000):
        expect(c.error("lopen", 9, flags) == EROFS, f"Tlopen flags {flags:#o} fail with EROFS")
    c.ok("lopen", 9, 0)
    body = c.ok("read", 9, 0, 1 << 30)
    expect(body == struct.pack("<I", 1) + b"1", f"Tread of a 1-byte file with a huge count: {body!r}")
    expect(c.error("read", 3, 0, 10) == EBADF, "Tread on a fid not opened fails")
    c.sock.close()
    print(f"ok: {expect.n} checks (msize {msize})")


def readdirs():
    """Stage 30: a directory of 2000 entries, read in small pieces and
    resumed, and a count too small for one entry."""
    expect = Checks()
    c = Conn(int(sys.argv[1]))
    msize = c.version(65536)
    c.attach(1)
    c.walk(1, 11, ["many"])
    c.ok("lopen", 11, 0)
    names, calls = c.readdir_all(11, 300)
    expect(len(names) == 2002 and len(set(names)) == 2002, f"Treaddir with count 300: {len(names)} names, {len(set(names))} distinct")
    expect(calls > 100, f"... in many replies ({calls})")
    expect(c.error("readdir", 11, 0, 20) == EMSGSIZE, "Treaddir with a count too small for one entry: EMSGSIZE, not an empty (final) reply")
    names2, _ = c.readdir_all(11, msize)
    expect(sorted(names2) == sorted(names), "the same names with a large count")
    c.sock.close()
    print(f"ok: {expect.n} checks")


def oversized():
    """A frame announcing more than msize bytes cannot be answered, and the
    stream cannot be resynchronised after it: the server answers Rlerror
    EPROTO with the frame's tag, then closes the connection (the server logs
    that the connection ended with EPROTO: this is not part of main's run,
    whose log must stay quiet)."""
    c = Conn(int(sys.argv[1]))
    msize = c.version(8192)
    c.sock.sendall(header(1 << 20, TWALK, 77))
    try:
        rty, rtag, rbody = c.recv()
    except EOFError:
        raise AssertionError(f"a frame of 1 MiB (msize {msize}): the server closed the connection without an Rlerror")
    if (rty, rtag) != (RLERROR, 77) or struct.unpack("<I", rbody[:4])[0] != EPROTO:
        raise AssertionError(f"a frame of 1 MiB (msize {msize}): got type {rty} tag {rtag} {rbody.hex()}, "
                             f"not Rlerror EPROTO with tag 77")
    if c.sock.recv(1) != b"":
        raise AssertionError("after the Rlerror the connection stays open")
    c.sock.close()
    # A size field below the 7-byte header (size, type, tag) can never be a
    # frame either: one Rlerror EPROTO, then the close. A server that takes
    # such a frame as a request answers it and consumes 0 to 6 bytes: with
    # size 0 it answers the same bytes forever.
    for size in (0, 1, 6):
        c = Conn(int(sys.argv[1]))
        c.version(8192)
        c.sock.settimeout(5)
        c.sock.sendall(header(size, TWALK, 78))
        replies = []
        try:
            while len(replies) < 10:
                rty, rtag, rbody = c.recv()
                replies.append((rty, rtag, rbody[:4]))
        except EOFError:
            pass
        except socket.timeout:
            raise AssertionError(f"a frame of size {size} (below the 7-byte header): after {len(replies)} "
                                 "replies the connection stays open")
        finally:
            c.sock.close()
        if len(replies) != 1 or replies[0][0] != RLERROR or struct.unpack("<I", replies[0][2])[0] != EPROTO:
            more = " or more" if len(replies) == 10 else ""
            raise AssertionError(f"a frame of size {size} (below the 7-byte header) must get one Rlerror EPROTO, "
                                 f"then the close; it got {len(replies)}{more} replies: {replies[:3]}")
    print("ok: Rlerror EPROTO with the frame's tag, then the connection closed (sizes 1 MiB, 0, 1 and 6)")


def list_dir():
    """Lists the export's directory sys.argv[3] in pieces of sys.argv[4]
    bytes: each Treaddir resumes from the offset of the last entry before."""
    c = Conn(int(sys.argv[1]))
    c.version(65536)
    c.attach(1)
    c.walk(1, 2, [sys.argv[3]])
    c.ok("lopen", 2, 0)
    names, _ = c.readdir_all(2, int(sys.argv[4]))
    for name in names:
        if name not in (b".", b".."):
            print(name.decode(errors="replace"))
    c.sock.close()


def fair(requests=30000):
    """Run with one worker (workers=1). A flood connection sends `requests`
    pipelined Tclunk requests (an 11-byte Rlerror each) from one thread and
    reads the answers in another, so that the server neither runs out of
    requests nor waits to write its answers: the flood's task never has to
    wait. Once 1000 are answered, a second connection sends Tversion. The
    one worker answers it only when the flood's task lets other tasks have a
    turn (yield_now every TURNS requests): that must be long before the
    flood ends."""
    port = int(sys.argv[1])
    flood, other = Conn(port), Conn(port)
    flood.version(8192)
    other.version(8192)
    flood.sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 1 << 20)
    data = b"".join(frame(("clunk", 999), 1 + i) for i in range(100)) * (requests // 100)
    answered = [0]
    rlerror = HEADER_SIZE + 4  # ecode[4]

    def reader():
        got = 0
        while got < requests * rlerror:
            chunk = flood.sock.recv(1 << 20)
            if not chunk:
                break
            got += len(chunk)
            answered[0] = got // rlerror

    threads = [threading.Thread(target=reader), threading.Thread(target=flood.sock.sendall, args=(data,))]
    for t in threads:
        t.start()
    while answered[0] < 1000 and threads[0].is_alive():
        time.sleep(0.001)
    other.version(8192)
    at = answered[0]
    for t in threads:
        t.join()
    if answered[0] != requests:
        raise AssertionError(f"the flood got {answered[0]} of {requests} answers")
    if at >= requests // 2:
        raise AssertionError(f"the second connection was answered only when the flood had {at} of {requests} "
                             "answers: the flood's task kept the one worker")
    print(f"ok: answered while the flood had {at} of {requests} answers")


def hold_lease():
    """p9raw.py hold FILE SECONDS: takes a write lease on FILE (F_SETLEASE
    F_WRLCK), prints "ready", and keeps it SECONDS: it ignores SIGIO, the
    kernel's request to give it up, so an open by anyone else waits for
    lease-break-time (45 s by default) unless it asks not to wait."""
    import fcntl
    import os
    import signal
    signal.signal(signal.SIGIO, signal.SIG_IGN)
    fd = os.open(sys.argv[2], os.O_RDONLY)
    fcntl.fcntl(fd, getattr(fcntl, "F_SETLEASE", 1024), fcntl.F_WRLCK)
    print("ready", flush=True)
    time.sleep(float(sys.argv[3]))


def open_refused_at_once(what, expected, why, timeout):
    """Walks fid 2 to PATH (argv[3], in the export), sends its Tlopen and
    asserts Rlerror EXPECTED within 5 s (WHAT names the file, WHY the server's
    rule, for the failure); then the server goes on: the file one opens and
    reads back on the same connection. Returns the Tlopen's seconds."""
    c = Conn(int(sys.argv[1]))
    c.version(8192)
    c.attach(1)
    names = sys.argv[3].split("/")
    qids = c.walk(1, 2, names)
    if len(qids) != len(names):
        raise AssertionError(f"the walk to {what} {sys.argv[3]} stopped after {len(qids)} names (the fixture)")
    c.sock.settimeout(timeout)
    t0 = time.time()
    got = c.outcome("lopen", 2, 0)
    took = time.time() - t0
    if got != expected or took > 5:
        raise AssertionError(f"Tlopen of {what}: {'opened' if got is None else f'errno {got}'} after {took:.1f} s, "
                             f"not {errnos.errorcode[expected]} at once ({why})")
    # Meanwhile the server serves: the worker never slept.
    c.walk(1, 3, ["one"])
    c.ok("lopen", 3, 0)
    if c.ok("read", 3, 0, 10)[4:] != b"1":
        raise AssertionError(f"after the Tlopen of {what}, the file one does not read back")
    c.sock.close()
    return took


def lease():
    """p9raw.py PORT lease PATH: Tlopen of PATH (in the export), which a
    `hold` process leases, fails at once with EAGAIN (EWOULDBLOCK): the
    server opens with O_NONBLOCK, so break_lease does not put a worker to
    sleep for lease-break-time."""
    took = open_refused_at_once("a leased file", EAGAIN, "does the open pass O_NONBLOCK?", 120)
    print(f"ok: EAGAIN in {took:.2f} s")


def fifo():
    """p9raw.py PORT fifo PATH: PATH (in the export) is a FIFO. The session
    opens regular files and directories only (Session::lopen): a Tlopen of
    the FIFO gets Rlerror EOPNOTSUPP at once, and the server goes on. (An
    open of a FIFO would wait for a writer, or with O_NONBLOCK succeed and
    hand the client a pipe any local process can fill.)"""
    took = open_refused_at_once("a FIFO", EOPNOTSUPP, "only regular files and directories are opened", 60)
    print(f"ok: EOPNOTSUPP in {took:.2f} s")


def mounts():
    """p9raw.py PORT mounts [cross]: the export holds tmpfs mounts on
    mnt-a and mnt-b (a file f in each). Without cross, a walk onto either
    gets EXDEV and the export's own files still walk; with cross (the
    module loaded with cross_mounts=1), both files read back."""
    expect = Checks()
    c = Conn(int(sys.argv[1]))
    c.version(8192)
    c.attach(1)
    if sys.argv[3:] != ["cross"]:
        for names in (["mnt-a"], ["mnt-a", "f"]):
            got = c.outcome("walk", 1, 2, *names)
            expect(got == EXDEV, f"a walk of {names} onto a mount inside the export gets EXDEV, got "
                   + ("a walk that succeeded: it crossed into the mount" if got is None else f"errno {got}"))
        qids = c.walk(1, 2, ["d", "..", "mnt-b", "f"])
        expect(len(qids) == 2, f"a walk of d/../mnt-b/f stops before mnt-b: {len(qids)} of 4 names walked")
        expect(c.error("getattr", 2, GETATTR_BASIC) == EBADF, "a refused walk creates no fid")
        c.walk(1, 3, ["one"])
        c.ok("lopen", 3, 0)
        expect(c.ok("read", 3, 0, 10)[4:] == b"1", "the export's own files still read")
        c.sock.close()
        print(f"ok: {expect.n} checks")
        return
    data, walked = {}, {}
    for fid, m in ((2, "mnt-a"), (3, "mnt-b")):
        qids = c.walk(1, fid, [m, "f"])
        expect(len(qids) == 2, f"with cross_mounts=1, {m}/f walks: {qids}")
        walked[m] = qids
        expect(c.getattr_qid(fid) == qids[1], f"Tgetattr of {m}/f answers the qid its walk did: "
               f"{c.getattr_qid(fid)} and {qids[1]}")
        c.ok("lopen", fid, 0)
        data[m] = c.ok("read", fid, 0, 10)[4:]
    expect(data == {"mnt-a": b"a\n", "mnt-b": b"b\n"}, f"with cross_mounts=1, the files on the mounts read back: {data}")
    # Both f have the same inode number (two fresh tmpfs: test.sh checks),
    # and so do both mounts' roots and the export's (1): v9fs would take
    # each pair for one inode, and with cache=loose share its pages.
    (ra, fa), (rb, fb) = walked["mnt-a"], walked["mnt-b"]
    expect(fa[1] != fb[1], f"mnt-a/f and mnt-b/f (one inode number, two file systems) have distinct qid paths: "
           f"{fa[1]:#x} and {fb[1]:#x}")
    root = c.getattr_qid(1)
    expect(len({ra[1], rb[1], root[1]}) == 3, f"and so have the roots of the mounts and of the export: "
           f"{ra[1]:#x}, {rb[1]:#x}, {root[1]:#x}")
    c.sock.close()
    print(f"ok: {expect.n} checks")


if __name__ == "__main__":
    if sys.argv[1] == "hold":
        hold_lease()
        sys.exit(0)
    try:
        modes = {"session": session, "walks": walks, "readdirs": readdirs, "oversized": oversized, "fair": fair,
                 "list": list_dir, "lease": lease, "fifo": fifo, "mounts": mounts}
        modes[sys.argv[2]]()
    except (AssertionError, OSError, EOFError, struct.error, ValueError) as e:
        print(f"FAIL: {e}")
        sys.exit(1)
