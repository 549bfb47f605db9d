"""rtstap: real-time space-time adaptive processing from Python (numpy arrays in and out).

    import numpy as np, rtstap
    cube = np.load("cpi.npy").astype(np.complex64)      # (channels, pulses, range gates)
    r = rtstap.run(cube, training=150, beams=5, doppler_order=3, cfar="ca")
    print(r.detections)                                  # beam, doppler_bin, range_cell, power, snr_db, statistic, threshold
    w = r.weights                                        # (doppler, segment, beam, dof)

`run` processes one cube; `Engine` keeps an engine for many (create once, submit/collect with
several CPIs in flight, or `process`), as a context manager; `Stream` runs a recording or an
iterator of cubes through one engine per device with every slot busy (the runtime `rtstap run`
and `rtstap stream` use), each CPI's results to a function in CPI order. Options are named as on the
command line (`rtstap run --help`), with underscores: preset, doppler_bins, doppler_order,
segments, training, beams, loading, window, algorithm, training_window, block, guard,
angle_bins, dpca_shift, backend, threads, cfar, detector (amf, kelly, ace: docs/processing.md
"Adaptive detectors"), cfar_pfa, cfar_guard, cfar_train, cfar_rank, cfar_guard_doppler,
cfar_train_doppler, element_spacing, slots, keep_weights, keep_output;
format (cf32, ci8, ci16, ci32: the cube's stored form, as `rtstap stream --format`), scale,
big_endian. The earlier short names stay accepted as aliases: pfa (cfar_pfa) and samples
(format); giving both names of one option is a TypeError. The shape comes from the cube; the other
defaults from the preset (hard unless given), D = pulses. Errors are rtstap.Error with the
library's message. The cube is the engine's input as it is (C-contiguous complex64: no copy);
the GIL is released while the engine works. Built on librtstap's public API (docs/library.md).
"""
from collections import namedtuple

import numpy as np

from . import _rtstap

Error = _rtstap.Error
__version__, __commit__ = _rtstap.version()

# what a Stream's output file keeps of each CPI (stap_write_options.keep)
KEEP_WEIGHTS, KEEP_OUTPUT, KEEP_DETECTIONS = 1, 2, 4

Result = namedtuple("Result", "weights output detections stage_ms diag_ratio")

_OPTIONS = {"preset", "doppler_bins", "doppler_order", "segments", "training", "beams", "loading",
            "window", "algorithm", "training_window", "block", "guard", "angle_bins", "dpca_shift",
            "backend", "threads", "cfar", "detector", "cfar_pfa", "cfar_guard", "cfar_train", "cfar_rank",
            "cfar_guard_doppler", "cfar_train_doppler", "element_spacing", "slots",
            "keep_weights", "keep_output", "format", "scale", "big_endian"}
# the earlier short names, still accepted: alias -> the command line's name
_ALIASES = {"pfa": "cfar_pfa", "samples": "format"}
_SAMPLES = {np.dtype(np.int8): "ci8", np.dtype(np.int16): "ci16", np.dtype(np.int32): "ci32"}


def _options(shape, options):
    unknown = set(options) - _OPTIONS - set(_ALIASES)
    if unknown:
        raise TypeError("unknown option%s %s (see rtstap run --help)" %
                        ("s" if len(unknown) > 1 else "", ", ".join(sorted(unknown))))
    options = dict(options)
    for alias, name in _ALIASES.items():
        if alias in options:
            if name in options:
                raise TypeError("%s and %s are one option (%s is its old name): give one"
                                % (name, alias, alias))
            options[name] = options.pop(alias)
    o = {"preset": "hard", "doppler_bins": shape[1]}
    o.update({k: v for k, v in options.items() if v is not None})
    o["channels"], o["pulses"], o["range_gates"] = (int(n) for n in shape)
    for k in ("keep_weights", "keep_output"):
        if k in o:
            o[k] = int(bool(o[k]))
    return o


def _steering(o, steering, look, sector, doppler, doppler_hz, prf_hz, array=(None, None)):
    """The steering of look= / sector= (docs/processing.md "Steering and array geometry"):
    look a number (azimuth, degrees) or an (az, el) tuple: one beam; a list of either: many; sector (az1, az2)
    or (az1, az2, el) over beams= beams; doppler (cycles per pulse) or doppler_hz with prf_hz,
    the target's Doppler. None when neither look nor sector is given."""
    if doppler_hz is not None:
        if doppler is not None:
            raise TypeError("doppler and doppler_hz: give one")
        if prf_hz is None:
            raise TypeError("doppler_hz needs prf_hz (the pulse repetition frequency)")
        doppler = float(doppler_hz) / float(prf_hz)
        doppler -= np.floor(doppler + 0.5)     # aliased into the PRF's band, as rtstap run
    if look is None and sector is None:
        if doppler is not None:
            raise TypeError("doppler steers the beams of look or sector: give one")
        return steering
    if look is not None and sector is not None:
        raise TypeError("look and sector: give one")
    if steering is not None:
        raise TypeError("steering and look/sector: give one")
    if look is not None:
        if "beams" in o:
            raise TypeError("beams with look: the beams are the looks given")
        # a number or a tuple is one beam; a list (or an array of rows) is many
        items = [look] if isinstance(look, (int, float, tuple)) else list(look)
        rows = []
        for item in items:
            a = np.atleast_1d(np.asarray(item, dtype=float))
            if a.size not in (1, 2):
                raise ValueError("look: an azimuth or an (azimuth, elevation) pair, got %r" % (item,))
            rows.append((a[0], a[1] if a.size == 2 else 0.0))
    else:
        if "beams" not in o:
            raise TypeError("sector needs beams= (how many beams to spread over it)")
        sec = [float(x) for x in sector]
        if len(sec) not in (2, 3):
            raise ValueError("sector: (az1, az2) or (az1, az2, el), got %r" % (sector,))
        n, el = int(o["beams"]), sec[2] if len(sec) == 3 else 0.0
        rows = [((sec[0] + sec[1]) / 2 if n == 1 else sec[0] + (sec[1] - sec[0]) * b / (n - 1), el)
                for b in range(n)]
    f = np.nan if doppler is None else float(doppler)
    return _rtstap.steering(o, np.array([(a, e, f) for a, e in rows], dtype=np.float64),
                            array[0], array[1])


