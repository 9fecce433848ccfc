#!/usr/bin/env bash
# truewatt dvfs clocks and dvfs lock against the fake libnvidia-ml (never a
# real card). The fake writes its lock state to $TW_FAKE_NVML_CLOCK_STATE on
# every lock and reset, so each case checks after truewatt has exited that
# the clocks were restored (and, where it matters, that they were locked while
# the command ran): normal exit, a failing command, a command killed by a
# signal, SIGINT / SIGTERM / SIGHUP to truewatt (the command gone too); the
# refusals (no --allow-clock-changes, no permission, an unsupported clock, a
# command that is not there) change nothing.
#
# usage: dvfs_clocks.sh BIN FAKE_LIBNVIDIA_ML
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/run_common.sh" dvfs-clocks "$@"
cd "$T" || exit 2
status=0
fail() { echo "FAIL: $*"; status=1; }
ok() { echo "ok: $*"; }
ulimit -c 0

S=$T/clock-state
export TW_FAKE_NVML_CLOCK_STATE=$S
UNLOCKED1="0 gpu=unlocked mem=unlocked gpu_locks=1 gpu_resets=1 mem_locks=0 mem_resets=0"
state() { cat "$S" 2>/dev/null || echo "(no state file)"; }
# expect_state NAME LINE: the fake's state after truewatt exited
expect_state() {
    if [ "$(state)" = "$2" ]; then ok "$1"; else fail "$1: state '$(state)', expected '$2'; stderr: $(cat err)"; fi
}
expect_rc() { # expect_rc NAME GOT WANT
    if [ "$2" -eq "$3" ]; then ok "$1: exit $2"; else fail "$1: exit $2, expected $3; stderr: $(cat err)"; fi
}
expect_grep() { # expect_grep NAME REGEX FILE
    if grep -Eq -- "$2" "$3"; then ok "$1"; else fail "$1: no /$2/ in: $(cat "$3")"; fi
}
# wait_for FILE: until the command has started (it writes FILE)
wait_for() {
    for _ in $(seq 200); do [ -s "$1" ] && return 0; sleep 0.05; done
    fail "the command did not start ($1)"
    return 1
}
gone() { ! kill -0 "$1" 2>/dev/null; }
LOCK=("$BIN" dvfs lock --core 1200 --allow-clock-changes)

# ---------------------------------------------------------------- dvfs clocks (read only)
"$BIN" dvfs clocks >out 2>err
expect_rc "dvfs clocks" $? 0
expect_grep "device named" '^device 0: Fake H100 \(GPU-fake-0000-' out
expect_grep "current clocks" '^current: SM 345 MHz, memory 2619 MHz$' out
expect_grep "max clocks" '^max: +SM 1980 MHz, memory 2619 MHz$' out
expect_grep "event reasons" '^clock event reasons: gpu_idle \(0x1\)$' out
expect_grep "pairs counted" '^supported clock pairs: 220 \(2 memory clocks\)$' out
expect_grep "H100 list as a range (2619)" '^  memory 2619 MHz: graphics 110 clocks, 1980\.\.345 MHz in 15 MHz steps$' out
expect_grep "H100 list as a range (1593)" '^  memory 1593 MHz: graphics 110 clocks, 1980\.\.345 MHz in 15 MHz steps$' out
[ -e "$S" ] && fail "dvfs clocks wrote the lock state" || ok "dvfs clocks changes nothing"
TW_FAKE_NVML_GFX_CLOCKS=1500,1400,1000 "$BIN" dvfs clocks >out 2>err
expect_grep "uneven list listed" '^  memory 2619 MHz: graphics 3 clocks: 1500, 1400, 1000 MHz$' out
"$BIN" dvfs clocks --json >out.json 2>err
expect_rc "dvfs clocks --json" $? 0
python3 - out.json <<'EOF' && ok "json: every pair, current, max, reasons" || fail "json: $(cat out.json)"
import json, sys
d = json.load(open(sys.argv[1]))
assert [m["mem_mhz"] for m in d["supported"]] == [2619, 1593]
for m in d["supported"]:
    assert m["graphics_mhz"] == list(range(1980, 344, -15)), m
