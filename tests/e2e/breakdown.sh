#!/usr/bin/env bash
# truewatt breakdown -- CMD against the fake libnvidia-ml (the energy, through
# `truewatt run`) and tests/fakes/fake_ncu.py (the counts: the rows of
# $TW_FAKE_NCU_ROWS, those of the launches --launch-skip/--launch-count pick).
# The program is the python stand-in of run_attrib.sh: "gemm" at 400 W in
# 1.0..1.6 s and "relu" at 250 W in 2.0..2.3 s (active idle 120 W), inside the
# NVTX range "forward" 0.9..2.4 s. Checks:
#   1. --range forward, both launches profiled: total ~ 120*1.5 + 280*0.6 +
#      130*0.3 = 387 J and static ~ 180 J (3 %); each level's energy = its
#      counts x the profile's energy per sector (breakdown.h's assignment,
#      1e-6 relative); rest = dynamic - memory; the parts sum to the total;
#      breakdown.csv agrees with breakdown.json; stdout says "within 1 %";
#   2. counts whose memory energy exceeds the dynamic energy: memory_fits
#      false, "exceeds" on stdout, exit 0;
#   3. --sample 1: ncu asked for one launch (the fake keeps only gemm's rows),
#      the counts scaled by 0.9 s / 0.6 s = 1.5;
#   4. --counts-from the ncu.csv of 1 with --ncu /nonexistent: no ncu run, the
#      parts of 1;
#   5. errors: no --mem-profile or no CMD (2); a profile without "levels", a
#      range the run has not, ncu failing, ncu not found (1, with a message).
#
# usage: breakdown.sh BIN FAKE_LIBNVIDIA_ML
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/run_common.sh" breakdown "$@"
FAKE_NCU=$HERE/../fakes/fake_ncu.py
[ -f "$FAKE_NCU" ] || { echo "SKIP: no fake ncu at $FAKE_NCU"; exit 77; }
T=$(cd "$T" && pwd)
cd "$T" || exit 2
fail() { echo "FAIL: $*"; exit 1; }
unset TW_FAKE_NCU_SPOIL TW_FAKE_NCU_FAIL TW_FAKE_NCU_ROWS

# the fake ncu as an executable of its own (whatever the mode bits of the checkout)
NCU=$T/bin/ncu
mkdir -p "$T/bin" || exit 2
printf '#!/bin/sh\nexec python3 "%s" "$@"\n' "$FAKE_NCU" >"$NCU"
chmod +x "$NCU"

printf 'name,start_s,duration_s,power_w\ngemm,1.0,0.6,400\nrelu,2.0,0.3,250\n' >scenario.csv
export TW_FAKE_NVML_SCENARIO=$T/scenario.csv TW_RUN_EXPORT_T0_TO_FAKE=1
export TW_INJECT_LIBRARY=$T/none.so # no CUDA here: the stand-in writes the timeline
export TW_PROFILE_DIR=$T/profiles   # no sensor profile
mkdir -p "$TW_PROFILE_DIR" || exit 2
# under the fake ncu the stand-in runs too, outside `truewatt run` (which sets both for the measured
# run): no timeline to write, and a t0 2.99 s ago so that it does not wait for t = 3 s
export TW_EVENTS_PATH=/dev/null
t0_now() { python3 -c 'import time; print(time.clock_gettime_ns(time.CLOCK_MONOTONIC) - 2990000000)'; }

# the memory-energy profile (J per 32-byte sector), as `truewatt mem calibrate` writes it
cat >prof.json <<'EOF'
{"gpu": "Fake H100",
 "levels": [{"level": "shared", "energy_per_sector_j": 1e-10}, {"level": "l1", "energy_per_sector_j": 2e-10},
            {"level": "l2", "energy_per_sector_j": 8e-10}, {"level": "dram", "energy_per_sector_j": 3e-9}],
 "stores": [{"level": "l2", "energy_per_sector_j": 1.1e-9}, {"level": "dram", "energy_per_sector_j": 2.8e-9}]}
EOF
printf '{"gpu": "Fake H100", "stores": []}\n' >nolevels.json