def _cube(cube):
    a = np.asarray(cube)
    if a.ndim == 4 and a.shape[3] == 2 and a.dtype in _SAMPLES:   # integer (i, q) pairs
        return np.ascontiguousarray(a)
    if a.ndim != 3 or a.dtype.kind not in "fc":   # integers are stored (i, q) pairs, never real
        raise ValueError("a cube is (channels, pulses, range gates) complex or floating, or "
                         "(channels, pulses, range gates, 2) int8/int16/int32 (i, q); got %s "
                         "of shape %s" % (a.dtype, a.shape))
    return np.ascontiguousarray(a, dtype=np.complex64)   # no copy when it already is


class Engine:
    """Engine(shape, steering=None, look=None, sector=None, doppler=None, doppler_hz=None,
    prf_hz=None, **options): one engine for cubes of `shape` (channels, pulses, range gates),
    made once with every buffer it needs. The beams: steering (B, N), or look=[az or (az, el),
    ...] / sector=(az1, az2[, el]) with beams=B, in degrees, steered to a target's doppler
    (cycles per pulse) or doppler_hz with prf_hz (as rtstap run --look, --sector, --doppler-hz),
    through position (C, 3) element positions in wavelengths and calibration (C,) complex gains
    (a file's /array; default the line at element_spacing, gains 1).

        with rtstap.Engine(cube.shape, training=150, beams=5) as e:
            for cube in cubes:
                r = e.process(cube)

    submit(slot, cube) / collect(slot) keep `slots` CPIs in flight (a GPU's copies and
    compute overlap); process(cube) is one of each on slot 0, in one call. Threads may share an
    Engine: its calls take its lock and run one at a time (threads using submit/collect keep
    to a slot each); close() waits for the call in progress (docs/library.md)."""

    def __init__(self, shape, steering=None, look=None, sector=None, doppler=None,
                 doppler_hz=None, prf_hz=None, position=None, calibration=None, **options):
        o = _options(shape, options)
        o.setdefault("keep_output", 1)
        if (position is not None or calibration is not None) and look is None and sector is None:
            raise TypeError("position and calibration steer the beams of look or sector: give one")
        steering = _steering(o, steering, look, sector, doppler, doppler_hz, prf_hz,
                             (None if position is None else np.asarray(position, dtype=np.float64),
                              None if calibration is None else np.asarray(calibration, dtype=np.complex64)))
        if steering is not None:
            steering = np.ascontiguousarray(steering, dtype=np.complex64)
        self._e = _rtstap.Engine(o, steering)
        self._held = {}

    def submit(self, slot, cube):
        c = _cube(cube)
        self._e.submit(slot, c)
        self._held[slot] = c     # the engine reads it until collect

    def collect(self, slot):
        r = self._e.collect(slot)
        self._held.pop(slot, None)
        return Result(r["weights"], r["output"], r["detections"], r["stage_ms"], r["diag_ratio"])

    def process(self, cube):
        r = self._e.process(0, _cube(cube))   # submit and collect, no other call between
        return Result(r["weights"], r["output"], r["detections"], r["stage_ms"], r["diag_ratio"])

    def close(self):
        self._e.close()
        self._held.clear()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    shape = property(lambda self: self._e.shape)
    slots = property(lambda self: self._e.slots)
    beams = property(lambda self: self._e.beams)
    backend = property(lambda self: self._e.backend)
    config = property(lambda self: self._e.config)
    describe = property(lambda self: self._e.describe)


def run(cube, steering=None, **options):
    # look=, sector=, doppler=, doppler_hz=, prf_hz= go to Engine
    """Process one cube (channels, pulses, range gates) complex, or (channels, pulses, range
    gates, 2) int8/int16/int32 (i, q) pairs with their `scale` (they go to the engine as they
    are; a GPU converts them): a Result of weights (D, S, B, N), output (B, D, R),
    detections, stage_ms and diag_ratio, as `rtstap run` computes them."""
    c = _cube(cube)
    if c.ndim == 4 and "samples" not in options:
        options.setdefault("format", _SAMPLES[c.dtype])
    with Engine(c.shape[:3], steering, slots=1, **options) as e:
        return e.process(c)


