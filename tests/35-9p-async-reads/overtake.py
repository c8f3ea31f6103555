#!/usr/bin/env python3
"""A read stuck on the disk holds up no other client (stage 35).

Usage: overtake.py PORT NAME LOCAL INFLIGHT GO

Client A opens NAME (whose data is not in the page cache) and sends one
Tread of 128 KiB, without waiting for the reply. Once the disk has I/O in
flight (INFLIGHT: the disk's /sys/block/DEV/inflight), client B walks to
NAME and sends Tgetattr. With the file reactor, B's reply comes while A's
read still waits for the disk (the test throttled it); if the read held
the server's only worker (workers=1), A's reply would come first. Then,
once the caller lets the disk go (it waits for "ready", then creates the
file GO), A's reply must hold the file's first bytes
(LOCAL: the same file, read here).

Prints "ok WHAT" or "not-ok WHAT" lines (and "# DETAIL" lines)."""

import os
import select
import struct
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from p9raw import Conn, RLERROR, TGETATTR, TLOPEN, TREAD  # noqa: E402

COUNT = 128 * 1024


def inflight(path):
    """Reads in flight on the disk (ext4's journal may be writing)."""
    with open(path) as f:
        return int(f.read().split()[0])


def main():
    port, name, local, inflight_path, go = int(sys.argv[1]), *sys.argv[2:6]
    a = Conn(port)
    a.sock.settimeout(120)
    a.version(262144)
    a.attach(1)
    a.walk(1, 2, [name])
    a.ok(TLOPEN, struct.pack("<II", 2, 0))
    b = Conn(port)
    b.version(65536)
    b.attach(1)
    b.walk(1, 2, [name])
    a.send(TREAD, struct.pack("<IQI", 2, 0, COUNT), tag=7)
    deadline = time.monotonic() + 10
    while inflight(inflight_path) == 0 and time.monotonic() < deadline:
        time.sleep(0.02)
    if inflight(inflight_path) == 0:
        print("not-ok the read reaches the disk")
        print("# no I/O in flight 10 s after the Tread (was the page cache dropped?)")
        return 1
    # A's read waits for the disk: is B answered meanwhile?
    t0 = time.monotonic()
    rty, _ = b.rpc(TGETATTR, struct.pack("<IQ", 2, 0x7FF))
    answered_first = not select.select([a.sock], [], [], 0)[0]
    print(f"# the Tgetattr took {time.monotonic() - t0:.2f} s", flush=True)
    good = rty == TGETATTR + 1 and answered_first
    print(("ok" if good else "not-ok") + " another client's Tgetattr is answered while a Tread waits for the disk")
    if not good:
        print("# " + ("the Tread was answered first: it held the worker while the disk worked"
                      if rty == TGETATTR + 1 else f"Tgetattr got type {rty}"))
    print("ready", flush=True)
    deadline = time.monotonic() + 120
    while not os.path.exists(go) and time.monotonic() < deadline:
        time.sleep(0.05)
    rty, tag, body = a.recv()
    with open(local, "rb") as f:
        want = f.read(COUNT)
    n = struct.unpack("<I", body[:4])[0] if rty == TREAD + 1 else -1
    good2 = rty == TREAD + 1 and tag == 7 and n > 0 and body[4:4 + n] == want[:n]
    print(("ok" if good2 else "not-ok") + f" the stuck Tread ends, with the file's first {max(n, 0)} bytes")
    if not good2:
        print(f"# reply type {rty} tag {tag}" + (f" errno {struct.unpack('<I', body[:4])[0]}" if rty == RLERROR else ""))
    return 0 if good and good2 else 1


if __name__ == "__main__":
    sys.exit(main())
