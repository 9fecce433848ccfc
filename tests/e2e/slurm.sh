#!/usr/bin/env bash
# truewatt_spank.so in a real one-node Slurm cluster: Debian's munged,
# slurmctld and slurmd started here on the loopback, everything in a temp
# folder (munge key, slurm.conf, gres.conf with two fake GPU device files,
# plugstack.conf loading the plugin). The GPUs are the fake libnvidia-ml with
# a constant power per GPU (TW_FAKE_NVML_DEVICE_POWER_W=300,120) and device
# files numbered apart from NVML's order (TW_FAKE_NVML_MINORS=5,4: NVML GPU 0
# is /dev/nvidia5, GPU 1 /dev/nvidia4); gres.conf lists File=.../nvidia[4-5],
# so Slurm's GPU 0 (SLURM_JOB_GPUS=0) is /dev/nvidia4, NVML's GPU 1.
#   job A: sbatch --gres=gpu:1 --truewatt, a 3 s batch step: gets Slurm's GPU 0,
#          NVML's GPU 1, and must read 120 W x its time, on its UUID only;
#   job B: sbatch --gres=gpu:1 while A holds it, with an srun --truewatt
#          step: gets Slurm's GPU 1, NVML's GPU 0, and must read 300 W, never A's GPU;
#   job C: --truewatt=kernels: the task runs under `truewatt run` (a run file).
# Expected energies: the scripted power times the step's time (independently,
# also against the job script's own clock); the tolerance is the counter's
# 100 ms update period at each end: |E - P t| <= P x 0.1 s + 0.01 J.
# Needs root (slurmd starts jobs as their user); it FAILS when the daemons
# cannot start, printing their logs (TW_SLURM_TEST_OPTIONAL=1: skip instead).
# usage: slurm.sh PLUGIN TRUEWATT FAKE_NVML
set -uo pipefail
plugin=${1:-}
truewatt=${2:-}
fake=${3:-}
optional=${TW_SLURM_TEST_OPTIONAL:-0}

fail() {
  echo "FAIL: $*" >&2
  exit 1
}
cannot_run() {
  if [ "$optional" = 1 ]; then
    echo "SKIP: $*" >&2
    exit 77
  fi
  fail "$*"
}

[ -n "$plugin" ] && [ -f "$plugin" ] ||
  cannot_run "truewatt_spank.so was not built (install libslurm-dev: scripts/deps; see cmake's message)"
[ -x "$truewatt" ] && [ -f "$fake" ] || fail "usage: slurm.sh PLUGIN TRUEWATT FAKE_NVML"
for prog in munged slurmctld slurmd sbatch squeue sinfo; do
  command -v "$prog" >/dev/null 2>&1 || cannot_run "$prog is not installed (scripts/deps installs munge, slurmctld, slurmd, slurm-client)"
done
# slurmd must be root to start jobs: not root, the whole test runs again under passwordless sudo
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    exec sudo -n -E bash "$0" "$@"
  fi
  cannot_run "not root and no passwordless sudo: slurmd must run as root to start jobs"
fi

