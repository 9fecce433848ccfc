#!/usr/bin/env bash
# Every tw_status enumerator of include/truewatt.h has its own tw_strerror text.
# Reads the enumerators and their values from the header (so a code appended
# later is checked without touching this test), checks that the values are
# distinct and run 0, 1, 2, ... without a gap (codes are never renumbered),
# then has strerror_check look up the text of each.
#
# usage: error_codes.sh STRERROR_CHECK TRUEWATT_H
set -u
export LC_ALL=C

CHECK=${1:?usage: error_codes.sh STRERROR_CHECK HEADER}
HEADER=${2:?usage: error_codes.sh STRERROR_CHECK HEADER}
command -v python3 >/dev/null || { echo "python3 is needed" >&2; exit 2; }

codes=$(python3 - "$HEADER" <<'PY'
import re, sys

text = open(sys.argv[1]).read()
m = re.search(r"typedef\s+enum\s+tw_status\s*\{(.*?)\}\s*tw_status\s*;", text, re.S)
if not m:
    print("FAIL: no 'typedef enum tw_status { ... } tw_status;' in the header", file=sys.stderr)
    sys.exit(1)
body = re.sub(r"/\*.*?\*/", "", m.group(1), flags=re.S)
body = re.sub(r"//[^\n]*", "", body)
names, values, nxt = [], [], 0
for item in [s.strip() for s in body.split(",") if s.strip()]:
    mm = re.fullmatch(r"(TW_[A-Z0-9_]+)\s*(?:=\s*(\d+))?", item)
    if not mm:
        print(f"FAIL: cannot read the enumerator '{item}'", file=sys.stderr)
        sys.exit(1)
    v = int(mm.group(2)) if mm.group(2) is not None else nxt
    names.append(mm.group(1))
    values.append(v)
    nxt = v + 1
bad = False
if len(set(values)) != len(values):
    print(f"FAIL: tw_status values repeat: {list(zip(names, values))}", file=sys.stderr)
    bad = True
if sorted(values) != list(range(len(values))):
    print(f"FAIL: tw_status values are not 0..{len(values) - 1}: {list(zip(names, values))}", file=sys.stderr)
    bad = True
if names[0:1] != ["TW_OK"] or values[0:1] != [0]:
    print("FAIL: the first tw_status is not TW_OK = 0", file=sys.stderr)
    bad = True
for n, v in zip(names, values):
    print(f"{n}={v}", file=sys.stderr)
print(" ".join(str(v) for v in values))
sys.exit(1 if bad else 0)
PY
) || { echo "FAIL: reading tw_status from $HEADER"; exit 1; }

echo "tw_status codes in the header: $codes"
# shellcheck disable=SC2086 # the codes are words on purpose
"$CHECK" $codes
