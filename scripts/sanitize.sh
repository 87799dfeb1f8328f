#!/usr/bin/env bash
# The whole test suite (unit, simulation, command line, golden) under AddressSanitizer and UndefinedBehaviorSanitizer
# (docs/safety.md): builds build-asan/ with -DDDLSIM_SANITIZE=ON and runs ctest there. Any sanitizer report fails
# the test it happens in (UBSan does not recover; ASan stops at the first error).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DDDLSIM_SANITIZE=ON
cmake --build build-asan -j"$(nproc)"
# detect_leaks=0: SimGrid 3.32 keeps its engine's objects until exit; halt_on_error: the first report fails the test
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0:halt_on_error=1:abort_on_error=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
ctest --test-dir build-asan --output-on-failure -j"$(nproc)" -E "^fuzz: every" # the fuzz build runs its own
