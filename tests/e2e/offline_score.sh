#!/usr/bin/env bash
# scripts/offline-score on a handmade offline-attrib comparison, counted by hand.
#
# Two builds. Rows: gemm_2ms (limit 8) -4.0 | -9.0; l2_500us (15) +14.0 | +16.0; stream_200us (15)
# +20.0 | +1.0; gemm_50us (under 100 us: left out) +30 | +30; fma_5ms with no error in build 2 (left
# out). Build 1: gemm and l2 within, stream not: 2 of 3, mean |error| (4 + 14 + 20) / 3 = 12.67,
# largest 20.0; build 2: stream only: 1 of 3, mean (9 + 16 + 1) / 3 = 8.67, largest 16.0. Moved by
# more than 3 points: gemm (4 -> 9) and stream (20 -> 1), not l2 (14 -> 16).
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/script_common.sh" offline_score
script=$here/../../scripts/offline-score
cat >"$T/compare.txt" <<'TXT'
# provenance: command: handmade
## results/x/attrib: estimate J per launch and error % against the solo reference (base | build)
bursts   gemm_2ms       solo   0.30000 |    0.28800    -4.00 |    0.27300    -9.00
bursts   l2_500us       solo   0.12000 |    0.13680   +14.00 |    0.13920   +16.00
mixed    stream_200us   solo   0.05000 |    0.06000   +20.00 |    0.05050    +1.00
mixed    gemm_50us      solo   0.00700 |    0.00910   +30.00 |    0.00910   +30.00
mixed    fma_5ms        solo   0.80000 |    0.80000    +0.00 |          -        -
conservation: the model's energy against the counter's, % (base | build)
bursts   +0.100 | +0.200
TXT
python3 "$script" --out "$T/score.txt" "$T/compare.txt" >"$T/out.txt" 2>&1 || bad "it failed: $(cat "$T/out.txt")"
grep -q '^3 rows ' "$T/out.txt" || bad "the rows counted: $(head -1 "$T/out.txt")"
want1='^build 1: 2 of 3 within their limits; mean |error| 12.67 %, largest 20.0 %$'
grep -q "$want1" "$T/out.txt" || bad "build 1: $(cat "$T/out.txt")"
grep -q '^build 2: 1 of 3 within their limits; mean |error| 8.67 %, largest 16.0 %$' "$T/out.txt" || bad "build 2"
grep -q 'gemm_2ms .* -4.0 ->   -9.0 (limit 8)' "$T/out.txt" || bad "gemm_2ms did not move"
grep -q 'stream_200us .*+20.0 ->   +1.0 (limit 15)' "$T/out.txt" || bad "stream_200us did not move"
grep -q 'l2_500us .*->' "$T/out.txt" && bad "l2_500us moved by 2 points only"
head -1 "$T/score.txt" | grep -q '^# provenance: command: scripts/offline-score ' || bad "--out has no provenance line"
printf 'nothing\n' >"$T/empty.txt"
refused "a file without rows" "empty.txt" python3 "$script" "$T/empty.txt"
[ "$fail" = 0 ] && echo "offline_score: ok"
exit "$fail"
