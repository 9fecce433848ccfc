#!/usr/bin/env bash
# The written style (.clang-format) holds for every C source and header.
set -u
cd "$1" || exit 1
command -v clang-format >/dev/null 2>&1 || { echo "clang-format not installed: skipped"; exit 77; }
files=$(git ls-files '*.c' '*.h' 2>/dev/null || find include src tests bench -name '*.[ch]')
if clang-format --dry-run --Werror $files; then echo "format: $(echo $files | wc -w) files follow .clang-format"; exit 0; fi
echo "format: run clang-format -i on the files above"; exit 1
