#!/usr/bin/env bash
# NVTX ranges per thread and per domain, and the groups a user asks for
# (--group PATTERN, --group-range NAME), through `truewatt run` and
# `truewatt report` against the fake libnvidia-ml. The fake's scenario is the
# truth (`truewatt sim` draws the same: 120 W between kernels, each kernel's
# power while it runs): gemm_a at 400 W in 2.0..2.4 s, relu at 400 W in
# 2.6..2.8 s, gemm_b at 400 W in 3.2..3.4 s, softmax at 300 W in 4.2..4.5 s (a
# group has one power: its members here draw the same, so that the group's
# energy is the sum of theirs; members of different power would get their
# time-weighted mean). A stand-in for the
# program writes the matching timeline with NVTX ranges as the injection
# library records them: "step" on thread 100 over 1.9..3.0 s and 3.1..4.0 s,
# "fwd" nested in the first step (depth 2), "load" in domain "io" on thread
# 200 over 1.5..1.8 s (the command starts at ~1 s: truewatt samples the idle
# level for 1 s before it). With the profile that describes the fake
# (tests/data/profile_fake_h100.json), every expected energy below is worked
# out here from the scenario alone: (P - 120 W) x duration above the
# baseline, + 120 W x the span for a range's whole-GPU energy.
#
# usage: run_ranges.sh BIN FAKE_LIBNVIDIA_ML
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/run_common.sh" run-ranges "$@"
cd "$T" || exit 2
fail() { echo "FAIL: $*"; exit 1; }

printf 'name,start_s,duration_s,power_w\ngemm_a,2.0,0.4,400\nrelu,2.6,0.2,400\ngemm_b,3.2,0.2,400\nsoftmax,4.2,0.3,300\n' \
    >scenario.csv
export TW_FAKE_NVML_SCENARIO=$T/scenario.csv TW_RUN_EXPORT_T0_TO_FAKE=1
export TW_INJECT_LIBRARY=$T/none.so # no CUDA here: the stand-in writes the timeline
cat >app.py <<'PY'
import os, time
left = 4.8 - (time.clock_gettime_ns(time.CLOCK_MONOTONIC) - int(os.environ["TW_T0_MONO_NS"])) * 1e-9
if left > 0:
    time.sleep(left)
rows = [
    ("gemm_a", 2.0, 2.4, 0, 7, "kernel", "", "", ""),
    ("relu", 2.6, 2.8, 0, 7, "kernel", "", "", ""),
    ("gemm_b", 3.2, 3.4, 0, 7, "kernel", "", "", ""),
    ("softmax", 4.2, 4.5, 0, 7, "kernel", "", "", ""),
    ("step", 1.9, 3.0, "", "", "nvtx", "", 100, 1),
    ("fwd", 1.95, 2.5, "", "", "nvtx", "", 100, 2),
    ("step", 3.1, 4.0, "", "", "nvtx", "", 100, 1),
    ("load", 1.5, 1.8, "", "", "nvtx", "io", 200, 1),
]
with open(os.environ["TW_EVENTS_PATH"], "w") as f:
    f.write("name,start_s,end_s,device,stream,kind,domain,tid,depth\n")
    for r in rows:
        f.write(",".join(str(x) for x in r) + "\n")
PY
PROFILE=$HERE/../data/profile_fake_h100.json
"$BIN" run --profile "$PROFILE" --json -o r.sqlite --perfetto r.perfetto-trace --group 'gemm*' \
    --csv r.csv -- python3 app.py >run.json 2>err.txt || fail "truewatt run: $(cat err.txt)"
"$BIN" report r.sqlite --json --group-range step >range.json 2>err2.txt || fail "report --group-range: $(cat err2.txt)"
"$BIN" report r.sqlite >plain.txt 2>err3.txt || fail "report: $(cat err3.txt)"

python3 - run.json range.json r.csv <<'PY' || fail "checks above"
import csv, json, sys

