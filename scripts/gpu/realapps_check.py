#!/usr/bin/env python3
"""What a reader checks in scripts/gpu-realapps' reports (DIR/torch.report.json, DIR/jax.report.json): no
negative energy, no power above what the GPU can draw, the GPU's energy conserved within 1 %, NVTX
ranges for PyTorch. One line per program and GPU; exit 1 when a check fails. No GPU: it reads the JSON
alone, so the same check runs on reports made again from kept run files.
  python3 scripts/gpu/realapps_check.py DIR
"""
import gzip, json, os, sys
if len(sys.argv) != 2:
    sys.exit("usage: python3 scripts/gpu/realapps_check.py DIR")
out = sys.argv[1]
ok = True


def brief(names):
    """'none', or how many and the first three (kernel names run to thousands of characters)"""
    if not names:
        return "none"
    return f"{len(names)} ({'; '.join(n[:60] for n in names[:3])}{'; ...' if len(names) > 3 else ''})"


for prog in ("torch", "jax"):
    path = os.path.join(out, prog + ".report.json")
    if not os.path.exists(path) and not os.path.exists(path + ".gz"):
        sys.exit(f"realapps_check: {path}[.gz]: no such file")
    f = open(path) if os.path.exists(path) else gzip.open(path + ".gz", "rt")
    d = json.load(f, parse_constant=lambda c: (_ for _ in ()).throw(ValueError(c)))
    for dev in d["devices"]:
        est = dev.get("estimate") or {}
        names = dev.get("names") or []
        neg = [x["name"] for x in names if x["energy_j"] is not None and x["energy_j"] < 0]
        # what the GPU can draw above its baseline: its board power (the H100 and H200 SXM: 700 W) less the baseline
        # (or the estimator's bound, the limit less its quiet level, where that is the larger: a name held
        # at it is reported as such, '<=')
        ceiling = max(700.0 - (est.get("baseline_min_w") or 0), est.get("power_bound_w") or 0)
        # a resolved name's power, and a one-sided name's bound (below resolution, at the power bound) over its time
        def most_w(x):
            if x["status"] == "ok":
                return x["power_w"]
            if x.get("upper_j") is not None and x.get("time_s"):
                return x["upper_j"] / x["time_s"]
            return None
        absurd = [x["name"] for x in names if most_w(x) is not None and most_w(x) > ceiling * 1.001]
        ok_names = [x for x in names if x["status"] == "ok"]
        statuses = {}
        for x in names:
            statuses[x["status"]] = statuses.get(x["status"], 0) + 1
        powers = sorted({round(x["power_w"]) for x in ok_names[:10] if x["power_w"] is not None})
        ranges = dev.get("nvtx_ranges") or []
        print(f"{prog} GPU {dev['index']}: conservation {est.get('conservation_pct', float('nan')):+.2f} %, "
              f"{len(names)} names ({', '.join(f'{v} {k}' for k, v in sorted(statuses.items()))}), "
              f"the resolved names' distinct powers {powers} W, {len(ranges)} NVTX ranges, "
              f"negative: {brief(neg)}, a power or bound above what the GPU can draw: {brief(absurd)}")
        ok &= not neg and not absurd and abs(est.get("conservation_pct", 99)) <= 1
        if prog == "torch":
            ok &= len(ranges) > 0
print("all checks passed" if ok else "SOME CHECKS FAILED")
sys.exit(0 if ok else 1)
