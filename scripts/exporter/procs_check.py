#!/usr/bin/env python3
"""Measured per-process energy from `truewatt run` to a running `truewatt exporter --processes`, for
scripts/gpu-exporter-procs (docs/exporter.md#per-process-energy). Standard library only.

Phase 1, alone: APP runs under `truewatt run` on GPU INDEX, back to back (the GPU busy from its
first kernel to its last). Its published truewatt_process_energy_joules_total{source="truewatt
run"} must be (a) what its run's report gives (process_energy_j: kernels + copies + the counter's
power that no activity explains over the time they ran; exact, 1e-9), and (b) within --tol of the
GPU's energy counter, read independently (ENERGY, scripts/gpu/energy_log.py) from its first
kernel's start to its last one's end.
Phase 2, shared: APP2 under `truewatt run` and OTHER (not measured) on the same GPU at once: while
APP2 runs, no scrape shows an estimate for its pid, and OTHER's estimate is held (the same on every
scrape: docs/exporter.md#shared-gpus); OTHER is estimated; after, APP2 is measured, with at most its
run's report; and the processes' energies added over the phase stay within the GPU's own (nothing
counted twice).
Writes OUT/check.txt (PASS/FAIL lines), OUT/phase1.json, OUT/phase2.json (the runs' reports),
OUT/metrics-*.txt. Exit 0 when every check passes.

  procs_check.py --tw TW --url URL --procdir DIR --energy CSV --index 0 --out OUT
                 --app 'CMD ...' --app2 'CMD ...' --other 'CMD ...' [--tol 0.03]
"""
import argparse
import glob
import json
import os
import shlex
import sqlite3
import subprocess
import sys
import time
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "gpu"))
from counter_ref import at, counter_points, read_log  # noqa: E402

lines, failed = [], []


def check(ok, what):
    line = ("PASS " if ok else "FAIL ") + what
    print(line, flush=True)
    lines.append(line)
    if not ok:
        failed.append(what)


def scrape(url):
    with urllib.request.urlopen(url, timeout=10) as r:
        return r.read().decode()


def samples(text, name):
    """[(labels dict, value)] of NAME's samples on a text-format page."""
    out = []
    for line in text.splitlines():
        if not line.startswith(name + "{"):
            continue
        body, rest = line[len(name) + 1:].split("} ", 1)
        labels = {}
        for part in body.split('",'):
            k, v = part.split('="', 1)
            labels[k] = v.rstrip('"')
        out.append((labels, float(rest.split()[0])))
    return out


def running_pid(procdir):
    """The measured pid of the report that says running (the run's program), or None."""
    for path in glob.glob(os.path.join(procdir, "*.twproc")):
        try:
            kv = dict(line.split("\t", 1) for line in open(path).read().splitlines()[1:] if "\t" in line)
        except OSError:
            continue
        if kv.get("state") == "running":
            return kv["pid"]
    return None


def split_of(report, index):
    """The process's energy on GPU INDEX as its run's report gives it (process_energy_j: the library's
    split, docs/exporter.md#per-process-energy), and the time its kernels and copies ran."""
    dev = [d for d in report["devices"] if d["index"] == index][0]
    busy = sum(n["active_s"] for n in dev["names"] if n.get("active_s") is not None)
    return dev["estimate"]["process_energy_j"], busy


def counter_j(energy_csv, index, t0_ns, t1_ns):
    """The GPU's counter between two CLOCK_MONOTONIC times (scripts/gpu/counter_ref.py: linear between
    its updates, not its polls)."""
    pts = counter_points(read_log(energy_csv, lambda r: int(r["index"])).get(index, []))
    return at(pts, t1_ns * 1e-9) - at(pts, t0_ns * 1e-9)


def kernel_span_ns(run_path):
    db = sqlite3.connect(run_path)
    t0 = int(db.execute("SELECT value FROM meta WHERE key='t0_mono_ns'").fetchone()[0])
    a, b = db.execute("SELECT min(start_ns), max(end_ns) FROM activities_named WHERE kind='kernel'").fetchone()
    return t0 + a, t0 + b


def run_measured(a, tag, cmd, watch):
    """Runs CMD under truewatt run, scraping every 0.5 s meanwhile; returns (pid, report, the pages scraped
    while its report said running, run file)."""
    run = os.path.join(a.out, tag + ".sqlite")
    argv = [a.tw, "run", "--json", "--device", str(a.index), "-o", run, "--perfetto",
            os.path.join(a.out, tag + ".perfetto-trace"), "--"] + shlex.split(cmd)
    with open(os.path.join(a.out, tag + ".json"), "w") as out, open(os.path.join(a.out, tag + ".stderr.txt"), "w") as err:
        p = subprocess.Popen(argv, stdout=out, stderr=err)
        pid, pages = None, []
        while p.poll() is None:
            time.sleep(0.5)
            pid = pid or running_pid(a.procdir)
            if watch and pid:
                page = scrape(a.url)
                if running_pid(a.procdir) == pid:  # still running after the scrape: it was during it
                    pages.append(page)
        check(p.wait() == 0, "%s: truewatt run -- %s exits 0" % (tag, cmd))
    return pid, json.load(open(os.path.join(a.out, tag + ".json"))), pages, run


