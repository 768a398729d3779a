#!/usr/bin/env bash
# Runs vmscale's pft and the minimal C reference interleaved, for 1 and 2
# tasks, and prints the median fault/wsec of each and their ratio, plus
# vmscale's user/system ratio with --cline 1.
#
# usage: bench/pft_vs_ref.sh [ROUNDS] [SIZE_PER_TASK]   (defaults 7, 512M)
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-7}
size=${2:-512M}
bytes=$(python3 -c "import sys; s=sys.argv[1]; m={'K':1<<10,'M':1<<20,'G':1<<30}; print(int(float(s[:-1])*m[s[-1].upper()]) if s[-1].upper() in m else int(s))" "$size")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cc -O2 -pthread -o "$work/pft_ref" bench/pft_ref.c
cargo build --release --quiet
export VMSCALE_DB="$work/bench.db"

median() { sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }

for tasks in 1 2; do
  : > "$work/ref.$tasks"; : > "$work/vm.$tasks"; : > "$work/us.$tasks"; : > "$work/refus.$tasks"
  for _ in $(seq "$rounds"); do
    "$work/pft_ref" "$tasks" "$bytes" > "$work/ref.out"
    awk '{print $1}' "$work/ref.out" >> "$work/ref.$tasks"
    awk '{print ($3 > 0) ? $2 / $3 : 0}' "$work/ref.out" >> "$work/refus.$tasks"
    ./target/release/vmscale run pft --tasks "$tasks" --size-per-task "$size" --reps 1 --warmup 0 \
        --pin none --json > "$work/run.json"
    python3 - "$work/run.json" >> "$work/vm.$tasks" 2>> "$work/us.$tasks" <<'PY'
import json, sys
f = json.load(open(sys.argv[1]))["cases"][0]["samples"][0]["data"]["figures"]
print(f["fault/wsec"])
print(f["user"] / f["system"] if f["system"] > 0 else 0, file=sys.stderr)
PY
  done
  ref=$(median < "$work/ref.$tasks"); vm=$(median < "$work/vm.$tasks")
  us=$(median < "$work/us.$tasks"); refus=$(median < "$work/refus.$tasks")
  printf 'tasks %d: vmscale %.0f fault/wsec, C reference %.0f, ratio %.3f; user/system vmscale %.2f %%, C reference %.2f %% (medians of %d interleaved rounds, %s per task)\n' \
    "$tasks" "$vm" "$ref" "$(echo "$vm / $ref" | bc -l)" "$(echo "$us * 100" | bc -l)" "$(echo "$refus * 100" | bc -l)" "$rounds" "$size"
done
