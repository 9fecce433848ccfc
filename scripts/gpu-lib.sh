# Shared steps of the GPU result scripts (sourced, not run): the Release
# build, meta.txt (command, date, GPU, driver, clocks), and the end (trace
# gzipped, elapsed time, every file stamped, $OUT/results.tar.gz for the
# device tool, in parts of 15 MiB when larger: gpu_pack). Never changes the card's settings.
log() { echo "== $*" >&2; }

# meta_gpu DIR: "gpu: NAME; driver: VERSION" from DIR/meta.txt's "gpu: NAME, DRIVER, BUS" line (gpu_meta's),
# as result files name them (scripts/stamp-results, scripts/offline-attrib's tables)
meta_gpu() {
  local g rest
  g=$(sed -n 's/^gpu: //p' "$1/meta.txt" 2>/dev/null | head -1)
  rest=${g#*, }
  echo "gpu: ${g%%,*}; driver: ${rest%%,*}"
}

# gpu_build: builds build-gpu/truewatt (no tests); sets $tw and $start.
gpu_build() {
  start=$(date +%s)
  log "build (Release, no tests)"
  # a GPU host with SQLite's runtime library but not its header (no libsqlite3-dev, as on the
  # device tool's machines): the header from $TW_SQLITE_INCLUDE (default .deps/include, a copy of
  # a Debian sqlite3.h carried there), linked to the runtime library
  local extra=()
  gpu_sqlite_defines
  gpu_mhd_defines
  cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DTW_BUILD_TESTS=OFF "${extra[@]}" >/dev/null
  cmake --build build-gpu -j"$(nproc)" >/dev/null
  tw=build-gpu/truewatt
}

# gpu_sqlite_defines: sets extra=(-DSQLite3_INCLUDE_DIR=... -DSQLite3_LIBRARY=...) on a host without
# SQLite's header (gpu_build's CMake; scripts/gpu-api passes them to pip's), else extra=().
gpu_sqlite_defines() {
  local inc=${TW_SQLITE_INCLUDE:-$PWD/.deps/include} lib=/usr/lib/x86_64-linux-gnu/libsqlite3.so.0
  extra=()
  if [ ! -f /usr/include/sqlite3.h ] && [ -f "$inc/sqlite3.h" ] && [ -e "$lib" ]; then
    log "SQLite: header from $inc, library $lib"
    extra=(-DSQLite3_INCLUDE_DIR="$inc" -DSQLite3_LIBRARY="$lib")
  fi
}

# gpu_mhd_defines: adds -DTW_MHD_INCLUDE_DIR=... -DTW_MHD_LIBRARY=... to extra on a host without
# libmicrohttpd's header (the exporter's HTTP server): .deps/include/microhttpd.h and
# .deps/lib/libmicrohttpd.so.12, carried there. Without either, the exporter says it is unavailable.
gpu_mhd_defines() {
  local inc=$PWD/.deps/include lib=$PWD/.deps/lib/libmicrohttpd.so.12
  if [ ! -f /usr/include/microhttpd.h ] && [ -f "$inc/microhttpd.h" ] && [ -e "$lib" ]; then
    log "libmicrohttpd: header from $inc, library $lib"
    extra+=(-DTW_MHD_INCLUDE_DIR="$inc" -DTW_MHD_LIBRARY="$lib")
  fi
}

# gpu_torch_cupti [PYTHON]: the libcupti bundled with PyTorch (nvidia/cu13), "" when none. NVTX ranges
# and kernels reach CUPTI only through the libcupti the program itself uses: for PyTorch, its own copy.
gpu_torch_cupti() {
  "${1:-python3}" -c 'import glob, os, nvidia; print(next(iter(glob.glob(os.path.join(list(nvidia.__path__)[0], "cu13", "lib", "libcupti.so.13"))), ""))' 2>/dev/null || true
}

# gpu_meta DIR TITLE COMMAND: writes DIR/meta.txt and shows it.
gpu_meta() {
  {
    echo "# $2"
    echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "command: $3"
    echo "gpu: $(nvidia-smi --query-gpu=name,driver_version,pci.bus_id --format=csv,noheader)"
    echo "clocks at start: $(nvidia-smi --query-gpu=clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv,noheader)"
    echo "truewatt: $($tw --version)"
  } > "$1/meta.txt"
  cat "$1/meta.txt" >&2
}

# run_csvs RUN STEM: the run file's samples and kernels as STEM.trace.csv and STEM.events.csv, and
# its activity counters (when recorded) as STEM.pm_samples.csv (truewatt export), then the run file
# removed (kept with TW_KEEP_RUNS=1, to recompute the report offline with another estimator:
# scripts/offline-reports): the results keep their CSV shape.
run_csvs() {
  local d="$2.export"
  $tw export "$1" --csv "$d" && mv "$d/trace.csv" "$2.trace.csv" && mv "$d/events.csv" "$2.events.csv" &&
    { [ ! -e "$d/pm_samples.csv" ] || mv "$d/pm_samples.csv" "$2.pm_samples.csv"; } &&
    rmdir "$d" && { [ "${TW_KEEP_RUNS:-0}" = 1 ] || rm -f "$1"; }
}

# gpu_finish DIR FILE...: gzips the FILEs in DIR (those that exist), records the time, stamps, packs.
gpu_finish() {
  local dir=$1
  shift
  for f in "$@"; do if [ -f "$dir/$f" ]; then gzip -f -6 "$dir/$f"; fi; done
  echo "elapsed: $(( $(date +%s) - start )) s (build included)" >> "$dir/meta.txt"
  scripts/stamp-results "$dir" # every file names its command, date, GPU and driver
  gpu_pack "$dir"
}

# gpu_pack TAR-ARGS...: with $OUT set (the device tool), `tar -czf $OUT/results.tar.gz TAR-ARGS...`.
# The tool returns at most 8 files of 16 MiB and drops a larger one: an archive over 15 MiB is split
# into results.tar.gz.00, .01, ... (join: cat results.tar.gz.* | tar -xz), with a warning past 8
# parts. Run files kept with TW_KEEP_RUNS=1 are xz-compressed first (*.sqlite.xz, as results keep
# them): a PyTorch study's kept runs made a 20 MB archive that came back as nothing. The device tool
# gives each call an empty $OUT, so an archive already there is an earlier script's of the same call:
# it is kept as results.1.tar.gz (the next free number; its parts alike), not overwritten (two
# scripts in one call once came back as the second's alone).
gpu_pack() {
  [ -n "${OUT:-}" ] && [ -d "$OUT" ] || return 0
  local part=$((15 * 1024 * 1024)) a p prev= n=1 f
  if compgen -G "$OUT/results.tar.gz*" >/dev/null; then
    while compgen -G "$OUT/results.$n.tar.gz*" >/dev/null; do n=$((n + 1)); done
    for f in "$OUT"/results.tar.gz*; do mv "$f" "$OUT/results.$n.tar.gz${f#"$OUT"/results.tar.gz}"; done
    log "the archive already in \$OUT (an earlier script's) kept as results.$n.tar.gz*"
  fi
  if [ "${TW_KEEP_RUNS:-0}" = 1 ]; then
    for a in "$@"; do # the folders packed (not -C's)
      if [ "$prev" != -C ] && [ -d "$a" ]; then find "$a" -name '*.sqlite' -type f -exec xz -f -T0 -6 {} \;; fi
      prev=$a
    done
  fi
  tar -czf "$OUT/results.tar.gz" "$@" || return
  if [ "$(stat -c %s "$OUT/results.tar.gz")" -gt "$part" ]; then
    split -b "$part" -d "$OUT/results.tar.gz" "$OUT/results.tar.gz." && rm "$OUT/results.tar.gz"
    p=$(ls "$OUT"/results.tar.gz.* | wc -l)
    log "results.tar.gz in $p parts of 15 MiB (cat results.tar.gz.* | tar -xz)"
    [ "$p" -le 8 ] || log "warning: $p parts: the device tool returns 8 files; keep fewer run files"
  fi
}

# gpu_short: h100, h200 or the GPU's name in lower case (results/<gpu>/).
gpu_short() {
  local name
  name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
  case "$name" in
    *H100*) echo h100 ;;
    *H200*) echo h200 ;;
    *) echo "$name" | tr '[:upper:]' '[:lower:]' | tr -c 'a-z0-9\n' '-' ;;
  esac
}
