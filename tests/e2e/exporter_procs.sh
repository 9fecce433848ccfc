#!/usr/bin/env bash
# Per-process energy from `truewatt run` to a running exporter, end to end on
# the loopback with the fake NVML (docs/exporter.md#per-process-energy):
#   - `truewatt exporter --processes` makes the report folder (mode 1777);
#   - a program under `truewatt run` (run_fake_app.py, the injection's stand-in:
#     "gemm" 400 W in 1.0..1.6 s, "relu" 250 W in 2.0..2.3 s over the fake's
#     120 W idle; the exporter's fake plays the same scenario on the same clock,
#     TW_FAKE_NVML_T0_MONO_NS, as one GPU would) is in NVML's per-process samples (50 % SM) beside another
#     process (pid 999999, 20 %): while it runs, the exporter publishes no
#     estimate for it (its report says "running"), only for the other; once it
#     ends, source="truewatt run" with its energy: the scripted power above
#     the idle level (280 W x 0.6 s + 130 W x 0.3 s = 207 J) as
#     truewatt_process_active_energy_joules_total, that plus the idle level
#     over the time its kernels and copies ran (120 W x 0.92 s) as
#     truewatt_process_energy_joules_total (3 %), the job from SLURM_JOB_ID.SLURM_STEP_ID;
#   - a report whose writer was killed (pid 777777's): ignored and removed, its
#     process estimated; a malformed report: said on stderr (file and line), the
#     rest served; a finished report older than 10 minutes: removed;
#   - the exporter restarted: the same value again (nothing counted twice, nothing lost).
# usage: exporter_procs.sh BIN FAKE_LIBNVIDIA_ML
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/run_common.sh" exporter-procs "$@"
cd "$T" || exit 2
status=0
fail() { echo "FAIL: $*"; status=1; }
ok() { echo "ok: $*"; }
command -v curl >/dev/null || { echo "FAIL: curl is missing (Debian: curl)"; exit 1; }

export TW_PROCESS_DIR=$T/procs TW_PROFILE_DIR=$T/no-profiles TW_FAKE_NVML_PROCESSES=@$T/nvml-procs.txt
printf '0:777777:10\n' >nvml-procs.txt
printf 'name,start_s,duration_s,power_w\ngemm,1.0,0.6,400\nrelu,2.0,0.3,250\n' >scenario.csv
EXP=

# set_clock S: the fakes' time 0 (the exporter's and the run's: one GPU's power) S seconds from now
set_clock() {
    TW_FAKE_NVML_T0_MONO_NS=$(python3 -c 'import sys, time; print(time.monotonic_ns() + int(float(sys.argv[1]) * 1e9))' "$1")
    export TW_FAKE_NVML_T0_MONO_NS
}
# until_clock S: sleeps until the fakes' time S (fails when it is past: the exporter started too slowly)
until_clock() {
    python3 -c 'import os, sys, time
left = int(os.environ["TW_FAKE_NVML_T0_MONO_NS"]) / 1e9 + float(sys.argv[1]) - time.monotonic_ns() / 1e9
time.sleep(max(left, 0)); sys.exit(left < 0)' "$1" || fail "the exporter took longer to start than the test allows"
}

# start_exporter LOG: the exporter in the background, its address in ADDR
start_exporter() {
    "$BIN" exporter --listen 127.0.0.1:0 --processes 2>"$1" &
    EXP=$!
    ADDR=
    for _ in $(seq 100); do
        ADDR=$(grep -o 'http://[^/]*' "$1" | head -1 | cut -c8-)
        [ -n "$ADDR" ] && return 0
        kill -0 "$EXP" 2>/dev/null || break
        sleep 0.05
    done
    fail "the exporter did not start: $(cat "$1")"
    exit 1
}
stop_exporter() { kill -TERM "$EXP" 2>/dev/null && wait "$EXP"; EXP=; }
# scrape PAGE: the metrics into PAGE once the exporter has its GPU's first energy (before it, it
# takes no report: on a loaded machine the first reading can come seconds after the start)
scrape() {
    for _ in $(seq 200); do
        curl -sf "http://$ADDR/metrics" >"$1" && grep -q '^truewatt_gpu_energy_joules_total{' "$1" && return 0
        sleep 0.05
    done
    return 1
}
trap '[ -n "$EXP" ] && kill "$EXP" 2>/dev/null; rm -rf "$T"' EXIT

