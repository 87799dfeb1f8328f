#!/usr/bin/env bash
# Runs one libFuzzer target for DDLSIM_FUZZ_SECONDS (default 10) from its seed corpus; prints executions and findings.
# Usage: run_fuzz.sh FUZZ_BINARY SEED_DIR WORK_DIR. New inputs go to WORK_DIR/corpus, a finding to WORK_DIR/.
set -uo pipefail
binary=$1 seeds=$2 work=$3
seconds=${DDLSIM_FUZZ_SECONDS:-10}
name=$(basename "$binary")
mkdir -p "$work/corpus"
rm -f "$work"/crash-* "$work"/leak-* "$work"/timeout-* "$work"/oom-* "$work"/slow-unit-*
# -timeout: one input may take 10 s (a slower one is a finding); -rss_limit_mb: 2 GiB, the CI machine's share
DDLSIM_FUZZ_LOG="$work/log.txt"
"$binary" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
  -artifact_prefix="$work/" "$work/corpus" "$seeds" >"$DDLSIM_FUZZ_LOG" 2>&1
rc=$?
runs=$(grep -Eo 'stat::number_of_executed_units: *[0-9]+' "$DDLSIM_FUZZ_LOG" | grep -Eo '[0-9]+$' | tail -1)
findings=$(find "$work" -maxdepth 1 -name 'crash-*' -o -maxdepth 1 -name 'leak-*' -o -maxdepth 1 -name 'timeout-*' \
             -o -maxdepth 1 -name 'oom-*' | wc -l)
echo "$name: ${runs:-?} executions in ${seconds} s, $findings findings (exit $rc)"
if [ "$rc" -ne 0 ] || [ "$findings" -ne 0 ]; then
  grep -E 'ERROR|SUMMARY|==[0-9]+==|runtime error|deadly signal' "$DDLSIM_FUZZ_LOG" | head -20
  echo "reproduce: $binary $(find "$work" -maxdepth 1 -name 'crash-*' -o -maxdepth 1 -name 'timeout-*' | head -1)"
  exit 1
fi
