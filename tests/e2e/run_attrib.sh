#!/usr/bin/env bash
# truewatt run, per-kernel energy, against the fake libnvidia-ml: while the
# fake's scenario has "gemm" at 400 W in 1.0..1.6 s and "relu" at 250 W in
# 2.0..2.3 s (active idle 120 W), a python stand-in for the program writes the
# matching timeline. Checks: each kernel's energy above idle within 3 % of
# (P - 120 W) x duration; idle + kernels + other within 2 % of the energy
# counter; --json parses; the Perfetto file parses and has the slices; the
# report says that no sensor profile applies. Then with a sensor profile
# (truewatt sensor identify on the simulated H100, whose sensor the fake
# serves), given with --profile or found in $TW_PROFILE_DIR by the fake's GPU
# name and driver: the report names the profile's best reading and uses it
# ("profile model"), and kernels shorter than its update period get the
# regression table; analyze finds the profile by the GPU and driver the
# trace's header names; a malformed --profile fails before the command runs.
#
# usage: run_attrib.sh BIN FAKE_LIBNVIDIA_ML
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/run_common.sh" run-attrib "$@"
cd "$T" || exit 2
fail() { echo "FAIL: $*"; exit 1; }

printf 'name,start_s,duration_s,power_w\ngemm,1.0,0.6,400\nrelu,2.0,0.3,250\n' >scenario.csv
export TW_FAKE_NVML_SCENARIO=$T/scenario.csv TW_RUN_EXPORT_T0_TO_FAKE=1
export TW_INJECT_LIBRARY=$T/none.so # no CUDA here: the stand-in writes the timeline
export TW_PROFILE_DIR=$T/profiles   # no profile unless a check puts one there
mkdir -p "$TW_PROFILE_DIR" || exit 2

"$BIN" run --json -o t.csv --events-out ev.csv --perfetto p.json -- python3 "$HERE/run_fake_app.py" kernels \
    >r.json 2>err.txt
rc=$?
[ $rc -eq 0 ] || { cat err.txt; fail "truewatt run exited with $rc"; }
grep -q "sampling nvml" err.txt || fail "no progress line when sampling starts: $(cat err.txt)"
grep -q "report computed" err.txt || fail "no progress line when the report is computed"
grep -q "warning: no injection library at $T/none.so" err.txt || fail "no warning about the missing injection library"

python3 - r.json p.json <<'PY' || fail "checks above"
import collections, json, sys

def reject(name):
    raise ValueError("not JSON: " + name)

d = json.load(open(sys.argv[1]), parse_constant=reject)
assert d["exit_status"] == 0 and d["signal"] is None, d["exit_status"]
assert d["timeline"]["events"] == 4, d["timeline"]
dev = d["devices"][0]
assert dev["energy_source"]["reading"] == "power_buffer_w", dev["energy_source"]
pr = dev["profile"]
assert pr["status"] == "none" and not pr["used"] and pr["reading"] is None, pr
assert "no sensor profile for GPU Fake H100 (driver fake-580.0)" in pr["line"] and "sample buffer" in pr["line"], pr
assert dev["short_kernels"] == [] and dev["short_kernels_fit"] is None, dev["short_kernels"]
k = {x["name"]: x for x in dev["kernels"]}
ok = True
for name, p, dur in (("gemm", 400, 0.6), ("relu", 250, 0.3)):
    want = (p - 120) * dur
    got = k[name]["energy_j"]
    err = 100 * (got / want - 1)
    print(f"{name}: {got:.3f} J above idle, expected {want:.3f} J ({err:+.2f} %)")
    ok &= abs(err) < 3
assert [x["name"] for x in dev["kernels"]] == ["gemm", "relu"], "sorted by energy"
assert abs(dev["idle_w"] - 120) < 2, dev["idle_w"]
c = dev["check"]
print(f"idle + kernels + copies + other = {c['sum_j']:.3f} J, energy counter {c['counter_j']:.3f} J ({c['diff_pct']:+.2f} %)")
ok &= abs(c["diff_pct"]) < 2 and c["ok"]
s = dev["split_j"]
assert abs(s["idle"] + s["kernels"] + s["copies"] - s["sum"]) < 1e-6 * s["sum"]
assert abs(s["idle_level"] + s["other"] - s["idle"]) < 1e-6 * s["sum"]
assert [x["name"] for x in dev["copies"]] == ["memcpy HtoD"]
r = dev["nvtx_ranges"][0]
want = 120 * 1.5 + 280 * 0.6 + 130 * 0.3
print(f"nvtx forward: {r['energy_j']:.3f} J, expected {want:.3f} J")
ok &= abs(r["energy_j"] / want - 1) < 0.03
m = dev["whole_run_energy_j"]
for key in ("energy_counter", "buffer_integral", "trapezoid_power_usage", "trapezoid_power_instant", "mean_instant_x_time"):
    assert m[key] and m[key] > 0, (key, m)
