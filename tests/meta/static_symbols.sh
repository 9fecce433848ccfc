#!/usr/bin/env bash
# Every global symbol the static library defines starts with tw_: a program
# linking libtruewatt.a statically shares one namespace with it, so an
# internal helper named json_init or run_prepare would clash with its own.
# (The shared library exports only the API: exported_symbols.sh.)
#
# usage: static_symbols.sh LIBTRUEWATT_A
set -u
export LC_ALL=C
LIB=${1:?usage: static_symbols.sh LIBTRUEWATT_A}
command -v nm >/dev/null || { echo "SKIP: nm (binutils) not found"; exit 77; }
[ -r "$LIB" ] || { echo "FAIL: cannot read $LIB"; exit 1; }

# "ADDR TYPE NAME" for defined globals (weak ones too: V, W); member headers have no address
names=$(nm -g --defined-only "$LIB" 2>/dev/null | awk 'NF >= 3 { print $3 }' | sort -u)
if [ -z "$names" ]; then
    echo "FAIL: nm found no defined global symbols in $LIB"
    exit 1
fi
# compiler-made names (sanitizer and coverage instrumentation) are not ours
bad=$(printf '%s\n' "$names" | grep -v '^tw_' | grep -Ev '^(__odr_asan|__asan|__ubsan|__sancov|___asan|__llvm)')
echo "$LIB: $(printf '%s\n' "$names" | wc -l | tr -d ' ') global symbols"
if [ -n "$bad" ]; then
    echo "FAIL: global symbols without the tw_ prefix:"
    printf '    %s\n' $bad
    exit 1
fi
echo "ok    every global symbol starts with tw_"
