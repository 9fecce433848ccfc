#!/usr/bin/env bash
# truewatt run --activity-counters end to end without a GPU: the real
# injection library's PM sampling (src/inject/pm_sampling.c) against the fake
# CUPTI's PM sampling (tests/inject/fake_cupti.c) and the fake libcuda (device
# 0's primary context active), the power from the fake libnvidia-ml. The
# measured program is inject_host in its gpu mode (three kernels of 0.3 s).
#   - the run file's pm_devices row: the interval, the metrics the fake
#     accepts (the wanted list of pm_sampling.c but sm__inst_executed*, which it refuses);
#   - pm_samples: the fake's samples, back to back at 1 ms, each value the
#     fake's formula (metric p of sample k: (p + 1) * 1000 + k % 1000), within
#     the command's run on the timeline;
#   - the report's line and JSON key, export's pm_samples.csv;
#   - the estimate's use of them (activity_model, each name's method), with and
#     without --no-activity-counters;
#   - a second GPU sampled on which the program has no context: the report says
#     it has no activity counters, and why;
#   - by default: in windows of 1 s every 5 s at 0.2 ms; with --no-activity-counters: none asked
#     for, none recorded, no line;
#   - in windows (--activity-windows): pm_window rows, the samples inside
#     them, the estimate's term for PM sampling's own power;
#   - the fake refusing (no permission; --activity-counters 0.5, a value as its
#     own argument): the run completes with its kernels and the report says why
#     there are no activity counters.
#
# usage: run_activity_counters.sh BIN FAKE_LIBNVIDIA_ML LIBTRUEWATT_INJECT.so FAKE_CUPTI.so INJECT_HOST FAKE_CUDA.so
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
INJECT=${3:?usage}
FAKE_CUPTI=${4:?usage}
HOST=${5:?usage}
FAKE_CUDA=${6:?usage}
. "$HERE/run_common.sh" run-activity-counters "$1" "$2"
cd "$T" || exit 2
status=0
fail() { echo "FAIL: $*"; status=1; }
ok() { echo "ok: $*"; }

UUID=GPU-11223344-5566-7788-99aa-bbccddeeff00 # fake_cuda.c's device 0, inject_host's default device record
UUID1=GPU-0a0a0a0a-0000-4000-8000-00000000aa01 # a second GPU, where the program makes no context
printf 'name,start_s,duration_s,power_w\nspin,0.5,0.3,400\nspin,0.9,0.3,400\nspin,1.3,0.3,400\n' >scenario.csv
export TW_FAKE_NVML_DEVICES=2 TW_FAKE_NVML_UUIDS=$UUID,$UUID1 TW_FAKE_NVML_SCENARIO=$T/scenario.csv
export TW_RUN_EXPORT_T0_TO_FAKE=1 TW_INJECT_LIBRARY=$INJECT INJECT_HOST_CUPTI=$FAKE_CUPTI INJECT_HOST_CUDA=$FAKE_CUDA
export TW_PROFILE_DIR=$T/profiles
unset CUDA_VISIBLE_DEVICES NVTX_INJECTION64_PATH FAKE_CUPTI_PM FAKE_CUDA_NO_CONTEXT

# ---- sampled every 1 ms (bare --activity-counters)
"$BIN" run --json --activity-counters -o a.sqlite -- "$HOST" - gpu >a.json 2>err ||
    fail "run --activity-counters: $(cat err)"
python3 - a.sqlite "$UUID" <<'PY' && ok "the run file holds the fake's samples, back to back, with its values" || fail "pm tables"
import sqlite3, struct, sys
db = sqlite3.connect(sys.argv[1])
wanted = ["sm__cycles_active.avg", "gpc__cycles_elapsed.max", "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed",
          "dram__throughput.avg.pct_of_peak_sustained_elapsed", "lts__t_sectors.sum"]
