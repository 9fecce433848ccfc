#!/usr/bin/env bash
# edges.sh [BUILD]: PM sampling's power at its windows' edges as each kept full run of the folders
# below is reported by BUILD (default build), the H200's with its shipped profile: the windows' own
# term, the five 0.1 s spans before the recorded start (farthest first) and the two after the end, W,
# and the sample buffer's residual
build=${1:-build}
cd "$(git rev-parse --show-toplevel)"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
echo "# provenance: command: results/h100/pm-edges-offline/edges.sh $*; date: $(date -u +%FT%TZ); commit: $(git rev-parse --short HEAD); the run files recorded on the GPU named in each folder's README.md or meta.txt"
printf '%-48s %-11s %7s  %-34s  %-12s %s\n' folder run pm_w "lead_w (-0.5 .. 0 s)" "trail_w" "buffer_rms_w"
H=results/h100
for f in $H/attrib $H/attrib-steps20-s38 $H/attrib-default-s38 $H/attrib-default-s37c $H/attrib-loo-s38/mixed-20s \
         $H/attrib-loo-s38/mixed-6s $H/attrib-loo-s38/bursts-6s $H/attrib-default-s36 $H/attrib-default-s36-bursts \
         $H/attrib-s41/mixed-even $H/attrib-s41/bursts60 $H/attrib-s41/bursts60b \
         results/h200/attrib-s40/mixed-even results/h200/attrib-s40/bursts-steps results/h200/attrib-s40/streams-torch; do
  prof=(); case $f in results/h200/*) prof=(--profile data/profiles/nvidia-h200_580.159.04.json) ;; esac
  for x in "$f"/raw/full.*.sqlite.xz; do
    [ -e "$x" ] || continue
    b=$(basename "$x" .sqlite.xz)
    xz -dc "$x" > "$tmp/r.sqlite"
    "$build/truewatt" report --json "${prof[@]}" "$tmp/r.sqlite" > "$tmp/r.json" 2>/dev/null || { echo "$f $b: report failed"; continue; }
    python3 - "$tmp/r.json" "$f" "${b#full.}" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
for d in r["devices"]:
    e = d["estimate"]; a = e.get("activity_model") or {}
    if "pm_lead_w" not in a:
        print("%-48s %-11s %7s" % (sys.argv[2], sys.argv[3], "no PM windows")); continue
    lead = " ".join("%5.1f" % w for w in reversed(a["pm_lead_w"]))
    trail = " ".join("%5.1f" % w for w in a["pm_trail_w"])
    rms = next((x["rms_w"] for x in e["readings"] if x["name"] == "power_buffer_w"), float("nan"))
    print("%-48s %-11s %7.1f  %-34s  %-12s %.2f" % (sys.argv[2], sys.argv[3], a["pm_power_w"], lead, trail, rms))
PY
  done
done
