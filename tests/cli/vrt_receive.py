#!/usr/bin/env python3
"""vrt_receive: a receiver of rtstap's live stream written from docs/live.md alone (socket
and struct, nothing of rtstap) for tests/cli/cli_send.sh.

Binds 127.0.0.1 on a free UDP port and writes the port number to PORT_FILE, then reads
datagrams, one VITA-49.0 packet each, until all CPIS CPIs (0 .. CPIS-1, the stream started
with this receiver) are complete, or no datagram came for QUIET seconds after the first,
or TIMEOUT seconds passed. Writes OUT: every CPI's C x P x R samples, (channel, pulse,
range), each int16 I then int16 Q little-endian (what was not received: 0), and REPORT, a
JSON object: complete and incomplete CPIs, datagrams by kind, duplicates, the context's
sample rate and RF frequency, each datagram's arrival time (the kernel's timestamp).
usage: vrt_receive.py PORT_FILE C P R CPIS OUT REPORT [QUIET] [TIMEOUT]"""
import json
import os
import socket
import struct
import sys
import time


def parse(d, C, R):
    """(kind, fields) of one datagram, as docs/live.md says."""
    if len(d) < 4:
        return "short", None
    (h,) = struct.unpack_from(">I", d, 0)
    ptype, cls, trl = h >> 28, (h >> 27) & 1, (h >> 26) & 1
    tsi, tsf, size = (h >> 22) & 3, (h >> 20) & 3, h & 0xFFFF
    if size * 4 != len(d):
        return "size", None
    if ptype not in (1, 4):
        return "type", None
    w = 2 + 2 * cls
    if w > size:
        return "short", None
    (sid,) = struct.unpack_from(">I", d, 4)
    wint = w
    wfrac = w + (1 if tsi else 0)
    w = wfrac + (2 if tsf else 0)
    if w > size:
        return "short", None
    if ptype == 4:
        if w + 1 > size:
            return "short", None
        (cif,) = struct.unpack_from(">I", d, 4 * w)
        w += 1 + sum((cif >> b) & 1 for b in (1, 2, 3, 7))
        sizes = {30: 1, 29: 2, 28: 2, 27: 2, 26: 2, 25: 2, 24: 1, 23: 1, 22: 1, 21: 2}
        got = {}
        for bit in range(30, 20, -1):
            if not (cif >> bit) & 1:
                continue
            if w + sizes[bit] > size:
                return "short", None
            if bit in (27, 21):
                (v,) = struct.unpack_from(">q", d, 4 * w)
                got["rf" if bit == 27 else "sample_rate"] = v / 2.0**20
            w += sizes[bit]
        return ("context" if got else "context-other"), got
    end = size - trl
    if w >= end:
        return "short", None
    if tsi != 3 or tsf != 1:
        return "timestamp", None
    if sid >= C:
        return "channel", None
    (pulse,) = struct.unpack_from(">I", d, 4 * wint)
    (gate,) = struct.unpack_from(">Q", d, 4 * wfrac)
    n = end - w
    if gate >= R or gate + n > R:
        return "gates", None
    samples = struct.unpack_from(">%dh" % (2 * n), d, 4 * w)  # I (high half), Q, I, Q ...
    return "data", (sid, pulse, gate, samples)


def main():
    a = sys.argv[1:]
    port_file, C, P, R, N, out, report = a[0], int(a[1]), int(a[2]), int(a[3]), int(a[4]), a[5], a[6]
    quiet = float(a[7]) if len(a) > 7 else 3.0
    timeout = float(a[8]) if len(a) > 8 else 120.0
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
    # the kernel's arrival time of each datagram (SO_TIMESTAMPNS), whenever this reads it
    s.setsockopt(socket.SOL_SOCKET, getattr(socket, "SO_TIMESTAMPNS", 35), 1)
    s.bind(("127.0.0.1", 0))
    with open(port_file + ".tmp", "w") as f:
        f.write("%d\n" % s.getsockname()[1])
    os.rename(port_file + ".tmp", port_file)
    per = C * P * R
    iq = [[0] * (2 * per) for _ in range(N)]
    have = [bytearray(per) for _ in range(N)]
    count = [0] * N
    kinds, dups, context, arrivals = {}, 0, {}, []
    start = time.monotonic()
    last = None
    while sum(1 for k in range(N) if count[k] == per) < N:
        now = time.monotonic()
        if now - start > timeout or (last is not None and now - last > quiet):
            break
        s.settimeout(0.2)
        try:
            d, anc, _, _ = s.recvmsg(65536, 256)
        except socket.timeout:
            continue
        last = time.monotonic()
        for level, typ, data in anc:
            if level == socket.SOL_SOCKET and len(data) >= 16:
                sec, nsec = struct.unpack_from("=qq", data, 0)
                arrivals.append(sec + 1e-9 * nsec)
        kind, f = parse(d, C, R)
        kinds[kind] = kinds.get(kind, 0) + 1
        if kind == "context":
            context.update(f)
        if kind != "data":
            continue
        sid, pulse, gate, samples = f
        k, p = pulse // P, pulse % P
        if k >= N:
            kinds["beyond"] = kinds.get("beyond", 0) + 1
            continue
        base = (sid * P + p) * R + gate
        for i in range(len(samples) // 2):
            if have[k][base + i]:
                dups += 1
                continue
            have[k][base + i] = 1
            count[k] += 1
            iq[k][2 * (base + i)] = samples[2 * i]
            iq[k][2 * (base + i) + 1] = samples[2 * i + 1]
    with open(out, "wb") as f:
        for k in range(N):
            f.write(struct.pack("<%dh" % (2 * per), *iq[k]))
    with open(report, "w") as f:
        json.dump({"complete": [k for k in range(N) if count[k] == per],
                   "incomplete": [k for k in range(N) if count[k] != per],
                   "kinds": kinds, "duplicate_samples": dups, "context": context,
                   "arrivals": arrivals}, f)


if __name__ == "__main__":
    main()
