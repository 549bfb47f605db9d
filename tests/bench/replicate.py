"""replicate.py SRC DST TIMES: a recording TIMES as long — /data/iq's CPIs repeated, every other
object and attribute copied as it is (H5Ocopy), /data/iq's chunks and attributes kept (its
dimension-scale references, which point into SRC, are not copied). For the GPU machine's long
runs (device.sh mpi): a 480-CPI recording from `gen` made 4800 in seconds, where `gen` would
take minutes of device time."""
import sys

import h5py

src, dst, times = sys.argv[1], sys.argv[2], int(sys.argv[3])
with h5py.File(src, "r") as s, h5py.File(dst, "w") as d:
    for k, v in s.attrs.items():
        d.attrs[k] = v
    for name in s:
        if name != "data":
            s.copy(name, d)
    g = d.create_group("data")
    for k, v in s["data"].attrs.items():
        g.attrs[k] = v
    for name in s["data"]:
        if name != "iq":
            s["data"].copy(name, g)
    iq = s["data/iq"]
    n = iq.shape[0]
    o = g.create_dataset("iq", shape=(n * times,) + iq.shape[1:], dtype=iq.dtype, chunks=iq.chunks)
    for k in iq.attrs:
        if k not in ("DIMENSION_LIST", "REFERENCE_LIST"):
            o.attrs.create(k, iq.attrs[k], dtype=iq.attrs.get_id(k).dtype)
    for i in range(0, n, 32):
        block = iq[i : i + 32]
        for t in range(times):
            o[t * n + i : t * n + i + block.shape[0]] = block
