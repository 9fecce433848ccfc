#!/usr/bin/env bash
# offline.sh BASE_BUILD [BUILD [HERE]]: BUILD (default build, this tree's) against BASE_BUILD on the kept run
# files, no GPU: the PyTorch step's repeat (scripts/offline-repeat) on six pairs, the real programs'
# check (scripts/offline-realapps) on the text runs of three realapps folders, and the patterns
# against their solo references on the 18 kept folders (results/h100/linger-known-offline/score-exp.sh).
# Writes repeat/, realapps/ and folders/ into HERE (default this folder; results/h100/samples-offline's
# script calls this one with its own).
set -u
base=$1; build=${2:-build}
cd "$(git rev-parse --show-toplevel)"
here=${3:-results/h100/copies-offline}
stamp="date: $(date -u +%FT%TZ); commit: $(git rev-parse --short HEAD); builds: $base (base) $build; the run files recorded on the GPU named in each folder's README.md or meta.txt"
pairs=()
for f in results/h100/attrib results/h100/attrib-default-s38/torch results/h100/attrib-default-s37a/torch \
         results/h100/attrib-default-s37b/torch results/h200/attrib-s42-torch results/h200/attrib-s43-torch; do
  pairs+=("$f/raw/torch.run1.sqlite.xz" "$f/raw/torch.run2.sqlite.xz")
done
scripts/offline-repeat --base "$base" --build "$build" "$here/repeat" "${pairs[@]}" >/dev/null
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
scripts/offline-realapps --base "$base" --build "$build" "$here/realapps" results/h100/realapps-s41b \
  results/h200/realapps-s42 results/h200/realapps-s43
EXP_BUILD=$build BASE_BUILD=$base bash results/h100/linger-known-offline/score-exp.sh "$tmp/folders" > "$tmp/score.txt" 2>&1
rm -rf "$here/folders"; mkdir -p "$here/folders"
for c in "$tmp"/folders/*/compare.txt; do mkdir -p "$here/folders/$(basename "$(dirname "$c")")"; cp "$c" "$here/folders/$(basename "$(dirname "$c")")/"; done
{ echo "# provenance: command: results/h100/copies-offline/offline.sh $* (results/h100/linger-known-offline/score-exp.sh: all 18 folders, the H200's 3, the H100's s41 3); $stamp"; cat "$tmp/score.txt"; } > "$here/folders/score.txt"