# ncu's rows for the two launches (ID 0 gemm, ID 1 relu): every metric of tw_breakdown_metrics, values
# with thousands separators; counts.json keeps the same numbers for the checks
# rows.py FACTOR OUT.csv OUT.json: the counts times FACTOR
cat >rows.py <<'PY'
import csv, json, sys
factor, out, js = float(sys.argv[1]), sys.argv[2], sys.argv[3]
M = ["sm__sass_data_bytes_mem_shared.sum", "sm__sass_data_bytes_mem_shared_op_ld.sum",
     "sm__sass_data_bytes_mem_shared_op_st.sum", "l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_hit.sum",
     "lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum", "lts__t_sectors_srcunit_tex_op_write.sum",
     "lts__t_sectors_srcunit_tex.sum", "lts__t_sectors.sum", "dram__sectors_read.sum", "dram__sectors_write.sum",
     "gpu__time_duration.sum"]
launches = [
    ("0", "gemm", [320e9, 192e9, 64e9, 5e9, 10e9, 2e9, 20e9, 22e9, 8e9, 1.5e9]),
    ("1", "relu", [32e9, 32e9, 0, 1e9, 2e9, 3e9, 9e9, 9.5e9, 4e9, 2.5e9]),
]
times_ns = {"gemm": 600e6, "relu": 300e6}
header = ["ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Context", "Stream", "Block Size",
          "Grid Size", "Device", "CC", "Section Name", "Metric Name", "Metric Unit", "Metric Value"]
counts = {}
with open(out, "w", newline="") as f:
    w = csv.writer(f, quoting=csv.QUOTE_ALL, lineterminator="\n")
    w.writerow(header)
    for lid, name, vals in launches:
        vals = [v * factor for v in vals] + [times_ns[name]]
        counts[name] = dict(zip(M, vals))
        for m, v in zip(M, vals):
            unit = "nsecond" if m.startswith("gpu__time") else ("byte" if "bytes" in m else "sector")
            w.writerow([lid, "4242", "python3", "127.0.0.1", name, "1", "7", "(256, 1, 1)", "(1024, 1, 1)", "0",
                        "9.0", "Command line profiler metrics", m, unit, f"{int(round(v)):,}"])
json.dump(counts, open(js, "w"))
PY
python3 rows.py 1 rows.csv counts.json || exit 2
python3 rows.py 20 big.csv big.json || exit 2 # DRAM reads alone 20 x 12e9 x 3 nJ = 720 J > ~207 J dynamic
grep -q '"64,000,000,000"' rows.csv || fail "the rows file has no thousands separators"

# bd NAME ARGS...: truewatt breakdown ARGS, stdout in NAME.out, stderr in NAME.err; rc in $rc
bd() {
    local name=$1
    shift
    TW_T0_MONO_NS=$(t0_now) "$BIN" breakdown "$@" >"$name.out" 2>"$name.err"
    rc=$?
}
APP=(python3 "$HERE/run_fake_app.py" kernels)

# check.py BREAKDOWN_DIR COUNTS.json LAUNCHES SCALE FITS [PARTS_TO_MATCH.json]: the expected values from
# the known inputs (the scenario, the counts, the profile)
cat >check.py <<'PY'
import csv, json, math, sys
out, counts_path, launches, scale, fits = sys.argv[1], sys.argv[2], sys.argv[3].split(","), float(sys.argv[4]), sys.argv[5] == "1"
other = sys.argv[6] if len(sys.argv) > 6 else None

def reject(name):
    raise ValueError("not JSON: " + name)

