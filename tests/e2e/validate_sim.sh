#!/usr/bin/env bash
# End to end: `truewatt validate` on the simulator, whose truth is exact.
#
# For the H100 at seeds 1 and 2 it checks, from DIR/validation.csv (the
# canonical numbers; validation.md is only rendered from them):
#   - linearity and back to back: every row that carries a tolerance passes,
#     and every T and every gap has such a row;
#   - short kernels: the repetition rows pass at 1, 3 and 10 ms; the
#     regression rows are within 10 % of the reference at 1 ms and within 5 %
#     at 3 and 10 ms (on the simulator the regression is unbiased), over as
#     many launches as the events hold; the reference power is the
#     simulator's kernel step (220 W) within 1 %;
#   - profile.json exists, `truewatt sensor show` on it names the best reading
#     that validation.csv names, and its readings have the simulator's
#     responses (power_usage_w boxcar, power_instant_w window, energy_j
#     counter, power_buffer_w rc);
#   - validation.md has the summary (every target met), every section, and
#     says the repeat and launch counts the events hold;
#   - `truewatt validate --from DIR --out DIR2` gives the same numbers
#     (apart from the provenance comment line), best reading and responses.
# And for the K20 (seed 1): the identification gives power_w as rc with
# C within 5 % of the simulator's 0.84 s, and the same checks of the
# experiments pass (kernel step 80 W).
# The key numbers are printed, so the CI log shows them.
#
# usage: validate_sim.sh BIN      (temp files under $TW_TMPDIR, else $TMPDIR or /tmp)
set -u
export LC_ALL=C

