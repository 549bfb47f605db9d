#!/usr/bin/env bash
# consumer/run.sh: the installed package works for a program outside the tree. Installs the
# build (cmake --install) into a temporary prefix, then builds tests/consumer/main.c against
# it and runs it: with CMake's find_package(rtstap) (the shared library, then the static one),
# with pkg-config (shared, then static through Libs.private), and compiles the public
# headers as C++. The CTest test consumer_package (tests/CMakeLists.txt) runs it.
# usage: tests/consumer/run.sh BUILD_DIR
set -u
build=$(cd "${1:?usage: run.sh BUILD_DIR}" && pwd)
src=$(cd "$(dirname "$0")" && pwd)
T=$(mktemp -d "${TMPDIR:-/tmp}/rtstap_consumer.XXXXXX")
trap 'rm -rf "$T"' EXIT
fails=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }
step() { echo "--- $*"; }
prefix=$T/prefix

step "cmake --install $build --prefix $prefix"
cmake --install "$build" --prefix "$prefix" >"$T/install.log" 2>&1 || {
    cat "$T/install.log"; echo "FAIL: cmake --install"; exit 1; }
libdir=$(dirname "$(find "$prefix" -name 'librtstap.so' | head -1)")
[ -d "$libdir" ] || { echo "FAIL: no librtstap.so installed"; exit 1; }
for f in include/rtstap/rtstap.h include/rtstap/common.h include/rtstap/version.h bin/rtstap \
         share/man/man1/rtstap.1 share/bash-completion/completions/rtstap; do
    [ -e "$prefix/$f" ] || fail "not installed: $f"
done
[ -e "$libdir/librtstap.a" ] || fail "not installed: librtstap.a"
[ -e "$libdir/cmake/rtstap/rtstapConfig.cmake" ] || fail "not installed: rtstapConfig.cmake"
[ -e "$libdir/pkgconfig/rtstap.pc" ] || fail "not installed: rtstap.pc"
[ -e "$libdir/pkgconfig/rtstap-static.pc" ] || fail "not installed: rtstap-static.pc"
# the licence: its text beside the documentation, its name in the pkg-config file
license=$(find "$prefix" -path '*/doc/rtstap/LICENSE' | head -1)
if [ -z "$license" ]; then
    fail "not installed: share/doc/rtstap/LICENSE"
else
    cmp -s "$license" "$src/../../LICENSE" || fail "the installed LICENSE differs from the tree's"
    head -1 "$license" | grep -qx "BSD 3-Clause License" || fail "LICENSE is not the BSD 3-Clause text"
fi
grep -qx "License: BSD-3-Clause" "$libdir/pkgconfig/rtstap.pc" || fail "rtstap.pc names no BSD-3-Clause licence"
soname=$(readelf -d "$libdir/librtstap.so" | sed -n 's/.*SONAME.*\[\(.*\)\]/\1/p')
[ -e "$libdir/$soname" ] || fail "the SONAME '$soname' is not installed"
echo "    $(cd "$prefix" && find . -type f | wc -l) files; SONAME $soname"
# only the public headers are installed
extra=$(ls "$prefix/include/rtstap" | grep -v -x -E 'common.h|version.h|linalg.h|stap.h|cfar.h|engine.h|h5io.h|vrt.h|stream.h|testing.h|rtstap.h')
[ -z "$extra" ] || fail "headers installed that are not public: $extra"

# with CUDA, the GPU backends' library is installed beside librtstap and the installed
# program finds it wherever the prefix is, also when found on PATH and run from another
# folder (issue 42: it looked in the configured prefix, since dladdr names a program by its
# argv[0]); without a GPU it then says why the GPU is unusable, not that the library is
# missing. Without CUDA there is no library to find: --version must say it was not built.
v=$(cd "$T" && env -u RTSTAP_GPU_LIBRARY PATH="$prefix/bin:$PATH" rtstap --version 2>&1)
if grep -q "rtstap_HAS_CUDA ON" "$libdir/cmake/rtstap/rtstapConfig.cmake"; then
    gpu_so=$(cd "$libdir" && ls librtstap_gpu.so.* 2>/dev/null | head -1)
    [ -n "$gpu_so" ] || fail "not installed: librtstap_gpu.so"
    echo "$v" | grep -q "could not be loaded" && fail "rtstap on PATH: $(echo "$v" | grep GPU)"
    found=$(echo "$v" | sed -n 's/^GPU library: //p')
    [ -n "$found" ] && [ "$(readlink -f "$found")" = "$(readlink -f "$libdir/$gpu_so")" ] ||
        fail "rtstap on PATH loads '$found', not $libdir/$gpu_so"
    echo "    rtstap on PATH: GPU library $found"
else
    echo "$v" | grep -q "^GPU backend: not available: rtstap was built without CUDA support" ||
        fail "rtstap --version (without CUDA): $(echo "$v" | grep GPU)"
    echo "    built without CUDA: no GPU library to find (the message checked only)"
