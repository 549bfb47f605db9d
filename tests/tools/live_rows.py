"""live_rows: is a live stream's result file (rtstap listen -o) `run`'s file of the recording
that was played, row by row? usage: live_rows.py FILE RUN.h5

Every row of FILE must be RUN's row of the same recording CPI (its /axes/input_cpi, the
stream's CPI, mod RUN's CPIs: a recording sent --loop times over), /weights and the row's
/detections bit for bit. Prints the rows' input CPIs, /lost_cpis, /config cpis_lost and
/config stopped (or -), for the caller to compare; exits 1 (an AssertionError) on a row
that differs. Used by tests/cli/cli_listen.sh, cli_listen_zmq.sh (h5py, numpy)."""
import sys

import h5py

f, r = h5py.File(sys.argv[1], "r"), h5py.File(sys.argv[2], "r")
n = r["weights"].shape[0]
icpi = [int(c) for c in f["axes/input_cpi"][()]]
assert f["weights"].shape[0] == len(icpi)
for k, c in enumerate(icpi):
    assert f["weights"][k].tobytes() == r["weights"][c % n].tobytes(), ("weights", k, c)
    d = f["detections"][f["detections"]["cpi"] == c]
    e = r["detections"][r["detections"]["cpi"] == c % n]
    e["cpi"] = c
    assert d.tobytes() == e.tobytes(), ("detections", k, c)
stopped = f["config"].attrs.get("stopped", "-")
print(icpi, [int(c) for c in f["lost_cpis"][()]], int(f["config"].attrs["cpis_lost"]),
      stopped.decode() if isinstance(stopped, bytes) else stopped)
