#!/usr/bin/env bash
# Table-driven golden tests of the truewatt command line (LIKWID style).
#
# usage: run_cases.sh BIN CASES DATA_DIR [PART]
#
# PART (1 or 2) runs only the cases before (1) or after (2) the line
# "# PART 2" of CASES, so that ctest runs them as two tests, each well under
# its timeout under ASan; without PART, every case. Put the marker between
# sections: the cases of one run share @TMP@, the two parts do not.
#
# One case per line of CASES, fields separated by " | " (a pipe with a space
# on each side, so a regex may still use '|' for alternation when written
# without spaces around it):
#
#   ARGS | EXIT n | CHECK [| CHECK ...]
#
# ARGS is split into words on blanks (no quoting; every word is one argument;
# an empty ARGS runs the tool with no arguments). Checks:
#
#   EXIT n          the exit status is n (required, exactly one)
#   GREP regex      stdout+stderr combined has a line matching the ERE
#   NOGREP regex    ... has no line matching it
#   LINES n         stdout+stderr combined are exactly n lines
#   JSON            stdout is strict JSON (no NaN/Infinity), checked by python3
#   JSON expr       ... and the python3 expression expr, with the document as d,
#                   is true (e.g. JSON d["backends"][0]["name"] == "sim")
#   FILE path       the file exists and is not empty after the run
#   NEEDS path      the case runs only when path exists (e.g. @SHARED@/data): else
#                   it is reported as "skip", and the run exits 77 (ctest's skip)
#                   when nothing failed, or 1 with TW_REQUIRE_DATA=1
#   KNOWN why       the case is a known defect: its failure is reported as
#                   "xfail" and does not fail the run; when it starts passing it
#                   fails as "XPASS" so that the marker gets removed
#
# Placeholders, replaced in every field after splitting: @TMP@ (a temp dir,
# shared by all cases of a run, so a case may read what an earlier case
# wrote), @DATA@ (DATA_DIR, absolute), @BIN@ (BIN) and @SHARED@ (the
# project's shared/ folder: $TW_SHARED_DIR, else ../shared of the source tree). Each case runs with
# @TMP@ as its working directory, so default output files land there.
# Lines that are blank or start with '#' are comments.
#
# Prints one line per case (ok / FAIL with details / xfail / XPASS), then a
# last line "N passed, M failed"; exits 1 when any case failed, 77 when none
# failed but some were skipped, 2 on bad use.
set -u
export LC_ALL=C

