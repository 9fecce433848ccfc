#!/usr/bin/env bash
# kill -9 of the measured program and of truewatt at once, mid-run, with the
# real injection library (inject_host in its stream mode plays the program and
# its GPU through the fake CUPTI: a 10 ms kernel "tick" every 20 ms) and the
# fake libnvidia-ml. The run file must stay readable up to the kill:
#   - SQLite's integrity check passes;
#   - the kernels recorded are the first ones launched, none missing in
#     between (correlation ids 100, 101, ... without a gap), the last ending
#     within 2.5 s of the kill: the library's drain (every 100 ms), truewatt's
#     import of the events file and its commit (every 0.5 s), with room for a
#     loaded 2-core CI machine;
#   - the samples reach as far;
#   - `truewatt report` reports every recorded kernel, with the warning that
#     the run did not finish.
#
# usage: run_kill.sh BIN FAKE_LIBNVIDIA_ML LIBTRUEWATT_INJECT.so FAKE_CUPTI.so INJECT_HOST
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
INJECT=${3:?usage}
FAKE_CUPTI=${4:?usage}
HOST=${5:?usage}
. "$HERE/run_common.sh" run-kill "$1" "$2"
cd "$T" || exit 2
status=0
fail() { echo "FAIL: $*"; status=1; }
ok() { echo "ok: $*"; }

# the program's CUDA device 0 is the fake GPU 0 (by UUID)
export TW_FAKE_NVML_UUIDS=GPU-0a0a0a0a-0000-4000-8000-00000000aa00 INJECT_HOST_UUID=0a0a0a0a00004000800000000000aa00
export TW_INJECT_LIBRARY=$INJECT INJECT_HOST_CUPTI=$FAKE_CUPTI TW_PROFILE_DIR=$T/profiles
unset CUDA_VISIBLE_DEVICES NVTX_INJECTION64_PATH TW_INJECT_FLUSH_MS
mkdir -p "$TW_PROFILE_DIR" || exit 2

"$BIN" run -o k.sqlite -- "$HOST" - stream 60 "$T/app.pid" >k.out 2>err &
pid=$!
for _ in $(seq 200); do [ -s app.pid ] && break; sleep 0.05; done
[ -s app.pid ] || { fail "the program did not start: $(cat err)"; kill -9 $pid; exit 1; }
sleep 3
kill -9 "$(cat app.pid)" $pid
killed=$(python3 -c 'import time; print(time.clock_gettime_ns(time.CLOCK_MONOTONIC))')
wait $pid 2>/dev/null
[ -e k.sqlite ] || { fail "no run file: $(cat err)"; exit 1; }

python3 - k.sqlite "$killed" <<'PY' && ok "kill -9 of both: intact, every tick up to within 2.5 s of the kill, none missing" ||
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
t0 = db.execute("SELECT value FROM meta WHERE key = 't0_mono_ns'").fetchone()[0]
kill_s = (int(sys.argv[2]) - t0) * 1e-9
ids = [c for (c,) in db.execute("SELECT correlation_id FROM activities_named WHERE name = 'tick' ORDER BY start_ns")]
last_end = db.execute("SELECT max(end_ns) FROM activities_named").fetchone()[0] * 1e-9
last_poll = db.execute("SELECT max(t_ns) FROM polls").fetchone()[0] * 1e-9
print(f"  killed at t = {kill_s:.3f} s; {len(ids)} ticks, the last ending at {last_end:.3f} s; last poll {last_poll:.3f} s")
assert ids == list(range(100, 100 + len(ids))), ("a gap", ids[:5], ids[-5:])
assert len(ids) >= 25, len(ids)
assert kill_s - 2.5 < last_end <= kill_s, (kill_s, last_end)
assert kill_s - 2.5 < last_poll <= kill_s, (kill_s, last_poll)
PY
    fail "kill -9: the run file ($(cat err))"
"$BIN" report k.sqlite --json >k.json 2>err || fail "report of the killed run: $(cat err)"
python3 - k.json k.sqlite <<'PY' && ok "the killed run reports every recorded kernel, with a warning" || fail "killed run's report"
import json, sqlite3, sys
d = json.load(open(sys.argv[1]))
assert any("did not finish this run" in w for w in d["warnings"]), d["warnings"]
k = {x["name"]: x for x in d["devices"][0]["names"]}
n = sqlite3.connect(sys.argv[2]).execute("SELECT count(*) FROM activities").fetchone()[0]
assert k["tick"]["launches"] == n, (k["tick"], n)
PY
exit $status
