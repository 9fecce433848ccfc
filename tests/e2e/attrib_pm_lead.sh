#!/usr/bin/env bash
# scripts/attrib-pm-lead on two synthetic runs whose truth is known: a GPU at 100 W, a kernel of 200 W
# above it in random bursts, and PM sampling's 30 W in three windows that begin 0.15 s (run a) and 0 s
# (run b) before the starts their run files record; the buffer is that power through an rc of 13.2 ms,
# 4 ms late, every 20 ms, with 0.5 W of noise. The scan must find 0.15 and 0.00, and the window's 30 W
# within 1 W; a run without its events is refused with the path.
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/script_common.sh" attrib_pm_lead
python3 -c 'import numpy' 2>/dev/null || { echo "SKIP: numpy is needed"; exit 77; }
script=$here/../../scripts/attrib-pm-lead
python3 - "$T" <<'PY'
import gzip, json, math, os, random, sqlite3, sys
T = sys.argv[1]
json.dump({"readings": [{"name": "power_buffer_w", "response": "rc", "capacitance_s": 0.0132, "delay_s": 0.004}]},
          open(os.path.join(T, "profile.json"), "w"))
for run, lead in (("a", 0.15), ("b", 0.0)):
    rng = random.Random(7)
    launches, t = [], 1.0
    while t < 13.0:  # bursts of 1-10 launches of 1 ms, gaps of 5-40 ms
        for _ in range(rng.randint(1, 10)):
            launches.append((t, t + 0.001))
            t += 0.00105
        t += rng.uniform(0.005, 0.040)
    wins = [(2.0, 3.2), (6.0, 7.2), (10.0, 11.2)]  # as recorded
    dt, tau, delay = 1e-4, 0.0132, 0.004
    n = int(15.0 / dt)
    p = [100.0] * n
    for a, b in launches:
        for i in range(int(a / dt), int(b / dt)):
            p[i] += 200.0
    for a, b in wins:
        for i in range(int((a - lead) / dt), int(b / dt)):
            p[i] += 30.0
    al, acc, y = 1 - math.exp(-dt / tau), 100.0, []
    for v in p:
        acc += (v - acc) * al
        y.append(acc)
    with gzip.open(os.path.join(T, run + ".full.syn.trace.csv.gz"), "wt") as f:
        f.write("t_s,power_buffer_w,power_buffer_w_t_s\n")
        for k in range(int(0.5 / 0.02), int(14.5 / 0.02)):
            ts = k * 0.02
            f.write("%.6f,%.3f,%.6f\n" % (ts, y[int((ts - delay) / dt)] + rng.gauss(0, 0.5), ts))
    with gzip.open(os.path.join(T, run + ".full.syn.events.csv.gz"), "wt") as f:
        f.write("name,start_s,end_s,kind\n")
        for a, b in launches:
            f.write("k_1ms,%.6f,%.6f,kernel\n" % (a, b))
    db = sqlite3.connect(os.path.join(T, run + ".full.syn.sqlite"))
    db.execute("CREATE TABLE pm_windows(device INTEGER, start_ns INTEGER, end_ns INTEGER)")
    db.executemany("INSERT INTO pm_windows VALUES(0, ?, ?)", [(int(a * 1e9), int(b * 1e9)) for a, b in wins])
    db.commit()
    db.close()
PY
python3 "$script" --profile "$T/profile.json" --out "$T/scan.txt" "$T/a.full.syn" "$T/b.full.syn" >"$T/out.txt" 2>&1 ||
  bad "it failed: $(cat "$T/out.txt")"
# the best lead, then the window's power within 1 W of its 30
grep -qE 'a\.full\.syn +.* 0\.15 +\(\+(29\.[0-9]|30\.[0-9])\)$' "$T/out.txt" || bad "run a: $(cat "$T/out.txt")"
grep -qE 'b\.full\.syn +.* 0\.00 +\(\+(29\.[0-9]|30\.[0-9])\)$' "$T/out.txt" || bad "run b: $(cat "$T/out.txt")"
head -1 "$T/scan.txt" | grep -q '^# provenance: command: scripts/attrib-pm-lead ' || bad "--out has no provenance line"
refused "a run without files" "$T/none.events.csv.gz: no such file" \
  python3 "$script" --profile "$T/profile.json" "$T/none"
[ "$fail" = 0 ] && echo "attrib_pm_lead: ok"
exit "$fail"
