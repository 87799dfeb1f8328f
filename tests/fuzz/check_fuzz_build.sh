#!/usr/bin/env bash
# The normal suite's view of the fuzz build: runs every fuzz target of FUZZ_BUILD_DIR for DDLSIM_FUZZ_SECONDS
# (default 10) when that build exists and is newer than the sources; otherwise skips (77) saying how to make one.
# Usage: check_fuzz_build.sh SOURCE_DIR FUZZ_BUILD_DIR
set -uo pipefail
src=$1 fuzz=$2
targets=("$fuzz"/tests/fuzz/fuzz_*)
if [ ! -x "${targets[0]}" ]; then
  echo "skipped: no fuzz build in $fuzz (bash scripts/fuzz.sh builds it with clang and runs every target)"
  exit 77
fi
newer=$(find "$src/src" "$src/tests/fuzz" -newer "${targets[0]}" -name '*.[ch]pp' | head -1)
if [ -n "$newer" ]; then
  echo "skipped: the fuzz build in $fuzz is older than $newer (bash scripts/fuzz.sh rebuilds it)"
  exit 77
fi
ctest --test-dir "$fuzz" -j2 -V -R '^fuzz: ' >"$fuzz/fuzz-ctest.log" 2>&1
status=$?
grep -Eo 'fuzz_[a-z_]+: [0-9?]+ executions in .*' "$fuzz/fuzz-ctest.log" | sort
exit $status
