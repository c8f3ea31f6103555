#!/usr/bin/env python3
"""discards.py DEV START:LEN...: discard the byte ranges of block device DEV
all at once, one io_uring block command each (BLOCK_URING_CMD_DISCARD,
Linux 6.12), submitted in one io_uring_enter: io_uring submits them under
one plug, where the block layer merges discards of different places into
one request of several ranges (up to the disk's max_discard_segments).
Prints "ok N ranges discarded", or what failed. Only the standard library:
the io_uring system calls through ctypes (x86-64 numbers).
"""

import ctypes
import mmap
import os
import struct
import sys

SYS_IO_URING_SETUP = 425
SYS_IO_URING_ENTER = 426
IORING_OP_URING_CMD = 46
IORING_ENTER_GETEVENTS = 1
IORING_OFF_SQ_RING = 0
IORING_OFF_CQ_RING = 0x8000000
IORING_OFF_SQES = 0x10000000
BLOCK_URING_CMD_DISCARD = 0x12 << 8  # _IO(0x12, 0)

libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long


def syscall(*args):
    r = libc.syscall(*[ctypes.c_long(a) if isinstance(a, int) else a for a in args])
    if r < 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))
    return r


def main():
    dev, ranges = sys.argv[1], [tuple(int(x) for x in r.split(":")) for r in sys.argv[2:]]
    n = len(ranges)
    fd = os.open(dev, os.O_RDWR)
    # struct io_uring_params: 120 bytes; sq_off at 40, cq_off at 80.
    params = ctypes.create_string_buffer(120)
    ring = syscall(SYS_IO_URING_SETUP, 8, params)
    sq_entries, cq_entries = struct.unpack_from("II", params, 0)
    # The offsets of the rings' fields in their mappings (not their values).
    sq_head, sq_tail, sq_mask_at, _, _, _, sq_array = struct.unpack_from("7I", params, 40)
    cq_head, cq_tail, cq_mask_at, _, _, cqes = struct.unpack_from("6I", params, 80)
    sq = mmap.mmap(ring, sq_array + 4 * sq_entries, offset=IORING_OFF_SQ_RING)
    cq = mmap.mmap(ring, cqes + 16 * cq_entries, offset=IORING_OFF_CQ_RING)
    sq_mask = struct.unpack_from("I", sq, sq_mask_at)[0]
    cq_mask = struct.unpack_from("I", cq, cq_mask_at)[0]
    sqes = mmap.mmap(ring, 64 * sq_entries, offset=IORING_OFF_SQES)
    tail = struct.unpack_from("I", sq, sq_tail)[0]
    for i, (start, length) in enumerate(ranges):
        slot = (tail + i) & sq_mask
        sqe = bytearray(64)
        # opcode, fd, cmd_op (at 8), addr: the start (16), user_data (32),
        # addr3: the length (48).
        struct.pack_into("<BBHiI", sqe, 0, IORING_OP_URING_CMD, 0, 0, fd, BLOCK_URING_CMD_DISCARD)
        struct.pack_into("<Q", sqe, 16, start)
        struct.pack_into("<Q", sqe, 32, i)
        struct.pack_into("<Q", sqe, 48, length)
        sqes[64 * slot:64 * slot + 64] = bytes(sqe)
        struct.pack_into("I", sq, sq_array + 4 * slot, slot)
    struct.pack_into("I", sq, sq_tail, tail + n)
    syscall(SYS_IO_URING_ENTER, ring, n, n, IORING_ENTER_GETEVENTS, None, 0)
    head = struct.unpack_from("I", cq, cq_head)[0]
    done = struct.unpack_from("I", cq, cq_tail)[0]
    bad = []
    for k in range(head, done):
        user_data, res = struct.unpack_from("<Qi", cq, cqes + 16 * (k & cq_mask))
        if res != 0:
            bad.append(f"range {user_data}: {os.strerror(-res)}")
    struct.pack_into("I", cq, cq_head, done)
    if done - head != n or bad:
        print(f"{done - head} of {n} completions; " + "; ".join(bad))
        return 1
    print(f"ok {n} ranges discarded")
    return 0


if __name__ == "__main__":
    sys.exit(main())
