#!/usr/bin/env bash
# data/arafa2020_table1.csv, the transcription of Table I of Arafa et al. 2020
# (arXiv 2002.07795), against its source.
#  1. The CSV is well formed: comment lines only at the top, naming the source
#     and the units; the expected header; one field count for every row; the
#     energy columns named <gpu>_<papi|mtsm>_<opt|nonopt>_uj (µJ, the paper's
#     unit) and holding plain decimals as printed, or nothing (then with a note).
#  2. Five values grepped from the paper's text (shared/papers) sit in the right
#     cells, and every row, label and number equals the text's Table I
#     character for character (no rounding, no arithmetic).
#  3. The Volta examples quoted in shared/docs/microbenchmarks.md section 1.5
#     (rounded there) agree with the CSV's MTSM cells to the digits they print.
# Parts 2 and 3 need the shared/ folder beside the repository; without it the
# test ends with 77 (skipped) once part 1 has passed.
#
# usage: data_tables.sh CSV SHARED_DIR
set -u
export LC_ALL=C

CSV=${1:?usage: data_tables.sh CSV SHARED_DIR}
SHARED=${2:?usage: data_tables.sh CSV SHARED_DIR}
PAPER=$SHARED/papers/arafa2020-instruction-level-energy.txt
DOC=$SHARED/docs/microbenchmarks.md
command -v python3 >/dev/null 2>&1 || { echo "python3 not installed: skipped"; exit 77; }
[ -f "$CSV" ] || { echo "FAIL: $CSV not found"; exit 1; }

# ---- 1. well formed
python3 - "$CSV" <<'PY' || exit 1
import re, sys

lines = open(sys.argv[1], encoding="utf-8").read().split("\n")
if lines and lines[-1] == "":
    lines.pop()
bad = []
comments = []
while lines and lines[0].startswith("#"):
    comments.append(lines.pop(0))
head = "\n".join(comments)
for must in ("Arafa", "Verified Instruction-Level Energy Consumption Measurement for NVIDIA GPUs",
             "arXiv 2002.07795", "Table I", "µJ", "2020", "Transcription"):
    if must not in head:
        bad.append(f"the comment lines do not name '{must}'")
if any(l.startswith("#") for l in lines):
    bad.append("comment lines after the header")
if any(l.strip() == "" for l in lines):
    bad.append("empty lines")
if not lines:
    print("FAIL: no header", file=sys.stderr)
    sys.exit(1)
header = lines[0].split(",")
gpus = ["maxwell", "pascal", "volta", "turing"]
energy = [f"{g}_{m}_{o}_uj" for o in ("opt", "nonopt") for g in gpus for m in ("papi", "mtsm")]
want = ["category_no", "category", "row_label", "ptx_names", "signedness"] + energy + ["note"]
for name in header:
    if re.search(r"_(opt|nonopt)", name) and not re.fullmatch(
            r"(maxwell|pascal|volta|turing)_(papi|mtsm)_(opt|nonopt)_uj", name):
        bad.append(f"energy column '{name}' does not read <gpu>_<papi|mtsm>_<opt|nonopt>_uj (µJ)")
if header != want:
    bad.append(f"header is\n  {header}\nwanted\n  {want}")
    for b in bad:
        print("FAIL:", b, file=sys.stderr)
    sys.exit(1)
rows = [l.split(",") for l in lines[1:]]
if not rows:
    bad.append("no data rows")
seen = set()
last_cat = 0
for k, r in enumerate(rows, start=2):
    where = f"data line {k} ({','.join(r[:3])})"
    if '"' in lines[k - 1]:
        bad.append(f"{where}: quotes are not used in this file")
    if len(r) != len(header):
        bad.append(f"{where}: {len(r)} fields, the header has {len(header)}")
        continue
    d = dict(zip(header, r))
    if not re.fullmatch(r"[1-9]", d["category_no"]) or int(d["category_no"]) < last_cat:
        bad.append(f"{where}: category_no '{d['category_no']}' is not 1-9 in ascending order")
    else:
        last_cat = int(d["category_no"])
    if not d["category"] or not d["row_label"] or not d["ptx_names"]:
        bad.append(f"{where}: empty category, row_label or ptx_names")
    key = (d["category_no"], d["row_label"])
    if key in seen:
        bad.append(f"{where}: row label repeated within its category")
    seen.add(key)
    marker = {"{s}": "signed", "{u}": "unsigned"}.get(d["row_label"].split(" ")[0], "")
    if d["signedness"] != marker:
        bad.append(f"{where}: signedness '{d['signedness']}', the label's marker says '{marker}'")
    bare = re.sub(r"^\{[su]\} ", "", d["row_label"])
    ptx = "/".join(p.strip().replace("()", "") for p in bare.split("/"))
    if d["ptx_names"] != ptx:
        bad.append(f"{where}: ptx_names '{d['ptx_names']}', the label gives '{ptx}'")
    empty = False
    for name in energy:
        v = d[name]
        if v == "":
            empty = True
            if name.startswith("volta_"):
                bad.append(f"{where}: {name} is empty (the Volta columns are complete)")
            continue
        if not re.fullmatch(r"[0-9]+\.[0-9]+", v):
            bad.append(f"{where}: {name} '{v}' is not a plain decimal as printed")
            continue
        x = float(v)
        if not 0.0 <= x < 1000.0:
            bad.append(f"{where}: {name} {v} µJ is out of range")
    if empty and not d["note"]:
        bad.append(f"{where}: an empty energy cell needs a note saying why")
