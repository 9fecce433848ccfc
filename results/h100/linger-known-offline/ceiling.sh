#!/usr/bin/env bash
# EXP_BUILD: this tree with tried.patch applied, built apart (cmake -DTW_BUILD_TESTS=OFF, --target truewatt)
# ceiling.sh OUT LW: each folder's steady lingers as the linger priors' means
out=$1; lw=$2
cd "$(git rev-parse --show-toplevel)"; rm -rf $out; mkdir -p $out
for f in results/h100/attrib results/h100/attrib-steps20-s38 results/h100/attrib-default-s38 results/h100/attrib-default-s37c results/h100/attrib-loo-s38/mixed-20s results/h100/attrib-loo-s38/mixed-6s results/h100/attrib-loo-s38/bursts-6s results/h100/attrib-s41/mixed-even results/h100/attrib-s41/bursts60 results/h100/attrib-s41/bursts60b; do
  lm=$(results/h100/linger-known-offline/steady-lingers.sh $f)
  TW_EXP_LMEAN="$lm" TW_EXP_LW=$lw scripts/offline-attrib --base build --build "$EXP_BUILD" "$out/$(echo $f | tr / _)" "$f" >/dev/null 2>&1 &
done
wait
P=data/profiles/nvidia-h200_580.159.04.json
for f in results/h200/attrib-s40/mixed-even results/h200/attrib-s40/bursts-steps results/h200/attrib-s40/streams-torch; do
  lm=$(results/h100/linger-known-offline/steady-lingers.sh $f $P)
  TW_EXP_LMEAN="$lm" TW_EXP_LW=$lw scripts/offline-attrib --option=--profile --option=$P --base build --build "$EXP_BUILD" "$out/$(echo $f | tr / _)" "$f" >/dev/null 2>&1 &
done
wait
scripts/offline-score $out/*/compare.txt 2>&1 | sed -n 1,3p
for d in $out/*/; do echo "$(basename $d): $(scripts/offline-score $d/compare.txt 2>&1 | sed -n 2,3p | sed 's/within their limits; mean |error|/ok, mean/' | tr '\n' ' ')"; done
