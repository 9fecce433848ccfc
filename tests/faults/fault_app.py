#!/usr/bin/env python3
"""A measured program for scripts/faults (standard library only).

Like tests/e2e/run_fake_app.py's `stream` mode, it plays both the program and
the injection library: a 20 ms kernel `tick` every 0.1 s, each appended to
$TW_EVENTS_PATH as it ends (times on truewatt's timeline, $TW_T0_MONO_NS), its
pid written to PIDFILE first. Then it ends as it is told:

usage: fault_app.py PIDFILE SECONDS END
  END  exit:N      exit with status N after SECONDS
       segv        die of SIGSEGV after SECONDS (a crash)
       abort       die of SIGABRT after SECONDS (abort())
       sigint      run until SIGINT (at most SECONDS), then write one more
                   kernel and die of SIGINT, as a program that cleans up
       linger      run until SIGINT (at most SECONDS), then ignore SIGINT and
                   go on for SECONDS more, as a program slow to stop
"""
import os
import signal
import sys
import time

interrupted = False


def now_s():
    t0 = int(os.environ["TW_T0_MONO_NS"])
    return (time.clock_gettime_ns(time.CLOCK_MONOTONIC) - t0) * 1e-9


def on_sigint(sig, frame):
    global interrupted
    interrupted = True


def ticks(fd, until, state, stop_on_sigint):
    while now_s() < until and not (stop_on_sigint and interrupted):
        start = now_s()
        time.sleep(0.02)
        state[0] += 1
        os.write(fd, f"tick,{start:.9f},{now_s():.9f},0,7,kernel,{state[0]}\n".encode())
        time.sleep(0.08)


def main():
    pidfile, seconds, end = sys.argv[1], float(sys.argv[2]), sys.argv[3]
    if end in ("sigint", "linger"):
        signal.signal(signal.SIGINT, on_sigint)
    fd = os.open(os.environ["TW_EVENTS_PATH"], os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    os.write(fd, b"name,start_s,end_s,device,stream,kind,correlation_id\n")
    with open(pidfile + ".tmp", "w") as f:
        f.write(f"{os.getpid()}\n")
    os.rename(pidfile + ".tmp", pidfile)
    state = [0]
    ticks(fd, now_s() + seconds, state, end in ("sigint", "linger"))
    if end.startswith("exit:"):
        return int(end[5:])
    if end == "segv":
        os.kill(os.getpid(), signal.SIGSEGV)
    if end == "abort":
        os.abort()
    if end == "sigint" and interrupted:
        ticks(fd, now_s() + 0.1, state, False)  # its cleanup
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGINT)
    if end == "linger" and interrupted:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        ticks(fd, now_s() + seconds, state, False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
