#!/usr/bin/env bash
# truewatt run on a Grace Hopper module and on a GPU in MIG mode, both played
# by the fake libnvidia-ml (its GPU draws a scripted 300 W all the time).
#   - Grace Hopper (TW_FAKE_NVML_MODULE_W=150: the module scope reads the
#     GPU's power + 150 W of CPU): the GPU's energy is the GPU's (300 W x the
#     fitted span, 1 %), the module's is reported beside it (450 W x the span)
#     and labelled, in neither the GPU's energy nor the total;
#   - an H100 (no module scope): no module reading, no note about it;
#   - MIG (TW_FAKE_NVML_MIG="0:16,32": GPU 0 as two instances of 16 and 32 SMs; the program's
#     kernels on instance 1, with its MIG UUID): the instances listed under GPU 0 (UUID, SMs,
#     slices, memory), the kernels charged to GPU 0 as instance 1's, none unmeasured; each
#     instance's energy labelled an estimate: its kernels, and the baseline split 16:32 by SMs;
#     the instances' estimates add up to the GPU's energy.
# usage: run_gh_mig.sh BIN FAKE_LIBNVIDIA_ML LIBTRUEWATT_INJECT.so FAKE_CUPTI.so INJECT_HOST
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
INJECT=${3:?usage}
FAKE_CUPTI=${4:?usage}
HOST=${5:?usage}
. "$HERE/run_common.sh" run-gh-mig "$1" "$2"
cd "$T" || exit 2
status=0
fail() { echo "FAIL: $*"; status=1; }
ok() { echo "ok: $*"; }

HEX0=0a0a0a0a00004000800000000000aa00
UUID0=GPU-0a0a0a0a-0000-4000-8000-00000000aa00
printf 'name,start_s,duration_s,power_w\nload,0,1000,300\n' >p0.csv
export TW_FAKE_NVML_T0_MONO_NS=$(python3 -c 'import time; print(time.monotonic_ns() - 3 * 10**9)')
export TW_FAKE_NVML_DEVICES=1 TW_FAKE_NVML_UUIDS=$UUID0 TW_FAKE_NVML_SCENARIO=$T/p0.csv INJECT_HOST_UUID=$HEX0
export TW_INJECT_LIBRARY=$INJECT INJECT_HOST_CUPTI=$FAKE_CUPTI TW_PROFILE_DIR=$T/profiles
unset CUDA_VISIBLE_DEVICES NVTX_INJECTION64_PATH OMPI_COMM_WORLD_RANK PMIX_RANK PMI_RANK SLURM_PROCID RANK

# ---- Grace Hopper: the module's power kept apart from the GPU's
TW_FAKE_NVML_MODULE_W=150 TW_FAKE_NVML_NAME="NVIDIA GH200 480GB" "$BIN" run --json -o gh.sqlite \
    -- "$HOST" - gpu >gh.json 2>gh.err || fail "run on the GH200: $(cat gh.err)"
python3 - gh.json <<'PY' && ok "GH200: the GPU's energy is the GPU's; the module's beside it, labelled" || fail "GH200"
import json, sys
e = json.load(open(sys.argv[1]))["devices"][0]["estimate"]
span = e["fit_end_s"] - e["fit_start_s"]
gpu, module = 300 * span, (300 + 150) * span  # the scripted powers
print(f"  GPU {e['model_j']:.3f} J (scripted {gpu:.3f}); module {e['module_energy_j']:.3f} J (scripted {module:.3f}) over {span:.3f} s")
assert e["power_scope"] == "gpu" and e["module_reading"] == "module_power_instant_w", e
assert abs(e["model_j"] / gpu - 1) < 0.01, (e["model_j"], gpu)
# the naive counter method (reads at their own times, interpolated) over a ~3 s span: a read late
# by up to a 100 ms update on a loaded machine moves it by a few %; the module's would be +50 %
assert abs(e["counter_j"] / gpu - 1) < 0.05, (e["counter_j"], gpu)
assert abs(e["module_energy_j"] / module - 1) < 0.01
PY
"$BIN" report gh.sqlite >gh.txt 2>err &&
    grep -q "^power scope: these energies are the GPU's (NVML's GPU scope). This is a Grace Hopper module: its power (module scope: GPU + CPU + memory, module_power_instant_w)" gh.txt &&
    ok "GH200: the text report says which power is which" || fail "GH200 text: $(grep -i scope gh.txt) $(cat err)"
sqlite3 gh.sqlite "SELECT name FROM readings" | grep -qx module_power_avg_w && ok "GH200: the module's readings are in the run file" ||
    fail "GH200: readings $(sqlite3 gh.sqlite 'SELECT name FROM readings')"

# ---- an H100: no module scope, nothing said about it
"$BIN" run --json -o h100.sqlite -- "$HOST" - gpu >h100.json 2>h100.err || fail "run on the H100: $(cat h100.err)"
python3 -c 'import json,sys; e=json.load(open(sys.argv[1]))["devices"][0]["estimate"]; assert e["module_energy_j"] is None and e["module_reading"] is None and e["power_scope"] == "gpu", e' \
    h100.json && ! grep -qi module h100.err && [ -z "$(sqlite3 h100.sqlite "SELECT name FROM readings WHERE name LIKE 'module%'")" ] &&
    ok "H100: no module reading, no word about it" || fail "H100 module: $(cat h100.err)"
