#!/usr/bin/env bash
# A GPU shared by a measured process and one that is not, end to end with the fake NVML
# (docs/exporter.md#shared-gpus): the processes' energies add up to the GPU's, never more.
#   - the fake GPU draws a constant 400 W (TW_FAKE_NVML_DEVICE_POWER_W: the exporter's fake and
#     the run's draw the same); pid 999999 is in NVML's per-process samples at 80 % SM all along;
#   - a program under `truewatt run` (run_fake_app.py busy: 27 kernels of 0.1 s back to back
#     from 0.3 s, 2.7 s) joins it at 50 % SM; the exporter is scraped before, every 0.4 s
#     while it runs, and after;
#   - expected, from the scripted power alone: the measured process 400 W x 2.7 s = 1080 J
#     (3 %), exactly its run's report; while it runs the other's estimate is held (constant);
#     between the scrape before and the one after, the GPU's energy is 400 W x the time between
#     the two energy samples' timestamps (within the counter's 0.1 s updates at both ends: 2 x 40
#     J), and the two processes together are that (the other's 80 % covers what the measured one
#     leaves). Before the shared accounting, the other got its 80 % of the GPU's energy beside the
#     measured process's 100 %: ~50 % more.
# usage: exporter_shared.sh BIN FAKE_LIBNVIDIA_ML
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/run_common.sh" exporter-shared "$@"
cd "$T" || exit 2
status=0
fail() { echo "FAIL: $*"; status=1; }
ok() { echo "ok: $*"; }
command -v curl >/dev/null || { echo "FAIL: curl is missing (Debian: curl)"; exit 1; }

export TW_PROCESS_DIR=$T/procs TW_PROFILE_DIR=$T/no-profiles TW_FAKE_NVML_PROCESSES=@$T/nvml-procs.txt
export TW_FAKE_NVML_DEVICE_POWER_W=400
printf '0:999999:80\n' >nvml-procs.txt
"$BIN" exporter --listen 127.0.0.1:0 --processes 2>exp.log &
EXP=$!
trap 'kill $EXP 2>/dev/null; rm -rf "$T"' EXIT
ADDR=
for _ in $(seq 100); do
    ADDR=$(grep -o 'http://[^/]*' exp.log | head -1 | cut -c8-)
    [ -n "$ADDR" ] && break
    sleep 0.05
done
[ -n "$ADDR" ] || { echo "FAIL: the exporter did not start: $(cat exp.log)"; exit 1; }

# scrape NAME: the page into NAME.txt
scrape() { curl -sf "http://$ADDR/metrics" >"$1.txt" || fail "scrape $1"; }
sleep 1.2 # the counter read twice, the power's window filled
scrape before
cat >app.sh <<EOF
printf '0:999999:80,0:%s:50\n' "\$\$" >"$T/nvml-procs.txt"
echo "\$\$" >"$T/app.pid"
exec python3 "$HERE/run_fake_app.py" busy 27 0.3 0.1 0.1
EOF
TW_RUN_EXPORT_T0_TO_FAKE=1 "$BIN" run --json -o run.sqlite -- sh app.sh >run.json 2>run.err &
RUN=$!
i=0
while kill -0 $RUN 2>/dev/null; do
    sleep 0.4
    [ -s app.pid ] && kill -0 $RUN 2>/dev/null || continue
    scrape "during$((i += 1))"
    # kept when its report still says running after the scrape (then it did during it)
    grep -qs "^state.running" procs/*.twproc || rm -f "during$i.txt"
done
wait $RUN || fail "truewatt run: $(cat run.err)"
scrape after
python3 - "$(cat app.pid)" run.json <<'PY' && ok "the shared GPU's energy: measured + estimated = the GPU's" || status=1
import glob, json, sys

app, W = sys.argv[1], 400.0
rep = json.load(open(sys.argv[2]))["devices"][0]["estimate"]


def value(page, name, pid, source):
    for line in open(page):
        if line.startswith(name + "{") and f'pid="{pid}"' in line and f'source="{source}"' in line:
            return float(line.rsplit("} ", 1)[1].split()[0])
    return None


bad = []
def check(cond, what):
    print(("  ok: " if cond else "FAIL: ") + what)
    if not cond:
        bad.append(what)


E = "truewatt_process_energy_joules_total"
during = sorted(glob.glob("during*.txt"), key=lambda p: int(p[6:-4]))
m = value("after.txt", E, app, "truewatt run")
want_m = W * 27 * 0.1  # independent: the scripted power while its kernels ran
check(m is not None and abs(m / want_m - 1) < 0.03, f"measured {m} J vs the scripted {want_m:.1f} J (3 %)")
check(m is not None and abs(m - rep["process_energy_j"]) <= 1e-6 * m,
      f"measured = its run's report {rep['process_energy_j']} J")
o0, o1 = value("before.txt", E, 999999, "estimate"), value("after.txt", E, 999999, "estimate")
held = [value(p, E, 999999, "estimate") for p in during]
check(len(held) >= 3 and all(h == o0 for h in held),
      f"the other's estimate held while the measured run goes on: {o0} J, then {held}")
check(all(value(p, E, app, "estimate") is None for p in during + ["after.txt"]), "never an estimate for the measured pid")


def gpu(page):
    for line in open(page):
        if line.startswith("truewatt_gpu_energy_joules_total{"):
            value, ts = line.rsplit("} ", 1)[1].split()
            return float(value), int(ts) / 1e3
    return None, None


(g0, t0), (g1, t1) = gpu("before.txt"), gpu("after.txt")
want, tol = W * (t1 - t0), 2 * W * 0.1 + 2 * W * 1e-3  # the counter's 0.1 s updates, the ms timestamps
check(abs((g1 - g0) - want) <= tol, f"the GPU's counter over the scrapes {g1 - g0:.1f} J = 400 W x {t1 - t0:.3f} s "
      f"= {want:.1f} J ({tol:.1f} J)")
total = (o1 - o0) + (m or 0)
check(abs(total - want) <= tol, f"the processes over the scrapes {total:.1f} J = the GPU's {want:.1f} J ({tol:.1f} J; "
      f"the other {o1 - o0:.1f} J, the measured {m} J)")
check(total <= g1 - g0 + 1e-6, f"the processes {total:.3f} J never more than the GPU's counter {g1 - g0:.3f} J")
sys.exit(1 if bad else 0)
PY
kill -TERM $EXP && wait $EXP || fail "the exporter did not exit cleanly"
EXP=
exit $status
