#!/usr/bin/python3
"""Clients for the stage 22 echo server (run in the VM by test.sh).

Usage: tcp_client.py COMMAND PORT [ARGS]
  echo PORT CLIENTS         CLIENTS concurrent clients, each echoes data of many
                            sizes, sent and read in random, partial chunks
  abrupt PORT               clients that vanish mid-stream (RST, unread data)
  hold PORT N               open N connections (one mid-transfer), print
                            "ready", then report how the server ended them
  listen PORT               listen on PORT (print "ready") until killed
Prints "ok ..." on success, or what went wrong (exit status 1).
"""
import os
import random
import socket
import struct
import sys
import threading
import time

HOST = "127.0.0.1"
TIMEOUT = 30
SIZES = [0, 1, 2, 7, 100, 1000, 4095, 4096, 4097, 16383, 16384, 16385, 65536, 100000, 1 << 20]


def connect(port):
    s = socket.create_connection((HOST, port), timeout=TIMEOUT)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return s


def echo_once(port, data, rng):
    """Sends DATA in random chunks while reading the echo in random chunks."""
    s = connect(port)
    errors = []

    def sender():
        try:
            pos = 0
            while pos < len(data):
                n = rng.choice([1, 3, 512, 1500, 4096, 20000, 70000])
                s.sendall(data[pos:pos + n])
                pos += n
                if rng.random() < 0.05:
                    time.sleep(0.001)
            s.shutdown(socket.SHUT_WR)  # half close: the server sees EOF
        except OSError as e:
            errors.append(f"send: {e}")

    t = threading.Thread(target=sender)
    t.start()
    got = bytearray()
    try:
        while True:
            chunk = s.recv(rng.choice([1, 10, 777, 4096, 65536]))
            if not chunk:
                break
            got += chunk
    except OSError as e:
        errors.append(f"recv after {len(got)} of {len(data)} bytes: {e}")
    t.join()
    s.close()
    if errors:
        return "; ".join(errors)
    if bytes(got) != data:
        first = next((i for i, (a, b) in enumerate(zip(got, data)) if a != b), min(len(got), len(data)))
        return f"{len(data)} bytes sent, {len(got)} came back, first difference at byte {first}"
    return None


def cmd_echo(port, clients):
    failures = []
    total = [0]
    lock = threading.Lock()

    def client(i):
        rng = random.Random(i)
        sizes = SIZES[:]
        rng.shuffle(sizes)
        for size in sizes:
            data = os.urandom(size)
            try:
                err = echo_once(port, data, rng)
            except OSError as e:
                err = f"{type(e).__name__}: {e}"
            with lock:
                if err:
                    failures.append(f"client {i}, {size} bytes: {err}")
                else:
                    total[0] += size

    threads = [threading.Thread(target=client, args=(i,)) for i in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if failures:
        print("\n".join(failures[:10]))
        sys.exit(1)
    print(f"ok {clients} clients x {len(SIZES)} sizes, {total[0]} bytes echoed")


def rst_close(s):
    # SO_LINGER with a zero timeout: close() sends a RST instead of a FIN.
    s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    s.close()


def cmd_abrupt(port):
    # 1. Connect, and reset at once.
    for _ in range(5):
        rst_close(connect(port))
    # 2. Send a lot, read nothing, reset: the server is blocked sending back.
    for _ in range(3):
        s = connect(port)
        s.settimeout(2)
        try:
            s.sendall(os.urandom(1 << 20))
        except OSError:
            pass  # the windows are full: the server is stuck sending to us
        rst_close(s)
    # 3. Send, then close normally without reading the echo.
    for _ in range(3):
        s = connect(port)
        s.sendall(os.urandom(100000))
        s.close()
    # 4. Half a message, then vanish.
    s = connect(port)
    s.sendall(b"x" * 5000)
    s.recv(10)
    rst_close(s)
    # The server must still serve everybody else.
    err = echo_once(port, os.urandom(300000), random.Random(7))
    if err:
        print(f"after the abrupt clients, a normal client failed: {err}")
        sys.exit(1)
    print("ok 12 abrupt clients, then a normal echo")


def cmd_hold(port, n):
    socks = [connect(port) for _ in range(n)]
    for s in socks[1:]:  # the others echo one message, then sit idle
        s.sendall(b"ping")
        if s.recv(4) != b"ping":
            print("no echo before rmmod")
            sys.exit(1)
    busy = socks[0]  # this one keeps the server blocked in send: we never read
    busy.setblocking(False)
    try:
        while True:
            busy.send(b"z" * 65536)
    except BlockingIOError:
        pass
    print("ready", flush=True)
    ended = 0
    for s in socks[1:]:
        s.settimeout(TIMEOUT)
        try:
            if s.recv(100) == b"":
                ended += 1
        except OSError:
            ended += 1
    busy.settimeout(TIMEOUT)
    try:
        while busy.recv(1 << 20):
            pass
        ended += 1
    except OSError:
        ended += 1
    print(f"ok {ended}/{n} connections ended by the server")
    sys.exit(0 if ended == n else 1)


def cmd_listen(port):
    s = socket.socket()
    s.bind((HOST, port))
    s.listen()
    print("ready", flush=True)
    time.sleep(600)


def main():
    cmd, port = sys.argv[1], int(sys.argv[2])
    try:
        if cmd == "echo":
            cmd_echo(port, int(sys.argv[3]))
        elif cmd == "abrupt":
            cmd_abrupt(port)
        elif cmd == "hold":
            cmd_hold(port, int(sys.argv[3]))
        elif cmd == "listen":
            cmd_listen(port)
        else:
            sys.exit(f"unknown command {cmd}")
    except OSError as e:
        print(f"{type(e).__name__}: {e}")
        sys.exit(1)


main()
