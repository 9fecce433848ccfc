#!/usr/bin/env python3
"""The exporter against NVML's own energy counter, for scripts/gpu-exporter.

With a running `truewatt exporter` (--url, --pid):
 1. scrapes /metrics every second (urllib) while the loads run (--load, one shell command per GPU,
    started after --settle s of idle and followed by --settle s more), and reads each GPU's NVML
    energy counter itself at every scrape (pynvml; with --nvml-lib, that library through ctypes:
    the fake libnvidia-ml, which lacks nvmlInitWithFlags);
 2. per GPU: the exporter's energy increase between its first and last sample of that window
    (each stamped with the time it refers to) against NVML's counter over the same times
    (interpolated between its reads; both ends fall in idle time, where the power is flat):
    within 1 % -> PASS, else FAIL; and the GPUs' mean powers must differ (the loads do);
 3. every 10 s until --duration s after --started (the exporter's start, Unix s): its CPU time
    and resident memory from /proc (a scrape every 10 s meanwhile, as a Prometheus would).
Writes OUT/energy.csv (every scrape and NVML read), OUT/resources.csv, OUT/summary.txt,
OUT/metrics.txt (one page) and prints PASS/FAIL lines (also in OUT/check.txt). Exit 0 when all pass.
"""
import argparse
import ctypes
import os
import subprocess
import sys
import threading
import time
import urllib.request

TOL = 0.01


class NvmlRef:
    """Each GPU's energy counter (J) by UUID, read independently of truewatt."""

    def __init__(self, lib_path):
        self.handles = {}
        if lib_path:
            self.lib = ctypes.CDLL(lib_path)
            self._check(self.lib.nvmlInit_v2())
            n = ctypes.c_uint()
            self._check(self.lib.nvmlDeviceGetCount_v2(ctypes.byref(n)))
            for i in range(n.value):
                h = ctypes.c_void_p()
                self._check(self.lib.nvmlDeviceGetHandleByIndex_v2(i, ctypes.byref(h)))
                buf = ctypes.create_string_buffer(96)
                self._check(self.lib.nvmlDeviceGetUUID(h, buf, 96))
                self.handles[buf.value.decode()] = h
            self.pynvml = None
        else:
            import pynvml

            self.pynvml = pynvml
            pynvml.nvmlInit()
            for i in range(pynvml.nvmlDeviceGetCount()):
                h = pynvml.nvmlDeviceGetHandleByIndex(i)
                u = pynvml.nvmlDeviceGetUUID(h)
                self.handles[u.decode() if isinstance(u, bytes) else u] = h

    @staticmethod
    def _check(r):
        if r != 0:
            raise RuntimeError("NVML call failed: %d" % r)

    def energy_j(self, uuid):
        """(time of the read, Unix s; the counter, J)"""
        h = self.handles[uuid]
        t0 = time.time()
        if self.pynvml:
            mj = self.pynvml.nvmlDeviceGetTotalEnergyConsumption(h)
        else:
            v = ctypes.c_ulonglong()
            self._check(self.lib.nvmlDeviceGetTotalEnergyConsumption(h, ctypes.byref(v)))
            mj = v.value
        return (t0 + time.time()) / 2, mj / 1000.0


def scrape(url):
    """{uuid: {index, energy, ts (Unix s), power}} from the text format."""
    with urllib.request.urlopen(url, timeout=5) as r:
        text = r.read().decode()
    gpus = {}
    for line in text.splitlines():
        for name, key in (("truewatt_gpu_energy_joules_total{", "energy"), ("truewatt_gpu_power_watts{", "power")):
            if not line.startswith(name):
                continue
            labels, rest = line[len(name):].split("} ", 1)
            lab = dict(kv.split("=", 1) for kv in labels.replace('"', "").split(","))
            g = gpus.setdefault(lab["uuid"], {"index": int(lab["index"])})
            parts = rest.split()
            g[key] = float(parts[0])
            if key == "energy" and len(parts) > 1:
                g["ts"] = float(parts[1]) / 1000.0
    return gpus, text


def interp(points, t):
    """The counter at time t from its reads (t_i, e_i), linearly between the two around it."""
    for (t0, e0), (t1, e1) in zip(points, points[1:]):
        if t0 <= t <= t1:
            return e0 + (e1 - e0) * (t - t0) / (t1 - t0) if t1 > t0 else e0
    return float("nan")


