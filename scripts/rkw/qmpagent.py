"""Run QMP commands for the guest: the host half of tests/qmp.sh.

Usage: qmp-agent.py SOCK DIR

vm.sh starts this next to a VM booted with QMP=yes: SOCK is QEMU's QMP
socket, DIR a host directory the guest has read-write (RKW_QMP_DIR in the
guest). A test in the guest cannot reach QEMU's monitor itself, so it asks
through files:

  DIR/req.N      one QMP command as JSON, written by the guest (it writes a
                 dot-file and renames it, so a req.N is always complete)
  DIR/resp.N     the answer: line 1 is QEMU's reply ({"return": ...} or
                 {"error": ...}, compact JSON), then one line per QMP event
                 that arrived since the previous answer. Written to a
                 dot-file and renamed, so the guest never reads half of it.
  DIR/events     every QMP event, one compact JSON line each, appended as
                 it arrives (a guest that waits for DEVICE_DELETED polls it)
  DIR/agent-up   exists once the agent has negotiated QMP capabilities

Requests run one at a time, in the order of their names. A reply that does
not come within REPLY_TIMEOUT seconds is answered with an error
(class RkwTimeout), and the connection is made again: QEMU's monitor may
be stuck, e.g. in a vCPU's MMIO write that waits for a slow disk.
The loop is rkw/agent.py's. Only the standard library: this runs on the
host's python3.
"""

import json
import os
import select
import socket
import sys
import time

from rkw.agent import serve, write_atomically

REPLY_TIMEOUT = 60.0  # seconds for QEMU to answer one command (tests/qmp.sh waits 90)
POLL = 0.05  # seconds between looks at DIR while idle


def log(msg):
    now = time.time()
    stamp = time.strftime("%H:%M:%S", time.localtime(now)) + f".{int(now * 1000) % 1000:03d}"
    print(f"qmp-agent {stamp}: {msg}", file=sys.stderr, flush=True)


def compact(obj):
    return json.dumps(obj, separators=(",", ":"))


class Gone(Exception):
    """The QMP connection broke (QEMU exited or closed it)."""


class Qmp:
    def __init__(self, path, events_path):
        self.path = path
        self.events_path = events_path
        self.sock = None
        self.buf = b""
        self.pending_events = []  # events not yet handed out with a resp
        self.seq = 0

    def connect(self, give_up):
        """Connect and negotiate capabilities; retry until give_up() says stop."""
        while True:
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                s.connect(self.path)
            except OSError:
                s.close()
                if give_up():
                    return False
                time.sleep(0.2)
                continue
            self.sock, self.buf = s, b""
            try:
                greeting = self.read_message(time.monotonic() + 30)
                if greeting is None or "QMP" not in greeting:
                    raise Gone(f"no QMP greeting: {greeting!r}")
                reply = self.command({"execute": "qmp_capabilities"}, 30)
                if not reply or "return" not in reply:
                    raise Gone(f"qmp_capabilities failed: {reply!r}")
            except (Gone, OSError) as e:
                log(f"connecting: {e}")
                self.close()
                if give_up():
                    return False
                time.sleep(0.5)
                continue
            log(f"connected to {self.path}")
            return True

    def close(self):
        if self.sock is not None:
            self.sock.close()
        self.sock = None

    def read_message(self, deadline):
        """The next JSON message from QEMU, or None at the deadline."""
        while b"\n" not in self.buf:
            left = max(0.0, deadline - time.monotonic())
            ready, _, _ = select.select([self.sock], [], [], left)
            if not ready:
                return None
            data = self.sock.recv(65536)
            if not data:
                raise Gone("QEMU closed the QMP connection")
            self.buf += data
        line, self.buf = self.buf.split(b"\n", 1)
        line = line.strip()
        if not line:
            return self.read_message(deadline)
        try:
            return json.loads(line)
        except ValueError:
            log(f"not JSON from QEMU: {line[:200]!r}")
            return self.read_message(deadline)

    def note_event(self, msg):
        log(f"event: {compact(msg)[:300]}")
        self.pending_events.append(msg)
        del self.pending_events[:-1000]  # a guest that never asks: bounded
        with open(self.events_path, "a") as f:
            f.write(compact(msg) + "\n")

    def drain_events(self):
        """Collect the events QEMU sent while no command ran."""
        while True:
            msg = self.read_message(time.monotonic())
            if msg is None:
                return
            if "event" in msg:
                self.note_event(msg)
            else:
                log(f"reply nobody waits for (a timed-out command's?): {compact(msg)[:300]}")

    def command(self, cmd, timeout):
        """Send cmd, return QEMU's reply to it (events meanwhile are kept)."""
        self.seq += 1
        tag = f"rkw-{os.getpid()}-{self.seq}"
        cmd = dict(cmd, id=tag)
        self.sock.sendall(compact(cmd).encode() + b"\n")
        deadline = time.monotonic() + timeout
        while True:
            msg = self.read_message(deadline)
            if msg is None:
                return None
            if "event" in msg:
                self.note_event(msg)
            elif msg.get("id") == tag:
                del msg["id"]
                return msg
            elif "id" not in msg and "error" in msg:
                # QEMU could not parse the command far enough to see its id.
                return msg
            else:
                log(f"stray reply: {compact(msg)[:300]}")


def main(argv):
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    sock_path, qdir = argv
    parent = os.getppid()

    def orphaned():
        # vm.sh kills us when the VM exits; if it was killed itself
        # (SIGKILL skips its trap), stop on our own.
        return os.getppid() != parent

    qmp = Qmp(sock_path, os.path.join(qdir, "events"))
    open(qmp.events_path, "a").close()
    if not qmp.connect(orphaned):
        return 0
    write_atomically(os.path.join(qdir, "agent-up"), f"{os.getpid()}\n")

    def alive():
        """Connected (again, after QEMU hung up), with the events QEMU sent
        meanwhile kept; False once vm.sh is gone."""
        while not orphaned():
            try:
                if qmp.sock is None and not qmp.connect(orphaned):
                    return False
                qmp.drain_events()
                return True
            except (Gone, OSError) as e:
                log(f"connection lost: {e}; connecting again")
                qmp.close()
                time.sleep(0.2)
        return False

    def answer(name, text):
        try:
            cmd = json.loads(text)
            if not isinstance(cmd, dict) or "execute" not in cmd:
                raise ValueError('not a QMP command ({"execute": ...})')
        except ValueError as e:
            reply = {"error": {"class": "RkwBadRequest", "desc": f"{e}: {text[:200]!r}"}}
        else:
            log(f"req.{name}: {compact(cmd)[:300]}")
            try:
                reply = qmp.command(cmd, REPLY_TIMEOUT)
            except (Gone, OSError) as e:
                # Answer anyway: the guest must not wait for a
                # reply that will never come.
                reply = {"error": {"class": "RkwDisconnected", "desc": str(e)}}
                qmp.close()
            if reply is None:
                reply = {"error": {"class": "RkwTimeout",
                                   "desc": f"QEMU did not answer within {REPLY_TIMEOUT:.0f} s"}}
                qmp.close()  # its late reply must not answer the next command
            log(f"req.{name}: -> {compact(reply)[:300]}")
        lines = [compact(reply)] + [compact(e) for e in qmp.pending_events]
        qmp.pending_events = []
        return "\n".join(lines) + "\n"

    serve(qdir, "req.", "resp.", answer, alive, lambda: select.select([qmp.sock], [], [], POLL), log=log)
    return 0
