#!/usr/bin/env bash
# scripts/gpu/pm_clock.py on handmade export CSVs whose clocks are worked out by hand.
#
# Samples of 0.2 ms (0.1 ms for one). Kernel "gemm" runs [1.0000, 1.0006] s: three samples inside,
# with 320,000, 330,000 and 340,000 elapsed cycles -> 1,600, 1,650, 1,700 MHz, mean 1,650; tensor
# 90, 96, 99 % -> 95.0. Kernel "fma" runs [2.0000, 2.0003]: one sample of 0.2 ms inside (416,000
# cycles -> 2,080 MHz), and a second, [2.0002, 2.0004], that ends after the launch: not counted.
# Idle samples (no SM active): 0.2 ms of 399,000 cycles (1,995 MHz) twice and 0.1 ms of 198,000
# (1,980 MHz): median 1,995. A sample of 2 ms (a stall) inside gemm's second launch [3.0, 3.003] is
# left out, so that launch adds nothing. Device 1's rows must not be read.
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/script_common.sh" pm_clock
script=$here/../../scripts/gpu/pm_clock.py

python3 - "$T" <<'PY'
import sys
T = sys.argv[1]
S = [  # start, end, elapsed cycles, sm active cycles, tensor %
    (1.0000, 1.0002, 320000, 300000, 90), (1.0002, 1.0004, 330000, 300000, 96), (1.0004, 1.0006, 340000, 300000, 99),
    (2.0000, 2.0002, 416000, 400000, 5), (2.0002, 2.0004, 100000, 90000, 5),
    (0.5000, 0.5002, 399000, 0, 0), (0.5002, 0.5004, 399000, 0, 0), (0.5004, 0.5005, 198000, 0, 0),
    (3.0000, 3.0020, 100, 100, 50),
]
with open(T + "/pm_samples.csv", "w") as f:
    f.write("device,device_uuid,start_s,end_s,metric,value\n")
    for a, b, el, sm, ten in S:
        for m, v in (("sm__cycles_active.avg", sm), ("gpc__cycles_elapsed.max", el),
                     ("sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed", ten)):
            f.write(f"0,GPU-x,{a:.6f},{b:.6f},{m},{v}\n")
    f.write("1,GPU-y,1.000000,1.000200,gpc__cycles_elapsed.max,1\n")
with open(T + "/events.csv", "w") as f:
    f.write("# handmade\nname,start_s,end_s,device,stream,kind\n")
    f.write("gemm,1.0,1.0006,0,7,kernel\nfma,2.0,2.0003,0,7,kernel\ngemm,3.0,3.003,0,7,kernel\n")
    f.write("gemm,1.0,1.0006,1,7,kernel\n")
PY
python3 "$script" --csv "$T/pm_samples.csv" "$T/events.csv" > "$T/out.txt" 2> "$T/err.txt" || { cat "$T/err.txt"; bad "pm_clock.py failed"; }
cat "$T/out.txt"
grep -Eq '^gemm +3 +1650 +95.0$' "$T/out.txt" || bad "gemm: 3 samples, 1650 MHz, tensor 95.0 %"
grep -Eq '^fma +1 +2080 +5.0$' "$T/out.txt" || bad "fma: 1 sample, 2080 MHz, tensor 5.0 %"
grep -Eq '^\(idle: no SM active; median\) +3 +1995$' "$T/out.txt" || bad "idle: 3 samples, median 1995 MHz"
python3 "$script" "$T/none.sqlite" > /dev/null 2>&1 && bad "a missing run file did not fail"
[ $fail = 0 ] && echo "PASS: pm_clock"
exit $fail
