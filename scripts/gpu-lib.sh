# Shared steps of the GPU result scripts (sourced, not run): the Release
# build, meta.txt (command, date, GPU, driver, clocks), and the end (trace
# gzipped, elapsed time, every file stamped, $OUT/results.tar.gz for the
# device tool). Never changes the card's settings.
log() { echo "== $*" >&2; }

# gpu_build: builds build-gpu/truewatt (no tests); sets $tw and $start.
gpu_build() {
  start=$(date +%s)
  log "build (Release, no tests)"
  # a GPU host with SQLite's runtime library but not its header (no libsqlite3-dev, as on the
  # device tool's machines): the header from $TW_SQLITE_INCLUDE (default .deps/include, a copy of
  # a Debian sqlite3.h carried there), linked to the runtime library
  local extra=() inc=${TW_SQLITE_INCLUDE:-$PWD/.deps/include} lib=/usr/lib/x86_64-linux-gnu/libsqlite3.so.0
  if [ ! -f /usr/include/sqlite3.h ] && [ -f "$inc/sqlite3.h" ] && [ -e "$lib" ]; then
    log "SQLite: header from $inc, library $lib"
    extra=(-DSQLite3_INCLUDE_DIR="$inc" -DSQLite3_LIBRARY="$lib")
  fi
  # the same for libmicrohttpd (the exporter's HTTP server): .deps/include/microhttpd.h and
  # .deps/lib/libmicrohttpd.so.12 (carried) when the host has no libmicrohttpd-dev
  local mhd_inc=$PWD/.deps/include mhd_lib=$PWD/.deps/lib/libmicrohttpd.so.12
  if [ ! -f /usr/include/microhttpd.h ] && [ -f "$mhd_inc/microhttpd.h" ] && [ -e "$mhd_lib" ]; then
    log "libmicrohttpd: header from $mhd_inc, library $mhd_lib"
    extra+=(-DTW_MHD_INCLUDE_DIR="$mhd_inc" -DTW_MHD_LIBRARY="$mhd_lib")
  fi
  cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DTW_BUILD_TESTS=OFF "${extra[@]}" >/dev/null
  cmake --build build-gpu -j"$(nproc)" >/dev/null
  tw=build-gpu/truewatt
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

# run_csvs RUN STEM: the run file's samples and kernels as STEM.trace.csv and STEM.events.csv
# (truewatt export), then the run file removed: the results keep their CSV shape.
run_csvs() {
  local d="$2.export"
  $tw export "$1" --csv "$d" && mv "$d/trace.csv" "$2.trace.csv" && mv "$d/events.csv" "$2.events.csv" &&
    rmdir "$d" && rm -f "$1"
}

# gpu_finish DIR FILE...: gzips the FILEs in DIR (those that exist), records the time, stamps, packs.
gpu_finish() {
  local dir=$1
  shift
  for f in "$@"; do if [ -f "$dir/$f" ]; then gzip -f -6 "$dir/$f"; fi; done
  echo "elapsed: $(( $(date +%s) - start )) s (build included)" >> "$dir/meta.txt"
  scripts/stamp-results "$dir" # every file names its command, date, GPU and driver
  if [ -n "${OUT:-}" ]; then tar -czf "$OUT/results.tar.gz" "$dir"; fi
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
