#!/usr/bin/env bash
# truewatt dvfs predict over the supported clock pairs that NVML lists (the
# fake libnvidia-ml: like an H100, 2 memory clocks x 110 graphics clocks, or
# the lists set by TW_FAKE_NVML_MEM_CLOCKS / _GFX_CLOCKS), for the rows of the
# CLI data (tests/data/cli/dvfs-rows-*): every row at every pair in
# predict.csv, its measured time at its own pair only, the table printed, and
# NVML's absence reported with the way out (--clocks measured).
#
# usage: dvfs_predict.sh BIN FAKE_LIBNVIDIA_ML DATA_DIR
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
DATA=$(cd "${3:?usage: dvfs_predict.sh BIN FAKE DATA_DIR}" && pwd)
. "$HERE/run_common.sh" dvfs-predict "$1" "$2"
cd "$T" || exit 2
status=0
fail() { echo "FAIL: $*"; status=1; }
ok() { echo "ok: $*"; }

# rows from the CLI data (hand-computed in test_dvfs_rows), at 1980 / 2619 MHz
"$BIN" dvfs rows --times "$DATA/cli/dvfs-rows-times.csv" --ncu "$DATA/cli/dvfs-rows-ncu.csv" --core-mhz 1980 \
    --mem-mhz 2619 --out rows.csv 2>err || fail "dvfs rows: $(cat err)"
nrows=$(grep -vc '^\(#\|appName\)' rows.csv)
[ "$nrows" -ge 2 ] && ok "rows: $nrows" || fail "rows: $nrows"
gpu=$DATA/../../data/dvfs/v100.json # any parameter set does for the sweep's shape

"$BIN" dvfs predict rows.csv --gpu "$gpu" --out p >out 2>err
[ $? -eq 0 ] && ok "predict over NVML's pairs: exit 0" || fail "predict: $(cat err)"
body=$(grep -vc '^\(#\|kernel,\)' p/predict.csv)
[ "$body" -eq $((nrows * 220)) ] && ok "predict.csv: $body lines = rows x 220 pairs" || fail "predict.csv: $body lines"
measured=$(awk -F, '!/^(#|kernel,)/ && $6 != ""' p/predict.csv | wc -l)
[ "$measured" -eq "$nrows" ] && ok "measured time only at each row's own pair ($measured)" || fail "measured at $measured pairs"
grep -q '^memory 2619 MHz (110 clocks, 1980..345 MHz in 15 MHz steps)' out && grep -q '^memory 1593 MHz' out &&
    ok "the table per memory clock" || fail "table: $(head -30 out)"
grep -q ',345,1593,' p/predict.csv && ok "the lowest pair predicted" || fail "no 345/1593 row"

# other lists: the sweep follows them
TW_FAKE_NVML_MEM_CLOCKS=1000 TW_FAKE_NVML_GFX_CLOCKS=900,600,300 "$BIN" dvfs predict rows.csv --gpu "$gpu" --out q \
    >out 2>err || fail "predict with 3 clocks: $(cat err)"
body=$(grep -vc '^\(#\|kernel,\)' q/predict.csv)
[ "$body" -eq $((nrows * 3)) ] && ok "3 pairs: $body lines" || fail "3 pairs: $body lines"

# no NVML: a clear message naming the way out, exit 1, nothing written
TW_NVML_LIBRARY=$T/no-such-libnvidia-ml.so "$BIN" dvfs predict rows.csv --gpu "$gpu" --out r >out 2>err
rc=$?
[ $rc -eq 1 ] && grep -q 'the supported clocks: .*--clocks measured' err && [ ! -e r/predict.csv ] &&
    ok "no NVML: exit 1, the message, no file" || fail "no NVML: exit $rc: $(cat err)"
"$BIN" dvfs predict rows.csv --gpu "$gpu" --clocks measured --out s >out 2>err &&
    [ "$(grep -vc '^\(#\|kernel,\)' s/predict.csv)" -eq "$nrows" ] && ok "--clocks measured: one line per row" ||
    fail "--clocks measured: $(cat err)"
exit $status
