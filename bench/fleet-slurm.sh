#!/usr/bin/env bash
# A one-node Slurm cluster on this machine (Debian's slurm-wlm and munge),
# used as a fleet: a 2-element job array (sbatch --array=0-1 --exclusive)
# runs vmscale through bench/slurm/vmscale-array.sbatch, twice:
#   1. every element writes to one PostgreSQL store;
#   2. every element writes its own SQLite file, merged afterwards (twice,
#      to show that merging again adds nothing).
# Then checks that all four runs are in PostgreSQL, complete, labelled
# with their node. Its output is in docs/fleet.md.
#
# Needs root. Slurm's configuration stays in a temporary directory
# (SLURM_CONF); the daemons it starts are stopped at the end.
#   bench/fleet-slurm.sh                  # VMSCALE=target/release/vmscale
#   VMSCALE=target/debug/vmscale bench/fleet-slurm.sh
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD

vmscale=${VMSCALE:-target/release/vmscale}
if [ ! -x "$vmscale" ]; then
  cargo build --release
fi
vmscale=$(realpath "$vmscale")

need=()
command -v slurmctld >/dev/null || need+=(slurm-wlm)
command -v munged >/dev/null || need+=(munge)
if [ ${#need[@]} -gt 0 ]; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq "${need[@]}" >/dev/null
fi

work=$(mktemp -d /tmp/vmscale-slurm.XXXXXX)
chmod 755 "$work"
pids=()
pg_dir=
cleanup() {
  scancel --quiet --full --user=root 2>/dev/null || true
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  if [ -n "$pg_dir" ]; then "$repo/bench/pg-scratch.sh" stop "$pg_dir"; fi
  rm -rf "$work"
}
trap cleanup EXIT

# munge: the key Debian's package made (or a new one), a private socket.
if [ ! -s /etc/munge/munge.key ]; then
  mungekey --create --keyfile=/etc/munge/munge.key
  chown munge: /etc/munge/munge.key
  chmod 400 /etc/munge/munge.key
fi
mkdir -p "$work/munge" /run/munge
chown munge: "$work/munge" /run/munge
runuser -u munge -- munged --socket="$work/munge/munge.socket" \
  --pid-file="$work/munge/munged.pid" --log-file="$work/munge/munged.log" \
  --seed-file="$work/munge/munged.seed"
pids+=("$(cat "$work/munge/munged.pid")")

# slurm.conf: this host with the CPUs and memory slurmd finds.
host=$(hostname)
node_line=$(slurmd -C | head -1)
mkdir -p "$work/spool/ctld" "$work/spool/d" "$work/log"
cat > "$work/slurm.conf" <<CONF
ClusterName=vmscale-fleet
SlurmctldHost=$host
SlurmUser=root
AuthType=auth/munge
AuthInfo=socket=$work/munge/munge.socket
CryptoType=crypto/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
MpiDefault=none
StateSaveLocation=$work/spool/ctld
SlurmdSpoolDir=$work/spool/d
SlurmctldPidFile=$work/slurmctld.pid
SlurmdPidFile=$work/slurmd.pid
SlurmctldLogFile=$work/log/slurmctld.log
SlurmdLogFile=$work/log/slurmd.log
SlurmctldPort=46817
SlurmdPort=46818
$node_line State=UNKNOWN
PartitionName=fleet Nodes=$host Default=YES MaxTime=INFINITE State=UP
CONF
export SLURM_CONF=$work/slurm.conf
slurmctld -f "$SLURM_CONF"
slurmd -f "$SLURM_CONF"
for _ in $(seq 50); do
  [ -s "$work/slurmctld.pid" ] && [ -s "$work/slurmd.pid" ] && break
  sleep 0.2
done
pids+=("$(cat "$work/slurmctld.pid")" "$(cat "$work/slurmd.pid")")
for _ in $(seq 100); do
  state=$(sinfo --noheader --format=%T 2>/dev/null || true)
  [ "$state" = idle ] && break
  sleep 0.3
done
echo "== one-node Slurm: $(sinfo --version), node $host:"
sinfo --format="%P %D %c %m %T %N"

# The PostgreSQL store: VMSCALE_DB if it names one, else a throw-away one.
if [[ "${VMSCALE_DB:-}" != postgres* ]]; then
  eval "$("$repo/bench/pg-scratch.sh")"
  pg_dir=$PG_SCRATCH_DIR
  export VMSCALE_DB=$VMSCALE_TEST_PG
fi
pg=$VMSCALE_DB
echo "== store: ${pg%%@*}@… (PostgreSQL)"

cd "$work"
chmod 1777 "$work"
workload=(run pft --tasks 1,2 --size 16M --reps 3)
template=$repo/bench/slurm/vmscale-array.sbatch

echo "== 1. array of 2, every element writing to PostgreSQL"
job1=$(VMSCALE=$vmscale sbatch --parsable --wait --array=0-1 --exclusive \
  "$template" "${workload[@]}")
echo "job $job1 done"

echo "== 2. array of 2, one SQLite file per element, merged afterwards"
job2=$(env -u VMSCALE_DB VMSCALE=$vmscale VMSCALE_FLEET_DIR="$work/fleet" \
  sbatch --parsable --wait --array=0-1 --exclusive "$template" "${workload[@]}")
echo "job $job2 done; files:"
ls "$work/fleet"
(cd "$work/fleet" && "$vmscale" --db "$pg" merge ./*.db)
echo "-- merged again:"
(cd "$work/fleet" && "$vmscale" --db "$pg" merge ./*.db)

echo "== vmscale list (PostgreSQL)"
"$vmscale" --db "$pg" list

echo "== checks"
fail=0
for job in "$job1" "$job2"; do
  # CSV: id,started_at,workload,status,samples,label,host
  csv=$("$vmscale" --db "$pg" list --label "slurm-$job" --csv | tail -n +2)
  for index in 0 1; do
    label="slurm-$job/$index-$host"
    row=$(awk -F, -v l="$label" '$6 == l' <<<"$csv")
    if [ "$(grep -c . <<<"$row")" = 1 ] && [ "$(cut -d, -f4 <<<"$row")" = complete ] \
      && [ "$(cut -d, -f7 <<<"$row")" = "$host" ]; then
      echo "ok: $label: one run, complete, host $host"
    else
      echo "FAIL: $label: got '$row'"
      fail=1
    fi
  done
done
echo "== the output of one array element (vmscale-${job1}_0.out)"
head -20 "vmscale-${job1}_0.out"
exit $fail
