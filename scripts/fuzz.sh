#!/usr/bin/env bash
# Fuzzes every parser ddlsim writes with libFuzzer (docs/safety.md): installs clang if missing, builds build-fuzz/
# (clang++, -DDDLSIM_FUZZ=ON: ASan + UBSan + libFuzzer, no test suite), runs each target SECONDS (default 10) from
# its seed corpus in tests/fuzz/corpus/, and prints executions and findings per target.
#   bash scripts/fuzz.sh          # the short run (every target 10 s, two at a time)
#   bash scripts/fuzz.sh 3600     # the long run: an hour per target
# A finding fails the run and leaves its input in build-fuzz/tests/fuzz/work/TARGET/ (crash-*, timeout-*, oom-*).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-10}
bash scripts/install-deps.sh clang
cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++ -DDDLSIM_FUZZ=ON \
  -DDDLSIM_BUILD_TESTS=OFF
cmake --build build-fuzz -j"$(nproc)"
set +e
DDLSIM_FUZZ_SECONDS=$seconds ctest --test-dir build-fuzz -j"$(nproc)" --output-on-failure -V -R '^fuzz: ' \
  >build-fuzz/fuzz-ctest.log 2>&1
status=$?
set -e
grep -Eo 'fuzz_[a-z_]+: [0-9?]+ executions in .*' build-fuzz/fuzz-ctest.log | sort
grep -E 'tests passed|tests failed|Failed|\*\*\*' build-fuzz/fuzz-ctest.log || true
exit $status