# ---- MIG: GPU 0 split into two instances (16 and 32 SMs); the program on instance 1
MIG1=3a000000000140008000000000000000 # MIG-3a000000-0001-4000-8000-000000000000 in the fake
TW_FAKE_NVML_MIG="0:16,32" INJECT_HOST_MIG_UUID=$MIG1 "$BIN" run --json -o mig.sqlite -- "$HOST" - gpu \
    >mig.json 2>mig.err || fail "run on MIG: $(cat mig.err)"
grep -q "not sampled" mig.err && fail "MIG: the instance's kernels are unmeasured: $(cat mig.err)"
python3 - mig.json <<'PY' && ok "MIG: the instances under GPU 0, the kernels on instance 1, the split an estimate that adds up" || fail "MIG"
import json, sys
dev = json.load(open(sys.argv[1]))["devices"][0]
e, mig = dev["estimate"], dev["mig_instances"]
span = e["fit_end_s"] - e["fit_start_s"]
print(f"  GPU 0: {e['model_j']:.3f} J (scripted 300 W x {span:.3f} s = {300 * span:.3f} J)")
assert abs(e["model_j"] / (300 * span) - 1) < 0.01
assert [m["uuid"] for m in mig] == ["MIG-3a000000-0000-4000-8000-000000000000", "MIG-3a000000-0001-4000-8000-000000000000"], mig
assert [(m["multiprocessors"], m["slices"], m["memory_mib"]) for m in mig] == [(16, 1, 10240), (32, 2, 20480)]
assert [m["launches"] for m in mig] == [0, 3], [m["launches"] for m in mig]
names = {n["name"]: n["launches"] for n in dev["names"]}
assert names == {"MIG 1: spin(float*, int)": 3}, names
# the baseline by the instances' SMs: 16 / 48 and 32 / 48, every instance labelled an estimate
for m, share in zip(mig, (16 / 48, 32 / 48)):
    assert m["estimate"] is True and m["split"] == "SMs" and abs(m["baseline_share"] - share) < 1e-9
    assert abs(m["baseline_j"] - share * e["baseline_j"]) < 1e-6 * e["baseline_j"]
    print(f"  {m['label']}: {m['energy_estimate_j']:.3f} J (estimate; baseline share {share:.4f})")
# the estimates add up to the GPU's model (nothing lost, nothing counted twice)
total = sum(m["energy_estimate_j"] for m in mig)
assert abs(total - e["model_j"]) < 1e-6 * e["model_j"] + 1e-6, (total, e["model_j"])
PY
"$BIN" report mig.sqlite >mig.txt 2>err && grep -q "^MIG instances of this GPU \[J\]: ESTIMATE" mig.txt &&
    grep -Eq "^MIG 1 +MIG-3a000000-0001-4000-8000-000000000000 +2 +32 +20480 +3 " mig.txt &&
    ok "MIG: the text report's instance table, labelled ESTIMATE" || fail "MIG text: $(cat mig.txt err)"
# ---- MIG: CUDA_VISIBLE_DEVICES names an instance (of GPU 1 of two): its GPU is chosen, nothing else
UUID1=GPU-1b1b1b1b-0000-4000-8000-00000000bb01
MIG11=3a000001000140008000000000000000 # MIG-3a000001-0001-4000-8000-000000000000: GPU 1's instance 1
TW_FAKE_NVML_DEVICES=2 TW_FAKE_NVML_UUIDS=$UUID0,$UUID1 TW_FAKE_NVML_SCENARIO=$T/p0.csv,$T/p0.csv \
    TW_FAKE_NVML_MIG="1:16,32" CUDA_VISIBLE_DEVICES=MIG-3a000001-0001-4000-8000-000000000000 \
    INJECT_HOST_UUID=1b1b1b1b00004000800000000000bb01 INJECT_HOST_MIG_UUID=$MIG11 \
    "$BIN" run --json -o migcvd.sqlite -- "$HOST" - gpu >migcvd.json 2>migcvd.err || fail "run on CVD=MIG: $(cat migcvd.err)"
grep -q "CUDA_VISIBLE_DEVICES: MIG-3a000001-0001-4000-8000-000000000000 is MIG instance 1 of GPU 1 ($UUID1)" migcvd.err &&
    ok "CUDA_VISIBLE_DEVICES=MIG-...: said which instance of which GPU" || fail "CVD=MIG note: $(cat migcvd.err)"
python3 - migcvd.json <<'PY' && ok "CUDA_VISIBLE_DEVICES=MIG-...: its GPU (1 of 2) sampled, the kernels its instance's" ||
import json, sys
d = json.load(open(sys.argv[1]))
devs = d["devices"]
assert [x["index"] for x in devs] == [1], [x["index"] for x in devs]
names = {n["name"]: n["launches"] for n in devs[0]["names"]}
assert names == {"MIG 1: spin(float*, int)": 3}, names
assert [m["launches"] for m in devs[0]["mig_instances"]] == [0, 3]
PY
    fail "CVD=MIG: $(head -c 600 migcvd.json)"
"$BIN" run --json -o migdev.sqlite --device MIG-3a000000-0009-4000-8000-000000000000 -- true >/dev/null 2>migdev.err &&
    fail "--device with an unknown MIG UUID ran" ||
    { grep -q "no MIG instance of a GPU NVML lists has that UUID" migdev.err && ok "--device MIG-unknown: refused, said why"; } ||
    fail "--device MIG-unknown: $(cat migdev.err)"
exit $status
