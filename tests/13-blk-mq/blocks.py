#!/usr/bin/python3
"""Known data on rnvme's disk, checked from both sides of the VM.

  blocks.py pattern DEV BS    the pattern the VM runner wrote into the first
                              MiB of every image before boot (512-byte block
                              b holds "rkw-lba-%08d" % b, 32 times) reads
                              back from DEV bit for bit, in reads of BS bytes
                              with O_DIRECT (so the driver, not the page
                              cache, answers)
  blocks.py pattern-bytes     writes that pattern to stdout (to restore it)
  blocks.py stamp TREE        writes the guest's 1 MiB stamp for TREE to stdout
  blocks.py stamp-ok IMAGE OFFSET TREE
                              (on the host, after the VM) the image holds
                              TREE's stamp at byte OFFSET

Prints "ok ..." or what differs (the first differing block and its bytes).
"""
import hashlib
import mmap
import os
import sys

MIB = 1 << 20


def pattern():
    return b"".join(b"rkw-lba-%08d" % b * 32 for b in range(2048))


def stamp(tree):
    # 32-byte SHA-256 blocks of a counter, so that no two 512-byte blocks
    # are alike and a block written to the wrong place shows.
    return b"".join(hashlib.sha256(b"rkw-09-%s-%d" % (tree.encode(), i)).digest() for i in range(MIB // 32))


def first_difference(got, want, unit=512):
    for off in range(0, len(want), unit):
        if got[off:off + unit] != want[off:off + unit]:
            return f"block {off // unit} (byte {off}) differs: {got[off:off + 32]!r}... instead of {want[off:off + 32]!r}..."
    return f"{len(got)} bytes instead of {len(want)}"


def read_direct(dev, bs, size):
    fd = os.open(dev, os.O_RDONLY | os.O_DIRECT)
    buf = mmap.mmap(-1, bs)  # page aligned, as O_DIRECT wants
    out = bytearray()
    try:
        while len(out) < size:
            n = os.readv(fd, [buf])
            if n <= 0:
                break
            out += buf[:n]
    finally:
        os.close(fd)
    return bytes(out[:size])


def main(argv):
    if argv[1:2] == ["pattern"] and len(argv) == 4:
        got = read_direct(argv[2], int(argv[3]), MIB)
        if got == pattern():
            return print(f"ok: 2048 blocks in {MIB // int(argv[3])} reads of {argv[3]} bytes")
        return print(first_difference(got, pattern()))
    if argv[1:2] == ["pattern-bytes"] and len(argv) == 2:
        sys.stdout.buffer.write(pattern())
        return None
    if argv[1:2] == ["stamp"] and len(argv) == 3:
        sys.stdout.buffer.write(stamp(argv[2]))
        return None
    if argv[1:2] == ["stamp-ok"] and len(argv) == 5:
        try:
            with open(argv[2], "rb") as f:
                f.seek(int(argv[3]))
                got = f.read(MIB)
        except OSError as e:
            return print(f"cannot read the image: {e}")
        if got == stamp(argv[4]):
            return print(f"ok: 1 MiB at byte {argv[3]} of {os.path.basename(argv[2])}")
        return print(first_difference(got, stamp(argv[4])))
    sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv)
