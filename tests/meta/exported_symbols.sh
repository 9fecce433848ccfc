#!/usr/bin/env bash
# The shared library's ABI surface is exactly the public header:
#   1. every dynamic symbol the library defines starts with tw_ (linker-made
#      symbols such as _init, _fini, _edata, _end, __bss_start are ignored);
#   2. every function declared TW_API in include/truewatt.h is exported;
#   3. every exported tw_ symbol is declared TW_API in the header (an internal
#      tw_ helper that leaks out of the library would become API by accident).
#
# usage: exported_symbols.sh LIBTRUEWATT_SO TRUEWATT_H
set -u
export LC_ALL=C

LIB=${1:?usage: exported_symbols.sh LIB HEADER}
HEADER=${2:?usage: exported_symbols.sh LIB HEADER}
command -v nm >/dev/null || { echo "SKIP: nm (binutils) not found"; exit 77; }
[ -r "$LIB" ] || { echo "FAIL: cannot read $LIB"; exit 1; }
[ -r "$HEADER" ] || { echo "FAIL: cannot read $HEADER"; exit 1; }

# "ADDR TYPE NAME", possibly NAME@VERSION; keep the names
exported=$(nm -D --defined-only "$LIB" | awk 'NF >= 3 { sub(/@.*/, "", $3); print $3 }' | sort -u)
if [ -z "$exported" ]; then
    echo "FAIL: nm found no defined dynamic symbols in $LIB"
    exit 1
fi

# TW_API declarations: the name is the identifier just before the first '('
declared=$(grep -E '^[[:space:]]*TW_API[[:space:]]' "$HEADER" |
    sed -E 's/\(.*//; s/.*[^A-Za-z0-9_]([A-Za-z_][A-Za-z0-9_]*)[[:space:]]*$/\1/' | sort -u)
if [ -z "$declared" ]; then
    echo "FAIL: no TW_API declarations found in $HEADER"
    exit 1
fi

linker='^(_init|_fini|_edata|_end|__bss_start|__bss_start__|__bss_end__|_bss_end__|__end__|__data_start|data_start|_GLOBAL_OFFSET_TABLE_|_DYNAMIC|_IO_stdin_used)$'
status=0
n_exp=$(printf '%s\n' "$exported" | grep -Evc "$linker")
n_decl=$(printf '%s\n' "$declared" | wc -l | tr -d ' ')
echo "$LIB: $n_exp exported symbols; $HEADER: $n_decl TW_API functions"

bad_prefix=$(printf '%s\n' "$exported" | grep -Ev "$linker" | grep -v '^tw_')
if [ -n "$bad_prefix" ]; then
    echo "FAIL: exported symbols without the tw_ prefix:"
    printf '    %s\n' $bad_prefix
    status=1
else
    echo "ok    every exported symbol starts with tw_"
fi

missing=$(comm -23 <(printf '%s\n' "$declared") <(printf '%s\n' "$exported"))
if [ -n "$missing" ]; then
    echo "FAIL: declared TW_API in the header but not exported:"
    printf '    %s\n' $missing
    status=1
else
    echo "ok    every TW_API function is exported"
fi

extra=$(comm -13 <(printf '%s\n' "$declared") <(printf '%s\n' "$exported" | grep '^tw_'))
if [ -n "$extra" ]; then
    echo "FAIL: exported but not declared TW_API in the header (internal symbols leaking):"
    printf '    %s\n' $extra
    status=1
else
    echo "ok    every exported tw_ symbol is declared in the header"
fi
exit $status
