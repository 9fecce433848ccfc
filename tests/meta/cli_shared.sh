#!/usr/bin/env bash
# The CLI uses only the public header (issue 17), and the linker enforces it:
#   1. the truewatt executable needs libtruewatt.so.MAJOR and holds no copy of
#      the library (none of libtruewatt.a's global symbols is defined in it);
#   2. it runs without LD_LIBRARY_PATH and loads the library of its own build
#      (its RPATH), not another one;
#   3. the guard itself: a program calling an internal library function (a
#      global of libtruewatt.a that the shared library hides) does not link
#      against libtruewatt.so, while one calling a public function (tw_version)
#      does. So a CLI change that needs an internal symbol fails the build.
#
# usage: cli_shared.sh TRUEWATT LIBTRUEWATT_SO LIBTRUEWATT_A TRUEWATT_H CC [LINK_FLAGS...]
# (LINK_FLAGS: the build's sanitizer flags, which the library's objects need)
set -u
export LC_ALL=C
BIN=${1:?usage: cli_shared.sh TRUEWATT LIB_SO LIB_A HEADER CC [FLAGS...]}
SO=${2:?usage}
AR=${3:?usage}
HEADER=${4:?usage}
CC=${5:?usage}
shift 5
for tool in nm readelf ldd; do
    command -v $tool >/dev/null || { echo "SKIP: $tool (binutils/libc-bin) not found"; exit 77; }
done
status=0
fail() { echo "FAIL: $*"; status=1; }
ok() { echo "ok: $*"; }
T=$(mktemp -d "${TW_TMPDIR:-/tmp}/cli_shared.XXXXXX")
trap 'rm -rf "$T"' EXIT

# ---- 1. linked to the shared library, with no copy of the static one
major=$(sed -n 's/^#define TW_VERSION_MAJOR \([0-9]*\)/\1/p' "$HEADER")
want=libtruewatt.so.$major
readelf -d "$BIN" | grep -q "(NEEDED).*\[$want\]" && ok "truewatt needs $want" ||
    fail "truewatt does not need $want (readelf -d: $(readelf -d "$BIN" | grep NEEDED | tr -s ' ' | tr '\n' ' '))"
nm -g --defined-only "$AR" 2>/dev/null | awk 'NF >= 3 { print $3 }' | sort -u >"$T/lib"
nm --defined-only "$BIN" | awk 'NF >= 3 && $2 ~ /^[TDBR]$/ { print $3 }' | sort -u >"$T/bin"
[ -s "$T/lib" ] || fail "nm found no global symbols in $AR"
copied=$(comm -12 "$T/lib" "$T/bin")
[ -z "$copied" ] && ok "truewatt defines none of libtruewatt.a's symbols" ||
    fail "truewatt holds library code (defines $(echo "$copied" | head -5 | tr '\n' ' ')...)"

# ---- 2. runs without LD_LIBRARY_PATH, on the library beside it in the build tree
if out=$(env -u LD_LIBRARY_PATH "$BIN" --version 2>&1); then
    ok "truewatt --version without LD_LIBRARY_PATH: $out"
else
    fail "truewatt --version without LD_LIBRARY_PATH: $out"
fi
loaded=$(env -u LD_LIBRARY_PATH ldd "$BIN" | awk -v w="$want" '$1 == w { print $3 }')
if [ -n "$loaded" ] && [ "$(readlink -f "$loaded")" = "$(readlink -f "$SO")" ]; then
    ok "it loads $loaded"
else
    fail "it loads '$loaded', want $SO"
fi

# ---- 3. the guard: an internal symbol does not link, a public one does
# an internal function: a global text symbol of the archive that the .so does not export
nm -D --defined-only "$SO" | awk 'NF >= 3 { sub(/@.*/, "", $3); print $3 }' | sort -u >"$T/public"
internal=$(nm -g --defined-only "$AR" 2>/dev/null | awk 'NF >= 3 && $2 == "T" { print $3 }' | sort -u |
    comm -23 - "$T/public" | grep -v '^_' | head -1)
[ -n "$internal" ] || fail "no internal function found in $AR (nothing hidden?)"
probe_link() { # NAME FUNCTION: 0 when a program calling FUNCTION links against the .so
    local name=$1 fn=$2
    printf 'extern void %s(void);\nint main(void) { %s(); return 0; }\n' "$fn" "$fn" >"$T/$name.c"
    "$CC" "${LINK_FLAGS[@]}" -o "$T/$name" "$T/$name.c" "$SO" >"$T/$name.log" 2>&1
}
LINK_FLAGS=("$@")
if probe_link public tw_version; then
    ok "a call to tw_version links against libtruewatt.so"
else
    fail "a call to the public tw_version does not link against $SO: $(cat "$T/public.log")"
fi
if [ -n "$internal" ]; then
    if probe_link internal "$internal"; then
        fail "a call to the internal $internal links against $SO: it is exported"
    elif grep -q "undefined reference to .$internal" "$T/internal.log"; then
        ok "a call to the internal $internal is a link error (undefined reference)"
    else
        fail "linking a call to $internal failed otherwise: $(cat "$T/internal.log")"
    fi
fi
exit $status
