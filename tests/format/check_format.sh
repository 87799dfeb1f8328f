#!/usr/bin/env bash
# Checks the C++ files of src/ and tests/ against the repository's style, listing every offending file.
# usage: check_format.sh clang-format SOURCE_DIR [CLANG_FORMAT]   (exit 77, skipped, without clang-format)
#        check_format.sh columns SOURCE_DIR                       (no line longer than 120 columns)
set -u
mode=$1 root=$2 clang_format=${3:-clang-format}
cd "$root" || exit 2
mapfile -t files < <(find src tests -type f \( -name '*.cpp' -o -name '*.hpp' \) | LC_ALL=C sort)
[ ${#files[@]} -gt 0 ] || { echo "no C++ files under $root/src and $root/tests"; exit 2; }
bad=()
case $mode in
  clang-format)
    command -v "$clang_format" >/dev/null || { echo "skipped: $clang_format not found"; exit 77; }
    for f in "${files[@]}"; do
      "$clang_format" --style=file --dry-run --Werror "$f" >/dev/null 2>&1 || bad+=("$f")
    done
    what="do not follow .clang-format ($("$clang_format" --version)); fix with: clang-format -i FILE" ;;
  columns)
    for f in "${files[@]}"; do
      LC_ALL=C.UTF-8 grep -qE '^.{121}' "$f" && bad+=("$f") # characters, not bytes
    done
    what="have lines longer than 120 columns" ;;
  *) echo "unknown mode '$mode'"; exit 2 ;;
esac
if [ ${#bad[@]} -gt 0 ]; then
  echo "${#bad[@]} of ${#files[@]} C++ files $what:"
  printf '  %s\n' "${bad[@]}"
  exit 1
fi
echo "all ${#files[@]} C++ files of src/ and tests/ pass ($mode)"
