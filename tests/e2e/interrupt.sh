#!/usr/bin/env bash
# Ctrl-C: sim stops with a clear message and exit 130, the trace so far is
# kept and analysable; analyze stops with a clear message and exit 130.
set -u
bin=$1
tmp=$(mktemp -d "${TW_TMPDIR:-/tmp}/interrupt.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

"$bin" sim --kernel k:1:2:150 --duration 100000 -o "$tmp/t.csv" >"$tmp/out" 2>"$tmp/err" &
pid=$!
for _ in $(seq 600); do [ -s "$tmp/t.csv" ] && [ "$(stat -c %s "$tmp/t.csv")" -gt 100000000 ] && break; sleep 0.1; done
kill -INT $pid
wait $pid
rc=$?
[ $rc -eq 130 ] || fail "sim exit $rc after SIGINT, expected 130"
grep -q "interrupted at .* the trace so far is in $tmp/t.csv" "$tmp/err" || fail "sim message: $(cat "$tmp/err")"
"$bin" analyze "$tmp/t.csv" --events "$tmp/t.events.csv" --json --no-corrected-out >"$tmp/a.json" ||
    fail "the interrupted trace does not analyse"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); e=d["events"][0]; c=e["energy_j"]["corrected"]; t=e["true_energy_j"]; assert abs(c/t-1)<0.02, (c,t); print("interrupted sim: trace kept, k corrected %.3f J of %.3f J" % (c,t))' "$tmp/a.json" || fail "energy of the kept trace"

# a trace long enough that analysis takes a while, then Ctrl-C during analyze
"$bin" analyze "$tmp/t.csv" --corrected-out "$tmp/c.csv" >"$tmp/out2" 2>"$tmp/err2" &
pid=$!
sleep 0.2
kill -INT $pid
wait $pid
rc=$?
[ $rc -eq 130 ] || fail "analyze exit $rc after SIGINT, expected 130 ($(cat "$tmp/err2"))"
grep -q "interrupted" "$tmp/err2" || fail "analyze message: $(cat "$tmp/err2")"
echo "interrupt: sim and analyze stop cleanly on SIGINT (exit 130)"
