#!/usr/bin/env bash
# offline.sh [BUILD]: the H200's sensor profile with the 34-row calibration (results/h200/activity-calib-s44b,
# data/profiles/nvidia-h200_580.159.04.json as committed) against the profile the run files recorded (the
# 13-row calibration of results/h200/activity-calib-s40), on the kept H200 run files, no GPU, the same build
# (default build, this tree's) for both: `truewatt report --profile FILE` reports a run file with another profile.
#   repeat-recorded/, repeat-new/      the PyTorch step's repeat on three pairs (scripts/offline-repeat)
#   realapps-recorded/, realapps-new/  the real programs' check on three realapps folders' text runs
#   attrib-recorded/, attrib-new/      the patterns against their solo references (scripts/offline-attrib)
#   summary.txt                        each one's summary lines
set -eu
build=${1:-build}
cd "$(git rev-parse --show-toplevel)"
here=results/h200/calib-s44b-offline
profile=data/profiles/nvidia-h200_580.159.04.json
pairs=()
for f in results/h200/attrib-s42-torch results/h200/attrib-s43-torch results/h200/attrib-s43b-torch; do
  pairs+=("$f/raw/torch.run1.sqlite.xz" "$f/raw/torch.run2.sqlite.xz")
done
apps=(results/h200/realapps-s42 results/h200/realapps-s43 results/h200/realapps-s43b)
folders=(results/h200/attrib-s42 results/h200/attrib-s42b)
rm -rf "$here"/repeat-* "$here"/realapps-* "$here"/attrib-*
scripts/offline-repeat --build "$build" "$here/repeat-recorded" "${pairs[@]}" >/dev/null
scripts/offline-repeat --build "$build" --report-option=--profile="$profile" "$here/repeat-new" "${pairs[@]}" >/dev/null
scripts/offline-realapps --build "$build" "$here/realapps-recorded" "${apps[@]}" >/dev/null
scripts/offline-realapps --build "$build" --report-option=--profile="$profile" "$here/realapps-new" "${apps[@]}" >/dev/null
scripts/offline-attrib --build "$build" "$here/attrib-recorded" "${folders[@]}" >/dev/null
scripts/offline-attrib --build "$build" --option=--profile="$profile" "$here/attrib-new" "${folders[@]}" >/dev/null
rm -f "$here"/realapps-*/*.report.txt # the text reports: the check's lines say what they hold
{
  echo "# provenance: command: $here/offline.sh $*; date: $(date -u +%FT%TZ); commit: $(git rev-parse --short HEAD); build: $build; profile: $profile (new) against each run file's own (recorded); the run files recorded on the NVIDIA H200 (driver 580.159.04) named in each folder's README.md or meta.txt"
  for w in recorded new; do
    echo "## $w profile"
    echo "repeat (top 10 of the PyTorch step within 5 %, per pair):"
    grep "^within 5 %" "$here/repeat-$w/compare.txt"
    echo "realapps:"
    grep -E "^(torch|jax) GPU|^all checks|FAIL" "$here/realapps-$w/check.txt" | sed -E 's/, the resolved names.*//'
    echo "patterns (names of 100 us and more against their limits):"
    scripts/offline-score "$here/attrib-$w/compare.txt" | sed -n '1,2p'
  done
} > "$here/summary.txt"
cat "$here/summary.txt"
