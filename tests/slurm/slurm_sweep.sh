#!/usr/bin/env bash
# A real one-node Slurm on localhost (munged, slurmctld, slurmd, started and stopped here): `ddlsim sweep --slurm
# --submit` runs a 4-task array of 12 points, `--collect` merges it, and the rows equal those of a local sweep.
# Exits 77 (skipped) with the reason where Slurm cannot start: not root, packages missing
# (bash scripts/install-slurm-test.sh), or a daemon that does not come up.
# usage: slurm_sweep.sh DDLSIM BUILD_DIR   (from the source directory)
set -u
ddlsim=$(readlink -f "$1") build=$2
skip() { echo "skipped: $*"; exit 77; }
fail() { echo "FAILED: $*"; exit 1; }

[ "$(id -u)" -eq 0 ] || skip "the Slurm test starts munged, slurmctld and slurmd as root (run as root)"
for b in munged slurmctld slurmd sbatch squeue scontrol; do
  command -v "$b" >/dev/null || [ -x "/usr/sbin/$b" ] ||
    skip "$b is not installed (bash scripts/install-slurm-test.sh installs slurm-wlm and munge)"
done
export PATH=$PATH:/usr/sbin

tmp=$(mktemp -d /tmp/ddlsim-slurm-XXXXXX)
chmod 755 "$tmp"
pids=()
stop() {
  [ -n "${SLURM_CONF:-}" ] && [ -f "$SLURM_CONF" ] && scancel --quiet --name=ddlsim-sweep 2>/dev/null
  for f in "$tmp"/slurmd.pid "$tmp"/slurmctld.pid "$tmp"/munged.pid; do
    [ -f "$f" ] && kill "$(cat "$f")" 2>/dev/null
  done
  sleep 1
  for f in "$tmp"/slurmd.pid "$tmp"/slurmctld.pid "$tmp"/munged.pid; do
    [ -f "$f" ] && kill -9 "$(cat "$f")" 2>/dev/null
  done
  rm -rf "$tmp"
}
trap stop EXIT

# Ports of our own (other Slurms, or other runs of this test, may be on the machine).
base=$((20000 + $$ % 20000))
node=ddlsimnode
mkdir -p "$tmp/state" "$tmp/spool" "$tmp/munge"
chmod 700 "$tmp/munge"
dd if=/dev/urandom of="$tmp/munge/munge.key" bs=1024 count=1 status=none
chmod 400 "$tmp/munge/munge.key"
munged --force --socket="$tmp/munge/munge.sock" --key-file="$tmp/munge/munge.key" --pid-file="$tmp/munged.pid" \
  --log-file="$tmp/munged.log" --seed-file="$tmp/munge/seed" >"$tmp/munged.out" 2>&1 ||
  skip "munged does not start: $(tail -n 1 "$tmp/munged.out")"

cat >"$tmp/slurm.conf" <<EOF
ClusterName=ddlsimtest
SlurmctldHost=$(hostname -s)(127.0.0.1)
SlurmctldPort=$base
SlurmdPort=$((base + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$tmp/munge/munge.sock
StateSaveLocation=$tmp/state
SlurmdSpoolDir=$tmp/spool/%n
SlurmctldPidFile=$tmp/slurmctld.pid
SlurmdPidFile=$tmp/slurmd.pid
SlurmctldLogFile=$tmp/slurmctld.log
SlurmdLogFile=$tmp/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SwitchType=switch/none
MpiDefault=none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
MailProg=/bin/true
NodeName=$node NodeHostname=$(hostname -s) NodeAddr=127.0.0.1 CPUs=$(nproc) RealMemory=100 State=UNKNOWN
PartitionName=ddlsim Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF
export SLURM_CONF=$tmp/slurm.conf
slurmctld -i >"$tmp/slurmctld.out" 2>&1 || skip "slurmctld does not start: $(tail -n 1 "$tmp/slurmctld.out")"
slurmd -N "$node" >"$tmp/slurmd.out" 2>&1 || skip "slurmd does not start: $(tail -n 1 "$tmp/slurmd.out")"
up=""
for _ in $(seq 1 30); do
  if sinfo -h -N -o '%t' 2>/dev/null | grep -Eq '^(idle|mix|alloc)'; then up=1; break; fi
  sleep 1
done
[ -n "$up" ] || skip "the Slurm node does not come up in 30 s ($(tail -n 1 "$tmp/slurmd.log" 2>/dev/null))"
echo "slurm: one node up ($(sinfo -h -o '%P %D %t'))"

grid=(--cluster 'nodes=1|2|4,gpus-per-node=2,gpu=P40,intra=pcie,inter=10gbe' --schedule wfbp,sequential
      --model alexnet --batch 16,32 --iterations 2)
out=$tmp/out
"$ddlsim" sweep "${grid[@]}" --slurm "$out" --chunk 3 --submit >"$tmp/submit.out" 2>&1 ||
  fail "sweep --slurm --submit: $(tail -n 1 "$tmp/submit.out")"
cat "$tmp/submit.out"
grep -q "12 points in 4 array tasks" "$tmp/submit.out" || fail "expected 12 points in 4 array tasks"
job=$(sed -n 's/^submitted job //p' "$tmp/submit.out")
[ -n "$job" ] || fail "no job id printed"
for _ in $(seq 1 180); do
  [ -z "$(squeue -h -j "$job" 2>/dev/null)" ] && break
  sleep 1
done
[ -z "$(squeue -h -j "$job" 2>/dev/null)" ] || fail "job $job still queued after 180 s"
echo "slurm: job $job finished"
"$ddlsim" sweep --collect "$out" --csv "$tmp/merged.csv" || fail "--collect: see $out/task-*.log"
"$ddlsim" sweep "${grid[@]}" --csv "$tmp/local.csv" -q || fail "the local sweep failed"
rows=$(($(wc -l <"$tmp/merged.csv") - 1))
[ "$rows" -eq 12 ] || fail "merged $rows rows, expected 12"
head -n 1 "$tmp/merged.csv" | cmp -s - <(head -n 1 "$tmp/local.csv") || fail "merged header differs"
cmp -s <(tail -n +2 "$tmp/merged.csv" | sort) <(tail -n +2 "$tmp/local.csv" | sort) ||
  fail "the 12 merged rows differ from the local sweep's"
echo "slurm: 4 array tasks merged into 12 rows, equal to the local sweep"
