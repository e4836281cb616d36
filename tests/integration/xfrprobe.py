#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""xfrprobe.py PORT ZONE PROBE_NAME [ROUNDS]: run `dig ZONE AXFR` against
127.0.0.1:PORT and, while it runs, ask PROBE_NAME A over UDP from
127.0.0.2 one query after the other, each timed. Prints one line per round:
  round=N axfr_s=S records=R probes=P max_ms=M p50_ms=Q lost=L
(axfr_s is the client's time from sending the AXFR to having read it all)."""
import socket
import struct
import subprocess
import sys
import tempfile
import time


def query(name, qid):
    q = struct.pack(">HHHHHH", qid, 0x0100, 1, 0, 0, 0)
    for label in name.rstrip(".").split("."):
        q += bytes([len(label)]) + label.encode()
    return q + b"\x00" + struct.pack(">HH", 1, 1)


def one_round(port, zone, probe):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("127.0.0.2", 0))
    s.settimeout(2.0)
    t0 = time.monotonic()
    # dig's output goes to a file: a pipe read only after dig ends would
    # fill up and block dig (the zone is megabytes), and the loop never end
    outf = tempfile.TemporaryFile()
    dig = subprocess.Popen(["dig", "@127.0.0.1", "-p", str(port), "+time=20", "+tries=1",
                            zone, "AXFR"], stdout=outf, stderr=subprocess.STDOUT)
    lat, lost, qid = [], 0, 0
    while dig.poll() is None:
        qid = (qid + 1) & 0xFFFF
        t = time.monotonic()
        s.sendto(query(probe, qid), ("127.0.0.1", port))
        try:
            while True:
                data = s.recv(4096)
                if data[:2] == struct.pack(">H", qid):
                    break
            lat.append(time.monotonic() - t)
        except socket.timeout:
            lost += 1
        time.sleep(0.0005)
    dig.wait()
    total = time.monotonic() - t0
    outf.seek(0)
    out = outf.read().decode(errors="replace")
    outf.close()
    records = 0
    for line in out.splitlines():
        if "XFR size:" in line:
            records = int(line.split("XFR size:")[1].split()[0])
    lat.sort()
    mx = lat[-1] * 1000 if lat else 0
    p50 = lat[len(lat) // 2] * 1000 if lat else 0
    return total, records, len(lat), mx, p50, lost


def main():
    port, zone, probe = int(sys.argv[1]), sys.argv[2], sys.argv[3]
    rounds = int(sys.argv[4]) if len(sys.argv) > 4 else 1
    for i in range(rounds):
        total, records, n, mx, p50, lost = one_round(port, zone, probe)
        print("round=%d axfr_s=%.3f records=%d probes=%d max_ms=%.1f p50_ms=%.2f lost=%d"
              % (i + 1, total, records, n, mx, p50, lost), flush=True)


if __name__ == "__main__":
    main()
