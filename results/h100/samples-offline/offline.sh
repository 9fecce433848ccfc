#!/usr/bin/env bash
# offline.sh BASE_BUILD [BUILD]: BUILD (default build, this tree's) against BASE_BUILD on the kept run
# files, no GPU: the same comparisons as results/h100/copies-offline (the PyTorch step's repeat on six
# pairs, the real programs' check on three realapps folders' text runs, the patterns on the 18 kept
# folders), written here by that folder's script.
set -u
cd "$(git rev-parse --show-toplevel)"
exec results/h100/copies-offline/offline.sh "$1" "${2:-build}" results/h100/samples-offline
