#!/usr/bin/env python3
"""A stand-in for Nsight Compute's `ncu --csv --log-file FILE ... CMD` in the tests.

It runs CMD, then writes an ncu-style CSV (thousands separators and all) to the log file:
- when CMD has `--manifest FILE` (truewatt mem counters), one launch per manifest line with the
  counters an ideal GPU would show (a base for the warm-up, plus the measurement loop's sectors at
  the target level); TW_FAKE_NCU_SPOIL=LEVEL halves that level's hits (or DRAM's share), and
  TW_FAKE_NCU_SPOIL=count:LEVEL counts 20 % too few sectors there;
- else the rows of the CSV file named by TW_FAKE_NCU_ROWS (the kernels of an application), those of
  the launches --launch-skip S --launch-count C select (IDs in order of first appearance).
TW_FAKE_NCU_FAIL=1: writes ncu's permission error instead and exits 1.
"""
import csv, os, subprocess, sys

VALUED = {"--metrics", "--kernel-name", "--log-file", "--clock-control", "--nvtx-include", "--launch-count",
          "--launch-skip", "--print-kernel-base", "--target-processes", "--replay-mode", "--section", "--cache-control"}
FLAGS = {"--csv", "--nvtx"}


def parse(argv):
    opts, i = {}, 0
    while i < len(argv) and argv[i].startswith("--"):
        if argv[i] in VALUED:
            opts[argv[i]] = argv[i + 1]
            i += 2
        elif argv[i] in FLAGS:
            opts[argv[i]] = True
            i += 1
        else:
            sys.exit(f"fake ncu: unknown option {argv[i]}")
    return opts, argv[i:]


def ideal(row, metrics, spoil):
    op, level, a, b = row["op"], row["level"], float(row["accesses"]), float(row["bytes"])
    v = {m: 1000.0 for m in metrics}  # the ring's building and the warm-up pass
    hit = 0.5 if spoil == level else 1.0
    a_counted = a * (0.8 if spoil == "count:" + level else 1.0)
    def add(m, x):
        v[m + ".sum"] += x
    if level == "shared":
        add("sm__sass_data_bytes_mem_shared_op_" + ("st" if op == "store" else "ld"), b)
    elif op == "store":
        add("lts__t_sectors_srcunit_tex_op_write", a if level == "dram" else a_counted)
        add("lts__t_sectors_srcunit_tex_op_write_lookup_hit", a * (hit if level == "l2" else 0.0))
        if level == "dram":
            add("dram__sectors_write", a_counted * hit)
    else:
        add("l1tex__t_sectors_pipe_lsu_mem_global_op_ld", a_counted if level == "l1" else a)
        add("l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_hit", a * hit if level == "l1" else 0.0)
        if level in ("l2", "dram"):
            add("lts__t_sectors_srcunit_tex_op_read", a_counted if level == "l2" else a)
            add("lts__t_sectors_srcunit_tex_op_read_lookup_hit", a * hit if level == "l2" else 0.0)
        if level == "dram":
            add("dram__sectors_read", a_counted * hit)
    return v


def number(x):
    return f"{int(round(x)):,}"


def main():
    opts, cmd = parse(sys.argv[1:])
    log = opts.get("--log-file")
    if not cmd or not log:
        sys.exit("fake ncu: needs --log-file and a command")
    if os.environ.get("TW_FAKE_NCU_FAIL") == "1":
        with open(log, "w") as f:
            f.write("==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA GPU "
                    "Performance Counters on the target device 0.\n")
        return 1
    rc = subprocess.call(cmd)
    header = ["ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Context", "Stream", "Block Size",
              "Grid Size", "Device", "CC", "Section Name", "Metric Name", "Metric Unit", "Metric Value"]
    with open(log, "w", newline="") as f:
        f.write("==PROF== Connected to process 4242 (fake)\n")
        w = csv.writer(f, quoting=csv.QUOTE_ALL, lineterminator="\n")
        w.writerow(header)
        if "--manifest" in cmd:
            metrics = opts["--metrics"].split(",")
            with open(cmd[cmd.index("--manifest") + 1]) as m:
                for row in csv.DictReader(m):
                    v = ideal(row, metrics, os.environ.get("TW_FAKE_NCU_SPOIL", ""))
                    for name in metrics:
                        w.writerow([row["launch"], "4242", "truewatt", "127.0.0.1", "tw_chase", "1", "7",
                                    f"({row['threads']}, 1, 1)", f"({row['blocks']}, 1, 1)", "0", "9.0",
                                    "Command line profiler metrics", name, "sector", number(v[name])])
        elif os.environ.get("TW_FAKE_NCU_ROWS"):
            with open(os.environ["TW_FAKE_NCU_ROWS"]) as r:
                rows = list(csv.reader(r))
            # --launch-skip S --launch-count C: the launches (IDs in order of first appearance) S .. S+C-1
            skip = int(opts.get("--launch-skip", "0"))
            count = int(opts["--launch-count"]) if "--launch-count" in opts else None
            col = rows[0].index("ID") if rows and "ID" in rows[0] else 0
            order = {}
            for row in rows[1:]:
                k = order.setdefault(row[col], len(order))
                if k >= skip and (count is None or k < skip + count):
                    w.writerow(row)
        f.write("==PROF== Disconnected from process 4242\n")
    return rc


if __name__ == "__main__":
    sys.exit(main())