assert d["current"] == {"sm_mhz": 345, "mem_mhz": 2619}
assert d["max"] == {"sm_mhz": 1980, "mem_mhz": 2619}
assert d["event_reasons"] == {"bits": 1, "names": ["gpu_idle"]}
assert d["device"]["index"] == 0
EOF
TW_FAKE_NVML_UNSUPPORTED=supported_clocks "$BIN" dvfs clocks >out 2>err
expect_rc "dvfs clocks without the list" $? 0
expect_grep "the missing list says why" '^supported clocks: unavailable: nvmlDeviceGetSupportedMemoryClocks: Not Supported \(3\)$' out
TW_NVML_LIBRARY=/nonexistent/libnvidia-ml.so.1 "$BIN" dvfs clocks >out 2>err
expect_rc "no NVML" $? 1
expect_grep "no NVML: the reason" '^truewatt dvfs clocks: /nonexistent/libnvidia-ml.so.1: cannot open shared object file' err
"$BIN" dvfs clocks --device 1 >out 2>err
expect_rc "no such device" $? 1
expect_grep "no device: the devices there are" '^truewatt dvfs clocks: nvml: no device 1 \(1 device: 0 GPU-fake' err

# ---------------------------------------------------------------- refusals: nothing changes
"$BIN" dvfs lock --core 1200 -- true >out 2>err
expect_rc "no --allow-clock-changes" $? 2
expect_grep "refusal says why" "refused without --allow-clock-changes: .*every user of the machine.*never for shared machines" err
expect_state "refused: nothing locked" "(no state file)"

TW_FAKE_NVML_CLOCK_NO_PERMISSION=1 "${LOCK[@]}" -- touch ran >out 2>err
expect_rc "no permission" $? 1
expect_grep "no permission: needs root" 'Insufficient Permissions \(4\): changing clocks needs root' err
expect_grep "no permission: nothing changed" 'nothing was changed' err
expect_state "no permission: nothing locked" "(no state file)"
[ -e ran ] && fail "the command ran without its locks" || ok "no permission: the command did not run"

"$BIN" dvfs lock --core 1201 --allow-clock-changes -- touch ran >out 2>err
expect_rc "unsupported graphics clock" $? 2
expect_grep "unsupported graphics clock: the nearest" 'graphics clock 1201 MHz is not supported with memory at 2619 MHz \(nearest: 1200 and 1215 MHz' err
"$BIN" dvfs lock --core 1200 --mem 1600 --allow-clock-changes -- touch ran >out 2>err
expect_rc "unsupported memory clock" $? 2
expect_grep "unsupported memory clock: the nearest" 'memory clock 1600 MHz is not supported \(nearest: 1593 and 2619 MHz' err
"${LOCK[@]}" -- ./no-such-command >out 2>err
expect_rc "command not found" $? 127
expect_grep "command not found: named" "cannot run './no-such-command', nothing was locked" err
expect_state "refusals: nothing locked" "(no state file)"
[ -e ran ] && fail "a refused command ran" || ok "refused commands did not run"

# memory lock refused after the graphics lock: the graphics lock is reset
TW_FAKE_NVML_UNSUPPORTED=mem_lock "$BIN" dvfs lock --core 1200 --mem 1593 --allow-clock-changes -- touch ran >out 2>err
expect_rc "memory lock fails" $? 1
expect_grep "memory lock fails: said" 'cannot lock the memory clock: nvmlDeviceSetMemoryLockedClocks: Not Supported' err
expect_state "memory lock fails: graphics reset" "$UNLOCKED1"
[ -e ran ] && fail "the command ran after a failed lock" || ok "memory lock fails: the command did not run"
rm -f "$S"

# ---------------------------------------------------------------- lock, run, restore
"$BIN" dvfs lock --core 1200 --mem 1593 --allow-clock-changes -- sh -c 'cat "$TW_FAKE_NVML_CLOCK_STATE" > during' \
    >out 2>err
expect_rc "normal exit" $? 0
if [ "$(cat during 2>/dev/null)" = "0 gpu=1200-1200 mem=1593-1593 gpu_locks=1 gpu_resets=0 mem_locks=1 mem_resets=0" ]; then
    ok "locked while the command ran"
else
    fail "not locked while the command ran: '$(cat during 2>/dev/null)'"
