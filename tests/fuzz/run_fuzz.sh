#!/usr/bin/env bash
# Runs one libFuzzer harness for a bounded time from its seed corpus.
#
# usage: run_fuzz.sh HARNESS SEED_DIR SECONDS|-runs=N [CORPUS_DIR]
#
# New inputs go to CORPUS_DIR (default: a temp folder, removed after), never
# to SEED_DIR. Fails (non-zero) on a crash, a leak, a hang (-timeout), a
# memory blow-up (-rss_limit_mb) or a property the harness checks; the input
# that did it is kept as $TW_TMPDIR/<harness>-crash-* and its path printed.
# Prints the run's final statistics (executions, corpus size).
set -euo pipefail
if [ $# -lt 3 ]; then
    echo "usage: $0 HARNESS SEED_DIR SECONDS|-runs=N [CORPUS_DIR]" >&2
    exit 2
fi
harness=$1 seeds=$2 budget=$3
[ -x "$harness" ] || { echo "$0: $harness is not an executable" >&2; exit 2; }
[ -d "$seeds" ] || { echo "$0: no seed corpus $seeds" >&2; exit 2; }
case $budget in
-runs=*) limit=("$budget") ;;
*[!0-9]* | '') echo "$0: SECONDS must be a whole number, or -runs=N" >&2; exit 2 ;;
*) limit=(-max_total_time="$budget") ;;
esac
tmp_root=${TW_TMPDIR:-${TMPDIR:-/tmp}}
name=$(basename "$harness")
if [ $# -ge 4 ]; then
    corpus=$4
    mkdir -p "$corpus"
else
    corpus=$(mktemp -d "$tmp_root/$name-corpus.XXXXXX")
    trap 'rm -rf "$corpus"' EXIT
fi
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export TW_TMPDIR=$tmp_root
# -timeout: one input taking longer is a hang; -max_len: parsers read lines,
# 4 KiB of them is plenty to reach every branch and keeps runs fast
log=$(mktemp "$tmp_root/$name-log.XXXXXX")
status=0
"$harness" "${limit[@]}" -timeout=10 -rss_limit_mb=2048 -max_len=4096 -print_final_stats=1 \
    -artifact_prefix="$tmp_root/$name-" "$corpus" "$seeds" >"$log" 2>&1 || status=$?
# libFuzzer's progress lines ("#1024 pulse ...") are many; the rest is kept
grep -v '^#[0-9]' "$log" || true
rm -f "$log"
if [ "$status" -ne 0 ]; then
    echo "$0: $name failed (status $status): the input is in $tmp_root/$name-*" >&2
    exit 1
fi
