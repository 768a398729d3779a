#!/usr/bin/env bash
# What `vmscale reproduce` costs over the guest boots it performs: N runs
# of `vmscale reproduce REPORT --kernel BASE --kernel HEAD --json` on a
# robot report written here (a -40% regression of pft's faults per CPU
# second), each timed by the clock around the whole command, against the
# wall seconds of its boots (QEMU started to stopped, as vmscale's rounds
# measure each boot: `boots_s` in the JSON, summed from guest::pool::Round).
# The rest is reproduce's own work: reading and planning the report, the
# initramfs, pooling and merging the rounds, storing the robot's side,
# the table. Prints every run, its ratio, and the medians; the load
# average before and after. Goal (issue 41): at most 1.1x.
#
# usage: bench/reproduce-cost.sh [-n N] [--vmscale BIN] [--rounds R] BASE HEAD
#
# BASE and HEAD are kernels `vmscale guest` boots (bzImage, vmlinuz or
# .deb; tests/kbuild.rs leaves two under target/tmp/kbuild/cache/kbuild/
# images). Every run boots TCG guests of 512M, R rounds of each kernel
# (--max-rounds R, default 3: the fewest the rule decides on), so the
# figures are for the same work each time. Needs qemu-system-x86 and jq.
set -euo pipefail

die() { echo "reproduce-cost: $*" >&2; exit 2; }
n=5
rounds=3
bin=${VMSCALE:-target/debug/vmscale}
while [ $# -gt 0 ]; do
  case "$1" in
    -n) n=$2; shift 2 ;;
    --vmscale) bin=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    -*) die "unknown option $1" ;;
    *) break ;;
  esac
done
[ $# -eq 2 ] || die "usage: bench/reproduce-cost.sh [-n N] [--vmscale BIN] [--rounds R] BASE HEAD"
base=$1 head=$2
for k in "$base" "$head"; do [ -f "$k" ] || die "$k: no such file"; done
[ -x "$bin" ] || die "$bin: not built (cargo build)"
command -v jq >/dev/null || die "apt-get install jq"

work=$(mktemp -d /tmp/reproduce-cost.XXXXXX)
trap 'rm -rf "$work"' EXIT
b=0123456789abcdef0123456789abcdef01234567
h=89abcdef0123456789abcdef0123456789abcdef
cat > "$work/report.eml" <<EOF
kernel test robot noticed a -40.0% regression of pft.faults_per_sec_per_cpu on:

commit: $h ("mm: the head")

testcase: pft
test machine: 4 threads 1 sockets Test CPU with 8G memory
parameters:

	runtime: 300s
	nr_task: 50%

commit: 
  ${b:0:12} ("mm: the base")
  ${h:0:12} ("mm: the head")

${b:0:12} ${h:0:12}
---------------- ---------------- 
         %stddev     %change         %stddev
             \          |                \  
    500000 ±  2%     -40.0%     300000 ±  2%  pft.faults_per_sec_per_cpu
EOF

now() { date +%s.%N; }
median() { sort -g | awk '{v[NR]=$1} END {print (NR%2 ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2)}'; }
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%4s %10s %10s %8s %6s\n' run wall_s boots_s ratio exit
for i in $(seq 1 "$n"); do
  t0=$(now)
  set +e
  "$bin" --db "$work/run-$i.db" reproduce "$work/report.eml" \
    --kernel "$base" --kernel "$head" --accel tcg --mem 512M \
    --max-rounds "$rounds" --json > "$work/out-$i.json" 2> "$work/err-$i"
  rc=$?
  set -e
  t1=$(now)
  case $rc in 0|3|4|5|6|7) ;; *) cat "$work/err-$i" >&2; die "run $i: exit $rc" ;; esac
  boots=$(jq -r .boots_s "$work/out-$i.json")
  wall=$(echo "$t1 - $t0" | bc -l)
  ratio=$(echo "$wall / $boots" | bc -l)
  printf '%4d %10.2f %10.2f %8.3f %6d\n' "$i" "$wall" "$boots" "$ratio" "$rc"
  echo "$wall $boots $ratio" >> "$work/figures"
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "medians over $n runs: wall $(cut -d' ' -f1 "$work/figures" | median) s," \
  "boots $(cut -d' ' -f2 "$work/figures" | median) s," \
  "ratio $(cut -d' ' -f3 "$work/figures" | median)"
