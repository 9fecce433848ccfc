#!/usr/bin/env bash
# truewatt run and the state of the driver, against the fake libnvidia-ml:
# no driver -> one clear line, exit 1, the command not run; a reading the GPU
# does not support -> the run works and the report shows the note; a GPU lost
# mid-run -> the run completes and the report says where sampling stopped.
#
# usage: run_sensor.sh BIN FAKE_LIBNVIDIA_ML
set -u
export LC_ALL=C
BIN=${1:?usage: run_sensor.sh BIN FAKE_LIBNVIDIA_ML}
case $BIN in /*) ;; *) BIN=$(pwd)/$BIN ;; esac
FAKE=${2:-${TW_FAKE_NVML_PATH:-}}
case $FAKE in /* | "") ;; *) FAKE=$(pwd)/$FAKE ;; esac
[ -f "$FAKE" ] || { echo "SKIP: the fake libnvidia-ml is not built ($FAKE)"; exit 77; }
TW_NVML_LIBRARY=$FAKE "$BIN" backends | grep -Eq '^nvml +available' ||
    { echo "SKIP: the nvml backend is not available with the fake"; exit 77; }

T=$(mktemp -d "${TW_TMPDIR:-${TMPDIR:-/tmp}}/e2e-run-sensor.XXXXXX") || exit 2
trap 'rm -rf "$T"' EXIT
cd "$T" || exit 2
status=0
fail() { echo "FAIL: $*"; status=1; }
ok() { echo "ok: $*"; }

# ---- no driver: one line, exit 1, nothing run, no files
TW_NVML_LIBRARY=/nonexistent "$BIN" run -- touch "$T/ran" >out 2>err
rc=$?
[ $rc -eq 1 ] && ok "missing driver -> exit 1" || fail "missing driver: exit $rc"
[ "$(cat out err | wc -l)" = 1 ] && grep -q "^truewatt run: cannot measure: the nvml backend is unavailable: /nonexistent" err &&
    ok "one clear line" || fail "missing driver message: $(cat out err)"
[ ! -e ran ] && [ ! -e truewatt-run.sqlite ] && ok "nothing run, nothing written" || fail "the command ran or files were written"
TW_NVML_LIBRARY=$FAKE TW_FAKE_NVML_INIT_ERROR=9 "$BIN" run -- touch "$T/ran" >out 2>err
[ $? -eq 1 ] && grep -q "unavailable: nvmlInit: Driver Not Loaded (9)" err && [ ! -e ran ] &&
    ok "nvmlInit failure" || fail "nvmlInit failure: $(cat err)"

export TW_NVML_LIBRARY=$FAKE
# ---- an unsupported field: the run works, the note is shown
TW_FAKE_NVML_UNSUPPORTED=186 "$BIN" run -o u.sqlite -- sleep 0.3 >out 2>err
rc=$?
[ $rc -eq 0 ] && ok "unsupported field 186: the run works" || fail "unsupported 186: exit $rc; $(cat err)"
sed -n '/^sensor notes:/,/^$/p' out | grep -q "power_instant_w" && ok "the note names the reading" ||
    fail "no note about power_instant_w: $(cat out)"
readings() { python3 -c 'import sqlite3, sys; print(" ".join(r[0] for r in sqlite3.connect(sys.argv[1]).execute("SELECT name FROM readings ORDER BY id")))' "$1"; }
readings u.sqlite | grep -qw "power_instant_w" && fail "u.sqlite has an unsupported reading" || ok "no reading for it"
TW_FAKE_NVML_UNSUPPORTED=186 "$BIN" run --json -o u.sqlite -- sleep 0.3 >u.json 2>err
python3 - u.json <<'PY' && ok "--json: the note, and no instant-power method" || fail "--json with 186 unsupported"
import json, sys
d = json.load(open(sys.argv[1]))
assert any("power_instant_w" in n for n in d["sampler"]["notes"]), d["sampler"]["notes"]
m = d["devices"][0]["estimate"]["naive_methods_j"]
assert m["trapezoid_power_instant"] is None and m["energy_counter"] > 0, m
PY

# ---- no energy counter: still a report, without the check
TW_FAKE_NVML_UNSUPPORTED=energy "$BIN" run -o ne.sqlite -- sleep 0.3 >out 2>err
[ $? -eq 0 ] && grep -q "no energy counter in the trace" out && ok "no energy counter" || fail "energy unsupported: $(cat out err)"

# ---- several GPUs: columns gpuN_..., one report per GPU; --device picks one
TW_FAKE_NVML_DEVICES=2 "$BIN" run --json -o m.sqlite -- sleep 0.3 >m.json 2>err
[ $? -eq 0 ] || fail "two GPUs: $(cat err)"
python3 - m.json m.sqlite <<'PY' && ok "two GPUs: a report each" || fail "two GPUs"
import json, sys
d = json.load(open(sys.argv[1]))
assert [x["index"] for x in d["devices"]] == [0, 1], d["devices"]
assert [x["estimate"]["readings_fitted"].split(" ")[0] for x in d["devices"]] == ["gpu0_power_buffer_w", "gpu1_power_buffer_w"]
import sqlite3
header = [r[0] for r in sqlite3.connect(sys.argv[2]).execute("SELECT name FROM readings")]
assert "gpu0_power_usage_w" in header and "gpu1_energy_j" in header and "power_usage_w" not in header, header
PY
TW_FAKE_NVML_DEVICES=2 "$BIN" run --json --device 1 -o d1.sqlite -- sleep 0.2 >d1.json 2>err
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert [x["index"] for x in d["devices"]] == [1], d["devices"]' d1.json &&
    readings d1.sqlite | grep -q '^power_usage_w ' && ok "--device 1" || fail "--device 1: $(cat err)"
python3 - d1.json d1.sqlite <<'PY' && ok "provenance: command, date, GPU and driver are in the run file and the report" || fail "provenance"
import json, sys
d = json.load(open(sys.argv[1]))
p = d["provenance"]
assert p.startswith("command: truewatt run --json --device 1 -o d1.sqlite -- sleep 0.2; date: 20"), p
assert "gpu 1: Fake H100, driver fake-580.0" in p, p
import sqlite3
assert sqlite3.connect(sys.argv[2]).execute("SELECT value FROM meta WHERE key = 'provenance'").fetchone()[0] == p
PY
TW_FAKE_NVML_DEVICES=2 "$BIN" run --device 7 -- touch "$T/ran7" >out 2>err
[ $? -eq 1 ] && grep -q "^truewatt run: --device '7': no GPU with that NVML index (NVML sees 0: GPU-" err && [ ! -e ran7 ] && ok "--device 7: named, nothing run" || fail "--device 7: $(cat err)"

# ---- a slow period longer than the fast ring holds (8 s): nothing dropped, rows in time order
"$BIN" run --slow-period 30 -o long.sqlite -- sleep 9 >out 2>err
[ $? -eq 0 ] && ! grep -q "dropped" out && ok "a 30 s slow period holds nothing back" || fail "slow period 30 s: $(grep dropped out)"
"$BIN" analyze long.sqlite --column power_buffer_w --no-corrected-out >an.txt 2>&1 || fail "long.sqlite: $(cat an.txt)"

# ---- the GPU is lost mid-run: the command finishes, the report says so
TW_FAKE_NVML_LOST_AFTER_S=0.5 "$BIN" run -o lost.sqlite -- sleep 1 >out 2>err
rc=$?
[ $rc -eq 0 ] && ok "lost GPU: the command's status" || fail "lost GPU: exit $rc; $(cat err)"
grep -Eq "readings stopped at t = .*(lost|Lost|LOST)" out && ok "lost GPU: noted" || fail "lost GPU note: $(cat out err)"
exit $status
