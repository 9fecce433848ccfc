#!/usr/bin/env bash
# scripts/activity-model on a handmade calib.csv whose powers are made from known coefficients.
#
# Eight rows, each a kernel's levels of sm, tensor, issue, dram, l2 and its clock; four at 1,980 MHz,
# the others 1,500 to 1,700 (a GEMM the power limiter slowed): the rows' median clock, 1,980 MHz, is
# the reference. Power = 40 sm + 400 tensor + 300 issue + 200 dram + 250 l2, each per-cycle feature
# (all but dram) times the row's clock over 1,980. The clocked fit must give these five and
# "clock_mhz": 1980; --no-clock, which fits the levels as they are, must not (the slowed rows then
# ask for other coefficients); a calib.csv without the clock column gives a model without one; a
# clock of 0 is refused with the file and the column named.
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/script_common.sh" activity_model
python3 -c 'import numpy' 2>/dev/null || { echo "SKIP: numpy is needed"; exit 77; }
script=$here/../../scripts/activity-model

python3 - "$T" <<'PY'
import sys
T = sys.argv[1]
C = {"sm": 40, "tensor": 400, "issue": 300, "dram": 200, "l2": 250}
rows = [  # name, sm, tensor, issue, dram, l2, clock
    ("fma", 1.0, 0.05, 0.88, 0.0, 0.0, 1980), ("stream", 0.96, 0.0, 0.03, 0.79, 0.50, 1980),
    ("l2", 0.95, 0.0, 0.16, 0.0, 0.95, 1980), ("wait", 0.01, 0.0, 0.0, 0.0, 0.0, 1980),
    ("linear", 0.93, 0.75, 0.13, 0.27, 0.88, 1500), ("linear_out", 0.93, 0.86, 0.11, 0.30, 0.68, 1600),
    ("small", 0.73, 0.37, 0.15, 0.0, 0.59, 1700), ("add", 0.98, 0.0, 0.13, 0.91, 0.57, 1980),
]
def power(r):
    lv = dict(zip(("sm", "tensor", "issue", "dram", "l2"), r[1:6]))
    return sum(C[f] * lv[f] * (1.0 if f == "dram" else r[6] / 1980.0) for f in C)
head = "# provenance: command: handmade; date: 2026-11-28T00:00:00Z; gpu: none; driver: none\n"
for name, clock in (("calib.csv", True), ("noclock.csv", False), ("zero.csv", True)):
    with open(f"{T}/{name}", "w") as f:
        f.write(head + "source,name,calls,busy_s,power_w,sm,tensor,issue,dram,l2" + (",clock_mhz" if clock else "") + ",note\n")
        for i, r in enumerate(rows):
            ck = (",0" if name == "zero.csv" and i == 2 else f",{r[6]}") if clock else ""
            f.write(f"mix,{r[0]},100,1.0,{power(r):.6f}," + ",".join(str(x) for x in r[1:6]) + ck + ",\n")
for p in ("p1", "p2", "p3"):
    open(f"{T}/{p}.json", "w").write('{"schema": "truewatt-sensor-profile", "version": 1}\n')
PY

python3 "$script" --write "$T/p1.json" "$T/calib.csv" >"$T/out1.txt" 2>&1 || bad "the clocked fit failed: $(cat "$T/out1.txt")"
python3 "$script" --no-clock --write "$T/p2.json" "$T/calib.csv" >"$T/out2.txt" 2>&1 || bad "--no-clock failed: $(cat "$T/out2.txt")"
# --loo: each row against the model fitted on the seven others; the data are exact, so every row's error is ~0
python3 "$script" --loo "$T/calib.csv" >"$T/loo.txt" 2>&1 || bad "--loo failed: $(cat "$T/loo.txt")"
[ "$(grep -c '^  [a-z0-9_]* ' "$T/loo.txt")" = 8 ] || bad "--loo: not one line per row: $(cat "$T/loo.txt")"
awk '/^  [a-z0-9_]+ +[0-9.]+ +[0-9.]+ +[-+][0-9.]+$/ { e = $4 < 0 ? -$4 : $4; if (e > 0.5) bad = 1 } END { exit bad }' \
  "$T/loo.txt" || bad "--loo: an exact model's row missed by over 0.5 %: $(cat "$T/loo.txt")"
python3 "$script" --write "$T/p3.json" "$T/noclock.csv" >"$T/out3.txt" 2>&1 || bad "no clock column failed: $(cat "$T/out3.txt")"
python3 - "$T" <<'PY' || fail=1
import json, sys
T = sys.argv[1]
want = {"sm": 40, "tensor": 400, "issue": 300, "dram": 200, "l2": 250}
def model(p):
    return next(m for m in json.load(open(f"{T}/{p}.json"))["activity_models"] if len(m["features"]) == 5)
m1, m2, m3 = model("p1"), model("p2"), model("p3")
got = dict(zip(m1["features"], m1["power_w"]))
bad = [f for f in want if abs(got[f] - want[f]) > 0.5]
if bad or m1.get("clock_mhz") != 1980:
    sys.exit(f"FAIL: the clocked fit: {got}, clock {m1.get('clock_mhz')} (want {want}, 1980)")
plain = dict(zip(m2["features"], m2["power_w"]))
if "clock_mhz" in m2 or all(abs(plain[f] - want[f]) <= 5 for f in want):
    sys.exit(f"FAIL: --no-clock: {plain}, clock {m2.get('clock_mhz')}: should differ from {want}, no clock")
if "clock_mhz" in m3:
    sys.exit("FAIL: a calib.csv without clock_mhz gave a model with one")
PY
refused "a clock of 0" "zero.csv: clock_mhz" python3 "$script" "$T/zero.csv"
[ "$fail" = 0 ] && echo "activity_model: ok"
exit "$fail"
