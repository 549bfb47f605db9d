#!/usr/bin/env python3
"""check_layers: rtstap's include graph must follow its layers (docs/architecture.md).

From the top: app -> datasets -> stap -> linalg -> kernels -> include (include/rtstap/
common.h, the bottom). A file may include headers of its own layer and of the layers
below it, never of a layer above. The public headers in include/rtstap/ belong to the
layer that implements them (PUBLIC_OWNER below); common.h and the generated version.h are
the bottom. The rules, each a failure:
  upward   a file includes a header of a higher layer (.c, .h, .cu and .cuh count);
  call     a file calls a function that only a higher layer defines (stap_fail, defined in
           linalg/, called by a header of kernels/): the linker checks the C layers
           (build/layers/), this the headers and the GPU library's .cu files too;
  private  a file includes another folder's private header (*_internal.h);
  public   a header of include/rtstap/ includes a project header outside include/rtstap/
           (it would not be found once installed), or include/rtstap/ holds a header this
           script does not know the layer of;
  flag     a string literal of a library layer (everything but app/) names a command-line
           flag ("--training"): library messages name parameters, app/ maps them to flags;
  home     a concern outside its one home (docs/architecture.md): HDF5 (hdf5.h, H5*.h)
           outside stap/io/; a signal handler installed (sigaction, signal) outside app/;
           CUDA (cuda*.h, cublas*.h, cufft*.h, or a project header that includes one) in a
           .c file: librtstap's C code links no CUDA, the GPU library (.cu) holds it all;
  name     a name an installed header declares (function, type, tag, enum constant, macro)
           outside the one public family: stap_ / STAP_ (RTSTAP_ for the header guards and
           version macros; docs/library.md, "Names and options");
  ring     a folder of stap/ includes a header of a stap/ folder above it (BELOW): stap/config/
           (the configuration and the algorithm descriptors it reads) includes nothing of
           stap/engine/ (the engines, which read the configuration); no folder of stap/ but
           stap/stream/ includes the stream runtime (stap/stream/, rtstap/stream.h);
  algo     a library or program file names an algorithm (STAP_ALGORITHM_JDL, ...) outside the
           three that may (ALGORITHM_FILES: the enum, the descriptors, the GPU stages); the
           rest asks the descriptor (docs/architecture.md, "The algorithm descriptor");
  env      a library file (everything but app/) reads an environment variable (getenv) other
           than ENV_ALLOWED's: the library takes its settings as options a caller sees and
           sets (stap_engine_options, stap_read_options, stap_test_hooks); programs read the
           RTSTAP_* variables and hand them on (app/env.c, docs/usage.md "Environment");
  size     a source file (.c .h .cu .cuh .py .sh under app/ stap/ linalg/ kernels/
           datasets/ include/ tests/) over MAX_FILE_LINES lines, or a C/C++ function outside
           kernels/ (and tests/experiments/, kernels measured and not kept) over
           MAX_FUNCTION_LINES lines, from its name's line to its closing brace (issue 44).
usage: check_layers.py [ROOT]      (default: the repository this script is in)
       check_layers.py --self-test (the rules on a small tree with one violation of each)
       check_layers.py --app-ring OBJECT... (app/'s objects: no two files call each other,
                                  directly or round a ring; CTest check_app_ring)
       check_layers.py --symbols ROOT LIBRARY... (the libraries' symbols, with nm; CTest
                                  check_symbols):
  global   librtstap.a defines a global symbol outside stap_ / STAP_ (a file's own function
           is static; one the folders share is named stap_<folder>_..., docs/library.md);
           OpenMP's named critical sections (.gomp_critical_user_NAME) count by their NAME;
  export   librtstap.so exports a name that no installed header (ROOT/include/rtstap)
           declares (a function the library's files share is RT_INTERNAL, linalg/rt_hidden.h);
  gpu      librtstap_gpu.so exports anything but its two entries (rtstap_gpu_linalg_api,
           rtstap_gpu_stap_api) and the kernels' rtk_ API (docs/architecture.md).
Exit status 0 when the tree follows the rules, 1 when it does not (each violation is
printed as path:line: rule: what)."""
import os
import re
import sys
import subprocess
import tempfile

