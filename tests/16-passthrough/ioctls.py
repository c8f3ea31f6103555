#!/usr/bin/python3
"""The NVMe passthrough ioctls of include/uapi/linux/nvme_ioctl.h, well-formed
and malformed, against a controller node and a namespace node (stage 16 test).

Usage: ioctls.py [--driver rnvme|c] CTRL_NODE NS_NODE
       ioctls.py --abandon CTRL_NODE NS_NODE   (a controller whose I/O takes
           seconds: a read given 300 ms times out, then its buffer is
           retired, the controller may still write it, and the next
           command gets another)
       ioctls.py --interrupt CTRL_NODE NS_NODE (the same controller: a read
           interrupted by a signal, then its buffer is retired too; and a
           command waiting for its turn is interrupted by a signal)
  e.g. ioctls.py /dev/rnvme0 /dev/rng0n1          (the stage's driver)
       ioctls.py --driver c /dev/nvme0 /dev/ng0n1 (Linux's C nvme driver)

Prints one line per check, "ok <what>" or "not-ok <what>: expected X, got Y",
and exits 1 if any failed. --driver picks the column of expectations in
CHECKS below: rnvme (the stage's spec, the default) or c (what the C driver
of Linux 7.3 answers; where it differs from rnvme, the table says why).

An outcome is the ioctl's answer: "0", an errno name ("EINVAL") or an NVMe
status ("status 0x4080 (SC 0x80, DNR)": the CQE status field without the
phase bit, as the C driver returns it). A check whose command would write
blocks adds what became of them: "blocks kept" (nothing reached the
controller) or "blocks written".

Blocks: the test owns 256 KiB from 60 MiB into namespace 1; it saves them
first and writes them back at the end. Every check that needs known data
there writes it itself, so no check depends on another. Run as root (the
EACCES checks fork a child that drops to uid/gid 65534, capabilities gone).
"""
import ctypes
import errno
import faulthandler
import os
import signal
import struct
import sys
import threading
import time

# ---- the ABI (x86_64) ----------------------------------------------------------
PASSTHRU = "<BBHIIIQQIIIIIIIIII"  # struct nvme_passthru_cmd: 72 bytes
PASSTHRU64 = "<BBHIIIQQIIIIIIIIIIQ"  # struct nvme_passthru_cmd64: 80 bytes
USER_IO = "<BBHHHQQQIIHH4x"  # struct nvme_user_io: 44 bytes + 4 of padding
FIELDS = ("opcode", "flags", "rsvd1", "nsid", "cdw2", "cdw3", "metadata", "addr", "metadata_len",
          "data_len", "cdw10", "cdw11", "cdw12", "cdw13", "cdw14", "cdw15", "timeout_ms")
assert struct.calcsize(PASSTHRU) == 72 and struct.calcsize(PASSTHRU64) == 80
assert struct.calcsize(USER_IO) == 48


def _ioc(direction, nr, size):  # asm-generic/ioctl.h: dir 2 bits, size 14, type 8, nr 8
    return (direction << 30) | (size << 16) | (ord("N") << 8) | nr


_IO, _IOW, _IOWR = 0, 1, 3
NVME_IOCTL_ID = _ioc(_IO, 0x40, 0)
NVME_IOCTL_ADMIN_CMD = _ioc(_IOWR, 0x41, 72)
NVME_IOCTL_SUBMIT_IO = _ioc(_IOW, 0x42, 48)
NVME_IOCTL_IO_CMD = _ioc(_IOWR, 0x43, 72)
NVME_IOCTL_RESET = _ioc(_IO, 0x44, 0)
NVME_IOCTL_RESCAN = _ioc(_IO, 0x46, 0)
NVME_IOCTL_ADMIN64_CMD = _ioc(_IOWR, 0x47, 80)
NVME_IOCTL_IO64_CMD = _ioc(_IOWR, 0x48, 80)
NVME_IOCTL_IO64_CMD_VEC = _ioc(_IOWR, 0x49, 80)
UNKNOWN_IOCTL = _ioc(_IO, 0x7F, 0)  # 'N' 0x7f: no such ioctl
ADMIN_CMD_WRONG_SIZE = _ioc(_IOWR, 0x41, 64)  # ADMIN_CMD's nr with another size
assert (NVME_IOCTL_ID, NVME_IOCTL_ADMIN_CMD, NVME_IOCTL_SUBMIT_IO, NVME_IOCTL_IO_CMD, NVME_IOCTL_RESET,
        NVME_IOCTL_ADMIN64_CMD, NVME_IOCTL_IO64_CMD) == (
    0x4E40, 0xC0484E41, 0x40304E42, 0xC0484E43, 0x4E44, 0xC0504E47, 0xC0504E48)
WIDE = (NVME_IOCTL_ADMIN64_CMD, NVME_IOCTL_IO64_CMD, NVME_IOCTL_IO64_CMD_VEC)

# Opcodes. Bits 1:0 are the data direction: 00 none, 01 host to controller,
# 10 controller to host, 11 bidirectional.
FLUSH, WRITE, READ, BIDI_IO, WRITE_ZEROES, VENDOR_IO = 0x00, 0x01, 0x02, 0x03, 0x08, 0x80
IDENTIFY, GET_FEATURES, RESERVED_ADMIN, VENDOR_ADMIN_BIDI = 0x06, 0x0A, 0x3C, 0xFF
ASYNC_EVENT_REQUEST, FW_COMMIT, FORMAT_NVM, SANITIZE, VENDOR_ADMIN = 0x0C, 0x10, 0x80, 0x84, 0xC0
GET_LOG_PAGE = 0x02
CNS_NS, CNS_CTRL = 0, 1
FEAT_NUM_QUEUES = 0x07
SET_FEATURES, FEAT_VWC, FEAT_HMB, FEAT_TIMESTAMP = 0x09, 0x06, 0x0D, 0x0E
LIMIT = 128 << 10  # rnvme's largest data_len (its bounce buffer)
UNPRIVILEGED = 65534  # nobody/nogroup
SENTINEL = 0xDEADBEEF  # put in `result` before a call, to see it written

