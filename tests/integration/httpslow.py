#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""httpslow.py — greedy and slow HTTP clients against topodns's endpoints on
loopback, for the bounds of src/server/http.c.

  httpslow.py status PORT PATH [--pad N] [--body N]
      One request for PATH with a header field of N octets (and a body of N
      octets with --body): prints "status CODE" ("status none" when the
      server closed without answering) and "closed yes|no" (the server
      closed the connection within 3 s of answering).
  httpslow.py flood PORT --conns N --bytes B [--pid PID] [--probe PORT/PATH]...
      N connections at once, each sending a request line and then B octets
      of one header field that never ends, as fast as the server takes
      them. Meanwhile every 0.1 s a fresh GET of each probe. Prints
      "answers_431 K" (connections answered 431), "unfinished U"
      (connections neither closed nor done after 30 s), "probes OK/TOTAL"
      (answered 200 within 2 s) and, with --pid, "rss_growth_kb G": the
      largest VmRSS of PID seen (every 20 ms, and 0.2 s after the last
      connection ended) minus the one before.
  httpslow.py slow PORT [--interval S] [--max T]
      One connection sending a header byte every S seconds: prints
      "closed_after SEC" (from connect until the server closed it) or
      "closed_after none" after T seconds.
  httpslow.py hold --port P [--port P]... --conns N [--interval S]
                   [--seconds T] [--no-reconnect] [--probe PORT/PATH] [--snap S]
      Keeps N connections (spread over the ports) open, each sending a
      header byte every S seconds; a connection the server closes is opened
      again (unless --no-reconnect). With --snap S, prints "open_at_snap M"
      S seconds in. After T seconds prints "open M" (still
      open), "opened X" and "connect_failed F", and with --probe
      "probe_seconds SEC" (how long a GET of the probe, made just after the
      snapshot or else 1 s before the end, took; "none" when it failed).