ok = True
above = {"gemm_a": 280 * 0.4, "relu": 280 * 0.2, "gemm_b": 280 * 0.2, "softmax": 180 * 0.3}
run = json.load(open(sys.argv[1]))
dev = run["devices"][0]
# The estimator's scale on this fake: its model over the fit span against the truth over it.
# The fake's counter (the reference) moves in 100 ms steps and its 0.5 s windows are few, so the
# sample buffer's fitted gain, and with it every energy, is off by a few % from run to run: the
# scale is checked within 5 %, then every record below against the truth times that scale within
# 1 % (what this test is about: which kernels and spans each record sums).
est = dev["estimate"]
truth = 120 * (est["fit_end_s"] - est["fit_start_s"]) + sum(above.values())
scale = est["model_j"] / truth
print(f"model {est['model_j']:.3f} J over {est['fit_start_s']:.3f} .. {est['fit_end_s']:.3f} s, truth {truth:.3f} J: "
      f"scale {scale:.4f}")
ok &= abs(scale - 1) < 0.05


def exact(what, x, want):
    """A range's whole-GPU energy: the energy counter's difference between its reads, the buffer's
    shape in between. On this fake both are exact (the counter in mJ, the buffer's 20 ms means), so
    the range's energy is the scenario's own within a few mJ, whatever the model's scale above; its
    uncertainty is reported, finite, and covers that."""
    global ok
    got, sd = x["energy_j"], x.get("energy_sd_j")
    err = got - want
    good = abs(err) <= 0.005 and sd is not None and 0 <= sd < 0.01 * want and abs(err) <= 3 * sd + 0.002
    print(f"{'ok  ' if good else 'FAIL'}  {what}: {got:.4f} J (sd {sd}), the scenario's {want:.4f} J ({err:+.4f} J, "
          f"within 5 mJ and 3 sd)")
    ok &= good


def near(what, got, want, pct):
    global ok
    err = 100 * (got / (scale * want) - 1)
    good = abs(err) <= pct
    print(f"{'ok  ' if good else 'FAIL'}  {what}: {got:.3f} J, expected {want:.3f} J x scale ({err:+.2f} %, within {pct} %)")
    ok &= good


# --group 'gemm*': gemm_a and gemm_b as one group with one energy, labelled by the pattern
g = [x for x in dev["groups"] if x["label"] == "gemm*"]
assert len(g) == 1 and sorted(g[0]["names"]) == ["gemm_a", "gemm_b"], dev["groups"]
near("--group 'gemm*'", g[0]["energy_j"], above["gemm_a"] + above["gemm_b"], 1)
group_m = g[0]
k = {x["name"]: x for x in dev["names"]}
assert k["gemm_a"]["status"] == "grouped" and k["relu"]["status"] == "ok", k
near("relu, alone", k["relu"]["energy_j"], above["relu"], 1)

# ranges: thread, domain, depth as recorded; energies from the scenario
r = {(x["name"], round(x["start_s"], 2)): x for x in dev["nvtx_ranges"]}
want = {("step", 1.9): ("", 100, 1), ("fwd", 1.95): ("", 100, 2), ("step", 3.1): ("", 100, 1), ("load", 1.5): ("io", 200, 1)}
for key, (dom, tid, depth) in want.items():
    x = r[key]
    assert (x["domain"], x["tid"], x["depth"]) == (dom, tid, depth), (key, x)
exact("range fwd, whole GPU", r[("fwd", 1.95)], 120 * 0.55 + above["gemm_a"])
# before the first kernel (outside the fit's span), after the last and across both: each at the counter
exact("range load (before any kernel), whole GPU", r[("load", 1.5)], 120 * 0.3)
exact("range step 1.9 .. 3.0, whole GPU", r[("step", 1.9)], 120 * 1.1 + above["gemm_a"] + above["relu"])
exact("range step 3.1 .. 4.0, whole GPU", r[("step", 3.1)], 120 * 0.9 + above["gemm_b"])
near("range fwd, above the baseline", r[("fwd", 1.95)]["above_baseline_j"], above["gemm_a"], 1)
# per domain and thread: both "step" ranges of thread 100 summed, "load" of domain io alone
t = {(x["domain"], x["tid"], x["name"]): x for x in dev["nvtx_range_totals"]}
assert sorted(t) == [("", 100, "fwd"), ("", 100, "step"), ("io", 200, "load")], sorted(t)
s = t[("", 100, "step")]
assert s["ranges"] == 2, s
in_steps = above["gemm_a"] + above["relu"] + above["gemm_b"]
exact("step ranges of thread 100, whole GPU", s, 120 * (1.1 + 0.9) + in_steps)
near("step ranges of thread 100, above the baseline", s["above_baseline_j"], in_steps, 1)
exact("load (domain io, thread 200), whole GPU", t[("io", 200, "load")], 120 * 0.3)
assert abs(t[("io", 200, "load")]["above_baseline_j"]) < 0.5, t[("io", 200, "load")]