LAYERS = ["include", "kernels", "linalg", "stap", "datasets", "app"]  # bottom first
RANK = {name: i for i, name in enumerate(LAYERS)}
# The layer each public header belongs to (the folder that implements it).
PUBLIC_OWNER = {
    "common.h": "include",
    "version.h": "include",  # generated from version.h.in
    "linalg.h": "linalg",
    "stap.h": "stap",
    "cfar.h": "stap",
    "engine.h": "stap",
    "h5io.h": "stap",
    "vrt.h": "stap",
    "stream.h": "stap",
    "testing.h": "stap",  # the test hooks (stap/engine/engine.c)
    "rtstap.h": "stap",  # the umbrella header
}
GENERATED = {"rtstap/version.h": "include", "rtstap_commit.h": "include"}
# what the generated version.h declares besides macros (none: its names are RTSTAP_ macros)
GENERATED_NAMES = set()
SOURCE_EXT = (".c", ".h", ".cu", ".cuh")
INCLUDE_RE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')
STRING_RE = re.compile(r'"((?:[^"\\\n]|\\.)*)"')
FLAG_RE = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]*")
HDF5_RE = re.compile(r"^(hdf5(_hl)?\.h|H5\w*\.h)$")
CUDA_RE = re.compile(r"^(cuda\w*\.h|cublas\w*\.h|cufft\w*\.h|cuComplex\.h)$")
SIGNAL_RE = re.compile(r"\b(sigaction|signal)\s*\(")
GETENV_RE = re.compile(r"\bgetenv\s*\(\s*(\"[^\"]*\")?")
# the library's own reads, each where the caller can see and set it (docs/usage.md):
# the GPU library's file (a loader's path, like LD_LIBRARY_PATH: decided at the first load,
# before a program could hand it on) and CUDA's own variable, named in an error message
ENV_ALLOWED = {("linalg/gpu_loader.c", '"RTSTAP_GPU_LIBRARY"'),
               ("linalg/gpu_dispatch.cu", '"CUDA_VISIBLE_DEVICES"')}
PUBLIC_NAME_RE = re.compile(r"^(stap_|STAP_|RTSTAP_)")
# a function defined with external linkage: its type and name at column 0, the body's brace
# after the parameters (static functions, prototypes and macros do not match)
DEFINITION_RE = re.compile(r'^(?:extern "C"\s+)?(?!static\b|typedef\b|extern\b|return\b|else\b|do\b)'
                           r'[A-Za-z_][\w \t\*]*?\b(\w+)\s*\([^;{}()]*(?:\([^;{}()]*\)[^;{}()]*)*\)'
                           r'\s*(?:const\s*)?\{', re.M)
CALL_RE = re.compile(r"\b([A-Za-z_]\w*)\s*\(")
# what precedes the name of a function declared, not called: its type at column 0
DECLARATION_RE = re.compile(r"^(?!return\b|else\b)[A-Za-z_][\w \t\*]*$")


def public_names(code):
    """(line, name) of what a header declares at file scope: macros, functions and
    typedefs declared at column 0, struct/enum tags, enum constants."""
    out = []
    for lineno, line in enumerate(code.splitlines(), 1):
        m = re.match(r"\s*#\s*define\s+(\w+)", line)
        if m:
            out.append((lineno, m.group(1)))
            continue
        if line.startswith("#"):
            continue
        for m in re.finditer(r"\b(?:struct|enum)\s+(\w+)", line):
            out.append((lineno, m.group(1)))
        m = re.match(r"^}\s*(\w+)\s*;", line) or re.match(r"^typedef\b.*?\(\s*\*\s*(\w+)\s*\)", line) \
            or re.match(r"^typedef\b[^(]*\b(\w+)\s*;\s*$", line)
        if m:
            out.append((lineno, m.group(1)))
        elif line.startswith("extern"):  # an object: extern const char *const x[N];
            m = re.match(r"^extern\b[^(\"]*?\b(\w+)\s*(?:\[[^\]]*\])?\s*;", line)
            if m:
                out.append((lineno, m.group(1)))
        elif not line.startswith("typedef"):
            m = re.match(r"^[A-Za-z_][\w\s\*]*?\b(\w+)\s*\(", line)
            if m:
                out.append((lineno, m.group(1)))
    for m in re.finditer(r"\benum\b[^{;]*\{([^}]*)\}", code):
        first = code.count("\n", 0, m.start(1)) + 1
        for item in m.group(1).split(","):
            n = re.match(r"\s*(\w+)", item)
            if n:
                lead = item[:n.start(1)]
                out.append((first + m.group(1)[:m.group(1).index(item)].count("\n")
                            + lead.count("\n"), n.group(1)))
    return out


