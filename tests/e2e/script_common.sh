# Sourced by the end-to-end tests of the Python scripts (attrib_table.sh, attrib_across.sh, activity_model.sh,
# offline_score.sh, pm_clock.sh, realapps_check.sh, attrib_pm_lead.sh): LC_ALL=C, skip (77) without python3, a
# temporary folder T under $TW_TMPDIR (else $TMPDIR or /tmp) removed at exit, fail=0, bad MESSAGE, which prints it
# and records a failure, and refused WHAT TEXT CMD..., which records one unless CMD fails and says TEXT.
# usage: . script_common.sh NAME
export LC_ALL=C
command -v python3 >/dev/null || { echo "SKIP: python3 is needed"; exit 77; }
T=$(mktemp -d "${TW_TMPDIR:-${TMPDIR:-/tmp}}/e2e-$1.XXXXXX") || exit 2
trap 'rm -rf "$T"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }
# refused WHAT TEXT CMD...: bad input refused: CMD must exit non-zero and its output hold TEXT (a fixed string: the
# file, line or problem it names); WHAT names the input in the failure
refused() {
  local what=$1 text=$2 out="$T/refused.out"
  shift 2
  if "$@" >"$out" 2>&1; then
    bad "$what was accepted"
  elif ! grep -qF -- "$text" "$out"; then
    bad "$what: the message lacks '$text': $(cat "$out")"
  fi
}
