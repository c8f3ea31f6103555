#!/usr/bin/python3
"""Many concurrent clients for stage 25's greeter and stage 26's async echo
server (run in the VM by their test.sh, and by scripts/bench-echo.sh). One
thread, asyncio.

Usage: async_clients.py COMMAND PORT [ARGS]
Stage 25's greeter (it sends one line, then waits for the client):
  greet PORT                  the greeting arrives (10 s timeout)
  silent PORT                 greeted, then silent: the connection stays open
                              for a second
  halfclose PORT              greeted, then shuts its sending side down: the
                              server closes the connection (10 s timeout)
  answer PORT                 greeted, then sends a line: the server closes
  hold PORT CONNS             CONNS connections greeted and open at once, none
                              closed within a second; then each half-closes
                              and sees the server close it
  held PORT CONNS             CONNS connections greeted (prints "ready"), then
                              each waits for the server to close it (rmmod)
Stage 26's echo server:
  ping PORT                   one short echo, 10 s timeout (is anybody there?)
  many PORT CONNS ROUNDS      CONNS connections open at once; each sends ROUNDS
                              messages of random sizes and checks every echo
  stall PORT                  a slow reader, a half-closed client and idle
                              connections, while 32 clients echo normally
  load PORT CONNS SECONDS     opens CONNS connections (prints "ready"), then they
                              echo as fast as they can for SECONDS; prints
                              messages/s and latencies
                              (for benchmarks, and for rmmod under load: a
                              connection the server closes ends the client)
Prints "ok ..." on success, or what went wrong (exit status 1).
"""
import asyncio
import os
import random
import sys
import time

HOST = "127.0.0.1"
TIMEOUT = 60


async def connect(port):
    return await asyncio.wait_for(asyncio.open_connection(HOST, port), TIMEOUT)


async def exchange(reader, writer, data):
    """Sends DATA, reads the same number of bytes back; returns them."""
    writer.write(data)
    await asyncio.wait_for(writer.drain(), TIMEOUT)
    return await asyncio.wait_for(reader.readexactly(len(data)), TIMEOUT)


GREETING = b"hello from the kernel's reactor\n"


async def greeted(port, timeout=TIMEOUT):
    """Connects and reads the greeting; returns (reader, writer)."""
    reader, writer = await asyncio.wait_for(asyncio.open_connection(HOST, port), timeout)
    line = await asyncio.wait_for(reader.readline(), timeout)
    if line != GREETING:
        raise ValueError(f"expected the greeting {GREETING!r}, got {line!r}")
    return reader, writer


async def closed_by_server(reader, timeout=TIMEOUT):
    """Whether the server closes the connection (end of stream or a reset)
    within `timeout` seconds, with nothing more sent."""
    try:
        rest = await asyncio.wait_for(reader.read(100), timeout)
    except asyncio.TimeoutError:
        return False
    except ConnectionError:
        return True
    if rest:
        raise ValueError(f"{len(rest)} unexpected bytes after the greeting")
    return True


async def cmd_greet(port):
    _, writer = await greeted(port, 10)
    writer.close()
    print(f"ok greeted: {GREETING!r}")


async def cmd_silent(port):
    reader, writer = await greeted(port, 10)
    if await closed_by_server(reader, 1):
        return "the server closed the connection of a client that had sent nothing"
    writer.close()
    print("ok greeted, still connected a second later")


async def cmd_halfclose(port):
    reader, writer = await greeted(port, 10)
    writer.write_eof()
    if not await closed_by_server(reader, 10):
        return "after the client's half-close, the server kept the connection open for 10 s"
    writer.close()
    print("ok the server closed the connection after the client's half-close")


async def cmd_answer(port):
    reader, writer = await greeted(port, 10)
    writer.write(b"hello to you\n")
    if not await closed_by_server(reader, 10):
        return "after the client's answer, the server kept the connection open for 10 s"
    writer.close()
    print("ok the server closed the connection after the client's answer")


async def cmd_hold(port, conns):
    t0 = time.monotonic()
    clients = await asyncio.gather(*[greeted(port) for _ in range(conns)])
    t1 = time.monotonic()
    early = await asyncio.gather(*[closed_by_server(r, 1) for r, _ in clients])
    if any(early):
        return f"{sum(early)} of {conns} greeted connections closed by the server before the client did anything"
    for _, w in clients:
        w.write_eof()
    ended = await asyncio.gather(*[closed_by_server(r) for r, _ in clients])
    for _, w in clients:
        w.close()
    if not all(ended):
        return f"{ended.count(False)} of {conns} connections still open {TIMEOUT} s after their half-close"
    print(f"ok {conns} greeted in {t1 - t0:.1f} s and held open at once; each closed after its half-close")


async def cmd_held(port, conns):
    clients = await asyncio.gather(*[greeted(port) for _ in range(conns)])
    print("ready", flush=True)  # every connection is greeted (test.sh waits for this)
    ended = await asyncio.gather(*[closed_by_server(r) for r, _ in clients])
    for _, w in clients:
        w.close()
    if not all(ended):
        return f"{ended.count(False)} of {conns} held connections still open after {TIMEOUT} s"
    print(f"ok {conns} greeted connections, {conns} closed by the server")


async def cmd_ping(port):
    reader, writer = await asyncio.wait_for(asyncio.open_connection(HOST, port), 10)
    got = await asyncio.wait_for(exchange(reader, writer, b"ping"), 10)
    writer.close()
    if got != b"ping":
        return f"sent b'ping', got {got!r}"
    print("ok one echo")