dev = db.execute("SELECT device, uuid, interval_ns, metrics, refused, reason FROM pm_devices").fetchall()
assert dev == [(0, sys.argv[2], 1000000, ",".join(wanted), "sm__inst_executed.avg.per_cycle_active", None)], dev
rows = db.execute("SELECT device, start_ns, dur_ns, v FROM pm_samples ORDER BY start_ns").fetchall()
meta = dict(db.execute("SELECT key, value FROM meta"))
spawn_ns, exit_ns = meta["spawn_s"] * 1e9, meta["exit_s"] * 1e9
# the command runs ~1.7 s; sampling starts within ~0.35 s of its CUDA set-up and ends at its exit
assert 800 <= len(rows) <= 2500, len(rows)
first = rows[0][1]
for k, (d, start, dur, blob) in enumerate(rows):
    assert d == 0 and dur == 1000000, (k, d, dur)
    assert start - first == k * 1000000, ("not back to back", k, start - first)
    v = struct.unpack("<%df" % len(wanted), blob)
    # the fake's k counts from its start; the first decoded sample is its sample 0
    assert v == tuple(float((p + 1) * 1000 + k % 1000) for p in range(len(wanted))), (k, v)
assert spawn_ns <= first and rows[-1][1] + rows[-1][2] <= exit_ns, (spawn_ns, first, rows[-1][1], exit_ns)
open("n", "w").write(str(len(rows)))
PY
N=$(cat n 2>/dev/null || echo 0)
python3 - a.json "$N" <<'PY' && ok "the JSON report's activity_counters" || fail "JSON activity_counters: $(cat a.json | head -c 600)"
import json, sys
dev = json.load(open(sys.argv[1]))["devices"][0]
a = dev["activity_counters"]
n = int(sys.argv[2])
assert a["recorded"] is True and a["samples"] == n and a["interval_ms"] == 1 and a["reason"] is None, a
assert a["line"].startswith(f"{n} samples every 1 ms (PM sampling: sm__cycles_active.avg, gpc__cycles_elapsed.max, "), a
assert a["refused"] == "sm__inst_executed.avg.per_cycle_active", a
# the decoding's cost is said (the fake's is near 0), no overflow
assert a["busy_s"] >= 0 and 0 <= a["busy_pct_of_one_core"] < 100 and a["overflows"] == 0, a
assert "% of one core" in a["line"] and "overflowed" not in a["line"], a
assert a["note"].startswith("PM sampling raises the GPU's power between kernels while it runs"), a
k = {x["name"]: x for x in dev["names"]}
assert k["spin(float*, int)"]["launches"] == 3, k
other = json.load(open(sys.argv[1]))["devices"][1]["activity_counters"]
assert other["recorded"] is False and other["samples"] == 0, other
assert other["line"] == "not recorded (the program made no CUDA context on this GPU, or its injection library sent nothing)", other
PY
"$BIN" report a.sqlite >a.txt 2>err || fail "report a.sqlite: $(cat err)"
grep -q "^activity counters: $N samples every 1 ms (PM sampling: sm__cycles_active.avg, " a.txt &&
    grep -q "^activity counters: note: PM sampling raises the GPU's power between kernels" a.txt &&
    ok "the text report's lines" || fail "report line: $(grep -i activity a.txt)"
"$BIN" export a.sqlite --csv a 2>err || fail "export: $(cat err)"
python3 - a/pm_samples.csv "$N" "$UUID" <<'PY' && ok "export's pm_samples.csv" || fail "pm_samples.csv: $(head -3 a/pm_samples.csv)"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
n = int(sys.argv[2])
assert len(rows) == 5 * n, (len(rows), n)
r = rows[6]  # sample 1, metric 1 (gpc__cycles_elapsed.max)
assert r["device"] == "0" and r["device_uuid"] == sys.argv[3] and r["metric"] == "gpc__cycles_elapsed.max", r
assert float(r["value"]) == 2001 and round((float(r["end_s"]) - float(r["start_s"])) * 1e9) == 1000000, r
PY

# ---- the estimate with them and without (--no-activity-counters): the fake's samples begin ~1.25 s
# into the timeline, its kernels run 0.5-1.6 s: 39 % of the kernels' time is covered, under the half
# the estimator asks of a name (its counters' model is checked in test_estimator_counters): said, and
# every name keeps the readings' path
"$BIN" report --json a.sqlite >c.json 2>err && "$BIN" report --json --no-activity-counters a.sqlite >d.json 2>>err ||
    fail "report --json (--no-activity-counters): $(cat err)"
