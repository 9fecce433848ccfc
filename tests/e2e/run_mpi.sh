#!/usr/bin/env bash
# truewatt run under Open MPI (mpirun -n 2), on a fake host of two GPUs (the
# fake libnvidia-ml, each GPU's power scripted: GPU 0 draws 300 W, GPU 1
# 500 W, all the time). Each rank runs inject_host (the real injection
# library fed by the fake CUPTI: three 0.3 s kernels on its CUDA device 0).
#   - one GPU per rank (CUDA_VISIBLE_DEVICES=rank): one run file per rank
#     (truewatt-run.rankR.sqlite) with its rank, host and GPU; rank 0 alone
#     prints, the merged report; each GPU's energy is its scripted power times
#     the span it was fitted over (1 %), the total their sum, each rank's
#     kernels on its own GPU; 'truewatt report' of the two files says the same;
#   - both ranks on GPU 0: one GPU in the report, sampled by both, counted
#     once (the total is 300 W x its span, not twice that), both ranks'
#     kernels on it; rank 1 alone records activity counters: the merged
#     report gives them to GPU 0's estimate (and --no-activity-counters not);
#   - a rank whose run file never comes: rank 0 waits --merge-wait, says so,
#     and reports what it has; torchrun's RANK/WORLD_SIZE and -o with {rank};
#   - many GPUs in one run (three fake GPUs of 300, 500, 200 W): each its
#     energy, the report's total their sum;
#   - bad input: one file twice, two files of one rank;
#   - scripts/gpu-mpi's reader and checks (scripts/gpu/energy_log.py through pynvml on the fake,
#     scripts/gpu/mpi_check.py) on the first job: each GPU's merged energy against its counter read
#     independently, PASS; and FAIL when told the ranks' GPUs the wrong way round.
# usage: run_mpi.sh BIN FAKE_LIBNVIDIA_ML LIBTRUEWATT_INJECT.so FAKE_CUPTI.so INJECT_HOST FAKE_CUDA.so
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
INJECT=${3:?usage}
FAKE_CUPTI=${4:?usage}
HOST=${5:?usage}
FAKE_CUDA=${6:?usage}
. "$HERE/run_common.sh" run-mpi "$1" "$2"
cd "$T" || exit 2
status=0
fail() { echo "FAIL: $*"; status=1; }
ok() { echo "ok: $*"; }
# a test whose tool is missing fails (CI installs it: scripts/deps)
command -v mpirun >/dev/null || { echo "FAIL: mpirun is missing (Debian: openmpi-bin)"; exit 1; }

HEX0=0a0a0a0a00004000800000000000aa00
HEX1=1b1b1b1b00004000800000000000bb01
UUID0=GPU-0a0a0a0a-0000-4000-8000-00000000aa00
UUID1=GPU-1b1b1b1b-0000-4000-8000-00000000bb01
printf 'name,start_s,duration_s,power_w\nload,0,1000,300\n' >p0.csv
printf 'name,start_s,duration_s,power_w\nload,0,1000,500\n' >p1.csv
# the fake's time origin 3 s before the job: both ranks see one timeline of each GPU, already at its power
export TW_FAKE_NVML_T0_MONO_NS=$(python3 -c 'import time; print(time.monotonic_ns() - 3 * 10**9)')
export TW_FAKE_NVML_DEVICES=2 TW_FAKE_NVML_UUIDS=$UUID0,$UUID1 TW_FAKE_NVML_SCENARIO=$T/p0.csv,$T/p1.csv
export TW_INJECT_LIBRARY=$INJECT INJECT_HOST_CUPTI=$FAKE_CUPTI TW_PROFILE_DIR=$T/profiles
unset CUDA_VISIBLE_DEVICES NVTX_INJECTION64_PATH RANK WORLD_SIZE LOCAL_RANK SLURM_PROCID PMI_RANK PMIX_RANK