# ---- memory, by hand: pages at known addresses, inaccessible and read-only ones ---
libc = ctypes.CDLL(None, use_errno=True)
libc.ioctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_void_p]
libc.ioctl.restype = ctypes.c_int
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
libc.mmap.restype = ctypes.c_void_p
libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
PROT_NONE, PROT_READ, PROT_WRITE, MAP_PRIVATE, MAP_ANONYMOUS = 0, 1, 2, 0x02, 0x20
PAGE = os.sysconf("SC_PAGE_SIZE")


class Pages:
    """size bytes of fresh anonymous memory, page aligned. Never unmapped:
    an address put in a command stays valid (or stays bad) for the run."""

    def __init__(self, size):
        self.size = (size + PAGE - 1) // PAGE * PAGE
        addr = libc.mmap(None, self.size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
        if addr in (None, ctypes.c_void_p(-1).value):
            raise OSError(ctypes.get_errno(), "mmap")
        self.addr = addr

    def put(self, data, offset=0):
        ctypes.memmove(self.addr + offset, data, len(data))

    def get(self, n, offset=0):
        return ctypes.string_at(self.addr + offset, n)

    def forbid(self, offset=0):
        """No access from offset (a page boundary) on: a bad pointer that,
        unlike an unmapped one, no later mmap can reuse."""
        libc.mprotect(self.addr + offset, self.size - offset, PROT_NONE)

    def read_only(self):
        libc.mprotect(self.addr, self.size, PROT_READ)


def bad_address():
    p = Pages(PAGE)
    p.forbid()
    return p.addr


# ---- ioctls and outcomes ---------------------------------------------------------
def ioctl(fd, req, arg=0):
    """The ioctl's return value, or -errno."""
    ret = libc.ioctl(fd, req, arg)
    return -ctypes.get_errno() if ret < 0 else ret


def status(value):
    sc, sct = value & 0xFF, (value >> 8) & 0x7
    extra = (f"SCT {sct} " if sct else "") + f"SC {sc:#x}" + (", DNR" if value & 0x4000 else "")
    return f"status {value:#x} ({extra})"


def outcome(ret):
    if ret < 0:
        return errno.errorcode.get(-ret, str(-ret))
    return status(ret) if ret else "0"


def cmd(opcode, metadata_at=False, **fields):
    """A passthrough command; metadata_at: metadata points to a fresh page."""
    c = dict.fromkeys(FIELDS, 0)
    c["opcode"] = opcode
    if metadata_at:
        c["metadata"] = Pages(PAGE).addr
    c.update(fields)
    return c


def pack(c, wide, result=SENTINEL):
    values = [c[f] for f in FIELDS]
    return struct.pack(PASSTHRU64, *values, 0, result) if wide else struct.pack(PASSTHRU, *values, result)


def submit(fd, req, c):
    """Submits c through req (ADMIN/IO, 32 or 64); (ioctl's return, result)."""
    wide = req in WIDE
    buf = ctypes.create_string_buffer(pack(c, wide))
    ret = ioctl(fd, req, ctypes.addressof(buf))
    result = struct.unpack_from("<Q" if wide else "<I", buf.raw, 72 if wide else 68)[0]
    return ret, result


def identify(cns, nsid, buf, **extra):
    return cmd(IDENTIFY, nsid=nsid, addr=buf.addr, data_len=4096, cdw10=cns, **extra)


class SetupError(Exception):
    """A command the checks rely on (reading and writing the test's blocks) failed."""


class Ctx:
    """The two nodes, namespace 1's geometry and the test's blocks."""

    def __init__(self, ctrl, ns):
        self.ctrl_node, self.ns_node = ctrl, ns
        self.ctrl = os.open(ctrl, os.O_RDWR)
        self.ns = os.open(ns, os.O_RDWR)
        page = Pages(4096)
        ret, _ = submit(self.ctrl, NVME_IOCTL_ADMIN_CMD, identify(CNS_CTRL, 0, page))
        if ret:
            raise SetupError(f"Identify Controller through ADMIN_CMD on {ctrl}: expected 0, got {outcome(ret)}")
        self.id_ctrl = page.get(4096)
        ret, _ = submit(self.ctrl, NVME_IOCTL_ADMIN_CMD, identify(CNS_NS, 1, page))
        if ret:
            raise SetupError(f"Identify Namespace 1 through ADMIN_CMD on {ctrl}: expected 0, got {outcome(ret)}")
        id_ns = page.get(4096)
        self.nsze = struct.unpack_from("<Q", id_ns, 0)[0]
        flbas = id_ns[26]
        fmt = (flbas & 0xF) | ((flbas >> 5) & 0x3) << 4
        self.bs = 1 << id_ns[128 + 4 * fmt + 2]
        self.lba = (60 << 20) // self.bs  # the test's blocks: 256 KiB from 60 MiB
        self.nblocks = (256 << 10) // self.bs
        if self.lba + self.nblocks > self.nsze:
            raise SetupError(f"namespace 1 ({self.nsze} blocks of {self.bs} bytes) is under 61 MiB")
        self.saved = self.read(self.lba, self.nblocks)

    def restore(self):
        self.write(self.lba, self.saved)

    # Reads and writes the checks rely on: IO_CMD on the namespace node, in
    # pieces of at most LIMIT bytes; a failure ends the run.
    def _rw(self, opcode, lba, data_or_len):
        n = data_or_len if isinstance(data_or_len, int) else len(data_or_len)
        buf, out = Pages(min(n, LIMIT)), b""
        for off in range(0, n, LIMIT):
            size = min(LIMIT, n - off)
            if opcode == WRITE:
                buf.put(data_or_len[off:off + size])
            ret, _ = submit(self.ns, NVME_IOCTL_IO_CMD, self.rw(opcode, lba + off // self.bs, size // self.bs, buf))
            if ret:
                raise SetupError(f"{'Write' if opcode == WRITE else 'Read'} of {size} bytes at LBA "
                                 f"{lba + off // self.bs} through IO_CMD on {self.ns_node}: expected 0, got {outcome(ret)}")
            out += buf.get(size)
        return out

    def read(self, lba, nblocks):
        return self._rw(READ, lba, nblocks * self.bs)

    def write(self, lba, data):
        self._rw(WRITE, lba, data)

    def rw(self, opcode, lba, nblocks, buf, **extra):
        """A Read or Write (or any LBA command) of nblocks at lba through buf."""
        c = dict(nsid=1, addr=buf.addr if buf else 0, data_len=nblocks * self.bs if buf else 0,
                 cdw10=lba & 0xFFFFFFFF, cdw11=lba >> 32, cdw12=nblocks - 1)
        c.update(extra)
        return cmd(opcode, **c)

    def pattern(self, tag, nblocks):
        """nblocks of known data, no two blocks alike, tag in each."""
        return b"".join((b"rkw-10 %s lba %d " % (tag, self.lba + b)).ljust(self.bs, b"%c" % (65 + b % 26))
                        for b in range(nblocks))

    def prime(self, nblocks):
        """Known data (pattern A) in the first nblocks of the test's blocks."""
        self.write(self.lba, self.pattern(b"A", nblocks))
        return self.read(self.lba, nblocks)

    def fate(self, before):
        """What became of blocks that held `before` (a command may have written them)."""
        return "blocks kept" if self.read(self.lba, len(before) // self.bs) == before else "blocks written"


# ---- the checks: each returns its outcome ----------------------------------------
def ident_page_matches(ctx, page):
    """VID, SSVID and SN of an Identify Controller page against setup's."""
    got, ref = page.get(4096), ctx.id_ctrl
    return "page matches" if got[0:24] == ref[0:24] else "page differs"


def identify_via(node, req):
    def check(ctx):
        page = Pages(4096)
        ret, _ = submit(getattr(ctx, node), req, identify(CNS_CTRL, 0, page))
        return outcome(ret) + (", " + ident_page_matches(ctx, page) if ret == 0 else "")
    return check


def get_features_result(ctx):
    """Get Features, Number of Queues: its result (NSQA, NCQA) in `result`,
    the same through ADMIN_CMD and ADMIN64_CMD (whose upper half is 0)."""
    c = cmd(GET_FEATURES, cdw10=FEAT_NUM_QUEUES)
    r32, res32 = submit(ctx.ctrl, NVME_IOCTL_ADMIN_CMD, c)
    r64, res64 = submit(ctx.ctrl, NVME_IOCTL_ADMIN64_CMD, c)
    if r32 or r64:
        return f"{outcome(r32)} and {outcome(r64)}"
    if res32 == SENTINEL or res32 == 0 or res64 != res32:
        return f"0 and 0, result {res32:#x} and {res64:#x}"
    return "0 and 0, result written"


def nsid_of(node):
    def check(ctx):
        ret = ioctl(getattr(ctx, node), NVME_IOCTL_ID)
        return f"nsid {ret}" if ret >= 0 else outcome(ret)
    return check


def plain_ioctl(node, req):
    return lambda ctx: outcome(ioctl(getattr(ctx, node), req))


def read_back(node, req):
    """Writes pattern A through IO_CMD on the namespace node, reads it back via node/req."""
    def check(ctx):
        want = ctx.prime(4096 // ctx.bs)
        buf = Pages(4096)
        ret, _ = submit(getattr(ctx, node), req, ctx.rw(READ, ctx.lba, 4096 // ctx.bs, buf))
        return outcome(ret) + (", " + ("data matches" if buf.get(4096) == want else "data differs") if ret == 0 else "")
    return check


def write_read_only_fd(ctx):
    """A Write as root through an fd opened O_RDONLY, as nvme-cli 2.3 opens
    its device for `nvme write`: CAP_SYS_ADMIN suffices."""
    before = ctx.prime(4096 // ctx.bs)
    fd = os.open(ctx.ns_node, os.O_RDONLY)
    try:
        buf = Pages(4096)
        buf.put(ctx.pattern(b"B", 4096 // ctx.bs))
        ret, _ = submit(fd, NVME_IOCTL_IO_CMD, ctx.rw(WRITE, ctx.lba, 4096 // ctx.bs, buf))
    finally:
        os.close(fd)
    after = ctx.read(ctx.lba, 4096 // ctx.bs)
    return outcome(ret) + (", data written" if after == buf.get(4096) else
                           ", blocks kept" if after == before else ", data differs")


def read_at(lba_of, nbytes, req=NVME_IOCTL_IO_CMD):
    def check(ctx):
        buf = Pages(nbytes)
        ret, _ = submit(ctx.ns, req, ctx.rw(READ, lba_of(ctx), nbytes // ctx.bs, buf))
        return outcome(ret)
    return check


def admin_no_data(opcode):
    return lambda ctx: outcome(submit(ctx.ctrl, NVME_IOCTL_ADMIN_CMD, cmd(opcode))[0])


def namespace_of(ctx):
    """Namespace 1's size and format (NSZE, FLBAS) by Identify Namespace,
    or None."""
    page = Pages(4096)
    ret, _ = submit(ctx.ctrl, NVME_IOCTL_ADMIN_CMD, identify(CNS_NS, 1, page))
    return (page.get(8), page.get(1, 26)) if ret == 0 else None


def changes_namespace(opcode, **fields):
    """An admin command without data that would change namespace 1 or the
    controller under the driver (or that the driver must answer itself):
    its outcome, and whether namespace 1 has the size and format it had."""
    def check(ctx):
        before = namespace_of(ctx)
        ret, _ = submit(ctx.ctrl, NVME_IOCTL_ADMIN_CMD, cmd(opcode, **fields))
        after = namespace_of(ctx)
        return f"{outcome(ret)}, " + ("namespace kept" if before and after == before else "namespace changed")
    return check


def set_feature(fid, **fields):
    """Set Features of feature fid through ADMIN_CMD on the controller node."""
    return lambda ctx: outcome(submit(ctx.ctrl, NVME_IOCTL_ADMIN_CMD, cmd(SET_FEATURES, cdw10=fid, **fields))[0])


def timestamp_set_and_got(ctx):
    """Set Features Timestamp (8 bytes: milliseconds since 1970), then Get:
    the controller's clock moved to what was set."""
    buf = Pages(4096)
    ms = int(time.time() * 1000)
    buf.put(struct.pack("<Q", ms))
    ret = submit(ctx.ctrl, NVME_IOCTL_ADMIN_CMD, cmd(SET_FEATURES, cdw10=FEAT_TIMESTAMP, addr=buf.addr, data_len=8))[0]
    if ret:
        return f"set: {outcome(ret)}"
    buf.put(bytes(8))
    ret = submit(ctx.ctrl, NVME_IOCTL_ADMIN_CMD, cmd(GET_FEATURES, cdw10=FEAT_TIMESTAMP, addr=buf.addr, data_len=8))[0]
    if ret:
        return f"get: {outcome(ret)}"
    got = struct.unpack("<Q", buf.get(8))[0] & ((1 << 48) - 1)
    return "0, clock set" if ms <= got < ms + 600_000 else f"0, clock {got} (set {ms})"


def bad_write(req=NVME_IOCTL_IO_CMD, nbytes=4096, opcode=WRITE, addr=None, **extra):
    """A Write-like command of nbytes of pattern B over pattern A, malformed
    by `extra` (or with addr instead of the buffer): the outcome and what
    became of the blocks."""
    def check(ctx):
        n = nbytes // ctx.bs
        before = ctx.prime(n)
        buf = Pages(nbytes)
        buf.put(ctx.pattern(b"B", n))
        c = ctx.rw(opcode, ctx.lba, n, buf, **extra)
        if addr is not None:
            c["addr"] = addr(ctx, buf)
        ret, _ = submit(ctx.ns, req, c)
        return f"{outcome(ret)}, {ctx.fate(before)}"
    return check


def bad_identify(req=NVME_IOCTL_ADMIN_CMD, size=4096, addr=None, **extra):
    """Identify Controller, malformed by `extra` (or addr, or size)."""
    def check(ctx):
        buf = Pages(size)
        c = identify(CNS_CTRL, 0, buf, **extra)
        c["data_len"] = size
        if addr is not None:
            c["addr"] = addr(ctx, buf)
        return outcome(submit(ctx.ctrl, req, c)[0])
    return check


def bad_read(node, **extra):
    """An I/O Read of the test's blocks through IO_CMD, malformed by `extra`."""
    def check(ctx):
        buf = Pages(4096)
        c = ctx.rw(READ, ctx.lba, 4096 // ctx.bs, buf, **extra)
        return outcome(submit(getattr(ctx, node), NVME_IOCTL_IO_CMD, c)[0])
    return check


def host_read_commands(ctx):
    """The SMART / Health log's Host Read Commands (bytes 64-79): the reads
    the controller has completed."""
    page = Pages(4096)
    ret, _ = submit(ctx.ctrl, NVME_IOCTL_ADMIN_CMD,
                    cmd(GET_LOG_PAGE, nsid=0xFFFFFFFF, addr=page.addr, data_len=512, cdw10=0x02 | (127 << 16)))
    if ret:
        raise SetupError(f"SMART log through ADMIN_CMD on {ctx.ctrl_node}: expected 0, got {outcome(ret)}")
    lo, hi = struct.unpack_from("<QQ", page.get(512), 64)
    return lo | hi << 64


def read_into_read_only(ctx):
    """A Read into a buffer the caller cannot write: refused before the
    controller is involved (its count of reads does not move)."""
    before = host_read_commands(ctx)
    buf = Pages(4096)
    buf.read_only()
    ret, _ = submit(ctx.ns, NVME_IOCTL_IO_CMD, ctx.rw(READ, ctx.lba, 4096 // ctx.bs, buf))
    reads = host_read_commands(ctx) - before
    return outcome(ret) + (", the controller saw no read" if reads == 0 else f", {reads} read(s) reached the controller")


def bidi_io(ctx):
    buf = Pages(4096)
    return outcome(submit(ctx.ns, NVME_IOCTL_IO_CMD, ctx.rw(BIDI_IO, ctx.lba, 4096 // ctx.bs, buf))[0])


def bidi_admin_with_data(ctx):
    buf = Pages(4096)
    return outcome(submit(ctx.ctrl, NVME_IOCTL_ADMIN_CMD, cmd(VENDOR_ADMIN_BIDI, addr=buf.addr, data_len=4096))[0])


def bad_arg(node, req, arg):
    return lambda ctx: outcome(ioctl(getattr(ctx, node), req, arg(ctx)))


def struct_into_bad_page(ctx):
    """ADMIN_CMD's struct whose last 32 bytes lie in an inaccessible page."""
    p, page = Pages(2 * PAGE), Pages(4096)
    at = PAGE - 40
    p.put(pack(identify(CNS_CTRL, 0, page), False)[:40], at)
    p.forbid(PAGE)
    return outcome(ioctl(ctx.ctrl, NVME_IOCTL_ADMIN_CMD, p.addr + at))


def struct_read_only(ctx):
    """ADMIN_CMD's struct in a read-only page: it reads, but `result` cannot
    be written back."""
    p, page = Pages(PAGE), Pages(4096)
    p.put(pack(identify(CNS_CTRL, 0, page), False))
    p.read_only()
    return outcome(ioctl(ctx.ctrl, NVME_IOCTL_ADMIN_CMD, p.addr))


def unprivileged(node, req, make):
    """The command make(ctx) from a forked child that dropped to uid/gid
    65534 (setuid from root clears every capability) on the fd root opened."""
    def check(ctx):
        c = make(ctx)
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:
            try:
                os.close(r)
                os.setgroups([])
                os.setgid(UNPRIVILEGED)
                os.setuid(UNPRIVILEGED)
                with open("/proc/self/status") as f:
                    eff = [line.split()[1] for line in f if line.startswith("CapEff:")][0]
                got = outcome(submit(getattr(ctx, node), req, c)[0]) if int(eff, 16) == 0 else f"CapEff {eff}"
            except BaseException as e:
                got = f"exception {e!r}"
            os.write(w, got.encode())
            os._exit(0)
        os.close(w)
        got = b""
        while chunk := os.read(r, 4096):
            got += chunk
        os.close(r)
        os.waitpid(pid, 0)
        return got.decode()
    return check


def submit_io_read(node):
    """The old NVME_IOCTL_SUBMIT_IO (struct nvme_user_io): a Read of 4 KiB."""
    def check(ctx):
        buf = Pages(4096)
        uio = struct.pack(USER_IO, READ, 0, 0, 4096 // ctx.bs - 1, 0, 0, buf.addr, ctx.lba, 0, 0, 0, 0)
        arg = ctypes.create_string_buffer(uio)
        return outcome(ioctl(getattr(ctx, node), NVME_IOCTL_SUBMIT_IO, ctypes.addressof(arg)))
    return check


def io64_vec_read(ctx):
    """NVME_IOCTL_IO64_CMD_VEC: a Read of 4 KiB into one iovec."""
    buf, iov = Pages(4096), Pages(16)
    iov.put(struct.pack("<QQ", buf.addr, 4096))
    c = ctx.rw(READ, ctx.lba, 4096 // ctx.bs, buf)
    c["addr"], c["data_len"] = iov.addr, 1  # data_len is vec_cnt here
    return outcome(submit(ctx.ns, NVME_IOCTL_IO64_CMD_VEC, c)[0])


# ---- the table -------------------------------------------------------------------
# Each row: what is checked, the check, the outcome rnvme must give (the
# stage's spec), and the C nvme driver's (Linux 7.3) where it differs (SAME
# otherwise), with the reason; {ctrl} and {ns} are the two nodes.
SAME = object()
# A row not run on the C driver, which would carry the command out (a
# Format NVM would reformat the namespace under the rest of the checks).
NOT_ON_C = object()
EPERM = "EPERM"
NS_KEPT = "namespace kept"
OK, EINVAL, EFAULT, EACCES, ENOTTY = "0", "EINVAL", "EFAULT", "EACCES", "ENOTTY"
KEPT, WRITTEN = "blocks kept", "blocks written"
PAGE_OK, DATA_OK = "0, page matches", "0, data matches"
BIG = LIMIT + 4096
HUGE = 16 << 20
C_DEV, NS_DEV = "ctrl", "ns"
Identify = lambda ctx: identify(CNS_CTRL, 0, Pages(4096))
GetFeatures = lambda ctx: cmd(GET_FEATURES, cdw10=FEAT_NUM_QUEUES)
Read4k = lambda ctx: ctx.rw(READ, ctx.lba, 4096 // ctx.bs, Pages(4096))
Vendor = lambda ctx: cmd(VENDOR_IO, nsid=1)

CHECKS = [
    # -- well-formed commands --------------------------------------------------------------
    ("Identify Controller through ADMIN_CMD on {ctrl}", identify_via(C_DEV, NVME_IOCTL_ADMIN_CMD), PAGE_OK, SAME),
    ("Identify Controller through ADMIN64_CMD on {ctrl}", identify_via(C_DEV, NVME_IOCTL_ADMIN64_CMD), PAGE_OK, SAME),
    ("Identify Controller through ADMIN_CMD on {ns}", identify_via(NS_DEV, NVME_IOCTL_ADMIN_CMD), PAGE_OK, SAME),
    ("Identify Controller through ADMIN64_CMD on {ns}", identify_via(NS_DEV, NVME_IOCTL_ADMIN64_CMD), PAGE_OK, SAME),
    ("Get Features (Number of Queues) on {ctrl}: result written back, by ADMIN_CMD and ADMIN64_CMD", get_features_result,
     "0 and 0, result written", SAME),
    ("NVME_IOCTL_ID on {ns}", nsid_of(NS_DEV), "nsid 1", SAME),
    ("Read through IO_CMD on {ns} of what a Write through IO_CMD put there", read_back(NS_DEV, NVME_IOCTL_IO_CMD), DATA_OK, SAME),
    ("Read through IO64_CMD on {ns} of what a Write through IO_CMD put there", read_back(NS_DEV, NVME_IOCTL_IO64_CMD), DATA_OK, SAME),
    # C: IO_CMD on the controller node works while it has one namespace (and
    # logs "using deprecated NVME_IOCTL_IO_CMD ioctl on the char device!").
    ("Read through IO_CMD on {ctrl} (nsid 1) of what a Write through IO_CMD put there", read_back(C_DEV, NVME_IOCTL_IO_CMD), DATA_OK, SAME),
    # C: the controller node has no IO64_CMD.
    ("Read through IO64_CMD on {ctrl} (nsid 1) of what a Write through IO_CMD put there", read_back(C_DEV, NVME_IOCTL_IO64_CMD), DATA_OK, ENOTTY),
    ("Write through IO_CMD on {ns} as root, on an fd opened read-only (as nvme-cli opens it)", write_read_only_fd, "0, data written", SAME),
    ("Read of 128 KiB (rnvme's data_len limit) through IO_CMD on {ns}", read_at(lambda ctx: ctx.lba, LIMIT), OK, SAME),
    # -- commands the controller fails: the status, positive --------------------------------
    ("Read past the namespace's end on {ns}: LBA Out of Range", read_at(lambda ctx: ctx.nsze, 4096), status(0x4080), SAME),
    # -- EPERM: admin commands user space may not send ----------------------------------------
    # rnvme passes five admin opcodes (Get Log Page, Identify, Get and Set
    # Features, Keep Alive); C passes all but the ones it must refuse, and
    # rescans the namespace after a Format NVM or a Sanitize.
    ("admin opcode 0x3c (reserved, no data) on {ctrl}", admin_no_data(RESERVED_ADMIN), EPERM, status(0x4001)),
    # Reserved and vendor-specific (C0h-FFh) opcodes: nothing tells the
    # driver what they do (a vendor's may format, or take addresses in CDWs).
    ("admin opcode 0xff (vendor, bidirectional) without data on {ctrl}", admin_no_data(VENDOR_ADMIN_BIDI), EPERM, status(0x4001)),
    ("vendor-specific admin opcode 0xc0 (no data) on {ctrl}", changes_namespace(VENDOR_ADMIN), f"{EPERM}, {NS_KEPT}",
     f"{status(0x4001)}, {NS_KEPT}"),
    ("Format NVM of namespace 1 to LBA format 4 (4096-byte blocks) on {ctrl}", changes_namespace(FORMAT_NVM, nsid=1, cdw10=4),
     f"{EPERM}, {NS_KEPT}", NOT_ON_C),
    ("Format NVM of namespace 1 to LBA format 1 (8 bytes of metadata a block) on {ctrl}",
     changes_namespace(FORMAT_NVM, nsid=1, cdw10=1), f"{EPERM}, {NS_KEPT}", NOT_ON_C),
    ("Sanitize (block erase) on {ctrl}", changes_namespace(SANITIZE, cdw10=2), f"{EPERM}, {NS_KEPT}", NOT_ON_C),
    ("Firmware Commit (replace and activate at once) on {ctrl}", changes_namespace(FW_COMMIT, cdw10=3 << 3),
     f"{EPERM}, {NS_KEPT}", NOT_ON_C),
    # QEMU answers an Asynchronous Event Request only when an event comes.
    ("Asynchronous Event Request, given 1 s, on {ctrl}", changes_namespace(ASYNC_EVENT_REQUEST, timeout_ms=1000),
     f"{EPERM}, {NS_KEPT}", NOT_ON_C),
    # -- EPERM: features user space may not get or set ------------------------------------------
    # Host Memory Buffer: CDW13/14 would give the controller a list of host
    # memory to use as its own (QEMU has none; hardware without an IOMMU
    # would DMA wherever the list points).
    ("Set Features Host Memory Buffer (enable, a descriptor list at 0x1000) on {ctrl}",
     set_feature(FEAT_HMB, cdw11=1, cdw12=0x100, cdw13=0x1000, cdw15=1), EPERM, NOT_ON_C),
    # The disk turned the volatile write cache off: it sends no Flush.
    ("Set Features Volatile Write Cache on, on {ctrl}", set_feature(FEAT_VWC, cdw11=1), EPERM, NOT_ON_C),
    ("Set Features Number of Queues (the driver's) on {ctrl}", set_feature(FEAT_NUM_QUEUES, cdw11=0x00030003), EPERM,
     NOT_ON_C),
    ("Set Features Timestamp (8 bytes), then Get Features Timestamp, on {ctrl}", timestamp_set_and_got, "0, clock set",
     SAME),
    # -- EPERM: I/O commands off the allow-list -----------------------------------------------
    ("vendor-specific I/O opcode 0x80 (no data) through IO_CMD on {ns}",
     lambda ctx: outcome(submit(ctx.ns, NVME_IOCTL_IO_CMD, cmd(VENDOR_IO, nsid=1))[0]), EPERM, status(0x4001)),
    # -- ENOTTY --------------------------------------------------------------------------------
    ("NVME_IOCTL_ID on {ctrl}", nsid_of(C_DEV), ENOTTY, SAME),
    ("unknown ioctl _IO('N', 0x7f) on {ctrl}", plain_ioctl(C_DEV, UNKNOWN_IOCTL), ENOTTY, SAME),
    ("unknown ioctl _IO('N', 0x7f) on {ns}", plain_ioctl(NS_DEV, UNKNOWN_IOCTL), ENOTTY, SAME),
    ("ADMIN_CMD's number with a 64-byte size on {ctrl}", bad_arg(C_DEV, ADMIN_CMD_WRONG_SIZE, lambda ctx: 0), ENOTTY, SAME),
    ("NVME_IOCTL_SUBMIT_IO on {ctrl}", submit_io_read(C_DEV), ENOTTY, SAME),
    # C: the namespace node takes the old SUBMIT_IO and IO64_CMD_VEC.
    ("NVME_IOCTL_SUBMIT_IO (a 4 KiB Read) on {ns}", submit_io_read(NS_DEV), ENOTTY, OK),
    ("NVME_IOCTL_IO64_CMD_VEC (a 4 KiB Read) on {ns}", io64_vec_read, ENOTTY, OK),
    # -- EINVAL, and nothing reaches the controller ----------------------------------------------
    ("flags 1 on Identify through ADMIN_CMD on {ctrl}", bad_identify(flags=1), EINVAL, SAME),
    ("flags 1 on Identify through ADMIN64_CMD on {ctrl}", bad_identify(NVME_IOCTL_ADMIN64_CMD, flags=1), EINVAL, SAME),
    ("flags 1 on a Write through IO_CMD on {ns}", bad_write(flags=1), f"{EINVAL}, {KEPT}", SAME),
    ("flags 1 on a Write through IO64_CMD on {ns}", bad_write(NVME_IOCTL_IO64_CMD, flags=1), f"{EINVAL}, {KEPT}", SAME),
    # C: metadata is only looked at when both the pointer and the length are
    # nonzero (and there is data); one alone is ignored.
    ("metadata pointer without metadata_len on a Write through IO_CMD on {ns}", bad_write(metadata_at=True), f"{EINVAL}, {KEPT}", f"{OK}, {WRITTEN}"),
    ("metadata_len 8 without a metadata pointer on a Write through IO_CMD on {ns}", bad_write(metadata_len=8), f"{EINVAL}, {KEPT}", f"{OK}, {WRITTEN}"),
    # C: a namespace without metadata (no integrity profile) refuses both.
    ("metadata pointer and metadata_len 8 on a Write through IO_CMD on {ns}", bad_write(metadata_at=True, metadata_len=8), f"{EINVAL}, {KEPT}", SAME),
    ("metadata pointer and metadata_len 8 on Identify through ADMIN_CMD on {ctrl}", bad_identify(metadata_at=True, metadata_len=8), EINVAL, SAME),
    # C: no limit of its own; the queue's max_hw_sectors (QEMU's MDTS, 512 KiB).
    (f"data_len {BIG} on Identify through ADMIN_CMD on {{ctrl}}", bad_identify(size=BIG), EINVAL, OK),
    (f"data_len {BIG} on a Write of as many bytes through IO_CMD on {{ns}}", bad_write(nbytes=BIG), f"{EINVAL}, {KEPT}", f"{OK}, {WRITTEN}"),
    (f"data_len {HUGE} on Identify through ADMIN_CMD on {{ctrl}}", bad_identify(size=HUGE), EINVAL, SAME),
    # C: no direction check: the command goes out with the buffer attached.
    ("data_len 4096 on Write Zeroes (opcode 0x08: no data) through IO_CMD on {ns}", bad_write(opcode=WRITE_ZEROES), f"{EINVAL}, {KEPT}", f"{OK}, {WRITTEN}"),
    ("data_len 4096 on I/O opcode 0x03 (bidirectional) through IO_CMD on {ns}", bidi_io, EPERM, status(0x4001)),
    ("data_len 4096 on admin opcode 0xff (bidirectional) through ADMIN_CMD on {ctrl}", bidi_admin_with_data, EPERM, status(0x4001)),
    # C: an I/O command's nsid must be the namespace's, on either node (the
    # controller node's IO_CMD goes to its only namespace).
    ("nsid 2 on a Read through IO_CMD on {ns}", bad_read(NS_DEV, nsid=2), EINVAL, SAME),
    ("nsid 2 on a Read through IO_CMD on {ctrl}", bad_read(C_DEV, nsid=2), EINVAL, SAME),
    # -- EFAULT ----------------------------------------------------------------------------------
    ("ADMIN_CMD on {ctrl} with the argument 16", bad_arg(C_DEV, NVME_IOCTL_ADMIN_CMD, lambda ctx: 16), EFAULT, SAME),
    ("ADMIN64_CMD on {ctrl} with the argument 16", bad_arg(C_DEV, NVME_IOCTL_ADMIN64_CMD, lambda ctx: 16), EFAULT, SAME),
    ("IO_CMD on {ns} with the argument 16", bad_arg(NS_DEV, NVME_IOCTL_IO_CMD, lambda ctx: 16), EFAULT, SAME),
    ("IO64_CMD on {ns} with the argument 16", bad_arg(NS_DEV, NVME_IOCTL_IO64_CMD, lambda ctx: 16), EFAULT, SAME),
    ("ADMIN_CMD on {ctrl} whose struct runs into an inaccessible page", struct_into_bad_page, EFAULT, SAME),
    ("ADMIN_CMD on {ctrl} whose struct is read-only (result cannot be written back)", struct_read_only, EFAULT, SAME),
    # Bad addr: a page mapped PROT_NONE.
    ("Identify through ADMIN_CMD on {ctrl} into a bad addr", bad_identify(addr=lambda ctx, buf: bad_address()), EFAULT, SAME),
    ("Write through IO_CMD on {ns} from a bad addr", bad_write(addr=lambda ctx, buf: bad_address()), f"{EFAULT}, {KEPT}", SAME),
    ("Write of 8 KiB through IO_CMD on {ns} from a buffer whose second page is bad",
     bad_write(nbytes=8192, addr=lambda ctx, buf: (buf.forbid(PAGE), buf.addr)[1]), f"{EFAULT}, {KEPT}", SAME),
    ("Read through IO_CMD on {ns} into a read-only buffer", read_into_read_only, f"{EFAULT}, the controller saw no read", SAME),
    # -- EACCES: no CAP_SYS_ADMIN ----------------------------------------------------------------
    ("unprivileged Get Features through ADMIN_CMD on {ctrl}", unprivileged(C_DEV, NVME_IOCTL_ADMIN_CMD, GetFeatures), EACCES, SAME),
    ("unprivileged Get Features through ADMIN64_CMD on {ctrl}", unprivileged(C_DEV, NVME_IOCTL_ADMIN64_CMD, GetFeatures), EACCES, SAME),
    ("unprivileged Get Features through ADMIN_CMD on {ns}", unprivileged(NS_DEV, NVME_IOCTL_ADMIN_CMD, GetFeatures), EACCES, SAME),
    # C: unprivileged Identify (CNS 0, 1, 5, 6, 8) is allowed since 6.2.
    ("unprivileged Identify Controller through ADMIN_CMD on {ctrl}", unprivileged(C_DEV, NVME_IOCTL_ADMIN_CMD, Identify), EACCES, OK),
    # C: unprivileged I/O that the controller's Commands Supported and
    # Effects log marks harmless is allowed on a namespace node.
    ("unprivileged Read through IO_CMD on {ns}", unprivileged(NS_DEV, NVME_IOCTL_IO_CMD, Read4k), EACCES, OK),
    ("unprivileged vendor I/O opcode 0x80 through IO_CMD on {ns}", unprivileged(NS_DEV, NVME_IOCTL_IO_CMD, Vendor), EACCES, SAME),
    ("unprivileged vendor I/O opcode 0x80 through IO64_CMD on {ns}", unprivileged(NS_DEV, NVME_IOCTL_IO64_CMD, Vendor), EACCES, SAME),
    # -- last, as the C driver acts on them --------------------------------------------------------
    # C: RESCAN queues a namespace scan, RESET resets the controller.
    ("NVME_IOCTL_RESCAN on {ctrl}", plain_ioctl(C_DEV, NVME_IOCTL_RESCAN), ENOTTY, OK),
    ("NVME_IOCTL_RESET on {ctrl}", plain_ioctl(C_DEV, NVME_IOCTL_RESET), ENOTTY, OK),
]


def on_slow_controller(ctrl_node, ns_node, scenario):
    """Runs, on the nodes of a controller whose I/O takes seconds, the checks
    scenario(ctrl, ns, nsid, bs, buf, page) returns: (what, expected
    outcome, a callable giving the outcome) each, in order. Returns the
    number of failures."""
    disk = "rnvme" + os.path.basename(ns_node)[len("rng"):]
    with open(f"/sys/block/{disk}/queue/logical_block_size") as f:
        bs = int(f.read())
    ctrl, ns = os.open(ctrl_node, os.O_RDWR), os.open(ns_node, os.O_RDWR)
    nsid = ioctl(ns, NVME_IOCTL_ID)
    failed = 0
    for what, want, check in scenario(ctrl, ns, nsid, bs, Pages(PAGE), Pages(PAGE)):
        got = check()
        failed += got != want
        print(f"ok {what}: {got}" if got == want else f"not-ok {what}: expected {want}, got {got}", flush=True)
    os.close(ctrl)
    os.close(ns)
    return failed


def abandon(ctrl, ns, nsid, bs, buf, page):
    """A read that times out (the controller takes seconds, the command is
    given 300 ms), then commands through either node: the timed-out
    command's buffer stays the controller's until it answers, and so does
    its identifier (I/O queue 1 keeps one for passthrough), but the next
    command gets another buffer; once the controller has answered, both
    come back."""
    return [
        ("a Read given 300 ms by a controller that takes 4 s", "ETIMEDOUT",
         lambda: outcome(submit(ns, NVME_IOCTL_IO_CMD, cmd(READ, nsid=nsid, addr=buf.addr, data_len=bs,
                                                           timeout_ms=300))[0])),
        ("then an Identify through the controller node (another buffer: the timed-out one is retired)", "0",
         lambda: outcome(submit(ctrl, NVME_IOCTL_ADMIN_CMD, identify(1, 0, page))[0])),
        ("and a Read through the namespace node at once (I/O queue 1's passthrough identifier is still the "
         "timed-out Read's)", "EBUSY",
         lambda: outcome(submit(ns, NVME_IOCTL_IO_CMD, cmd(READ, nsid=nsid, addr=buf.addr, data_len=bs))[0])),
        ("and a Read through the namespace node 5 s later (the controller has answered: identifier and buffer "
         "given back)", "0",
         lambda: (time.sleep(5), outcome(submit(ns, NVME_IOCTL_IO_CMD, cmd(READ, nsid=nsid, addr=buf.addr,
                                                                            data_len=bs))[0]))[1]),
        # rnvme has two buffers: had the first timeout kept its buffer for
        # good, this one would keep the other, and nothing would be left.
        ("a second Read given 300 ms", "ETIMEDOUT",
         lambda: outcome(submit(ns, NVME_IOCTL_IO_CMD, cmd(READ, nsid=nsid, addr=buf.addr, data_len=bs,
                                                           timeout_ms=300))[0])),
        ("then an Identify through the controller node (the first timed-out Read's buffer came back)", "0",
         lambda: outcome(submit(ctrl, NVME_IOCTL_ADMIN_CMD, identify(1, 0, page))[0])),
    ]


def interrupt(ctrl, ns, nsid, bs, buf, page):
    """A read the controller takes 4 s to answer, given 10 s, and
    interrupted by a signal after 0.5 s: the ioctl returns EINTR, but the
    controller still has the command, and may still write the buffer. The
    buffer is retired as after a timeout; the next command gets another.
    Then a command waiting for its turn behind such a Read is interrupted
    by a signal: the wait is interruptible, so it returns at once."""
    # A handler, so that the signal interrupts the ioctl instead of ending
    # the process; sent to this thread (a process-wide signal could go to
    # the timer's).
    signal.signal(signal.SIGUSR1, lambda *_: None)
    me = threading.get_ident()
    threading.Timer(0.5, signal.pthread_kill, (me, signal.SIGUSR1)).start()
    held = {}

    def waiting_for_the_turn():
        """A Read given 10 s holds the turn for 4 s (in a thread of its own);
        an Identify waits for the turn and gets a signal 0.5 s later."""
        time.sleep(5)  # the interrupted Read's identifier comes back
        slow = Pages(PAGE)
        t = threading.Thread(target=lambda: held.update(read=outcome(submit(
            ns, NVME_IOCTL_IO_CMD, cmd(READ, nsid=nsid, addr=slow.addr, data_len=bs, timeout_ms=10000))[0])))
        t.start()
        time.sleep(0.5)
        threading.Timer(0.5, signal.pthread_kill, (me, signal.SIGUSR1)).start()
        t0 = time.monotonic()
        ret = outcome(submit(ctrl, NVME_IOCTL_ADMIN_CMD, identify(1, 0, page))[0])
        waited = time.monotonic() - t0
        t.join()
        return f"{ret}, " + ("at once" if waited < 2.5 else f"after {waited:.1f} s")

    return [
        ("a Read given 10 s by a controller that takes 4 s, interrupted by a signal after 0.5 s", "EINTR",
         lambda: outcome(submit(ns, NVME_IOCTL_IO_CMD, cmd(READ, nsid=nsid, addr=buf.addr, data_len=bs,
                                                           timeout_ms=10000))[0])),
        ("then an Identify through the controller node (another buffer: the interrupted command's is retired)", "0",
         lambda: outcome(submit(ctrl, NVME_IOCTL_ADMIN_CMD, identify(1, 0, page))[0])),
        ("an Identify waiting for the turn of a Read that takes 4 s, interrupted by a signal after 0.5 s "
         "(the wait is interruptible)", "EINTR, at once", waiting_for_the_turn),
        ("and that Read", "0", lambda: held.get("read", "not run")),
    ]


SCENARIOS = {"--abandon": abandon, "--interrupt": interrupt}


def main(argv):
    args = argv[1:]
    if len(args) == 3 and args[0] in SCENARIOS:
        return 1 if on_slow_controller(args[1], args[2], SCENARIOS[args[0]]) else 0
    driver = "rnvme"
    if args[:1] == ["--driver"] and len(args) > 1:
        driver, args = args[1], args[2:]
    if driver not in ("rnvme", "c") or len(args) != 2:
        sys.exit(__doc__.split("\n\n")[1])
    try:
        ctx = Ctx(*args)
    except (SetupError, OSError) as e:
        print(f"not-ok setup: {e}", flush=True)
        return 1
    failed = 0
    try:
        for what, check, want_rnvme, want_c in CHECKS:
            what = what.format(ctrl=ctx.ctrl_node, ns=ctx.ns_node)
            want = want_rnvme if driver == "rnvme" or want_c is SAME else want_c
            if want is NOT_ON_C:
                print(f"skip {what}: not sent to the C driver, which would carry it out", flush=True)
                continue
            faulthandler.dump_traceback_later(120, exit=True)  # a command that never completes
            try:
                got = check(ctx)
            except SetupError as e:
                got = f"setup failed: {e}"
            except Exception as e:
                got = f"exception {e!r}"
            faulthandler.cancel_dump_traceback_later()
            if got == want:
                print(f"ok {what}: {got}", flush=True)
            else:
                failed += 1
                print(f"not-ok {what}: expected {want}, got {got}", flush=True)
    finally:
        try:
            ctx.restore()
        except SetupError as e:
            print(f"not-ok the test's blocks written back: {e}", flush=True)
            failed += 1
    return 1 if failed else 0


sys.exit(main(sys.argv))