assert "rc_corrected_k20_model" in m
sp = d["sampler"]
assert 0 <= sp["cpu_pct_of_one_core"] < 100 and sp["readings"], sp
print(f"sampler: {sp['cpu_pct_of_one_core']:.2f} % of one core")
assert d["files"]["perfetto"] == "p.json"

p = json.load(open(sys.argv[2]), parse_constant=reject)
ev = p["traceEvents"]
x = [e for e in ev if e["ph"] == "X"]
names = collections.Counter(e["name"] for e in x)
assert names == {"gemm": 1, "relu": 1, "memcpy HtoD": 1, "forward": 1}, names
g = [e for e in x if e["name"] == "gemm"][0]
assert g["pid"] == 0 and g["tid"] == 7 and abs(g["ts"] - 1e6) < 1 and abs(g["dur"] - 6e5) < 1, g
counters = collections.Counter(e["name"] for e in ev if e["ph"] == "C")
assert counters["power_buffer"] > 100 and 0 < counters["power_usage"] < 60, counters
meta = {(e["name"], e.get("tid")): e["args"]["name"] for e in ev if e["ph"] == "M"}
assert meta[("thread_name", 7)] == "stream 7" and meta[("process_name", None)].startswith("GPU 0"), meta
sys.exit(0 if ok else 1)
PY

# the text report, from the same records
"$BIN" run -o t2.csv --events-out ev2.csv --perfetto p2.json -- python3 "$HERE/run_fake_app.py" kernels >r.txt 2>err2.txt ||
    fail "text run: $(cat err2.txt)"
for pat in '^gemm +kernel +1 +0\.600000' '^relu +kernel' '^memcpy HtoD +memcpy' '^forward ' \
    'check: kernels \+ idle = .*\(within 2 %\)' 'energy counter \(difference\)' 'K20 model, not valid on H100' \
    '^sampler: .* % of one core' '^power_buffer_w +[0-9]+' '^  perfetto  p2.json' \
    "^profile: no sensor profile for GPU Fake H100 \(driver fake-580\.0\) in .*; run 'truewatt sensor identify' to make one; using the sample buffer$"; do
    grep -Eq -- "$pat" r.txt || { cat r.txt; fail "text report lacks /$pat/"; }
done
echo "run_attrib: per-kernel energy, the 2 % check, JSON and Perfetto as expected"

# ---------------------------------------------------------------- with a sensor profile
"$BIN" sensor identify --sim h100 --out prof.json >id.txt 2>&1 || fail "sensor identify: $(cat id.txt)"
best=$(sed -n 's/^best for energy: \([^ ]*\) .*/\1/p' id.txt)
[ -n "$best" ] || fail "sensor identify names no best reading: $(cat id.txt)"

# kernels of 2 ms and 5 ms, shorter than any update period, and one of 200 ms
python3 - <<'PY' || exit 2
import random
random.seed(3)
with open("short.csv", "w") as f:
    f.write("name,start_s,duration_s,power_w\n")
    t = 0.8
    for _ in range(40):
        f.write(f"tiny,{t:.6f},0.002,350\n")
        t += 0.011 + 0.02 * random.random()
        f.write(f"small,{t:.6f},0.005,250\n")
        t += 0.013 + 0.02 * random.random()
    f.write("big,2.7,0.2,400\n")
PY
# the stand-in for the program: waits until t = 3 s, writes the scenario's kernels as its timeline
cat >short_app.py <<'PY'
import os, sys, time
rows = [line.split(",") for line in open(sys.argv[1]).read().splitlines()[1:] if line]
left = 3.0 - (time.clock_gettime_ns(time.CLOCK_MONOTONIC) - int(os.environ["TW_T0_MONO_NS"])) * 1e-9
if left > 0:
    time.sleep(left)
with open(os.environ["TW_EVENTS_PATH"], "w") as f:
    f.write("name,start_s,end_s,device,stream,kind\n")
    for name, start, dur, _ in rows:
        f.write(f"{name},{float(start):.9f},{float(start) + float(dur):.9f},0,7,kernel\n")
PY
export TW_FAKE_NVML_SCENARIO=$T/short.csv

