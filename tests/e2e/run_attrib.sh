#!/usr/bin/env bash
# truewatt run, per-kernel energy, against the fake libnvidia-ml: while the
# fake's scenario has "gemm" at 400 W in 1.0..1.6 s and "relu" at 250 W in
# 2.0..2.3 s (active idle 120 W), a python stand-in for the program writes the
# matching timeline. Checks: each kernel's energy above idle within 3 % of
# (P - 120 W) x duration; idle + kernels + other within 2 % of the energy
# counter; --json parses; the Perfetto file parses and has the slices.
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
    '^sampler: .* % of one core' '^power_buffer_w +[0-9]+' '^  perfetto  p2.json'; do
    grep -Eq -- "$pat" r.txt || { cat r.txt; fail "text report lacks /$pat/"; }
done
echo "run_attrib: per-kernel energy, the 2 % check, JSON and Perfetto as expected"