b = json.load(open(f"{out}/breakdown.json"), parse_constant=reject)
counts = json.load(open(counts_path))
c = {m: sum(counts[k][m] for k in launches) * scale for m in counts["gemm"]}
eps = {"shared": 1e-10, "l1": 2e-10, "l2": 8e-10, "dram": 3e-9}
st = {"shared": eps["shared"], "l2": 1.1e-9, "dram": 2.8e-9}  # shared: no store calibration, the load's
sh_all, sh_ld, sh_st = (c["sm__sass_data_bytes_mem_shared" + s + ".sum"] for s in ("", "_op_ld", "_op_st"))
want = {
    "shared": (sh_ld + max(0.0, sh_all - sh_ld - sh_st)) / 32 * eps["shared"] + sh_st / 32 * st["shared"],
    "l1": c["l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_hit.sum"] * eps["l1"],
    "l2": c["lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum"] * eps["l2"]
          + c["lts__t_sectors_srcunit_tex_op_write.sum"] * st["l2"],
    "dram": c["dram__sectors_read.sum"] * eps["dram"] + c["dram__sectors_write.sum"] * (st["dram"] - st["l2"]),
}
want_sectors = {
    "shared": sh_all / 32,
    "l1": c["l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_hit.sum"],
    "l2": c["lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum"] + c["lts__t_sectors_srcunit_tex_op_write.sum"],
    "dram": c["dram__sectors_read.sum"] + c["dram__sectors_write.sum"],
}
ok = True
def check(cond, msg):
    global ok
    if not cond:
        print("FAIL:", msg)
        ok = False

p = b["parts_j"]
total, static = b["total_j"], p["static"]
want_total, want_static = 120 * 1.5 + 280 * 0.6 + 130 * 0.3, 120 * 1.5
print(f"total {total:.3f} J (expected {want_total:.3f}), static {static:.3f} J (expected {want_static:.3f})")
check(abs(total / want_total - 1) < 0.03, f"total_j {total} not within 3 % of {want_total}")
check(abs(static / want_static - 1) < 0.03, f"static {static} not within 3 % of {want_static}")
check(abs(b["time_s"] - 1.5) < 1e-6, f"time_s {b['time_s']}, expected the range's 1.5 s")
mem = 0
for lv in ("shared", "l1", "l2", "dram"):
    mem += want[lv]
    print(f"{lv}: {p[lv]:.6g} J (expected {want[lv]:.6g}), {b['sectors'][lv]:.6g} sectors")
    check(abs(p[lv] / want[lv] - 1) < 1e-6, f"{lv}: {p[lv]} J, expected counts x eps = {want[lv]} J")
    check(abs(b["sectors"][lv] / want_sectors[lv] - 1) < 1e-6, f"{lv}: {b['sectors'][lv]} sectors, expected {want_sectors[lv]}")
check(abs(b["memory_j"] / mem - 1) < 1e-6, f"memory_j {b['memory_j']}, expected {mem}")
dynamic = total - static
# JSON numbers carry 10 significant digits: sums of them agree to ~1e-9 of the largest term
tol = lambda *v: 1e-8 * max(abs(x) for x in v)
check(abs(p["rest"] - (dynamic - b["memory_j"])) < tol(total, b["memory_j"]),
      f"rest {p['rest']} != dynamic {dynamic} - memory {b['memory_j']}")
check(b["memory_fits"] is fits, f"memory_fits {b['memory_fits']}, expected {fits} (memory {mem:.3f} J, dynamic {dynamic:.3f} J)")
if fits:
    check(abs(b["sum_diff_pct"]) < 1e-6, f"sum_diff_pct {b['sum_diff_pct']}, expected 0")
    check(abs(b["sum_j"] - total) < tol(total), f"sum_j {b['sum_j']} != total {total}")
else:
    check(p["rest"] < 0 and b["sum_diff_pct"] > 0, f"rest {p['rest']}, sum_diff_pct {b['sum_diff_pct']}: expected < 0, > 0")
    check(abs(b["sum_j"] - (static + b["memory_j"])) < tol(static, b["memory_j"]), f"sum_j {b['sum_j']}: expected static + memory")
check(b["profiled_launches"] == len(launches), f"profiled_launches {b['profiled_launches']}, expected {len(launches)}")
check(b["span_launches"] == 2, f"span_launches {b['span_launches']}, expected 2")
check(abs(b["count_scale"] - scale) < 1e-6, f"count_scale {b['count_scale']}, expected {scale}")
check(b["gpu"] == "Fake H100", f"gpu {b['gpu']}")
# the unassigned L2 sectors' note: (lts__t_sectors - srcunit_tex) / lts__t_sectors
un = 100 * (c["lts__t_sectors.sum"] - c["lts__t_sectors_srcunit_tex.sum"]) / c["lts__t_sectors.sum"]
check(b["note"] and f"{un:.1f} %" in b["note"], f"note {b['note']!r}, expected {un:.1f} % unassigned")