# sample NAME PID SOURCE PAGE: the value of NAME{pid=PID,source=SOURCE} on PAGE ("" when absent)
sample() {
    grep "^$1{" "$4" | grep "pid=\"$2\"" | grep "source=\"$3\"" | sed 's/.*} //' | head -1
}

export TW_FAKE_NVML_SCENARIO=$T/scenario.csv
set_clock 4 # the exporter starts before -0.3 s: 4.3 s even on a loaded machine
start_exporter exp1.log
[ "$(stat -c %a procs 2>/dev/null)" = 1777 ] && ok "the exporter made the report folder, mode 1777" ||
    fail "report folder: $(stat -c %a procs 2>&1)"

# a report whose writer is gone (a truewatt run killed with -9), a malformed one, an old finished one
sh -c 'exit 0' &
dead=$!
wait $dead
printf 'truewatt-process 1\nwriter\t%s\t1\npid\t777777\ncommand\tkilled\njob\t\nstate\trunning\ngpu\tGPU-fake-0000-0000-0000-000000000000\tnan\tnan\n' \
    "$dead" >procs/1-1.twproc
printf 'truewatt-process 1\nwriter\t1\t1\npid\t12\nstate\tsleeping\n' >procs/bad.twproc
printf 'truewatt-process 1\nwriter\t1\t1\npid\t13\ncommand\told\njob\t\nstate\tdone\ngpu\tGPU-fake-0000-0000-0000-000000000000\t5\t1\n' \
    >procs/old.twproc
touch -d '20 minutes ago' procs/old.twproc

# the measured program: writes its own pid into the fake's process list (50 % SM), then runs
cat >app.sh <<EOF
printf '0:%s:50,0:999999:20,0:777777:10\n' "\$\$" >"$T/nvml-procs.txt"
echo "\$\$" >"$T/app.pid"
exec python3 "$HERE/run_fake_app.py" kernels
EOF
until_clock -0.3
SLURM_JOB_ID=4242 SLURM_STEP_ID=0 "$BIN" run --json -o run.sqlite --perfetto run.perfetto-trace -- sh app.sh >run.json 2>run.err &
RUN=$!
for _ in $(seq 100); do [ -s app.pid ] && break; sleep 0.05; done
APP=$(cat app.pid 2>/dev/null)
sleep 1
scrape during.txt || fail "scrape during the run"
[ -n "$APP" ] && grep -q "pid=\"$APP\"" during.txt && fail "the measured pid $APP is published while it runs" ||
    ok "while it runs, the measured pid ${APP:-?} has no estimate"
[ -n "$(sample truewatt_process_energy_joules_total 999999 estimate during.txt)" ] &&
    ok "the other process is estimated" || fail "no estimate for pid 999999: $(grep process_energy during.txt)"
[ -n "$(sample truewatt_process_energy_joules_total 777777 estimate during.txt)" ] && [ ! -e procs/1-1.twproc ] &&
    ok "a killed run's report is removed and its process estimated" || fail "the killed run's report"
[ ! -e procs/old.twproc ] && ! grep -q 'pid="13"' during.txt && ok "an old finished report is removed" ||
    fail "the old report is still there"
grep -q "bad.twproc: line 4: state: give running or done" exp1.log && ok "a malformed report is named, file and line" ||
    fail "malformed report: $(cat exp1.log)"

wait $RUN || fail "truewatt run: $(cat run.err)"
scrape after.txt || fail "scrape after the run"
e=$(sample truewatt_process_energy_joules_total "$APP" "truewatt run" after.txt)
a=$(sample truewatt_process_active_energy_joules_total "$APP" "truewatt run" after.txt)
python3 - "$e" "$a" run.json <<'PY' && ok "the measured process's energy" || fail "the measured process's energy"
import json, sys
e, a = float(sys.argv[1] or "nan"), float(sys.argv[2] or "nan")
d = json.load(open(sys.argv[3]))["devices"][0]["estimate"]
# independent: the scenario's power above the fake's 120 W idle, and the idle level while the kernels ran
want_a = (400 - 120) * 0.6 + (250 - 120) * 0.3
want_e = want_a + 120 * (0.6 + 0.3 + 0.02)
print(f"  active {a:.3f} J (scripted {want_a:.3f} J, {100 * (a / want_a - 1):+.2f} %); "
      f"energy {e:.3f} J (scripted {want_e:.3f} J, {100 * (e / want_e - 1):+.2f} %)")
