#!/bin/sh
# The SMPI prototype of docs/stacks.md ("SMPI or ddlsim's own mechanisms"): MPI_Allreduce under smpirun (SimGrid
# 3.32's SMPI, from Debian's libsimgrid-dev) against `ddlsim collective` on the same generated CPU-only platform.
# Usage: tools/smpi-allreduce/run.sh [DDLSIM] [NODES]   (DDLSIM: default build/ddlsim; NODES: default 4)
# Prints one table per configuration: size, SMPI simulated us, ddlsim simulated us, and both wall times.
# Not part of the build or the test suite.
set -eu
DDLSIM=${1:-build/ddlsim}
NODES=${2:-4}
HERE=$(cd "$(dirname "$0")" && pwd)
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
SIZES="8 1024 8192 65536 1048576 16777216"

smpicc -O2 -o "$WORK/allreduce" "$HERE/allreduce.c"
"$DDLSIM" platform --nodes "$NODES" --gpus-per-node 0 --inter 10gbe -o "$WORK/p.xml" >/dev/null
grep -o 'host id="node[0-9]*-cpu"' "$WORK/p.xml" | sed 's/host id="//;s/"//' >"$WORK/hosts"

now() { date +%s.%N; }

# smpi LABEL CFG...: SMPI's times per size, in $WORK/LABEL.smpi, wall time in $WORK/LABEL.smpi.wall
smpi() {
  label=$1
  shift
  : >"$WORK/$label.smpi"
  t0=$(now)
  for s in $SIZES; do # one run per size: every rank starts at time 0, as in ddlsim
    smpirun -np "$NODES" -platform "$WORK/p.xml" -hostfile "$WORK/hosts" --cfg=smpi/simulate-computation:no \
      --log=root.thres:critical "$@" "$WORK/allreduce" "$s" >>"$WORK/$label.smpi"
  done
  echo "$(now) - $t0" | bc >"$WORK/$label.smpi.wall"
}

# ddlsim LABEL ARGS...: ddlsim's times per size (one run per size, as the sizes are not a geometric range)
ddl() {
  label=$1
  shift
  : >"$WORK/$label.ddl"
  t0=$(now)
  for s in $SIZES; do
    "$DDLSIM" collective --platform "$WORK/p.xml" --ranks "$NODES" --sizes "${s}B:${s}B" -q --csv "$WORK/row.csv" \
      "$@" >/dev/null
    tail -n 1 "$WORK/row.csv" | cut -d, -f2 >>"$WORK/$label.ddl"
  done
  echo "$(now) - $t0" | bc >"$WORK/$label.ddl.wall"
}

table() {
  echo "== $1"
  printf '%10s %14s %14s %9s\n' "size (B)" "SMPI (us)" "ddlsim (us)" "ddl/SMPI"
  paste -d' ' "$WORK/$1.smpi" "$WORK/$1.ddl" | awk '{printf "%10d %14.3f %14.3f %9.4f\n", $1, $2, $3, $3 / $2}'
  printf 'wall: SMPI %.3f s (one smpirun per size), ddlsim %.3f s (one run per size)\n' \
    "$(cat "$WORK/$1.smpi.wall")" "$(cat "$WORK/$1.ddl.wall")"
}

# ddlsim's ideal stack: no size factors, no reverse (ACK) traffic; SMPI's default network/crosstraffic adds a
# reverse flow of 5 % of each message, which costs the large sizes 5 %
ideal="--cfg=smpi/lat-factor:0:1 --cfg=smpi/bw-factor:0:1 --cfg=smpi/async-small-thresh:0 --cfg=network/crosstraffic:0"
# shellcheck disable=SC2086
smpi ring-ideal $ideal --cfg=smpi/allreduce:lr
ddl ring-ideal --algorithm ring --stack ideal
# shellcheck disable=SC2086
smpi rd-ideal $ideal --cfg=smpi/allreduce:rdb
ddl rd-ideal --algorithm rd --stack ideal
smpi ring-factors --cfg=smpi/allreduce:lr
ddl ring-factors --algorithm ring --stack mpi-verbs
smpi mpich --cfg=smpi/coll-selector:mpich
ddl mpich --stack mpi-verbs
smpi default
ddl default --stack mpi-verbs
for t in ring-ideal rd-ideal ring-factors mpich default; do table $t; done
