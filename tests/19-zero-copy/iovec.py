#!/usr/bin/env python3
"""iovec.py DEV OFFSET [page-starts]: writes 64 KiB at byte OFFSET of DEV
with O_DIRECT from 128 scattered 512-byte buffers (one pwritev: each buffer
a segment of its own, at an offset no PRP list can describe, so the driver
must use an SGL or its bounce buffer), reads it back the same way into
other scattered buffers, and compares. Prints "ok ..." or "not-ok ...".

The buffers sit at 512 * (2k + 1) of page-aligned memory (they start in the
middle of a page), or with page-starts each at the start of a page of its
own: every piece but the last ends in the middle of its page, which PRPs
cannot describe either (a PRP entry after the first covers its page from
the start, and the one before it must have filled its page)."""
import mmap
import os
import sys

dev, offset = sys.argv[1], int(sys.argv[2])
page_starts = sys.argv[3:] == ["page-starts"]
SEG, N = 512, 128
data = bytes((i * 7 + (i >> 9)) & 0xFF for i in range(SEG * N))
# Page-aligned memory; segment k sits at 512 * (2k + 1) in it: 512-aligned
# (as O_DIRECT needs) but every other 512 bytes skipped, so no segment
# starts or ends where a PRP entry could.
STRIDE, START = (mmap.PAGESIZE, 0) if page_starts else (2 * SEG, SEG)
out_mem = mmap.mmap(-1, STRIDE * N)
in_mem = mmap.mmap(-1, STRIDE * N)
out_bufs = [memoryview(out_mem)[STRIDE * k + START:STRIDE * k + START + SEG] for k in range(N)]
in_bufs = [memoryview(in_mem)[STRIDE * k + START:STRIDE * k + START + SEG] for k in range(N)]
for k, b in enumerate(out_bufs):
    b[:] = data[k * SEG:(k + 1) * SEG]
fd = os.open(dev, os.O_RDWR | os.O_DIRECT)
try:
    n = os.pwritev(fd, out_bufs, offset)
    if n != SEG * N:
        print(f"not-ok pwritev wrote {n} of {SEG * N} bytes")
        sys.exit(1)
    n = os.preadv(fd, in_bufs, offset)
finally:
    os.close(fd)
got = b"".join(bytes(b) for b in in_bufs)
if n == SEG * N and got == data:
    print(f"ok {N} segments of {SEG} bytes{' at page starts' if page_starts else ''} written and read back")
else:
    bad = next((i for i in range(len(data)) if i >= len(got) or got[i] != data[i]), None)
    print(f"not-ok read {n} bytes; first difference at byte {bad}")
    sys.exit(1)
