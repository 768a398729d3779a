#!/usr/bin/env bash
# Repeats the store's faults ROUNDS times and counts the samples lost
# (target: 0 of every sample taken) and stored twice (target: 0):
#   pg-pause  PostgreSQL stopped for STOP seconds in the middle of a run,
#             then started again: the run must store every sample once.
#   pg-gone   PostgreSQL stopped for good in the middle of a run: the run
#             ends with a spool; the server is started and the spool merged.
#   disk-full a SQLite store on a 16 MiB tmpfs filled in the middle of a run
#             (root only): every sample the run says it stored is readable.
# Usage: bench/fault-inject.sh [ROUNDS]      (default 50)
#   STOP=20      seconds the server is down in pg-pause
#   FAULTS="pg-pause pg-gone disk-full"      which faults to inject
#   VMSCALE=target/release/vmscale
set -euo pipefail
cd "$(dirname "$0")/.."

rounds=${1:-50}
stop=${STOP:-20}
faults=${FAULTS:-pg-pause pg-gone disk-full}
vmscale=$(realpath "${VMSCALE:-target/release/vmscale}")
work=$(mktemp -d /tmp/vmscale-faults.XXXXXX)
export VMSCALE_STATE_DIR=$work/state
pg_dir=
mnt=
cleanup() {
  if [ -n "$mnt" ]; then umount -l "$mnt" 2>/dev/null || true; fi
  if [ -n "$pg_dir" ]; then bench/pg-scratch.sh stop "$pg_dir"; fi
  rm -rf "$work"
}
trap cleanup EXIT

eval "$(PG_SCRATCH_PORT=58000 bench/pg-scratch.sh)"
pg_dir=$PG_SCRATCH_DIR
admin=$VMSCALE_TEST_PG
base=${admin%/*}
sql() { psql -qtAX "$1" -c "$2"; }

# Samples are a tenth of a second; a pg-pause run lasts STOP + 6 s.
pause_reps=$(( (stop + 6) * 10 ))
gone_reps=20

declare -A taken stored twice
for f in $faults; do taken[$f]=0; stored[$f]=0; twice[$f]=0; done

# Waits until the store at $1 holds at least $2 samples.
wait_samples() {
  local n=0
  for _ in $(seq 300); do
    n=$(sql "$1" "SELECT COUNT(*) FROM samples" 2>/dev/null || echo 0)
    [ "${n:-0}" -ge "$2" ] && return 0
    sleep 0.1
  done
  echo "no $2 samples in $1" >&2
  return 1
}

count() { # total and distinct (run, case, seq) samples of store $1
  sql "$1" "SELECT COUNT(*) || ' ' || COUNT(DISTINCT (run_id, case_key, seq)) FROM samples"
}

pg_pause() {
  local db=$base/fi_pause_$1
  sql "$admin" "CREATE DATABASE fi_pause_$1"
  VMSCALE_DB=$db "$vmscale" run cmd --warmup 0 --reps "$pause_reps" -- sleep 0.1 \
    >/dev/null 2>"$work/err" &
  local pid=$!
  wait_samples "$db" 3
  bench/pg-scratch.sh down "$pg_dir"
  sleep "$stop"
  bench/pg-scratch.sh up "$pg_dir"
  wait "$pid" || { cat "$work/err" >&2; return 1; }
  read -r all distinct < <(count "$db")
  taken[pg-pause]=$(( ${taken[pg-pause]} + pause_reps ))
  stored[pg-pause]=$(( ${stored[pg-pause]} + distinct ))
  twice[pg-pause]=$(( ${twice[pg-pause]} + all - distinct ))
}

pg_gone() {
  local db=$base/fi_gone_$1
  sql "$admin" "CREATE DATABASE fi_gone_$1"
  VMSCALE_DB=$db "$vmscale" run cmd --warmup 0 --reps "$gone_reps" -- sleep 0.1 \
    >/dev/null 2>"$work/err" &
  local pid=$!
  wait_samples "$db" 2
  bench/pg-scratch.sh down "$pg_dir"
  if wait "$pid"; then echo "pg-gone: the run did not notice" >&2; return 1; fi
  bench/pg-scratch.sh up "$pg_dir"
  local spool
  spool=$(ls "$VMSCALE_STATE_DIR"/spool/*.spool)
  VMSCALE_DB=$db "$vmscale" merge "$spool" >/dev/null
  read -r all distinct < <(count "$db")
  taken[pg-gone]=$(( ${taken[pg-gone]} + gone_reps ))
  stored[pg-gone]=$(( ${stored[pg-gone]} + distinct ))
  twice[pg-gone]=$(( ${twice[pg-gone]} + all - distinct ))
}

disk_full() {
  [ "$(id -u)" = 0 ] || { echo "disk-full needs root" >&2; return 1; }
  mnt=$work/mnt
  mkdir -p "$mnt"
  mount -t tmpfs -o size=16m tmpfs "$mnt"
  local db=$mnt/store.db
  VMSCALE_DB=$db "$vmscale" run cmd --warmup 0 --reps 100000 -- true \
    >/dev/null 2>"$work/err" &
  local pid=$!
  for _ in $(seq 300); do
    [ -f "$db" ] && [ "$(sqlite3 "file:$db?mode=ro" 'SELECT COUNT(*) FROM samples' 2>/dev/null || echo 0)" -ge 5 ] && break
    sleep 0.1
  done
  dd if=/dev/zero of="$mnt/filler" bs=64k 2>/dev/null || true
  if wait "$pid"; then echo "disk-full: the run did not stop" >&2; return 1; fi
  rm -f "$mnt/filler"
  # "its N samples stored so far": what the run says it stored.
  local said readable
  said=$(grep -o 'its [0-9]* samples stored' "$work/err" | grep -o '[0-9]*')
  readable=$(sqlite3 "$db" 'SELECT COUNT(*) FROM samples')
  taken[disk-full]=$(( ${taken[disk-full]} + said ))
  stored[disk-full]=$(( ${stored[disk-full]} + readable ))
  umount "$mnt"
  mnt=
}

command -v sqlite3 >/dev/null || [[ " $faults " != *" disk-full "* ]] || {
  echo "disk-full needs sqlite3 (apt-get install sqlite3)" >&2; exit 2; }

start=$(date +%s)
for r in $(seq "$rounds"); do
  for f in $faults; do
    case $f in
      pg-pause) pg_pause "$r" ;;
      pg-gone) pg_gone "$r" ;;
      disk-full) disk_full "$r" ;;
    esac
  done
  printf 'round %d/%d done (%d s)\n' "$r" "$rounds" $(( $(date +%s) - start )) >&2
done

echo "== $rounds rounds, server down ${stop} s in pg-pause; $(uptime | sed 's/.*load/load/')"
printf '%-10s %8s %8s %6s %12s\n' fault taken stored lost "stored twice"
for f in $faults; do
  printf '%-10s %8d %8d %6d %12d\n' "$f" "${taken[$f]}" "${stored[$f]}" \
    $(( ${taken[$f]} - ${stored[$f]} )) "${twice[$f]}"
done