class Stream:
    """Stream(source, callback=None, devices=None, steering=None, cpis=None, warmup=0,
    output=None, keep=0, replace=False, **options): the library's stream runtime
    (docs/library.md, "Streams").

        def found(cpi, input_cpi, r):          # r: a Result, as Engine.collect gives
            print(input_cpi, len(r.detections))
        with rtstap.Stream("rec.h5", found, training=150, beams=5) as s:
            report = s.run()                   # cpis, cpis_per_s, latency_ms, limited_by, ...

    source: a recording's path (read by reader threads, its samples as stored, its shape,
    element spacing and /steering taken as `rtstap run` takes them) or an iterable of cubes
    (all of one shape; `cpis` says how many when it has no len()). devices: a list of GPU
    numbers, one engine each (CPI g on engine g mod n), or None: one engine on the backend
    asked for. The callback runs on the stream's threads with the GIL (one at a time, in CPI
    order with one engine); what it raises stops the stream and is raised by run(). stop()
    (from another thread, or a signal handler) finishes the CPIs in flight and ends run().
    Options as Engine's; slots is the CPIs in flight per engine (default 3, as `rtstap run`).
    source may also be a live feed, "udp://HOST:PORT" (docs/live.md: VITA-49.0 over UDP, as
    `rtstap send` and `rtstap listen` speak it; port 0 picks a free port, `address` names it)
    with shape=(channels, pulses, range_gates), its int16 samples' `scale`, and `cpis`: the
    feed's CPIs to take, complete or lost. The complete ones are run, each numbered by its
    CPI in the feed (input_cpi); the lost ones never are: run()'s report adds "live" (complete,
    lost, lost_cpis, latency_ms from a CPI's last datagram to its results, packets,
    malformed_packets, duplicates, late). stop() stops the receiver too.
    output: a result file written as `rtstap run` writes a recording's (rows in CPI order by
    the stream's writer thread, /axes/input_cpi, the schema of docs/file-format.md),
    published atomically when run() ends — marked /config stopped after stop(), and none at
    all after an error or when run() is never called; keep: KEEP_WEIGHTS | KEEP_OUTPUT |
    KEEP_DETECTIONS (0: weights and detections, as `rtstap run`); replace: overwrite an
    existing file (else refused)."""

    def __init__(self, source, callback=None, devices=None, steering=None, cpis=None, warmup=0,
                 output=None, keep=0, replace=False, shape=None, look=None, sector=None,
                 doppler=None, doppler_hz=None, prf_hz=None, **options):
        if isinstance(source, str) and source.startswith("udp://"):
            if shape is None or len(shape) != 3:
                raise TypeError("shape: (channels, pulses, range_gates) of the live feed")
            if cpis is None:
                raise TypeError("cpis: how many of the live feed's CPIs (complete or lost) to take")
            shape = tuple(int(x) for x in shape)
            options.setdefault("format", "ci16")
            items = source
            array, has_array = (None, None), False   # the default line array (a live feed carries no /array)
        elif isinstance(source, str):
            c, p, r, written, fmt, position, calibration, has_array = _rtstap.recording_info(source)
            array = (position, calibration)   # look= and sector= steer through it
            shape = (c, p, r)
            items = source
        else:
            array, has_array = (None, None), False
            it = iter(source)
            first = _cube(next(it))
            shape = first.shape[:3]
            if first.ndim == 4 and "format" not in options and "samples" not in options:
                options["format"] = _SAMPLES[first.dtype]
            if cpis is None and hasattr(source, "__len__"):
                cpis = len(source)
            if cpis is None:
                raise TypeError("cpis: how many cubes the iterator gives (it has no len())")

            def cubes(first=first, it=it):
                yield first
                for c in it:
                    yield _cube(c)
            items = cubes()
        o = _options(shape, options)
        o.setdefault("slots", 3)
        steering = _steering(o, steering, look, sector, doppler, doppler_hz, prf_hz, array)
        if steering is None and has_array:
            # the default beams through the recording's /array, as rtstap run steers them
            steering = _rtstap.steering(o, None, array[0], array[1])
        if steering is not None:
            steering = np.ascontiguousarray(steering, dtype=np.complex64)

        def each(cpi, input_cpi, r):
            callback(cpi, input_cpi, Result(r["weights"], r["output"], r["detections"],
                                            r["stage_ms"], r["diag_ratio"]))
        self._s = _rtstap.Stream(o, items, steering, each if callback else None,
                                 None if devices is None else [int(d) for d in devices],
                                 int(cpis or 0), int(warmup), output, int(keep), bool(replace))

    def run(self):
        return self._s.run()

    def stop(self):
        self._s.stop()

    def close(self):
        self._s.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    describe = property(lambda self: self._s.describe)
    beams = property(lambda self: self._s.beams)
    backend = property(lambda self: self._s.backend)
    engines = property(lambda self: self._s.engines)
    address = property(lambda self: self._s.address)
