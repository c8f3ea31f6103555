#!/usr/bin/env python3
"""Raw 9P2000.L clients for the tests of stages 31 (limits, fuzz, clients)
and 23 (access): what a mount never does.

Usage:
  p9h.py limits PORT MSIZE CONNS IDLE_MS FIDS   the ceilings, 64 stalled connections
  p9h.py idle PORT CONNS IDLE_MS                CONNS connections that never attach are
                                                closed idle_ms after they connect
  p9h.py pipeline PORT MSIZE IDLE_MS KIB     a client that pipelines Treads and never reads:
                                                the server's socket queues stay within KIB,
                                                it is closed after idle_ms
  p9h.py deep PORT MAX_NAMES                    fids walked down a 300-level tree stop at
                                                max_names walked names
  p9h.py access PORT                            per-user access, Tflush, abrupt closes
                                                (the server loaded with allow_root=1)
  p9h.py squash PORT                            an attach as root acts as nobody (65534)
  p9h.py attach PORT UID WANT [NOTE]            an attach as UID gets WANT (ok or an errno)
  p9h.py clients PORT EXPORT N [MAX [EVERY]]    N clients at once read the fixture
                                                (its files of at most MAX bytes; one
                                                client in EVERY lists "many")
  p9h.py fuzz PORT SEED COUNT CONNS             COUNT malformed/semi-valid messages
                                                (P9H_ANAME: the attach's aname, for diod)
  p9h.py mountfuzz DIR SEED COUNT               COUNT random read-only system calls on
                                                a v9fs mount (any server's, QEMU's too)

Each check prints "ok WHAT" or "not-ok WHAT" (with "# DETAIL" lines after a
failure); test.sh turns them into results. The connection code is
tests/p9raw.py, the raw client of stages 28 to 30."""

import os
import random
import re
import select
import socket
import struct
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from p9raw import (  # noqa: E402  (the client of stages 28 to 30; the constants are the codec's)
    Conn, frame, header, s, NOFID, RLERROR, TVERSION, TAUTH, TATTACH, TFLUSH, TWALK, TLOPEN, TREAD,
    TREADDIR, TGETATTR, TREADLINK, TXATTRWALK, TCLUNK, TSTATFS, TWRITE, RREAD, RFLUSH, EACCES, EMFILE,
    EPROTO, GETATTR_BASIC, HEADER_SIZE, RREAD_HEADER_SIZE, VERSION,
)

NONUNAME = 0xFFFFFFFF
FAILED = 0


def ok(cond, what, detail=""):
    global FAILED
    if cond:
        print(f"ok {what}", flush=True)
    else:
        FAILED += 1
        print(f"not-ok {what}", flush=True)
        if detail:
            for line in str(detail).splitlines():
                print(f"# {line}", flush=True)
    return cond


def tattach(fid, uid, uname="root"):
    """The Tattach of FID as UID (p9raw's Conn.send says what a request is)."""
    # diod serves the export the attach names (aname); r9p has one.
    return "attach", fid, NOFID, uname, os.environ.get("P9H_ANAME", ""), uid


def reply_to(c, *request):
    """(errno or None, body) of one request (p9raw's Conn.send says what a
    request is)."""
    rty, rbody = c.rpc(*request)
    if rty == RLERROR:
        return struct.unpack("<I", rbody)[0], rbody
    return None, rbody


def meminfo(key="MemAvailable"):
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    return 0


def sees_eof(sock, seconds):
    """Whether the server closes `sock` within `seconds` (whatever it sent first)."""
    sock.settimeout(seconds)
    deadline = time.time() + seconds
    try:
        while time.time() < deadline:
            if not sock.recv(65536):
                return True
    except (ConnectionResetError, BrokenPipeError):
        return True
    except socket.timeout:
        return False
    return False


# ---- limits -------------------------------------------------------------------
def trickle(sock, period, until):
    """Begins a 4 KiB frame, then sends one byte of it every `period`
    seconds until `until` (or until the server closes the connection)."""
    try:
        sock.sendall(header(4096, TWRITE, 1))
        while time.time() < until:
            time.sleep(period)
            sock.sendall(b"\0")
    except OSError:
        pass


