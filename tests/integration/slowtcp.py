#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""slowtcp.py — slow and greedy DNS-over-TCP clients against a server on
loopback, for the connection deadlines and limits (src/server/tcp.c).

  slowtcp.py flood PORT [--step SRC:N]... [--fresh SRC] [--fresh-count K]
             [--trickle SEC] [--wait SEC]
      Slowloris: each step opens N connections from address SRC, each
      sending a 2-octet length (65535) and then one octet every --trickle
      seconds (the message is never complete). After each step
      (and 0.3 s) prints "step I SRC opened=N open=M": how many of SRC's
      connections, of every step so far, are still open. Then K fresh
      queries, each on a new connection from --fresh, while the slow ones
      keep trickling: "fresh OK/K". Then waits up to --wait seconds for every
      slow connection to be closed: "survivors S" (still open) and
      "lifetime_max SEC" (the longest a slow connection lived).
  slowtcp.py lifetime PORT SRC [--queries N]
      One connection from SRC: N complete queries answered one after the
      other, then a length of 65535 and one octet every 0.2 s. Prints "answered N"
      and "closed_after SEC": time from the last answer (or from connect
      when N is 0) until the server closed it (or "closed_after none" after
      15 s).
  slowtcp.py steady PORT SRC N INTERVAL
      N queries on one connection, one every INTERVAL seconds: "answered M".
  slowtcp.py pipeline PORT SRC N
      N queries written at once on one connection, then read until the
      server closes: "answered M eof".
  slowtcp.py noread PORT SRC
      Writes queries for 3 s without reading a reply (the replies pile up in
      the server): "closed_after SEC" since the first query, or "none".

