#!/usr/bin/env python3
"""same_outputs: do two rtstap binaries write the same files? The proof that a refactor
changed no behaviour (issue 30): a matrix of commands — gen (one CPI, a recording), run on
every algorithm, training window and detector, a recording with its output kept, sinr,
plot, import-raw, import-sigmf, perfect — runs with each binary in its own directory (the
same relative paths), and every file is compared: HDF5 files object by object (every
dataset's values and every attribute, bit for bit), other files byte for byte. What a run
measures or stamps is left out: /timing (stage times), read_ms/total_ms, the commit and
version attributes, and /config's engine description.

usage: same_outputs.py REF_BIN NEW_BIN [WORKDIR]   (exit 0: identical; 1: a difference,
printed; 2: a command failed)"""
import os
import subprocess
import sys
import tempfile

import h5py
import numpy as np

VOLATILE_ATTRS = {"commit", "rtstap_version", "rtstap_commit", "engine"}
VOLATILE_PATHS = ("/timing",)

EASY = ["--preset", "easy", "--segments", "1", "--training", "24", "--doppler-order", "1",
        "--beams", "4", "--backend", "cpu", "--quiet"]
SCENE = ["--preset", "easy", "--channels", "6", "--pulses", "16", "--range-gates", "96",
         "--seed", "7"]
# (name, arguments); {out} is the command's output name
COMMANDS = [
    ("gen", ["gen"] + SCENE + ["--out", "scene.h5", "--quiet"]),
    ("gen-rec", ["gen"] + SCENE + ["--cpis", "3", "--out", "rec.h5", "--quiet"]),
    ("run-synth", ["run", "--preset", "easy", "--backend", "cpu", "--quiet", "-o", "synth.h5"]),
    ("run-q1", ["run", "--input", "scene.h5", "--backend", "cpu", "--quiet", "--doppler-order", "1",
                "--segments", "2", "--training", "40", "-o", "q1.h5"]),
    ("run-q3", ["run", "--input", "scene.h5", "--backend", "cpu", "--quiet", "--doppler-order", "3",
                "--segments", "2", "--training", "40", "--loading", "0.01", "-o", "q3.h5"]),
    ("run-jdl", ["run", "--input", "scene.h5", "--backend", "cpu", "--quiet", "--algorithm", "jdl",
                 "--angle-bins", "3", "--doppler-order", "3", "--segments", "2", "--training", "40",
                 "-o", "jdl.h5"]),
    ("run-pre", ["run", "--input", "scene.h5", "--backend", "cpu", "--quiet", "--algorithm",
                 "pre-doppler", "--sub-cpi", "3", "--segments", "2", "--training", "40",
                 "--loading", "0.01", "-o", "pre.h5"]),
    ("run-adpca", ["run", "--input", "scene.h5", "--backend", "cpu", "--quiet", "--algorithm",
                   "adpca", "--segments", "2", "--training", "40", "-o", "adpca.h5"]),
    ("run-dpca", ["run", "--input", "scene.h5", "--backend", "cpu", "--quiet", "--algorithm",
                  "dpca", "--segments", "2", "--training", "40", "-o", "dpca.h5"]),
    ("run-sliding", ["run", "--input", "scene.h5", "--backend", "cpu", "--quiet", "--doppler-order",
                     "1", "--training-window", "sliding", "--block", "8", "--training", "40",
                     "-o", "sliding.h5"]),
    ("run-lapack-os", ["run", "--input", "scene.h5", "--backend", "lapack", "--quiet",
                       "--doppler-order", "1", "--segments", "2", "--training", "40", "--cfar",
                       "os", "-o", "os.h5"]),
    ("run-ca2d", ["run", "--input", "scene.h5", "--backend", "cpu", "--quiet", "--doppler-order",
                  "1", "--segments", "2", "--training", "40", "--cfar", "ca2d", "-o", "ca2d.h5"]),
    ("run-rec", ["run", "--input", "rec.h5", "--backend", "cpu", "--quiet", "--doppler-order", "1",
                 "--segments", "2", "--training", "40", "--keep-output", "-o", "recout.h5"]),
    ("sinr", ["sinr", "--input", "scene.h5", "--result", "q1.h5", "-o", "sinr.h5", "--quiet"]),
    ("sinr-jdl", ["sinr", "--input", "scene.h5", "--result", "jdl.h5", "-o", "sinr_jdl.h5",
                  "--quiet"]),
    ("plot", ["plot", "--input", "scene.h5", "--result", "q1.h5", "--sinr", "sinr.h5", "--sinr",
              "sinr_jdl.h5", "--output-dir", "pics"]),
    ("import-raw", ["import-raw", "--input", "raw.bin", "--shape", "4,8,48,2", "--type", "ci16_le",
                    "--layout", "P,R,C", "--scale", "0.5", "-o", "raw.h5"]),
    ("import-sigmf", ["import-sigmf", "--meta", "s.sigmf-meta", "--pulses", "8", "--range-gates",
                      "48", "-o", "sigmf.h5"]),
]


