#!/usr/bin/env python3
"""A stand-in for a CUDA program under `truewatt run` (standard library only).

It plays both the program and the injection library: the fake NVML draws the
power of its kernels from a scenario on the same timeline, and this program
writes the matching timeline to $TW_EVENTS_PATH, times in seconds since
$TW_T0_MONO_NS on CLOCK_MONOTONIC, as libtruewatt-inject.so would.

The scenario's times are the fake's: seconds since $TW_FAKE_NVML_T0_MONO_NS when it is set (a test
that starts an exporter before the run gives both the same origin), else since $TW_T0_MONO_NS;
the events are written on the run's clock all the same.

usage: run_fake_app.py kernels [OFFSET]  wait until t = 3 s (and the last kernel's end), write the
                                        events (OFFSET s later: default 0), exit 0
       run_fake_app.py busy N START PERIOD DURATION
                                        the same with N kernels "gemm" START + i PERIOD .. + DURATION
                                        (i < N): a GPU kept busy, as a scenario of the same kernels draws
       run_fake_app.py sigint READY OUT  write READY, wait; on SIGINT write OUT and die of it
       run_fake_app.py env OUT          write the environment variables truewatt set to OUT
       run_fake_app.py stream SECONDS PIDFILE
                                        its pid to PIDFILE, then for that long a 20 ms kernel every
                                        0.1 s, each line appended as it ends (as the injection
                                        library flushes)
"""
import os
import signal
import sys
import time

EVENTS = [
    # name, start_s, end_s, device, stream, kind
    ("memcpy HtoD", 0.50, 0.52, 0, 7, "memcpy"),
    ("gemm", 1.0, 1.6, 0, 7, "kernel"),
    ("relu", 2.0, 2.3, 0, 7, "kernel"),
    ("forward", 0.9, 2.4, -1, -1, "nvtx"),
]


def now_s():
    t0 = int(os.environ["TW_T0_MONO_NS"])
    return (time.clock_gettime_ns(time.CLOCK_MONOTONIC) - t0) * 1e-9


def fake_to_run_s():
    """What to add to a time on the fake's clock for the run's (0 when they share the origin)."""
    fake = os.environ.get("TW_FAKE_NVML_T0_MONO_NS")
    return (int(fake) - int(os.environ["TW_T0_MONO_NS"])) * 1e-9 if fake else 0.0


def kernels(events=EVENTS, offset=0.0):
    shift = fake_to_run_s()
    last = max([3.0] + [end + offset for _, _, end, *_ in events])
    left = last + shift - now_s()
    if left > 0:
        time.sleep(left)
    with open(os.environ["TW_EVENTS_PATH"], "w") as f:
        f.write("name,start_s,end_s,device,stream,kind,grid_x,correlation_id\n")
        for i, (name, start, end, dev, stream, kind) in enumerate(events):
            d = "" if dev < 0 else str(dev)
            s = "" if stream < 0 else str(stream)
            a, b = start + offset + shift, end + offset + shift
            f.write(f"{name},{a:.9f},{b:.9f},{d},{s},{kind},,{i + 1}\n")
    return 0


def sigint(ready, out):
    def on_int(sig, frame):
        with open(out, "w") as f:
            f.write("got SIGINT\n")
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGINT)

    signal.signal(signal.SIGINT, on_int)
    with open(ready, "w") as f:
        f.write("ready\n")
    for _ in range(600):
        time.sleep(0.05)
    return 1  # no signal came


def env(out):
    names = ["TW_EVENTS_PATH", "TW_T0_MONO_NS", "CUDA_INJECTION64_PATH", "NVTX_INJECTION64_PATH"]
    with open(out, "w") as f:
        for n in names:
            f.write(f"{n}={os.environ.get(n, '')}\n")
    return 0


def stream(seconds, pidfile):
    with open(pidfile, "w") as f:
        f.write(f"{os.getpid()}\n")
    fd = os.open(os.environ["TW_EVENTS_PATH"], os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    os.write(fd, b"name,start_s,end_s,device,stream,kind,correlation_id\n")
    end = now_s() + seconds
    i = 0
    while now_s() < end:
        start = now_s()
        time.sleep(0.02)
        i += 1
        os.write(fd, f"tick,{start:.9f},{now_s():.9f},0,7,kernel,{i}\n".encode())
        time.sleep(0.08)
    os.close(fd)
    return 0


if __name__ == "__main__":
    mode = sys.argv[1] if len(sys.argv) > 1 else "kernels"
    if mode == "kernels":
        sys.exit(kernels(offset=float(sys.argv[2]) if len(sys.argv) > 2 else 0.0))
    if mode == "busy":
        n, start, period, duration = int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5])
        sys.exit(kernels([("gemm", start + i * period, start + i * period + duration, 0, 7, "kernel")
                          for i in range(n)]))
    if mode == "sigint":
        sys.exit(sigint(sys.argv[2], sys.argv[3]))
    if mode == "env":
        sys.exit(env(sys.argv[2]))
    if mode == "stream":
        sys.exit(stream(float(sys.argv[2]), sys.argv[3]))
    sys.exit(f"unknown mode {mode}")
