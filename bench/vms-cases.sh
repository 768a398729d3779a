#!/bin/bash
# Times each vm-scalability case's default run (`vmscale run vms --case
# NAME`, no other option) and prints, as the markdown table docs/vms.md
# keeps, its wall time, the 1-minute load when it ended, its median
# throughput and how it ended; a default
# case run should end within 60 s here (docs/vms.md, "Default run
# times"). Cases this machine refuses (migrate on one node, ksm without
# ksmd) are listed with the refusal. The first line says when, on how
# many CPUs, at what load; the last, the longest run and the load after.
#
#   bench/vms-cases.sh [CASE...]     (default: every case)
#   VMSCALE=path/to/vmscale          (default: target/release/vmscale)
#   NICE=-15                         (the runs' niceness; default: as is)
set -uo pipefail
VMSCALE=${VMSCALE:-$(dirname "$0")/../target/release/vmscale}
DIR=$(mktemp -d /tmp/vmscale-vms.XXXXXX)
trap 'rm -rf "$DIR"' EXIT
# `--case list`: one case a line, its name first.
CASES=${*:-$("$VMSCALE" run vms --case list | awk '{print $1}')}
run=("$VMSCALE")
[ -n "${NICE:-}" ] && run=(nice -n "$NICE" "$VMSCALE")
load() { cut -d' ' -f1-3 /proc/loadavg; }
echo "<!-- $(date -u +%FT%TZ), $(nproc) CPUs, load $(load),"\
  "$("$VMSCALE" --version 2>/dev/null) -->"
echo "| case | wall s | load | median KB/s | how it ended |"
echo "|---|---:|---:|---:|---|"
longest=0
for c in $CASES; do
  t0=$(date +%s.%N)
  "${run[@]}" --db "$DIR/db" run vms --case "$c" --json > "$DIR/$c.json" 2> "$DIR/$c.err"
  rc=$?
  wall=$(echo "$(date +%s.%N) - $t0" | bc)
  longest=$(echo "if ($wall > $longest) $wall else $longest" | bc)
  if [ $rc -eq 0 ]; then
    # The run's note, shortened: what stopped it and after how many samples.
    python3 - "$c" "$wall" "$DIR/$c.json" "$(cut -d' ' -f1 /proc/loadavg)" <<'EOF'
import json, re, statistics, sys
case, wall, path, load = sys.argv[1], float(sys.argv[2]), sys.argv[3], sys.argv[4]
r = json.load(open(path))
v = [s["data"]["figures"].get("throughput")
     for c in r["cases"] for s in c["samples"] if not s["warmup"]]
v = [x for x in v if x is not None]
med = round(statistics.median(v)) if v else "-"
note = r["meta"]["note"] or ""
n = re.search(r"n=(\d+)", note)
n = f", n={n.group(1)}" if n else ""
if "max-time" in note:
    how = "max-time " + re.search(r"max-time (\S+?):", note).group(1)
elif "cannot reach" in note:
    how = "cannot reach the precision"
elif "reached" in note:
    how = "precision reached"
else:
    how = note[:40]
print(f"| {case} | {wall:.1f} | {load} | {med} | {how}{n} |")
EOF
  else
    printf '| %s | %.1f | %s | - | exit %s: %s |\n' "$c" "$wall" \
      "$(cut -d' ' -f1 /proc/loadavg)" "$rc" \
      "$(tail -1 "$DIR/$c.err" | sed 's/^vmscale: //' | cut -c1-70)..."
  fi
done
printf '<!-- longest %.1f s; load after %s -->\n' "$longest" "$(load)"