# each rank: its GPU (SHARED=1: GPU 0 for both), as a job script sets CUDA_VISIBLE_DEVICES
cat >rank.sh <<EOF
r=\${OMPI_COMM_WORLD_RANK:?}
g=\$r; [ "\${SHARED:-0}" = 1 ] && g=0
hex=$HEX0; [ \$g = 1 ] && hex=$HEX1
pm=; [ "\${PM_RANK:-}" = "\$r" ] && pm=--activity-counters && export INJECT_HOST_CUDA=$FAKE_CUDA FAKE_CUDA_UUID0=\$hex
CUDA_VISIBLE_DEVICES=\$g INJECT_HOST_UUID=\$hex exec "$BIN" run --merge-wait 60 \$pm "\$@" -- "$HOST" - gpu
EOF
mpi() { mpirun --oversubscribe --allow-run-as-root --bind-to none -n 2 "$@"; }

# check_merged NAME JSON "UUID:watts:ranks ..." : the merged report's GPUs, in order, each with the
# ranks whose kernels ran on it (3 launches each); energy = watts x the fitted span (1 %), the naive
# counter method's within 5 %;
# the total = the sum over the GPUs given (each once)
check_merged() {
    python3 - "$2" "$3" <<'PY' && ok "$1" || fail "$1"
import json, sys
d = json.load(open(sys.argv[1]))
want = [w.split(":") for w in sys.argv[2].split()]
gpus = d["gpus"]
assert [g["uuid"] for g in gpus] == [w[0] for w in want], [g["uuid"] for g in gpus]
total = 0.0
for g, (uuid, watts, ranks) in zip(gpus, want):
    span = g["fit_end_s"] - g["fit_start_s"]
    expect = float(watts) * span  # the scripted power over the span: independent of the estimator
    total += expect
    # counter_j: the naive counter method (reads at their own times) over a few seconds, which a read
    # late by up to a 100 ms update on a loaded machine moves by a few % (docs/methods.md, the fit)
    for key, tol in (("energy_j", 0.01), ("counter_j", 0.05)):
        err = g[key] / expect - 1
        print(f"  {uuid} {key} {g[key]:.3f} J, scripted {watts} W x {span:.3f} s = {expect:.3f} J ({100 * err:+.3f} %)")
        assert abs(err) < tol, (uuid, key, err)
    got = sorted((n["rank"], n["launches"]) for n in g["names"] if n["kind"] == "kernel")
    assert got == [(int(r), 3) for r in ranks.split(",")], (uuid, got)
t = d["total"]
print(f"  total {t['energy_j']:.3f} J, scripted {total:.3f} J over {t['gpus']} GPUs")
assert t["gpus"] == len(want) and abs(t["energy_j"] / total - 1) < 0.01
assert abs(t["energy_j"] - sum(g["energy_j"] for g in gpus)) < 1e-6 * t["energy_j"]
PY
}

# ---- one GPU per rank (each GPU's counter read meanwhile by scripts/gpu-mpi's reader, through pynvml)
LD_LIBRARY_PATH=$(dirname "$FAKE") python3 "$HERE/../../scripts/gpu/energy_log.py" --out energy.csv --period 0.005 &
logger=$!
for _ in $(seq 100); do [ "$(wc -l <energy.csv 2>/dev/null || echo 0)" -ge 3 ] && break; sleep 0.1; done # reading
mpi sh rank.sh --json >job.json 2>job.err || fail "mpirun, a GPU per rank: $(cat job.err)"
kill -TERM $logger
wait $logger || fail "scripts/gpu/energy_log.py (pynvml on the fake) failed"
[ -f truewatt-run.rank0.sqlite ] && [ -f truewatt-run.rank1.sqlite ] && [ ! -e truewatt-run.sqlite ] &&
    ok "one run file per rank" || fail "run files: $(ls)"
python3 - <<PY && ok "each run file records its rank, world size, host and GPU" || fail "the run files' rank facts"
import socket, sqlite3
for r, uuid in ((0, "$UUID0"), (1, "$UUID1")):
    db = sqlite3.connect(f"truewatt-run.rank{r}.sqlite")
    meta = dict(db.execute("SELECT key, value FROM meta"))
    assert (meta["rank"], meta["world_size"], meta["rank_variable"]) == (r, 2, "OMPI_COMM_WORLD_RANK"), meta
    assert meta["host"] == socket.gethostname(), meta["host"]
    assert [u for (u,) in db.execute("SELECT uuid FROM devices")] == [uuid]
