#!/usr/bin/env python3
"""A stand-in for a GPU process on the fake libnvidia-ml, for scripts/gpu-exporter-procs --fake.

Adds its pid to the fake's per-process list (the file TW_FAKE_NVML_PROCESSES=@FILE names: device
0, SM --sm %), then for --seconds plays one kernel running back to back: under `truewatt run`
(TW_EVENTS_PATH set) it writes that kernel to the timeline as the injection library would.

  fake_proc.py --seconds 1.5 --sm 50
"""
import argparse
import os
import time


def add_to_fake_list(sm):
    spec = os.environ.get("TW_FAKE_NVML_PROCESSES", "")
    if not spec.startswith("@"):
        return
    path = spec[1:]
    old = open(path).read().strip() if os.path.exists(path) else ""
    entry = "0:%d:%d" % (os.getpid(), sm)
    with open(path + ".tmp", "w") as f:
        f.write((old + "," + entry if old else entry) + "\n")
    os.replace(path + ".tmp", path)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=1.5)
    ap.add_argument("--sm", type=int, default=50)
    a = ap.parse_args()
    add_to_fake_list(a.sm)
    t0 = int(os.environ.get("TW_T0_MONO_NS", "0"))
    start = time.monotonic_ns()
    time.sleep(a.seconds)
    end = time.monotonic_ns()
    events = os.environ.get("TW_EVENTS_PATH")
    if events:
        with open(events, "w") as f:
            f.write("name,start_s,end_s,device,stream,kind,grid_x,correlation_id\n")
            f.write("gemm,%.9f,%.9f,0,7,kernel,,1\n" % ((start - t0) * 1e-9, (end - t0) * 1e-9))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
