#!/usr/bin/env python3
"""truewatt exporter scraped by Debian's Prometheus, on the loopback.

Two fake GPUs (the fake libnvidia-ml) draw scripted, different constant
powers (300 W and 150 W, a kernel each from t = 0 on the fake's timeline);
GPU 1 falls off the bus at t = LOST_S. The exporter listens on a free port,
Prometheus scrapes it every second into a temp folder, and the checks are
PromQL over Prometheus' HTTP API:
  - up == 1 (every scrape parsed: Prometheus asks for OpenMetrics first);
  - rate(truewatt_gpu_energy_joules_total[W]) of each GPU, at its last sample,
    is its scripted power within 1 % (the expected value is the script's watts);
  - truewatt_gpu_lost is 1 for GPU 1 only, and GPU 0's energy kept coming
    after GPU 1 was lost (its last sample later than the loss);
  - truewatt_gpu_power_watts of GPU 0 is 300 W within 1 %;
  - the per-process estimate splits GPU 0's energy by the fake's SM shares.
The page in the text format passes `promtool check metrics` (without the
dcgm names, whose camelCase labels are dcgm-exporter's own).

Why rate() can be held to 1 %: the exporter stamps each energy value with the
time it was read, so rate() divides by the time the energy was used in; the
fake's counter lags its read by 0-100 ms (its updates), so the slope over a
span S is off by less than 0.1 s / S: S >= 10 s keeps that under 1 %. Prometheus
starts first (it takes seconds), scraping the port the exporter then listens on.

usage: exporter_prometheus.py TRUEWATT FAKE_LIBNVIDIA_ML
Exit 0 pass, 1 fail, 77 skip (never in CI: a missing prometheus fails there).
"""
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request

POWER_W = (300.0, 150.0)
LOST_S = 13.5  # GPU 1 lost at this fake time (s since the exporter's nvmlInit)
RUN_S = 16.0  # GPU 0 scraped until then
TOL = 0.01
PROCS = "0:1234:60,0:5678:30"  # dev:pid:sm%

failures = []


def check(ok, what):
    print(("ok: " if ok else "FAIL: ") + what, flush=True)
    if not ok:
        failures.append(what)


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def http_get(url, headers=None, timeout=5):
    req = urllib.request.Request(url, headers=headers or {})
    with urllib.request.urlopen(req, timeout=timeout) as r:
        return r.read().decode(), r.headers.get("Content-Type", "")


def wait_for(pred, timeout_s, what):
    t_end = time.monotonic() + timeout_s
    while time.monotonic() < t_end:
        try:
            v = pred()
            if v:
                return v
        except (OSError, ValueError):
            pass
        time.sleep(0.1)
    raise RuntimeError("timed out waiting for " + what)


def promql(base, query, at=None):
    params = {"query": query}
    if at is not None:
        params["time"] = "%.3f" % at
    body, _ = http_get(base + "/api/v1/query?" + urllib.parse.urlencode(params))
    res = json.loads(body)
    if res.get("status") != "success":
        raise RuntimeError("PromQL %s: %s" % (query, body))
    return {r["metric"].get("index", ""): (float(r["value"][0]), float(r["value"][1])) for r in res["data"]["result"]}


def start_exporter(tw, lib, tmp, port):
    env = dict(os.environ, TW_NVML_LIBRARY=lib, TW_FAKE_NVML_DEVICES="2",
               TW_FAKE_NVML_DEVICE_POWER_W=",".join("%g" % w for w in POWER_W), TW_FAKE_NVML_LOST_DEVICE="1",
               TW_FAKE_NVML_LOST_AFTER_S=str(LOST_S), TW_FAKE_NVML_PROCESSES=PROCS,
               TW_PROFILE_DIR=os.path.join(tmp, "no-profiles"), TW_PROCESS_DIR=os.path.join(tmp, "procs"))
    log = open(os.path.join(tmp, "exporter.log"), "w+")
    p = subprocess.Popen([tw, "exporter", "--listen", "127.0.0.1:%d" % port, "--processes", "--dcgm-names"], env=env,
                         stderr=log, stdout=log)
    t0 = time.time()  # about the fake's t = 0 (its first nvmlInit, in the exporter's start)

    def address():
        log.seek(0)
        for line in log.read().splitlines():
            if "listening on http://" in line:
                return line.split("http://")[1].split("/")[0]
        if p.poll() is not None:
            raise RuntimeError("the exporter exited: " + open(log.name).read())
        return None

    return p, wait_for(address, 10, "the exporter's address"), t0, log