# breakdown.csv: a comment line, the header, one row; the same numbers (to its 6 digits)
lines = [l for l in open(f"{out}/breakdown.csv") if not l.startswith("#")]
rows = list(csv.DictReader(lines))
check(len(rows) == 1, f"breakdown.csv has {len(rows)} rows, expected 1")
r = rows[0]
for col, v in (("total_j", total), ("static_j", static), ("shared_j", p["shared"]), ("l1_j", p["l1"]),
               ("l2_j", p["l2"]), ("dram_j", p["dram"]), ("rest_j", p["rest"]), ("memory_j", b["memory_j"]),
               ("count_scale", scale)):
    check(abs(float(r[col]) - v) <= 1e-5 * abs(v) + 1e-12, f"breakdown.csv {col} = {r[col]}, breakdown.json {v}")
check(r["memory_fits"] == ("1" if fits else "0"), f"breakdown.csv memory_fits = {r['memory_fits']}")
check(r["profiled_launches"] == str(len(launches)) and r["span_launches"] == "2",
      f"breakdown.csv launches {r['profiled_launches']}/{r['span_launches']}")

if other:  # the same counts as another breakdown: the same memory parts, the energy within 3 %
    o = json.load(open(other), parse_constant=reject)
    for lv in ("shared", "l1", "l2", "dram"):
        check(abs(p[lv] / o["parts_j"][lv] - 1) < 1e-9, f"{lv}: {p[lv]} J, the earlier run's {o['parts_j'][lv]} J")
    check(abs(total / o["total_j"] - 1) < 0.03, f"total {total} J, the earlier run's {o['total_j']} J")
sys.exit(0 if ok else 1)
PY

# ---------------------------------------------------------------- 1. the range, both launches
export TW_FAKE_NCU_ROWS=$T/rows.csv
bd c1 --mem-profile prof.json --ncu "$NCU" --range forward --out o1 -- "${APP[@]}"
[ $rc -eq 0 ] || { cat c1.out c1.err; fail "1: breakdown --range forward exited with $rc, expected 0"; }
for f in breakdown.csv breakdown.json breakdown.dat breakdown.gp ncu.csv run.json run.events.csv; do
    [ -s "o1/$f" ] || fail "1: no o1/$f"
done
python3 check.py o1 counts.json gemm,relu 1 1 || { cat c1.out; fail "1: the breakdown's values (above)"; }
grep -q 'within 1 %' c1.out || { cat c1.out; fail "1: stdout does not say 'within 1 %'"; }
grep -q 'ncu profiled 2 of the span.s 2 kernel launches$' c1.out || { cat c1.out; fail "1: stdout lacks 'ncu profiled 2 of 2'"; }
grep -q 'truewatt breakdown: warning' c1.err && { cat c1.err; fail "1: unexpected warning from breakdown"; }
echo "breakdown: 1. --range forward: the parts as expected"

# ---------------------------------------------------------------- 2. memory above the dynamic energy
TW_FAKE_NCU_ROWS=$T/big.csv bd c2 --mem-profile prof.json --ncu "$NCU" --range forward --out o2 -- "${APP[@]}"
[ $rc -eq 0 ] || { cat c2.out c2.err; fail "2: breakdown with large counts exited with $rc, expected 0"; }
python3 check.py o2 big.json gemm,relu 1 0 || { cat c2.out; fail "2: the breakdown's values (above)"; }
grep -q 'exceeds' c2.out || { cat c2.out; fail "2: stdout does not say that memory 'exceeds' the dynamic energy"; }
echo "breakdown: 2. memory above the dynamic energy: memory_fits false, 'exceeds'"

