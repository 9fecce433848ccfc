#!/usr/bin/env bash
# scripts/gpu/attrib_table.py (the tables of scripts/gpu-attrib) on a handmade run folder whose
# numbers are worked out by hand below, not by the script's own formulas.
#
# The made-up GPU: baseline 100 W; pattern "bursts" from 2.0 to 3.0 s with gemm_2ms (+200 W) at
# [2.0, 2.2] and [2.52, 2.72] and wait_1ms (+50 W) at [2.2, 2.5]; quiet stretches [0.5, 2.0] and
# [3.0, 4.5]. The counter is read at 0.05 + 0.1 k s, the instant power at 0.005 + 0.01 k s, the
# sample buffer (steady run only) at 0.001 + 0.02 k s, each sample the mean since the one before,
# read 2 % high: its quiet levels (102 and 112.2 W) must be scaled by its gain on the counter
# (1/1.02, from the counter's readings on its running integral) to the 100 and 110 W below.
#   solo gemm_2ms: 2 x 0.2 s x 200 W = 80 J over 2 launches         -> solo_j 40
#   solo wait_1ms: 0.3 s x 50 W = 15 J, 1 launch                    -> solo_j 15
#   steady gemm_2ms: +200 W over [2, 3], 5 launches; the baseline is 100 W before, 110 W after
#     (the steady run's own trace, from its sample buffer; its instant reading is 10 W low and
#     must not be used). Every counter reading in
#     [0.8, 2.0] puts the counter at 200 J at the start (2 s x 100 W); every reading in [3.3, 4.5]
#     puts it at 200 + 300 + 0.3 x 110 = 533 J at the tail (3.3 s); the baseline over [2, 3.3] is
#     (100 + 110) / 2 x 1.3 = 136.5 J: 533 - 200 - 136.5 = 196.5 J / 5 launches   -> steady_j 39.3
#   the report: gemm_2ms 82 J (sd 2) over 2 launches -> estimate 41, sd 1, error +2.5 %;
#     wait_1ms below resolution (upper 20 J) -> no estimate;
#     counter 500, kernels 94, copies 1, baseline 400 -> conservation (95 + 400) / 500 - 1 = -1 %
#   naive time share (0.1 s counter intervals from 1.95 s): [2.15, 2.25] holds 12.5 J above the
#     baseline and 0.05 s of each kernel: 6.25 J each; [2.45, 2.55] holds 2.5 + 6 = 8.5 J, 0.05 s
#     of wait_1ms and 0.03 s of gemm_2ms: 5.3125 and 3.1875 J. gemm_2ms: 10 + 20 + 6.25 + 3.1875
#     + 20 + 14 = 73.4375 J -> 36.71875 a launch (-8.203125 %); wait_1ms: 6.25 + 5 + 5 + 5.3125 =
#     21.5625 J
#   leave-one-out gemm_2ms (TW_ATTRIB_LOO: ref.bursts, the full pattern again, 95 J above the
#     baseline; loo.bursts.gemm_2ms, mix --without gemm_2ms, wait_1ms alone, 15 J): (95 - 15) / 2 =
#     40 J a launch, the estimate 41 +2.5 % against it; its uncertainty the two runs' 1.1785 J (as
#     solo's, below) in quadrature over 2 launches: 0.8333 J. wait_1ms has no loo run: empty.
#   naive instant (readings every 10 ms, baseline 100 W from the quiet stretch): exact here,
#     40 and 15 J.
#   busy solo gemm_2ms (mix --only gemm_2ms --fill-wait): gemm_2ms as in solo plus the fill (the
#     wait kernel in wait_1ms's place, +2 W over [2.2, 2.5], fill_time_s 0.3): 80.6 J above the
#     baseline; steady wait_1ms: +2 W over [2, 3] in 1000 launches of 1 ms, so the fills draw 2 W:
#     busy_j = (80.6 - 2 x 0.3) / 2 = 40, and the estimate 41 is +2.5 % against it; the steady
#     wait run also gives wait_1ms its steady_j: 2 J / 1000 = 0.002
# The solo run of wait_1ms ran on GPU 1 of two: its report and trace name GPU 1 (gpu1_ columns),
# and GPU 0's counter, first in the trace, must not be read.
# Then: a trace without the counter column and a solo run with other launches are errors that name
# the file.
#
# usage: attrib_table.sh   (temp files under $TW_TMPDIR, else $TMPDIR or /tmp)
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/script_common.sh" attrib_table
script=$here/../../scripts/gpu/attrib_table.py
raw=$T/raw
mkdir -p "$raw"

