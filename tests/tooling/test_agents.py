"""The host halves of the guest's questions, run as vm.sh and
bench-9p-servers.sh run them, against a fake QEMU: scripts/qmp-agent.py
(req.N -> resp.N, on a fake QMP socket) and bench-9p-servers.py's agent
(q.NAME -> a.NAME, for a process named qemu-system-* that names DIR)."""

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time

import pytest
from conftest import REPO

SCRIPTS = os.path.join(REPO, "scripts")


def wait_for(path, seconds=10):
    deadline = time.monotonic() + seconds
    while not os.path.exists(path):
        if time.monotonic() > deadline:
            raise AssertionError(f"{path} did not appear within {seconds} s")
        time.sleep(0.02)


def ask(qdir, name, text):
    """As the guest does: a dot-file renamed into place."""
    tmp = os.path.join(qdir, "." + name)
    with open(tmp, "w") as f:
        f.write(text)
    os.rename(tmp, os.path.join(qdir, name))


class FakeQmp:
    """A QMP server on a Unix socket: greets, accepts qmp_capabilities,
    answers query-status, sends a DEVICE_DELETED event before answering
    device_del, and hangs up on `quit` (the agent must connect again)."""

    def __init__(self, path):
        self.srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.srv.bind(path)
        self.srv.listen(4)
        self.connections = 0
        self.commands = []
        threading.Thread(target=self.serve, daemon=True).start()

    def serve(self):
        while True:
            try:
                conn, _ = self.srv.accept()
            except OSError:
                return
            self.connections += 1
            f = conn.makefile("rwb")

            def send(msg):
                f.write(json.dumps(msg).encode() + b"\n")
                f.flush()

            send({"QMP": {"version": {}, "capabilities": []}})
            for line in f:
                cmd = json.loads(line)
                self.commands.append(cmd["execute"])
                if cmd["execute"] == "quit":
                    conn.shutdown(socket.SHUT_RDWR)
                    conn.close()
                    break
                if cmd["execute"] == "device_del":
                    send({"event": "DEVICE_DELETED", "data": {"device": cmd["arguments"]["id"]}})
                if cmd["execute"] in ("qmp_capabilities", "device_del"):
                    send({"return": {}, "id": cmd["id"]})
                elif cmd["execute"] == "query-status":
                    send({"return": {"status": "running"}, "id": cmd["id"]})
                else:
                    send({"error": {"class": "CommandNotFound", "desc": cmd["execute"]}, "id": cmd["id"]})


@pytest.fixture
def qmp_agent(tmp_path):
    sock, qdir = str(tmp_path / "qmp.sock"), str(tmp_path / "guest")
    os.mkdir(qdir)
    fake = FakeQmp(sock)
    agent = subprocess.Popen([sys.executable, os.path.join(SCRIPTS, "qmp-agent.py"), sock, qdir],
                             stderr=subprocess.PIPE, text=True)
    wait_for(os.path.join(qdir, "agent-up"))
    yield fake, qdir
    agent.kill()
    agent.wait()


def answer(qdir, n, request):
    ask(qdir, f"req.{n}", json.dumps(request))
    wait_for(os.path.join(qdir, f"resp.{n}"))
    with open(os.path.join(qdir, f"resp.{n}")) as f:
        return [json.loads(line) for line in f.read().splitlines()]


def test_qmp_agent_answers_in_order_with_the_events(qmp_agent):
    fake, qdir = qmp_agent
    assert answer(qdir, 1, {"execute": "query-status"}) == [{"return": {"status": "running"}}]
    assert not os.path.exists(os.path.join(qdir, "req.1"))  # taken
    lines = answer(qdir, 2, {"execute": "device_del", "arguments": {"id": "rkw-d0"}})
    assert lines == [{"return": {}}, {"event": "DEVICE_DELETED", "data": {"device": "rkw-d0"}}]
    with open(os.path.join(qdir, "events")) as f:
        assert [json.loads(x)["event"] for x in f.read().splitlines()] == ["DEVICE_DELETED"]
    assert answer(qdir, 3, {"execute": "nonsense"})[0]["error"]["class"] == "CommandNotFound"
    assert fake.commands == ["qmp_capabilities", "query-status", "device_del", "nonsense"]


def test_qmp_agent_refuses_what_is_no_command(qmp_agent):
    _, qdir = qmp_agent
    assert answer(qdir, 1, {"not": "a command"})[0]["error"]["class"] == "RkwBadRequest"
    ask(qdir, "req.2", "{not json")
    wait_for(os.path.join(qdir, "resp.2"))


def test_qmp_agent_connects_again_when_qemu_hangs_up(qmp_agent):
    fake, qdir = qmp_agent
    assert answer(qdir, 1, {"execute": "quit"})[0]["error"]["class"] == "RkwDisconnected"
    assert answer(qdir, 2, {"execute": "query-status"}) == [{"return": {"status": "running"}}]
    assert fake.connections == 2


def test_bench_agent_answers_every_question_and_leaves_it(tmp_path):
    qdir = tmp_path / "share"
    qdir.mkdir()
    # A process named like QEMU whose command line names the directory
    # (a bash that is not replaced by its sleep).
    qemu = tmp_path / "qemu-system-x86_64"
    shutil.copy(shutil.which("bash"), qemu)
    fake = subprocess.Popen([str(qemu), "-c", "sleep 30; :", str(qdir)], start_new_session=True)
    agent = subprocess.Popen([sys.executable, os.path.join(SCRIPTS, "bench-9p-servers.py"), "agent", str(qdir)])
    try:
        for name in ("stat-1", "stat-2"):
            ask(str(qdir), f"q.{name}", "")
            wait_for(str(qdir / f"a.{name}"))
            assert float((qdir / f"a.{name}").read_text()) >= 0
            assert (qdir / f"q.{name}").exists()  # QEMU's 9p server looks at it once more
        os.killpg(fake.pid, signal.SIGKILL)
        fake.wait()
        assert agent.wait(10) == 0  # QEMU gone: the agent stops
    finally:
        if fake.poll() is None:
            os.killpg(fake.pid, signal.SIGKILL)
        agent.kill()
