#!/usr/bin/python3
"""The test's oracle: read an NVMe controller's CAP and VS straight from its
BAR0 (sysfs resource0) and print what rnvme should log, decoded here
independently of the driver.

Usage: nvme_regs.py BDF
Every access is an aligned 32-bit load: QEMU's model flags smaller ones.
"""
import ctypes
import mmap
import os
import sys


def read32(m, off):
    return ctypes.c_uint32.from_buffer(m, off).value


def main(bdf):
    fd = os.open(f"/sys/bus/pci/devices/{bdf}/resource0", os.O_RDWR | os.O_SYNC)
    m = mmap.mmap(fd, 4096, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
    lo, hi, vs = read32(m, 0x0), read32(m, 0x4), read32(m, 0x8)
    cap = hi << 32 | lo

    def field(hi_bit, lo_bit):
        return (cap >> lo_bit) & ((1 << (hi_bit - lo_bit + 1)) - 1)

    mqes, cqr, to = field(15, 0), field(16, 16), field(31, 24)
    dstrd, css = field(35, 32), field(44, 37)
    mpsmin, mpsmax = field(51, 48), field(55, 52)
    print(f"NVMe {vs >> 16}.{(vs >> 8) & 0xff}.{vs & 0xff} controller, PCI 1b36:0010")
    print(f"CAP: MQES {mqes} ({mqes + 1} entries/queue), CQR {'true' if cqr else 'false'}, "
          f"DSTRD {dstrd} ({4 << dstrd}-byte doorbell stride)")
    print(f"CAP: TO {to} ({to * 500} ms), CSS {css:#x} (NVM: {'true' if css & 1 else 'false'}), "
          f"MPSMIN {mpsmin} ({4096 << mpsmin} bytes), MPSMAX {mpsmax} ({4096 << mpsmax} bytes)")
    del m
    os.close(fd)


main(sys.argv[1])
