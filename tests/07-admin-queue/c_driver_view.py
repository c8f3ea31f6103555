#!/usr/bin/python3
"""Print the lines rnvme should log about a controller, built from what the
C nvme driver and nvme-cli report for it (the test's independent oracle).

Usage: c_driver_view.py ID_CTRL_JSON ID_NS_JSON
"""
import json
import sys


def main(ctrl_file, ns_file):
    ctrl = json.load(open(ctrl_file))
    ns = json.load(open(ns_file))
    text = lambda k: str(ctrl[k]).rstrip(" ")
    print(f'model "{text("mn")}", serial "{text("sn")}", firmware "{text("fr")}", '
          f'PCI vendor {ctrl["vid"]:#06x}')
    mdts = ctrl["mdts"]
    # The C driver's minimum page size is CAP.MPSMIN; QEMU's is 4 KiB.
    print(f"MDTS {mdts}: at most {4096 << mdts} bytes per transfer" if mdts
          else "MDTS 0: no transfer size limit")
    print(f'controller ID {ctrl["cntlid"]}, {ctrl["nn"]} namespace(s)')
    fmt = ns["flbas"] & 0xF
    block = 1 << ns["lbafs"][fmt]["ds"]
    print(f'namespace 1: {ns["nsze"]} blocks of {block} bytes (LBA format {fmt}), '
          f'{ns["nsze"] * block >> 20} MiB')


main(sys.argv[1], sys.argv[2])
