#!/bin/bash
# Times each vm-scalability case's default run (`vmscale run vms --case
# NAME`, no other option) and prints its wall time, how it ended and its
# median throughput; a default case run should end within 60 s here
# (docs/vms.md). Cases this machine refuses (migrate on one node, ksm
# without ksmd) are listed with the refusal.
#
#   bench/vms-cases.sh [CASE...]     (default: every case)
set -uo pipefail
VMSCALE=${VMSCALE:-$(dirname "$0")/../target/release/vmscale}
DIR=$(mktemp -d /tmp/vmscale-vms.XXXXXX)
trap 'rm -rf "$DIR"' EXIT
CASES=${*:-$("$VMSCALE" run vms --case list 2>&1 | sed 's/.*: //; s/,/ /g')}
echo "# $(date -u +%FT%TZ) $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-24s %7s %14s  %s\n' case wall-s "median KB/s" "how it ended"
for c in $CASES; do
  t0=$(date +%s.%N)
  "$VMSCALE" --db "$DIR/db" run vms --case "$c" --json > "$DIR/$c.json" 2> "$DIR/$c.err"
  rc=$?
  t1=$(date +%s.%N)
  if [ $rc -eq 0 ]; then
    how=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["meta"]["note"] or "")' < "$DIR/$c.json")
    kbps=$(python3 -c '
import json, statistics, sys
r = json.load(sys.stdin)
v = [s["data"]["figures"]["throughput"] for c in r["cases"] for s in c["samples"] if not s["warmup"]]
print(round(statistics.median(v)))' < "$DIR/$c.json")
  else
    how="exit $rc: $(tail -1 "$DIR/$c.err" | cut -c1-110)"
    kbps=-
  fi
  printf '%-24s %7.1f %14s  %s\n' "$c" "$(echo "$t1 - $t0" | bc)" "$kbps" "$how"
done