fi
expect_state "normal exit: restored" "0 gpu=unlocked mem=unlocked gpu_locks=1 gpu_resets=1 mem_locks=1 mem_resets=1"
expect_grep "normal exit: the clocks held" '^truewatt dvfs lock: the locked clocks held$' err
expect_grep "normal exit: observed clocks" 'SM 1200\.\.1200 MHz, memory 1593\.\.1593 MHz' err
rm -f "$S"

"${LOCK[@]}" -- sh -c 'exit 3' >out 2>err
expect_rc "command exits 3" $? 3
expect_state "command exits 3: restored" "$UNLOCKED1"
rm -f "$S"

"${LOCK[@]}" -- sh -c 'kill -SEGV $$' >out 2>err
expect_rc "command killed by SIGSEGV" $? 139
expect_state "command killed by SIGSEGV: restored" "$UNLOCKED1"
rm -f "$S"

"${LOCK[@]}" -- sh -c 'kill -KILL $$' >out 2>err
expect_rc "command killed by SIGKILL" $? 137
expect_state "command killed by SIGKILL: restored" "$UNLOCKED1"
rm -f "$S"

# a power cap while locked: reported as not held
TW_FAKE_NVML_THROTTLE=0x4,1000,0 "${LOCK[@]}" -- sleep 0.6 >out 2>err
expect_rc "throttled" $? 0
expect_grep "throttled: not held" 'WARNING: the locked clocks did NOT hold: SM outside 1200\.\.1200 MHz in [0-9]+ of [0-9]+ samples; power or thermal limits: sw_power_cap' err
expect_state "throttled: restored" "$UNLOCKED1"
rm -f "$S"

# ---------------------------------------------------------------- signals to truewatt
# sig_case NAME SIGNAL EXIT [STUBBORN]: the command writes its pid and waits
sig_case() {
    rm -f "$S" cpid
    local body='echo $$ > cpid; exec sleep 60'
    [ -n "${4:-}" ] && body='trap "" INT TERM HUP; echo $$ > cpid; while :; do sleep 0.1; done'
    "${LOCK[@]}" -- sh -c "$body" >out 2>err &
    local pid=$!
    wait_for cpid || { kill -KILL $pid; return; }
    sleep 0.2
    if [ "$(state)" = "0 gpu=1200-1200 mem=unlocked gpu_locks=1 gpu_resets=0 mem_locks=0 mem_resets=0" ]; then
        ok "$1: locked while running"
    else
        fail "$1: not locked while running: $(state)"
    fi
    kill -"$2" $pid
    wait $pid
    expect_rc "$1" $? "$3"
    expect_state "$1: restored" "$UNLOCKED1"
    local c
    c=$(cat cpid)
    for _ in $(seq 20); do gone "$c" && break; sleep 0.05; done
    if gone "$c"; then ok "$1: the command is gone"; else fail "$1: the command $c is still running"; kill -KILL "$c"; fi
}
sig_case "SIGINT to truewatt" INT 130
expect_grep "SIGINT: said" 'got signal 2 \(.*\): resetting the clocks and ending the command' err
sig_case "SIGTERM to truewatt" TERM 143
sig_case "SIGHUP to truewatt" HUP 129
sig_case "SIGTERM, a command that ignores it" TERM 143 stubborn
expect_grep "stubborn command: killed after the grace" 'still running 5 s after the signal: killing it' err

# ---------------------------------------------------------------- --reset: a lock left behind
printf '0 gpu=1200-1200 mem=1593-1593 gpu_locks=1 gpu_resets=0 mem_locks=1 mem_resets=0\n' >"$S"
"$BIN" dvfs clocks >out 2>err
expect_grep "a lock left behind shows" '^current: SM 1200 MHz, memory 1593 MHz$' out
"$BIN" dvfs lock --reset >out 2>err
expect_rc "--reset without --allow-clock-changes" $? 2
"$BIN" dvfs lock --reset --allow-clock-changes >out 2>err
expect_rc "--reset" $? 0
expect_state "--reset: unlocked" "0 gpu=unlocked mem=unlocked gpu_locks=1 gpu_resets=1 mem_locks=1 mem_resets=1"

exit $status
