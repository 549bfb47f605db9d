#!/usr/bin/env python3
"""Read an rtstap result file into labelled arrays (h5py and NumPy; Debian: python3-h5py).

    from read_output import read_output
    r = read_output("result.h5")
    y = r["output/iq"]             # a Labelled: .data (NumPy), .dims, .coords, .units
    y.dims                         # ('beam', 'doppler', 'range')
    u, unit = y.coords["beam"]     # the beams' u, "1"
    y.sel(beam=0.0625)             # the beam nearest u = 0.0625: ('doppler', 'range')
    r["detections"]                # NumPy structured array, plus columns doppler / range / beam
                                   # in the axes' units (doppler_hz, range_m, beam_u, ...)

Every dataset's axes are named by their HDF5 dimension labels and take their coordinates
from the attached dimension scales (/axes/doppler_hz or doppler_normalized, range_m or
range_cell, beam_u or beam, segment_start_cell; docs/file-format.md, schema v1.1). Files of
schema v1 (no labels or scales) read too: axes are then named dim_0, dim_1, ... and indexed.
Complex datasets ({r, i} float32) arrive as complex64.

Run as a program it prints what the file holds: python3 read_output.py result.h5
"""
import sys

import h5py
import numpy as np


def _text(v):
    return v.decode() if isinstance(v, bytes) else str(v)


class Labelled:
    """A NumPy array with named axes, their coordinates and units."""

    def __init__(self, name, data, dims, coords, units):
        self.name, self.data, self.dims, self.coords, self.units = name, data, dims, coords, units

    @property
    def shape(self):
        return self.data.shape

    def coord(self, dim):
        """The coordinate values of axis `dim` (its index when it has no scale)."""
        if dim in self.coords:
            return self.coords[dim][0]
        return np.arange(self.data.shape[self.dims.index(dim)])

    def sel(self, **nearest):
        """The sub-array at the coordinates nearest the given values, e.g. sel(beam=0.06)."""
        index = [slice(None)] * self.data.ndim
        dims = list(self.dims)
        for dim, value in nearest.items():
            k = self.dims.index(dim)
            index[k] = int(np.argmin(np.abs(self.coord(dim) - value)))
            dims.remove(dim)
        coords = {d: c for d, c in self.coords.items() if d in dims}
        return Labelled(self.name, self.data[tuple(index)], tuple(dims), coords, self.units)

    def __repr__(self):
        axes = ", ".join(f"{d} {n}" for d, n in zip(self.dims, self.data.shape))
        return f"<{self.name}: {self.data.dtype} ({axes}), units {self.units!r}>"


def _labelled(ds):
    dims, coords = [], {}
    for k, dim in enumerate(ds.dims):
        name = dim.label or f"dim_{k}"
        dims.append(name)
        if len(dim) > 0:  # an attached dimension scale
            scale = dim[0]
            coords[name] = (scale[()], _text(scale.attrs.get("units", "")), scale.name)
    units = _text(ds.attrs["units"]) if "units" in ds.attrs else None
    return Labelled(ds.name.lstrip("/"), ds[()], tuple(dims), coords, units)


def read_output(path):
    """Everything of a result file: Labelled datasets, the detections, the attributes."""
    r = {}
    with h5py.File(path, "r") as f:
        r["attrs"] = {k: _text(v) if isinstance(v, (bytes, str)) else v for k, v in f.attrs.items()}
        for group in ("config", "timing", "radar"):
            if group in f:
                r[group] = {k: _text(v) if isinstance(v, (bytes, str)) else v
                            for k, v in f[group].attrs.items()}
        for name in ("weights", "output/iq", "steering", "timing/cpi_ms"):
            if name in f:
                r[name] = _labelled(f[name])
        r["axes"] = {k: (v[()], _text(v.attrs.get("units", ""))) for k, v in f["axes"].items()} \
            if "axes" in f else {}
        if "detections" in f:
            det = f["detections"][()]
            r["detections"] = det
            # the detections in the axes' units, through the scales of /output/iq (or the
            # axes group when the output of a recording was not kept)
            coords, units = {}, {}
            for dim, column, prefix in (("doppler", "doppler_bin", "doppler"),
                                        ("range", "range_cell", "range"), ("beam", "beam", "beam")):
                values, unit = None, ""
                if "output/iq" in r and dim in r["output/iq"].coords:
                    values, unit = r["output/iq"].coords[dim][0], r["output/iq"].coords[dim][1]
                else:
                    names = [k for k in r["axes"] if k.startswith(prefix)]
                    if names:
                        values, unit = r["axes"][names[0]]
                if values is not None and len(det):
                    coords[dim] = np.asarray(values)[det[column]]
                    units[dim] = unit
            r["detections_coords"] = coords
            r["detections_units"] = units   # the unit of each coordinate (e.g. "Hz", "m")
    return r


def main(argv):
    if len(argv) != 2:
        print(__doc__)
        return 2
    r = read_output(argv[1])
    print(f"{argv[1]}: schema {r['attrs'].get('schema', '1 (no root attributes)')}, "
          f"rtstap {r['attrs'].get('rtstap_version', '?')} ({r['attrs'].get('commit', '?')})")
    c = r.get("config", {})
    print(f"ran on {c.get('device', '?')}: backend {c.get('backend')}, {c.get('threads')} threads; "
          f"{c.get('engine', '')}")
    for name in ("weights", "output/iq", "steering", "timing/cpi_ms"):
        if name not in r:
            continue
        a = r[name]
        print(f"  {a!r}")
        for dim in a.dims:
            if dim in a.coords:
                v, unit, scale = a.coords[dim]
                print(f"    {dim:8s} {scale}: {v[0]:.6g} ... {v[-1]:.6g} {unit}")
    if "detections" in r:
        det, coords, units = r["detections"], r["detections_coords"], r["detections_units"]
        cpis = "cpi" in det.dtype.names   # a recording's: the input's CPI of each
        print(f"  detections: {len(det)}" + (f" in {len(np.unique(det['cpi']))} CPIs" if cpis else ""))
        for k in range(min(len(det), 5)):
            where = ", ".join(f"{d} {coords[d][k]:.6g}{' ' + units[d] if units.get(d) else ''}"
                              for d in coords)
            print(f"    {'CPI ' + str(det['cpi'][k]) + ', ' if cpis else ''}beam {det['beam'][k]} "
                  f"bin {det['doppler_bin'][k]} cell {det['range_cell'][k]}: {where}; "
                  f"power {det['power'][k]:.4g} (input units squared), SNR {det['snr_db'][k]:.1f} dB")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