Connections are made from SRC (an address in 127.0.0.0/8) to 127.0.0.1.
"""
import queue
import selectors
import socket
import struct
import sys
import threading
import time

HOST = "127.0.0.1"


def query(qid, name="whoami.example."):
    out = struct.pack("!HHHHHH", qid, 0x0100, 1, 0, 0, 0)
    for label in name.rstrip(".").split("."):
        out += bytes([len(label)]) + label.encode()
    return out + b"\0" + struct.pack("!HH", 1, 1)


# The length of a message that never completes: 65535 octets announced,
# one sent at a time.
NEVER = b"\xff\xff"


def framed(qid):
    q = query(qid)
    return struct.pack("!H", len(q)) + q


def connect(src, timeout=3.0):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.bind((src, 0))
    s.settimeout(timeout)
    s.connect((HOST, PORT))
    return s


def recv_exact(s, n):
    buf = b""
    while len(buf) < n:
        chunk = s.recv(n - len(buf))
        if not chunk:
            raise EOFError
        buf += chunk
    return buf


def read_reply(s):
    ln = struct.unpack("!H", recv_exact(s, 2))[0]
    return recv_exact(s, ln)


def closed_by_server(s, limit):
    """Seconds until the server closes s (EOF or reset), None after limit.
    Sends one more octet of a NEVER message every 0.2 s meanwhile."""
    start = time.monotonic()
    s.settimeout(0.2)
    while time.monotonic() - start < limit:
        try:
            if s.recv(4096) == b"":
                return time.monotonic() - start
        except socket.timeout:
            pass
        except OSError:
            return time.monotonic() - start
        try:
            s.send(b"\0")
        except OSError:
            return time.monotonic() - start
    return None


# ---- flood ----------------------------------------------------------------

class Slow:
    """One slowloris connection; owned by the Flood's monitor thread once
    started."""

    def __init__(self, src):
        self.src = src
        self.closed = None
        self.sent = 0
        self.opened = time.monotonic()
        try:
            self.sock = connect(src)
            self.opened = time.monotonic()      # established (a SYN may wait)
            self.sock.setblocking(False)
            self.sock.send(NEVER)
            self.sent = 2
        except OSError:
            self.closed = self.opened
            self.sock = None

    def trickle(self):
        if self.closed is not None:
            return
        try:
            self.sock.send(b"\0")
            self.sent += 1
        except OSError:
            self.mark_closed()

    def mark_closed(self):
        if self.closed is None:
            self.closed = time.monotonic()
            self.sock.close()


class Flood:
    """The slow connections; the monitor thread registers new ones, sees
    them closed and trickles. Other threads only read their fields."""

    def __init__(self, trickle):
        self.conns = []
        self.new = queue.SimpleQueue()
        self.sel = selectors.DefaultSelector()
        self.trickle_every = trickle
        self.stop = False

    def open(self, src, n):
        for _ in range(n):
            c = Slow(src)
            self.conns.append(c)
            if c.sock is not None:
                self.new.put(c)

    def poll(self):
        while not self.new.empty():
            c = self.new.get()
            self.sel.register(c.sock, selectors.EVENT_READ, c)
        if not self.sel.get_map():
            time.sleep(0.01)
            return
        for key, _ in self.sel.select(timeout=0.01):
            c = key.data
            try:
                data = c.sock.recv(4096)
            except OSError:
                data = b""
            if not data:
                self.sel.unregister(c.sock)
                c.mark_closed()

    def monitor(self):
        last = time.monotonic()
        while not self.stop:
            self.poll()
            if time.monotonic() - last >= self.trickle_every:
                last = time.monotonic()
                for c in list(self.conns):
                    c.trickle()

    def open_now(self, src):
        return sum(1 for c in list(self.conns) if c.src == src and c.closed is None)

    def all_closed(self):
        return all(c.closed is not None for c in list(self.conns))


def fresh_query(src, qid):
    try:
        s = connect(src, timeout=2.0)
        s.sendall(framed(qid))
        reply = read_reply(s)
        s.close()
        return struct.unpack("!H", reply[:2])[0] == qid
    except (OSError, EOFError):
        return False


def flood(args):
    steps, fresh, fresh_count, trickle, wait = [], None, 0, 1.0, 6.0
    i = 0
    while i < len(args):
        if args[i] == "--step":
            src, n = args[i + 1].split(":")
            steps.append((src, int(n)))
        elif args[i] == "--fresh":
            fresh = args[i + 1]
        elif args[i] == "--fresh-count":
            fresh_count = int(args[i + 1])
        elif args[i] == "--trickle":
            trickle = float(args[i + 1])
        elif args[i] == "--wait":
            wait = float(args[i + 1])
        i += 2
    f = Flood(trickle)
    mon = threading.Thread(target=f.monitor, daemon=True)
    mon.start()
    for k, (src, n) in enumerate(steps, 1):
        f.open(src, n)
        time.sleep(0.3)
        print("step %d %s opened=%d open=%d" % (k, src, n, f.open_now(src)), flush=True)
    ok = sum(1 for q in range(fresh_count) if fresh_query(fresh, 0x100 + q))
    print("fresh %d/%d" % (ok, fresh_count), flush=True)
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline and not f.all_closed():
        time.sleep(0.05)
    f.stop = True
    mon.join()
    survivors = sum(1 for c in f.conns if c.closed is None)
    now = time.monotonic()
    life = max(((c.closed or now) - c.opened) for c in f.conns) if f.conns else 0
    print("survivors %d" % survivors)
    print("lifetime_max %.2f" % life)


# ---- single connections ---------------------------------------------------

def lifetime(src, nq):
    s = connect(src)
    answered = 0
    for q in range(nq):
        s.sendall(framed(0x200 + q))
        read_reply(s)
        answered += 1
    print("answered %d" % answered)
    s.sendall(NEVER)
    t = closed_by_server(s, 15)
    print("closed_after %s" % ("none" if t is None else "%.2f" % t))


def steady(src, n, interval):
    s = connect(src)
    answered = 0
    try:
        for q in range(n):
            s.sendall(framed(0x400 + q))
            if struct.unpack("!H", read_reply(s)[:2])[0] == 0x400 + q:
                answered += 1
            time.sleep(interval)
    except (OSError, EOFError):
        pass
    print("answered %d" % answered)


def pipeline(src, n):
    s = connect(src)
    s.sendall(b"".join(framed(0x500 + q) for q in range(n)))
    answered = 0
    try:
        while True:
            read_reply(s)
            answered += 1
    except EOFError:
        print("answered %d eof" % answered)
    except OSError as e:
        print("answered %d %s" % (answered, e.__class__.__name__))


def noread(src):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.bind((src, 0))
    s.connect((HOST, PORT))
    s.setblocking(False)
    batch = b"".join(framed(q) for q in range(512))
    pending = b""
    start = time.monotonic()
    while time.monotonic() - start < 12:
        if s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR):
            break
        try:
            if not pending and time.monotonic() - start < 3:
                pending = batch
            if pending:
                pending = pending[s.send(pending):]
            else:
                time.sleep(0.05)
        except BlockingIOError:
            time.sleep(0.02)
        except OSError:
            break
    else:
        print("closed_after none")
        return
    print("closed_after %.2f" % (time.monotonic() - start))


if __name__ == "__main__":
    mode, PORT = sys.argv[1], int(sys.argv[2])
    rest = sys.argv[3:]
    if mode == "flood":
        flood(rest)
    elif mode == "lifetime":
        lifetime(rest[0], int(rest[2]) if len(rest) > 2 and rest[1] == "--queries" else 0)
    elif mode == "steady":
        steady(rest[0], int(rest[1]), float(rest[2]))
    elif mode == "pipeline":
        pipeline(rest[0], int(rest[1]))
    elif mode == "noread":
        noread(rest[0])
    else:
        sys.exit("unknown mode " + mode)