def published(page, pid, source, name="truewatt_process_energy_joules_total", index=0):
    vals = [v for l, v in samples(page, name) if l.get("pid") == pid and l.get("source") == source
            and l.get("index") == str(index)]
    return vals[0] if vals else None


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for k in ("--tw", "--url", "--procdir", "--energy", "--out", "--app", "--app2", "--other"):
        ap.add_argument(k, required=True)
    ap.add_argument("--index", type=int, default=0)
    ap.add_argument("--tol", type=float, default=0.03)
    a = ap.parse_args()

    # ---- phase 1: alone, back to back
    pid, report, _, run = run_measured(a, "phase1", a.app, False)
    page = scrape(a.url)
    open(os.path.join(a.out, "metrics-phase1.txt"), "w").write(page)
    got = published(page, pid, "truewatt run")
    want, busy = split_of(report, a.index)
    check(got is not None and abs(got - want) <= 1e-9 * max(1.0, want),
          "phase 1: pid %s published %s J = its run's split %.3f J (kernels + copies + unexplained power x %.3f s busy)"
          % (pid, got, want, busy))
    t0, t1 = kernel_span_ns(run)
    ref = counter_j(a.energy, a.index, t0, t1)
    err = (got or 0) / ref - 1 if ref > 0 else float("nan")
    check(abs(err) <= a.tol, "phase 1: against the GPU's counter (pynvml) over its kernels' %.3f s: %.3f J vs %.3f J "
          "(%+.2f %%, tolerance %.1f %%)" % ((t1 - t0) * 1e-9, got or 0, ref, 100 * err, 100 * a.tol))
    check(published(page, pid, "estimate") is None, "phase 1: no estimate for the measured pid %s" % pid)

    # ---- phase 2: shared with a process that is not measured
    before = scrape(a.url)
    other = subprocess.Popen(shlex.split(a.other), stdout=subprocess.DEVNULL)
    time.sleep(1.0)
    pid2, report2, pages, _ = run_measured(a, "phase2", a.app2, True)
    other.wait()
    time.sleep(1.0)
    after = scrape(a.url)
    open(os.path.join(a.out, "metrics-phase2.txt"), "w").write(after)
    seen = [published(p, pid2, "estimate") for p in pages]
    check(pages and all(s is None for s in seen),
          "phase 2: in %d scrapes while it ran, never an estimate for the measured pid %s" % (len(pages), pid2))
    check(published(after, str(other.pid), "estimate") is not None,
          "phase 2: the process not measured (pid %d) is estimated" % other.pid)
    held = [v for v in (published(p, str(other.pid), "estimate") for p in pages) if v is not None]
    check(len(set(held)) <= 1, "phase 2: the other's estimate held while the measured run goes on (%d of %d scrapes "
          "show it, %d values)" % (len(held), len(pages), len(set(held))))
    got2 = published(after, pid2, "truewatt run")
    want2, _ = split_of(report2, a.index)
    check(got2 is not None and got2 <= want2 * (1 + 1e-9), "phase 2: the measured pid %s is published: %s J, at "
          "most its run's split %.3f J" % (pid2, got2, want2))

    def total(page):
        return sum(v for l, v in samples(page, "truewatt_process_energy_joules_total") if l.get("index") == str(a.index))

    def gpu(page):
        return [v for l, v in samples(page, "truewatt_gpu_energy_joules_total") if l.get("index") == str(a.index)][0]

    procs, whole = total(after) - total(before), gpu(after) - gpu(before)
    est = sum(v for l, v in samples(after, "truewatt_process_energy_joules_total") if l.get("pid") == str(other.pid))
    est -= sum(v for l, v in samples(before, "truewatt_process_energy_joules_total") if l.get("pid") == str(other.pid))
    check(0 < procs <= whole * 1.01, "phase 2: the processes' energy added over the phase %.3f J <= the GPU's %.3f J "
          "(nothing counted twice; the measured %.3f J, the estimated %.3f J)" % (procs, whole, got2 or 0, est))
    open(os.path.join(a.out, "check.txt"), "w").write("\n".join(lines) + "\n")
    print("%s: %d checks, %d failed" % ("FAIL" if failed else "PASS", len(lines), len(failed)))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