if [ $# -ne 3 ] && [ $# -ne 4 ]; then
    echo "usage: $0 BIN CASES DATA_DIR [PART]" >&2
    exit 2
fi
PART=${4:-}
case $PART in '' | 1 | 2) ;; *) echo "$0: PART must be 1 or 2, not '$PART'" >&2; exit 2 ;; esac
BIN=$1
CASES=$2
DATA=$(cd "$3" && pwd) || { echo "$0: no data folder $3" >&2; exit 2; }
case $BIN in /*) ;; *) BIN=$(pwd)/$BIN ;; esac
[ -x "$BIN" ] || { echo "$0: $BIN is not an executable" >&2; exit 2; }
[ -r "$CASES" ] || { echo "$0: cannot read $CASES" >&2; exit 2; }
command -v python3 >/dev/null || { echo "$0: python3 is needed for JSON checks" >&2; exit 2; }

SHARED=${TW_SHARED_DIR:-$(cd "$(dirname "$0")/../../.." && pwd)/shared}

TMP=$(mktemp -d "${TW_TMPDIR:-${TMPDIR:-/tmp}}/cli-cases.XXXXXX") || exit 2
trap 'rm -rf "$TMP"' EXIT
TMP=$(cd "$TMP" && pwd) || exit 2 # absolute: cases run inside it
RUN=$TMP/.run # the captured output of the current case, outside @TMP@'s listing
mkdir "$RUN" || exit 2

# per-case timeout, so that a hang fails one case instead of the whole run
TIMEOUT=()
command -v timeout >/dev/null && TIMEOUT=(timeout 120)

subst() {
    local s=$1
    s=${s//@TMP@/$TMP}
    s=${s//@DATA@/$DATA}
    s=${s//@BIN@/$BIN}
    s=${s//@SHARED@/$SHARED}
    printf '%s' "$s"
}

trim() {
    local s=$1
    s=${s#"${s%%[![:space:]]*}"}
    s=${s%"${s##*[![:space:]]}"}
    printf '%s' "$s"
}

# Strict JSON of file $1; with $2, also evaluates it on the document d.
json_check() {
    python3 - "$1" "${2:-}" <<'PY'
import json, sys

def reject(name):
    raise ValueError("not JSON: " + name)

try:
    with open(sys.argv[1], encoding="utf-8") as f:
        d = json.load(f, parse_constant=reject)
except Exception as e:  # noqa: BLE001 - any failure is the answer
    print("stdout is not valid JSON: %s" % e)
    sys.exit(1)
expr = sys.argv[2]
if expr:
    try:
        ok = eval(expr, {"__builtins__": __builtins__}, {"d": d})
    except Exception as e:  # noqa: BLE001
        print("JSON expression raised %s: %s" % (type(e).__name__, e))
        sys.exit(1)
    if not ok:
        print("JSON expression is false: %s" % expr)
        sys.exit(1)
PY
}

passed=0
skipped=0
failed=0
known=0
lineno=0
in_part=1
while IFS= read -r line || [ -n "$line" ]; do
    lineno=$((lineno + 1))
    stripped=$(trim "$line")
    if [ "$stripped" = "# PART 2" ]; then in_part=2; fi
    case $stripped in '' | '#'*) continue ;; esac
    [ -z "$PART" ] || [ "$PART" = "$in_part" ] || continue

    # split on " | "
    fields=()
    rest=$line
    while [[ $rest == *" | "* ]]; do
        fields+=("${rest%%" | "*}")
        rest=${rest#*" | "}
    done
    fields+=("$rest")

    args_text=$(trim "${fields[0]}")
    read -r -a words <<<"$args_text"
    args=()
    for w in "${words[@]+"${words[@]}"}"; do args+=("$(subst "$w")"); done

    want_exit=
    known_why=
    needs=()
    problems=()
    checks=()
    for ((i = 1; i < ${#fields[@]}; i++)); do
        f=$(trim "${fields[i]}")
        kw=${f%%[[:space:]]*}
        if [ "$kw" = "$f" ]; then val=; else val=$(trim "${f#"$kw"}"); fi
        case $kw in
        EXIT)
            if [[ ! $val =~ ^[0-9]+$ ]] || [ -n "$want_exit" ]; then
                problems+=("bad EXIT field '$f'")
            else
                want_exit=$val
            fi
            ;;
        KNOWN) known_why=${val:-known defect} ;;
        NEEDS) needs+=("$val") ;;
        GREP | NOGREP | LINES | FILE)
            if [ -z "$val" ]; then problems+=("$kw needs an argument"); else checks+=("$kw" "$val"); fi
            ;;
        JSON) checks+=("$kw" "$val") ;;
        *) problems+=("unknown keyword in field '$f'") ;;
        esac
    done
    [ -n "$want_exit" ] || problems+=("no EXIT field")
    if [ ${#problems[@]} -gt 0 ]; then
        failed=$((failed + 1))
        echo "FAIL  line $lineno: $args_text"
        for p in "${problems[@]}"; do echo "    malformed case: $p"; done
        continue
    fi

    missing=
    for n in "${needs[@]+"${needs[@]}"}"; do [ -e "$(subst "$n")" ] || missing=$(subst "$n"); done
    if [ -n "$missing" ]; then
        skipped=$((skipped + 1))
        echo "skip  line $lineno: $args_text (no $missing)"
        continue
    fi

    (cd "$TMP" && "${TIMEOUT[@]+"${TIMEOUT[@]}"}" "$BIN" "${args[@]+"${args[@]}"}") \
        >"$RUN/stdout" 2>"$RUN/stderr" </dev/null
    rc=$?
    cat "$RUN/stdout" "$RUN/stderr" >"$RUN/all"

    [ "$rc" = "$want_exit" ] || problems+=("exit status $rc, expected $want_exit")
    for ((i = 0; i < ${#checks[@]}; i += 2)); do
        kw=${checks[i]}
        val=$(subst "${checks[i + 1]}")
        case $kw in
        GREP)
            grep -Eq -e "$val" "$RUN/all" 2>/dev/null
            s=$?
            [ $s -eq 0 ] || problems+=("no line matches GREP /$val/$([ $s -gt 1 ] && echo ' (bad regex)')")
            ;;
        NOGREP)
            grep -Eq -e "$val" "$RUN/all" 2>/dev/null
            s=$?
            [ $s -eq 1 ] || problems+=("$([ $s -gt 1 ] && echo 'bad regex in ' )NOGREP /$val/ matches: $(grep -E -m1 -e "$val" "$RUN/all" 2>/dev/null)")
            ;;
        LINES)
            n=$(wc -l <"$RUN/all" | tr -d ' ')
            # a last line without a newline still counts
            [ -s "$RUN/all" ] && [ -n "$(tail -c1 "$RUN/all")" ] && n=$((n + 1))
            [ "$n" = "$val" ] || problems+=("output has $n lines, expected $val")
            ;;
        FILE)
            [ -s "$val" ] || problems+=("file $val is missing or empty")
            ;;
        JSON)
            if ! msg=$(json_check "$RUN/stdout" "$val"); then problems+=("$msg"); fi
            ;;
        esac
    done

    if [ ${#problems[@]} -eq 0 ]; then
        if [ -n "$known_why" ]; then
            failed=$((failed + 1))
            echo "XPASS line $lineno: $args_text"
            echo "    the case passes now: remove its KNOWN field ($known_why)"
        else
            passed=$((passed + 1))
            echo "ok    line $lineno: $args_text"
        fi
        continue
    fi
    if [ -n "$known_why" ]; then
        known=$((known + 1))
        echo "xfail line $lineno: $args_text  [known: $known_why]"
        for p in "${problems[@]}"; do echo "    $p"; done
        continue
    fi
    failed=$((failed + 1))
    echo "FAIL  line $lineno: $args_text"
    for p in "${problems[@]}"; do echo "    $p"; done
    echo "    --- output (stdout then stderr, first 30 lines):"
    head -n 30 "$RUN/all" | sed 's/^/    | /'
done <"$CASES"

[ $known -eq 0 ] || echo "($known known defect(s) marked KNOWN, not counted)"
[ $skipped -eq 0 ] || echo "SKIP: $skipped case(s) skipped: what they need is not here"
echo "$passed passed, $failed failed"
[ $failed -eq 0 ] || exit 1
# a case whose data is missing never passes in silence: 77 is ctest's skip;
# with TW_REQUIRE_DATA=1 (a CI that has shared/) it fails
if [ $skipped -gt 0 ]; then
    [ "${TW_REQUIRE_DATA:-}" = 1 ] && { echo "FAIL: $skipped case(s) lacked their data and TW_REQUIRE_DATA=1"; exit 1; }
    exit 77
fi
exit 0
