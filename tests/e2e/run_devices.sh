#!/usr/bin/env bash
# truewatt run on two GPUs (the fake libnvidia-ml with two devices of
# distinct UUIDs): each kernel goes to the GPU it ran on, matched by UUID,
# whatever CUDA_VISIBLE_DEVICES says. The measured program is inject_host in
# its gpu mode: the real injection library, fed by the fake CUPTI, records
# kernels of the program's CUDA device 0 and that device's UUID.
#   - CUDA_VISIBLE_DEVICES=1, no --device: GPU 1 alone is sampled and gets
#     the kernels (CUDA's device 0 is GPU 1);
#   - CUDA_VISIBLE_DEVICES=1, --device 0,1: the kernels on GPU 1, none on 0, and under GPU 1
#     in the Perfetto file;
#   - --device cuda:0 under CUDA_VISIBLE_DEVICES=1 samples GPU 1;
#   - --device 0 while the program runs on GPU 1: a warning names GPU 1's
#     UUID as unmeasured, and GPU 0 gets no kernel;
#   - two processes sharing the events file, one on each GPU: each GPU gets
#     its own process's kernels, one header in the file;
#   - a --device naming no GPU: one line listing the GPUs, exit 1.
#
# usage: run_devices.sh BIN FAKE_LIBNVIDIA_ML LIBTRUEWATT_INJECT.so FAKE_CUPTI.so INJECT_HOST
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
INJECT=${3:?usage}
FAKE_CUPTI=${4:?usage}
HOST=${5:?usage}
. "$HERE/run_common.sh" run-devices "$1" "$2"
cd "$T" || exit 2
status=0
fail() { echo "FAIL: $*"; status=1; }
ok() { echo "ok: $*"; }

HEX0=0a0a0a0a00004000800000000000aa00
HEX1=1b1b1b1b00004000800000000000bb01
UUID0=GPU-0a0a0a0a-0000-4000-8000-00000000aa00
UUID1=GPU-1b1b1b1b-0000-4000-8000-00000000bb01
# the kernels' power on the fake's timeline (both fake GPUs draw the same)
printf 'name,start_s,duration_s,power_w\nspin,0.5,0.3,400\nspin,0.9,0.3,400\nspin,1.3,0.3,400\n' >scenario.csv
export TW_FAKE_NVML_DEVICES=2 TW_FAKE_NVML_UUIDS=$UUID0,$UUID1 TW_FAKE_NVML_SCENARIO=$T/scenario.csv
export TW_RUN_EXPORT_T0_TO_FAKE=1 TW_INJECT_LIBRARY=$INJECT INJECT_HOST_CUPTI=$FAKE_CUPTI TW_PROFILE_DIR=$T/profiles
unset CUDA_VISIBLE_DEVICES NVTX_INJECTION64_PATH

# check NAME REPORT EVENTS WANT: WANT is "index:kernels index:kernels ..." (the devices in the
# report, in order, with how many spin launches each got)
check() {
    python3 - "$2" "$3" "$4" <<'PY' && ok "$1" || fail "$1: $(cat err)"
import csv, json, sys
rep, events, want = sys.argv[1], sys.argv[2], sys.argv[3]
d = json.load(open(rep))
got = []
for dev in d["devices"]:
    k = {x["name"]: x for x in dev.get("names") or [] if x["kind"] == "kernel"}
    got.append(f'{dev["index"]}:{k["spin(float*, int)"]["launches"] if "spin(float*, int)" in k else 0}')
if " ".join(got) != want:
    sys.exit(f"devices:launches {' '.join(got)}, want {want}")
PY
}

# ---- CUDA_VISIBLE_DEVICES=1: GPU 1 sampled, the kernels its own
CUDA_VISIBLE_DEVICES=1 INJECT_HOST_UUID=$HEX1 "$BIN" run --json -o a.sqlite -- "$HOST" - gpu \
    >a.json 2>err || fail "run under CUDA_VISIBLE_DEVICES=1: $(cat err)"
check "CUDA_VISIBLE_DEVICES=1: GPU 1 alone, with its kernels" a.json a.sqlite "1:3"
"$BIN" export a.sqlite --csv a 2>err || fail "export a.sqlite: $(cat err)"
python3 - a/events.csv "$UUID1" <<'PY' && ok "the events carry CUDA device 0 and GPU 1's UUID" || fail "events: $(cat a/events.csv)"
import csv, sys
rows = [r for r in csv.DictReader(l for l in open(sys.argv[1]) if not l.startswith("#")) if r["kind"] == "kernel"]
assert len(rows) == 3 and all(r["device"] == "0" and r["device_uuid"] == sys.argv[2] for r in rows), rows
PY