if bad:
    for b in bad:
        print("FAIL:", b, file=sys.stderr)
    sys.exit(1)
print(f"csv: {len(rows)} rows, {len(header)} columns ({len(energy)} in µJ), well formed")
PY

skipped=""

# ---- 2. against the paper's text
if [ -f "$PAPER" ]; then
    cell() { # CATEGORY_NO ROW_LABEL COLUMN: that cell of the CSV
        awk -F, -v c="$1" -v l="$2" -v n="$3" '
            /^#/ { next }
            !h { for (i = 1; i <= NF; i++) if ($i == n) k = i; h = 1; next }
            $1 == c && $3 == l { print $k }' "$CSV"
    }
    fail=0
    spot() { # TEXT CATEGORY_NO ROW_LABEL COLUMN_PAPI COLUMN_MTSM: TEXT ("papi , mtsm") is printed
        grep -qF -- "$1" "$PAPER" || { echo "FAIL: '$1' is not in $PAPER"; fail=1; return; }
        local got want
        got="$(cell "$2" "$3" "$4")|$(cell "$2" "$3" "$5")"
        want=$(printf '%s' "$1" | sed 's/ *, */|/')
        [ "$got" = "$want" ] || { echo "FAIL: ($2, $3) $4|$5 is '$got', the paper prints '$1'"; fail=1; }
    }
    grep -qF "All the numbers are in (µJ)" "$PAPER" || { echo "FAIL: the paper's unit line is not in $PAPER"; fail=1; }
    spot "4.2489 , 4.0660" 1 "{s} div" volta_papi_opt_uj volta_mtsm_opt_uj
    spot "27.4008 , 27.0584" 1 "{s} div" volta_papi_nonopt_uj volta_mtsm_nonopt_uj
    spot "31.0212 , 30.4121" 4 "div" volta_papi_nonopt_uj volta_mtsm_nonopt_uj
    spot "0.5887 , 0.5867" 7 "sin / cos" volta_papi_opt_uj volta_mtsm_opt_uj
    spot "0.9889, 0.952467" 6 "subc" volta_papi_nonopt_uj volta_mtsm_nonopt_uj
    [ $fail = 0 ] || exit 1
    echo "paper: 5 spot values in place"

    python3 - "$CSV" "$PAPER" <<'PY' || exit 1
import re, sys

csv_lines = [l for l in open(sys.argv[1], encoding="utf-8").read().split("\n") if l and not l.startswith("#")]
header = csv_lines[0].split(",")
csv_rows = [dict(zip(header, l.split(","))) for l in csv_lines[1:]]
energy = [n for n in header if n.endswith("_uj")]

# Table I as the text prints it: "(N) Category" lines, then rows whose label may
# run over several lines, then 8 "PAPI , MTSM" pairs (or NA for both) per row.
text = open(sys.argv[2], encoding="utf-8").read().split("\n")
try:
    start = next(i for i, l in enumerate(text) if l.strip() == "TABLE I")
except StopIteration:
    print("FAIL: no 'TABLE I' line in the paper's text", file=sys.stderr)
    sys.exit(1)
num = re.compile(r"(?:[0-9]+\.[0-9]+|NA)$")
paper, cat, pending = [], None, ""
for l in text[start:]:
    s = l.strip()
    if not s:
        continue
    m = re.match(r"\(([0-9])\) (.*)$", s)
    if m:
        cat, pending = (m.group(1), m.group(2)), ""
        continue
    if cat is None:
        continue
    toks = s.replace(",", " , ").split()
    i = next((k for k, t in enumerate(toks) if num.match(t)), None)
    if i is None:
        pending = (pending + " " + s).strip()
        continue
    label, pending = (pending + " " + " ".join(toks[:i])).strip(), ""
    vals = []
    for t in toks[i:]:
        if t != ",":
            vals += ["", ""] if t == "NA" else [t]
    paper.append((cat[0], cat[1], label, vals))