PY
check_merged "a GPU per rank: each GPU its own power, each rank's kernels on its GPU, the total their sum" \
    job.json "$UUID0:300:0 $UUID1:500:1"
grep -q "truewatt run: rank 1 on .*: the run is in truewatt-run.rank1.sqlite; rank 0 prints the merged report" job.err &&
    ok "rank 1 says where its run is" || fail "rank 1's line: $(cat job.err)"
"$BIN" report --json truewatt-run.rank*.sqlite >report.json 2>err || fail "truewatt report of the two: $(cat err)"
python3 - <<'PY' && ok "truewatt report RUN RUN: the merged report again" || fail "truewatt report RUN RUN differs"
import json
a, b = json.load(open("job.json")), json.load(open("report.json"))
assert [g["energy_j"] for g in a["gpus"]] == [g["energy_j"] for g in b["gpus"]]
assert [r["label"] for r in b["runs"]] == ["rank 0", "rank 1"]
PY
"$BIN" report truewatt-run.rank1.sqlite truewatt-run.rank0.sqlite >report.txt 2>err &&
    grep -Eq "^total +2 GPUs" report.txt && grep -q "^rank 0 .*truewatt-run.rank0.sqlite" report.txt &&
    ok "the text report: ranks in order, a total row" || fail "text report: $(cat report.txt err)"

printf '0,%s\n1,%s\n' "$UUID0" "$UUID1" >ranks.csv
python3 "$HERE/../../scripts/gpu/mpi_check.py" --merged job.json --energy energy.csv --gpus ranks.csv >check.txt &&
    [ "$(grep -c ^PASS check.txt)" = 5 ] && ok "scripts/gpu-mpi's checks pass on the fake: $(tr '\n' ';' <check.txt)" ||
    fail "scripts/gpu/mpi_check.py: $(cat check.txt)"
printf '0,%s\n1,%s\n' "$UUID1" "$UUID0" >swapped.csv
python3 "$HERE/../../scripts/gpu/mpi_check.py" --merged job.json --energy energy.csv --gpus swapped.csv >check.txt
[ $? = 1 ] && [ "$(grep -c '^FAIL rank' check.txt)" = 2 ] && ok "scripts/gpu-mpi's check fails ranks on the wrong GPUs" ||
    fail "mpi_check.py with the GPUs swapped: $(cat check.txt)"

# ---- both ranks on GPU 0: counted once
rm -f truewatt-run.rank*
# (rank 1 alone records activity counters: the GPU's, in the merged report, are its, moved onto rank 0's timeline)
SHARED=1 PM_RANK=1 mpi -x SHARED -x PM_RANK sh rank.sh --json >shared.json 2>shared.err ||
    fail "mpirun, one GPU: $(cat shared.err)"
check_merged "both ranks on GPU 0: one GPU, counted once, both ranks' kernels on it" shared.json "$UUID0:300:0,1"
python3 - <<'PY' && ok "the merged report: GPU 0's activity counters from rank 1, given to the estimate" ||
import json, sqlite3
g = json.load(open("shared.json"))["gpus"][0]
db = sqlite3.connect("truewatt-run.rank1.sqlite")
n = db.execute("SELECT count(*) FROM pm_samples").fetchone()[0]
tables = {r[0] for r in sqlite3.connect("truewatt-run.rank0.sqlite").execute("SELECT name FROM sqlite_master")}
assert "pm_samples" not in tables, "rank 0 recorded activity counters"
a = g["activity_counters"]
assert n > 500 and a["recorded"] is True and a["samples"] == n, (n, a)
# the fake's samples cover under half of the kernels' time (run_activity_counters.sh): the estimator had
# them and said why it did not use them (no samples would give no activity_model reason at all)
m = g["activity_model"]
assert m == {"used": False, "why_not": "the samples cover no kernel name for 50 % of its time"}, m
PY
    fail "merged activity counters: $(python3 -c 'import json; g = json.load(open("shared.json"))["gpus"][0]; print(g.get("activity_counters"), g.get("activity_model"))')"