python3 - c.json d.json <<'PY' && ok "the estimate says why it did not use them, per GPU and per name" || fail "activity_model"
import json, sys
c, d = (json.load(open(p))["devices"][0] for p in sys.argv[1:3])
m = c["estimate"]["activity_model"]
assert m == {"used": False, "why_not": "the samples cover no kernel name for 50 % of its time"}, m
assert all(x["method"] == "readings" for x in c["names"]), c["names"]
assert d["estimate"]["activity_model"] == {"used": False, "why_not": "left out (--no-activity-counters)"}, d["estimate"]
assert all(x["method"] == "readings" for x in d["names"]), d["names"]
PY
grep -q "^activity counters in the estimate: not used (the samples cover no kernel name" a.txt &&
    ok "the text report's line on the estimate" || fail "estimate line: $(grep -i 'in the estimate' a.txt)"

# ---- by default: in windows of 1 s of every 5 s at 0.2 ms (cmd_run.c), their run file rows and
# the estimate's term for PM sampling's own power; with --no-activity-counters (after
# --activity-counters too): none asked for, none recorded, no line
"$BIN" run --json -o e.sqlite -- "$HOST" - gpu >e.json 2>err || fail "run (default): $(cat err)"
python3 - e.sqlite e.json <<'PY' && ok "default: windows of 1 s every 5 s at 0.2 ms" || fail "default: $(cat err)"
import json, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
env = dict(db.execute("SELECT name, value FROM environment"))
assert env.get("TW_PM_WINDOWS") == "1,5" and env.get("TW_PM_INTERVAL_MS") == "0.2", env
assert db.execute("SELECT value FROM meta WHERE key = 'activity_counters_ms'").fetchone()[0] == 0.2
assert db.execute("SELECT interval_ns FROM pm_devices WHERE device = 0").fetchone()[0] == 200000
w = db.execute("SELECT start_ns, end_ns FROM pm_windows WHERE device = 0").fetchall()
assert len(w) >= 1, w
assert db.execute("SELECT COUNT(*) FROM pm_samples WHERE device = 0").fetchone()[0] > 1000
dev = json.load(open(sys.argv[2]))["devices"][0]
assert dev["activity_counters"]["recorded"] is True, dev["activity_counters"]
assert dev["estimate"]["activity_model"]["windows"] >= 1, dev["estimate"]["activity_model"]
assert {x["name"]: x for x in dev["names"]}["spin(float*, int)"]["launches"] == 3
PY
rm -f e.sqlite
"$BIN" run --json --activity-counters --no-activity-counters -o e.sqlite -- "$HOST" - gpu >e.json 2>err ||
    fail "run (--no-activity-counters): $(cat err)"
python3 - e.sqlite e.json <<'PY' && ok "--no-activity-counters: none recorded, none asked for" || fail "none: $(cat err)"
import json, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
# the pm tables are made by the first pm record: none here
tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
assert not {"pm_samples", "pm_devices", "pm_windows"} & tables, tables
assert db.execute("SELECT value FROM meta WHERE key = 'activity_counters_ms'").fetchone() is None
assert db.execute("SELECT value FROM environment WHERE name = 'TW_PM_INTERVAL_MS'").fetchone() is None
dev = json.load(open(sys.argv[2]))["devices"][0]
assert "activity_counters" not in dev, dev.keys()
assert {x["name"]: x for x in dev["names"]}["spin(float*, int)"]["launches"] == 3
PY
rm -f e.sqlite

# ---- sampling in windows (--activity-windows; here 0.2 s of every 0.5 s, the program being short): a pm_window row per window, each sample inside one, the windows
# apart by the period; the estimate's term for PM sampling's own power, near 0 W as the fake NVML's
# power does not rise with it, and its text line; a bad --activity-windows refused
"$BIN" run --json --activity-windows 0.2,0.5 -o w.sqlite -- "$HOST" - gpu >w.json 2>err ||
    fail "run --activity-windows: $(cat err)"
