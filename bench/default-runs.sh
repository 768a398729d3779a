#!/bin/bash
# Times every workload's default run (`vmscale run NAME` with no options)
# and prints its wall time and how its cases stopped; a default run should
# end within 60 s on a 2-CPU machine (docs/noise.md).
#
#   bench/default-runs.sh [NAME...]     (default: every workload but cmd)
set -uo pipefail
VMSCALE=${VMSCALE:-$(dirname "$0")/../target/release/vmscale}
DB=$(mktemp -d /tmp/vmscale-defaults.XXXXXX)/db
NAMES=${*:-pft churn fork numa01 numa01-threadlocal numa02 numa02-smt colour c2c atomic lockfan latency}
echo "# $(date -u +%FT%TZ) $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-20s %7s  %s\n' workload wall-s "how it ended"
for n in $NAMES; do
  t0=$(date +%s.%N)
  "$VMSCALE" --db "$DB" run "$n" > "$DB.$n.txt" 2> "$DB.$n.err"
  rc=$?
  t1=$(date +%s.%N)
  how=$(head -4 "$DB.$n.txt" | tr '\n' ' ' | sed 's/  */ /g' | cut -c1-150)
  [ $rc -eq 0 ] || how="exit $rc: $(tail -1 "$DB.$n.err")"
  printf '%-20s %7.1f  %s\n' "$n" "$(echo "$t1 - $t0" | bc)" "$how"
done
