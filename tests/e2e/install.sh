#!/usr/bin/env bash
# The installed package (docs/api.md): `cmake --install` into a temp prefix,
# then docs/api.md's C example compiled against it twice, with
# `pkg-config --cflags --libs truewatt` and as a CMake project with
# find_package(truewatt), and each run on the fake libnvidia-ml at a scripted
# constant power: the region's energy must be P x its time within the stated
# sd, P from the scenario itself (the fake's truth).
# Then the prefix is moved elsewhere (relocation) and its truewatt must find
# its own data and injection library there, with no environment pointing to
# them: `backends` and `sensor show NAME` name the moved share/truewatt, and
# `truewatt run` of tests/inject's host program (the fake CUPTI, on the fake
# libnvidia-ml named as an H100) reports the program's kernels with the
# profile from the moved prefix (skipped where the injection library is not
# built).
#
# usage: install.sh BIN FAKE_LIBNVIDIA_ML BUILD_DIR SOURCE_DIR (BIN: the truewatt built there)
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
BUILD=${3:?usage: install.sh BIN FAKE_LIBNVIDIA_ML BUILD_DIR SOURCE_DIR}
SRC=${4:?usage}
for tool in pkg-config cc cmake readelf; do
    command -v $tool >/dev/null || { echo "FAIL: $tool not found (scripts/deps installs it)"; exit 1; }
done
. "$HERE/run_common.sh" install "$1" "$2"
cd "$T" || exit 2
status=0
fail() { echo "FAIL: $*"; status=1; }
ok() { echo "ok: $*"; }

