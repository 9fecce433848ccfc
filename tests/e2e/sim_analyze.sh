#!/usr/bin/env bash
# End to end: simulate the K20 sensor over two kernels with known energy, then
# analyse the trace with the CLI, and check that the correction recovers the
# truth while the raw integral does not (the sensor's lag is real).
#
# usage: sim_analyze.sh BIN      (temp files under $TW_TMPDIR, else $TMPDIR or /tmp)
set -u
export LC_ALL=C

BIN=${1:?usage: sim_analyze.sh BIN}
case $BIN in /*) ;; *) BIN=$(pwd)/$BIN ;; esac
command -v python3 >/dev/null || { echo "python3 is needed" >&2; exit 2; }

T=$(mktemp -d "${TW_TMPDIR:-${TMPDIR:-/tmp}}/e2e-sim-analyze.XXXXXX") || exit 2
trap 'rm -rf "$T"' EXIT
T=$(cd "$T" && pwd) || exit 2
cd "$T" || exit 2

fail() {
    echo "FAIL: $*"
    exit 1
}
status=0 # failed checks; the run goes on to report every one

# run CMD...: runs the tool, keeps stdout in $T/last.out, fails on a non-zero exit
run() {
    echo "+ truewatt $*"
    "$BIN" "$@" >"$T/last.out" 2>"$T/last.err"
    local rc=$?
    if [ $rc -ne 0 ]; then
        cat "$T/last.out" "$T/last.err"
        fail "truewatt $1 exited with $rc"
    fi
}

# ---------------------------------------------------------------- K20: two kernels
run sim --profile k20 --kernel k1:1.0:2.0:150 --kernel k2:4.0:0.5:120 --seed 7 -o "$T/trace.csv"
[ -s "$T/trace.csv" ] || fail "sim wrote no trace"
[ -s "$T/trace.events.csv" ] || fail "sim wrote no trace.events.csv beside the trace"

run analyze "$T/trace.csv" --events "$T/trace.events.csv" --json --corrected-out "$T/corr.csv"
cp "$T/last.out" "$T/given_c.json"
run analyze "$T/trace.csv" --events "$T/trace.events.csv" --json --fit-capacitance --corrected-out "$T/corr_fit.csv"
cp "$T/last.out" "$T/fit_c.json"
run analyze "$T/trace.csv" --json --no-corrected-out
cp "$T/last.out" "$T/detected.json"

if python3 - "$T" <<'PY'
import csv, json, math, sys

T = sys.argv[1]
bad = []

def check(ok, what):
    print(("ok    " if ok else "FAIL  ") + what)
    if not ok:
        bad.append(what)

def reject(c):
    raise ValueError("not JSON: " + c)

def load(name):
    with open(f"{T}/{name}") as f:
        return json.load(f, parse_constant=reject)

for name in ("given_c.json", "fit_c.json"):
    d = load(name)
    print(f"{name}: C = {d['capacitance_s']:.6f} s, fitted = {d['capacitance_fitted']}")
    events = {e["name"]: e for e in d["events"]}
    check(sorted(events) == ["k1", "k2"], f"{name}: events are k1, k2 (got {sorted(events)})")
    for e in d["events"]:
        truth, corr = e["true_energy_j"], e["energy_j"]["corrected"]
        ok = truth is not None and corr is not None and truth > 0
        err = 100.0 * (corr / truth - 1.0) if ok else float("nan")
        check(ok and abs(err) <= 2.0,
              f"{name}: {e['name']} corrected {corr} J vs true {truth} J: {err:+.3f}% (limit 2%)")
    k1 = events.get("k1")
    if k1:
        raw, truth = k1["energy_j"]["raw_t1_t2"], k1["true_energy_j"]
        under = 100.0 * (1.0 - raw / truth)
        check(under > 5.0, f"{name}: raw_t1_t2 underestimates k1 by {under:.2f}% (must be > 5%: the lag)")

d = load("fit_c.json")
c = d["capacitance_s"]
check(d["capacitance_fitted"] is True, "fit: capacitance_fitted is true")
check(c is not None and abs(c / 0.84 - 1.0) <= 0.03,
      f"fit: C = {c} s, {100.0 * (c / 0.84 - 1.0):+.3f}% from 0.84 s (limit 3%)")
d = load("given_c.json")
check(d["capacitance_fitted"] is False and abs(d["capacitance_s"] - 0.84) < 1e-12,
      "default: C is the K20's 0.84 s, not fitted")
check(d["corrected_series"] is not None and d["corrected_series"].endswith("corr.csv"),
      f"default: corrected_series names the file ({d['corrected_series']})")

for name in ("corr.csv", "corr_fit.csv"):
    try:
        with open(f"{T}/{name}") as f:
            rows = [r for r in csv.reader(f) if r and not r[0].startswith("#")]
    except OSError as e:
        check(False, f"{name}: readable ({e})")
        continue
    header, data = rows[0], rows[1:]
    check("corrected_power_w" in header, f"{name}: header {header} has corrected_power_w")
    check(len(data) > 100, f"{name}: {len(data)} rows (> 100)")
    if "corrected_power_w" in header and data:
        k = header.index("corrected_power_w")
        vals = [float(r[k]) for r in data if r[k] not in ("", "nan")]
        check(len(vals) > 100 and all(math.isfinite(v) for v in vals),
              f"{name}: corrected_power_w holds {len(vals)} finite numbers")

d = load("detected.json")
regions = [e["name"] for e in d["events"]]
print("detected regions:", [(e["name"], round(e["start_s"], 3), round(e["end_s"], 3)) for e in d["events"]])
check(d["events_detected"] is True, "no --events: events_detected is true")
check(len(regions) >= 2, f"no --events: {len(regions)} regions detected (>= 2)")
check(all(r.startswith("region") for r in regions), "no --events: regions are named region1, region2, ...")

sys.exit(1 if bad else 0)
PY
then :; else echo "FAIL: K20 checks"; status=1; fi

# ---------------------------------------------------------------- H100 profile
run sim --profile h100 --kernel k1:1.0:2.0:300 --seed 7 -o "$T/h100.csv"
if ! head -n 5 "$T/h100.csv" | grep -q '^t_s,.*power_buffer_w'; then
    echo "FAIL: the H100 trace has no power_buffer_w column in its header"
    status=1
fi
run analyze "$T/h100.csv" --events "$T/h100.events.csv" --column power_buffer_w --json --no-corrected-out
if python3 - "$T/last.out" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
ok = d["reading"] == "power_buffer_w" and d["samples_read"] > 10 and len(d["events"]) == 1
e = d["events"][0] if d["events"] else {}
print(f"h100: reading {d['reading']}, {d['samples_read']} samples, "
      f"k1 true {e.get('true_energy_j')} J, corrected {e.get('energy_j', {}).get('corrected')} J")
print(("ok    " if ok else "FAIL  ") + "h100: analyze accepts the trace with --column power_buffer_w")
sys.exit(0 if ok else 1)
PY
then :; else echo "FAIL: H100 checks"; status=1; fi

if [ $status -eq 0 ]; then echo "sim_analyze: all checks passed"; else echo "sim_analyze: FAILED"; fi
exit $status