# the traces: power = base(t) + the kernels running, integrated exactly (piecewise constant)
python3 - "$raw" <<'EOF'
import sys
raw = sys.argv[1]
A, B = [(2.0, 2.2), (2.52, 2.72)], [(2.2, 2.5)]

def trace(path, kernels, after_w=100.0, buffer=False, gpu1=False):
    def p(t):
        w = 100.0 if t < 3.0 else after_w
        return w + sum(dw for s, e, dw in kernels if s <= t < e)
    edges = sorted({0.0, 3.0} | {x for s, e, _ in kernels for x in (s, e)})
    def energy(t):  # exact: the power is constant between edges
        tot, a = 0.0, 0.0
        for b in [x for x in edges if x < t] + [t]:
            tot += p(a) * (b - a)
            a = b
        return tot
    rows = []
    bias = -10.0 if buffer else 0.0  # with a sample buffer, the instant reading is off: unused
    for k in range(450):
        t = 0.005 + 0.01 * k
        rows.append((t, "%.3f,%.6f,%.3f,,,," % (t, p(t) + bias, t)))
    for k in range(45):
        t = 0.05 + 0.1 * k
        rows.append((t, "%.3f,,,%.9f,%.3f,," % (t, energy(t), t)))
    for k in range(225 if buffer else 0):  # each sample the mean power since the one before
        t = 0.001 + 0.02 * k
        t0 = max(0.0, t - 0.02)
        rows.append((t, "%.3f,,,,,%.6f,%.3f" % (t, 1.02 * (energy(t) - energy(t0)) / (t - t0), t)))
    cols = "power_instant_w,power_instant_w_t_s,energy_j,energy_j_t_s,power_buffer_w,power_buffer_w_t_s".split(",")
    if gpu1:  # the program ran on GPU 1; GPU 0's counter, first in the header, reads 7 kJ more a second
        cols = ["gpu1_" + c for c in cols] + ["gpu0_energy_j", "gpu0_energy_j_t_s"]
        rows = [(t, r + (",%.3f,%.3f" % (7000 * t, t) if r.split(",")[3] else ",,")) for t, r in rows]
    with open(path, "w") as f:
        f.write("# handmade\n# t0_mono_ns=0\nt_s," + ",".join(cols) + "\n")
        for _, r in sorted(rows):
            f.write(r + "\n")

trace(raw + "/full.bursts.trace.csv", [(s, e, 200.0) for s, e in A] + [(s, e, 50.0) for s, e in B])
trace(raw + "/solo.bursts.gemm_2ms.trace.csv", [(s, e, 200.0) for s, e in A])
trace(raw + "/solo.bursts.wait_1ms.trace.csv", [(s, e, 50.0) for s, e in B], gpu1=True)
trace(raw + "/steady.gemm_2ms.trace.csv", [(2.0, 3.0, 200.0)], after_w=110.0, buffer=True)
trace(raw + "/busy.bursts.gemm_2ms.trace.csv", [(s, e, 200.0) for s, e in A] + [(2.2, 2.5, 2.0)])
trace(raw + "/steady.wait_1ms.trace.csv", [(2.0, 3.0, 2.0)], buffer=True)
trace(raw + "/ref.bursts.trace.csv", [(s, e, 200.0) for s, e in A] + [(s, e, 50.0) for s, e in B])
trace(raw + "/loo.bursts.gemm_2ms.trace.csv", [(s, e, 50.0) for s, e in B])
# the steps pattern's solo gemm_2ms drew 10 W more than in the full run (210 W): see "steps" below
trace(raw + "/solo-steps-gemm.trace.csv", [(s, e, 210.0) for s, e in A])
EOF

