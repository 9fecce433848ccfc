#!/usr/bin/env bash
# offline.sh BASE_BUILD [BUILD]: BUILD (default build, this tree's) against BASE_BUILD on the kept run
# files, no GPU: the real programs' check (scripts/gpu/realapps_check.py) on the text runs of three
# realapps folders with their own trace and events, the PyTorch step's repeat (scripts/offline-repeat)
# on six pairs, and the patterns against their solo references on the 18 kept folders
# (results/h100/linger-known-offline/score-exp.sh). Writes realapps/, repeat/ and folders/ here.
set -u
base=$1; build=${2:-build}
cd "$(git rev-parse --show-toplevel)"
here=results/h100/samples-offline
stamp="date: $(date -u +%FT%TZ); commit: $(git rev-parse --short HEAD); builds: $base (base) $build; the run files recorded on the GPU named in each folder's README.md or meta.txt"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
mkdir -p "$here/realapps"
out="$here/realapps/check.txt"
echo "# provenance: command: $here/offline.sh $*; each PROG's text run (PROG.sqlite.xz) reported by each build with --json, its own trace and events (PROG.trace.csv.gz, PROG.events.csv.gz) as the check reads them; $stamp" > "$out"
for g in results/h100/realapps-s41b results/h200/realapps-s42 results/h200/realapps-s43; do
  for b in "$base" "$build"; do
    d="$tmp/$(basename "$g")"; rm -rf "$d"; mkdir -p "$d"
    for p in torch jax; do
      xz -dc "$g/$p.sqlite.xz" > "$d/$p.sqlite"
      "$b/truewatt" report --json "$d/$p.sqlite" > "$d/$p.report.json" 2>/dev/null
      cp "$g/$p.trace.csv.gz" "$d/$p.json.trace.csv.gz"
      cp "$g/$p.events.csv.gz" "$d/$p.json.events.csv.gz"
      [ "$b" = "$build" ] && "$b/truewatt" report "$d/$p.sqlite" > "$here/realapps/$(basename "$g").$p.report.txt" 2>&1
    done
    echo "## $g, build $b" >> "$out"
    python3 scripts/gpu/realapps_check.py "$d" >> "$out" 2>&1
  done
done
pairs=()
for f in results/h100/attrib results/h100/attrib-default-s38/torch results/h100/attrib-default-s37a/torch \
         results/h100/attrib-default-s37b/torch results/h200/attrib-s42-torch results/h200/attrib-s43-torch; do
  pairs+=("$f/raw/torch.run1.sqlite.xz" "$f/raw/torch.run2.sqlite.xz")
done
scripts/offline-repeat --base "$base" --build "$build" "$here/repeat" "${pairs[@]}" >/dev/null
EXP_BUILD=$build BASE_BUILD=$base bash results/h100/linger-known-offline/score-exp.sh "$tmp/folders" > "$tmp/score.txt" 2>&1
mkdir -p "$here/folders"
{ echo "# provenance: command: $here/offline.sh $* (results/h100/linger-known-offline/score-exp.sh: all 18 folders, the H200's 3, the H100's s41 3); $stamp"; cat "$tmp/score.txt"; } > "$here/folders/score.txt"
