#!/bin/bash
# Times every workload's default run (`vmscale run NAME` with no options),
# every will-it-scale test's (`run wis --test T`), every stress-ng VM
# stressor's (`run stress-ng --stressor S`) and `run quick`, and prints,
# as the markdown table docs/noise.md keeps, each run's wall time, the
# 1-minute load when it ended and how it ended (the harness's note, or the
# exit code and the last line of stderr); a default run should end within
# 60 s on a 2-CPU machine (docs/noise.md). vm-scalability's cases are
# bench/vms-cases.sh's.
#
#   bench/default-runs.sh [RUN...]   a RUN is the words after `vmscale run`,
#                                    quoted ("wis --test brk2"); `wis` and
#                                    `stress-ng` alone stand for each of
#                                    their tests (default: every workload
#                                    but cmd and vms, wis, stress-ng, quick)
#   VMSCALE=path/to/vmscale          (default: target/release/vmscale)
#   DB=path                          (the store; default: a fresh temp one)
set -uo pipefail
VMSCALE=${VMSCALE:-$(dirname "$0")/../target/release/vmscale}
DIR=$(mktemp -d /tmp/vmscale-defaults.XXXXXX)
trap 'rm -rf "$DIR"' EXIT
DB=${DB:-$DIR/db}
WORKLOADS="pft churn fork numa01 numa01-threadlocal numa02 numa02-smt colour
  c2c atomic lockfan latency mmap-lock thp pte-reclaim wis stress-ng quick"
load() { cut -d' ' -f1-3 /proc/loadavg; }
# One run spec a line; `wis` and `stress-ng` expand to each test.
specs() {
  for a in "$@"; do
    case "$a" in
      wis) "$VMSCALE" run wis --test list | awk '{print "wis --test " $1}' ;;
      # stress-ng names its VM stressors when asked for one it lacks
      # (wrapped, a name cut after a hyphen).
      stress-ng) "$VMSCALE" run stress-ng --stressor list 2>&1 |
          sed -n '/VM stressors:$/,$p' | tail -n +2 | tr '\n' ' ' |
          sed 's/- */-/g' | tr -s ' ' '\n' | grep . |
          sed 's/^/stress-ng --stressor /' ;;
      *) echo "$a" ;;
    esac
  done
}
# shellcheck disable=SC2086
[ $# -eq 0 ] && set -- $WORKLOADS
echo "<!-- $(date -u +%FT%TZ), $(nproc) CPUs, load $(load),"\
  "$("$VMSCALE" --version 2>/dev/null) -->"
echo "| run | wall s | load | how it ended |"
echo "|---|---:|---:|---|"
longest=0
i=0
while read -r spec; do
  i=$((i + 1))
  out=$DIR/$i
  json=(--json)
  [ "$spec" = quick ] && json=()  # a suite: its runs' first lines
  t0=$(date +%s.%N)
  # shellcheck disable=SC2086
  "$VMSCALE" --db "$DB" run $spec "${json[@]}" > "$out.out" 2> "$out.err" \
    < /dev/null
  rc=$?
  wall=$(echo "$(date +%s.%N) - $t0" | bc)
  longest=$(echo "if ($wall > $longest) $wall else $longest" | bc)
  if [ $rc -ne 0 ]; then
    # vmscale's own last message (a failed child's lines follow it).
    how="exit $rc: $(grep '^vmscale: ' "$out.err" | tail -1 | sed 's/^vmscale: //' |
      cut -c1-90)"
  elif [ "$spec" = quick ]; then
    how="$(grep -v '^ *$' "$out.out" | tail -1 | cut -c1-90)"
  else
    # The harness's note without its fixed head and tail.
    how=$(python3 -c '
import json, sys
note = json.load(open(sys.argv[1]))["meta"]["note"] or ""
note = note.split(": ", 1)[-1].split("; after ")[0]
print(note[:110])' "$out.out" 2>&1 | tail -1)
  fi
  printf '| %s | %.1f | %s | %s |\n' "$spec" "$wall" \
    "$(cut -d' ' -f1 /proc/loadavg)" "$how"
done < <(specs "$@")
printf '<!-- longest %.1f s; load after %s -->\n' "$longest" "$(load)"