"$BIN" run --profile prof.json --json -o t3.csv --events-out ev3.csv --perfetto p3.json -- python3 short_app.py short.csv \
    >r3.json 2>err3.txt || fail "run --profile: $(cat err3.txt)"
python3 - r3.json "$best" <<'PY' || fail "profile checks above"
import json, sys

def reject(name):
    raise ValueError("not JSON: " + name)

d = json.load(open(sys.argv[1]), parse_constant=reject)
best = sys.argv[2]
dev = d["devices"][0]
pr = dev["profile"]
print("profile:", pr["line"])
assert pr["status"] == "model" and pr["used"] and pr["reading"] == best, pr
assert pr["source"] == "sensor profile prof.json (given)" and pr["period_s"] > 0 and pr["coverage"] > 0.9, pr
assert dev["energy_source"] == {"reading": best, "method": "profile model", "intervals": dev["energy_source"]["intervals"]}
k = {x["name"]: x for x in dev["kernels"]}
assert abs(k["big"]["energy_j"] / (280 * 0.2) - 1) < 0.03, k["big"]
assert abs(dev["check"]["diff_pct"]) < 2, dev["check"]
fit = dev["short_kernels_fit"]
assert fit and fit["reading"] == best and fit["windows"] > 50 and fit["lags"] >= 1, fit
short = {x["name"]: x for x in dev["short_kernels"]}
assert set(short) == {"tiny", "small"}, short
ok = True
for name, p, dur in (("tiny", 350, 0.002), ("small", 250, 0.005)):
    x = short[name]
    want = (p - 120) * dur
    got, se = x["energy_per_launch_j"], x["energy_per_launch_se_j"]
    print(f"{name}: {got:.4f} +- {se:.4f} J per launch by regression, expected {want:.4f} J")
    assert x["launches"] == 40 and abs(x["mean_s"] - dur) < 1e-6 and se > 0, x
    ok &= abs(got - want) < 3 * se + 0.1 * want
sys.exit(0 if ok else 1)
PY

# found by the GPU's name and driver in $TW_PROFILE_DIR; the text report
cp prof.json "$TW_PROFILE_DIR/fake-h100_fake-580.0.json"
"$BIN" run -o t4.csv --events-out ev4.csv --perfetto p4.json -- python3 short_app.py short.csv >r4.txt 2>err4.txt ||
    fail "run with a profile in TW_PROFILE_DIR: $(cat err4.txt)"
for pat in "^profile: reading $best \\((rc|boxcar|counter|window), update every [0-9.]+ ms, coverage [0-9]+ %\\) by its model, from sensor profile $TW_PROFILE_DIR/fake-h100_fake-580\\.0\\.json\$" \
    "^energy from $best \\(profile model\\)" "^short kernels \\(regression over [0-9]+ windows of $best, [0-9] lags?\\)" \
    '^tiny +40 +2\.0000 ' '^small +40 +5\.0000 ' '^fit: idle '; do
    grep -Eq -- "$pat" r4.txt || { cat r4.txt; fail "text report lacks /$pat/"; }
done

# analyze finds the same profile by the GPU and driver the trace's header names
"$BIN" analyze t4.csv --events ev4.csv --no-corrected-out >a4.txt 2>erra4.txt || fail "analyze t4.csv: $(cat erra4.txt)"
for pat in "^by the sensor profile: reading $best \\(.*coverage 100 %\\) from sensor profile $TW_PROFILE_DIR/fake-h100_fake-580\\.0\\.json\$" \
    '^big +2\.7000 +2\.9000 +(79|80|81)\.[0-9]+ +(5[5-7])\.[0-9]+ +100$' '^tiny +0\.8000 '; do
    grep -Eq -- "$pat" a4.txt || { cat a4.txt; fail "analyze's report lacks /$pat/"; }
done

# a malformed --profile: a clear error before the command runs
printf '{"schema": "truewatt-sensor-profile", "version": 1, "gpu": \n' >bad.json
"$BIN" run --profile bad.json -o t5.csv -- touch ran >r5.txt 2>err5.txt
rc=$?
[ $rc -eq 1 ] || fail "run --profile bad.json exited with $rc, expected 1"
grep -Eq '^truewatt run: bad\.json:[0-9]+:[0-9]+: ' err5.txt || fail "no error naming bad.json: $(cat err5.txt)"
[ ! -e ran ] && [ ! -e t5.csv ] || fail "the command ran despite the bad profile"
echo "run_attrib: with a sensor profile: its best reading $best by its model, short kernels by regression"
