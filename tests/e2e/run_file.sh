#!/usr/bin/env bash
# The run file (docs/runfile.md) against the fake libnvidia-ml:
#   - `truewatt report RUN --json` gives the JSON `truewatt run --json` printed
#     (all but files.perfetto, which report writes only when asked), and each
#     report is kept in the file's reports table;
#   - `report --profile` recomputes with another profile: the fake's own
#     profile makes each kernel exact to 1 % of (P - 120 W) x duration, the
#     scenario's numbers, where the run without a profile was not held to that;
#   - `export --csv DIR` writes trace.csv and events.csv with the columns of the
#     sampler's trace and of the injection library's events file, and
#     `truewatt analyze` reads them, and the run file itself; the events
#     round-trip exactly (ns);
#   - kill -9 of truewatt (and of the program) mid-run: the file passes
#     SQLite's integrity check, holds the samples and kernels up to its last
#     commit (commits every 0.5 s: within 2.5 s of the kill, room for a loaded
#     2-core CI machine), and reports them all.
#
# usage: run_file.sh BIN FAKE_LIBNVIDIA_ML
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/run_common.sh" run-file "$@"
cd "$T" || exit 2
status=0
fail() { echo "FAIL: $*"; status=1; }
ok() { echo "ok: $*"; }

printf 'name,start_s,duration_s,power_w\ngemm,1.0,0.6,400\nrelu,2.0,0.3,250\n' >scenario.csv
export TW_FAKE_NVML_SCENARIO=$T/scenario.csv TW_RUN_EXPORT_T0_TO_FAKE=1
export TW_INJECT_LIBRARY=$T/none.so # the stand-in writes the timeline
export TW_PROFILE_DIR=$T/profiles   # no profile: the run uses none
mkdir -p "$TW_PROFILE_DIR" || exit 2

# ---- run, then report: the same JSON
"$BIN" run --json -o r.sqlite --perfetto p.json -- python3 "$HERE/run_fake_app.py" kernels >run.json 2>err ||
    { cat err; exit 1; }
[ -s r.sqlite ] && [ ! -e r.sqlite.events.csv ] && ok "one run file, the events file imported and removed" ||
    fail "files: $(ls)"
"$BIN" report r.sqlite --json >report.json 2>err || fail "report: $(cat err)"
python3 - run.json report.json r.sqlite <<'PY' && ok "report RUN --json is run's JSON; both kept in reports" || fail "report differs"
import json, sqlite3, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
assert a["files"] == {"run": "r.sqlite", "perfetto": "p.json"} and b["files"] == {"run": "r.sqlite", "perfetto": None}
del a["files"], b["files"]
assert a == b, [k for k in a if a[k] != b.get(k)]
kept = [json.loads(j) for (j,) in sqlite3.connect(sys.argv[3]).execute("SELECT json FROM reports ORDER BY id")]
assert len(kept) == 2 and {k.pop("files")["perfetto"] for k in kept} == {"p.json", None} and kept[0] == a == kept[1]
PY
"$BIN" report r.sqlite >report.txt 2>err && grep -q '^gemm  *kernel  *1 ' report.txt && grep -q '^  run  *r.sqlite' report.txt &&
    ok "report RUN: the text report" || fail "text report: $(cat report.txt err)"

# ---- another profile, offline
"$BIN" report r.sqlite --profile "$HERE/../data/profile_fake_h100.json" --json >prof.json 2>err ||
    fail "report --profile: $(cat err)"
python3 - prof.json <<'PY' && ok "report --profile: the fake's profile, each kernel within 1 %" || fail "report --profile"
import json, sys
dev = json.load(open(sys.argv[1]))["devices"][0]
assert dev["profile"]["status"] == "model", dev["profile"]
k = {x["name"]: x for x in dev["names"]}
for name, p, dur in (("gemm", 400, 0.6), ("relu", 250, 0.3)):
    want = (p - 120) * dur
    err = 100 * (k[name]["energy_j"] / want - 1)
    print(f"  {name}: {k[name]['energy_j']:.3f} J, scenario {want:.3f} J ({err:+.3f} %)")
    assert abs(err) < 1, name
PY

# ---- export --csv, then analyze
"$BIN" export r.sqlite --csv out 2>err || fail "export: $(cat err)"
python3 - out/trace.csv out/events.csv r.sqlite <<'PY' && ok "export: the trace's and the events file's columns, events exact" || fail "export"
import csv, sqlite3, sys
rows = [l for l in open(sys.argv[1]) if not l.startswith("#")]
head = rows[0].strip().split(",")
db = sqlite3.connect(sys.argv[3])
names = [n for (n,) in db.execute("SELECT name FROM readings ORDER BY id")]
assert head == ["t_s"] + [c for n in names for c in (n, n + "_t_s")], head
polls = db.execute("SELECT count(*) FROM polls").fetchone()[0]
assert len(rows) - 1 == polls, (len(rows), polls)
ev = [r for r in csv.DictReader(l for l in open(sys.argv[2]) if not l.startswith("#"))]
assert list(ev[0].keys()) == ("name,start_s,end_s,device,stream,kind,grid_x,grid_y,grid_z,block_x,block_y,block_z,"
                              "correlation_id,device_uuid,mangled,domain,tid,depth").split(","), ev[0].keys()
