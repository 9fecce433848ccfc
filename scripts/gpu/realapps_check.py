#!/usr/bin/env python3
"""What a reader checks in scripts/gpu-realapps' reports (DIR/torch.report.json, DIR/jax.report.json): no
negative energy, no name given more energy than the GPU's readings hold, the GPU's energy conserved within
1 %, NVTX ranges for PyTorch. One line per program and GPU; exit 1 when a check fails. No GPU: it reads the
JSON and the same run's trace and events (DIR/PROG.json.trace.csv[.gz], DIR/PROG.json.events.csv[.gz], as
`truewatt export --csv` writes them), so the same check runs on kept run files.

The readings' bound on a name: its energy (the estimate of one below resolution, the bound x its time of
one held at the power bound) is at most what the finest power reading of the trace (the sample buffer
where there is one) shows above the GPU's lowest level over the samples that end between one of its
launches' start and LAG_S after its end (the sensor's delay and the power that lingers after a kernel;
every other kernel's share taken as nothing), by more than SIGMAS of its own standard error (the report's
energy_sd_j; none given: 0): an estimate within its error of the bound is no wrong number (the H200's 28 ms
burst of 20 bf16 GEMMs, results/h200/realapps-s42: 26.7 +- 2.1 J where its readings hold 26.3 J); the
same for each group over its members' launches. A board power limit is no such bound: a 28 ms burst
of bf16 GEMMs read 852 W in the H100's 20 ms buffer (results/h100/realapps-s41), above its 700 W limit.
  python3 scripts/gpu/realapps_check.py DIR
"""
import bisect, json, os, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from textfile import csv_rows, open_text  # noqa: E402  (one way to open a kept text file)

LAG_S = 0.1  # the buffer's 20 ms windows, a delay of ~13 ms, and ~0.25 s of lingering power's first part
LOW_PCT = 5  # the GPU's lowest level: this percentile of the readings over the run's kernels
SIGMAS = 2  # an energy over the readings' bound by more than this many of its standard errors fails


def finest_power(trace, prefix):
    """[(t, W)] of the power reading with the most distinct samples (power_buffer_w, power_instant_w,
    power_usage_w; the device's column prefix in a trace of several GPUs), in time order"""
    best = []
    for col in ("power_buffer_w", "power_instant_w", "power_usage_w"):
        c, ct = prefix + col, prefix + col + "_t_s"
        got = {}
        for r in trace:
            if r.get(c) and r.get(ct):
                got[float(r[ct])] = float(r[c])
        if len(got) > len(best):
            best = sorted(got.items())
    return best


def readings_bound(samples, launches, low):
    """joules above low in the samples that end within [start, end + LAG_S] of a launch, each sample
    counted once over the time since the one before it"""
    ts = [t for t, _ in samples]
    hit = set()
    for a, b in launches:
        i = bisect.bisect_left(ts, a)
        while i < len(ts) and ts[i] <= b + LAG_S:
            hit.add(i)
            i += 1
    return sum((samples[i][1] - low) * (ts[i] - ts[i - 1]) for i in hit if i > 0 and samples[i][1] > low)


def brief(names):
    """'none', or how many and the first three (kernel names run to thousands of characters)"""
    if not names:
        return "none"
    return f"{len(names)} ({'; '.join(n[:60] for n in names[:3])}{'; ...' if len(names) > 3 else ''})"


def check(out, prog):
    path = os.path.join(out, prog + ".report.json")
    f = open_text(path)
    if f is None:
        sys.exit(f"realapps_check: {path}[.gz]: no such file")
    d = json.load(f, parse_constant=lambda c: (_ for _ in ()).throw(ValueError(c)))
    trace = csv_rows(os.path.join(out, prog + ".json.trace.csv"), "realapps_check")
    events = csv_rows(os.path.join(out, prog + ".json.events.csv"), "realapps_check")
    ok = True
    for dev in d["devices"]:
        est = dev.get("estimate") or {}
        names = dev.get("names") or []
        neg = [x["name"] for x in names if x["energy_j"] is not None and x["energy_j"] < 0]
        samples = finest_power(trace, dev.get("column_prefix") or "")
        mine = [e for e in events if e.get("device", "0") == str(dev["index"]) and e["kind"] != "nvtx"]
        spans = {}
        for e in mine:
            spans.setdefault(e["name"], []).append((float(e["start_s"]), float(e["end_s"])))
        t0 = min((a for s in spans.values() for a, _ in s), default=0)
        t1 = max((b for s in spans.values() for _, b in s), default=0)
        inside = sorted(w for t, w in samples if t0 <= t <= t1) or [w for _, w in samples]
        low = inside[len(inside) * LOW_PCT // 100] if inside else 0
        # each name and each group (over its members' launches) as the report gives its energy (a
        # below-resolution name's upper bound, estimate + 2 sd, may exceed it: a loose bound is no wrong number)
        given = [(x["name"], [x["name"]], x["energy_j"], x.get("energy_sd_j")) for x in names]
        given += [(g.get("label", f"group {g.get('id')}"), g["names"], g["energy_j"], g.get("energy_sd_j"))
                  for g in dev.get("groups") or []]
        over, unread = [], []
        for label, members, e, sd in given:
            if e is None or e == 0:
                continue
            if not all(m in spans for m in members):
                unread.append(label)
            else:
                bound = readings_bound(samples, [s for m in members for s in spans[m]], low)
                if e - SIGMAS * (sd or 0) > 1.01 * bound + 0.01:
                    over.append(label)
        statuses = {}
        for x in names:
            statuses[x["status"]] = statuses.get(x["status"], 0) + 1
        ok_names = [x for x in names if x["status"] == "ok"]
        powers = sorted({round(x["power_w"]) for x in ok_names[:10] if x["power_w"] is not None})
        ranges = dev.get("nvtx_ranges") or []
        print(f"{prog} GPU {dev['index']}: conservation {est.get('conservation_pct', float('nan')):+.2f} %, "
              f"{len(names)} names ({', '.join(f'{v} {k}' for k, v in sorted(statuses.items()))}), "
              f"the resolved names' distinct powers {powers} W, {len(ranges)} NVTX ranges, "
              f"{len(samples)} power readings (lowest level {low:.0f} W), negative: {brief(neg)}, "
              f"more energy than the readings hold: {brief(over)}, not in the events: {brief(unread)}")
        ok &= bool(samples) and not neg and not over and not unread and abs(est.get("conservation_pct", 99)) <= 1
        if prog == "torch":
            ok &= len(ranges) > 0
    return ok


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python3 scripts/gpu/realapps_check.py DIR")
    ok = True
    for prog in ("torch", "jax"):
        ok &= check(sys.argv[1], prog)
    print("all checks passed" if ok else "SOME CHECKS FAILED")
    sys.exit(0 if ok else 1)