def start_prometheus(target, tmp):
    port = free_port()
    cfg = os.path.join(tmp, "prometheus.yml")
    with open(cfg, "w") as f:
        f.write("global:\n  scrape_interval: 1s\n  scrape_timeout: 900ms\n  evaluation_interval: 1s\n"
                "scrape_configs:\n  - job_name: truewatt\n    static_configs:\n      - targets: ['%s']\n" % target)
    log = open(os.path.join(tmp, "prometheus.log"), "w")
    p = subprocess.Popen(["prometheus", "--config.file=" + cfg, "--storage.tsdb.path=" + os.path.join(tmp, "data"),
                          "--web.listen-address=127.0.0.1:%d" % port, "--log.level=warn"], stdout=log, stderr=log)
    base = "http://127.0.0.1:%d" % port
    wait_for(lambda: http_get(base + "/-/ready")[0], 20, "prometheus to be ready")
    # its targets come a few seconds after it is ready (the discovery's updates are throttled): the
    # exporter starts once Prometheus tries to scrape it, so that the samples span the whole run
    wait_for(lambda: json.loads(http_get(base + "/api/v1/targets")[0])["data"]["activeTargets"], 20,
             "prometheus' target")
    return p, base


def check_pages(tw_addr, tmp):
    text, ctype = http_get("http://%s/metrics" % tw_addr)
    check(ctype.startswith("text/plain; version=0.0.4"), "text format without an Accept header (%s)" % ctype)
    om, octype = http_get("http://%s/metrics" % tw_addr, {"Accept": "application/openmetrics-text;version=1.0.0"})
    check(octype.startswith("application/openmetrics-text") and om.endswith("# EOF\n"),
          "OpenMetrics when asked, ending in # EOF (%s)" % octype)
    plain = "".join(line + "\n" for line in text.splitlines() if "DCGM_" not in line)
    r = subprocess.run(["promtool", "check", "metrics"], input=plain, capture_output=True, text=True)
    check(r.returncode == 0, "promtool check metrics passes the page (%s%s)" % (r.stdout, r.stderr))
    return text


def check_energy_rates(base, t0):
    last = promql(base, "timestamp(truewatt_gpu_energy_joules_total)")
    check(set(last) == {"0", "1"}, "both GPUs' energy in Prometheus (%s)" % sorted(last))
    for idx, w in enumerate(POWER_W):
        t_last = last[str(idx)][1]
        first = promql(base, "min_over_time(timestamp(truewatt_gpu_energy_joules_total{index=\"%d\"})[60s:100ms])"
                       % idx, at=t_last)
        span = t_last - first[str(idx)][1]
        # the window from just before the first sample to the last: rate() then has nothing to
        # extrapolate (it would, by up to half the mean interval, where an edge falls between samples)
        win_ms = int(span * 1000) + 1
        got = promql(base, "rate(truewatt_gpu_energy_joules_total{index=\"%d\"}[%dms])" % (idx, win_ms), at=t_last)
        rate = got[str(idx)][1]
        err = rate / w - 1
        check(abs(err) <= TOL and span >= 10,
              "GPU %d: rate(truewatt_gpu_energy_joules_total[%dms]) = %.3f W, scripted %.1f W (%+.3f %%; samples "
              "over %.1f s, at least 10)" % (idx, win_ms, rate, w, 100 * err, span))
    check(last["1"][1] - t0 < LOST_S + 1 and last["0"][1] - t0 > LOST_S + 1,
          "GPU 0 served after GPU 1 was lost (last samples at t = %.1f s and %.1f s; lost at %.1f s)"
          % (last["0"][1] - t0, last["1"][1] - t0, LOST_S))