# unix sockets live in it (munge's, slurmstepd's spool/NODE/NODE_JOB.STEP): a path of at most 108
# bytes, so a deep build tree's temp folder gives way to /tmp
base=${TW_TMPDIR:-/tmp}
[ ${#base} -le 50 ] || base=/tmp
D=$(mktemp -d "$base/slurm.XXXXXX")
chmod 755 "$D"
pids=()
show_logs() {
  for f in "$D"/log/*; do
    [ -f "$f" ] || continue
    echo "---- $f (last 40 lines)" >&2
    tail -n 40 "$f" >&2
  done
}
cleanup() {
  local rc=$?
  if [ -n "${SLURM_CONF:-}" ] && [ -f "$SLURM_CONF" ]; then scancel --quiet --user="$(id -un)" >/dev/null 2>&1; fi
  for ((i = ${#pids[@]} - 1; i >= 0; i--)); do kill "${pids[$i]}" 2>/dev/null; done
  for p in "${pids[@]}"; do
    for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$p" 2>/dev/null
  done
  [ $rc -ne 0 ] && [ $rc -ne 77 ] && show_logs
  [ -n "${TW_KEEP:-}" ] || rm -rf "$D"
  exit $rc
}
trap cleanup EXIT
trap 'exit 1' INT TERM

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
# poll until a command succeeds, at most $1 seconds
wait_for() {
  local limit=$1
  shift
  for _ in $(seq $((limit * 10))); do
    "$@" >/dev/null 2>&1 && return 0
    sleep 0.1
  done
  return 1
}

# ---- munge: a fresh key, its socket in the temp folder
mkdir -p "$D/munge" "$D/state" "$D/spool/tw1" "$D/log" "$D/dev" "$D/out" "$D/work"
chmod 755 "$D/munge"
head -c 1024 /dev/urandom >"$D/munge/munge.key"
chmod 400 "$D/munge/munge.key"
# --force: the temp folder's parents may be group-writable (a build tree), which munged would refuse
munged -F --force --key-file="$D/munge/munge.key" --socket="$D/munge/sock" --pid-file="$D/munge/pid" \
  --log-file="$D/log/munged.log" --seed-file="$D/munge/seed" 2>>"$D/log/munged.log" &
pids+=($!)
wait_for 10 test -S "$D/munge/sock" || fail "munged did not start"

# ---- the fake GPUs: two device files (links to a character device, as gres wants), the fake NVML
ln -s /dev/null "$D/dev/nvidia4"
ln -s /dev/null "$D/dev/nvidia5"
ctld_port=$(free_port)
slurmd_port=$(free_port)
while [ "$slurmd_port" = "$ctld_port" ]; do slurmd_port=$(free_port); done
cat >"$D/slurm.conf" <<EOF
ClusterName=truewatt
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$D/munge/sock
CredType=cred/munge
StateSaveLocation=$D/state
SlurmdSpoolDir=$D/spool/%n
SlurmctldPidFile=$D/slurmctld.pid
SlurmdPidFile=$D/slurmd.pid
SlurmctldLogFile=$D/log/slurmctld.log
SlurmdLogFile=$D/log/slurmd.log
SlurmdDebug=verbose
SlurmctldDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SwitchType=switch/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
GresTypes=gpu
ReturnToService=2
SlurmdParameters=config_overrides
PlugStackConfig=$D/plugstack.conf
MessageTimeout=5
MailProg=/bin/true
NodeName=tw1 NodeAddr=127.0.0.1 CPUs=2 Gres=gpu:2 State=UNKNOWN
PartitionName=p Nodes=tw1 Default=YES MaxTime=INFINITE State=UP
EOF
{ echo "# the node's GPUs, in Slurm's order"; echo "NodeName=tw1 Name=gpu File=$D/dev/nvidia[4-5]"; } >"$D/gres.conf"
echo "required $plugin output=file:$D/out/%j.truewatt output=dir output=admincomment" >"$D/plugstack.conf"
export SLURM_CONF=$D/slurm.conf

slurmctld -D -i -f "$SLURM_CONF" >>"$D/log/slurmctld.stderr" 2>&1 &
pids+=($!)
env TW_NVML_LIBRARY="$fake" TW_FAKE_NVML_DEVICES=2 TW_FAKE_NVML_DEVICE_POWER_W=300,120 TW_FAKE_NVML_MINORS=5,4 \
  slurmd -D -N tw1 -f "$SLURM_CONF" >>"$D/log/slurmd.stderr" 2>&1 &
pids+=($!)
node_idle() { [ "$(sinfo -h -n tw1 -o %t 2>/dev/null)" = idle ]; }
wait_for 20 node_idle || fail "the node did not come up idle: sinfo says '$(sinfo -h -o '%t %E' 2>&1)'"
echo "slurm up: slurmctld :$ctld_port, slurmd :$slurmd_port"

cd "$D/work" || fail "no work folder"
job_state() { squeue -h -j "$1" -o %T 2>/dev/null; }
running() { [ "$(job_state "$1")" = RUNNING ]; }
a=$(sbatch --parsable --gres=gpu:1 --truewatt -o "$D/work/a.out" \
  --wrap 'date +%s.%N >a.t0; sleep 3; date +%s.%N >a.t1') || fail "sbatch job A"
wait_for 10 running "$a" || fail "job A did not start (state: $(job_state "$a"))"
b=$(sbatch --parsable --gres=gpu:1 -o "$D/work/b.out" \
  --wrap 'srun --truewatt --gres=gpu:1 sleep 2') || fail "sbatch job B"
wait_for 10 running "$b" || fail "job B did not start (state: $(job_state "$b"))"
done_() { [ -z "$(squeue -h -j "$a,$b" 2>/dev/null)" ]; }
wait_for 30 done_ || fail "jobs A and B did not end: $(squeue 2>&1)"
# the task's own environment comes from sbatch's: truewatt run in it needs the fake NVML too
c=$(TW_NVML_LIBRARY="$fake" TW_FAKE_NVML_DEVICES=2 TW_FAKE_NVML_DEVICE_POWER_W=300,120 TW_FAKE_NVML_MINORS=5,4 \
  sbatch --parsable --gres=gpu:1 --truewatt=kernels -o "$D/work/c.out" --wrap 'echo kernels-mode-ran') ||
  fail "sbatch job C"
done_c() { [ -z "$(squeue -h -j "$c" 2>/dev/null)" ]; }
wait_for 20 done_c || fail "job C did not end: $(squeue 2>&1)"

for f in a.out b.out c.out; do
  echo "---- $f"
  cat "$D/work/$f"
done
for j in "$a" "$b" "$c"; do
  echo "---- out/$j.truewatt"
  cat "$D/out/$j.truewatt" 2>/dev/null
done

for j in "$a" "$b"; do
  scontrol show job "$j" | grep -o 'AdminComment=.*' >"$D/out/$j.admin"
  echo "---- job $j: $(cat "$D/out/$j.admin")"
done

# ---- the checks (numbers worked out here from the scripted powers)
python3 - "$D" "$a" "$b" "$c" <<'EOF' || exit 1
import csv, os, sys
d, a, b, c = sys.argv[1:]
P = {0: 300.0, 1: 120.0}  # by NVML index
UUID = {0: "GPU-fake-0000", 1: "GPU-fake-0001"}
GA, GB = 1, 0  # the NVML GPUs of Slurm's GPU 0 (/dev/nvidia4: minor 4) and 1 (/dev/nvidia5)
bad = []
def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond: bad.append(what)
def rows(path):
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return list(csv.DictReader(f))
def energy_ok(r, gpu, what):
    t, e = float(r["time_s"]), float(r["energy_j"])
    exp = P[gpu] * t
    tol = P[gpu] * 0.1 + 0.01
    check(abs(e - exp) <= tol, f"{what}: {e:.3f} J vs {P[gpu]:g} W x {t:.3f} s = {exp:.3f} J (+-{tol:.2f})")

ra = rows(f"{d}/out/{a}.truewatt")
check(len(ra) == 1 and ra[0]["step"] == "batch", f"job A: one row, the batch step ({len(ra)} rows)")
if ra:
    r = ra[0]
    check(r["gpu_index"] == str(GA) and r["gpu_uuid"].startswith(UUID[GA]),
          f"job A: Slurm's GPU 0 is NVML's GPU {GA} ({r['gpu_index']} {r['gpu_uuid']})")
    check(r["node"] == "tw1", f"job A: on Slurm's node tw1 ({r['node']})")
    energy_ok(r, GA, f"job A, GPU {GA}")
    t0, t1 = (float(open(f"{d}/work/a.{k}").read()) for k in ("t0", "t1"))
    t = float(r["time_s"])
    check(t1 - t0 <= t <= t1 - t0 + 1.0, f"job A: step time {t:.3f} s covers the script's {t1 - t0:.3f} s (+1 s)")
    e = float(r["energy_j"])
    check(P[GA] * (t1 - t0) - 0.1 * P[GA] - 0.01 <= e <= P[GA] * (t1 - t0 + 1.1),
          f"job A: {e:.1f} J against the script's own clock: {P[GA]:g} W x {t1 - t0:.3f} s = {P[GA] * (t1 - t0):.1f} J")
    check(r["reading"] == "energy_j" and r["method"] == "energy counter difference", "job A: the energy counter used")
rd = rows(f"{d}/work/truewatt-{a}.csv")
check(rd == ra and len(rd) == 1, "output=dir: truewatt-A.csv in the submit directory has the same rows")

rb = rows(f"{d}/out/{b}.truewatt")
steps = sorted(r["step"] for r in rb)
check(steps == ["0", "batch"], f"job B: rows for the batch step and step 0 ({steps})")
for r in rb:
    check(r["gpu_index"] == str(GB) and r["gpu_uuid"].startswith(UUID[GB]),
          f"job B step {r['step']}: NVML's GPU {GB} only ({r['gpu_index']} {r['gpu_uuid']})")
    energy_ok(r, GB, f"job B step {r['step']}, GPU {GB}")
check(not any(UUID[GA] in open(f"{d}/out/{b}.truewatt").read().splitlines()[k] for k in range(1, len(rb) + 1)),
      "job B never sees job A's GPU's UUID")

ea, eb = open(f"{d}/work/a.out").read(), open(f"{d}/work/b.out").read()
check(f"truewatt: job {a} step batch" in ea and UUID[GA] in ea, "--truewatt: job A's stderr has its summary")
check(f"truewatt: job {b} step 0" in eb and UUID[GB] in eb and UUID[GA] not in eb,
      "srun --truewatt: step 0's summary reaches srun's stderr, its GPU only")
check(f"truewatt: job {b} step batch" not in eb, "job B's batch step (no --truewatt) prints nothing")

aa, ab = open(f"{d}/out/{a}.admin").read(), open(f"{d}/out/{b}.admin").read()
check("truewatt batch: " + UUID[GA] in aa, "output=admincomment: job A's AdminComment names its GPU")
check("truewatt batch: " + UUID[GB] in ab and "truewatt 0: " + UUID[GB] in ab and UUID[GA] not in ab,
      "output=admincomment: job B's has both steps on its GPU, never A's")

ec = open(f"{d}/work/c.out").read()
run = f"{d}/work/truewatt-{c}.batch.0.sqlite"
check("kernels-mode-ran" in ec and os.path.exists(run), f"--truewatt=kernels: the task ran under truewatt run ({os.path.basename(run)})")
sys.exit(1 if bad else 0)
EOF
echo "PASS: the SPANK plugin in slurm: each job reads its own GPU's energy"
