#!/usr/bin/env bash
# truewatt run on a real H100's power: the fake libnvidia-ml replays the energy
# counter of a trace recorded on one (TW_FAKE_NVML_REPLAY; results/h100/attrib/raw/
# steady.stream_1ms.trace.csv.gz, 58 to 423 W), not the simulator's model that
# the code under test shares. The energy truewatt reports over its fit span (its
# model, the counter's difference, the sample buffer's integral) is checked
# against the same span's energy worked out here from the trace's own counter
# readings (linear between them, the trace's first reading at the run's t = 0):
# each within 1 %.
#
# usage: run_replay.sh BIN FAKE_LIBNVIDIA_ML
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/run_common.sh" run-replay "$@"
cd "$T" || exit 2
TRACE=$HERE/../../results/h100/attrib/raw/steady.stream_1ms.trace.csv.gz
[ -f "$TRACE" ] || { echo "FAIL: the recorded trace $TRACE is missing"; exit 1; }
python3 -c 'import gzip, shutil, sys; shutil.copyfileobj(gzip.open(sys.argv[1]), open(sys.argv[2], "wb"))' \
    "$TRACE" trace.csv || exit 2
export TW_FAKE_NVML_REPLAY=$T/trace.csv TW_RUN_EXPORT_T0_TO_FAKE=1 TW_PROFILE_DIR=$T/profiles
mkdir -p profiles
"$BIN" run --json --no-inject -o r.sqlite -- sleep 6 >run.json 2>err || { cat err; exit 1; }
python3 - trace.csv run.json <<'PY' || exit 1
import bisect, json, sys
t, e, head = [], [], None
for line in open(sys.argv[1]):
    if line.startswith("#"):
        continue
    f = line.rstrip("\n").split(",")
    if head is None:
        head, ie, it = f, f.index("energy_j"), f.index("energy_j_t_s")
        continue
    if f[ie] and f[it]:
        t.append(float(f[it]))
        e.append(float(f[ie]))
t = [x - t[0] for x in t]
e = [x - e[0] for x in e]

def energy(x):  # the recorded counter's rise over the trace's first x seconds
    i = min(bisect.bisect_right(t, x) - 1, len(t) - 2)
    return e[i] + (x - t[i]) / (t[i + 1] - t[i]) * (e[i + 1] - e[i])

est = json.load(open(sys.argv[2]))["devices"][0]["estimate"]
a, b = est["fit_start_s"], est["fit_end_s"]
assert b < t[-1], (b, t[-1])  # inside the trace: no loop
want = energy(b) - energy(a)
p = [(e[i] - e[i - 1]) / (t[i] - t[i - 1]) for i in range(1, len(t)) if t[i] <= b]
print(f"trace: {min(p):.0f} to {max(p):.0f} W; fit span {a:.3f} .. {b:.3f} s: {want:.3f} J from the trace's counter")
bad = 0
for what, got in (("model", est["model_j"]), ("energy counter", est["naive_methods_j"]["energy_counter"]),
                  ("buffer integral", est["naive_methods_j"]["buffer_integral"])):
    err = 100 * (got / want - 1)
    ok = abs(err) < 1
    bad += not ok
    print(f"{'ok' if ok else 'FAIL'}: {what}: {got:.3f} J ({err:+.3f} %, within 1 %)")
sys.exit(bad > 0)
PY