BIN=${1:?usage: validate_sim.sh BIN}
case $BIN in /*) ;; *) BIN=$(pwd)/$BIN ;; esac
[ -x "$BIN" ] || { echo "$BIN is not an executable" >&2; exit 2; }
command -v python3 >/dev/null || { echo "python3 is needed" >&2; exit 2; }

T=$(mktemp -d "${TW_TMPDIR:-${TMPDIR:-/tmp}}/e2e-validate-sim.XXXXXX") || exit 2
trap 'rm -rf "$T"' EXIT
T=$(cd "$T" && pwd) || exit 2
cd "$T" || exit 2

status=0 # failed checks; the run goes on to report every one

# run NAME CMD...: runs the tool, stdout in $T/NAME.out, stderr in $T/NAME.err;
# returns its exit status (0 or not) after saying so
run() {
    local name=$1
    shift
    echo "+ truewatt $*"
    local t0=$SECONDS
    "$BIN" "$@" >"$T/$name.out" 2>"$T/$name.err"
    local rc=$?
    echo "  exit $rc after $((SECONDS - t0)) s"
    if [ $rc -ne 0 ]; then
        echo "FAIL  truewatt $* exited with $rc"
        sed 's/^/    | /' "$T/$name.out" "$T/$name.err" | tail -n 30
        status=1
    fi
    return $rc
}

# check_dir DIR PROFILE SHOW_OUT VALIDATE_OUT: every check on one validation folder
# (SHOW_OUT: what `sensor show` printed; VALIDATE_OUT: what validate printed)
check_dir() {
    python3 - "$1" "$2" "$3" "$4" <<'PY'
import csv, json, math, re, sys

D, PROFILE, SHOW, STDOUT = sys.argv[1:5]
bad = []

def check(ok, what):
    print(("ok    " if ok else "FAIL  ") + what)
    if not ok:
        bad.append(what)
    return ok

def num(s):
    return float(s) if s not in ("", None) else math.nan

# ---- validation.csv: a provenance comment, then the header and the records
with open(f"{D}/validation.csv", encoding="utf-8") as f:
    lines = f.read().splitlines()
check(lines and lines[0].startswith("# truewatt validate;"), "validation.csv starts with its provenance comment")
m = re.search(r"; best reading ([a-z_]+);", lines[0] if lines else "")
best = m.group(1) if m else None
check(best is not None, f"validation.csv's comment names the best reading ({best})")
rows = list(csv.DictReader(lines[1:]))
want = ["experiment", "case", "method", "quantity", "value", "sigma", "reference", "error_pct", "tolerance_pct",
        "pass", "n"]
check(rows and list(rows[0].keys()) == want, f"validation.csv columns are {','.join(want)}")
for r in rows:
    for k in ("value", "sigma", "reference", "error_pct", "tolerance_pct"):
        r[k] = num(r[k])
    r["n"] = int(r["n"])

def find(exp, case, method):
    hits = [r for r in rows if r["experiment"] == exp and r["case"] == case and r["method"] == method]
    return hits[0] if len(hits) == 1 else None

# the events: how many of each kernel the schedule ran
names = {}
with open(f"{D}/events.csv", encoding="utf-8") as f:
    for e in csv.DictReader(x for x in f if not x.startswith("#")):
        names[e["name"]] = names.get(e["name"], 0) + 1

# ---- (i) linearity, (ii) back to back: every flagged row passes, every case has one
for exp, cases in (("linearity", ["T=0.1s", "T=0.5s", "T=2s"]), ("back_to_back", ["gap=50ms", "gap=0.3s", "gap=1s"])):
    flagged = [r for r in rows if r["experiment"] == exp and not math.isnan(r["tolerance_pct"])]
    for case in cases:
        check(any(r["case"] == case for r in flagged), f"{exp} {case}: some row carries a tolerance")
    for r in flagged:
        check(r["pass"] == "pass" and abs(r["error_pct"]) <= r["tolerance_pct"],
              f"{exp} {r['case']:9s} {r['method']}: {r['value']:.4f} +- {r['sigma']:.4f} "
              f"(target {r['reference']:g}, {r['error_pct']:+.3f} %, tolerance {r['tolerance_pct']:g} %) {r['pass']}")
    print(f"      {exp}: {len(flagged)} flagged rows")

# ---- (iii) short kernels
STEP_W = {"h100": 220.0, "k20": 80.0}[PROFILE]  # the spin kernel above active idle (bench/exec_sim.c)
for case, d_s, limit in (("1ms", 0.001, 10.0), ("3ms", 0.003, 5.0), ("10ms", 0.010, 5.0)):
    ref = find("short_kernels", case, "reference_power")
    if check(ref is not None, f"short {case}: a reference_power row"):
        check(abs(ref["value"] / STEP_W - 1) < 0.01,
              f"short {case}: reference {ref['value']:.2f} W against the simulator's {STEP_W:g} W (1 %)")
    rep = find("short_kernels", case, "repetition")
    if check(rep is not None, f"short {case}: a repetition row"):
        check(rep["pass"] == "pass" and not math.isnan(rep["tolerance_pct"]),
              f"short {case} repetition: {rep['value']:.5g} J/launch +- {rep['sigma']:.2g} vs reference "
              f"{rep['reference']:.5g} J: {rep['error_pct']:+.2f} % (tolerance {rep['tolerance_pct']:g} %), "
              f"{rep['n']} launches, {rep['pass']}")
    reg = find("short_kernels", case, "regression")
    if check(reg is not None, f"short {case}: a regression row"):
        err = 100.0 * (reg["value"] / reg["reference"] - 1.0)
        check(abs(err) <= limit and abs(err - reg["error_pct"]) < 1e-6,
              f"short {case} regression: {reg['value']:.5g} J/launch +- {reg['sigma']:.2g} vs reference "
              f"{reg['reference']:.5g} J: {err:+.2f} % (limit {limit:g} %), {reg['pass']}")
        iso = names.get(f"short_{case}_iso", 0)
        check(iso > 0 and reg["n"] == iso, f"short {case} regression over every isolated launch: n {reg['n']}, "
              f"events short_{case}_iso {iso}")
    naive = find("short_kernels", case, "naive_power_instant_w")
    if naive:
        print(f"      short {case} naive_power_instant_w: {naive['value']:.4g} J ({naive['error_pct']:+.1f} %)")

# ---- profile.json and `sensor show`
with open(f"{D}/profile.json", encoding="utf-8") as f:
    prof = json.load(f)
resp = {r["name"]: r for r in prof["readings"]}
for r in prof["readings"]:
    cs = r.get("capacitance_s")
    print(f"      profile: {r['name']:16s} {r['response']:8s} period {r['period_s'] * 1e3:6.1f} ms"
          + (f"  C {cs:.4f} s" if cs is not None else ""))
if PROFILE == "h100":
    expect = {"power_usage_w": "boxcar", "power_instant_w": "window", "energy_j": "counter", "power_buffer_w": "rc"}
else:
    expect = {"power_w": "rc"}
for name, response in expect.items():
    got = resp.get(name, {}).get("response")
    check(got == response, f"profile: {name} is {response} (got {got})")
if PROFILE == "k20":
    cs = resp.get("power_w", {}).get("capacitance_s")
    check(cs is not None and abs(cs / 0.84 - 1) < 0.05,
          f"profile: power_w's C = {cs} s against the simulator's 0.84 s (5 %)"
          + (f": {100 * (cs / 0.84 - 1):+.2f} %" if cs else ""))
with open(SHOW, encoding="utf-8") as f:
    show = f.read()
m = re.search(r"^best for energy: ([a-z_]+) ", show, re.M)
check(m is not None and m.group(1) == best,
      f"sensor show names the best reading {m.group(1) if m else None} (validation.csv: {best})")
check(re.search(rf"^{best} +best ", show, re.M) is not None, f"sensor show marks {best} 'best' in its table")

# ---- validation.md
with open(f"{D}/validation.md", encoding="utf-8") as f:
    md = f.read()
for head in ("## Summary", "## Methods", "## (i) Linearity", "## (ii) Back to back", "## (iii) Short kernels",
             "## (iv) 10 s loads", "## (v) The identified sensor profile"):
    check(head in md, f"validation.md has '{head}'")
m = re.search(r"^\*\*(\d+) of (\d+) targets met\*\*", md, re.M)
check(m is not None and m.group(1) == m.group(2) and int(m.group(2)) >= 9,
      f"validation.md's summary: {m.group(0) if m else 'no count line'}")
m = re.search(r"^(\d+) of (\d+) targets met", open(STDOUT, encoding="utf-8").read(), re.M)
check(m is not None and m.group(1) == m.group(2), f"stdout: {m.group(0) if m else 'no count line'}")
# the counts the text gives are the schedule's
lin = names.get("lin_0.1s_T", 0)
m = re.search(r"## \(i\) Linearity\n\n[^\n]*?, (\d+) times\.", md)
check(m is not None and int(m.group(1)) == lin, f"validation.md: linearity {m.group(1) if m else '?'} times, "
      f"events lin_0.1s_T: {lin}")
b2b = names.get("b2b_50ms_first", 0)
m = re.search(r"## \(ii\) Back to back\n\n[^\n]*? apart, (\d+) times\.", md)
check(m is not None and int(m.group(1)) == b2b, f"validation.md: back to back {m.group(1) if m else '?'} times, "
      f"events b2b_50ms_first: {b2b}")
iso = names.get("short_1ms_iso", 0)
m = re.search(r"## \(iii\) Short kernels\n\n[^\n]*? Then (\d+) isolated launches", md)
check(m is not None and int(m.group(1)) == iso, f"validation.md: {m.group(1) if m else '?'} isolated launches, "
      f"events short_1ms_iso: {iso}")

print(f"{D}: {len(rows)} rows, {len(bad)} failed checks")
sys.exit(1 if bad else 0)
PY
}

# same_numbers A B: the records of two validation.csv files agree, and so do
# the best readings their comment lines name. The re-analysis reads the
# trace's 10 significant digits back, and deconvolving a 1 s boxcar for a
# 1 ms kernel magnifies that to ~1e-6: values must agree to 1e-5 of
# themselves; a sigma or an error in % (a difference of nearly equal
# numbers) is compared against the value's size instead of its own (the
# sigma of a row without a target to 1e-3 of it: see below).
same_numbers() {
    python3 - "$1" "$2" <<'PY'
import csv, math, re, sys

def load(p):
    with open(p, encoding="utf-8") as f:
        return list(csv.DictReader(x for x in f if not x.startswith("#")))

def best(p):
    with open(p, encoding="utf-8") as f:
        m = re.search(r"; best reading ([a-z_]+);", f.readline())
    return m.group(1) if m else None

ba, bb = best(sys.argv[1]), best(sys.argv[2])
print(("ok    " if ba and ba == bb else "FAIL  ") + f"best reading {ba} and {bb}")
a, b = load(sys.argv[1]), load(sys.argv[2])
if len(a) != len(b):
    print(f"FAIL  {len(a)} records against {len(b)}")
    sys.exit(1)

def num(s):
    return float(s) if s != "" else math.nan

bad = 0
worst = {}
for ra, rb in zip(a, b):
    key = f"{ra['experiment']},{ra['case']},{ra['method']}"
    for col in ra:
        x, y = ra[col], rb.get(col)
        if x == y:
            continue
        if col in ("experiment", "case", "method", "quantity", "pass", "n", "tolerance_pct") or y is None:
            d = math.inf
        else:
            fx, fy = num(x), num(y)
            if math.isnan(fx) or math.isnan(fy):
                d = math.inf
            elif col == "error_pct":  # percentage points
                d = abs(fx - fy) / 100.0
            elif col == "sigma":  # against the value it is the spread of
                d = abs(fx - fy) / max(abs(num(ra["value"])), 1e-12)
                # an information row's spread over per-launch estimates through a
                # deconvolved 1 s boxcar: a launch whose power the non-negative
                # fit holds near 0 moves it by up to ~3e-4 of the value
                if ra["tolerance_pct"] == "" and d <= 1e-3:
                    d = 0.0
            else:
                d = abs(fx - fy) / max(abs(fx), abs(fy), 1e-12)
        worst[col] = max(worst.get(col, 0.0), d)
        if d > 1e-5:
            bad += 1
            if bad <= 10:
                print(f"FAIL  {key} {col}: {x} against {y}")
print(f"{len(a)} records compared; largest difference by column (relative): "
      + (", ".join(f"{c} {v:.2g}" for c, v in sorted(worst.items())) or "none, identical"))
sys.exit(1 if bad or not ba or ba != bb else 0)
PY
}

# validate_one PROFILE SEED: runs and checks one folder
validate_one() {
    local p=$1 seed=$2 d=$T/${1}_s$2
    echo
    echo "================ validate --sim $p --seed $seed"
    run "${p}_s$seed" validate --sim "$p" --seed "$seed" --out "$d" || return
    grep -E '^(linearity|back to back|short kernels)|targets met' "$T/${p}_s$seed.out"
    run "${p}_s$seed.show" sensor show "$d/profile.json" || return
    check_dir "$d" "$p" "$T/${p}_s$seed.show.out" "$T/${p}_s$seed.out" || status=1
}

validate_one h100 1
validate_one h100 2
validate_one k20 1

# ---------------------------------------------------------------- --from: the same numbers from the recorded files
echo
echo "================ validate --from"
d=$T/h100_s1
if [ ! -s "$d/trace.csv" ] || [ ! -s "$d/events.csv" ]; then
    echo "FAIL  validate --sim wrote no trace.csv and events.csv into $d"
    status=1
elif run from validate --from "$d" --out "$T/from"; then
    same_numbers "$d/validation.csv" "$T/from/validation.csv" || status=1
    python3 - "$d/profile.json" "$T/from/profile.json" <<'PY' || status=1
import json, sys
try:
    a, b = ({r["name"]: r["response"] for r in json.load(open(p))["readings"]} for p in sys.argv[1:3])
except (OSError, ValueError, KeyError) as e:
    print(f"FAIL  --from's profile.json: {e}")
    sys.exit(1)
print(("ok    " if a == b else "FAIL  ") + f"--from's profile.json has the same readings and responses: {b}")
sys.exit(0 if a == b else 1)
PY
fi

echo
[ $status -eq 0 ] && echo "validate_sim: all checks passed" || echo "validate_sim: some checks FAILED"
exit $status
