#!/usr/bin/env bash
# sd04.sh [BUILD]: an experiment, not a change: the H200's three kept PyTorch pairs reported with the
# H200 profile's calibrated models at 0.4 times their standard errors (sd_w), as a tighter calibration
# would give them: does the counters' coefficients' error decide the repeat? Writes compare.txt here.
build=${1:-build}
cd "$(git rev-parse --show-toplevel)"
here=results/h200/attrib-s43b-torch/prior-sd04
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
python3 - data/profiles/nvidia-h200_580.159.04.json "$tmp/sd04.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
for m in p["activity_models"]:
    m["sd_w"] = [0.4 * x for x in m["sd_w"]]
json.dump(p, open(sys.argv[2], "w"), indent=1)
PY
pairs=()
for f in results/h200/attrib-s42-torch results/h200/attrib-s43-torch results/h200/attrib-s43b-torch; do
  pairs+=("$f/raw/torch.run1.sqlite.xz" "$f/raw/torch.run2.sqlite.xz")
done
scripts/offline-repeat --build "$build" --report-option=--profile --report-option="$tmp/sd04.json" "$tmp/out" "${pairs[@]}" >/dev/null
sed "1s|\$| (the profile: data/profiles/nvidia-h200_580.159.04.json with each activity model's sd_w x 0.4, made by $here/sd04.sh)|" "$tmp/out/compare.txt" > "$here/compare.txt"