got = sorted((r["name"], r["start_s"], r["end_s"], r["device"], r["stream"], r["kind"], r["correlation_id"]) for r in ev)
want = sorted([("memcpy HtoD", "0.500000000", "0.520000000", "0", "7", "memcpy", "1"),
               ("gemm", "1.000000000", "1.600000000", "0", "7", "kernel", "2"),
               ("relu", "2.000000000", "2.300000000", "0", "7", "kernel", "3"),
               ("forward", "0.900000000", "2.400000000", "-1", "-1", "nvtx", "")])
assert got == want, got
PY
"$BIN" analyze out/trace.csv --events out/events.csv --column power_buffer_w --json --no-corrected-out >an.json 2>err &&
    python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert len(d["events"]) == 4, d["events"]' an.json &&
    ok "analyze reads the exported CSVs" || fail "analyze the export: $(cat err)"
"$BIN" analyze r.sqlite --column power_buffer_w --json --no-corrected-out >an2.json 2>err &&
    python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert sorted(e["name"] for e in d["events"]) == ["forward", "gemm", "memcpy HtoD", "relu"], d["events"]' an2.json &&
    ok "analyze RUN: the run file's samples and its own kernels" || fail "analyze r.sqlite: $(cat err)"

# ---- docs/runfile.md's example queries, on this run
mkdir -p docs && cp r.sqlite docs/truewatt-run.sqlite || exit 2
python3 - "$HERE/../../docs/runfile.md" docs <<'PY' && ok "docs/runfile.md: every example query runs" || fail "docs/runfile.md examples"
import os, re, subprocess, sys
text = open(sys.argv[1]).read()
blocks = re.findall(r"```(sh|python)\n(.*?)```", text, re.S)
want = [("sh", "gemm"), ("sh", "\n"), ("sh", "gemm|"), ("python", " J over ")]  # something each must print
assert [b[0] for b in blocks] == [w[0] for w in want], [b[0] for b in blocks]
for (lang, code), (_, needle) in zip(blocks, want):
    if lang == "python":
        try:
            import pandas  # noqa: F401
        except ImportError:
            print("  (pandas is not installed: the pandas example is not run)")
            continue
    cmd = ["bash", "-c", code] if lang == "sh" else [sys.executable, "-c", code]
    out = subprocess.run(cmd, cwd=sys.argv[2], capture_output=True, text=True)
    assert out.returncode == 0 and needle in out.stdout, (code, out.returncode, out.stdout[:300], out.stderr[:300])
    print(f"  {lang} example: {len(out.stdout.splitlines())} lines")
PY

# ---- kill -9 of truewatt mid-run
"$BIN" run -o k.sqlite -- python3 "$HERE/run_fake_app.py" stream 30 "$T/app.pid" >k.out 2>err &
pid=$!
for _ in $(seq 200); do [ -s app.pid ] && break; sleep 0.05; done
[ -s app.pid ] || fail "the program did not start: $(cat err)"
sleep 3.5
kill -9 $pid
killed=$(python3 -c 'import time; print(time.clock_gettime_ns(time.CLOCK_MONOTONIC))')
wait $pid 2>/dev/null
[ -s app.pid ] && kill -9 "$(cat app.pid)" 2>/dev/null # the program, orphaned
python3 - k.sqlite "$killed" <<'PY' && ok "kill -9: intact, samples and kernels up to within 2.5 s of the kill" || fail "kill -9: $(cat err)"
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
t0 = db.execute("SELECT value FROM meta WHERE key = 't0_mono_ns'").fetchone()[0]
kill_s = (int(sys.argv[2]) - t0) * 1e-9
last = db.execute("SELECT max(t_ns) FROM polls").fetchone()[0] * 1e-9
ticks = db.execute("SELECT count(*), max(end_ns) FROM activities_named WHERE name = 'tick'").fetchone()
print(f"  killed at t = {kill_s:.3f} s; last poll {last:.3f} s; {ticks[0]} kernels, the last ending at {ticks[1] * 1e-9:.3f} s")
assert kill_s - 2.5 < last <= kill_s and kill_s - 2.5 < ticks[1] * 1e-9 <= kill_s and ticks[0] >= 5
assert db.execute("SELECT count(*) FROM samples WHERE t_ns > ?", (int(last * 1e9),)).fetchone()[0] == 0
PY
killed_run_reports k.sqlite
exit $status