# --group-range step: the kernels starting inside a "step" range (both gemms and relu), one group
rg = json.load(open(sys.argv[2]))["devices"][0]
g = [x for x in rg["groups"] if x["label"] == "range step: *"]
want = ["range step: gemm_a", "range step: gemm_b", "range step: relu"]
assert len(g) == 1 and sorted(g[0]["names"]) == want, rg["groups"]
near("--group-range step", g[0]["energy_j"], in_steps, 1)
near("softmax, outside every step", {x["name"]: x for x in rg["names"]}["softmax"]["energy_j"], above["softmax"], 1)

# --csv: the same records as the JSON
rows = list(csv.DictReader(open(sys.argv[3])))
byrec = {(x["record"], x["name"]): x for x in rows}
assert abs(float(byrec[("group", "gemm*")]["energy_j"]) - group_m["energy_j"]) < 1e-6 * group_m["energy_j"], byrec
assert abs(float(byrec[("name", "relu")]["energy_j"]) - k["relu"]["energy_j"]) < 1e-6 * k["relu"]["energy_j"]
ranges = [x for x in rows if x["record"] == "range"]
assert len(ranges) == 4 and {(x["name"], x["domain"], x["tid"], x["depth"]) for x in ranges} == {
    ("step", "", "100", "1"), ("fwd", "", "100", "2"), ("load", "io", "200", "1")}, ranges
sys.exit(0 if ok else 1)
PY

# the text report: the thread and domain columns, the nested range indented, the totals per domain and thread
for pat in '^step +1\.9000 +3\.0000 .* 100 +\(default\)$' '^  fwd +1\.9500 ' '^load +1\.5000 .* 200 +io$' \
    '^NVTX ranges per domain and thread' '^\(default\) +100 +step +2 '; do
    grep -Eq -- "$pat" plain.txt || { cat plain.txt; fail "text report lacks /$pat/"; }
done
# the public API (docs/api.md's examples, compiled against truewatt.h and libtruewatt.so)
LIBDIR=$(dirname "$BIN")
san=
nm -D "$LIBDIR/libtruewatt.so" 2>/dev/null | grep -q __asan_ && san=-fsanitize=address,undefined
command -v cc >/dev/null || fail "no C compiler (cc) for the API examples"
example() { # NAME: docs/api.md's <!-- example: NAME.c --> built as ./NAME
    python3 - "$HERE/../../docs/api.md" "$1" >"$1.c" <<'PY' || fail "no example $1.c in docs/api.md"
import re, sys
m = re.search(r"<!-- example: %s\.c -->\s*```c\n(.*?)```" % re.escape(sys.argv[2]), open(sys.argv[1]).read(), re.S)
sys.exit(1) if not m else sys.stdout.write(m.group(1))
PY
    # shellcheck disable=SC2086
    cc -std=c11 -Wall -Wextra -Werror $san -I"$HERE/../../include" "$1.c" -L"$LIBDIR" -ltruewatt -o "$1" 2>cc.log ||
        fail "the example $1.c does not compile: $(cat cc.log)"
}
# the report example: the same records as the JSON of `truewatt run`
example report_example
LD_LIBRARY_PATH=$LIBDIR ./report_example r.sqlite 'gemm*' >api.txt 2>err6.txt || fail "report example: $(cat err6.txt)"
python3 - run.json api.txt <<'PY' || fail "the API's records differ from the JSON's"
import json, re, sys
dev = json.load(open(sys.argv[1]))["devices"][0]
out = open(sys.argv[2]).read()
g = re.search(r"^GPU 0: ([0-9.]+) J \(kernels ([0-9.]+) J, baseline ([0-9.]+) J\)$", out, re.M)
assert g and abs(float(g[1]) - dev["estimate"]["model_j"]) < 1e-5 and abs(float(g[2]) - dev["estimate"]["kernels_j"]) < 1e-5, out
grp = re.findall(r"^group (.+): (\d+) names, ([0-9.]+) J$", out, re.M)
assert [(x[0], int(x[1])) for x in grp] == [(x["label"], len(x["names"])) for x in dev["groups"]], (grp, dev["groups"])
assert all(abs(float(a[2]) - b["energy_j"]) < 1e-5 for a, b in zip(grp, dev["groups"])), grp
rng = re.findall(r"^range (\S+): domain '(.*)', thread (\d+), depth (\d+): ([0-9.]+) J, ([0-9.-]+) J above the baseline$", out, re.M)
want = [(r["name"], r["domain"], r["tid"], r["depth"], r["energy_j"], r["above_baseline_j"]) for r in dev["nvtx_ranges"]]
assert len(rng) == len(want) == 4, out
for a, b in zip(rng, want):
    assert a[:4] == (b[0], b[1], str(b[2]), str(b[3])) and abs(float(a[4]) - b[4]) < 1e-5 and abs(float(a[5]) - b[5]) < 1e-5, (a, b)
