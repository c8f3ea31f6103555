#!/usr/bin/python3
"""Drive /dev/rmisc's ioctls and error paths from user space (stage 03 test).

Usage: rmisc_ctl.py clear | len | capacity | unknown | bad-pointer-ioctl | bad-pointer-write
                     | partly-bad-write | write-one | write-then-read
Prints the value (len, capacity) or the errno name of the failure.
"""
import ctypes
import errno
import fcntl
import os
import struct
import sys


def _ioc(direction, kind, nr, size):
    return (direction << 30) | (size << 16) | (ord(kind) << 8) | nr


RMISC_CLEAR = _ioc(0, "r", 0x01, 0)
RMISC_GET_LEN = _ioc(2, "r", 0x02, 8)
RMISC_GET_CAPACITY = _ioc(2, "r", 0x03, 8)
RMISC_UNKNOWN = _ioc(0, "r", 0x7F, 0)


def main(cmd):
    fd = os.open("/dev/rmisc", os.O_RDWR)
    try:
        if cmd == "clear":
            fcntl.ioctl(fd, RMISC_CLEAR)
            print("ok")
        elif cmd in ("len", "capacity"):
            req = RMISC_GET_LEN if cmd == "len" else RMISC_GET_CAPACITY
            # Every byte 0xff first: an ioctl that writes fewer than the 8
            # bytes its number declares leaves some of them behind.
            print(struct.unpack("Q", fcntl.ioctl(fd, req, b"\xff" * 8))[0])
        elif cmd == "unknown":
            fcntl.ioctl(fd, RMISC_UNKNOWN)
            print("ok")
        elif cmd == "bad-pointer-ioctl":
            # An integer argument is passed to the kernel as it is: address 16.
            fcntl.ioctl(fd, RMISC_GET_LEN, 16)
            print("ok")
        elif cmd == "bad-pointer-write":
            libc = ctypes.CDLL(None, use_errno=True)
            libc.write.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_size_t]
            if libc.write(fd, 16, 100) < 0:
                raise OSError(ctypes.get_errno(), "write")
            print("ok")
        elif cmd == "partly-bad-write":
            # 200 bytes whose first 100 are readable and the rest is not:
            # the last 100 bytes of a page, then a page that is not mapped.
            # The driver copies the readable part before it meets the fault.
            import mmap
            page = mmap.PAGESIZE
            libc = ctypes.CDLL(None, use_errno=True)
            libc.mmap.restype = ctypes.c_void_p
            libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
            libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
            libc.write.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_size_t]
            base = libc.mmap(None, 2 * page, mmap.PROT_READ | mmap.PROT_WRITE,
                             mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS, -1, 0)
            if base in (None, ctypes.c_void_p(-1).value) or libc.munmap(base + page, page) != 0:
                sys.exit("partly-bad-write: mmap/munmap failed")
            ctypes.memset(base + page - 100, ord("p"), 100)
            n = libc.write(fd, base + page - 100, 200)
            if n < 0:
                raise OSError(ctypes.get_errno(), "write")
            print(f"wrote {n}")
        elif cmd == "write-one":
            os.write(fd, b"x")
            print("ok")
        elif cmd == "write-then-read":
            # On one read-write file: a write moves the file position to the
            # buffer's new end, so a read right after it is at the end (EOF).
            # Two writes: after the second, the end is not what it copied.
            n = os.write(fd, b"earlier ") + os.write(fd, b"position")
            rest = os.read(fd, 100)
            print("EOF" if n == 16 and rest == b"" else f"read {rest!r} after writing {n} bytes")
        else:
            sys.exit(f"unknown command {cmd}")
    except OSError as e:
        print(errno.errorcode.get(e.errno, str(e.errno)))
        sys.exit(1)
    finally:
        os.close(fd)


main(sys.argv[1])