win="quiet_before_start_s=0.5 quiet_before_end_s=2.0 start_s=2.0 end_s=3.0 quiet_after_start_s=3.0 quiet_after_end_s=4.5"
{
  echo "mix: device 0: made up"
  echo "mix.window pattern=bursts only=- seed=1 clock=tw $win"
  echo "mix.kernel name=gemm_2ms launches=2 mean_duration_s=0.2 work=1 target_s=0.002"
  echo "mix.kernel name=wait_1ms launches=1 mean_duration_s=0.3 work=1 target_s=0.001"
} > "$raw/full.bursts.stderr.txt"
cp "$raw/full.bursts.stderr.txt" "$raw/ref.bursts.stderr.txt"
{
  echo "mix.window pattern=bursts only=- without=gemm_2ms seed=1 clock=tw $win"
  echo "mix.kernel name=wait_1ms launches=1 mean_duration_s=0.3 work=1 target_s=0.001"
} > "$raw/loo.bursts.gemm_2ms.stderr.txt"
for n in gemm_2ms:2 wait_1ms:1; do
  {
    echo "mix.window pattern=bursts only=${n%:*} seed=1 clock=tw $win"
    echo "mix.kernel name=${n%:*} launches=${n#*:} mean_duration_s=0.2 work=1 target_s=0.002"
  } > "$raw/solo.bursts.${n%:*}.stderr.txt"
done
{
  echo "mix.window pattern=bursts only=gemm_2ms seed=1 clock=tw $win fill=wait_calib fill_launches=1 fill_time_s=0.3"
  echo "mix.kernel name=gemm_2ms launches=2 mean_duration_s=0.2 work=1 target_s=0.002"
} > "$raw/busy.bursts.gemm_2ms.stderr.txt"
{
  echo "mix.window pattern=steady only=wait_1ms seed=0 clock=tw $win"
  echo "mix.kernel name=wait_1ms launches=1000 mean_duration_s=0.001 work=1 target_s=0.001"
} > "$raw/steady.wait_1ms.stderr.txt"
{
  echo "mix.window pattern=steady only=gemm_2ms seed=0 clock=tw $win"
  echo "mix.kernel name=gemm_2ms launches=5 mean_duration_s=0.2 work=1 target_s=0.002"
} > "$raw/steady.gemm_2ms.stderr.txt"
# the solo and steady runs' reports: only which device ran the kernels is read from them
report1() { # NAME LAUNCHES: one device, no column_prefix (a one-GPU trace)
  echo "{\"devices\": [{\"index\": 0, \"names\": [{\"name\": \"$1\", \"kind\": \"kernel\", \"launches\": $2}]}]}"
}
report1 gemm_2ms 2 > "$raw/solo.bursts.gemm_2ms.report.json"
report1 gemm_2ms 5 > "$raw/steady.gemm_2ms.report.json"
report1 wait_1ms 1000 > "$raw/steady.wait_1ms.report.json"
report1 gemm_2ms 2 > "$raw/busy.bursts.gemm_2ms.report.json"
report1 gemm_2ms 2 > "$raw/ref.bursts.report.json"
report1 wait_1ms 1 > "$raw/loo.bursts.gemm_2ms.report.json"
cat > "$raw/solo.bursts.wait_1ms.report.json" <<'EOF'
{"devices": [{"index": 0, "column_prefix": "gpu0_", "names": []},
             {"index": 1, "column_prefix": "gpu1_", "names": [{"name": "wait_1ms", "kind": "kernel", "launches": 1,
                                                             "energy_j": null, "status": "below_resolution"}]}]}
EOF
cat > "$raw/full.bursts.events.csv" <<'EOF'
name,start_s,end_s,device,stream,kind,grid_x,grid_y,grid_z,block_x,block_y,block_z,correlation_id
mix_fill_f32,0.1,0.2,0,7,kernel,1,1,1,1,1,1,1
gemm_2ms,2.0,2.2,0,13,kernel,264,1,1,128,1,1,2
wait_1ms,2.2,2.5,0,13,kernel,1,1,1,32,1,1,3
gemm_2ms,2.52,2.72,0,13,kernel,264,1,1,128,1,1,4
memcpy DtoH 4 B,3.6,3.61,0,7,memcpy,,,,,,,5
EOF
cat > "$raw/full.bursts.report.json" <<'EOF'
{"devices": [{"index": 0, "names": [
  {"name": "gemm_2ms", "kind": "kernel", "launches": 2, "time_s": 0.4, "energy_j": 82, "energy_sd_j": 2,
   "status": "ok", "upper_j": null, "group": null},
  {"name": "wait_1ms", "kind": "kernel", "launches": 1, "time_s": 0.3, "energy_j": null, "energy_sd_j": null,
   "status": "below_resolution", "upper_j": 20, "group": null}],
  "groups": [],
  "estimate": {"counter_j": 500, "kernels_j": 94, "copies_j": 1, "baseline_j": 400, "conservation_pct": -1,
               "fit_start_s": 0, "fit_end_s": 5, "idle_before_w": 100, "idle_after_w": 100}}]}
