#!/usr/bin/env bash
# scripts/gpu/realapps_check.py (gpu-realapps' checks of a report) on handmade reports, worked by hand.
#
# A clean pair: PyTorch with one NVTX range, conservation +0.2 %, a GEMM at 500 W above a 130 W
# baseline (the ceiling: max(700 - 130, power_bound 560) = 570 W), a name below resolution whose
# bound is 0.5 J over 1 ms (500 W); JAX the same without ranges: both pass, exit 0. Then, one at a
# time: a negative energy; a GEMM at 580 W (over 570 x 1.001); a bound of 0.6 J over 1 ms (600 W);
# conservation 1.5 %; PyTorch without a range: each fails, exit 1, and names what failed. A folder
# without the reports is refused with the file's path.
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/script_common.sh" realapps_check
script=$here/../../scripts/gpu/realapps_check.py

# report DIR PROG GEMM_W GEMM_J BOUND_J CONS RANGES: a one-GPU report of two names
report() {
  cat >"$1/$2.report.json" <<JSON
{"devices": [{"index": 0,
  "estimate": {"baseline_min_w": 130.0, "power_bound_w": 560.0, "conservation_pct": $6},
  "names": [
    {"name": "gemm", "status": "ok", "power_w": $3, "energy_j": $4, "time_s": 0.2, "upper_j": null},
    {"name": "tiny", "status": "below_resolution", "power_w": 10.0, "energy_j": 0.01, "time_s": 0.001, "upper_j": $5}],
  "nvtx_ranges": $7}]}
JSON
}
# case NAME EXPECT(0|1) PATTERN TORCH-ARGS...: torch's report from the args, jax's clean
case_() {
  local name=$1 want=$2 pattern=$3
  shift 3
  mkdir -p "$T/$name"
  report "$T/$name" torch "$@"
  report "$T/$name" jax 500.0 100.0 0.5 0.1 '[]'
  python3 "$script" "$T/$name" >"$T/$name.out" 2>&1
  local rc=$?
  [ "$rc" = "$want" ] || bad "$name: exit $rc, expected $want: $(cat "$T/$name.out")"
  grep -q -- "$pattern" "$T/$name.out" || bad "$name: no '$pattern' in: $(cat "$T/$name.out")"
}
case_ clean 0 'all checks passed' 500.0 100.0 0.5 0.2 '[{"name": "step"}]'
case_ negative 1 'negative: 1 (gemm)' 500.0 -1.0 0.5 0.2 '[{"name": "step"}]'
case_ power 1 'above what the GPU can draw: 1 (gemm)' 580.0 116.0 0.5 0.2 '[{"name": "step"}]'
case_ bound 1 'above what the GPU can draw: 1 (tiny)' 500.0 100.0 0.6 0.2 '[{"name": "step"}]'
case_ conservation 1 'conservation +1.50 %' 500.0 100.0 0.5 1.5 '[{"name": "step"}]'
case_ ranges 1 '0 NVTX ranges' 500.0 100.0 0.5 0.2 '[]'
grep -q 'SOME CHECKS FAILED' "$T/ranges.out" || bad "a failure without the summary line"
# the reports gzipped, as the result folders keep them
mkdir -p "$T/gz"
report "$T/gz" torch 500.0 100.0 0.5 0.2 '[{"name": "step"}]'
report "$T/gz" jax 500.0 100.0 0.5 0.1 '[]'
gzip "$T/gz/torch.report.json" "$T/gz/jax.report.json"
python3 "$script" "$T/gz" >"$T/gz.out" 2>&1 || bad "gzipped reports: $(cat "$T/gz.out")"
# a folder without the reports: refused, naming the file
mkdir -p "$T/none"
refused "a folder without reports" "$T/none/torch.report.json[.gz]: no such file" python3 "$script" "$T/none"
[ "$fail" = 0 ] && echo "realapps_check: ok"
exit "$fail"
