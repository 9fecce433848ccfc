#!/usr/bin/env bash
# End to end: the memory calibration's counter checks on the simulator, with
# tests/fakes/fake_ncu.py standing in for Nsight Compute (it runs `truewatt
# mem counters` and writes the counters an ideal GPU would show, or spoils
# them on request):
#   a. `mem counters` writes the manifest (launches 0 and N of every
#      configuration); `mem check` passes every configuration, checks.csv has
#      one row per configuration;
#   b. calibrate with the L2's hits halved: the l2 rows are left out, marked
#      fail in mem.csv, and have no lower bound (text and mem-profile.json);
#   c. DRAM counting 20 % too few sectors: FAIL against Eq. 7, exit 0;
#   d. ncu's permission error: exit 1, ncu's message shown, no mem.csv;
#   e. --ncu that is not there (exit 1), --ncu with --no-counter-checks (2);
#   f. no --ncu on the simulator: no checks, rows unchecked, exit 0;
#   g. loads, stores and LOAD+DIV with an instruction table: the division
#      within 15 % of the simulator's 190 pJ, no L1 store level;
#   h. an instruction table without div.u32: exit 1.
# Small sweeps (2 thread counts, 2 repeats, 50 ms launches) and one sensor
# identification shared by every calibration keep it under a minute.
#
# usage: mem_check.sh BIN      (temp files under $TW_TMPDIR, else $TMPDIR or /tmp)
set -euo pipefail
export LC_ALL=C