assert re.search(r"^csv: [1-9][0-9]* bytes$", out, re.M), out
print("ok    the public API (docs/api.md's report example) gives the JSON's records")
PY

# the streaming analysis example (tw_analyze_stream): each event once, by its index, with the energies of
# `truewatt analyze RUN` (which keeps them), a kernel before the longer range that spans it (nothing waits for the range)
example analyze_stream_example
LD_LIBRARY_PATH=$LIBDIR ./analyze_stream_example r.sqlite power_buffer_w >stream.txt 2>err7.txt ||
    fail "stream example: $(cat err7.txt)"
"$BIN" analyze r.sqlite --column power_buffer_w --json --no-corrected-out >an.json 2>err8.txt ||
    fail "analyze r.sqlite: $(cat err8.txt)"
python3 - an.json stream.txt <<'PY' || fail "the streamed energies differ from truewatt analyze's"
import json, re, sys
d = json.load(open(sys.argv[1]))
ev = d["events"]
got = re.findall(r"^event (\d+) (.+): (\S+) J$", open(sys.argv[2]).read(), re.M)
assert sorted(int(g[0]) for g in got) == list(range(len(ev))) and len(ev) >= 7, (got, len(ev))
for i, name, j in got:
    e = ev[int(i)]
    assert name == e["name"] and abs(float(j) - e["energy_j"]["corrected"]) <= 1e-6 * max(1, abs(float(j))), (i, name, j, e)
order = [ev[int(g[0])] for g in got]
pos = {(e["name"], round(e["start_s"], 2)): k for k, e in enumerate(order)}
assert pos[("gemm_a", 2.0)] < pos[("step", 1.9)], [e["name"] for e in order]  # done at 2.6, the step at 3.1
tail = re.search(r"^(\d+) events: \S+ J in them, (\S+) J over the trace$", open(sys.argv[2]).read(), re.M)
assert tail and int(tail[1]) == len(ev) and abs(float(tail[2]) - d["total_energy_j"]) <= 1e-6 * d["total_energy_j"], tail
print(f"ok    docs/api.md's stream example: {len(got)} events as they finish, truewatt analyze's energies")
PY

# wrong usage
"$BIN" report r.sqlite --group '' >/dev/null 2>err4.txt && fail "--group '' accepted"
grep -q "^truewatt report: --group needs a name pattern" err4.txt || fail "--group '': $(cat err4.txt)"
"$BIN" report r.sqlite r.sqlite --group-range step >/dev/null 2>err5.txt && fail "--group-range on a merged report"
grep -q "groups by NVTX range take one run file" err5.txt || fail "merged --group-range: $(cat err5.txt)"
echo "run_ranges: ranges per thread and domain, --group and --group-range against the scenario's truth"
