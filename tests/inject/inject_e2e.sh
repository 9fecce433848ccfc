#!/usr/bin/env bash
# The injection library end to end without a GPU: inject_host plays libcuda
# and the GPU, fake_cupti.so plays libcupti. Checks the events file (values,
# quoting, demangling, NVTX pairing, timeline), that the flush thread writes
# while the program runs, that a killed program keeps what was flushed, the
# NVTX_INJECTION64_PATH check, and that set-up failures leave the program alone.
#
# usage: inject_e2e.sh INJECT_HOST LIBTRUEWATT_INJECT.so FAKE_CUPTI.so
set -u
HOST=${1:?usage}
LIB=${2:?usage}
FAKE=${3:?usage}
command -v python3 >/dev/null || { echo "SKIP: python3 not found"; exit 77; }
tmp=$(mktemp -d "${TW_TMPDIR:-/tmp}/inject-e2e.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
status=0
fail() { echo "FAIL: $*"; status=1; }

unset CUDA_INJECTION64_PATH NVTX_INJECTION64_PATH TW_CUPTI_CLOCK TW_INJECT_FLUSH_MS TW_EVENTS_PATH

# check_file FILE MODE: the rows a run leaves (MODE exit: all; kill: phase 1)
check_file() {
    python3 - "$1" "$2" <<'EOF'
import csv, sys
from decimal import Decimal as D
path, mode = sys.argv[1], sys.argv[2]
with open(path, newline="") as f:
    rows = list(csv.reader(f))
header = "name,start_s,end_s,device,stream,kind,grid_x,grid_y,grid_z,block_x,block_y,block_z,correlation_id".split(",")
errors = []
if rows[0] != header:
    errors.append(f"header {rows[0]}")
body = [dict(zip(header, r)) for r in rows[1:]]
if any(len(r) != len(header) for r in rows):
    errors.append("a row with the wrong number of fields")
by = {r["name"]: r for r in body}
want = ["spin(float*, int)", 'plain, "quoted" name', "memcpy HtoD 1048576 B", "memset 4096 B", 'phase "one"']
if mode == "exit":
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
check("spin(float*, int)", device="0", stream="7", kind="kernel", grid_x="2112", grid_y="1", grid_z="1",
      block_x="256", block_y="1", block_z="1", correlation_id="1")
check("memcpy HtoD 1048576 B", kind="memcpy", device="0", stream="7", grid_x="", correlation_id="3")
check("memset 4096 B", kind="memset", correlation_id="4")
check('phase "one"', kind="nvtx", device="-1", stream="-1", grid_x="", correlation_id="")
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
if 'phase "one"' in by:
    d = dur('phase "one"')
    if d != D("0.020000000"):
        errors.append(f"nvtx duration {d}")
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
# header + 5 events written by the flush thread while the host slept
grep -q '^phase1_lines 6$' <<<"$out" || fail "the flush thread did not write while the program ran: $out"
check_file "$ev" exit && echo "ok    events file of a normal run" || fail "events file of a normal run"
grep -q 'truewatt-inject: CUPTI .* from .*fake' "$tmp/err" || fail "no verbose set-up line: $(cat "$tmp/err")"
grep -q '2 unpaired NVTX markers' "$tmp/err" || fail "summary: $(cat "$tmp/err")"
grep -q 'is not the CUPTI in use' "$tmp/err" && fail "NVTX path warning for the same file"

# ---- NVTX_INJECTION64_PATH unset: set to the CUPTI in use
out=$(TW_CUPTI_LIBRARY="$FAKE" TW_EVENTS_PATH="$tmp/nvtxset.csv" "$HOST" "$LIB" exit 2>"$tmp/err")
grep -q "^nvtx_path $FAKE\$" <<<"$out" && echo "ok    NVTX_INJECTION64_PATH set to the CUPTI in use" ||
    fail "NVTX_INJECTION64_PATH not set: $out"

# ---- a libcupti the program loaded already wins over TW_CUPTI_LIBRARY
out=$(INJECT_HOST_CUPTI="$FAKE" TW_CUPTI_LIBRARY="$LIB" TW_EVENTS_PATH="$tmp/preloaded.csv" "$HOST" "$LIB" exit \
      2>"$tmp/err")
grep -q 'has loaded .*fake-cupti.so already: using it' "$tmp/err" && check_file "$tmp/preloaded.csv" exit &&
    echo "ok    the program's own libcupti is used, TW_CUPTI_LIBRARY is not" ||
    fail "preloaded libcupti: $out $(cat "$tmp/err")"

# ---- appending: a second process adds rows, not a second header
TW_CUPTI_LIBRARY="$FAKE" TW_EVENTS_PATH="$ev" "$HOST" "$LIB" exit >/dev/null 2>&1
[ "$(grep -c '^name,start_s' "$ev")" = 1 ] && [ "$(wc -l <"$ev")" = 13 ] &&
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

# ---- NVTX_INJECTION64_PATH naming another file is reported
TW_CUPTI_LIBRARY="$FAKE" TW_EVENTS_PATH="$tmp/nvtx.csv" NVTX_INJECTION64_PATH="$LIB" "$HOST" "$LIB" exit \
    >/dev/null 2>"$tmp/err"
grep -q 'NVTX_INJECTION64_PATH=.* is not the CUPTI in use' "$tmp/err" &&
    echo "ok    NVTX_INJECTION64_PATH mismatch reported" || fail "no NVTX mismatch warning: $(cat "$tmp/err")"

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