# ---------------------------------------------------------------- 3. --sample 1
bd c3 --mem-profile prof.json --ncu "$NCU" --range forward --sample 1 --out o3 -- "${APP[@]}"
[ $rc -eq 0 ] || { cat c3.out c3.err; fail "3: breakdown --sample 1 exited with $rc, expected 0"; }
python3 - o3/ncu.csv <<'PY' || fail "3: the fake ncu did not keep only launch 0 (--launch-count 1)"
import sys
ids = {l.split(",")[0] for l in open(sys.argv[1]) if l.startswith('"') and not l.startswith('"ID"')}
print("3: launches in ncu.csv:", sorted(ids))
sys.exit(0 if ids == {'"0"'} else 1)
PY
python3 check.py o3 counts.json gemm 1.5 1 || { cat c3.out; fail "3: the sampled breakdown's values (above)"; }
grep -q 'ncu profiled 1 of the span.s 2 kernel launches; scaled by 1.5 ' c3.out ||
    { cat c3.out; fail "3: stdout does not say 1 of 2 launches scaled by 1.5"; }
echo "breakdown: 3. --sample 1: one launch profiled, its counts scaled by 1.5"

# ---------------------------------------------------------------- 4. --counts-from
bd c4 --mem-profile prof.json --ncu /nonexistent --counts-from o1/ncu.csv --range forward --out o4 -- "${APP[@]}"
[ $rc -eq 0 ] || { cat c4.out c4.err; fail "4: breakdown --counts-from exited with $rc, expected 0"; }
grep -q 'counts from o1/ncu.csv (no ncu run)' c4.err || { cat c4.err; fail "4: stderr does not say the counts' source"; }
[ ! -e o4/ncu.csv ] || fail "4: an ncu.csv was written though no ncu ran"
python3 check.py o4 counts.json gemm,relu 1 1 o1/breakdown.json || { cat c4.out; fail "4: the breakdown's values (above)"; }
echo "breakdown: 4. --counts-from: no ncu, the parts of 1"

# ---------------------------------------------------------------- 5. errors
bd e1 --ncu "$NCU" --out e1 -- "${APP[@]}"
[ $rc -eq 2 ] || { cat e1.err; fail "5: no --mem-profile exited with $rc, expected 2"; }
grep -q -- '--mem-profile' e1.err || fail "5: no --mem-profile: the message does not name it: $(cat e1.err)"
bd e2 --mem-profile prof.json --ncu "$NCU" --out e2
[ $rc -eq 2 ] || { cat e2.err; fail "5: no CMD exited with $rc, expected 2"; }
bd e3 --mem-profile nolevels.json --ncu "$NCU" --out e3 -- "${APP[@]}"
[ $rc -eq 1 ] || { cat e3.err; fail "5: a profile without \"levels\" exited with $rc, expected 1"; }
grep -q 'nolevels.json: no "levels"' e3.err || fail "5: no message about the missing \"levels\": $(cat e3.err)"
bd e4 --mem-profile prof.json --ncu "$NCU" --range backward --out e4 -- "${APP[@]}"
[ $rc -eq 1 ] || { cat e4.err; fail "5: --range backward (not in the run) exited with $rc, expected 1"; }
grep -q "'backward'" e4.err || fail "5: the message does not name the range 'backward': $(cat e4.err)"
TW_FAKE_NCU_FAIL=1 bd e5 --mem-profile prof.json --ncu "$NCU" --range forward --out e5 -- "${APP[@]}"
[ $rc -eq 1 ] || { cat e5.err; fail "5: a failing ncu exited with $rc, expected 1"; }
grep -q 'the run under ncu failed' e5.err || fail "5: no message about ncu's failure: $(cat e5.err)"
[ ! -e e5/breakdown.csv ] || fail "5: breakdown.csv written though ncu failed"
bd e6 --mem-profile prof.json --ncu /nonexistent --range forward --out e6 -- "${APP[@]}"
[ $rc -eq 1 ] || { cat e6.err; fail "5: --ncu /nonexistent exited with $rc, expected 1"; }
grep -q "('/nonexistent') not found" e6.err || fail "5: no 'not found' message for --ncu /nonexistent: $(cat e6.err)"
echo "breakdown: 5. errors: exit 2 for usage, 1 with a message otherwise"
