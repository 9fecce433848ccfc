# Sourced by the run_*.sh end-to-end tests: arguments BIN FAKE_LIBNVIDIA_ML,
# skip (77) when the fake or python3 is missing, the fake as libnvidia-ml,
# and a temporary folder T (removed at exit) as the working directory.
# usage: . run_common.sh NAME "$@"
tw_e2e_name=$1
shift
export LC_ALL=C
BIN=${1:?usage: $tw_e2e_name.sh BIN FAKE_LIBNVIDIA_ML}
case $BIN in /*) ;; *) BIN=$(pwd)/$BIN ;; esac
FAKE=${2:-${TW_FAKE_NVML_PATH:-}}
case $FAKE in /* | "") ;; *) FAKE=$(pwd)/$FAKE ;; esac
[ -f "$FAKE" ] || { echo "SKIP: the fake libnvidia-ml is not built ($FAKE)"; exit 77; }
command -v python3 >/dev/null || { echo "SKIP: python3 is needed"; exit 77; }
export TW_NVML_LIBRARY=$FAKE
"$BIN" backends | grep -Eq '^nvml +available' || { echo "SKIP: the nvml backend is not available with the fake"; exit 77; }
T=$(mktemp -d "${TW_TMPDIR:-${TMPDIR:-/tmp}}/e2e-$tw_e2e_name.XXXXXX") || exit 2
trap 'rm -rf "$T"' EXIT

# killed_run_reports RUN: `truewatt report RUN --json` of a run whose truewatt was killed gives
# the warning that it did not finish, and every "tick" kernel the file holds (ok/fail: the caller's)
killed_run_reports() {
    "$BIN" report "$1" --json >"$1.json" 2>err || { fail "report of the killed run: $(cat err)"; return; }
    python3 - "$1.json" "$1" <<'PY' && ok "the killed run reports every recorded kernel, with a warning" || fail "killed run's report"
import json, sqlite3, sys
d = json.load(open(sys.argv[1]))
assert any("did not finish this run" in w for w in d["warnings"]), d["warnings"]
k = {x["name"]: x for x in d["devices"][0]["names"]}
n = sqlite3.connect(sys.argv[2]).execute("SELECT count(*) FROM activities").fetchone()[0]
assert k["tick"]["launches"] == n, (k["tick"], n)
PY
}