python3 - w.sqlite w.json <<'PY' && ok "windows: recorded, samples inside them, the estimate's term" || fail "windows: $(cat err)"
import json, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
w = db.execute("SELECT device, start_ns, end_ns FROM pm_windows ORDER BY start_ns").fetchall()
assert 2 <= len(w) <= 4 and all(d == 0 and b > a for d, a, b in w), w
for (_, a0, b0), (_, a1, b1) in zip(w, w[1:]):
    assert b0 < a1 and abs((a1 - a0) - 5e8) <= 2.6e8, ("windows every 0.5 s (checked every 0.25 s)", w)
assert all(abs((b - a) - 2e8) <= 2.6e8 for _, a, b in w[:-1]), ("0.2 s each, give or take a look", w)
env = dict(db.execute("SELECT name, value FROM environment"))
assert env.get("TW_PM_WINDOWS") == "0.2,0.5" and env.get("TW_PM_INTERVAL_MS") == "0.2", env
n = 0
for s, d in db.execute("SELECT start_ns, dur_ns FROM pm_samples"):
    assert any(a <= s and s + d <= b for _, a, b in w), ("a sample outside every window", s, w)
    n += 1
assert n > 100, n
m = json.load(open(sys.argv[2]))["devices"][0]["estimate"]["activity_model"]
assert m["windows"] >= 1 and 0 < m["window_share"] < 1 and m["window_s"] > 0, m
assert abs(m["pm_power_w"]) <= max(5.0, 3 * m["pm_power_sd_w"]), m
assert abs(m["pm_energy_j"] - m["pm_power_w"] * m["window_s"]) <= 1e-6 * max(1, abs(m["pm_energy_j"])), m
# the samples' time over the windows', from the run file: the report's share
got = sum(d for (d,) in db.execute("SELECT dur_ns FROM pm_samples")) * 1e-9
on = sum((b - a) * 1e-9 for _, a, b in w)
assert 0.5 < m["window_sampled_share"] <= 1.0 and abs(m["window_sampled_share"] - got / on) < 0.05, (m, got, on)
PY
"$BIN" report w.sqlite >w.txt 2>err && grep -q "^PM sampling's own power: [+-][0-9.]* +- [0-9.]* W in its [0-9]* windows" w.txt &&
    ok "windows: the text report's line" || fail "windows line: $(grep -i 'PM sampling' w.txt) $(cat err)"
"$BIN" run --activity-windows 2,1 -o x.sqlite -- true >out 2>err
[ $? = 2 ] && grep -q "activity-windows '2,1': ON,EVERY in seconds" err && ok "a bad --activity-windows refused" ||
    fail "bad --activity-windows: $(cat err)"
# --activity-counters=MS with --activity-windows: that interval inside the windows; TW_PM_METRICS: the
# metrics asked for (a study's list), in its order
TW_PM_METRICS="sm__cycles_active.avg, gpc__cycles_elapsed.max,sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed" \
    "$BIN" run --json --activity-counters 0.5 --activity-windows 0.2,0.5 -o wi.sqlite -- "$HOST" - gpu >wi.json 2>err ||
    fail "run --activity-counters 0.5 --activity-windows: $(cat err)"
