#!/usr/bin/env bash
# kill -9 of the measured program and of truewatt at once, mid-run, with the
# real injection library (inject_host in its stream mode plays the program and
# its GPU through the fake CUPTI: a 10 ms kernel "tick" every 20 ms) and the
# fake libnvidia-ml. The run file must stay readable up to the kill:
#   - SQLite's integrity check passes;
#   - the kill comes as soon as the file, read while the run goes on, holds 50
#     ticks (the library's drain every 100 ms, truewatt's import of the events
#     file and its commit every 0.5 s): every tick committed then is still
#     there after the kill, with the first ones launched, none missing in
#     between (correlation ids 100, 101, ... without a gap); the last within
#     10 s of the kill (a bound for a loaded 2-core CI machine: the point is
#     the committed data surviving, not the speed);
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
# the newest tick committed, read while the run goes on (WAL: a reader sees the last commit)
seen=$(python3 - k.sqlite <<'PY'
import sqlite3, sys, time
for _ in range(400):
    try:
        db = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True)
        n, end = db.execute("SELECT count(*), max(end_ns) FROM activities_named WHERE name = 'tick'").fetchone()
        db.close()
        if n >= 50:
            print(end)
            break
    except sqlite3.Error:
        pass
    time.sleep(0.05)
PY
)
kill -9 "$(cat app.pid)" $pid
killed=$(python3 -c 'import time; print(time.clock_gettime_ns(time.CLOCK_MONOTONIC))')
[ -n "$seen" ] || fail "no 50 ticks committed within 20 s: $(cat err)"
wait $pid 2>/dev/null
[ -e k.sqlite ] || { fail "no run file: $(cat err)"; exit 1; }

python3 - k.sqlite "$killed" "${seen:-0}" <<'PY' && ok "kill -9 of both: intact, every tick committed before the kill kept, none missing" ||
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
t0 = db.execute("SELECT value FROM meta WHERE key = 't0_mono_ns'").fetchone()[0]
kill_s = (int(sys.argv[2]) - t0) * 1e-9
ids = [c for (c,) in db.execute("SELECT correlation_id FROM activities_named WHERE name = 'tick' ORDER BY start_ns")]
last_end = db.execute("SELECT max(end_ns) FROM activities_named").fetchone()[0] * 1e-9
last_poll = db.execute("SELECT max(t_ns) FROM polls").fetchone()[0] * 1e-9
seen_s = int(sys.argv[3]) * 1e-9
print(f"  killed at t = {kill_s:.3f} s, a tick ending at {seen_s:.3f} s committed before; {len(ids)} ticks, the last "
      f"ending at {last_end:.3f} s; last poll {last_poll:.3f} s")
assert ids == list(range(100, 100 + len(ids))), ("a gap", ids[:5], ids[-5:])
assert len(ids) >= 50 and last_end >= seen_s, (len(ids), last_end, seen_s)
assert kill_s - 10 < last_end <= kill_s, (kill_s, last_end)
assert kill_s - 10 < last_poll <= kill_s, (kill_s, last_poll)
PY
    fail "kill -9: the run file ($(cat err))"
killed_run_reports k.sqlite
exit $status