def check_state(base, t_listen):
    lost = promql(base, "truewatt_gpu_lost")
    check(lost.get("0", (0, -1))[1] == 0 and lost.get("1", (0, -1))[1] == 1, "truewatt_gpu_lost: GPU 1 only (%s)"
          % lost)
    # the scrapes since the exporter listened (Prometheus tried it before, and found it down)
    since = int(time.time() - t_listen) - 1
    up = promql(base, "min_over_time(up[%ds])" % since)
    check(up.get("", (0, 0))[1] == 1, "every scrape of the last %d s parsed (min up = %s)" % (since, up))
    power = promql(base, "truewatt_gpu_power_watts")
    p0 = power.get("0", (0, float("nan")))[1]
    check(abs(p0 / POWER_W[0] - 1) <= TOL, "GPU 0: truewatt_gpu_power_watts %.3f W, scripted %.1f W" % (p0, POWER_W[0]))
    dcgm = promql(base, "DCGM_FI_DEV_POWER_USAGE{gpu=\"0\"}")
    check(len(dcgm) == 1, "DCGM_FI_DEV_POWER_USAGE with dcgm-exporter's labels")


def check_processes(text):
    """Per-process estimate: the fake gives pids 1234 and 5678 60 % and 30 % of GPU 0's SM time."""
    energy, procs = None, {}
    for line in text.splitlines():
        if line.startswith("truewatt_gpu_energy_joules_total{") and 'index="0"' in line:
            energy = float(line.split("} ")[1].split()[0])
        if line.startswith("truewatt_process_energy_joules_total{") and 'index="0"' in line:
            pid = line.split('pid="')[1].split('"')[0]
            check('source="estimate"' in line, "pid %s labelled source=\"estimate\"" % pid)
            procs[pid] = float(line.split("} ")[1].split()[0])
    a, b = procs.get("1234", float("nan")), procs.get("5678", float("nan"))
    # every scrape splits the energy since the one before by the shares of the samples it finds (a
    # scrape in the same 100 ms update as another finds none and leaves its energy to no process)
    check(abs(a / b - 2.0) <= 1e-9, "pids 1234 and 5678 get GPU 0's energy 60 : 30 (%.6f : %.6f J)" % (a, b))
    check(energy and 0.5 * energy <= a <= 0.6 * energy * (1 + 1e-9),
          "pid 1234: %.3f of GPU 0's %.3f J, at most the fake's 60 %% share" % (a, energy or 0))


def main():
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    tw, lib = sys.argv[1], sys.argv[2]
    for tool in ("prometheus", "promtool"):
        if not shutil.which(tool):
            print("FAIL: %s not found (Debian's prometheus package; scripts/deps installs it)" % tool)
            return 1
    tmp = tempfile.mkdtemp(prefix="exporter-prom.", dir=os.environ.get("TW_TMPDIR"))
    exporter = prom = None
    try:
        port = free_port()
        prom, base = start_prometheus("127.0.0.1:%d" % port, tmp)
        exporter, addr, t0, log = start_exporter(tw, lib, tmp, port)
        t_listen = time.time()
        check(addr == "127.0.0.1:%d" % port, "the exporter says where it listens (%s)" % addr)
        time.sleep(max(0.0, t0 + 3 - time.time()))
        text = check_pages(addr, tmp)
        check_processes(text)
        time.sleep(max(0.0, t0 + RUN_S - time.time()))
        check_energy_rates(base, t0)
        check_state(base, t_listen)
        exporter.send_signal(signal.SIGTERM)
        rc = exporter.wait(timeout=10)
        log.seek(0)
        out = log.read()
        check(rc == 0 and "stopped" in out, "SIGTERM stops the exporter cleanly (exit %d)" % rc)
        exporter = None
    finally:
        for p in (exporter, prom):
            if p and p.poll() is None:
                p.terminate()
                try:
                    p.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    p.kill()
        if failures:
            for name in ("exporter.log", "prometheus.log"):
                path = os.path.join(tmp, name)
                if os.path.exists(path):
                    print("---- " + name + "\n" + open(path).read()[-3000:])
        shutil.rmtree(tmp, ignore_errors=True)
    print("%d check(s) failed" % len(failures) if failures else "all checks passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
