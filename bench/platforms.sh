#!/usr/bin/env bash
# Benchmark of platform building: wall time and peak memory to build (in memory) or write and load (XML) generated
# clusters, printed as a table. Not a test: numbers depend on the machine.
# usage: bench/platforms.sh [path/to/ddlsim]   (run from the repository root; default build/ddlsim)
set -euo pipefail
DDLSIM=${1:-build/ddlsim}
WORKLOAD=workloads/resnet50-p40-b32.textproto
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
command -v /usr/bin/time >/dev/null || { echo "needs GNU time (/usr/bin/time)"; exit 1; }

# --dump-config builds or loads the platform and maps every rank, then stops before simulating.
measure() { # label command...
  local label=$1; shift
  /usr/bin/time -f "%e %M" -o "$TMP/t" "$@" >/dev/null
  read -r secs kb <"$TMP/t"
  printf "| %-58s | %8s | %8.0f |\n" "$label" "$secs" "$((kb / 1024))"
}

echo "| platform (built by --dump-config: load or build, map ranks)    |   wall s | peak MiB |"
echo "|------------------------------------------------------------|----------|----------|"
for nodes in 64 256 1024; do
  spec="nodes=$nodes,gpus-per-node=8,gpu=V100-SXM2,intra=nvlink,inter=ib100"
  measure "in memory, star, $nodes x 8 V100 NVLink, EDR" \
    "$DDLSIM" run --workload $WORKLOAD --cluster "$spec" --dump-config
  measure "in memory, fat-tree (32/leaf, 2:1), $nodes x 8 V100 NVLink, EDR" \
    "$DDLSIM" run --workload $WORKLOAD --cluster "$spec,topology=fat-tree,nodes-per-leaf=32,oversubscription=2" --dump-config
done
for nodes in 16 64 128; do
  "$DDLSIM" platform --nodes $nodes --gpus-per-node 8 --gpu V100-SXM2 --intra nvlink --inter ib100 -o "$TMP/p.xml" >/dev/null
  size=$(du -k "$TMP/p.xml" | cut -f1)
  measure "XML ($((size / 1024)) MiB), star, $nodes x 8 V100 NVLink, EDR: load" \
    "$DDLSIM" run --workload $WORKLOAD --platform "$TMP/p.xml" --dump-config
done
