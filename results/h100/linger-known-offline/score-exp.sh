#!/usr/bin/env bash
# EXP_BUILD: this tree with tried.patch applied, built apart (cmake -DTW_BUILD_TESTS=OFF, --target truewatt)
# BASE_BUILD: the build to compare against (default build, this tree's)
# score-exp.sh OUT [env assignments...]: the experimental build against the default on every kept folder
out=$1; shift
cd "$(git rev-parse --show-toplevel)"
rm -rf "$out"; mkdir -p "$out"
H=results/h100
for f in $H/attrib $H/attrib-steps20-s38 $H/attrib-default-s38 $H/attrib-default-s37c $H/attrib-loo-s38/mixed-20s $H/attrib-loo-s38/mixed-6s $H/attrib-loo-s38/bursts-6s $H/attrib-default-s36 $H/attrib-default-s36-bursts $H/attrib-s31-steps30a $H/attrib-s31-steps30b $H/attrib-s30f; do
  env "$@" scripts/offline-attrib --base "${BASE_BUILD:-build}" --build "$EXP_BUILD" "$out/$(echo $f | tr / _)" "$f" >/dev/null 2>&1 &
done
wait
for f in results/h100/attrib-s41/mixed-even results/h100/attrib-s41/bursts60 results/h100/attrib-s41/bursts60b; do
  env "$@" scripts/offline-attrib --base "${BASE_BUILD:-build}" --build "$EXP_BUILD" "$out/$(echo $f | tr / _)" "$f" >/dev/null 2>&1 &
done
wait
for f in results/h200/attrib-s40/mixed-even results/h200/attrib-s40/bursts-steps results/h200/attrib-s40/streams-torch; do
  env "$@" scripts/offline-attrib --option=--profile --option=data/profiles/nvidia-h200_580.159.04.json --base "${BASE_BUILD:-build}" --build "$EXP_BUILD" "$out/$(echo $f | tr / _)" "$f" >/dev/null 2>&1
done
scripts/offline-score "$out"/*/compare.txt 2>&1 | sed -n 1,3p
scripts/offline-score "$out"/results_h200*/compare.txt 2>&1 | sed -n 1,3p
scripts/offline-score "$out"/*s41*/compare.txt 2>&1 | sed -n 1,3p