ALGORITHM_FILES = {os.path.join("include", "rtstap", "stap.h"), os.path.join("stap", "config", "algorithms.c"),
                   os.path.join("stap", "engine", "algorithms_gpu.cu")}
ALGORITHM_RE = re.compile(r"\bSTAP_ALGORITHM_(?!COUNT\b)[A-Z0-9_]+\b")
# folders of stap/ and the stap/ folders they must not include (the ring config <->
# algorithms <-> engine of issue 44 stays broken)
# algorithms <-> engine of issue 44 stays broken), and the stream runtime (stap/stream/, its
# public header rtstap/stream.h) above every other folder of stap/ that it runs
_STREAM = os.path.join("stap", "stream")
BELOW = {os.path.join("stap", "config"): [os.path.join("stap", "engine"), _STREAM]}
for _f in ("engine", "io", "live", "detect", "analysis"):
    BELOW[os.path.join("stap", _f)] = [_STREAM]
# a public header's folder, for BELOW (the others sit in include/rtstap/ and are the bottom's
# or their layer's as PUBLIC_OWNER says)
PUBLIC_HOME = {os.path.join("include", "rtstap", "stream.h"): _STREAM}
MAX_FILE_LINES, MAX_FUNCTION_LINES = 1000, 150
SIZE_TOPS = LAYERS + ["tests"]
SIZE_EXT = SOURCE_EXT + (".py", ".sh")
# folders whose functions may be longer: kernels (one __global__ body is one kernel)
LONG_FUNCTIONS_OK = ("kernels", os.path.join("tests", "experiments"))
CHAR_RE = re.compile(r"'(?:[^'\\\n]|\\.)*'")
CONTROL = {"if", "for", "while", "switch", "sizeof", "return", "catch"}


def functions(code):
    """(name, first line, lines) of each function defined at file scope (or in a namespace or
    extern "C" block) of comment- and string-free C/C++ code: a brace at depth 0 whose head
    ends with the parameters' ')', to its matching brace."""
    out, depth, start, open_ns = [], 0, None, []
    for i, c in enumerate(code):
        if c == "{":
            head = code[max(0, i - 600):i]
            if depth - len(open_ns) == 0 and re.search(r"\)\s*(?:const\s*)?(?:noexcept\s*)?$", head) \
                    and not re.search(r"=\s*$", head):
                j, level = code.rfind(")", 0, i), 0
                k = j
                while k >= 0:
                    level += {")": 1, "(": -1}.get(code[k], 0)
                    if level == 0:
                        break
                    k -= 1
                m = re.search(r"(\w+)\s*$", code[:k])
                start = (m.group(1), code.count("\n", 0, m.start()) + 1) \
                    if m and m.group(1) not in CONTROL else None
            elif depth - len(open_ns) == 0 and re.search(r'(\bnamespace\b[\w\s]*|extern\s*""\s*)$', head):
                open_ns.append(depth)
            depth += 1
        elif c == "}":
            depth -= 1
            if open_ns and open_ns[-1] == depth:
                open_ns.pop()
            elif depth - len(open_ns) == 0 and start:
                out.append((start[0], start[1], code.count("\n", 0, i) + 2 - start[1]))
                start = None
    return out


def size_problems(root):
    problems = []
    for top in SIZE_TOPS:
        for d, _, files in os.walk(os.path.join(root, top)):
            for f in sorted(files):
                if not f.endswith(SIZE_EXT):
                    continue
                path = os.path.join(d, f)
                rel = os.path.relpath(path, root)
                with open(path, encoding="utf-8", errors="replace") as fh:
                    text = fh.read()
                lines = text.count("\n") + (0 if text.endswith("\n") or not text else 1)
                if lines > MAX_FILE_LINES:
                    problems.append("%s:%d: size: %d lines, over %d (split it by concern)"
                                    % (rel, MAX_FILE_LINES + 1, lines, MAX_FILE_LINES))
                if not f.endswith(SOURCE_EXT) or rel.startswith(LONG_FUNCTIONS_OK):
                    continue
                code = CHAR_RE.sub("''", STRING_RE.sub('""', strip_comments(text)))
                for name, first, n in functions(code):
                    if n > MAX_FUNCTION_LINES:
                        problems.append("%s:%d: size: function %s is %d lines, over %d"
                                        % (rel, first, name, n, MAX_FUNCTION_LINES))
    return problems