Connections go to 127.0.0.1 from 127.0.0.1.
"""
import selectors
import socket
import sys
import time

HOST = "127.0.0.1"


def arg(name, default, cast=str, argv=None):
    argv = argv or sys.argv
    if name in argv:
        return cast(argv[argv.index(name) + 1])
    return default


def args(name):
    out, argv = [], sys.argv
    for i, a in enumerate(argv):
        if a == name and i + 1 < len(argv):
            out.append(argv[i + 1])
    return out


def get(port, path, timeout=2.0):
    """Status code of GET path, or None."""
    try:
        s = socket.create_connection((HOST, port), timeout=timeout)
        s.sendall(b"GET %s HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n" % path.encode())
        data = b""
        while b"\r\n" not in data:
            chunk = s.recv(4096)
            if not chunk:
                break
            data += chunk
        s.close()
        return int(data.split(b" ")[1]) if data.startswith(b"HTTP/") else None
    except (OSError, ValueError, IndexError):
        return None


def rss_kb(pid):
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def cmd_status(port, path):
    pad = arg("--pad", 0, int)
    body = arg("--body", 0, int) if "--body" in sys.argv else 0
    req = b"GET %s HTTP/1.1\r\nHost: x\r\n" % path.encode()
    if pad:
        req += b"X-Pad: " + b"a" * pad + b"\r\n"
    if body:
        req = req.replace(b"GET", b"POST", 1) + b"Content-Length: %d\r\n" % body
    req += b"\r\n" + b"b" * body
    s = socket.create_connection((HOST, port), timeout=3)
    try:
        s.sendall(req)
    except OSError:
        pass
    data, closed = b"", "no"
    t0 = time.time()
    try:
        while time.time() - t0 < 3:
            chunk = s.recv(65536)
            if not chunk:
                closed = "yes"
                break
            data += chunk
    except socket.timeout:
        pass
    except OSError:
        closed = "yes"
    code = data.split(b" ")[1].decode() if data.startswith(b"HTTP/") else "none"
    print("status", code)
    print("closed", closed)


def cmd_flood(port):
    n = arg("--conns", 100, int)
    total = arg("--bytes", 4 << 20, int)
    pid = arg("--pid", 0, int)
    probes = [(int(p.split("/", 1)[0]), "/" + p.split("/", 1)[1]) for p in args("--probe")]
    sel = selectors.DefaultSelector()
    chunk = b"a" * 65536
    state = {}
    for _ in range(n):
        s = socket.create_connection((HOST, port))
        s.setblocking(False)
        state[s] = {"left": total, "head": b"GET /metrics HTTP/1.1\r\nX-Big: ", "got": b""}
        sel.register(s, selectors.EVENT_READ | selectors.EVENT_WRITE)
    rss0 = rss_kb(pid) if pid else 0
    rss_max = rss0
    ok = tried = 0
    answered = 0
    t0 = last_rss = time.time()
    last_probe = 0.0
    while state and time.time() - t0 < 30:
        for key, ev in sel.select(0.02):
            s, st = key.fileobj, state[key.fileobj]
            done = False
            if ev & selectors.EVENT_READ:
                try:
                    d = s.recv(65536)
                    st["got"] += d
                    done = not d
                except OSError:
                    done = True
            if not done and ev & selectors.EVENT_WRITE:
                try:
                    if st["head"]:
                        st["head"] = st["head"][s.send(st["head"]):]
                    elif st["left"] > 0:
                        st["left"] -= s.send(chunk[:min(len(chunk), st["left"])])
                    else:
                        sel.modify(s, selectors.EVENT_READ)
                except BlockingIOError:
                    pass
                except OSError:
                    done = True
            if done:
                if st["got"].startswith(b"HTTP/1.1 431"):
                    answered += 1
                sel.unregister(s)
                s.close()
                del state[s]
        now = time.time()
        if pid and now - last_rss >= 0.02:
            rss_max, last_rss = max(rss_max, rss_kb(pid)), now
        if probes and now - last_probe >= 0.1:
            last_probe = now
            for pp, path in probes:
                tried += 1
                ok += get(pp, path) == 200
    for s in state:
        s.close()
    if pid:
        time.sleep(0.2)
        rss_max = max(rss_max, rss_kb(pid))
    print("answers_431", answered)
    print("unfinished", len(state))
    print("probes %d/%d" % (ok, tried))
    if pid:
        print("rss_growth_kb", rss_max - rss0)


def cmd_slow(port):
    interval = arg("--interval", 1.0, float)
    limit = arg("--max", 15.0, float)
    s = socket.create_connection((HOST, port))
    t0 = time.time()
    s.sendall(b"GET /health HTTP/1.1\r\n")
    s.settimeout(interval)
    while time.time() - t0 < limit:
        try:
            if not s.recv(4096):
                break
        except socket.timeout:
            try:
                s.send(b"X")
            except OSError:
                break
        except OSError:
            break
    else:
        print("closed_after none")
        return
    print("closed_after %.2f" % (time.time() - t0))


def cmd_hold():
    ports = [int(p) for p in args("--port")]
    n = arg("--conns", 100, int)
    interval = arg("--interval", 1.0, float)
    seconds = arg("--seconds", 5.0, float)
    reconnect = "--no-reconnect" not in sys.argv
    probe = arg("--probe", None)
    sel = selectors.DefaultSelector()
    opened = failed = 0
    conns = {}
    probe_s = "none"

    def open_one(i):
        nonlocal opened, failed
        try:
            s = socket.socket()
            s.setblocking(False)
            s.connect_ex((HOST, ports[i % len(ports)]))
            sel.register(s, selectors.EVENT_READ, i)
            conns[s] = False            # request line not sent yet
            opened += 1
            return True
        except OSError:
            failed += 1
            return False

    for i in range(n):
        open_one(i)
    t0 = time.time()
    last_tick = 0.0
    probed = False
    snap = arg("--snap", None, float)
    probe_at = snap + 0.1 if snap is not None else seconds - 1
    while time.time() - t0 < seconds:
        if snap is not None and time.time() - t0 >= snap:
            print("open_at_snap", len(conns), flush=True)
            snap = None
        for key, _ in sel.select(0.05):
            s = key.fileobj
            try:
                d = s.recv(4096)
            except OSError:
                d = b""
            if not d:
                sel.unregister(s)
                s.close()
                del conns[s]
                if reconnect:
                    open_one(key.data)
        now = time.time()
        if now - last_tick >= interval:
            last_tick = now
            for s in list(conns):
                try:
                    s.send(b"X" if conns[s] else b"GET /x HTTP/1.1\r\n")
                    conns[s] = True
                except OSError:
                    pass
            while reconnect and len(conns) < n and open_one(opened):
                pass
        if probe and not probed and now - t0 >= probe_at:
            probed = True
            pp, path = int(probe.split("/", 1)[0]), "/" + probe.split("/", 1)[1]
            t1 = time.time()
            if get(pp, path, timeout=3) == 200:
                probe_s = "%.2f" % (time.time() - t1)
    print("open", len(conns))
    print("opened", opened)
    print("connect_failed", failed)
    if probe:
        print("probe_seconds", probe_s)
    for s in conns:
        s.close()


def main():
    cmd = sys.argv[1]
    if cmd == "status":
        cmd_status(int(sys.argv[2]), sys.argv[3])
    elif cmd == "flood":
        cmd_flood(int(sys.argv[2]))
    elif cmd == "slow":
        cmd_slow(int(sys.argv[2]))
    elif cmd == "hold":
        cmd_hold()
    else:
        sys.exit("unknown command " + cmd)


if __name__ == "__main__":
    main()
