#!/usr/bin/python3
"""The NVMe tests' oracle: read a controller's registers straight from its
BAR0 (sysfs resource0), independently of the driver under test.

Usage: nvme_regs.py BDF identity   what rnvme should log about CAP and VS
       nvme_regs.py BDF state      CC.EN, CSTS.RDY/CFS, AQA, ASQ, ACQ
       nvme_regs.py BDF clear-admin  zero AQA, ASQ and ACQ (controller
                                   disabled only): they survive a controller
                                   reset, so a driver's probe must be seen
                                   to write them, not inherit them
       nvme_regs.py BDF command    the PCI command register's memory-space
                                   and bus-master bits ("memory=1 master=1")
       nvme_regs.py BDF command-off  clear both bits (device unbound), so a
                                   probe must be seen to turn them on
Every access is an aligned 32-bit load: QEMU's model flags smaller ones.
"""
import ctypes
import mmap
import os
import sys


def read32(m, off):
    return ctypes.c_uint32.from_buffer(m, off).value


def read64(m, off):
    return read32(m, off + 4) << 32 | read32(m, off)


def identity(m):
    cap, vs = read64(m, 0x0), read32(m, 0x8)

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


def state(m):
    cc, csts, aqa = read32(m, 0x14), read32(m, 0x1C), read32(m, 0x24)
    print(f"en={cc & 1} rdy={csts & 1} cfs={(csts >> 1) & 1} mps={(cc >> 7) & 0xf} "
          f"iosqes={(cc >> 16) & 0xf} iocqes={(cc >> 20) & 0xf} "
          f"asqs={(aqa & 0xfff) + 1} acqs={((aqa >> 16) & 0xfff) + 1} "
          f"asq={read64(m, 0x28):#x} acq={read64(m, 0x30):#x}")


def clear_admin(m):
    if read32(m, 0x14) & 1:
        sys.exit("clear-admin: CC.EN=1: AQA, ASQ and ACQ may only change while the controller is disabled")
    for off in (0x24, 0x28, 0x2C, 0x30, 0x34):
        ctypes.c_uint32.from_buffer(m, off).value = 0
    print("ok")


# PCI command register (config space offset 4): memory space, bus master.
PCI_COMMAND, MEMORY, MASTER = 4, 0x2, 0x4


def command(bdf, what):
    with open(f"/sys/bus/pci/devices/{bdf}/config", "r+b", buffering=0) as f:
        f.seek(PCI_COMMAND)
        cmd = int.from_bytes(f.read(2), "little")
        if what == "command-off":
            f.seek(PCI_COMMAND)
            f.write((cmd & ~(MEMORY | MASTER)).to_bytes(2, "little"))
            print("ok")
        else:
            print(f"memory={int(bool(cmd & MEMORY))} master={int(bool(cmd & MASTER))}")


def main(bdf, what):
    if what.startswith("command"):
        command(bdf, what)
        return
    fd = os.open(f"/sys/bus/pci/devices/{bdf}/resource0", os.O_RDWR | os.O_SYNC)
    m = mmap.mmap(fd, 4096, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
    {"identity": identity, "state": state, "clear-admin": clear_admin}[what](m)
    del m
    os.close(fd)


main(sys.argv[1], sys.argv[2])
