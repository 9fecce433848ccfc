#!/usr/bin/env bash
# The injection library end to end without a GPU: inject_host plays libcuda
# and the GPU, fake_cupti.so plays libcupti. Checks the events file (values,
# quoting, demangling with the mangled name kept, each kernel's device UUID
# from CUPTI's device record, timeline), that the flush thread writes while
# the program runs, that a killed program keeps what was flushed, that
# NVTX_INJECTION64_PATH is pointed at the library, and that set-up failures
# leave the program alone. Then nvtx_host, a program using the NVTX v3 API
# and no CUDA, with NVTX_INJECTION64_PATH naming the library: its ranges
# (two threads, nesting, a domain, a range across threads, a forked child's) in the file.
#
# usage: inject_e2e.sh INJECT_HOST LIBTRUEWATT_INJECT.so FAKE_CUPTI.so NVTX_HOST FAKE_CUDA.so
set -u
HOST=${1:?usage}
LIB=${2:?usage}
FAKE=${3:?usage}
NVTX_HOST=${4:?usage}
FAKE_CUDA=${5:?usage}
command -v python3 >/dev/null || { echo "SKIP: python3 not found"; exit 77; }
tmp=$(mktemp -d "${TW_TMPDIR:-/tmp}/inject-e2e.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
status=0
fail() { echo "FAIL: $*"; status=1; }

unset CUDA_INJECTION64_PATH NVTX_INJECTION64_PATH TW_CUPTI_CLOCK TW_INJECT_FLUSH_MS TW_EVENTS_PATH

# check_file FILE MODE: the rows a run leaves (MODE exit: all; kill: phase 1; cuda: all, with
# the UUIDs of the devices without a device record from the fake libcuda)
check_file() {
    python3 - "$1" "$2" <<'EOF'
import csv, sys
from decimal import Decimal as D
path, mode = sys.argv[1], sys.argv[2]
with open(path, newline="") as f:
    rows = list(csv.reader(f))
header = ("name,start_s,end_s,device,stream,kind,grid_x,grid_y,grid_z,block_x,block_y,block_z,correlation_id,"
          "device_uuid,mangled,domain,tid,depth").split(",")
errors = []
if rows[0] != header:
    errors.append(f"header {rows[0]}")
body = [dict(zip(header, r)) for r in rows[1:]]
if any(len(r) != len(header) for r in rows):
    errors.append("a row with the wrong number of fields")
by = {r["name"]: r for r in body}
want = ["spin(float*, int)", 'plain, "quoted" name', "memcpy HtoD 1048576 B", "memset 4096 B", "on_device_1",
        "on_device_2"]
if mode in ("exit", "cuda"):
    want.append("after()")
missing = [w for w in want if w not in by]
if missing:
    errors.append(f"missing rows {missing}; have {sorted(by)}")
extra = [n for n in by if n not in want + ["after()"]]
if extra:
    errors.append(f"unexpected rows {extra}")
def check(name, **kv):
    r = by.get(name)
    if not r:
        return
    for k, v in kv.items():
        if r[k] != v:
            errors.append(f"{name}: {k}={r[k]!r}, want {v!r}")
uuid0 = "GPU-11223344-5566-7788-99aa-bbccddeeff00"  # the device record came after these kernels
check("spin(float*, int)", device="0", stream="7", kind="kernel", grid_x="2112", grid_y="1", grid_z="1",
      block_x="256", block_y="1", block_z="1", correlation_id="1", device_uuid=uuid0, mangled="_Z4spinPfi",
      domain="", tid="", depth="")
check('plain, "quoted" name', mangled="", device_uuid=uuid0)  # not mangled: nothing beside it
check("memcpy HtoD 1048576 B", kind="memcpy", device="0", stream="7", grid_x="", correlation_id="3",
      device_uuid=uuid0, mangled="")
check("memset 4096 B", kind="memset", correlation_id="4", device_uuid=uuid0)
if mode == "cuda":  # from libcuda: a whole GPU, and a MIG instance (its two UUIDs differ)
    check("on_device_1", device="1", device_uuid="GPU-c0de0001-0000-4000-8000-000000000001")
    check("on_device_2", device="2", device_uuid="MIG-3a3a3a3a-0000-4000-8000-00000000002a")
else:  # no record, no libcuda: unknown, not another GPU's
    check("on_device_1", device="1", device_uuid="")
    check("on_device_2", device="2", device_uuid="")
if mode in ("exit", "cuda"):
    check("after()", mangled="_Z5afterv", device_uuid=uuid0)
def dur(name):
    r = by[name]
    return D(r["end_s"]) - D(r["start_s"])
if "spin(float*, int)" in by:
    if dur("spin(float*, int)") != D("0.010000000"):
        errors.append(f"kernel duration {dur('spin(float*, int)')}")
    # the timeline starts 1 s before the host began; the kernel 1 ms after the host's first timestamp
    start = D(by["spin(float*, int)"]["start_s"])
    if not (D("1.001") <= start < D("1.5")):
        errors.append(f"kernel start_s {start} not in [1.001, 1.5)")
    if len(by["spin(float*, int)"]["start_s"].split(".")[1]) != 9:
        errors.append("start_s without 9 decimals")
for e in errors:
    print("   ", e)
sys.exit(1 if errors else 0)
EOF
}

# ---- a normal run, CUPTI's own clock
ev="$tmp/events.csv"
out=$(TW_CUPTI_LIBRARY="$FAKE" TW_EVENTS_PATH="$ev" TW_INJECT_VERBOSE=1 NVTX_INJECTION64_PATH="$FAKE" \
      "$HOST" "$LIB" exit 2>"$tmp/err")
rc=$?
[ $rc -eq 0 ] || fail "host exited $rc: $(cat "$tmp/err")"
grep -q '^enabled ok$' <<<"$out" || fail "activity kinds not all enabled: $out"
grep -q '^flush_period 100$' <<<"$out" || fail "cuptiActivityFlushPeriod(100) not called: $out"
# header + 6 events written by the flush thread while the host slept
grep -q '^phase1_lines 7$' <<<"$out" || fail "the flush thread did not write while the program ran: $out"
check_file "$ev" exit && echo "ok    events file of a normal run" || fail "events file of a normal run"
grep -q 'truewatt-inject: CUPTI .* from .*fake' "$tmp/err" || fail "no verbose set-up line: $(cat "$tmp/err")"
grep -q '9 activity records, 7 events written' "$tmp/err" || fail "summary: $(cat "$tmp/err")"
grep -q 'NVTX ranges go there, not here' "$tmp/err" || fail "NVTX_INJECTION64_PATH naming another file: no note"

# ---- device UUIDs without device records: from the program's libcuda
INJECT_HOST_CUDA="$FAKE_CUDA" TW_CUPTI_LIBRARY="$FAKE" TW_EVENTS_PATH="$tmp/cuda.csv" "$HOST" "$LIB" exit \
    >/dev/null 2>"$tmp/err" || fail "run with libcuda: $(cat "$tmp/err")"
check_file "$tmp/cuda.csv" cuda && echo "ok    UUIDs from the program's libcuda, a MIG instance as MIG-" ||
    fail "UUIDs from libcuda"

# ---- NVTX_INJECTION64_PATH unset: set to this library
out=$(TW_CUPTI_LIBRARY="$FAKE" TW_EVENTS_PATH="$tmp/nvtxset.csv" "$HOST" "$LIB" exit 2>"$tmp/err")
lib_abs=$(cd "$(dirname "$LIB")" && pwd)/$(basename "$LIB")
grep -q "^nvtx_path $lib_abs\$" <<<"$out" && echo "ok    NVTX_INJECTION64_PATH set to the injection library" ||
    fail "NVTX_INJECTION64_PATH not set to $lib_abs: $out"

# ---- a libcupti the program loaded already wins over TW_CUPTI_LIBRARY
out=$(INJECT_HOST_CUPTI="$FAKE" TW_CUPTI_LIBRARY="$LIB" TW_EVENTS_PATH="$tmp/preloaded.csv" "$HOST" "$LIB" exit \
      2>"$tmp/err")
grep -q 'has loaded .*fake-cupti.so already: using it' "$tmp/err" && check_file "$tmp/preloaded.csv" exit &&
    echo "ok    the program's own libcupti is used, TW_CUPTI_LIBRARY is not" ||
    fail "preloaded libcupti: $out $(cat "$tmp/err")"

# ---- appending: a second process adds rows, not a second header
TW_CUPTI_LIBRARY="$FAKE" TW_EVENTS_PATH="$ev" "$HOST" "$LIB" exit >/dev/null 2>&1
[ "$(grep -c '^name,start_s' "$ev")" = 1 ] && [ "$(wc -l <"$ev")" = 15 ] &&
    echo "ok    a second process appends without a second header" || fail "append: $(wc -l <"$ev") lines"

# ---- the timestamp callback (TW_CUPTI_CLOCK=monotonic) and %p in the path
TW_CUPTI_LIBRARY="$FAKE" TW_EVENTS_PATH="$tmp/mono-%p.csv" TW_CUPTI_CLOCK=monotonic "$HOST" "$LIB" exit \
    >/dev/null 2>"$tmp/err" || fail "monotonic run: $(cat "$tmp/err")"
set -- "$tmp"/mono-[0-9]*.csv
[ -f "$1" ] && check_file "$1" exit && echo "ok    TW_CUPTI_CLOCK=monotonic, %p in the path" ||
    fail "monotonic clock run"

# ---- killed: what the flush thread wrote survives
out=$(TW_CUPTI_LIBRARY="$FAKE" TW_EVENTS_PATH="$tmp/killed.csv" "$HOST" "$LIB" kill 2>"$tmp/err")
rc=$?
[ $rc -eq 137 ] || fail "kill mode exited $rc"
check_file "$tmp/killed.csv" kill && echo "ok    a killed program keeps the events flushed before" ||
    fail "events of a killed program"

# ---- NVTX ranges from a program using the NVTX v3 API, no CUDA, no CUPTI
out=$(TW_EVENTS_PATH="$tmp/nvtx.csv" TW_INJECT_VERBOSE=1 NVTX_INJECTION64_PATH="$LIB" "$NVTX_HOST" 2>"$tmp/err")
[ $? -eq 0 ] || fail "nvtx_host failed: $(cat "$tmp/err")"
grep -q '1 pops or ends without a range' "$tmp/err" || fail "the pop without a push is not counted: $(cat "$tmp/err")"
python3 - "$tmp/nvtx.csv" "$out" <<'EOF' && echo "ok    NVTX ranges: threads, nesting, domain, across threads, a forked child" ||
import csv, sys
from decimal import Decimal as D
rows = list(csv.DictReader(open(sys.argv[1], newline="", encoding="utf-8")))
tids = dict(l.split()[1:] for l in sys.argv[2].splitlines() if l.startswith("tid "))
main, work, child = tids["main"], tids["worker"], tids["child"]
by = {r["name"]: r for r in rows}
errors = []
if main == work:
    errors.append("one thread id for both threads")
want = {  # name: (tid, domain, depth)
    "m outer": (main, "", "1"), "m inner, with a comma": (main, "", "2"), "m innermost": (main, "", "3"),
    "across threads": (main, "", ""),  # a start/end range: the thread that started it, no depth
    "w outer": (work, "", "1"), "w inner": (work, "", "2"), "registered step": (work, "my domain", "1"),
    "w wide \u00e9": (work, "", "2"),
    "child range": (child, "", "2"),  # a forked child's, inside the "m outer" it inherited
}
if len(rows) != len(by):
    errors.append(f"{len(rows)} rows for {len(by)} names: a range written twice")
if sorted(by) != sorted(want):
    errors.append(f"ranges {sorted(by)}, want {sorted(want)}")
for name, (tid, dom, depth) in want.items():
    r = by.get(name)
    if not r:
        continue
    got = (r["tid"], r["domain"], r["depth"], r["kind"], r["device"], r["device_uuid"])
    if got != (tid, dom, depth, "nvtx", "-1", ""):
        errors.append(f"{name}: tid, domain, depth, kind, device, uuid = {got}")
    if not D(r["start_s"]) < D(r["end_s"]):
        errors.append(f"{name}: does not end after it starts")
def inside(inner, outer):
    a, b = by.get(inner), by.get(outer)
    if a and b and not (D(b["start_s"]) < D(a["start_s"]) and D(a["end_s"]) < D(b["end_s"])):
        errors.append(f"{inner} not inside {outer}")
for i, o in (("m innermost", "m inner, with a comma"), ("m inner, with a comma", "m outer"),
             ("w inner", "registered step"), ("registered step", "w outer"), ("w wide \u00e9", "w outer"),
             ("w outer", "m outer")):
    inside(i, o)
# the start/end range: started by main before the worker's ranges, ended by the worker inside "w outer"
a, w = by.get("across threads"), by.get("w outer")
if a and w and not (D(a["start_s"]) < D(w["start_s"]) < D(a["end_s"]) < D(w["end_s"])):
    errors.append("across threads: not started before w outer and ended inside it")
# the worker started after main's inner ranges closed
a, b = by.get("m inner, with a comma"), by.get("w outer")
if a and b and not D(a["end_s"]) < D(b["start_s"]):
    errors.append("times out of order across threads")
for e in errors:
    print("   ", e)
sys.exit(1 if errors else 0)
EOF
    fail "NVTX ranges of nvtx_host: $(cat "$tmp/nvtx.csv")"
# NVTX_INJECTION64_PATH unset (and no CUDA to set it): the program runs, nothing is recorded
TW_EVENTS_PATH="$tmp/nonvtx.csv" "$NVTX_HOST" >/dev/null 2>"$tmp/err" && [ ! -e "$tmp/nonvtx.csv" ] &&
    echo "ok    no NVTX_INJECTION64_PATH: the program runs, nothing recorded" || fail "nvtx_host without injection"

# ---- failures leave the program alone
out=$("$HOST" "$LIB" bare 2>"$tmp/err")
[ $? -eq 0 ] && grep -q 'TW_EVENTS_PATH is not set' "$tmp/err" &&
    echo "ok    no TW_EVENTS_PATH: a warning, nothing else" || fail "no TW_EVENTS_PATH: $out $(cat "$tmp/err")"
out=$(TW_EVENTS_PATH="$tmp/nodir/x.csv" "$HOST" "$LIB" bare 2>"$tmp/err")
[ $? -eq 0 ] && grep -q 'cannot open' "$tmp/err" &&
    echo "ok    unwritable events file: reported" || fail "unwritable events file: $out $(cat "$tmp/err")"
out=$(TW_CUPTI_LIBRARY="$tmp/none.so" CUDA_HOME="$tmp" LD_LIBRARY_PATH="$tmp" TW_EVENTS_PATH="$tmp/b.csv" \
      "$HOST" "$LIB" bare 2>"$tmp/err")
[ $? -eq 0 ] && grep -q 'TW_CUPTI_LIBRARY=.* cannot be loaded' "$tmp/err" &&
    echo "ok    missing libcupti: reported, program goes on" || fail "missing libcupti: $out $(cat "$tmp/err")"
sed 's/^/    stderr: /' "$tmp/err"
exit $status
