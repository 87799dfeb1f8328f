#!/usr/bin/env bash
# Configures and builds ddlsim in Release mode into build/ (tests included).
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release
cmake --build build -j"$(nproc)"
