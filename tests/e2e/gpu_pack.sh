#!/usr/bin/env bash
# scripts/gpu-lib.sh's gpu_pack: the archive the device tool brings back (at most 8 files of 16 MiB;
# a larger file comes back as nothing). A folder of 20 MiB that does not compress (random bytes) and
# a kept run file: the archive comes in parts of at most 15 MiB that join into the folder again, byte
# for byte, the run file xz-compressed (as results keep run files); without TW_KEEP_RUNS the run file
# stays as it is; a small folder is one results.tar.gz; a second pack into the same $OUT keeps the
# first as results.1.tar.gz; nothing is packed without $OUT.
# usage: gpu_pack.sh   (temp files under $TW_TMPDIR, else $TMPDIR or /tmp)
set -u
here=$(cd "$(dirname "$0")" && pwd)
T=$(mktemp -d "${TW_TMPDIR:-${TMPDIR:-/tmp}}/e2e-gpu_pack.XXXXXX") || exit 2
trap 'rm -rf "$T"' EXIT
for tool in xz split stat; do command -v $tool >/dev/null || { echo "gpu_pack: no $tool: skipped"; exit 77; }; done
fail=0
bad() { echo "FAIL: $*"; fail=1; }
cd "$T" || exit 2
. "$here/../../scripts/gpu-lib.sh"
mkdir -p d/raw out
head -c $((20 * 1024 * 1024)) /dev/urandom >d/raw/big.bin
printf 'SQLite format 3\n%.0s' $(seq 1000) >d/raw/run.sqlite
cp d/raw/run.sqlite run.copy
OUT=$T/out TW_KEEP_RUNS=1 gpu_pack d 2>log.txt
[ ! -e out/results.tar.gz ] || bad "a 20 MiB archive was left whole"
n=$(ls out/results.tar.gz.* 2>/dev/null | wc -l)
[ "$n" = 2 ] || bad "expected 2 parts, got $n: $(ls out)"
for p in out/results.tar.gz.*; do
  [ "$(stat -c %s "$p")" -le $((15 * 1024 * 1024)) ] || bad "$p is over 15 MiB"
done
grep -q "in $n parts" log.txt || bad "no message about the parts: $(cat log.txt)"
mkdir back && cat out/results.tar.gz.* | tar -xz -C back || bad "the parts do not join into an archive"
cmp -s back/d/raw/big.bin d/raw/big.bin || bad "big.bin differs after the round trip"
[ -e back/d/raw/run.sqlite.xz ] && [ ! -e back/d/raw/run.sqlite ] || bad "the kept run file was not xz-compressed"
xz -dc back/d/raw/run.sqlite.xz | cmp -s - run.copy || bad "the run file differs after xz"
# without TW_KEEP_RUNS, a small folder: one archive, the run file as it was
rm -rf d out back && mkdir -p d out && cp run.copy d/run.sqlite
OUT=$T/out gpu_pack d 2>log2.txt
[ -e out/results.tar.gz ] && [ "$(ls out | wc -l)" = 1 ] || bad "a small folder is not one results.tar.gz: $(ls out)"
tar -tzf out/results.tar.gz | grep -qx 'd/run.sqlite' || bad "the run file was changed without TW_KEEP_RUNS"
# a second pack in the same $OUT (two scripts in one device call): the first archive kept, renamed
mkdir -p d2 && echo second >d2/f.txt
OUT=$T/out gpu_pack d2 2>log3.txt
[ -e out/results.1.tar.gz ] && [ -e out/results.tar.gz ] || bad "the earlier archive was not kept: $(ls out)"
tar -tzf out/results.1.tar.gz | grep -qx 'd/run.sqlite' && tar -tzf out/results.tar.gz | grep -qx 'd2/f.txt' ||
  bad "the archives do not hold the first and the second folder"
grep -q "kept as results.1.tar.gz" log3.txt || bad "the renaming was not said: $(cat log3.txt)"
OUT=$T/out gpu_pack d 2>/dev/null && [ -e out/results.2.tar.gz ] || bad "a third pack did not keep the second: $(ls out)"
rm -f out/* && (unset OUT; gpu_pack d) && [ -z "$(ls out)" ] || bad "packed without \$OUT"
[ $fail = 0 ] && echo "gpu_pack: PASS"
exit $fail
