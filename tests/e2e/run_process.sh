#!/usr/bin/env bash
# truewatt run as a parent process, against the fake libnvidia-ml: the exit
# code is forwarded; a command killed by a signal gives 128 + N, one line
# naming the signal, and a run file that is kept and analysable; SIGINT to
# truewatt reaches the command and the run file is kept; a command that is not
# there is named, exit 127, nothing sampled; the command's environment.
#
# usage: run_process.sh BIN FAKE_LIBNVIDIA_ML
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/run_common.sh" run-process "$@"
cd "$T" || exit 2
status=0
fail() { echo "FAIL: $*"; status=1; }
ok() { echo "ok: $*"; }

# ---- the exit code is the command's
"$BIN" run -o a.sqlite -- sh -c 'exit 3' >out 2>err
rc=$?
[ $rc -eq 3 ] && ok "exit 3 forwarded" || fail "sh -c 'exit 3': truewatt exit $rc; $(cat err)"
[ -s a.sqlite ] && [ -s truewatt-run.perfetto-trace ] || fail "no run file or Perfetto file after a failing command"
"$BIN" run -o a.sqlite -- true >out 2>err && ok "exit 0" || fail "true: exit $?"

# ---- killed by a signal: 128 + N, one line, the run file kept and analysable
ulimit -c 0
"$BIN" run -o segv.sqlite -- sh -c 'kill -SEGV $$' >out 2>err
rc=$?
[ $rc -eq 139 ] && ok "SIGSEGV -> 139" || fail "SIGSEGV: exit $rc, expected 139"
n=$(grep -c "^truewatt run: sh was killed by signal 11 (SIGSEGV); the run so far is in segv.sqlite$" err)
[ "$n" = 1 ] && ok "one line names the signal and the run file" || fail "signal message: $(cat err)"
"$BIN" analyze segv.sqlite --column power_buffer_w --no-corrected-out >an.txt 2>&1 &&
    ok "the run of a killed command analyses" || fail "analyze segv.sqlite: $(cat an.txt)"

# ---- SIGINT to truewatt reaches the command (its own Ctrl-C); the run file is kept
"$BIN" run -o int.sqlite -- python3 "$HERE/run_fake_app.py" sigint "$T/ready" "$T/got" \
    >out 2>err &
pid=$!
for _ in $(seq 200); do [ -s ready ] && break; sleep 0.05; done
[ -s ready ] || fail "the command did not start"
sleep 0.2
kill -INT $pid
wait $pid
rc=$?
[ -s got ] && ok "the command got SIGINT" || fail "the command did not get SIGINT: $(cat err)"
[ $rc -eq 130 ] && ok "exit 130 after SIGINT" || fail "exit $rc after SIGINT, expected 130; $(cat err)"
grep -q "killed by signal 2 (SIGINT); the run so far is in int.sqlite" err || fail "SIGINT message: $(cat err)"
"$BIN" analyze int.sqlite --column power_buffer_w --no-corrected-out >an.txt 2>&1 &&
    ok "the interrupted run analyses" || fail "analyze int.sqlite: $(cat an.txt)"

# ---- a command that is not there: named, exit 127, nothing sampled
"$BIN" run -o nf.sqlite -- no-such-command-tw arg >out 2>err
rc=$?
[ $rc -eq 127 ] && ok "command not found -> 127" || fail "not found: exit $rc"
grep -q "^truewatt run: cannot run 'no-such-command-tw': command not found$" err || fail "not-found message: $(cat err)"
[ "$(wc -l <err)" = 1 ] || fail "not found: more than one line: $(cat err)"
[ ! -e nf.sqlite ] && ok "nothing sampled for a missing command" || fail "a run file was written for a missing command"

# ---- the command's environment
: >fake-inject.so
: >fake-cupti.so
TW_INJECT_LIBRARY=$T/fake-inject.so TW_CUPTI_LIBRARY=$T/fake-cupti.so "$BIN" run -o e.sqlite \
    -- python3 "$HERE/run_fake_app.py" env "$T/env.txt" >out 2>err
grep -qx "TW_EVENTS_PATH=$T/e.sqlite.events.csv" env.txt && grep -qx "CUDA_INJECTION64_PATH=$T/fake-inject.so" env.txt &&
    grep -qx "NVTX_INJECTION64_PATH=$T/fake-inject.so" env.txt && grep -Eqx "TW_T0_MONO_NS=[0-9]+" env.txt &&
    ok "the command's environment" || fail "environment: $(cat env.txt)"
# an NVTX_INJECTION64_PATH of the user's own is kept, with one warning
NVTX_INJECTION64_PATH=$T/other-nvtx.so TW_INJECT_LIBRARY=$T/fake-inject.so "$BIN" run -o e.sqlite \
    -- python3 "$HERE/run_fake_app.py" env "$T/env.txt" >out 2>err
grep -qx "NVTX_INJECTION64_PATH=$T/other-nvtx.so" env.txt &&
    [ "$(grep -c "warning: NVTX_INJECTION64_PATH=$T/other-nvtx.so is kept" err)" = 1 ] &&
    ok "the user's NVTX_INJECTION64_PATH is kept, with a warning" || fail "own NVTX path: $(cat env.txt err)"
TW_INJECT_LIBRARY=$T/fake-inject.so "$BIN" run --no-inject -o e.sqlite -- python3 "$HERE/run_fake_app.py" env "$T/env.txt" \
    >out 2>err
grep -qx "CUDA_INJECTION64_PATH=" env.txt && ok "--no-inject" || fail "--no-inject: $(cat env.txt)"
# descriptors: the command gets those truewatt was given, not the run file's or the driver's
: >in.txt
"$BIN" run -o fd.sqlite -- sh -c 'ls -l /proc/$$/fd >fds.txt' >out 2>err 9<in.txt
grep -q ' 9 -> .*in.txt' fds.txt && ok "an inherited descriptor is passed on" || fail "descriptor 9 not passed on: $(cat fds.txt)"
grep -q 'fd.sqlite\|nvidia' fds.txt && fail "the command got truewatt's own descriptors: $(cat fds.txt)" ||
    ok "truewatt's own descriptors stay its own"
# --json: the command's stdout goes to stderr, stdout stays JSON
"$BIN" run --json -o j.sqlite -- sh -c 'echo from-the-command' >out 2>err
python3 -c 'import json,sys; json.load(open(sys.argv[1]))' out && grep -q from-the-command err &&
    ok "--json keeps stdout for the report" || fail "--json: $(head -3 out)"
exit $status
