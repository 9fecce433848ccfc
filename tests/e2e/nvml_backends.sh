#!/usr/bin/env bash
# The CLI's view of the nvml backend through the fake libnvidia-ml.so.1:
# available with it, and the precise reason when the library is missing or
# nvmlInit fails.
#
# usage: nvml_backends.sh BIN FAKE_LIBNVIDIA_ML   (FAKE defaults to $TW_FAKE_NVML_PATH)
set -u
export LC_ALL=C

BIN=${1:?usage: nvml_backends.sh BIN FAKE_LIBNVIDIA_ML}
FAKE=${2:-${TW_FAKE_NVML_PATH:-}}
[ -n "$FAKE" ] || { echo "no fake libnvidia-ml given" >&2; exit 2; }
[ -f "$FAKE" ] || { echo "fake libnvidia-ml not built: $FAKE" >&2; exit 2; }

status=0
check() { # check NAME PATTERN OUTPUT
    if printf '%s\n' "$3" | grep -Eq -- "$2"; then
        echo "ok: $1"
    else
        echo "FAIL: $1: no /$2/ in:"
        printf '%s\n' "$3"
        status=1
    fi
}

out=$(env -u TW_FAKE_NVML_INIT_ERROR TW_NVML_LIBRARY="$FAKE" "$BIN" backends 2>&1)
check "available with the fake" '^nvml +available +NVIDIA GPUs through libnvidia-ml \(dlopen\)$' "$out"

out=$(TW_NVML_LIBRARY="$FAKE" "$BIN" backends --json 2>&1)
check "json: available" '"name": *"nvml", *"available": *true' "$(printf '%s' "$out" | tr -d '\n')"

out=$(TW_NVML_LIBRARY="$FAKE" TW_FAKE_NVML_INIT_ERROR=9 "$BIN" backends 2>&1)
check "nvmlInit failure names NVML's message and code" '^nvml +unavailable +nvmlInit: Driver Not Loaded \(9\)$' "$out"

out=$(TW_NVML_LIBRARY=/nonexistent/libnvidia-ml.so.1 "$BIN" backends 2>&1)
check "missing library names the file and the variable" \
    '^nvml +unavailable +/nonexistent/libnvidia-ml.so.1: cannot open shared object file: No such file or directory \(library from TW_NVML_LIBRARY\)$' \
    "$out"

exit $status