# ---- install
cmake --install "$BUILD" --prefix "$T/prefix" >install.log 2>&1 || { cat install.log; echo "FAIL: cmake --install"; exit 1; }
LIBDIR=$(dirname "$(find "$T/prefix" -name 'libtruewatt.so' | head -1)")
[ -f "$LIBDIR/libtruewatt.so" ] || { echo "FAIL: no libtruewatt.so installed"; exit 1; }
real=$(readlink -f "$LIBDIR/libtruewatt.so")
soname=$(readelf -d "$real" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
major=$(sed -n 's/^#define TW_VERSION_MAJOR \([0-9]*\)/\1/p' "$SRC/include/truewatt.h")
[ "$soname" = "libtruewatt.so.$major" ] && [ -e "$LIBDIR/$soname" ] && ok "SONAME $soname" ||
    fail "SONAME '$soname', want libtruewatt.so.$major (and that link installed)"
# the CLI, installed, runs from the prefix without LD_LIBRARY_PATH on the installed library (its RPATH)
BINTW=$(find "$T/prefix" -type f -name truewatt -perm -u+x | head -1)
if [ -z "$BINTW" ]; then
    fail "no truewatt executable installed"
elif ! out=$(env -u LD_LIBRARY_PATH "$BINTW" --version 2>&1); then
    fail "installed truewatt --version without LD_LIBRARY_PATH: $out"
elif [ "$(env -u LD_LIBRARY_PATH ldd "$BINTW" | awk -v w="libtruewatt.so.$major" '$1 == w { print $3 }' |
    xargs -r readlink -f)" != "$real" ]; then
    fail "installed truewatt does not load $real: $(env -u LD_LIBRARY_PATH ldd "$BINTW" | grep truewatt)"
else
    ok "installed ${BINTW#"$T/prefix/"} --version ($out) on the installed library"
fi
[ -f "$T/prefix/include/truewatt.h" ] && cmp -s "$T/prefix/include/truewatt.h" "$SRC/include/truewatt.h" &&
    ok "truewatt.h installed" || fail "truewatt.h not installed"

# ---- docs/api.md's example, as written there
python3 - "$SRC/docs/api.md" >api_example.c <<'PY' || { echo "FAIL: no example in docs/api.md"; exit 1; }
import re, sys
text = open(sys.argv[1]).read()
m = re.search(r"<!-- example: api_example.c -->\s*```c\n(.*?)```", text, re.S)
if not m:
    sys.exit(1)
sys.stdout.write(m.group(1))
PY

# the fake on a constant 250 W, its clock 5 s in (the sample buffer's history inside the kernel too)
printf 'name,start_s,duration_s,power_w\nk,0,100000,250\n' >scenario.csv
now_ns=$(python3 -c 'import time; print(time.clock_gettime_ns(time.CLOCK_MONOTONIC) - 5000000000)')
export TW_NVML_LIBRARY=$FAKE TW_FAKE_NVML_SCENARIO=$T/scenario.csv TW_FAKE_NVML_T0_MONO_NS=$now_ns
unset TW_FAKE_NVML_DEVICES CUDA_VISIBLE_DEVICES TW_PROFILE_DIR

# check NAME OUTPUT: one GPU line, energy = 250 W x the region's time within 3 sd
check() {
    python3 - "$1" "$2" <<'PY'
import re, sys
name, path = sys.argv[1], sys.argv[2]
out = open(path).read()
t = re.search(r"^region work: ([0-9.]+) s$", out, re.M)
g = re.findall(r"^(GPU-\S+): ([-0-9.e]+) J \+- ([-0-9.e]+) J \(baseline ([-0-9.e]+) J, above it ([-0-9.e]+) J\) from (.+)$", out, re.M)
if not t or len(g) != 1:
    print(f"FAIL: {name}: unexpected output:\n{out}")
    sys.exit(1)
t = float(t.group(1))
e, sd = float(g[0][1]), float(g[0][2])
want = 250.0 * t
# the example prints 6 decimals: its rounding counts as well
if not (0.19 < t < 1.0) or abs(e - want) > 3 * sd + 250.0 * 1e-6 + 1e-6:
    print(f"FAIL: {name}: {e} J +- {sd} J over {t} s, want 250 W x {t} s = {want} J")
    sys.exit(1)
print(f"ok: {name}: {e} J +- {sd} J = 250 W x {t} s ({want} J), from {g[0][5]}")
PY
}

# ---- with pkg-config
export PKG_CONFIG_PATH=$LIBDIR/pkgconfig
flags=$(pkg-config --cflags --libs truewatt) || fail "pkg-config --cflags --libs truewatt"
cc -std=c11 -Wall -Wextra -Werror api_example.c $flags -o example_pc 2>cc.log && ok "example compiled with pkg-config ($flags)" ||
    { cat cc.log; fail "example does not compile with pkg-config"; }
if [ -x example_pc ]; then
    LD_LIBRARY_PATH=$LIBDIR ./example_pc >pc.out 2>&1 || { cat pc.out; fail "example (pkg-config) exited $?"; }
    check "example (pkg-config)" pc.out || status=1
    # it runs against the installed library, not the build tree's
    LD_LIBRARY_PATH=$LIBDIR ldd ./example_pc | grep -q "$LIBDIR/libtruewatt.so.$major" && ok "linked to the installed library" ||
        fail "example_pc does not load $LIBDIR/libtruewatt.so.$major"
fi

# ---- with CMake's find_package
mkdir -p proj
cp api_example.c proj/
cat >proj/CMakeLists.txt <<'CM'
cmake_minimum_required(VERSION 3.18)
project(tw_example LANGUAGES C)
find_package(truewatt 0.1 REQUIRED)
add_executable(example api_example.c)
target_link_libraries(example PRIVATE truewatt::truewatt)
CM
if cmake -S proj -B proj/build -DCMAKE_PREFIX_PATH="$T/prefix" >cmake.log 2>&1 &&
    cmake --build proj/build >>cmake.log 2>&1; then
    ok "example built with find_package(truewatt)"
    ./proj/build/example >cm.out 2>&1 || { cat cm.out; fail "example (CMake) exited $?"; }
    check "example (CMake)" cm.out || status=1
else
    cat cmake.log
    fail "the CMake project with find_package(truewatt) does not build"
fi

# ---- relocation: the prefix moved, nothing in the environment pointing to it or to the build tree
mkdir -p "$T/elsewhere"
mv "$T/prefix" "$T/elsewhere/p" || { echo "FAIL: cannot move the prefix"; exit 1; }
P=$T/elsewhere/p
BINTW=$P/${BINTW#"$T/prefix/"}
unset TW_PROFILE_DIR TW_DATA_DIR TW_INJECT_LIBRARY PKG_CONFIG_PATH
export LD_LIBRARY_PATH=
SHARE=$(cd "$P" && find . -path '*/truewatt/profiles' -type d | head -1)
SHARE=$P/${SHARE#./}
case $SHARE in "$P"/share/truewatt/profiles) ok "profiles installed in ${SHARE#"$P/"}" ;;
*) fail "no share/truewatt/profiles installed under the prefix ($SHARE)" ;; esac
out=$("$BINTW" backends 2>&1)
grep -qx "sensor profiles: $SHARE ([1-9][0-9]*)" <<<"$out" && ok "moved: backends names the moved profiles" ||
    fail "moved: backends does not name $SHARE: $out"
want=$(cd "$SRC/data/profiles" && ls | head -1)
out=$("$BINTW" sensor show "${want%.json}" 2>&1)
[ "$(head -1 <<<"$out")" = "sensor profile $SHARE/$want" ] && ok "moved: sensor show ${want%.json} reads $SHARE/$want" ||
    fail "moved: sensor show ${want%.json}: $(head -3 <<<"$out")"

FAKE_CUPTI=$BUILD/tests/inject/libfake-cupti.so
HOST=$BUILD/tests/inject/tw_inject_host
if [ ! -f "$FAKE_CUPTI" ] || [ ! -x "$HOST" ]; then
    echo "SKIP (part): the fake CUPTI and its host program are not built (no cupti.h): no truewatt run"
    exit $status
fi
inj=$(find "$P" -name libtruewatt-inject.so | head -1)
[ -n "$inj" ] && ok "${inj#"$P/"} installed" || fail "libtruewatt-inject.so not installed"
# the host program's kernels: spin three times on the fake GPU's UUID, 400 W in the fake's scenario
printf 'name,start_s,duration_s,power_w\nspin,0.5,0.3,400\nspin,0.9,0.3,400\nspin,1.3,0.3,400\n' >spin.csv
env -u TW_FAKE_NVML_T0_MONO_NS TW_FAKE_NVML_SCENARIO=$T/spin.csv TW_FAKE_NVML_NAME="NVIDIA H100 80GB HBM3" \
    TW_FAKE_NVML_UUIDS=GPU-0a0a0a0a-0000-4000-8000-00000000aa00 INJECT_HOST_UUID=0a0a0a0a00004000800000000000aa00 \
    TW_RUN_EXPORT_T0_TO_FAKE=1 INJECT_HOST_CUPTI=$FAKE_CUPTI \
    "$BINTW" run --json -o run.sqlite -- "$HOST" - gpu >run.json 2>run.err || fail "moved: truewatt run: $(cat run.err)"
grep -q "no injection library" run.err && fail "moved: truewatt run found no injection library: $(cat run.err)"
python3 - run.json "$SHARE" <<'PY' && ok "moved: truewatt run's report has the 3 kernels, the profile from $SHARE" ||
import json, sys
d = json.load(open(sys.argv[1]))
dev = d["devices"][0]
k = {x["name"]: x for x in dev.get("names") or [] if x["kind"] == "kernel"}
spin = k.get("spin(float*, int)")
assert spin and spin["launches"] == 3, f"kernels {sorted(k)}"
src = dev["profile"]["source"]
assert src.startswith(f"sensor profile {sys.argv[2]}/"), f"profile: {src}"
PY
    fail "moved: truewatt run's report: $(cat run.err)"
exit $status
