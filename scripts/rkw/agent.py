"""The host half of a guest's questions: THE agent loop.

The guest cannot reach the host's programs (QEMU's monitor, QEMU's CPU
time), so it asks through a directory both see (shared by virtme-ng over
9p): a question is a file, and the agent answers with another, written
whole (a dot-file renamed), so the guest never reads half of one. Two agents run this loop: scripts/qmp-agent.py
(req.N -> resp.N: QMP commands for tests/qmp.sh) and the one of
scripts/bench-9p-servers.py (q.NAME -> a.NAME: the CPU time of QEMU's 9p
server, for the 9P benchmark). Only the standard library: it runs on the
host's python3.
"""

import os


def write_atomically(path, text):
    """Write path whole: a dot-file in its folder, renamed."""
    tmp = os.path.join(os.path.dirname(path), "." + os.path.basename(path) + ".tmp")
    with open(tmp, "w") as f:
        f.write(text)
    os.rename(tmp, path)


def serve(qdir, ask, reply, answer, alive, idle, keep=False, log=None):
    """Answer the questions in qdir until alive() is false.

    A question is a file ASK+N (tests/qmp.sh renames a dot-file into place,
    so its request is whole; the benchmark's questions say nothing but
    their name); its answer,
    answer(N, text), goes to REPLY+N; questions are answered in the order
    of their names. keep=False: a question is removed once read; keep=True:
    it stays and is remembered as answered (QEMU's 9p server looks at a
    file the guest created once more after the create: one deleted at once
    fails in the guest with ENOENT). answer returning None stops the loop
    (what it answers from is gone). alive() is asked before every question
    (it may connect again to what answers: the QMP socket); idle() waits a
    little when there is none. The loop stops when qdir is gone."""
    answered = set()
    while alive():
        try:
            names = sorted(n for n in os.listdir(qdir) if n.startswith(ask) and n not in answered)
        except OSError:
            return
        if not names:
            idle()
            continue
        for i, name in enumerate(names):
            if i and not alive():
                return
            path = os.path.join(qdir, name)
            try:
                with open(path) as f:
                    text = f.read()
                if keep:
                    answered.add(name)
                else:
                    os.unlink(path)
            except OSError as e:
                if log:
                    log(f"{name}: {e}")
                continue
            n = name[len(ask):]
            out = answer(n, text)
            if out is None:
                return
            try:
                write_atomically(os.path.join(qdir, reply + n), out)
            except OSError:
                return  # the directory is gone: so is the guest