EOF

# pattern "steps": the same runs, but the report groups the two names (id 7, 100 J, sd 4), and the solo
# gemm_2ms drew 210 W (2 x 0.2 s x 210 W = 84 J, 42 a launch): one row gemm_2ms+wait_1ms over 3 launches:
# solo (84 + 15) / 3 = 33, estimate 100 / 3 = 33.333, error 100 / 99 - 1 = +1.0101 %, sd 4 / 3; steady
# (2 x 39.3 + 0.002) / 3 = 26.2007; the members no estimate. Additivity: the solos add up to 99 J, the full
# run holds 95 J above its quiet level: +4.2105 % (bursts: 80 + 15 = 95 J, 0 %)
for f in "$raw"/*.bursts*; do cp "$f" "${f/.bursts/.steps}"; done
mv "$raw/solo-steps-gemm.trace.csv" "$raw/solo.steps.gemm_2ms.trace.csv"
cat > "$raw/full.steps.report.json" <<'EOF2'
{"devices": [{"index": 0, "names": [
  {"name": "gemm_2ms", "kind": "kernel", "launches": 2, "time_s": 0.4, "energy_j": null, "energy_sd_j": null,
   "status": "grouped", "upper_j": null, "group": 7},
  {"name": "wait_1ms", "kind": "kernel", "launches": 1, "time_s": 0.3, "energy_j": null, "energy_sd_j": null,
   "status": "grouped", "upper_j": null, "group": 7}],
  "groups": [{"id": 7, "names": ["gemm_2ms", "wait_1ms"], "energy_j": 100, "energy_sd_j": 4}],
  "estimate": {"counter_j": 500, "kernels_j": 100, "copies_j": 0, "baseline_j": 405, "conservation_pct": 1,
               "fit_start_s": 0, "fit_end_s": 5, "idle_before_w": 100, "idle_after_w": 100}}]}
EOF2

out=$T/out
python3 "$script" mix "$raw" "$out" > "$T/table.txt" 2> "$T/err.txt" || { cat "$T/err.txt"; bad "attrib_table.py mix failed"; }
cat "$T/table.txt"

# compares CSV FILE's row (by its first columns KEY) column COL with VALUE within TOL (absolute)
check() {
  local file=$1 key=$2 col=$3 want=$4 tol=$5
  python3 - "$out/$file" "$key" "$col" "$want" "$tol" <<'EOF' || bad "$file [$key] $col: expected $want"
import csv, sys
path, key, col, want, tol = sys.argv[1:]
rows = list(csv.DictReader(l for l in open(path) if not l.startswith("#")))
k = key.split(",")
row = [r for r in rows if list(r.values())[:len(k)] == k]
if len(row) != 1:
    sys.exit(f"{path}: {len(row)} rows for {key}")
got = row[0][col]
if want == "":
    sys.exit(0 if got == "" else f"{path} {key} {col}: '{got}', expected empty")
if got == "" or abs(float(got) - float(want)) > float(tol):
    sys.exit(f"{path} {key} {col}: '{got}', expected {want} +- {tol}")
EOF
}
head -1 "$out/attrib.csv" | grep -qx 'pattern,name,launches,mean_duration_s,steady_j,solo_j,estimate_j,sd_j,error_pct,solo_mean_duration_s,speed_vs_solo_pct,busy_j,busy_error_pct,loo_j,loo_unc_j,loo_error_pct' ||
  bad "attrib.csv header: $(head -1 "$out/attrib.csv")"
head -1 "$out/conservation.csv" | grep -qx 'pattern,counter_j,kernels_j,baseline_j,error_pct' ||
  bad "conservation.csv header: $(head -1 "$out/conservation.csv")"
check attrib.csv bursts,gemm_2ms launches 2 0
check attrib.csv bursts,gemm_2ms mean_duration_s 0.2 1e-9
check attrib.csv bursts,gemm_2ms steady_j 39.3 1e-3
check attrib.csv bursts,gemm_2ms solo_j 40 1e-3
check attrib.csv bursts,gemm_2ms estimate_j 41 1e-9
check attrib.csv bursts,gemm_2ms sd_j 1 1e-9
check attrib.csv bursts,gemm_2ms error_pct 2.5 1e-2
check attrib.csv bursts,wait_1ms solo_j 15 1e-3
check attrib.csv bursts,wait_1ms steady_j 0.002 1e-6
check attrib.csv bursts,wait_1ms estimate_j "" 0
check attrib.csv bursts,wait_1ms error_pct "" 0
# the solo run's mean duration beside the full run's: wait_1ms took 0.3 s in full, 0.2 s alone,
# so it ran (0.2 / 0.3 - 1) = -33.33 % "faster" in the full pattern; gemm_2ms the same in both
check attrib.csv bursts,wait_1ms solo_mean_duration_s 0.2 1e-9
check attrib.csv bursts,wait_1ms speed_vs_solo_pct -33.3333 1e-3
check attrib.csv bursts,gemm_2ms speed_vs_solo_pct 0 1e-9
check attrib.csv bursts,gemm_2ms busy_j 40 1e-3
check attrib.csv bursts,gemm_2ms busy_error_pct 2.5 1e-2
check attrib.csv bursts,wait_1ms busy_j "" 0
check attrib.csv bursts,gemm_2ms loo_j 40 1e-3
check attrib.csv bursts,gemm_2ms loo_unc_j 0.8333 1e-3
check attrib.csv bursts,gemm_2ms loo_error_pct 2.5 1e-2
check attrib.csv bursts,wait_1ms loo_j "" 0
grep -q "^bursts *gemm_2ms .* 40 .* 2.5 .* 2.5 " "$T/table.txt" || bad "the table has no leave-one-out row for gemm_2ms"
check conservation.csv bursts counter_j 500 0
check conservation.csv bursts kernels_j 95 0
check conservation.csv bursts baseline_j 400 0
check conservation.csv bursts error_pct -1 1e-9
check naive.csv bursts,gemm_2ms timeshare_j 36.71875 1e-3
check naive.csv bursts,gemm_2ms timeshare_error_pct -8.203125 1e-2
check naive.csv bursts,wait_1ms timeshare_j 21.5625 1e-3
check naive.csv bursts,gemm_2ms instant_j 40 1e-3
check naive.csv bursts,wait_1ms instant_j 15 1e-3
check solo.csv bursts,gemm_2ms baseline_before_w 100 1e-6
# the reference's uncertainty: 12 counter readings in each stretch, each up to 0.1 s old (the
# period between changes): 100 W x 0.1 s / sqrt(12) x sqrt(1/12 + 1/12) = 1.1785 J; the baselines agree
check solo.csv bursts,gemm_2ms uncertainty_j 1.1785 1e-3
check attrib.csv steps,gemm_2ms+wait_1ms launches 3 0
check attrib.csv steps,gemm_2ms+wait_1ms solo_j 33 1e-3
check attrib.csv steps,gemm_2ms+wait_1ms estimate_j 33.3333 1e-3
check attrib.csv steps,gemm_2ms+wait_1ms sd_j 1.33333 1e-4
check attrib.csv steps,gemm_2ms+wait_1ms error_pct 1.0101 1e-3
head -1 "$out/additivity.csv" | grep -qx 'pattern,whole_from,whole_above_baseline_j,solo_sum_j,solo_excess_pct' ||
  bad "additivity.csv header: $(head -1 "$out/additivity.csv")"
check additivity.csv bursts,ref.bursts whole_above_baseline_j 95 1e-3
check additivity.csv bursts,ref.bursts solo_sum_j 95 1e-3
check additivity.csv bursts,ref.bursts solo_excess_pct 0 1e-3
check additivity.csv steps,ref.steps whole_above_baseline_j 95 1e-3
check additivity.csv steps,ref.steps solo_sum_j 99 1e-3
check additivity.csv steps,ref.steps solo_excess_pct 4.2105 1e-3
# without a reference run, the full run's own window (no PM sampling: 95 J), and none where the full
# run sampled the activity counters (its quiet stretches would hold PM sampling's power)
mkdir -p "$T/raw2" && cp "$raw"/* "$T/raw2/" && rm "$T"/raw2/ref.*
sed 's/"names": \[/"activity_counters": {"recorded": true}, "names": [/' "$raw/full.steps.report.json" > "$T/raw2/full.steps.report.json"
python3 "$script" mix "$T/raw2" "$T/out2" > /dev/null 2> "$T/err.txt" || { cat "$T/err.txt"; bad "attrib_table.py mix (raw2) failed"; }
out_main=$out; out=$T/out2
check additivity.csv bursts,full.bursts whole_above_baseline_j 95 1e-3
check additivity.csv bursts,full.bursts solo_excess_pct 0 1e-3
grep -q '^steps,full.steps sampled the activity counters (its quiet stretches hold that power): none,,99,$' "$out/additivity.csv" ||
  bad "additivity.csv: the PM-sampled full run's row: $(grep '^steps' "$out/additivity.csv")"
out=$out_main
check attrib.csv steps,gemm_2ms+wait_1ms steady_j 26.2007 1e-3
check attrib.csv steps,gemm_2ms estimate_j "" 0
check conservation.csv steps error_pct 1 1e-9
grep -q "^bursts *wait_1ms .*<20 .* yes " "$T/table.txt" ||
  bad "the table does not show wait_1ms as below resolution (<20 J), its bound above solo (yes)"
# gemm_2ms: |41 - 40| <= 2 x 1: the estimate's interval covers the reference
grep -q "^bursts *gemm_2ms .* 2.5 *yes " "$T/table.txt" || bad "the table does not show gemm_2ms's interval covering solo"

# the PyTorch tables. Two runs: gemmk 240 / 250 J (+4.1667 %), k1 100 / 103 J (+3 %), k2 50 / 49 J
# (-2 %). The steady run: op "linear" in [2, 3] s, 10 calls, each a gemmk of 0.08 s at +250 W and
# a bias kernel of 0.001 s (< 5 % of the busy time: not the op's kernel, but its time counts):
# 200 J above the baseline over 0.81 s busy -> 246.914 W, 20 J a call; the estimate is gemmk's
# power in run 1, 240 J / 1 s = 240 W -> -2.8 %
python3 - "$raw" <<'EOF2'
import sys
raw = sys.argv[1]
g = [(2.0 + 0.1 * i, 2.08 + 0.1 * i) for i in range(10)]
def energy(t):
    return 100.0 * t + sum(250.0 * max(0.0, min(t, e) - s) for s, e in g)
with open(raw + "/torch.steady.trace.csv", "w") as f:
    f.write("t_s,energy_j,energy_j_t_s\n")
    for k in range(45):
        t = 0.05 + 0.1 * k
        f.write("%.3f,%.9f,%.3f\n" % (t, energy(t), t))
with open(raw + "/torch.steady.events.csv", "w") as f:
    f.write("name,start_s,end_s,device,stream,kind,grid_x,grid_y,grid_z,block_x,block_y,block_z,correlation_id\n")
    for s, e in g:
        f.write("gemmk,%.3f,%.3f,0,7,kernel,1,1,1,1,1,1,1\n" % (s, e))
        f.write("bias,%.3f,%.3f,0,7,kernel,1,1,1,1,1,1,1\n" % (e, e + 0.001))
# groups: run 1 holds {ga, gb} (80 J) and {gc, gd} (30 J); run 2 {ga, gb} (84 J: +5 %), and gc with ge
# (33 J), gd alone (10 J): {gc, gd} is not comparable (run 2 split it differently)
import json
def name(n, e, t, group=None):
    return {"name": n, "kind": "kernel", "launches": 10, "time_s": t, "energy_j": None if group is not None else e,
            "status": "grouped" if group is not None else "ok", "group": group}
def group(i, label, members, e, t):
    return {"id": i, "label": label, "why": "not_split_by_data", "names": members, "time_s": t, "energy_j": e,
            "status": "ok"}
for run, (a, b, c) in (("run1", (240, 100, 50)), ("run2", (250, 103, 49))):
    names = [name("gemmk", a, 1.0), name("k1", b, 0.5), name("k2", c, 0.5),
             {"name": "memcpy HtoD 4 B", "kind": "memcpy", "launches": 1, "time_s": 0.001, "energy_j": 0.5}]
    if run == "run1":
        names += [name("ga", 0, 0.1, 0), name("gb", 0, 0.1, 0), name("gc", 0, 0.1, 1), name("gd", 0, 0.1, 1)]
        groups = [group(0, "grp-ab", ["ga", "gb"], 80, 0.2), group(1, "grp-cd", ["gc", "gd"], 30, 0.2)]
    else:
        names += [name("ga", 0, 0.1, 0), name("gb", 0, 0.1, 0), name("gc", 0, 0.1, 1), name("ge", 0, 0.1, 1),
                  name("gd", 10, 0.1)]
        groups = [group(0, "grp-ab", ["ga", "gb"], 84, 0.2), group(1, "grp-ce", ["gc", "ge"], 33, 0.2)]
    with open(raw + "/torch.%s.report.json" % run, "w") as f:
        json.dump({"devices": [{"names": names, "groups": groups, "estimate": {}}]}, f)
    with open(raw + "/torch.%s.trace.csv" % run, "w") as f:
        f.write("t_s,energy_j,energy_j_t_s\n0.1,1,0.1\n0.2,2,0.2\n")
EOF2
report1 gemmk 10 > "$raw/torch.steady.report.json"
echo "mix.window pattern=torch-steady only=linear seed=0 clock=tw $win" > "$raw/torch.steady.stderr.txt"
echo "mix.kernel name=linear launches=10 mean_duration_s=0.081" >> "$raw/torch.steady.stderr.txt"
python3 "$script" torch "$raw" "$out" > "$T/torch.txt" 2> "$T/err.txt" || { cat "$T/err.txt"; bad "attrib_table.py torch failed"; }
cat "$T/torch.txt"
check torch_repeat.csv gemmk diff_pct 4.16667 1e-3
check torch_repeat.csv k1 run2_j 103 0
check torch_repeat.csv k2 diff_pct -2 1e-9
check torch_repeat.csv grp-ab names 2 0
check torch_repeat.csv grp-ab diff_pct 5 1e-9
check torch_repeat.csv grp-cd run1_j 30 0
check torch_repeat.csv grp-cd run2_j "" 0
grep -q '^grp-cd,.*split differently (1 of its 2 names in groups with other names)' "$out/torch_repeat.csv" ||
  bad "torch_repeat.csv: grp-cd does not say why it is not comparable: $(grep grp-cd "$out/torch_repeat.csv")"
[ "$(sed -n 2,6p "$out/torch_repeat.csv" | cut -d, -f1 | tr '\n' ' ')" = "gemmk k1 grp-ab k2 grp-cd " ] ||
  bad "torch_repeat.csv: not the 3 names and 2 groups by energy (no memcpy): $(cat "$out/torch_repeat.csv")"
[ "$(grep -c . "$out/torch_repeat.csv")" = 6 ] || bad "torch_repeat.csv: not a header and 5 rows"
grep -q '^linear,gemmk,10,' "$out/torch_steady.csv" ||
  bad "torch_steady.csv: the op's kernels are not 'gemmk' alone: $(cat "$out/torch_steady.csv")"
check torch_steady.csv linear steady_w 246.914 1e-3
check torch_steady.csv linear steady_j_per_call 20 1e-6
check torch_steady.csv linear estimate_w 240 1e-9
check torch_steady.csv linear error_pct -2.8 1e-3

# errors name the file
sed -i 's/,gpu1_energy_j,gpu1_energy_j_t_s,/,gpu1_e_j,gpu1_e_j_t_s,/' "$raw/solo.bursts.wait_1ms.trace.csv"
if python3 "$script" mix "$raw" "$T/o2" > /dev/null 2> "$T/err2.txt"; then bad "a trace without energy_j was accepted"; fi
grep -q "solo.bursts.wait_1ms.trace.csv: no column gpu1_energy_j" "$T/err2.txt" || bad "error: $(cat "$T/err2.txt")"
rm "$raw/solo.bursts.wait_1ms.stderr.txt" "$raw"/*.steps*
sed -i 's/launches=2 /launches=3 /' "$raw/solo.bursts.gemm_2ms.stderr.txt"
if python3 "$script" mix "$raw" "$T/o3" > /dev/null 2> "$T/err3.txt"; then bad "a solo run with other launches was accepted"; fi
grep -q "solo.bursts.gemm_2ms: 3 launches of gemm_2ms, the full run had 2" "$T/err3.txt" || bad "error: $(cat "$T/err3.txt")"

[ $fail = 0 ] && echo "attrib_table: PASS"
exit $fail