# ---- CUDA_VISIBLE_DEVICES=1, both sampled: the kernels on GPU 1 only
CUDA_VISIBLE_DEVICES=1 INJECT_HOST_UUID=$HEX1 "$BIN" run --json --device 0,1 -o b.sqlite \
    -- "$HOST" - gpu >b.json 2>err || fail "run --device 0,1: $(cat err)"
check "--device 0,1 under CUDA_VISIBLE_DEVICES=1: GPU 1's kernels on GPU 1, none on GPU 0" b.json b.sqlite "0:0 1:3"
grep -q "not sampled" err && fail "a warning about unmeasured kernels while both GPUs were sampled: $(cat err)"
python3 "$HERE/../perfetto/decode.py" truewatt-run.perfetto-trace >perfetto.json &&
    python3 - perfetto.json <<'PY' && ok "Perfetto: the kernels under GPU 1" || fail "Perfetto places the kernels elsewhere"
import json, sys
d = json.load(open(sys.argv[1]))  # tests/perfetto/decode.py's summary of the protobuf file
groups = sorted({s["track"].split(" / ")[0] for s in d["slices"] if s["name"] == "spin(float*, int)"})
assert len(groups) == 1 and groups[0].startswith("GPU 1"), groups
PY

# ---- cuda:0 is GPU 1 under CUDA_VISIBLE_DEVICES=1
CUDA_VISIBLE_DEVICES=$UUID1 INJECT_HOST_UUID=$HEX1 "$BIN" run --json --device cuda:0 -o c.sqlite \
    -- "$HOST" - gpu >c.json 2>err || fail "run --device cuda:0: $(cat err)"
check "--device cuda:0 under CUDA_VISIBLE_DEVICES=GPU-1b1b...: GPU 1" c.json c.sqlite "1:3"

# ---- --device 0 while the program runs on GPU 1: unmeasured, with a warning, not charged to GPU 0
CUDA_VISIBLE_DEVICES=1 INJECT_HOST_UUID=$HEX1 "$BIN" run --json --device 0 -o d.sqlite \
    -- "$HOST" - gpu >d.json 2>err || fail "run --device 0: $(cat err)"
check "--device 0, kernels on GPU 1: none charged to GPU 0" d.json d.sqlite "0:0"
grep -q "warning: 3 kernels, copies or memsets (0.900 s busy) ran on GPU $UUID1, which is not sampled" err &&
    ok "the unmeasured GPU is named in a warning" || fail "no warning naming $UUID1: $(cat err)"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert any(sys.argv[2] in w for w in d["warnings"]), d["warnings"]' \
    d.json "$UUID1" && ok "the warning is in the report" || fail "the report lacks the warning"

# ---- two processes, one per GPU, one events file
cat >two.sh <<EOF
INJECT_HOST_UUID=$HEX0 "$HOST" - gpu &
INJECT_HOST_UUID=$HEX1 "$HOST" - gpu
wait
EOF
"$BIN" run --json -o e.sqlite -- sh two.sh >e.json 2>err || fail "two processes: $(cat err)"
check "two processes, one on each GPU: each GPU its own kernels" e.json e.sqlite "0:3 1:3"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["timeline"] == {"events": 6, "note": None}, d["timeline"]' e.json &&
    ok "two processes: one events file, imported whole" || fail "two processes' events: $(cat err)"

# ---- a GPU that is not there
"$BIN" run --device GPU-ffff -- touch ran >out 2>err
[ $? -eq 1 ] && [ ! -e ran ] && [ "$(wc -l <err)" = 1 ] &&
    grep -q "^truewatt run: --device 'GPU-ffff': no GPU has that UUID (NVML sees 0: $UUID0, 1: $UUID1)$" err &&
    ok "an unknown UUID: one line listing the GPUs, nothing run" || fail "--device GPU-ffff: $(cat err)"
CUDA_VISIBLE_DEVICES=1 "$BIN" run --device cuda:1 -- touch ran >out 2>err
[ $? -eq 1 ] && [ ! -e ran ] && grep -q "CUDA_VISIBLE_DEVICES='1' makes 1 GPU visible to CUDA" err &&
    ok "cuda:1 beyond CUDA_VISIBLE_DEVICES: named" || fail "--device cuda:1: $(cat err)"
exit $status
