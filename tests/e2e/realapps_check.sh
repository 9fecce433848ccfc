#!/usr/bin/env bash
# scripts/gpu/realapps_check.py (gpu-realapps' checks of a report) on handmade runs, worked by hand.
#
# Each run: a trace of the sample buffer every 20 ms from 0.02 to 2.00 s at 130 W, but 630 W in the ten
# samples of 1.02 .. 1.20 s and in the one of 1.40 s (past gemm's 0.1 s of lag, before tiny); events:
# gemm from 1.0 to 1.2 s, tiny from 1.5 to 1.501 s, and an NVTX range.
# The lowest level is 130 W (the 5th percentile of the 26 samples from 1.0 to 1.5 s, the kernels' span).
# gemm's bound: the samples ending within [1.0, 1.3] s, ten of them 500 W above it for 20 ms each: 100 J
# (110 J were the 1.40 s sample counted);
# tiny's: the samples ending within [1.5, 1.601] s, all at 130 W: 0 J (0.01 J allowed); a group of both:
# 100 J. The clean pair (gemm 100 J, tiny 0.005 J, the group 100 J, conservation +0.2 %, one NVTX range for
# PyTorch) passes, exit 0; so does gemm at 104 +- 1.6 J (within 2 sd of its bound: 100.8 J). Then, one at a
# time: a negative energy; gemm at 102 J (no sd: over 1.01 x 100 + 0.01), at 104 +- 1.0 J (102 J past 2 sd);
# tiny at 0.05 J; the group at 105 J; a name the events lack; conservation 1.5 %; PyTorch without a range:
# each fails, exit 1, and names what failed. A folder without the reports, and one without the JSON run's
# trace, are refused with the file's path.
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/script_common.sh" realapps_check
script=$here/../../scripts/gpu/realapps_check.py

# run DIR PROG GEMM_J TINY_J GROUP_J CONS RANGES [EXTRA-NAME]: a one-GPU report of two names and a group,
# with its trace and events
run() {
  local extra=""
  [ $# -ge 8 ] &&
    extra=", {\"name\": \"$8\", \"status\": \"ok\", \"power_w\": 50.0, \"energy_j\": 1.0, \"time_s\": 0.02}"
  cat >"$1/$2.report.json" <<JSON
{"devices": [{"index": 0, "column_prefix": "",
  "estimate": {"conservation_pct": $6},
  "names": [
    {"name": "gemm", "status": "ok", "power_w": 500.0, "energy_j": $3, "energy_sd_j": ${GEMM_SD:-null},
     "time_s": 0.2, "upper_j": null},
    {"name": "tiny", "status": "below_resolution", "power_w": 5.0, "energy_j": $4, "time_s": 0.001,
     "upper_j": 0.4}$extra],
  "groups": [{"id": 0, "label": "gemm+tiny", "names": ["gemm", "tiny"], "energy_j": $5}],
  "nvtx_ranges": $7}]}
JSON
  python3 - "$1/$2.json.trace.csv" <<'PY'
import sys
with open(sys.argv[1], "w") as f:
    f.write("# provenance: handmade\nt_s,power_buffer_w,power_buffer_w_t_s\n")
    for i in range(1, 101):
        t = i * 0.02
        f.write(f"{t:.2f},{630 if 51 <= i <= 60 or i == 70 else 130},{t:.2f}\n")
PY
  printf '%s\n' "name,start_s,end_s,device,stream,kind" "gemm,1.0,1.2,0,7,kernel" "tiny,1.5,1.501,0,7,kernel" \
    "step,0.9,1.6,0,,nvtx" >"$1/$2.json.events.csv"
}
# case NAME EXPECT(0|1) PATTERN TORCH-ARGS...: torch's run from the args, jax's clean
case_() {
  local name=$1 want=$2 pattern=$3
  shift 3
  mkdir -p "$T/$name"
  run "$T/$name" torch "$@"
  run "$T/$name" jax 100.0 0.005 100.0 0.1 '[]'
  python3 "$script" "$T/$name" >"$T/$name.out" 2>&1
  local rc=$?
  [ "$rc" = "$want" ] || bad "$name: exit $rc, expected $want: $(cat "$T/$name.out")"
  grep -q -- "$pattern" "$T/$name.out" || bad "$name: no '$pattern' in: $(cat "$T/$name.out")"
}
case_ clean 0 'all checks passed' 100.0 0.005 100.0 0.2 '[{"name": "step"}]'
grep -q 'torch GPU 0: .*100 power readings (lowest level 130 W)' "$T/clean.out" || bad "clean: $(cat "$T/clean.out")"
case_ negative 1 'negative: 1 (tiny)' 100.0 -0.005 100.0 0.2 '[{"name": "step"}]'
case_ gemm 1 'more energy than the readings hold: 1 (gemm)' 102.0 0.005 100.0 0.2 '[{"name": "step"}]'
GEMM_SD=1.6 case_ gemm_within_sd 0 'all checks passed' 104.0 0.005 100.0 0.2 '[{"name": "step"}]'
GEMM_SD=1.0 case_ gemm_past_sd 1 'more energy than the readings hold: 1 (gemm)' 104.0 0.005 100.0 0.2 \
  '[{"name": "step"}]'
case_ tiny 1 'more energy than the readings hold: 1 (tiny)' 100.0 0.05 100.0 0.2 '[{"name": "step"}]'
case_ group 1 'more energy than the readings hold: 1 (gemm+tiny)' 100.0 0.005 105.0 0.2 '[{"name": "step"}]'
case_ unread 1 'not in the events: 1 (ghost)' 100.0 0.005 100.0 0.2 '[{"name": "step"}]' ghost
case_ conservation 1 'conservation +1.50 %' 100.0 0.005 100.0 1.5 '[{"name": "step"}]'
case_ ranges 1 '0 NVTX ranges' 100.0 0.005 100.0 0.2 '[]'
grep -q 'SOME CHECKS FAILED' "$T/ranges.out" || bad "a failure without the summary line"
# the files gzipped, as the result folders keep them
mkdir -p "$T/gz"
run "$T/gz" torch 100.0 0.005 100.0 0.2 '[{"name": "step"}]'
run "$T/gz" jax 100.0 0.005 100.0 0.1 '[]'
gzip "$T/gz/"*
python3 "$script" "$T/gz" >"$T/gz.out" 2>&1 || bad "gzipped files: $(cat "$T/gz.out")"
# a folder without the reports, one without the JSON run's trace: refused, naming the file
mkdir -p "$T/none" "$T/notrace"
refused "a folder without reports" "$T/none/torch.report.json[.gz]: no such file" python3 "$script" "$T/none"
run "$T/notrace" torch 100.0 0.005 100.0 0.2 '[{"name": "step"}]'
rm "$T/notrace/torch.json.trace.csv"
refused "a run without its trace" "$T/notrace/torch.json.trace.csv[.gz]: no such file" python3 "$script" "$T/notrace"
[ "$fail" = 0 ] && echo "realapps_check: ok"
exit "$fail"