python3 - wi.sqlite <<'PY' && ok "windows at 0.5 ms with the metrics asked for" || fail "windows at 0.5 ms: $(cat err)"
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
dev = db.execute("SELECT interval_ns, metrics FROM pm_devices").fetchall()
want = "sm__cycles_active.avg,gpc__cycles_elapsed.max,sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed"
assert dev == [(500000, want)], dev
w = db.execute("SELECT start_ns, end_ns FROM pm_windows").fetchall()
assert len(w) >= 1, w
iv = [d for (d,) in db.execute("SELECT dur_ns FROM pm_samples")]
assert len(iv) > 200 and sorted(iv)[len(iv) // 2] == 500000, (len(iv), sorted(iv)[len(iv) // 2] if iv else None)
PY

# ---- windows only where the GPU works (--activity-windows ON,EVERY,busy): a program that idles 3 s after
# its CUDA set-up, then runs ticks for 1.5 s. Windows of 0.3 s every 1 s: after the first (at the set-up) the
# next falls due during the idle stretch and waits for the ticks (their records arrive within ~0.1 s, a look
# every 0.25 s); without busy, two windows would begin in the idle stretch
"$BIN" run --json --activity-counters 0.5 --activity-windows 0.3,1,busy -o wb.sqlite -- "$HOST" - burst 3 1.5 \
    >wb.json 2>err || fail "run --activity-windows 0.3,1,busy: $(cat err)"
python3 - wb.sqlite <<'PY' && ok "busy windows: none in the idle stretch, one on the GPU's work" || fail "busy windows: $(cat err)"
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
w = db.execute("SELECT start_ns, end_ns FROM pm_windows ORDER BY start_ns").fetchall()
k = db.execute("SELECT min(start_ns), max(start_ns + duration_ns) FROM activities").fetchone()
assert k[0] is not None and k[1] - k[0] > 1.2e9, k
assert len(w) >= 2 and w[0][0] < k[0] - 2e9, ("the first window at the set-up, before the idle stretch", w, k)
idle = [x for x in w[1:] if x[0] < k[0] - 0.05e9]
assert not idle, ("a window began while the GPU idled", idle, k)
assert w[1][0] - k[0] < 0.6e9, ("the window waiting for the work began late", w[1], k)
assert any(a < k[1] and b > k[0] for a, b in w[1:]), ("no window on the GPU's work", w, k)
PY
"$BIN" run --activity-windows 1,5,bsy -o x.sqlite -- true >out 2>err
[ $? = 2 ] && grep -q "ON,EVERY,busy" err && ok "a bad busy spelling refused" || fail "bad busy: $(cat err)"

# ---- windows where decoding is slower than sampling (FAKE_CUPTI_PM=slow: twice the sampled time, as
# the H100's at 20-50 us with the per-SM pipe metrics): sampling still stops at each window's end (the
# window, enabled, lasts until what was sampled is decoded: CUPTI decodes only while enabled)
FAKE_CUPTI_PM=slow "$BIN" run --json --activity-counters 0.5 --activity-windows 0.2,0.8 -o ws.sqlite -- "$HOST" - stream 3 \
    >ws.json 2>err || fail "run with slow decoding: $(cat err)"
python3 - ws.sqlite <<'PY' && ok "slow decoding: sampling stops at each window's end" || fail "slow decoding: $(cat err)"
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
w = db.execute("SELECT start_ns, end_ns FROM pm_windows ORDER BY start_ns").fetchall()
assert len(w) >= 2, ("the windows went on: sampling never stopped", w)
spans = {}
for s, d in db.execute("SELECT start_ns, dur_ns FROM pm_samples"):
    i = [k for k, (a, b) in enumerate(w) if a <= s and s + d <= b]
    assert i, ("a sample outside every window", s, w)
    lo, hi = spans.get(i[0], (s, s + d))
    spans[i[0]] = (min(lo, s), max(hi, s + d))
assert len(spans) >= 2 and sum(1 for lo, hi in spans.values() if hi - lo > 0.1e9) >= 2, spans
# sampled for 0.2 s, at most one look (2 x 250 ms) and the stop's 0.25 s of decoding more; the window
# itself also holds the decoding after the stop
assert all(hi - lo <= 0.2e9 + 0.55e9 + 0.3e9 for lo, hi in spans.values()), ("sampling went on past its window", spans, w)
PY
python3 - ws.json <<'PY' && ok "slow decoding: the report says how much of the windows was sampled" || fail "slow decoding's report: $(cat err)"
import json, sys
d = json.load(open(sys.argv[1]))["devices"][0]
m = d["estimate"]["activity_model"]
print("window_sampled_share", m["window_sampled_share"], file=sys.stderr)
assert 0 < m["window_sampled_share"] < 1, m
low = m["window_sampled_share"] < 0.4
said = any("of PM sampling's windows: samples were lost" in w for w in d["estimate"].get("warnings", []))
assert said == low, (m["window_sampled_share"], d["estimate"].get("warnings"))
PY

# ---- unusable samples (an infinite rate, as an H100 once gave ~0): left out and counted, the rest recorded
FAKE_CUPTI_PM=inf "$BIN" run --json --activity-counters -o c.sqlite -- "$HOST" - gpu >c.json 2>err ||
    fail "run with unusable samples: $(cat err)"
python3 - c.sqlite <<'PY' && ok "unusable samples left out, those after them and the end recorded" || fail "unusable: $(cat err)"
import math, sqlite3, struct, sys
db = sqlite3.connect(sys.argv[1])
n = len(db.execute("SELECT metrics FROM pm_devices WHERE device = 0").fetchone()[0].split(","))
rows = db.execute("SELECT start_ns, v FROM pm_samples WHERE device = 0 ORDER BY start_ns").fetchall()
assert len(rows) >= 500, len(rows)
assert all(math.isfinite(x) for _, v in rows for x in struct.unpack("<%df" % n, v))
# the fake's sample k is k ms after its first: every 100th, from the 50th, is missing, the rest are there
first = rows[0][0]
ks = {(t - first) // 1000000 for t, _ in rows}
last = max(ks)
assert last >= 150, last
assert ks == {k for k in range(last + 1) if k % 100 != 50}, sorted(set(range(last + 1)) - ks)[:5]
busy = db.execute("SELECT busy_s FROM pm_devices WHERE device = 0").fetchone()[0]
assert busy is not None, "no pm_end: sampling was not stopped, or its record not read"
PY
grep -qE "PM sampling on CUDA device 0: [0-9]+ samples, 0 overflows, [1-9][0-9]* samples not evaluated \(0 with no span, [1-9][0-9]* with a value not finite; the first: lts__t_sectors.sum = inf " err &&
    ok "the injection library counts them on stderr" || fail "unusable samples not said: $(cat err)"

# ---- samples with no span (one stale timestamp as start and end, as the H100 gave those after a decode
# that filled the counter data image): left out, counted, the first one's why said
FAKE_CUPTI_PM=stale "$BIN" run --json --activity-counters -o st.sqlite -- "$HOST" - gpu >st.json 2>err ||
    fail "run with samples with no span: $(cat err)"
python3 - st.sqlite <<'PY' && ok "samples with no span left out, the others recorded" || fail "no span: $(cat err)"
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
rows = db.execute("SELECT start_ns, dur_ns FROM pm_samples WHERE device = 0 ORDER BY start_ns").fetchall()
assert len(rows) >= 150, len(rows)
assert all(d > 0 for _, d in rows)
# the fake's sample k spans [k, k + 1] ms after its first; those with k % 100 in 40..59 have no span
first = rows[0][0]
ks = {(t - first) // 1000000 for t, _ in rows}
last = max(ks)
assert last >= 60, last
assert ks == {k for k in range(last + 1) if not 40 <= k % 100 < 60}, sorted(ks ^ {k for k in range(last + 1) if not 40 <= k % 100 < 60})[:5]
PY
grep -qE "PM sampling on CUDA device 0: [0-9]+ samples, 0 overflows, ([1-9][0-9]*) samples not evaluated \(\1 with no span, 0 with a value not finite; the first: no span \(([0-9]+) \.\. \2 ns\)\)" err &&
    ok "the injection library says how many had no span, and the first" || fail "no span not said: $(cat err)"

# ---- decoding before the counter data image fills (the H100 gave the samples after a decode that filled it
# no span: FAKE_CUPTI_PM=full-stale): at 0.1 ms throughout, none is lost
FAKE_CUPTI_PM=full-stale "$BIN" run --json --activity-counters 0.1 -o fs.sqlite -- "$HOST" - gpu >fs.json 2>err ||
    fail "run at 0.1 ms: $(cat err)"
python3 - fs.sqlite <<'PY' && ok "at 0.1 ms the image never fills: every sample kept" || fail "image full: $(cat err)"
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
rows = db.execute("SELECT start_ns FROM pm_samples WHERE device = 0 ORDER BY start_ns").fetchall()
assert len(rows) >= 3000, len(rows)  # 0.3 s or more: past the first decodes
first = rows[0][0]
ks = {(t - first) // 100000 for (t,) in rows}
assert ks == set(range(max(ks) + 1)), sorted(set(range(max(ks) + 1)) - ks)[:5]
PY
grep -q "samples not evaluated" err && fail "samples lost at 0.1 ms: $(cat err)" || ok "none said to be lost"

# ---- an overflow (the H200's decode answered CUPTI_ERROR_OUT_OF_MEMORY from its overflow to the run's end,
# no sample after it: FAKE_CUPTI_PM=overflow, the first object from its 300th sample on): sampling starts
# afresh, the run's end is sampled, the overflow counted once and said
FAKE_CUPTI_PM=overflow "$BIN" run --json --activity-counters -o ov.sqlite -- "$HOST" - gpu >ov.json 2>err ||
    fail "run with an overflow: $(cat err)"
python3 - ov.sqlite ov.json <<'PY' && ok "after an overflow sampling starts afresh: the run's end is sampled" || fail "overflow: $(cat err)"
import json, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
rows = db.execute("SELECT start_ns, dur_ns FROM pm_samples WHERE device = 0 ORDER BY start_ns").fetchall()
meta = dict(db.execute("SELECT key, value FROM meta"))
# two objects' samples, each back to back: one gap between them (the fake's first object lost its 300th on)
gaps = [b[0] - (a[0] + a[1]) for a, b in zip(rows, rows[1:]) if b[0] != a[0] + a[1]]
assert len(gaps) == 1 and gaps[0] > 0, gaps[:5]
first = [r for r in rows if r[0] < rows[0][0] + 300 * 1000000]
assert 200 <= len(first) <= 300, len(first)
# the run's last 0.6 s is sampled (a look every 0.25 s, and the stop's decoding): without the restart the
# samples ended ~0.3 s after sampling began, a second before the program's exit
last_end = rows[-1][0] + rows[-1][1]
assert meta["exit_s"] * 1e9 - last_end < 0.6e9, (meta["exit_s"] * 1e9 - last_end) / 1e9
a = json.load(open(sys.argv[2]))["devices"][0]["activity_counters"]
assert a["overflows"] == 1 and a["samples"] == len(rows), a
PY
grep -q "PM sampling on CUDA device 0: the hardware buffer overflowed: samples were lost; sampling starts afresh" err &&
    grep -qE "PM sampling on CUDA device 0: [0-9]+ samples, 1 overflows, .*; sampling started afresh after each overflow" err &&
    ok "the overflow and the restart said" || fail "overflow not said: $(cat err)"

# ---- the fake refuses (profiling reserved to admins): the run goes on, the reason is reported
FAKE_CUPTI_PM=refuse "$BIN" run --json --activity-counters 0.5 -o b.sqlite -- "$HOST" - gpu >b.json 2>err ||
    fail "run with PM sampling refused: $(cat err)"
grep -q "PM sampling on CUDA device 0: not recorded: cuptiPmSamplingGetCounterAvailability" err &&
    ok "the injection library says why on stderr" || fail "no stderr line: $(cat err)"
python3 - b.json <<'PY' && ok "refused: the kernels are reported, and why there are no activity counters" || fail "refused: $(head -c 800 b.json)"
import json, sys
dev = json.load(open(sys.argv[1]))["devices"][0]
a = dev["activity_counters"]
want = "cuptiPmSamplingGetCounterAvailability: CUPTI_ERROR_FAKE (CUPTI error 35)"
assert a["recorded"] is False and a["samples"] == 0 and a["reason"] == want and a["busy_s"] is None, a
assert a["line"] == f"not recorded ({want})", a
assert a["note"] is None, a  # nothing recorded: nothing raised
import sqlite3
db = sqlite3.connect("b.sqlite")
asked = db.execute("SELECT value FROM meta WHERE key = 'activity_counters_ms'").fetchone()
env = db.execute("SELECT value FROM environment WHERE name = 'TW_PM_INTERVAL_MS'").fetchone()
assert asked == (0.5,) and env == ("0.5",), ("the interval given as its own argument", asked, env)

assert {x["name"]: x for x in dev["names"]}["spin(float*, int)"]["launches"] == 3
PY
"$BIN" report b.sqlite >b.txt 2>err || fail "report b.sqlite: $(cat err)"
grep -q "^activity counters: not recorded (cuptiPmSamplingGetCounterAvailability: " b.txt &&
    ok "refused: the text report's line" || fail "refused: $(grep -i activity b.txt)"
exit $status
