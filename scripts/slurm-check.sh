#!/bin/bash
# Runs the documented Slurm job array for real, on a single-node cluster started on this machine:
# installs slurm-wlm and munge from Debian, starts munged, slurmctld and slurmd as root (as on a
# workstation), submits scripts/slurm/sweep-array.sbatch over --shard i/4 for a shipped experiment,
# merges the shards in a dependent job, and checks results.csv against the sha256 in the committed
# manifest. Needs root and apt; takes about a minute plus the install. A pre-release check, not in
# CI (root, daemons, package install). Usage: bash scripts/slurm-check.sh [experiment] [shards]
set -euo pipefail
EXPERIMENT="${1:-row-sampling}"
SHARDS="${2:-4}"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
CONFIG="packages/experiments/configs/${EXPERIMENT}.yaml"
[ -f "$CONFIG" ] || { echo "no shipped config $CONFIG" >&2; exit 2; }
[ -f packages/experiments/dist/cli.js ] || npx -y pnpm@12.4.2 run build
WORK="$(mktemp -d /tmp/randattn-slurm.XXXXXX)"
OUT="$WORK/results"
t0=$(date +%s)

if ! command -v slurmctld >/dev/null || ! command -v munged >/dev/null; then
  echo "== installing slurm-wlm and munge from Debian"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq slurm-wlm munge >/dev/null
fi
echo "== $(slurmctld -V), munge $(munged --version 2>&1 | awk '{print $2; exit}')"

HOST="$(hostname -s)"
CPUS="$(nproc)"
MEM_MB=$(( $(awk '/MemTotal/ {print $2}' /proc/meminfo) / 1024 - 512 ))
mkdir -p /etc/munge /var/lib/munge /var/log/munge /run/munge /var/spool/slurmctld /var/spool/slurmd /var/log/slurm /etc/slurm
[ -s /etc/munge/munge.key ] || dd if=/dev/urandom of=/etc/munge/munge.key bs=1024 count=1 status=none
chmod 0400 /etc/munge/munge.key
cat > /etc/slurm/slurm.conf <<CONF
ClusterName=randattn-check
SlurmctldHost=${HOST}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
StateSaveLocation=/var/spool/slurmctld
SlurmdSpoolDir=/var/spool/slurmd
SlurmctldPidFile=/run/slurmctld.pid
SlurmdPidFile=/run/slurmd.pid
SlurmctldLogFile=/var/log/slurm/slurmctld.log
SlurmdLogFile=/var/log/slurm/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
MpiDefault=none
SchedulerType=sched/backfill
NodeName=${HOST} CPUs=${CPUS} RealMemory=${MEM_MB} State=UNKNOWN
PartitionName=check Nodes=${HOST} Default=YES MaxTime=INFINITE State=UP
CONF
# No cgroup.conf: with proctrack/linuxproc and task/none slurmd needs no cgroups (22.05 has no
# "CgroupPlugin=disabled"; a leftover file from another setup would make slurmd fail).
rm -f /etc/slurm/cgroup.conf

cleanup() {
  scancel --user=root >/dev/null 2>&1 || true
  for pidfile in /run/slurmd.pid /run/slurmctld.pid; do
    [ -s "$pidfile" ] && kill "$(cat "$pidfile")" 2>/dev/null || true
  done
  [ -n "${MUNGE_PID:-}" ] && kill "$MUNGE_PID" 2>/dev/null || true
  sleep 1
}
trap cleanup EXIT

echo "== starting munged, slurmctld, slurmd (single node ${HOST}, ${CPUS} CPUs)"
munged --force --pid-file=/run/munge/randattn-munged.pid
MUNGE_PID="$(cat /run/munge/randattn-munged.pid)"
slurmctld -i
slurmd
for _ in $(seq 1 30); do
  sinfo -h -o "%T" 2>/dev/null | grep -qE "idle|mixed" && break
  scontrol update nodename="$HOST" state=resume >/dev/null 2>&1 || true
  sleep 1
done
sinfo

echo "== submitting the job array: ${SHARDS} shards of ${EXPERIMENT}"
ARRAY_ID=$(sbatch --parsable --array=0-$((SHARDS - 1)) --chdir="$ROOT" --output="$WORK/slurm-%A_%a.out" \
  --export=ALL,CONFIG="$CONFIG",OUT="$OUT" scripts/slurm/sweep-array.sbatch)
MERGE_ID=$(sbatch --parsable --dependency=afterok:"$ARRAY_ID" --chdir="$ROOT" --output="$WORK/slurm-merge-%j.out" --wait \
  --export=ALL,CONFIG="$CONFIG",OUT="$OUT" --wrap 'node packages/experiments/dist/cli.js merge "$CONFIG" --out "$OUT" --no-report') || true
sacct_state() { scontrol show job "$1" 2>/dev/null | grep -o "JobState=[A-Z]*" | sort | uniq -c | tr '\n' ' '; }
echo "array job ${ARRAY_ID}: $(sacct_state "$ARRAY_ID")"
echo "merge job ${MERGE_ID}: $(sacct_state "$MERGE_ID")"
for f in "$WORK"/slurm-*.out; do echo "--- $(basename "$f")"; tail -n 3 "$f"; done

ACTUAL=$(sha256sum "$OUT/$EXPERIMENT/results.csv" | cut -d' ' -f1)
EXPECTED=$(node -e 'console.log(JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")).results_sha256)' "results/$EXPERIMENT/manifest.json")
echo "== results.csv sha256 ${ACTUAL}"
echo "   committed     sha256 ${EXPECTED}"
echo "   elapsed $(( $(date +%s) - t0 )) s"
if [ "$ACTUAL" = "$EXPECTED" ]; then echo "OK: the Slurm array + merge reproduced results/${EXPERIMENT}/results.csv byte for byte"; rm -rf "$WORK"; else echo "MISMATCH (outputs kept in $WORK)"; exit 1; fi
