"""src/estimate/counters.c's features of a PM sample, in Python, for the studies that read run files
(scripts/gpu/activity_calib.py, scripts/gpu/pm_model.py): one implementation of the definitions.

  sm      SMs active: sm__cycles_active.avg / gpc__cycles_elapsed.max
  tensor  tensor pipes active: sm__pipe_tensor_*.pct_of_peak_sustained_elapsed / 100
  issue   instructions issued per elapsed cycle and SM, over 4: sm__inst_executed.avg.per_cycle_active x sm / 4
  dram    DRAM throughput: dram__throughput.avg.pct_of_peak_sustained_elapsed / 100
  l2      L2 traffic: lts__t_sectors.sum per elapsed cycle / 128
  l1      (not in counters.c) L1's data stage wavefronts per SM and cycle: l1tex__data_pipe_lsu_wavefronts.sum

and the sample's GPC clock (clock_mhz): gpc__cycles_elapsed.max over its span. The features per elapsed cycle
(all but dram) times the clock over a model's reference clock are rates per second (counters.c,
CLOCKED): scripts/activity-model fits them so where calib.csv has the clock.
"""

FEATURES = ("sm", "tensor", "issue", "dram", "l2", "l1")
SMS = 132  # the H100 SXM's SMs: l1's scale (a study's feature; the coefficient absorbs a wrong one)
L2_SECTORS_PER_CYCLE = 128.0  # counters.c's scale


def clip01(x):
    return 0.0 if not x > 0 else (1.0 if x > 1 else x)


CLOCKED = ("sm", "tensor", "issue", "l2", "l1")  # per elapsed cycle: scaled by the clock where a model has one


def clock_mhz(names, v, span_s):
    """The sample's GPC clock, MHz: its elapsed cycles over its span (None without either)."""
    if "gpc__cycles_elapsed.max" not in names or not span_s > 0:
        return None
    return v[names.index("gpc__cycles_elapsed.max")] / span_s * 1e-6


def feature_row(names, v):
    """counters.c's features of one sample (None where a metric was not recorded), and l1: L1's data
    stage (global, local and shared memory) wavefronts per SM and cycle, which counters.c lacks."""
    idx = {n: i for i, n in enumerate(names)}

    def get(prefix, exact=True):
        for n, i in idx.items():
            if (n == prefix) if exact else n.startswith(prefix):
                return v[i]
        return None

    el = max(1.0, get("gpc__cycles_elapsed.max") or 0.0)
    sm = clip01((get("sm__cycles_active.avg") or 0.0) / el)
    t, iss = get("sm__pipe_tensor", exact=False), get("sm__inst_executed.avg.per_cycle_active")
    d, l2 = get("dram__throughput.avg.pct_of_peak_sustained_elapsed"), get("lts__t_sectors.sum")
    l1 = get("l1tex__data_pipe_lsu_wavefronts.sum")
    return (sm, None if t is None else clip01(t / 100), None if iss is None else clip01(iss * sm / 4),
            None if d is None else clip01(d / 100), None if l2 is None else clip01(l2 / el / L2_SECTORS_PER_CYCLE),
            None if l1 is None else clip01(l1 / el / SMS))