async def one_client(port, i, rounds, opened, start):
    rng = random.Random(i)
    reader, writer = await connect(port)
    opened.append(i)
    await start.wait()  # every connection is open before anybody sends
    for r in range(rounds):
        data = os.urandom(rng.choice([1, 17, 512, 1460, 4096, 8192, 30000]))
        got = await exchange(reader, writer, data)
        if got != data:
            raise ValueError(f"client {i} round {r}: {len(data)} bytes sent, a different echo came back")
    writer.write_eof()
    rest = await asyncio.wait_for(reader.read(), TIMEOUT)  # the server closes after our EOF
    writer.close()
    if rest:
        raise ValueError(f"client {i}: {len(rest)} unexpected bytes after the last echo")
    return rounds


async def cmd_many(port, conns, rounds):
    opened, start = [], asyncio.Event()
    tasks = [asyncio.create_task(one_client(port, i, rounds, opened, start)) for i in range(conns)]
    t0 = time.monotonic()
    while len(opened) < conns and not any(t.done() for t in tasks):
        await asyncio.sleep(0.05)
    start.set()
    results = await asyncio.gather(*tasks, return_exceptions=True)
    errors = [f"{type(r).__name__}: {r}" for r in results if isinstance(r, BaseException)]
    if errors:
        return f"{len(errors)} of {conns} clients failed, e.g. " + "; ".join(errors[:3])
    print(f"ok {conns} connections open at once x {rounds} messages, all echoed ({time.monotonic() - t0:.1f} s)")


async def cmd_stall(port):
    # A slow reader: sends 4 MiB and reads nothing, so the server's sends to it
    # fill every buffer and its task must wait for POLLOUT.
    slow_r, slow_w = await connect(port)
    slow_w.transport.set_write_buffer_limits(high=1 << 24)
    slow_w.write(os.urandom(4 << 20))
    # A half-closed client: sends, shuts its side down, reads the echo slowly.
    half_r, half_w = await connect(port)
    half_data = os.urandom(200000)
    half_w.write(half_data)
    half_w.write_eof()
    # Idle clients: connected, silent.
    idle = [await connect(port) for _ in range(16)]
    await asyncio.sleep(0.5)
    # Meanwhile, normal clients must be served.
    opened, start = [], asyncio.Event()
    start.set()
    tasks = [asyncio.create_task(one_client(port, 1000 + i, 20, opened, start)) for i in range(32)]
    results = await asyncio.gather(*tasks, return_exceptions=True)
    errors = [f"{type(r).__name__}: {r}" for r in results if isinstance(r, BaseException)]
    if errors:
        return f"with a slow reader, a half-closed and 16 idle clients, {len(errors)} of 32 clients failed: {errors[0]}"
    # The half-closed client gets all its data back, then the end of stream.
    got = bytearray()
    while True:
        chunk = await asyncio.wait_for(half_r.read(1000), TIMEOUT)
        if not chunk:
            break
        got += chunk
        await asyncio.sleep(0.001)
    if bytes(got) != half_data:
        return f"the half-closed client got {len(got)} of {len(half_data)} bytes back"
    # The slow reader finally reads: its echo is intact.
    n = 0
    slow_w.write_eof()
    while n < 4 << 20:
        chunk = await asyncio.wait_for(slow_r.read(1 << 20), TIMEOUT)
        if not chunk:
            break
        n += len(chunk)
    if n != 4 << 20:
        return f"the slow reader got {n} of {4 << 20} bytes back"
    for _, w in idle:
        w.close()
    print("ok 32 clients served past a slow reader, a half-closed and 16 idle clients; both got all their data back")


async def cmd_load(port, conns, seconds):
    lat = []
    done = [0]
    ended = [0]
    stop = 0

    async def client(reader, writer):
        data = os.urandom(512)
        try:
            while time.monotonic() < stop:
                t = time.monotonic()
                if await exchange(reader, writer, data) != data:
                    raise ValueError("wrong echo")
                lat.append(time.monotonic() - t)
                done[0] += 1
        except (ConnectionError, asyncio.IncompleteReadError):
            ended[0] += 1  # the server closed the connection (rmmod)
        writer.close()

    streams = await asyncio.gather(*[connect(port) for _ in range(conns)])
    print("ready", flush=True)  # every connection is open (test.sh waits for this)
    stop = time.monotonic() + seconds
    t0 = time.monotonic()
    results = await asyncio.gather(*[client(r, w) for r, w in streams], return_exceptions=True)
    errors = [f"{type(r).__name__}: {r}" for r in results if isinstance(r, BaseException)]
    elapsed = time.monotonic() - t0
    if errors:
        return f"{len(errors)} clients failed: {errors[0]}"
    lat.sort()
    p = lambda q: lat[min(len(lat) - 1, int(q * len(lat)))] * 1000 if lat else 0
    print(f"ok {conns} connections, {done[0]} messages in {elapsed:.1f} s: {done[0] / elapsed:.0f} msg/s, "
          f"p50 {p(0.5):.2f} ms, p99 {p(0.99):.2f} ms, {ended[0]} closed by the server")


def main():
    cmd, port = sys.argv[1], int(sys.argv[2])
    args = [int(a) for a in sys.argv[3:]]
    cmds = {"greet": cmd_greet, "silent": cmd_silent, "halfclose": cmd_halfclose, "answer": cmd_answer,
            "hold": cmd_hold, "held": cmd_held,
            "ping": cmd_ping, "many": cmd_many, "stall": cmd_stall, "load": cmd_load}
    if cmd not in cmds:
        sys.exit(f"unknown command {cmd}")
    try:
        err = asyncio.run(cmds[cmd](port, *args))
    except (OSError, asyncio.TimeoutError, asyncio.IncompleteReadError, ValueError) as e:
        err = f"{type(e).__name__}: {e}"
    if err:
        print(err)
        sys.exit(1)


main()