def sources(root):
    for top in LAYERS:
        base = os.path.join(root, top)
        for d, _, files in os.walk(base):
            for f in sorted(files):
                if f.endswith(SOURCE_EXT) or f.endswith(".h.in"):
                    yield os.path.relpath(os.path.join(d, f), root)


def layer_of(rel):
    """(layer, problem): the layer of a repository-relative path."""
    top = rel.split(os.sep)[0]
    if top != "include":
        return top, None
    name = os.path.basename(rel)
    if name.endswith(".in"):
        name = name[:-3]
    if name not in PUBLIC_OWNER:
        return "include", "public header %s has no layer in check_layers.py's PUBLIC_OWNER" % rel
    return PUBLIC_OWNER[name], None


def strip_comments(text):
    """Comments replaced by blanks (newlines kept, so that line numbers stay)."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            i = j
        elif c == '"' or c == "'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            out.append(text[i:j + 1])
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def check(root):
    files = list(sources(root))
    by_name = {}  # header name -> project paths (how "x.h" and "rtstap/x.h" resolve)
    for rel in files:
        name = os.path.basename(rel)
        by_name.setdefault(name, []).append(rel)
        if rel.startswith("include" + os.sep):
            by_name.setdefault(os.path.relpath(rel, "include"), []).append(rel)
    problems, includes = [], 0
    # project headers that bring CUDA in (directly, or through another such header)
    raw = {}
    for rel in files:
        with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as fh:
            raw[rel] = [m.group(2) for m in map(INCLUDE_RE.match, fh.read().splitlines()) if m]
    cuda_headers = {rel for rel, incs in raw.items()
                    if rel.endswith((".h", ".cuh")) and any(CUDA_RE.match(os.path.basename(i)) for i in incs)}
    grew = True
    while grew:
        names = {os.path.basename(h) for h in cuda_headers}
        more = {rel for rel, incs in raw.items() if rel.endswith((".h", ".cuh")) and
                rel not in cuda_headers and any(os.path.basename(i) in names for i in incs)}
        grew = bool(more)
        cuda_headers |= more
    cuda_names = {os.path.basename(h) for h in cuda_headers}
    # where each function with external linkage is defined: the lowest layer that defines it
    code_of, defined_in = {}, {}
    for rel in files:
        if rel.endswith(".in"):
            continue
        with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as fh:
            code_of[rel] = STRING_RE.sub('""', strip_comments(fh.read()))
        if rel.endswith((".c", ".cu")):
            for m in DEFINITION_RE.finditer(code_of[rel]):
                mine = layer_of(rel)[0]
                if m.group(1) not in defined_in or RANK[mine] < RANK[defined_in[m.group(1)][0]]:
                    defined_in[m.group(1)] = (mine, rel)
    for rel in files:
        if rel.endswith(".in"):
            continue
        mine, why = layer_of(rel)
        if why:
            problems.append("%s:1: public: %s" % (rel, why))
        folder = os.path.dirname(rel)
        with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as fh:
            text = fh.read()
        for lineno, line in enumerate(text.splitlines(), 1):
            m = INCLUDE_RE.match(line)
            if not m:
                continue
            name = m.group(2)
            base_name = os.path.basename(name)
            if HDF5_RE.match(base_name) and not rel.startswith(os.path.join("stap", "io") + os.sep):
                problems.append("%s:%d: home: %s includes %s: HDF5 is called in stap/io/ only"
                                % (rel, lineno, rel, name))
            if rel.endswith(".c") and (CUDA_RE.match(base_name) or base_name in cuda_names):
                problems.append("%s:%d: home: %s includes %s: CUDA belongs to the GPU library "
                                "(.cu files), never to librtstap's C code" % (rel, lineno, rel, name))
            if name in GENERATED:
                target, their = "(generated) " + name, GENERATED[name]
            else:
                local = os.path.normpath(os.path.join(folder, name))
                if os.path.isfile(os.path.join(root, local)):
                    target = local
                elif name in by_name:
                    cands = by_name[name]
                    if len(cands) > 1:
                        problems.append("%s:%d: ambiguous: \"%s\" is %s" %
                                        (rel, lineno, name, " and ".join(cands)))
                        continue
                    target = cands[0]
                else:
                    continue  # a system or third-party header
                their, _ = layer_of(target)
            includes += 1
            if RANK[their] > RANK[mine]:
                problems.append("%s:%d: upward: %s (layer %s) includes %s (layer %s)" %
                                (rel, lineno, rel, mine, target, their))
            for above in BELOW.get(folder, []):
                if PUBLIC_HOME.get(target, os.path.dirname(target)) == above:
                    problems.append("%s:%d: ring: %s includes %s: %s/ sits below %s/"
                                    % (rel, lineno, rel, target, folder, above))
            base = os.path.basename(target)
            if base.endswith("_internal.h") and os.path.dirname(target) != folder:
                problems.append("%s:%d: private: %s includes %s, private to %s/" %
                                (rel, lineno, rel, target, os.path.dirname(target)))
            if rel.startswith("include" + os.sep) and not target.startswith("include" + os.sep) \
                    and not target.startswith("(generated)"):
                problems.append("%s:%d: public: installed header %s includes %s, which is "
                                "not installed" % (rel, lineno, rel, target))
        if rel.startswith("include" + os.sep) and rel.endswith(".h"):
            for lineno, name in public_names(strip_comments(text)):
                if not PUBLIC_NAME_RE.match(name):
                    problems.append("%s:%d: name: %s is public and not stap_/STAP_ (the one "
                                    "public family; docs/library.md)" % (rel, lineno, name))
        own = {m.group(1) for m in DEFINITION_RE.finditer(code_of[rel])} | \
            set(re.findall(r"^static\b[^;{}=]*?\b(\w+)\s*\(", code_of[rel], re.M))
        # the public headers declare what the layers implement (common.h: linalg/rt_common.c)
        for lineno, line in enumerate([] if mine == "include" else code_of[rel].splitlines(), 1):
            if line.lstrip().startswith("#") and not line.lstrip().startswith("#define"):
                continue
            for m in CALL_RE.finditer(line):
                name = m.group(1)
                if name in own or name not in defined_in or DECLARATION_RE.match(line[:m.start()]):
                    continue
                their, where = defined_in[name]
                if RANK[their] > RANK[mine]:
                    problems.append("%s:%d: call: %s (layer %s) calls %s, defined in %s (layer %s)"
                                    % (rel, lineno, rel, mine, name, where, their))
        if rel not in ALGORITHM_FILES:
            for lineno, line in enumerate(code_of[rel].splitlines(), 1):
                a = ALGORITHM_RE.search(line)
                if a:
                    problems.append("%s:%d: algo: %s names %s: only %s do (ask the descriptor)"
                                    % (rel, lineno, rel, a.group(0), ", ".join(sorted(ALGORITHM_FILES))))
        if mine != "app":
            code = strip_comments(text)
            for lineno, line in enumerate(code.splitlines(), 1):
                if INCLUDE_RE.match(line):
                    continue
                ge = GETENV_RE.search(line)
                if ge and (rel, ge.group(1)) not in ENV_ALLOWED:
                    problems.append("%s:%d: env: %s reads the environment (%s): a library takes "
                                    "options; a program reads variables and hands them on"
                                    % (rel, lineno, rel, ge.group(1) or "a variable"))
                sg = SIGNAL_RE.search(STRING_RE.sub('""', line))
                if sg:
                    problems.append("%s:%d: home: %s calls %s: a library installs no signal "
                                    "handler (app/signals.c does)" % (rel, lineno, rel, sg.group(1)))
                for s in STRING_RE.finditer(line):
                    f = FLAG_RE.search(s.group(1))
                    if f:
                        problems.append("%s:%d: flag: library message names the command-line "
                                        "flag %s (name the parameter; app/ maps it to its flag)"
                                        % (rel, lineno, f.group(0)))
    problems += size_problems(root)
    return files, includes, problems


GLOBAL_OK_RE = re.compile(r"^(?:\.gomp_critical_user_)?(?:stap_|STAP_)")
# result.c's named critical section until issue 44's move of the run path renames it
GLOBAL_TOLERATED = set()
GPU_EXPORT_RE = re.compile(r"^(rtstap_gpu_linalg_api|rtstap_gpu_stap_api|rtk_\w+)$")


def nm_symbols(args, lib):
    """(object, name) of each symbol nm lists (POSIX format, defined ones only)."""
    import subprocess
    out = subprocess.run(["nm", "-A", "-P", "--defined-only"] + args + [lib], check=True,
                         capture_output=True, text=True).stdout
    rows = []
    for line in out.splitlines():
        where, _, rest = line.partition(": ")
        fields = rest.split()
        if len(fields) >= 2 and fields[1] not in "Uw":  # a symbol defined here
            obj = where[where.find("[") + 1:-1] if "[" in where else os.path.basename(where)
            rows.append((obj, fields[0]))
    return rows


def check_symbols(root, libs):
    declared = set(GENERATED_NAMES)
    inc = os.path.join(root, "include", "rtstap")
    for f in sorted(os.listdir(inc)):
        if f.endswith((".h", ".h.in")):
            with open(os.path.join(inc, f), encoding="utf-8") as fh:
                declared |= {name for _, name in public_names(strip_comments(fh.read()))}
    problems = []
    for lib in libs:
        base = os.path.basename(lib)
        if base.endswith(".a"):
            for obj, name in nm_symbols(["-g"], lib):
                if not GLOBAL_OK_RE.match(name) and name not in GLOBAL_TOLERATED:
                    problems.append("%s: global: %s (%s) is global and not stap_/STAP_"
                                    % (base, name, obj))
        elif base.startswith("librtstap_gpu"):
            for _, name in nm_symbols(["-D"], lib):
                if not GPU_EXPORT_RE.match(name):
                    problems.append("%s: gpu: exports %s (cmake/rtstap_gpu.map)" % (base, name))
        else:
            for _, name in nm_symbols(["-D"], lib):
                if name not in declared:
                    problems.append("%s: export: %s is exported and no installed header declares"
                                    " it (RT_INTERNAL, or a public declaration)" % (base, name))
    for p in problems:
        print(p)
    print("check_symbols: %s: %s" % (", ".join(os.path.basename(x) for x in libs),
                                     "%d problem(s)" % len(problems) if problems else
                                     "every global name stap_/STAP_, every export declared"))
    return 1 if problems else 0


def app_ring(objs):
    """app/'s files (their objects, nm) must not call each other in a ring: a file calls
    only files below it (issue 44: cmd_run.c <-> run_recording.c <-> run_ranks.c was one)."""
    defined, uses = {}, {}
    for obj in objs:
        f = os.path.basename(obj).split(".")[0]
        out = subprocess.run(["nm", obj], capture_output=True, text=True, check=True).stdout
        for line in out.splitlines():
            parts = line.split()
            if len(parts) == 3 and parts[1] in "TDBR":
                defined[parts[2]] = f
            elif len(parts) == 2 and parts[0] == "U":
                uses.setdefault(f, set()).add(parts[1])
    calls = {f: {defined[s] for s in ss if s in defined and defined[s] != f} for f, ss in uses.items()}
    rings = set()

    def walk(node, path):
        for nxt in sorted(calls.get(node, ())):
            if nxt in path:
                ring = path[path.index(nxt):]
                i = ring.index(min(ring))
                rings.add(tuple(ring[i:] + ring[:i]))
            else:
                walk(nxt, path + [nxt])

    for f in sorted(calls):
        walk(f, [f])
    for r in sorted(rings):
        print("app ring: " + " -> ".join(r + (r[0],)))
    print("check_app_ring: %d files, %s" % (len(objs), "%d ring(s)" % len(rings) if rings else
                                             "each calls only files below it"))
    return 1 if rings else 0


def self_test():
    tree = {
        "include/rtstap/common.h": "#include <stddef.h>\ntypedef float cf32;\n"
                                   "int stap_ok(void);\nenum stap_e { STAP_A, RT_B };\n",
        "include/rtstap/linalg.h": '#include "common.h"\n',
        "include/rtstap/stap.h": '#include "linalg.h"\n#include "scene.h"\n',
        "include/rtstap/extra.h": "\n",
        "kernels/k.cu": '#include "linalg.h"\n#include "rtstap/common.h"\n',
        "linalg/la_internal.h": '#include "linalg.h"\n',
        "linalg/la.c": '#include "la_internal.h"\n/* "--not-a-message" */\n'
                       'int la_fail(int code)\n{\n    return code;\n}\n',
        "kernels/kc.h": 'static inline int kc(void) { return la_fail(1); }\n',
        "stap/s.c": '#include "la_internal.h"\n#include "stap.h"\n'
                    'int f(void) { return g("--loading must be >= 0"); }\n',
        "datasets/scene.h": '#include "stap.h"\n',
        "app/main.c": '#include "scene.h"\nconst char *u = "--training";\n'
                      'int h(void) { return sigaction(2, 0, 0); }\n',
        "datasets/d.c": '#include <hdf5.h>\n',
        "linalg/g.h": '#include <cuda_runtime.h>\n',
        "linalg/g.cu": '#include "g.h"\n',
        "linalg/c.c": '#include "g.h"\n',
        "stap/sig.c": 'void i(void) { signal(15, 0); }\n',
        "stap/env.c": 'int e(void) { return getenv("RTSTAP_X") != 0; }\n',
        "stap/engine/eng.h": "struct stap_engine;\n",
        "stap/config/cfg.c": '#include "eng.h"\nint j = STAP_ALGORITHM_JDL;\n',
        "tests/long.sh": "true\n" * (MAX_FILE_LINES + 1),
        "datasets/long.c": "int fits(void)\n{\n" + "    ;\n" * (MAX_FUNCTION_LINES - 3) + "}\n"
                           "static int too_long(int a)\n{\n" + "    ;\n" * (MAX_FUNCTION_LINES - 2)
                           + "}\n",
        "kernels/long.cu": "__global__ void k()\n{\n" + "    ;\n" * MAX_FUNCTION_LINES + "}\n",
    }
    expect = [
        "include/rtstap/common.h:2: name",
        "include/rtstap/common.h:4: name",
        "include/rtstap/stap.h:2: upward",
        "include/rtstap/stap.h:2: public",
        "include/rtstap/extra.h:1: public",
        "kernels/k.cu:1: upward",
        "kernels/kc.h:1: call",
        "stap/s.c:1: private",
        "stap/s.c:3: flag",
        "datasets/d.c:1: home",
        "linalg/c.c:1: home",
        "stap/sig.c:1: home",
        "stap/env.c:1: env",
        "stap/config/cfg.c:1: ring",
        "stap/config/cfg.c:2: algo",
        "tests/long.sh:%d: size" % (MAX_FILE_LINES + 1),
        "datasets/long.c:%d: size: function too_long" % (MAX_FUNCTION_LINES + 1),
    ]
    with tempfile.TemporaryDirectory() as root:
        for rel, text in tree.items():
            os.makedirs(os.path.join(root, os.path.dirname(rel)), exist_ok=True)
            with open(os.path.join(root, rel), "w") as fh:
                fh.write(text)
        _, _, problems = check(root)
    found = [p for p in problems if any(p.startswith(e) for e in expect)]
    missing = [e for e in expect if not any(p.startswith(e) for p in problems)]
    extra = [p for p in problems if p not in found]
    for p in problems:
        print("  " + p)
    if missing or extra:
        print("check_layers self-test: FAILED (missing %s, unexpected %s)" % (missing, extra))
        return 1
    print("check_layers self-test: the %d planted violations are reported, nothing else"
          % len(expect))
    # the app ring on objects: a.c -> b.c -> a.c is one, c.c -> a.c is none
    with tempfile.TemporaryDirectory() as d:
        srcs = {"a": "int b(void);\nint a(void) { return b(); }\n",
                "b": "int a(void);\nint b(void) { return a(); }\n",
                "c": "int a(void);\nint c(void) { return a(); }\n"}
        objs = []
        for name, text in srcs.items():
            with open(os.path.join(d, name + ".c"), "w") as fh:
                fh.write(text)
            objs.append(os.path.join(d, name + ".c.o"))
            subprocess.run(["cc", "-c", "-o", objs[-1], os.path.join(d, name + ".c")], check=True)
        if app_ring(objs) != 1 or app_ring([objs[0], objs[2]]) != 0:
            print("check_layers self-test: FAILED (the app ring a -> b -> a not found, or one found "
                  "where none is)")
            return 1
    return 0


def main(argv):
    if len(argv) > 1 and argv[1] == "--self-test":
        return self_test()
    if len(argv) > 3 and argv[1] == "--symbols":
        return check_symbols(argv[2], argv[3:])
    if len(argv) > 2 and argv[1] == "--app-ring":
        return app_ring([o for a in argv[2:] for o in a.split(";") if o])  # CTest's list
    root = argv[1] if len(argv) > 1 else os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    files, includes, problems = check(root)
    for p in problems:
        print(p)
    if problems:
        print("check_layers: %d problem(s) in %d files (layers, bottom first: %s)" %
              (len(problems), len(files), " < ".join(LAYERS)))
        return 1
    print("check_layers: %d files, %d project includes, all downward (%s)" %
          (len(files), includes, " < ".join(LAYERS)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