bad = []
if len(paper) != len(csv_rows):
    bad.append(f"the text's Table I has {len(paper)} rows, the CSV {len(csv_rows)}")
for p, c in zip(paper, csv_rows):
    got = (c["category_no"], c["category"], c["row_label"], [c[n] for n in energy])
    if got != p:
        bad.append(f"row '{p[2]}' of category {p[0]}:\n  paper {p}\n  csv   {got}")
if bad:
    for b in bad:
        print("FAIL:", b, file=sys.stderr)
    sys.exit(1)
n = sum(1 for p in paper for v in p[3] if v)
print(f"paper: all {len(paper)} rows and {n} numbers equal the text's Table I")
PY
else
    echo "$PAPER not found: the checks against the paper skipped"
    skipped=1
fi

# ---- 3. the Volta examples quoted in docs/microbenchmarks.md (section 1.5)
if [ -f "$DOC" ]; then
    python3 - "$CSV" "$DOC" <<'PY' || exit 1
import re, sys
from decimal import Decimal

csv_lines = [l for l in open(sys.argv[1], encoding="utf-8").read().split("\n") if l and not l.startswith("#")]
header = csv_lines[0].split(",")
rows = {(d["category_no"], d["row_label"]): d for d in (dict(zip(header, l.split(","))) for l in csv_lines[1:])}

doc = open(sys.argv[2], encoding="utf-8").read().split("\n")
try:
    at = next(i for i, l in enumerate(doc) if "Volta examples" in l and "MTSM" in l)
except StopIteration:
    print("FAIL: no 'Volta examples ... MTSM' line in microbenchmarks.md", file=sys.stderr)
    sys.exit(1)
table = []
for l in doc[at + 1:]:
    s = l.strip()
    if not s and not table:
        continue
    if not s.startswith("|"):
        break
    table.append([c.strip() for c in s.strip("|").split("|")])
# the doc's names for the table's rows
names = {
    "int add": ("1", "add / sub / min / max"), "int mul": ("1", "mul / mad"),
    "s32 div": ("1", "{s} div"), "s32 rem": ("1", "{s} rem"), "u32 div": ("1", "{u} div"),
    "u32 rem": ("1", "{u} rem"), "f32 add": ("3", "add / sub / min / max"),
    "f32 fma": ("3", "mul / mad / fma"), "f32 mul": ("3", "mul / mad / fma"), "f32 div": ("3", "div"),
    "f64 add": ("4", "add / sub / min / max"), "f64 div": ("4", "div"), "rcp.rn": ("7", "rcp"),
    "sqrt.rn": ("7", "sqrt"), "sqrt.approx": ("7", "approx.sqrt"), "rsqrt": ("7", "rsqrt"),
    "sin": ("7", "sin / cos"), "cos": ("7", "sin / cos"), "lg2": ("7", "lg2"), "ex2": ("7", "ex2"),
}
bad, n = [], 0
body = [r for r in table[1:] if not all(set(c) <= set("-: ") for c in r)]
if len(body) < 3:
    bad.append(f"only {len(body)} example rows found under the 'Volta examples' line")
for r in body:
    if len(r) != 3:
        bad.append(f"doc row {r} does not have 3 cells")
        continue
    if r[0] not in names:
        bad.append(f"doc row '{r[0]}': unknown name (add it to the map in data_tables.sh)")
        continue
    d = rows.get(names[r[0]])
    if d is None:
        bad.append(f"doc row '{r[0]}': no CSV row {names[r[0]]}")
        continue
    for quoted, column in ((r[1], "volta_mtsm_opt_uj"), (r[2], "volta_mtsm_nonopt_uj")):
        q, v = Decimal(quoted), Decimal(d[column])
        half = Decimal(5) * Decimal(10) ** (q.as_tuple().exponent - 1)  # half a unit of the last printed digit
        if abs(v - q) > half:
            bad.append(f"doc '{r[0]}' quotes {quoted}, the CSV's {column} is {d[column]}")
        n += 1
if bad:
    for b in bad:
        print("FAIL:", b, file=sys.stderr)
    sys.exit(1)
print(f"microbenchmarks.md: {n} quoted Volta MTSM values agree with the CSV to their printed digits")
PY
else
    echo "$DOC not found: the check of its quoted values skipped"
    skipped=1
fi

[ -z "$skipped" ] || exit 77
exit 0