BIN=${1:?usage: mem_check.sh BIN}
case $BIN in /*) ;; *) BIN=$(pwd)/$BIN ;; esac
[ -x "$BIN" ] || { echo "$BIN is not an executable" >&2; exit 2; }
command -v python3 >/dev/null || { echo "SKIP: python3 is needed"; exit 77; }
HERE=$(cd "$(dirname "$0")" && pwd)
FAKE_PY=$HERE/../fakes/fake_ncu.py
[ -f "$FAKE_PY" ] || { echo "no fake ncu at $FAKE_PY" >&2; exit 2; }
unset TW_FAKE_NCU_SPOIL TW_FAKE_NCU_FAIL TW_FAKE_NCU_ROWS

T=$(mktemp -d "${TW_TMPDIR:-${TMPDIR:-/tmp}}/e2e-mem-check.XXXXXX") || exit 2
trap 'rm -rf "$T"' EXIT
T=$(cd "$T" && pwd)
cd "$T"

# the fake as an executable of its own (whatever the mode bits of the checkout)
NCU=$T/bin/ncu
mkdir -p "$T/bin"
printf '#!/bin/sh\nexec python3 "%s" "$@"\n' "$FAKE_PY" >"$NCU"
chmod +x "$NCU"

status=0 # failed checks; the run goes on to report every one
bad() {
    echo "FAIL  $*"
    status=1
}
ok() { echo "ok    $*"; }

# run NAME WANT CMD...: runs the tool, stdout in $T/NAME.out, stderr in $T/NAME.err;
# says so when its exit status is not WANT (and shows the end of its output)
run() {
    local name=$1 want=$2
    shift 2
    echo "+ truewatt $*"
    local rc=0
    "$BIN" "$@" >"$T/$name.out" 2>"$T/$name.err" || rc=$?
    if [ "$rc" -eq "$want" ]; then
        ok "$name: exit $rc"
    else
        bad "$name: truewatt $* exited with $rc, expected $want"
        sed 's/^/    | /' "$T/$name.out" "$T/$name.err" | tail -n 30
    fi
}

# has NAME.STREAM TEXT / lacks NAME.STREAM TEXT: a fixed string in a file of $T
has() {
    if grep -qF -- "$2" "$T/$1"; then ok "$1 has '$2'"; else
        bad "$1 lacks '$2'"
        sed 's/^/    | /' "$T/$1" | tail -n 20
    fi
}
lacks() {
    if grep -qF -- "$2" "$T/$1"; then
        bad "$1 has '$2'"
        grep -F -- "$2" "$T/$1" | sed 's/^/    | /'
    else ok "$1 lacks '$2'"; fi
}

# py SCRIPT ARGS...: a python check; its "FAIL" lines count
py() {
    local rc=0
    python3 - "$@" || rc=$?
    [ "$rc" -eq 0 ] || status=1
}

SIM=(--sim h100 --seed 3)
SMALL=(--threads 32,1024 --reps 2 --target-s 0.05)

# ---------------------------------------------------------------- the sensor profile, once
run identify 0 sensor identify "${SIM[@]}" --out "$T/profile.json" --trace-out "$T/identify.csv"
[ -s "$T/profile.json" ] || { echo "FAIL  no sensor profile; nothing else can run"; exit 1; }
PROFILE=(--profile "$T/profile.json")

# ---------------------------------------------------------------- a. mem counters, mem check: all pass
run counters 0 mem counters "${SIM[@]}" --manifest "$T/manifest.csv" --iterations 7 --levels l1,dram \
    --ops load,store --threads 32,1024 --out "$T/counters"
py "$T/manifest.csv" <<'PY'
import csv, sys
fail = False
def check(ok, what):
    global fail
    print(("ok    " if ok else "FAIL  ") + what)
    fail |= not ok
lines = open(sys.argv[1]).read().splitlines()
check(lines[0] == "launch,op,level,threads,blocks,sub_bytes,iterations,accesses,bytes",
      f"manifest header: {lines[0]}")
rows = list(csv.DictReader(lines))
# load l1, load dram, store dram (no L1 store level) x 2 thread counts x iterations 0 and 7
got = [(r["op"], r["level"], r["threads"], r["iterations"]) for r in rows]
want = [(op, lv, th, it) for op, lv in (("load", "l1"), ("load", "dram"), ("store", "dram"))
        for th in ("32", "1024") for it in ("0", "7")]
check(got == want, f"manifest: 12 launches, iterations 0 and 7 of each configuration ({got})")
check([r["launch"] for r in rows] == [str(i) for i in range(len(rows))], "manifest: launches numbered from 0")
check(all(int(r["blocks"]) > 0 and int(r["sub_bytes"]) > 0 for r in rows), "manifest: blocks and sub_bytes")
check(all(float(r["accesses"]) == 0 for r in rows if r["iterations"] == "0")
      and all(float(r["accesses"]) > 0 and float(r["bytes"]) > 0 for r in rows if r["iterations"] == "7"),
      "manifest: no accesses at 0 iterations, some at 7")
sys.exit(1 if fail else 0)
PY

run check_all 0 mem check "${SIM[@]}" --levels shared,l1,l2,dram --ops load,store,load+div --threads 32,1024 \
    --ncu "$NCU" --out "$T/chk"
# 4 load levels + 3 store (no L1) + 3 load+div (no shared) = 10 configurations x 2 thread counts
has check_all.out "20 of 20 pass"
lacks check_all.out "FAIL"
lacks check_all.out "left out"
for f in checks.csv manifest.csv ncu.csv; do
    [ -s "$T/chk/$f" ] && ok "mem check wrote $f" || bad "mem check wrote no $f"
done
py "$T/chk/checks.csv" <<'PY'
import csv, sys
lines = [l for l in open(sys.argv[1]).read().splitlines() if not l.startswith("#")]
head = "op,level,threads,blocks,counter,unit,expected,counted,target_share,pass,why"
fail = lines[0] != head
print(("FAIL  " if fail else "ok    ") + f"checks.csv header: {lines[0]}")
rows = list(csv.DictReader(lines))
keys = sorted((r["op"], r["level"], r["threads"]) for r in rows)
want = sorted((op, lv, th) for op, lvs in (("load", "shared l1 l2 dram"), ("store", "shared l2 dram"),
                                           ("load+div", "l1 l2 dram"))
              for lv in lvs.split() for th in ("32", "1024"))
if keys != want:
    print(f"FAIL  checks.csv rows: {keys}, expected {want}"); fail = True
else:
    print(f"ok    checks.csv: one row per configuration ({len(rows)})")
for r in rows:
    if r["pass"] != "1" or r["why"] != "":
        print(f"FAIL  checks.csv: {r['op']} {r['level']} {r['threads']}: pass {r['pass']} ({r['why']})"); fail = True
    unit = "bytes" if r["level"] == "shared" else "sectors"
    if r["unit"] != unit or abs(float(r["counted"]) / float(r["expected"]) - 1) > 1e-6:
        print(f"FAIL  checks.csv: {r}"); fail = True
if not fail:
    print("ok    checks.csv: every configuration passes, counted = Eq. 7")
sys.exit(1 if fail else 0)
PY

# ---------------------------------------------------------------- b. the L2's hits halved: l2 left out
TW_FAKE_NCU_SPOIL=l2 run spoil_l2 0 mem calibrate "${SIM[@]}" "${SMALL[@]}" "${PROFILE[@]}" --levels l1,l2 \
    --ops load --ncu "$NCU" --out "$T/cal_l2"
has spoil_l2.out "2 of 4 pass"
has spoil_l2.out "left out: load l2, 32 threads: the l2 served 50.0 % of the accesses"
has spoil_l2.out "left out: load l2, 1024 threads: the l2 served 50.0 % of the accesses"
lacks spoil_l2.out "left out: load l1"
# the loads' lower bounds: l1, not l2
awk '/^loads: lower bound/ {on = 1; next} on && /^$/ {on = 0} on' "$T/spoil_l2.out" >"$T/spoil_l2.bounds"
grep -Eq '^ +l1 +[0-9.]+ pJ at' "$T/spoil_l2.bounds" && ok "loads' bounds have l1" ||
    bad "loads' bounds lack l1: $(cat "$T/spoil_l2.bounds")"
grep -Eq '^ +l2 ' "$T/spoil_l2.bounds" && bad "loads' bounds have l2: $(cat "$T/spoil_l2.bounds")" ||
    ok "loads' bounds lack l2"
[ -s "$T/cal_l2/checks.csv" ] && ok "calibrate wrote checks.csv" || bad "calibrate wrote no checks.csv"
py "$T/cal_l2" <<'PY'
import csv, json, sys
D = sys.argv[1]
fail = False
def check(ok, what):
    global fail
    print(("ok    " if ok else "FAIL  ") + what)
    fail |= not ok
rows = list(csv.DictReader(l for l in open(f"{D}/mem.csv") if not l.startswith("#")))
got = {(r["level"], r["threads"]): r["counters"] for r in rows}
check(got == {("l1", "32"): "pass", ("l1", "1024"): "pass", ("l2", "32"): "fail", ("l2", "1024"): "fail"},
      f"mem.csv counters: {got}")
checks = list(csv.DictReader(l for l in open(f"{D}/checks.csv") if not l.startswith("#")))
check(sorted((r["level"], r["pass"]) for r in checks) == [("l1", "1"), ("l1", "1"), ("l2", "0"), ("l2", "0")],
      "checks.csv: l1 pass, l2 fail")
check(all(abs(float(r["target_share"]) - (0.5 if r["level"] == "l2" else 1.0)) < 1e-6 for r in checks),
      "checks.csv: l2's share 0.5, l1's 1")
def reject(c):
    raise ValueError("not JSON: " + c)
p = json.load(open(f"{D}/mem-profile.json"), parse_constant=reject)
for k in ("levels", "stores", "load_div", "division"):
    check(k in p, f"mem-profile.json has '{k}'")
lv = {l["level"]: l for l in p.get("levels", [])}
check(sorted(lv) == ["l1", "l2"], f"mem-profile.json levels: {sorted(lv)}")
check(lv.get("l2", {}).get("energy_per_sector_j", 0) is None, "mem-profile.json: l2 has no lower bound (null)")
e1 = lv.get("l1", {}).get("energy_per_sector_j")
check(isinstance(e1, float) and e1 > 0, f"mem-profile.json: l1's lower bound {e1}")
sweep = lv.get("l2", {}).get("sweep", [])
check(len(sweep) == 2 and all(s["counters"] == "fail" and s["energy_per_sector_j"] > 0 for s in sweep),
      "mem-profile.json: l2's sweep kept, marked fail")
check(p.get("stores") == [] and p.get("load_div") == [], "mem-profile.json: no stores, no load_div")
sys.exit(1 if fail else 0)
PY

# ---------------------------------------------------------------- c. DRAM counts 20 % too few sectors
TW_FAKE_NCU_SPOIL=count:dram run spoil_count 0 mem check "${SIM[@]}" --threads 32,1024 --levels dram --ops load \
    --ncu "$NCU" --out "$T/chk_count"
has spoil_count.out "0 of 2 pass"
has spoil_count.out "FAIL"
has spoil_count.out "left out: load dram, 32 threads: counted"
grep -E "left out: load dram, 1024 threads: .*Eq\. 7 gives .*\(-20\.0 %\)" "$T/spoil_count.out" >/dev/null &&
    ok "the reason names Eq. 7 and -20 %" || bad "no Eq. 7 reason: $(cat "$T/spoil_count.out")"
py "$T/chk_count/checks.csv" <<'PY'
import csv, sys
rows = list(csv.DictReader(l for l in open(sys.argv[1]) if not l.startswith("#")))
ok = len(rows) == 2 and all(r["pass"] == "0" and "Eq. 7" in r["why"] for r in rows)
print(("ok    " if ok else "FAIL  ") + f"checks.csv: both dram rows fail on Eq. 7 ({[r['why'] for r in rows]})")
sys.exit(0 if ok else 1)
PY

# ---------------------------------------------------------------- d. ncu not permitted: the calibration stops
TW_FAKE_NCU_FAIL=1 run ncu_perm 1 mem calibrate "${SIM[@]}" "${SMALL[@]}" "${PROFILE[@]}" --levels l1 --ops load \
    --ncu "$NCU" --out "$T/cal_perm"
has ncu_perm.err "ERR_NVGPUCTRPERM"
has ncu_perm.err "ncu"
[ ! -e "$T/cal_perm/mem.csv" ] && ok "no mem.csv after ncu failed" || bad "mem.csv written after ncu failed"
[ ! -e "$T/cal_perm/trace.csv" ] && ok "no energy runs after ncu failed" || bad "energy runs after ncu failed"

# ---------------------------------------------------------------- e. --ncu not there; --ncu with --no-counter-checks
run ncu_missing 1 mem calibrate "${SIM[@]}" "${SMALL[@]}" "${PROFILE[@]}" --levels l1 --ops load \
    --ncu /nonexistent/ncu --out "$T/cal_missing"
has ncu_missing.err "not found"
has ncu_missing.err "/nonexistent/ncu"
[ ! -e "$T/cal_missing/mem.csv" ] && ok "no mem.csv without ncu" || bad "mem.csv written without ncu"
run check_missing 1 mem check "${SIM[@]}" --levels l1 --ops load --ncu /nonexistent/ncu --out "$T/chk_missing"
has check_missing.err "not found"
run ncu_and_none 2 mem calibrate "${SIM[@]}" --ncu x --no-counter-checks --out "$T/cal_usage"
has ncu_and_none.err "--no-counter-checks"

# ---------------------------------------------------------------- f. the simulator without --ncu: unchecked
run unchecked 0 mem calibrate "${SIM[@]}" "${SMALL[@]}" "${PROFILE[@]}" --levels l1,l2 --ops load --out "$T/cal_none"
has unchecked.err "no counter checks"
lacks unchecked.out "counter checks (Nsight Compute"
[ ! -e "$T/cal_none/checks.csv" ] && ok "no checks.csv without checks" || bad "checks.csv written without checks"
py "$T/unchecked.out" "$T/cal_none" <<'PY'
import csv, sys
out, D = sys.argv[1], sys.argv[2]
fail = False
def check(ok, what):
    global fail
    print(("ok    " if ok else "FAIL  ") + what)
    fail |= not ok
lines = open(out).read().splitlines()
head = next((i for i, l in enumerate(lines) if l.split()[:3] == ["op", "level", "threads"]), None)
check(head is not None, "the table on stdout")
if head is not None:
    cols = lines[head].split()
    c = cols.index("counters")
    body = []
    for l in lines[head + 2:]:
        if not l.strip():
            break
        body.append(l.split())
    check(len(body) == 4 and all(len(r) == len(cols) and r[c] == "-" for r in body),
          f"stdout: every row's counters is '-' ({[r[c] for r in body if len(r) > c]})")
rows = list(csv.DictReader(l for l in open(f"{D}/mem.csv") if not l.startswith("#")))
check(len(rows) == 4 and all(r["counters"] == "" for r in rows),
      f"mem.csv: every row unchecked ({[r['counters'] for r in rows]})")
sys.exit(1 if fail else 0)
PY
awk '/^loads: lower bound/ {on = 1; next} on && /^$/ {on = 0} on' "$T/unchecked.out" >"$T/unchecked.bounds"
grep -Eq '^ +l1 ' "$T/unchecked.bounds" && grep -Eq '^ +l2 ' "$T/unchecked.bounds" &&
    ok "unchecked rows give l1 and l2 bounds" || bad "unchecked bounds: $(cat "$T/unchecked.bounds")"

# ---------------------------------------------------------------- g. loads, stores, LOAD+DIV and the instruction table
cat >"$T/isa.csv" <<'CSV'
# provenance: written by tests/e2e/mem_check.sh
# command: truewatt isa --mode throughput; reading energy_j
instruction,group,paper_row,mode,jit_level,operands,energy_j,energy_sd_j,cycles_per_inst,sim_truth_j
add.s32,int,add / sub / min / max,throughput,4,fixed at 0,5.45697e-12,5.22761e-14,,
div.u32,int,{u} div,throughput,4,from the seed,1.9e-10,9.4243e-13,,
div.s32,int,{s} div,throughput,4,from the seed,3.5e-10,9.4243e-13,,
CSV
run div 0 mem calibrate "${SIM[@]}" "${SMALL[@]}" "${PROFILE[@]}" --levels l1,l2 --ops load,store,load+div \
    --isa-table "$T/isa.csv" --ncu "$NCU" --out "$T/cal_div"
has div.out "10 of 10 pass" # load l1,l2 + store l2 + load+div l1,l2, x 2 thread counts (the checks ran too)
has div.out "LOAD+DIV cross-check"
has div.out "instruction table"
has div.out "stores: lower bound"
py "$T/div.out" "$T/cal_div" "$T/isa.csv" <<'PY'
import csv, json, re, sys
out, D, isa = sys.argv[1:4]
fail = False
def check(ok, what):
    global fail
    print(("ok    " if ok else "FAIL  ") + what)
    fail |= not ok
text = open(out).read()
m = re.search(r"^  all +([0-9.]+) pJ \(sd [0-9.na-]+, (\d+) rows\); instruction table \(([^)]*)\): ([0-9.]+) pJ, "
              r"([+-][0-9]+) %$", text, re.M)
check(m is not None, "the 'all' line of the cross-check, with the table and a percentage")
if m:
    div, nrows, src, table, pct = float(m[1]), int(m[2]), m[3], float(m[4]), int(m[5])
    print(f"      division {div} pJ over {nrows} rows; table {table} pJ ({src}), {pct:+d} %")
    check(abs(div / 190 - 1) <= 0.15, f"division {div} pJ within 15 % of the simulator's 190 pJ")
    check(nrows == 4, f"{nrows} rows in the mean (load+div l1, l2 at 32 and 1024 threads)")
    check(src == isa and abs(table - 190) < 0.05, f"the table's div.u32 is 190 pJ from {src}")
    check(abs(pct - 100 * (div / table - 1)) <= 1, f"the percentage {pct} is the division against the table")
for lv in ("l1", "l2"):
    check(re.search(rf"^  {lv} +[0-9.]+ pJ \(sd", text, re.M) is not None, f"the cross-check has {lv}")
rows = list(csv.DictReader(l for l in open(f"{D}/mem.csv") if not l.startswith("#")))
keys = sorted({(r["op"], r["level"]) for r in rows})
check(keys == [("load", "l1"), ("load", "l2"), ("load+div", "l1"), ("load+div", "l2"), ("store", "l2")],
      f"mem.csv: no store l1, store l2 there ({keys})")
check(all(r["counters"] == "pass" for r in rows), "mem.csv: every row's counters pass")
check(all((r["div_j"] != "") == (r["op"] == "load+div") for r in rows), "mem.csv: div_j on the load+div rows only")
def reject(c):
    raise ValueError("not JSON: " + c)
p = json.load(open(f"{D}/mem-profile.json"), parse_constant=reject)
for k in ("levels", "stores", "load_div", "division"):
    check(k in p, f"mem-profile.json has '{k}'")
check([l["level"] for l in p["stores"]] == ["l2"], f"mem-profile.json stores: {[l['level'] for l in p['stores']]}")
check([l["level"] for l in p["load_div"]] == ["l1", "l2"], "mem-profile.json load_div: l1, l2")
check(all(isinstance(l["energy_per_sector_j"], float) for l in p["levels"] + p["stores"] + p["load_div"]),
      "mem-profile.json: every level has its lower bound")
d = p["division"]
check(d["table_j"] == 1.9e-10 and d["table"] == isa, f"division: table {d['table_j']} from {d['table']}")
check(d["rows"] == 4 and abs(d["energy_j"] / 190e-12 - 1) <= 0.15, f"division: {d['energy_j']} J over {d['rows']} rows")
sys.exit(1 if fail else 0)
PY

# ---------------------------------------------------------------- h. an instruction table without div.u32
grep -v '^div\.u32' "$T/isa.csv" >"$T/isa-nodiv.csv"
run nodiv 1 mem calibrate "${SIM[@]}" "${SMALL[@]}" "${PROFILE[@]}" --levels l1 --ops load,load+div \
    --isa-table "$T/isa-nodiv.csv" --out "$T/cal_nodiv"
has nodiv.err "div.u32"
has nodiv.err "isa-nodiv.csv"
[ ! -e "$T/cal_nodiv/mem.csv" ] && ok "no mem.csv without div.u32" || bad "mem.csv written without div.u32"
run noisa 1 mem calibrate "${SIM[@]}" "${SMALL[@]}" "${PROFILE[@]}" --levels l1 --isa-table "$T/none.csv" \
    --out "$T/cal_noisa"
has noisa.err "none.csv"

if [ $status -eq 0 ]; then echo "mem_check: all passed"; else echo "mem_check: FAILED"; fi
exit $status