def limits(port, msize, conns, idle_ms, fids):
    # One place for a good client, one for a trickling one, one to spare.
    hostile_n = conns - 3
    c = Conn(port)
    got = c.version(1 << 24)
    ok(got == msize, f"Tversion asking 16 MiB gets max_msize ({got})")
    c.ok(*tattach(0, 0))
    # Fids: max_fids in all, then Rlerror EMFILE, and the connection goes on.
    errs = [reply_to(c, "walk", 0, i)[0] for i in range(1, fids)]
    ok(all(e is None for e in errs), f"{fids} fids fit (attach + {fids - 1} clones)", f"errors: {set(errs)}")
    e, _ = reply_to(c, "walk", 0, fids)
    ok(e == EMFILE, f"fid number {fids + 1} gets Rlerror EMFILE, not a failure", f"errno {e}")
    c.clunk(1)
    e, _ = reply_to(c, "walk", 0, fids)
    ok(e is None, "after a Tclunk there is room for one more fid", f"errno {e}")
    c.sock.close()

    # A size field far beyond msize: Rlerror EPROTO and the end, nothing allocated.
    c = Conn(port)
    t0 = time.time()
    c.sock.sendall(header(0xFFFFFFF0, TREAD, 7))
    try:
        rty, rtag, rbody = c.recv()
        answered = rty == RLERROR and struct.unpack("<I", rbody)[0] == EPROTO and rtag == 7
    except (EOFError, OSError):
        answered = False
    ok(answered and sees_eof(c.sock, 5), f"a 4 GiB size field gets Rlerror EPROTO and the connection closes ({time.time() - t0:.1f} s)")
    c.sock.close()

    # Hostile connections: each agrees on max_msize, then sends half a frame
    # of max_msize bytes, and stalls.
    m0 = meminfo()
    hostile = []
    t0 = time.time()
    # And one that sends its frame a byte at a time, four bytes per idle_ms:
    # always within idle_ms of its last byte, never done. It has idle_ms for
    # the whole frame, not for each byte.
    slow = Conn(port)
    slow.version(8192)
    threading.Thread(target=trickle, args=(slow.sock, idle_ms / 4000, t0 + idle_ms / 1000 + 20), daemon=True).start()
    for i in range(hostile_n):
        h = Conn(port)
        h.version(msize)
        h.sock.sendall(header(msize, TWRITE, 1) + b"\0" * (msize // 2 - HEADER_SIZE))
        hostile.append(h)
    time.sleep(2)
    m1 = meminfo()
    grown = m0 - m1
    per_conn = 3 * msize + 32 * 1024
    bound = hostile_n * per_conn // 1024 + 16 * 1024  # KiB, with 16 MiB for the rest of the system
    ok(grown <= bound, f"{hostile_n} hostile connections (half a frame each) cost {grown // 1024} MiB, at most the limits' {bound // 1024} MiB",
       f"MemAvailable {m0} kB before, {m1} kB after")
    print(f"# memory: {hostile_n} stalled connections took {grown} kB (MemAvailable); limits allow {hostile_n} x {per_conn // 1024} KiB")

    # They block nobody: a good client is served while they stall.
    t1 = time.time()
    try:
        g = Conn(port)
        g.version(65536)
        g.ok(*tattach(0, 0))
        g.walk(0, 1, ["one"])
        g.ok("lopen", 1, 0)
        body = g.ok("read", 1, 0, 100)
        good = body[4:] == b"1"
    except (AssertionError, OSError, EOFError) as e:
        good, body = False, e
    ok(good and time.time() - t1 < 10, f"meanwhile another client is served ({time.time() - t1:.1f} s)", f"{body!r}")
    # Now connections are at the limit minus one: fill it, then one more.
    extra = Conn(port)
    extra.version(8192)
    over = Conn(port)
    t1 = time.time()
    try:
        over.sock.sendall(frame(("version", 8192, VERSION), 1))
    except OSError:
        pass
    ok(sees_eof(over.sock, 5), f"connection {conns + 1} (over max_conns={conns}) is closed at once ({time.time() - t1:.1f} s)")
    over.sock.close()
    g.sock.close()
    extra.sock.close()

    # The stalled ones are closed after idle_ms.
    left = list(hostile)
    deadline = t0 + idle_ms / 1000 + 15
    while left and time.time() < deadline:
        left = [h for h in left if not sees_eof(h.sock, 0.05)]
    waited = time.time() - t0
    ok(not left, f"the {hostile_n} stalled connections are closed after idle_ms={idle_ms} ({waited:.1f} s after the first)",
       f"{len(left)} still open")
    closed = False
    while not closed and time.time() < deadline:
        closed = sees_eof(slow.sock, 0.2)
    ok(closed, f"so is one sending a byte every idle_ms/4: idle_ms is for the whole frame ({time.time() - t0:.1f} s)",
       "still open: each piece of the frame restarted the clock")
    slow.sock.close()
    for h in hostile:
        h.sock.close()
    time.sleep(1)
    m2 = meminfo()
    ok(m0 - m2 < max(grown // 4, 8 * 1024), f"and their memory is back ({(m0 - m2) // 1024} MiB of {grown // 1024} MiB still used)",
       f"MemAvailable {m0} kB before, {m2} kB now")
    # Their places are back too: max_conns connections at once, all served.
    again = []
    try:
        for i in range(conns):
            a = Conn(port)
            a.version(8192)
            again.append(a)
        back = True
    except (AssertionError, OSError, EOFError) as e:
        back = e
    ok(back is True, f"then {conns} connections at once are served again", f"after {len(again)}: {back}")
    for a in again:
        a.sock.close()


def idle(port, conns, idle_ms):
    """The server loaded with max_conns=CONNS and idle_ms=IDLE_MS. CONNS
    connections that never attach take every place: some send nothing,
    some agree on a version and go quiet, one sends a whole Tversion every
    idle_ms/2 (busy, never attached), one a frame a byte every idle_ms/2.
    One more is closed at once; idle_ms after they connected, they are
    closed, and a new client is served. A connection that holds a fid (a
    mount) may stay quiet longer than idle_ms."""
    t0 = time.time()
    quiet = []
    for i in range(conns - 2):
        c = Conn(port)
        if i % 2:
            c.version(8192)
        quiet.append(c)
    chatty, closed_at = Conn(port), []

    def chat():
        try:
            while time.time() < t0 + idle_ms / 1000 + 20:
                chatty.version(8192)
                time.sleep(idle_ms / 2000)
        except (OSError, EOFError, AssertionError):
            closed_at.append(time.time())
    threading.Thread(target=chat, daemon=True).start()
    slow = Conn(port)
    threading.Thread(target=trickle, args=(slow.sock, idle_ms / 2000, t0 + idle_ms / 1000 + 20), daemon=True).start()
    time.sleep(0.5)
    over = Conn(port)
    ok(sees_eof(over.sock, 5), f"{conns} connections that never attach hold every place: connection {conns + 1} is closed at once")
    over.sock.close()
    left = quiet + [slow]
    deadline = t0 + idle_ms / 1000 + 15
    while left and time.time() < deadline:
        left = [c for c in left if not sees_eof(c.sock, 0.05)]
    while not closed_at and time.time() < deadline:
        time.sleep(0.1)
    ok(not left and closed_at, f"idle_ms={idle_ms} after they connected, they are closed ({time.time() - t0:.1f} s), "
       "one sending a Tversion every idle_ms/2 and one a byte of a frame every idle_ms/2 too",
       f"{len(left)} quiet or trickling still open; the chatty one {'closed' if closed_at else 'still open'}")
    # Before this client closes them: their places must be free already.
    # (A server that closed only the trickling one, by its frame's
    # deadline, has one place: the first of two new clients takes it.)
    extra = []
    try:
        for _ in range(2):
            extra.append(Conn(port))
            extra[-1].version(8192)
        g = extra[-1]
        g.ok(*tattach(0, 0))
        served = g.walk(0, 1, ["one"]) != []
    except (AssertionError, OSError, EOFError) as e:
        served = e
    ok(served is True, "then a new client is served: connections that never attach do not lock the server out", f"{served}")
    for c in quiet + [slow, chatty] + extra[:-1]:
        c.sock.close()
    # A mount holds its root fid and may be idle for hours.
    still = "not served"
    if served is True:
        try:
            time.sleep(idle_ms / 1000 + 1)
            still = g.walk(0, 2, ["one"]) != []
        except (AssertionError, OSError, EOFError) as e:
            still = e
    ok(still is True, "a connection that holds a fid (as a mount does) may stay quiet longer than idle_ms", f"{still}")
    for c in extra:
        c.sock.close()


def skmem(port, peer):
    """What the kernel queues for the server's end of the connection from
    client port PEER: {"w": bytes in its send queue, "r": bytes in its
    receive queue}, from /proc/net/tcp's tx_queue and rx_queue (the data;
    `ss -tm` would give the truesize, but it needs CONFIG_INET_DIAG, which
    the workshop kernels do not have: without it ss prints no skmem), or
    None once it is no longer established."""
    with open("/proc/net/tcp") as f:
        next(f)
        for line in f:
            fields = line.split()
            local, remote, state, queues = fields[1:5]
            if (int(local.split(":")[1], 16) == port and int(remote.split(":")[1], 16) == peer
                    and state == "01"):
                tx, rx = (int(q, 16) for q in queues.split(":"))
                return {"w": tx, "r": rx}
    return None


def pipeline(port, msize, idle_ms, socket_kib):
    """The server loaded with max_msize=MSIZE and idle_ms=IDLE_MS, stating
    SOCKET_KIB of socket buffers per connection. A client pipelines Treads
    of msize bytes of sizes/s200000 and never reads a reply: the server
    stops reading its requests while a reply waits for room, so what the
    kernel queues for it is its socket's two queues. The bytes in them
    (skmem, sampled until the end) stay within SOCKET_KIB, and the connection is
    closed idle_ms after its queues stopped moving (the reply's deadline)."""
    c = Conn(port)
    c.version(msize)
    c.ok(*tattach(1, 0))
    c.walk(1, 2, ["sizes", "s200000"])
    c.ok("lopen", 2, 0)
    peer = c.sock.getsockname()[1]
    burst = b"".join(frame(("read", 2, 0, msize - RREAD_HEADER_SIZE), tag) for tag in range(1000))
    sent = [0]

    def flood():
        c.sock.settimeout(None)
        try:
            while True:
                c.sock.sendall(burst)
                sent[0] += 1000
        except OSError:
            pass
    threading.Thread(target=flood, daemon=True).start()
    t0 = time.time()
    peak, peak_at, last, moved, closed = 0, {}, None, t0, None
    while time.time() < t0 + idle_ms / 1000 + 30:
        m = skmem(port, peer)
        now = time.time()
        if m is None:
            closed = now
            break
        if m.get("r", 0) + m.get("w", 0) > peak:
            peak, peak_at = m.get("r", 0) + m.get("w", 0), m
        if (m.get("r"), m.get("w")) != last:
            last, moved = (m.get("r"), m.get("w")), now
        time.sleep(0.1)
    ok(peak_at and peak <= socket_kib * 1024,
       f"a client that pipelines Treads of msize={msize} and never reads: the server's socket queues for it stay within "
       f"the stated {socket_kib} KiB (at most {peak // 1024} KiB, {sent[0]} requests sent)",
       f"/proc/net/tcp's queues at the peak: {peak_at}")
    ok(closed is not None and closed - moved <= idle_ms / 1000 + 5,
       f"and it is closed idle_ms={idle_ms} after its queues stopped moving "
       f"({'%.1f s after' % (closed - moved) if closed else 'not closed'})",
       "still established" if closed is None else f"closed {closed - moved:.1f} s after the queues last moved")
    try:
        c.sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    c.sock.close()


def deep(port, max_names):
    """The server loaded with max_names=MAX_NAMES; the export holds deep/,
    a tree of 300 levels (deep/d/d/...). A fid walked down it, 16 names a
    walk (Twalk fid -> fid), stops once the connection's walks hold
    MAX_NAMES nodes; the connection goes on, the budget is the
    connection's (two fids share it), and a Tclunk gives names back."""
    c = Conn(port)
    c.version(65536)
    c.ok(*tattach(0, 0))

    def down(fid, limit):
        """Walks `fid` from the export root down deep/, 16 names at a
        time, until `limit` levels or a walk that does not go all the way:
        (the depth reached, errno or None); a partial walk's names count,
        though the fid stays where it was."""
        e, body = reply_to(c, "walk", 0, fid, "deep")
        if e is not None:
            return 0, e
        depth = 1
        while depth < limit:
            e, body = reply_to(c, "walk", fid, fid, *["d"] * 16)
            if e is not None:
                return depth, e
            n = struct.unpack("<H", body[:2])[0]
            if n < 16:
                return depth + n, "a partial walk"
            depth += 16
        return depth, None

    depth, e = down(1, 400)
    ok(depth == max_names and e is not None,
       f"a fid walked down a 300-level tree, 16 names a walk, stops at max_names={max_names} ({depth} names, {e})",
       f"it reached depth {depth} ({e}): the walks went on" if depth > max_names else f"it stopped at depth {depth} ({e})")
    c.clunk(1)
    half = max_names // 2 + 8
    d2, e2 = down(2, half)
    d3, e3 = down(3, max_names)
    ok(e2 is None and d2 + d3 == max_names, f"the budget is the connection's: one fid walks {d2} deep, a second one "
       f"stops at {d3}: {d2} + {d3} names", f"first: depth {d2} ({e2}); second: depth {d3} ({e3})")
    c.clunk(2)
    d4, e4 = down(4, half)
    ok(e4 is None, f"after a Tclunk the names are back: another fid walks {d4} deep", f"stopped at {d4} ({e4})")
    c.sock.close()


# ---- access -------------------------------------------------------------------
def access(port):
    c = Conn(port)
    c.version(65536)

    def user_fid(fid, uid, uname="x"):
        return reply_to(c, *tattach(fid, uid, uname))[0]

    ok(user_fid(1, 0) is None, "attach as uid 0 (root, allow_root=1)")
    ok(user_fid(2, 1000) is None, "attach as uid 1000 (alice in the passwd file)")
    ok(user_fid(3, NONUNAME, "bob") is None, "attach by name as bob (n_uname = NONUNAME)")
    e = user_fid(4, 4242)
    ok(e == EACCES, "attach as uid 4242 (no such user) is refused with EACCES", f"errno {e}")
    e = user_fid(4, NONUNAME, "mallory")
    ok(e == EACCES, "attach by the name of no user is refused with EACCES", f"errno {e}")

    def lopen_as(root_fid, newfid, names):
        c.walk(root_fid, newfid, names)
        return reply_to(c, "lopen", newfid, 0)[0]

    ok(lopen_as(2, 10, ["rootonly"]) == EACCES, "alice cannot open the root-only file (mode 600, owner 0): EACCES")
    ok(lopen_as(1, 11, ["rootonly"]) is None, "root can")
    body = c.ok("read", 11, 0, 100)
    ok(body[4:] == b"for root\n", f"and reads it ({body[4:]!r})")
    ok(lopen_as(2, 12, ["alices"]) is None, "alice opens her own file (mode 600, owner 1000)")
    ok(lopen_as(3, 13, ["alices"]) == EACCES, "bob cannot: EACCES")
    # Supplementary groups, from the server's group file: alice is a member
    # of staff (2000), bob is not; a line with a field too many (2001,
    # which lists alice) is skipped, not half-trusted.
    ok(lopen_as(2, 30, ["staffonly"]) is None,
       "alice opens a file of group staff (mode 640, owner 0): staff is a supplementary group of hers in the group file")
    body = c.ok("read", 30, 0, 100)
    ok(body[4:] == b"for staff\n", f"and reads it ({body[4:]!r})")
    ok(lopen_as(3, 31, ["staffonly"]) == EACCES, "bob, not a member of staff, cannot: EACCES")
    ok(lopen_as(2, 32, ["brokengroup"]) == EACCES,
       "alice cannot open a file of a group whose line in the group file is malformed: EACCES")
    # The group the VFS checks is the credentials' fsgid: alice's 1000, not
    # the worker's 0.
    ok(lopen_as(2, 33, ["rootgroup"]) == EACCES,
       "alice cannot open a file of group 0 (mode 640, owner 0): her fsgid is hers, not the worker's")
    qids = c.walk(2, 14, ["closed", "inside"])
    e = reply_to(c, "getattr", 14, GETATTR_BASIC)[0]
    ok(len(qids) == 1 and e == 9, "alice cannot walk into a directory of mode 700 owned by root (the walk stops before 'inside')",
       f"{len(qids)} of 2 names walked; Tgetattr of the new fid: errno {e}")
    ok(lopen_as(2, 14, ["closed"]) == EACCES, "nor list it: EACCES")
    ok(lopen_as(1, 15, ["closed", "inside"]) is None, "root can")
    ok(lopen_as(2, 16, ["d"]) is None, "alice lists a directory of mode 755")
    # A fid walked from alice's acts as alice.
    c.walk(2, 17, ["d"])
    e, _ = reply_to(c, "walk", 17, 18, "..", "rootonly")
    ok(e is None, "a fid walked from alice's fid")
    ok(reply_to(c, "lopen", 18, 0)[0] == EACCES, "... is alice's: Tlopen of the root-only file through it fails")

    # Tflush: requests are answered in order, so the flushed one is answered
    # first, then Rflush (the protocol's order).
    c.walk(1, 20, ["d", "numbers"])
    c.ok("lopen", 20, 0)
    c.sock.sendall(frame(("read", 20, 0, 60000), 500) + frame(("flush", 500), 501))
    r1, r2 = c.recv(), c.recv()
    ok(r1[:2] == (RREAD, 500) and r2[:2] == (RFLUSH, 501),
       "Tflush of a request in flight: its reply (Rread) comes first, then Rflush", f"{r1[:2]} then {r2[:2]}")
    rty, _ = c.rpc("flush", 4242)
    ok(rty == RFLUSH, "Tflush of a tag not in flight: Rflush")
    c.sock.close()

    # Connections that close mid-request: a big request and gone; half a
    # frame and gone; fids and open files left behind. The server frees it
    # all (kmemleak checks at the end) and goes on.
    for i in range(30):
        d = Conn(port)
        d.version(65536)
        d.ok(*tattach(1, 0))
        d.walk(1, 2, ["many"])
        d.ok("lopen", 2, 0)
        if i % 3 == 0:
            d.send("readdir", 2, 0, 65000)
        elif i % 3 == 1:
            d.sock.sendall(header(4000, TREAD, 9) + b"\0" * 100)
        d.sock.close()
    c = Conn(port)
    c.version(65536)
    c.ok(*tattach(1, 0))
    ok(c.walk(1, 2, ["d", "numbers"]) != [], "after 30 connections closed mid-request, the server still serves")
    c.sock.close()


def squash(port):
    """The server loaded without allow_root: root, by uid or by name, is
    accepted and acts as nobody (65534:65534, no capability)."""
    c = Conn(port)
    c.version(65536)
    for fid, uid, uname, how in ((1, 0, "x", "by uid 0"), (2, NONUNAME, "root", "by the name root")):
        e = reply_to(c, *tattach(fid, uid, uname))[0]
        ok(e is None, f"attach as root {how} is accepted", f"errno {e}")
        c.walk(fid, 10 + fid, ["rootonly"])
        e = reply_to(c, "lopen", 10 + fid, 0)[0]
        ok(e == EACCES, f"... and squashed: root ({how}) cannot open the root-only file (mode 600, owner 0): EACCES",
           "it opened it: the attach acts as root, with every capability" if e is None else f"errno {e}")
    c.walk(1, 20, ["nobodys"])
    e = reply_to(c, "lopen", 20, 0)[0]
    body = c.ok("read", 20, 0, 100) if e is None else b""
    ok(e is None and body[4:] == b"nobody's\n",
       f"the squashed root acts as uid 65534: it opens and reads nobody's file (mode 600, owner 65534) ({body[4:]!r})",
       f"errno {e}")
    qids = c.walk(1, 21, ["closed", "inside"])
    ok(len(qids) == 1, "the squashed root cannot walk into a directory of mode 700 owned by root",
       f"{len(qids)} of 2 names walked")
    c.sock.close()


def attach(port, uid, want, note=""):
    c = Conn(port)
    c.version(8192)
    e = reply_to(c, *tattach(1, uid, "x"))[0]
    got = "ok" if e is None else e
    ok(str(got) == str(want), f"attach as uid {uid}{note and f' ({note})'}: {'accepted' if want == 'ok' else f'errno {want}'}",
       f"got {'an Rattach' if e is None else f'errno {e}'}")
    c.sock.close()


# ---- concurrent clients -----------------------------------------------------------
def readdir_names(c, fid, count=60000):
    names, offset = [], 0
    while True:
        body = c.ok("readdir", fid, offset, count)
        (n,) = struct.unpack("<I", body[:4])
        data = body[4:4 + n]
        if not data:
            return names
        i = 0
        while i < len(data):
            offset = struct.unpack("<Q", data[i + 13:i + 21])[0]
            (ln,) = struct.unpack("<H", data[i + 22:i + 24])
            names.append(data[i + 24:i + 24 + ln].decode("utf-8", "surrogateescape"))
            i += 24 + ln


def clients(port, export, n, max_size=1 << 30, many_every=1):
    files = sorted(os.path.relpath(os.path.join(d, f), export) for d, _, fs in os.walk(export)
                   for f in fs if not d.endswith("many") and os.path.isfile(os.path.join(d, f))
                   and not os.path.islink(os.path.join(d, f))
                   and os.path.getsize(os.path.join(d, f)) <= max_size)
    want = {f: open(os.path.join(export, f), "rb").read() for f in files}
    dirs = ["many", "d", "."]
    want_dirs = {d: sorted(os.listdir(os.path.join(export, d)) + [".", ".."]) for d in dirs}
    results = [None] * n
    barrier = threading.Barrier(n)

    def one(k):
        try:
            c = Conn(port)
            c.version(65536)
            c.ok(*tattach(1, 0))
            barrier.wait(timeout=120)
            fid, got = 2, 0
            # Each client starts at a different file, so they overlap.
            for f in files[k % len(files):] + files[:k % len(files)]:
                c.walk(1, fid, f.split("/"))
                c.ok("lopen", fid, 0)
                data, off = b"", 0
                while True:
                    body = c.ok("read", fid, off, 60000)
                    chunk = body[4:]
                    if not chunk:
                        break
                    data += chunk
                    off += len(chunk)
                if data != want[f]:
                    raise AssertionError(f"{f}: {len(data)} bytes differ from the export's {len(want[f])}")
                c.clunk(fid)
                got += 1
            for d in dirs:
                if d == "many" and k % many_every:
                    continue
                c.walk(1, fid, [] if d == "." else [d])
                c.ok("lopen", fid, 0)
                names = sorted(readdir_names(c, fid))
                if names != want_dirs[d]:
                    raise AssertionError(f"listing {d}: {len(names)} names, want {len(want_dirs[d])}")
                c.clunk(fid)
            c.sock.close()
            results[k] = (got, len(dirs))
        except Exception as e:  # noqa: BLE001 (reported as the check's detail)
            results[k] = e

    t0 = time.time()
    threads = [threading.Thread(target=one, args=(k,)) for k in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    bad = [(k, r) for k, r in enumerate(results) if not isinstance(r, tuple)]
    listers = len(range(0, n, many_every))
    ok(not bad, f"{n} clients at once each read {len(files)} files and list 2 directories ({len(want_dirs['d'])} and "
       f"{len(want_dirs['.'])} names), {listers} of them the 2000-entry one too: all identical ({time.time() - t0:.0f} s)",
       "\n".join(f"client {k}: {r}" for k, r in bad[:5]))


# ---- the fuzzer -------------------------------------------------------------------
NAMES = [b".", b"..", b"d", b"numbers", b"many", b"links", b"out", b"relative", b"one", b"rootonly",
         b"closed", b"inside", b"alices", b"", b"a/b", b"x\0y", b"nope", b"sizes", b"fifo", b"special"]


def fuzz_message(r, state):
    """One frame: mostly well-formed requests with hostile fields, some
    broken on purpose."""
    fid = lambda: r.choice([r.randrange(8), r.randrange(1 << 32), NOFID, r.randrange(64)])  # noqa: E731
    name = lambda: r.choice(NAMES) if r.random() < 0.8 else bytes(r.randrange(256) for _ in range(r.choice([1, 10, 255, 256, 300])))  # noqa: E731
    u16 = lambda: r.randrange(1 << 16)  # noqa: E731
    u64 = lambda: r.choice([0, 1, 2, r.randrange(1 << 64), (1 << 63) - 1, 1 << 63, (1 << 64) - 1, r.randrange(4096)])  # noqa: E731
    count = lambda: r.choice([0, 1, 7, 24, 300, 4096, 65536, r.randrange(1 << 32), (1 << 32) - 1])  # noqa: E731
    k = r.randrange(100)
    if k < 4:
        ty, body = TVERSION, struct.pack("<I", r.choice([0, 4095, 4096, 8192, 65536, 1 << 20, 1 << 31, r.randrange(1 << 32)])) + \
            s(r.choice([b"9P2000.L", b"9P2000", b"9P2000.u", b"", b"9P2000.L" * 40]))
    elif k < 10:
        ty, body = TATTACH, struct.pack("<II", fid(), r.choice([NOFID, 0, 1])) + s(name()) + s(b"") + \
            struct.pack("<I", r.choice([0, 1000, 1001, 4242, NONUNAME, r.randrange(1 << 32)]))
    elif k < 30:
        n = r.choice([0, 1, 2, 3, 16, 17, 20, r.randrange(1 << 16)])
        names = [name() for _ in range(min(n, 40))]
        ty, body = TWALK, struct.pack("<IIH", fid(), fid(), n) + b"".join(s(x) for x in names)
    elif k < 38:
        ty, body = TLOPEN, struct.pack("<II", fid(), r.choice([0, 1, 2, 0o100, 0o4000, r.randrange(1 << 32)]))
    elif k < 48:
        ty, body = TREAD, struct.pack("<IQI", fid(), u64(), count())
    elif k < 58:
        ty, body = TREADDIR, struct.pack("<IQI", fid(), u64(), count())
    elif k < 64:
        ty, body = TGETATTR, struct.pack("<IQ", fid(), u64())
    elif k < 67:
        ty, body = TREADLINK, struct.pack("<I", fid())
    elif k < 69:
        ty, body = TSTATFS, struct.pack("<I", fid())
    elif k < 71:
        ty, body = TXATTRWALK, struct.pack("<II", fid(), fid()) + s(name())
    elif k < 77:
        ty, body = TCLUNK, struct.pack("<I", fid())
    elif k < 83:
        ty, body = TFLUSH, struct.pack("<H", r.choice([u16(), state["lasttag"]]))
    elif k < 85:
        ty, body = TAUTH, struct.pack("<I", fid()) + s(name()) + s(b"") + struct.pack("<I", 0)
    elif k < 90:
        ty, body = r.randrange(256), bytes(r.randrange(256) for _ in range(r.choice([0, 4, 13, 40])))
    else:
        ty, body = r.choice([TWALK, TREAD, TATTACH, TVERSION, TREADDIR]), b""
    tag = r.choice([u16(), 0xFFFF, state["lasttag"], 1])
    state["lasttag"] = tag
    msg = bytearray(frame((ty, body), tag))
    m = r.randrange(100)
    if m < 5 and len(msg) > 7:  # truncated: the size field says more than follows
        msg = msg[:r.randrange(7, len(msg))]
    elif m < 8:  # a lying size field
        msg[0:4] = struct.pack("<I", r.choice([0, 3, 6, 7, len(msg) - 1, len(msg) + 1, 1 << 20, r.randrange(1 << 32)]))
    elif m < 14 and len(msg) > 7:  # flipped bytes after the header
        for _ in range(r.randrange(1, 4)):
            i = r.randrange(7, len(msg))
            msg[i] = r.randrange(256)
    elif m < 16:  # glued to garbage: the next frame starts mid-way
        msg += bytes(r.randrange(256) for _ in range(r.randrange(1, 20)))
    return bytes(msg)


def fuzz(port, seed, count, nconns):
    r = random.Random(seed)
    conns = {}
    stats = {"sent": 0, "closed": 0, "replies": 0, "bytes": 0, "lerror": 0, "malformed": 0}
    state = {"lasttag": 1}
    pending = {}

    def count_replies(k, data):
        """Counts the whole reply frames received on connection k: those
        that say Rlerror, and those no server may send (a size below the
        header, above 1 MiB, or a request's even type): the rest of such a
        stream is dropped."""
        buf = pending.get(k, b"") + data
        while len(buf) >= 7:
            size, ty = struct.unpack_from("<IB", buf)
            if size < 7 or size > 1 << 20 or ty % 2 == 0:
                stats["malformed"] += 1
                buf = b""
                break
            if len(buf) < size:
                break
            stats["replies"] += 1
            stats["lerror"] += ty == RLERROR
            buf = buf[size:]
        pending[k] = buf

    def connect(k):
        for _ in range(50):
            try:
                so = socket.create_connection(("127.0.0.1", port), timeout=10)
                break
            except OSError:
                time.sleep(0.2)
        else:
            raise OSError("cannot connect any more")
        # Start most connections with a good handshake: deeper code runs.
        if r.random() < 0.8:
            so.sendall(frame(("version", r.choice([8192, 65536]), VERSION), 0xFFFF) +
                       frame(tattach(0, r.choice([0, 1000])), 1) + frame(("walk", 0, 1, "d"), 2))
        so.setblocking(False)
        conns[k] = so

    def drain(k):
        """One non-blocking read of what the server sent on connection k
        (the rest waits for the next message on it): one system call."""
        so = conns.get(k)
        if so is None:
            return
        try:
            data = so.recv(1 << 20)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if not data:
            so.close()
            del conns[k]
            pending.pop(k, None)
            stats["closed"] += 1
            return
        stats["bytes"] += len(data)
        count_replies(k, data)

    def send(so, msg):
        """Sends all of msg on a non-blocking socket (a system call per
        message, unless the server has stopped reading)."""
        while msg:
            try:
                msg = msg[so.send(msg):]
            except BlockingIOError:
                if not select.select([], [so], [], 30)[1]:
                    raise OSError("the server reads nothing for 30 s")

    t0 = time.time()
    for k in range(nconns):
        connect(k)
    while stats["sent"] < count:
        k = r.randrange(nconns)
        if k not in conns:
            connect(k)
            pending.pop(k, None)
        msg = fuzz_message(r, state)
        so = conns[k]
        try:
            send(so, msg)
        except OSError:
            so.close()
            del conns[k]
            stats["closed"] += 1
        stats["sent"] += 1
        drain(k)
        if stats["sent"] % 5000 == 0:
            print(f"# fuzz: {stats['sent']} messages, {stats['closed']} connections closed by the server, {time.time() - t0:.0f} s", flush=True)
    # Let the last replies come, then close.
    end = time.time() + 3
    while conns and time.time() < end:
        ready, _, _ = select.select(list(conns.values()), [], [], 0.2)
        for k in [k for k, so in conns.items() if so in ready]:
            drain(k)
    for so in conns.values():
        so.close()
    ok(True, f"fuzz: {stats['sent']} messages (seed {seed}) over {nconns} connections at a time, "
       f"{stats['closed']} closed by the server and reopened, {stats['bytes']} bytes of replies, {time.time() - t0:.0f} s")
    print(f"# fuzz-stats sent={stats['sent']} seconds={time.time() - t0:.1f} replies={stats['replies']} "
          f"lerror={stats['lerror']} malformed={stats['malformed']} closed={stats['closed']}", flush=True)


# The paths mountfuzz picks from, relative to the mount: the fixture of
# scripts/fuzz-compare.sh, and names that are not there.
MOUNT_PATHS = ["", "files", "private", "link", "abs", "loop", "fifo", "big", "deep", "nope",
               "files/.."] + [f"files/f{i}" for i in range(20)] + ["deep/" + "/".join(["d"] * n) for n in (1, 5, 20, 40)]
# What a server's failure looks like to a system call, rather than a refusal.
IO_ERRORS = {5, 71, 74, 121, 131}  # EIO, EPROTO, EBADMSG, EREMOTEIO, ENOTRECOVERABLE


def mountfuzz(d, seed, count):
    """COUNT random read-only system calls on the mount d, seed SEED: the
    same calls on every server's mount. A call that takes more than 15 s is
    a hang (and ends the run); errno values that mean the server failed
    (EIO, EPROTO, ...) are counted apart from refusals."""
    import queue
    r = random.Random(seed)
    jobs, results = queue.Queue(), queue.Queue()

    def worker():
        while True:
            f = jobs.get()
            try:
                results.put((True, f()))
            except OSError as e:
                results.put((False, e.errno))
            except Exception as e:  # noqa: BLE001  (a bug of this client, not an errno)
                results.put((False, repr(e)))

    threading.Thread(target=worker, daemon=True).start()

    def path():
        p = os.path.join(d, r.choice(MOUNT_PATHS))
        k = r.randrange(10)
        if k == 0:
            p = os.path.join(p, "..", "..", r.choice(MOUNT_PATHS))
        elif k == 1:
            p = os.path.join(p, r.choice(["x", "a" * 300, "..", "."]))
        return p

    def read_some(p, flags, size, offset):
        fd = os.open(p, os.O_RDONLY | os.O_NONBLOCK | flags)
        try:
            return len(os.pread(fd, size, offset))
        finally:
            os.close(fd)

    def op():
        p = path()
        k = r.randrange(9)
        size = r.choice([0, 1, 4096, 65536, 1 << 20])
        offset = r.choice([0, 1, 4095, 1 << 20, 1 << 40])
        return [lambda: os.stat(p), lambda: os.lstat(p), lambda: read_some(p, 0, size, offset),
                lambda: len(os.listdir(p)), lambda: os.readlink(p), lambda: os.access(p, os.R_OK),
                lambda: read_some(p, os.O_NOATIME, size, offset), lambda: os.statvfs(p),
                lambda: read_some(p, os.O_DIRECTORY, size, 0)][k]

    stats = {"ops": 0, "errors": 0, "ioerrors": 0, "hangs": 0}
    t0 = time.time()
    for _ in range(count):
        jobs.put(op())
        try:
            done, value = results.get(timeout=15)
        except queue.Empty:
            stats["hangs"] += 1
            break
        stats["ops"] += 1
        if not done:
            stats["errors"] += 1
            stats["ioerrors"] += value in IO_ERRORS
    ok(stats["hangs"] == 0, f"mountfuzz: {stats['ops']} system calls on {d} (seed {seed}) in {time.time() - t0:.0f} s")
    print(f"# mountfuzz-stats ops={stats['ops']} seconds={time.time() - t0:.1f} errors={stats['errors']} "
          f"ioerrors={stats['ioerrors']} hangs={stats['hangs']}", flush=True)


def main():
    cmd = sys.argv[1]
    # mountfuzz's first argument is a directory, every other command's a port.
    port = sys.argv[2] if cmd == "mountfuzz" else int(sys.argv[2])
    a = [int(x) if x.isdigit() else x for x in sys.argv[3:]]
    try:
        {"limits": limits, "idle": idle, "pipeline": pipeline, "deep": deep, "access": access, "squash": squash, "attach": attach,
         "clients": clients, "fuzz": fuzz, "mountfuzz": mountfuzz}[cmd](port, *a)
    except (AssertionError, OSError, EOFError, struct.error) as e:
        ok(False, f"{cmd}: the client ran to its end", f"{type(e).__name__}: {e}")
    sys.exit(1 if FAILED else 0)


if __name__ == "__main__":
    main()