fi
# librtstap links no CUDA library and no cairo (the GPU backends are loaded at run time)
if readelf -d "$libdir/librtstap.so" | grep -qiE 'NEEDED.*(cuda|cublas|cufft|cairo|png)'; then
    fail "librtstap.so needs $(readelf -d "$libdir/librtstap.so" | grep -ioE '\[lib(cuda|cublas|cufft|cairo|png)[^]]*\]' | tr '\n' ' ')"
fi
if nm -u "$libdir/librtstap.a" 2>/dev/null | grep -qE ' (cuda|cublas|cufft|cairo_|png_)'; then
    fail "librtstap.a calls $(nm -u "$libdir/librtstap.a" | grep -oE '(cuda|cublas|cufft|cairo_|png_)[A-Za-z_]*' | sort -u | head -5 | tr '\n' ' ')"
fi

run_consumer() { # NAME BINARY: run it on a fresh file, it must find the target
    local name=$1 bin=$2
    rm -f "$T/cube.h5"
    if ldd "$bin" | grep -qiE 'libcuda|libcublas|libcufft'; then
        fail "$name: links a CUDA library: $(ldd "$bin" | grep -iE 'libcuda|libcublas|libcufft' | tr -s ' \t\n' ' ')"
    fi
    # runs with the GPU library out of reach: a CPU-only program needs none of it
    if RTSTAP_GPU_LIBRARY=/nonexistent/librtstap_gpu.so "$bin" "$T/cube.h5" >"$T/$name.out" 2>&1; then
        echo "    $(cat "$T/$name.out")"
    else
        fail "$name: $(cat "$T/$name.out")"
    fi
}

for kind in shared static; do
    step "find_package(rtstap), $kind library"
    static=OFF
    [ $kind = static ] && static=ON
    if cmake -S "$src" -B "$T/cmake-$kind" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release \
            -DCONSUMER_STATIC=$static -DCMAKE_DISABLE_FIND_PACKAGE_CUDAToolkit=ON \
            >"$T/cmake-$kind.log" 2>&1 &&
        cmake --build "$T/cmake-$kind" >>"$T/cmake-$kind.log" 2>&1; then
        grep "consumer: rtstap" "$T/cmake-$kind.log" | sed 's/^-- /    /'
        run_consumer "cmake-$kind" "$T/cmake-$kind/consumer"
        if [ $kind = shared ]; then
            ldd "$T/cmake-$kind/consumer" | grep -q "librtstap.so" || fail "cmake-shared: not linked to librtstap.so"
        else
            ldd "$T/cmake-$kind/consumer" | grep -q "librtstap.so" && fail "cmake-static: linked to librtstap.so"
        fi
    else
        fail "find_package consumer ($kind): $(tail -n 30 "$T/cmake-$kind.log")"
    fi
done

step "pkg-config rtstap: $(PKG_CONFIG_PATH=$libdir/pkgconfig pkg-config --modversion rtstap 2>&1)"
export PKG_CONFIG_PATH=$libdir/pkgconfig
cc=${CC:-cc}
flags=(-std=c11 -Wall -Wextra -Werror -O2)
# shellcheck disable=SC2046
if $cc "${flags[@]}" -o "$T/pc-shared" "$src/main.c" $(pkg-config --cflags --libs rtstap) -lm \
        -Wl,-rpath,"$libdir" >"$T/pc.log" 2>&1; then
    run_consumer pc-shared "$T/pc-shared"
else
    fail "pkg-config --cflags --libs: $(cat "$T/pc.log")"
fi
# static: librtstap.a alone in the first -L directory, the rest from Libs.private
mkdir -p "$T/static-only" && cp "$libdir/librtstap.a" "$T/static-only/"
# shellcheck disable=SC2046
if $cc "${flags[@]}" -o "$T/pc-static" "$src/main.c" $(pkg-config --cflags rtstap) -L"$T/static-only" \
        $(pkg-config --static --libs rtstap) >"$T/pc-static.log" 2>&1; then
    run_consumer pc-static "$T/pc-static"
else
    fail "pkg-config --static --libs: $(cat "$T/pc-static.log")"
fi

# static through rtstap-static.pc: the archive by its path, beside librtstap.so
# shellcheck disable=SC2046
if $cc "${flags[@]}" -o "$T/pc-static2" "$src/main.c" $(pkg-config --cflags --libs rtstap-static) \
        >"$T/pc-static2.log" 2>&1; then
    run_consumer pc-static2 "$T/pc-static2"
    ldd "$T/pc-static2" | grep -q "librtstap.so" && fail "pkg-config rtstap-static: linked to librtstap.so"
else
    fail "pkg-config --libs rtstap-static: $(cat "$T/pc-static2.log")"
fi

step "the public headers as C++"
# shellcheck disable=SC2046
printf '#include <rtstap/rtstap.h>\n#include <rtstap/testing.h>\nint main() { stap_cf32 z{1, 2}; return (int)z.re - 1; }\n' |
    ${CXX:-c++} -std=c++17 -Wall -Wextra -Werror -fsyntax-only -x c++ $(pkg-config --cflags rtstap) - \
        >"$T/cxx.log" 2>&1 || fail "C++: $(cat "$T/cxx.log")"

[ $fails -eq 0 ] && echo "consumer: all passed"
exit $((fails > 0))