"$BIN" report --no-activity-counters truewatt-run.rank0.sqlite truewatt-run.rank1.sqlite >nopm.txt 2>err &&
    grep -q "^GPU $UUID0: activity counters in the estimate: not used (left out (--no-activity-counters))" nopm.txt &&
    grep -q "^GPU $UUID0: activity counters: [0-9]* samples every 1 ms" nopm.txt &&
    grep -q "^GPU $UUID0: activity counters: note: PM sampling raises" nopm.txt &&
    ok "the merged text report: the counters' lines; --no-activity-counters leaves them out" ||
    fail "merged text report's counter lines: $(grep -i activity nopm.txt; cat err)"
python3 -c 'import json,sys; g=json.load(open(sys.argv[1]))["gpus"][0]; assert g["sampled_by"] == ["rank 0", "rank 1"], g["sampled_by"]' \
    shared.json && ok "the shared GPU: sampled by both, its energy from rank 0's file" || fail "shared GPU's sampled_by"

# ---- a rank that never comes; torchrun's variables, -o with {rank}
RANK=0 WORLD_SIZE=2 LOCAL_RANK=0 CUDA_VISIBLE_DEVICES=1 INJECT_HOST_UUID=$HEX1 "$BIN" run --merge-wait 1 \
    -o 'job-{rank}.sqlite' -- "$HOST" - gpu >lone.txt 2>lone.err || fail "a lone rank 0: $(cat lone.err)"
[ -f job-0.sqlite ] && grep -q "1 of 2 ranks' run files were not complete after 1 s (e.g. job-1.sqlite)" lone.err &&
    grep -q "^warning: 1 run files for a job of 2 ranks" lone.txt && grep -Eq "^total +1 GPU " lone.txt &&
    ok "a missing rank: waited 1 s, said so, reported the rest" || fail "a missing rank: $(cat lone.err lone.txt)"

# ---- many GPUs in one run: each its own energy, the total their sum (each once)
printf 'name,start_s,duration_s,power_w\nload,0,1000,200\n' >p2.csv
UUID2=GPU-2c2c2c2c-0000-4000-8000-00000000cc02
TW_FAKE_NVML_DEVICES=3 TW_FAKE_NVML_UUIDS=$UUID0,$UUID1,$UUID2 TW_FAKE_NVML_SCENARIO=$T/p0.csv,$T/p1.csv,$T/p2.csv \
    INJECT_HOST_UUID=$HEX1 "$BIN" run --json -o three.sqlite -- "$HOST" - gpu >three.json 2>three.err ||
    fail "three GPUs: $(cat three.err)"
python3 - three.json <<'PY' && ok "three GPUs in one run: each its scripted power, the total their sum" || fail "three GPUs"
import json, sys
d = json.load(open(sys.argv[1]))
total = 0.0
for dev, watts in zip(d["devices"], (300, 500, 200)):
    e = dev["estimate"]
    span = e["fit_end_s"] - e["fit_start_s"]
    total += watts * span
    err = e["model_j"] / (watts * span) - 1
    print(f"  GPU {dev['index']}: {e['model_j']:.3f} J, scripted {watts} W x {span:.3f} s ({100 * err:+.3f} %)")
    assert abs(err) < 0.01
t = d["total"]
print(f"  total {t['energy_j']:.3f} J, scripted {total:.3f} J")
assert len(d["devices"]) == 3 and t["gpus"] == 3 and abs(t["energy_j"] / total - 1) < 0.01
PY

# ---- bad input
cp job-0.sqlite other.sqlite
"$BIN" report job-0.sqlite job-0.sqlite >out 2>err
[ $? -ne 0 ] && grep -q "job-0.sqlite is given twice" err && ok "one file twice: refused" || fail "twice: $(cat err)"
"$BIN" report job-0.sqlite other.sqlite >out 2>err
[ $? -ne 0 ] && grep -q "job-0.sqlite and other.sqlite are both rank 0" err &&
    ok "two files of one rank: refused, both named" || fail "one rank twice: $(cat err)"
OMPI_COMM_WORLD_RANK=2 OMPI_COMM_WORLD_SIZE=2 "$BIN" run -- true >out 2>err
[ $? -eq 2 ] && grep -q "OMPI_COMM_WORLD_RANK='2' with OMPI_COMM_WORLD_SIZE='2' is not a rank" err &&
    ok "a rank out of its job: refused" || fail "rank 2 of 2: $(cat err)"
exit $status