def prepare(d):
    rng = np.random.default_rng(5)
    rng.integers(-2000, 2000, size=4 * 8 * 48 * 2 * 2, dtype=np.int16).tofile(os.path.join(d, "raw.bin"))
    rng.integers(-2000, 2000, size=4 * 8 * 48 * 2, dtype=np.int16).tofile(
        os.path.join(d, "s.sigmf-data"))
    with open(os.path.join(d, "s.sigmf-meta"), "w") as f:
        f.write('{"global": {"core:datatype": "ci16_le", "core:num_channels": 4, '
                '"core:sample_rate": 5e6}, "captures": [{"core:frequency": 1.25e9}]}')


def run_all(binary, d, src):
    prepare(d)
    cmds = list(COMMANDS)
    perfect = os.path.join(src, "datasets", "perfect")
    if os.path.exists(os.path.join(perfect, "small_app_input.bin")):
        cmds.append(("perfect", ["perfect", "--size", "small", "--input-dir", perfect, "--backend",
                                 "cpu", "--quiet", "-o", "perfect.bin"]))
    for name, args in cmds:
        r = subprocess.run([binary] + args, cwd=d, capture_output=True, text=True)
        if r.returncode != 0:
            print("FAIL: %s (%s): exit %d: %s" % (name, binary, r.returncode, r.stderr[-500:]))
            sys.exit(2)


def h5_items(path):
    """{object path: value} for every dataset and attribute."""
    items = {}

    def attrs(name, obj):
        for k, v in obj.attrs.items():
            if k in VOLATILE_ATTRS or k.endswith("_ms") or k == "DIMENSION_LIST" or k == "REFERENCE_LIST":
                continue
            items["%s@%s" % (name, k)] = v

    with h5py.File(path, "r") as f:
        attrs("/", f)

        def visit(name, obj):
            full = "/" + name
            if any(full.startswith(p) for p in VOLATILE_PATHS):
                return
            attrs(full, obj)
            if isinstance(obj, h5py.Dataset):
                v = obj[()]
                if isinstance(v, np.ndarray) and v.dtype != object:
                    v = v.tobytes()
                elif isinstance(v, np.ndarray):
                    v = v.tolist()
                items[full] = (obj.dtype.str, obj.shape, v)
        f.visititems(visit)
    return items


def same_value(a, b):
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        a, b = np.asarray(a), np.asarray(b)
        if a.dtype == object or b.dtype == object:  # variable-length strings: by value
            return a.dtype == b.dtype and a.shape == b.shape and a.tolist() == b.tolist()
        return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()
    return type(a) == type(b) and (a == b if not isinstance(a, float) else
                                   np.float64(a).tobytes() == np.float64(b).tobytes())


def compare(ref_dir, new_dir):
    diffs = 0
    for root, _, files in os.walk(ref_dir):
        for f in sorted(files):
            a = os.path.join(root, f)
            rel = os.path.relpath(a, ref_dir)
            b = os.path.join(new_dir, rel)
            if not os.path.exists(b):
                print("DIFF: %s missing in the new run" % rel)
                diffs += 1
                continue
            if f.endswith(".h5"):
                ia, ib = h5_items(a), h5_items(b)
                for k in sorted(set(ia) | set(ib)):
                    if k not in ia or k not in ib:
                        print("DIFF: %s: %s only in the %s run" % (rel, k, "ref" if k in ia else "new"))
                        diffs += 1
                    elif not same_value(ia[k], ib[k]):
                        print("DIFF: %s: %s differs" % (rel, k))
                        diffs += 1
            elif open(a, "rb").read() != open(b, "rb").read():
                print("DIFF: %s differs" % rel)
                diffs += 1
    return diffs


def main():
    if len(sys.argv) < 3:
        print(__doc__)
        return 2
    ref, new = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    src = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    work = sys.argv[3] if len(sys.argv) > 3 else tempfile.mkdtemp(prefix="same_outputs.")
    dirs = [os.path.join(work, "ref"), os.path.join(work, "new")]
    for b, d in zip((ref, new), dirs):
        os.makedirs(d, exist_ok=True)
        run_all(b, d, src)
    n = compare(*dirs)
    count = sum(len(fs) for _, _, fs in os.walk(dirs[0]))
    print("same_outputs: %d files compared, %d difference(s)" % (count, n))
    return 1 if n else 0


if __name__ == "__main__":
    sys.exit(main())
