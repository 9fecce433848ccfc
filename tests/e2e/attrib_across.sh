#!/usr/bin/env bash
# scripts/attrib-across on two handmade gpu-attrib folders, worked by hand.
#
# Folder a: mixed/fma_100us estimate 0.018 +- 0.0015, solo 0.028 (uncertainty 3.2 J over 400
# launches: +- 0.008); folder b: estimate 0.020, solo 0.016 (4.0 J / 400: +- 0.010), and no solo.csv
# row for gemm_20ms. Spread of the estimates: (0.020 - 0.018) / 0.019 = 10.5 %; of the solos:
# (0.028 - 0.016) / 0.022 = 54.5 %. gemm_20ms in a only: no spread line. z: a's fma_100us
# (0.018 - 0.028) / sqrt(0.0015^2 + 0.008^2) = -1.23, b's (0.020 - 0.016) / sqrt(0.002^2 + 0.010^2) =
# +0.39, gemm_20ms (3.6 - 3.5) / sqrt(0.05^2 + (13.2 / 440)^2) = +1.71: 3 of 3 within 2, rms z
# sqrt((1.2286^2 + 0.3922^2 + 1.7150^2) / 3) = 1.24. A folder without attrib.csv is refused with its path.
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/script_common.sh" attrib_across
script=$here/../../scripts/attrib-across
mkdir -p "$T/a" "$T/b" "$T/c"
head=pattern,name,launches,mean_duration_s,steady_j,solo_j,estimate_j,sd_j,error_pct
printf '%s\nmixed,fma_100us,400,0.00012,0.019,0.028,0.018,0.0015,-35.7\nmixed,gemm_20ms,440,0.02,3.4,3.5,3.6,0.05,2.9\n' "$head" >"$T/a/attrib.csv"
printf '%s\nmixed,fma_100us,400,0.00012,0.019,0.016,0.020,0.002,25.0\n' "$head" >"$T/b/attrib.csv"
printf 'pattern,name,launches,uncertainty_j\nmixed,fma_100us,400,3.2\nmixed,gemm_20ms,440,13.2\n' >"$T/a/solo.csv"
printf 'pattern,name,launches,uncertainty_j\nmixed,fma_100us,400,4.0\n' >"$T/b/solo.csv"

python3 "$script" --out "$T/across.txt" "$T/a" "$T/b" >"$T/out.txt" 2>&1 || bad "it failed: $(cat "$T/out.txt")"
grep -q '^mixed    fma_100us      \[1\]    0.01800 +-0.00150   0.02800 +-0.00800  -1.23$' "$T/out.txt" || bad "folder a's row: $(cat "$T/out.txt")"
grep -q '^mixed    fma_100us      \[2\]    0.02000 +-0.00200   0.01600 +-0.01000  +0.39$' "$T/out.txt" || bad "folder b's row"
grep -q '^mixed    gemm_20ms      \[1\]    3.60000 +-0.05000   3.50000 +-0.03000  +1.71$' "$T/out.txt" || bad "gemm_20ms's z"
grep -q '^within 2 of z: 3 of 3 rows; rms z 1.24$' "$T/out.txt" || bad "the z summary: $(tail -1 "$T/out.txt")"
grep -q '^mixed    fma_100us      spread: estimate 10.5 %, solo 54.5 %$' "$T/out.txt" || bad "the spreads: $(grep spread "$T/out.txt")"
grep -q 'gemm_20ms      spread' "$T/out.txt" && bad "a spread for a name of one folder"
head -1 "$T/across.txt" | grep -q '^# provenance: command: scripts/attrib-across ' || bad "--out has no provenance line"
refused "a folder without attrib.csv" "$T/c/attrib.csv: no such file" python3 "$script" "$T/a" "$T/c"
[ "$fail" = 0 ] && echo "attrib_across: ok"
exit "$fail"