def proc_usage(pid):
    """(CPU seconds, resident MiB) of a process."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    cpu = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    rss = 0.0
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                rss = int(line.split()[1]) / 1024.0
    return cpu, rss


def watch_resources(args, rows, stop):
    """Every 10 s until --duration after the start: CPU and RSS, and a scrape."""
    end = args.started + args.duration
    t_next = time.time()
    while not stop.is_set():
        try:
            cpu, rss = proc_usage(args.pid)
        except OSError:
            rows.append((time.time() - args.started, float("nan"), float("nan")))
            return
        rows.append((time.time() - args.started, cpu, rss))
        try:
            scrape(args.url)
        except OSError:
            pass
        if time.time() >= end:
            return
        t_next += 10.0
        stop.wait(max(0.0, min(t_next, end) - time.time()))


def energy_window(args, ref, out_dir):
    """Phase 1: scrapes and NVML reads every second around the loads. Returns the records."""
    recs = []  # (uuid, index, exporter energy, its ts, power, nvml t, nvml energy)
    loads = []
    t_start = time.time()
    t_loads = t_start + args.settle
    t_end = None
    started = False
    page = ""
    while True:
        now = time.time()
        if not started and now >= t_loads:
            started = True
            for cmd in args.load:
                loads.append(subprocess.Popen(cmd, shell=True))
            print("loads started: %d" % len(loads), flush=True)
            if not loads:  # the fake's scenarios are the load
                t_end = now + args.load_s + args.settle
        if loads and t_end is None and all(p.poll() is not None for p in loads):
            t_end = now + args.settle
            print("loads done", flush=True)
        if t_end is not None and now >= t_end:
            break
        gpus, page = scrape(args.url)
        for uuid, g in sorted(gpus.items()):
            if "energy" not in g or uuid not in ref.handles:
                continue
            t_ref, e_ref = ref.energy_j(uuid)
            recs.append((uuid, g["index"], g["energy"], g.get("ts", float("nan")), g.get("power", float("nan")),
                         t_ref, e_ref))
        time.sleep(max(0.0, 1.0 - (time.time() - now)))
    with open(os.path.join(out_dir, "metrics.txt"), "w") as f:
        f.write(page)
    with open(os.path.join(out_dir, "energy.csv"), "w") as f:
        f.write("uuid,index,exporter_energy_j,exporter_t_unix_s,exporter_power_w,nvml_t_unix_s,nvml_energy_j\n")
        for r in recs:
            f.write("%s,%d,%.6f,%.3f,%.3f,%.6f,%.3f\n" % r)
    return recs, [p.returncode for p in loads]


def check_energy(recs, load_rcs, lines):
    ok = True
    powers = {}
    for uuid in sorted({r[0] for r in recs}):
        rs = [r for r in recs if r[0] == uuid]
        nvml = sorted({(r[5], r[6]) for r in rs})
        # the exporter's (ts, energy), distinct, those inside NVML's reads (so both ends interpolate)
        samples = sorted({(r[3], r[2]) for r in rs if nvml[0][0] <= r[3] <= nvml[-1][0]})
        if len(samples) < 2:
            lines.append("FAIL GPU %d (%s): fewer than two exporter samples inside NVML's reads" % (rs[0][1], uuid))
            ok = False
            continue
        (ts0, e0), (ts1, e1) = samples[0], samples[-1]
        ref = interp(nvml, ts1) - interp(nvml, ts0)
        got = e1 - e0
        err = got / ref - 1 if ref > 0 else float("nan")
        good = abs(err) <= TOL
        powers[uuid] = got / (ts1 - ts0) if ts1 > ts0 else float("nan")
        lines.append("%s GPU %d (%s): exporter %.1f J, NVML counter %.1f J over %.1f s (%+.3f %%; mean %.1f W)"
                     % ("PASS" if good else "FAIL", rs[0][1], uuid, got, ref, ts1 - ts0, 100 * err, powers[uuid]))
        ok &= good
    p = sorted(powers.values())
    differ = len(p) >= 2 and p[0] < 0.9 * p[-1]
    lines.append("%s the GPUs were loaded differently (mean powers %s W)"
                 % ("PASS" if differ else "FAIL", ", ".join("%.1f" % x for x in p)))
    if any(rc != 0 for rc in load_rcs):
        lines.append("FAIL a load exited with %s" % load_rcs)
        ok = False
    return ok and differ


def summarize_resources(rows, out_dir, lines):
    with open(os.path.join(out_dir, "resources.csv"), "w") as f:
        f.write("t_s,cpu_s,rss_mib,cpu_share_of_one_core_since_previous\n")
        for i, (t, cpu, rss) in enumerate(rows):
            share = (cpu - rows[i - 1][1]) / (t - rows[i - 1][0]) if i > 0 and t > rows[i - 1][0] else float("nan")
            f.write("%.1f,%.3f,%.1f,%.5f\n" % (t, cpu, rss, share))
    good = [r for r in rows if r[1] == r[1]]
    if len(good) < 2:
        lines.append("FAIL the exporter's resources: fewer than two samples (did it exit?)")
        return False
    (t0, c0, r0), (t1, c1, r1) = good[0], good[-1]
    alive = len(good) == len(rows)
    s = ("exporter over %.0f s: CPU %.2f s = %.3f %% of one core on average; RSS %.1f MiB at the first sample, "
         "%.1f MiB at the last, %.1f MiB at most" % (t1 - t0, c1 - c0, 100 * (c1 - c0) / (t1 - t0), r0, r1,
                                                     max(r[2] for r in good)))
    with open(os.path.join(out_dir, "summary.txt"), "w") as f:
        f.write(s + "\n")
    lines.append(("PASS " if alive else "FAIL (the exporter exited) ") + s)
    return alive


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--url", required=True)
    ap.add_argument("--pid", type=int, required=True)
    ap.add_argument("--started", type=float, required=True, help="the exporter's start, Unix s")
    ap.add_argument("--out", required=True)
    ap.add_argument("--load", action="append", default=[], help="a shell command loading one GPU")
    ap.add_argument("--load-s", type=float, default=60, help="the loads' length, when there is no --load")
    ap.add_argument("--settle", type=float, default=5)
    ap.add_argument("--duration", type=float, default=600)
    ap.add_argument("--nvml-lib", default=None)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    ref = NvmlRef(args.nvml_lib)
    for _ in range(300):  # the exporter's first energy values
        try:
            if len([g for g in scrape(args.url)[0].values() if "energy" in g]) >= len(ref.handles):
                break
        except OSError:
            pass
        time.sleep(0.1)
    rows, stop = [], threading.Event()
    watcher = threading.Thread(target=watch_resources, args=(args, rows, stop))
    watcher.start()
    lines = []
    recs, rcs = energy_window(args, ref, args.out)
    ok = check_energy(recs, rcs, lines)
    for line in lines:
        print(line, flush=True)
    print("energy checked; CPU and memory recorded until %.0f s after the start" % args.duration, flush=True)
    watcher.join()
    ok &= summarize_resources(rows, args.out, lines)
    print(lines[-1])
    with open(os.path.join(args.out, "check.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