assert abs(a / want_a - 1) < 0.03 and abs(e / want_e - 1) < 0.03
# and exactly what the run's own report says its kernels and copies drew (the exporter only publishes)
assert abs(a - (d["kernels_j"] + d["copies_j"])) < 1e-6 * a, (a, d["kernels_j"], d["copies_j"])
PY
grep -q "pid=\"$APP\".*job=\"4242.0\",source=\"truewatt run\"" after.txt && ok "labelled with the Slurm job and step" ||
    fail "job label: $(grep "pid=\"$APP\"" after.txt)"
[ "$(grep -c "pid=\"$APP\"" after.txt)" = 2 ] && ok "no estimate beside the measurement" ||
    fail "pid $APP: $(grep "pid=\"$APP\"" after.txt)"

stop_exporter
start_exporter exp2.log
scrape restart.txt || fail "scrape after the restart"
e2=$(sample truewatt_process_energy_joules_total "$APP" "truewatt run" restart.txt)
[ -n "$e" ] && [ "$e2" = "$e" ] && ok "after a restart of the exporter, the same $e J" || fail "after restart: '$e2' vs '$e'"

# A GPU kept busy from start to end at 650 W (27 kernels of 99 ms every 100 ms from 0.3 s to 3.0 s, when the program ends; the fake's
# 700 W limit; the fake's profile, whose active-idle level is the estimator's prior): the estimator cannot
# see the baseline under the kernels apart from their power (as on an H100 at its power limit,
# results/h100/exporter-procs); the process is charged the GPU's energy while its kernels ran all the
# same: the scripted 650 W x 27 x 0.099 s (3 %).
N=27 START=0.3 PERIOD=0.1 DUR=0.099 W=650
python3 -c "import sys; n, s, p, d, w = sys.argv[1:]
print('name,start_s,duration_s,power_w')
for i in range(int(n)): print(f'gemm,{float(s) + i * float(p):.6f},{d},{w}')" $N $START $PERIOD $DUR $W >busy.csv
cat >busy.sh <<EOF
echo "\$TW_FAKE_NVML_T0_MONO_NS" >"$T/busy.t0"
echo "\$\$" >"$T/busy.pid"
exec python3 "$HERE/run_fake_app.py" busy $N $START $PERIOD $DUR
EOF
# the run's clock is the fakes' (the run's t0); the exporter (the GPU's next scenario, on that
# clock) starts once the run has ended: a run that began before it keeps its report's energy
stop_exporter
export TW_FAKE_NVML_SCENARIO=$T/busy.csv TW_FAKE_NVML_POWER_LIMIT_W=660
unset TW_FAKE_NVML_T0_MONO_NS
TW_RUN_EXPORT_T0_TO_FAKE=1 "$BIN" run --profile "$HERE/../data/profile_fake_h100.json" --json -o busy.sqlite \
    -- sh busy.sh >busy.json 2>busy.err || fail "truewatt run (busy): $(cat busy.err)"
TW_FAKE_NVML_T0_MONO_NS=$(cat busy.t0) start_exporter exp3.log
BUSY=$(cat busy.pid 2>/dev/null)
scrape busy.txt || fail "scrape after the busy run"
eb=$(sample truewatt_process_energy_joules_total "$BUSY" "truewatt run" busy.txt)
python3 - "$eb" busy.json $N $DUR $W <<'PY' && ok "a process keeping the GPU busy: the GPU's energy while it ran" ||
import json, sys
e, n, dur, w = float(sys.argv[1] or "nan"), int(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5])
d = json.load(open(sys.argv[2]))["devices"][0]["estimate"]
want = w * n * dur  # independent: the scenario's power while its kernels ran
print(f"  energy {e:.3f} J (scripted {want:.3f} J, {100 * (e / want - 1):+.2f} %); the run's model "
      f"{d['conservation_pct']:+.2f} % of the counter, {d['names_at_bound']} name(s) at the bound")
assert abs(e / want - 1) < 0.03
PY
    fail "a process keeping the GPU busy"
stop_exporter
exit $status
