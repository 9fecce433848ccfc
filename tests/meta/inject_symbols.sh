#!/usr/bin/env bash
# The CUPTI injection library (libtruewatt-inject.so) is loaded into programs
# we do not control, so:
#   1. it exports exactly two symbols, InitializeInjection (the entry point the
#      CUDA driver looks up) and InitializeInjectionNvtx2 (NVTX's); everything
#      else is hidden;
#   2. it needs neither libcupti nor libcuda at load time (libcupti is
#      dlopened, libcuda never touched), nor libstdc++;
#   3. it carries no sanitizer runtime (it must load into uninstrumented
#      programs even from a TW_SANITIZE build).
# Skipped (77) when the library was not built (no cupti.h at configure time).
#
# usage: inject_symbols.sh LIBTRUEWATT_INJECT_SO
set -u
export LC_ALL=C
LIB=${1:-}
if [ -z "$LIB" ] || [ ! -e "$LIB" ]; then
    echo "SKIP: libtruewatt-inject.so was not built (cupti.h not found at configure time)"
    exit 77
fi
command -v nm >/dev/null || { echo "SKIP: nm (binutils) not found"; exit 77; }
command -v readelf >/dev/null || { echo "SKIP: readelf (binutils) not found"; exit 77; }
status=0

linker='^(_init|_fini|_edata|_end|__bss_start|__bss_start__|__bss_end__|_bss_end__|__end__|__data_start|data_start|_GLOBAL_OFFSET_TABLE_|_DYNAMIC|_IO_stdin_used)$'
exported=$(nm -D --defined-only "$LIB" | awk 'NF >= 3 { sub(/@.*/, "", $3); print $3 }' | grep -Ev "$linker" | sort -u)
if [ "$exported" = "$(printf 'InitializeInjection\nInitializeInjectionNvtx2')" ]; then
    echo "ok    exports InitializeInjection, InitializeInjectionNvtx2 and nothing else"
else
    echo "FAIL: exported symbols should be exactly InitializeInjection and InitializeInjectionNvtx2, found:"
    printf '    %s\n' $exported
    status=1
fi
if nm -D --defined-only "$LIB" | grep -Eq ' T InitializeInjection$'; then
    echo "ok    InitializeInjection is a function"
else
    echo "FAIL: InitializeInjection is not an exported function"
    status=1
fi

needed=$(readelf -d "$LIB" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
echo "NEEDED: $(echo $needed)"
bad=$(printf '%s\n' $needed | grep -E '^lib(cupti|cuda|cudart|nvidia-ml|asan|ubsan|tsan|lsan|stdc\+\+)' || true)
if [ -n "$bad" ]; then
    echo "FAIL: must not need at load time:"
    printf '    %s\n' $bad
    status=1
else
    echo "ok    needs no libcupti, libcuda, libstdc++ or sanitizer runtime"
fi
if command -v ldd >/dev/null; then
    if ldd "$LIB" 2>/dev/null | grep -Eq 'lib(cupti|cuda|asan|ubsan)'; then
        echo "FAIL: ldd shows libcupti, libcuda or a sanitizer runtime:"
        ldd "$LIB" | sed 's/^/    /'
        status=1
    else
        echo "ok    ldd: no libcupti, libcuda or sanitizer runtime"
    fi
fi
# undefined symbols must come from the C library (and libdl/libpthread)
undef=$(nm -D --undefined-only "$LIB" | awk '{ print $NF }' | sed 's/@.*//' | grep -E '^(cupti|cu[A-Z]|__asan|__ubsan)' || true)
if [ -n "$undef" ]; then
    echo "FAIL: undefined symbols that only CUPTI, CUDA or a sanitizer would provide:"
    printf '    %s\n' $undef
    status=1
else
    echo "ok    no undefined CUPTI, CUDA or sanitizer symbols"
fi
exit $status
