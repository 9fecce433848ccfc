#!/usr/bin/env bash
# Runs one libFuzzer harness for a bounded time from its seed corpus, in
# one process or in several on a shared corpus.
#
# usage: run_fuzz.sh HARNESS SEED_DIR SECONDS|-runs=N [CORPUS_DIR]
#
# New inputs go to CORPUS_DIR (default: a temp folder, removed after), never
# to SEED_DIR. Fails (non-zero) on a crash, a leak, a hang (-timeout), a
# memory blow-up (-rss_limit_mb) or a property the harness checks; the input
# that did it is kept as $TW_TMPDIR/<harness>-crash-* and its path printed.
#
# TW_FUZZ_WORKERS=k (default 1) runs k processes of the harness at once on
# CORPUS_DIR, each for SECONDS (or N/k executions, rounded up): libFuzzer
# reloads the corpus every second, so each worker takes up what the others
# found. TW_FUZZ_LOGS=DIR keeps each worker's log as DIR/NAME.wK.log (NAME
# without "fuzz_"; libFuzzer's progress lines left out, its final statistics
# and a last line "worker exit status: S" kept; scripts/fuzz-report reads
# them) and prints only failures; without it each log is printed, then removed.
set -euo pipefail
if [ $# -lt 3 ]; then
    echo "usage: $0 HARNESS SEED_DIR SECONDS|-runs=N [CORPUS_DIR]" >&2
    exit 2
fi
harness=$1 seeds=$2 budget=$3
invocation="TW_FUZZ_WORKERS=${TW_FUZZ_WORKERS:-1} $0 $*"
workers=${TW_FUZZ_WORKERS:-1}
[ -x "$harness" ] || { echo "$0: $harness is not an executable" >&2; exit 2; }
[ -d "$seeds" ] || { echo "$0: no seed corpus $seeds" >&2; exit 2; }
case $workers in
*[!0-9]* | '' | 0) echo "$0: TW_FUZZ_WORKERS must be a whole number >= 1" >&2; exit 2 ;;
esac
case $budget in
-runs=*[!0-9]* | -runs=) echo "$0: -runs=N needs a whole number" >&2; exit 2 ;;
-runs=*) limit=(-runs=$(( (${budget#-runs=} + workers - 1) / workers ))) ;;
*[!0-9]* | '') echo "$0: SECONDS must be a whole number, or -runs=N" >&2; exit 2 ;;
*) limit=(-max_total_time="$budget") ;;
esac
tmp_root=${TW_TMPDIR:-${TMPDIR:-/tmp}}
name=$(basename "$harness")
short=${name#fuzz_}
own_corpus=
if [ $# -ge 4 ]; then
    corpus=$4
    mkdir -p "$corpus"
else
    corpus=$(mktemp -d "$tmp_root/$name-corpus.XXXXXX")
    own_corpus=$corpus
fi
if [ -n "${TW_FUZZ_LOGS:-}" ]; then
    logs=$TW_FUZZ_LOGS
    mkdir -p "$logs"
else
    logs=$(mktemp -d "$tmp_root/$name-logs.XXXXXX")
fi
cleanup() {
    [ -z "$own_corpus" ] || rm -rf "$own_corpus"
    [ -n "${TW_FUZZ_LOGS:-}" ] || rm -rf "$logs"
}
trap cleanup EXIT
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

# One worker: -timeout: one input taking longer is a hang; -max_len: parsers
# read lines, 4 KiB of them is plenty to reach every branch and keeps runs
# fast. libFuzzer's progress lines ("#1024 pulse ..."), the functions it
# reached (NEW_FUNC) and its recommended dictionary are many; the rest is kept.
worker() {
    local k=$1 status=0
    # each log names what wrote it (the run's NAME.meta has the rest: commit, machine, budget)
    printf '# provenance: command: %s (worker %s of %s); started: %s UTC; machine: %s\n' "$invocation" "$k" \
        "$workers" "$(date -u '+%Y-%m-%d %H:%M:%S')" "$(uname -n)" >"$logs/$short.w$k.log"
    "$harness" "${limit[@]}" -timeout=10 -rss_limit_mb=2048 -max_len=4096 -print_final_stats=1 \
        -artifact_prefix="$tmp_root/$name-" "$corpus" "$seeds" 2>&1 |
        awk '/^###### Recommended dictionary/ {skip = 1} !skip && !/^#[0-9]/ && !/^\tNEW_FUNC/
             /^###### End of recommended dictionary/ {skip = 0}' >>"$logs/$short.w$k.log" || status=${PIPESTATUS[0]}
    echo "worker exit status: $status" >>"$logs/$short.w$k.log"
    return "$status"
}

for k in $(seq 1 "$workers"); do worker "$k" & done
failed=()
for k in $(seq 1 "$workers"); do wait -n || failed+=("$k"); done
if [ -z "${TW_FUZZ_LOGS:-}" ]; then
    for k in $(seq 1 "$workers"); do cat "$logs/$short.w$k.log"; done
fi
if [ ${#failed[@]} -gt 0 ]; then
    bad=$(grep -L '^worker exit status: 0$' "$logs/$short".w*.log | paste -sd ' ' || true)
    echo "$0: $name failed in ${#failed[@]} of $workers workers (${TW_FUZZ_LOGS:+logs: $bad; }the input is in $tmp_root/$name-*)" >&2
    exit 1
fi
