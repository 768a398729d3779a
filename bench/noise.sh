#!/bin/bash
# Why pft samples scatter on a virtual machine with free page reporting.
# One sample = one `vmscale run pft --tasks 1 --size SIZE --reps 1 --warmup 0`
# (a fresh process faulting SIZE of anonymous memory). Before each sample the
# machine idles GAP seconds, with page reporting as booted or neutralised;
# the settings are interleaved round by round (A B C D A B C D ...), so slow
# drifts of the host and of other load hit every setting alike.
#
# Printed per setting, medians over ROUNDS samples: system microseconds per
# fault (CPU time: robust to other load taking the CPU), faults per wall
# second, the spread of system time per fault (max/min), and KiB the guest
# reported to the host during the gap (reported_kib delta).
#
#   bench/noise.sh [ROUNDS] [SIZE] [GAP]     (defaults 7 1G 10; needs root)
#
# Page-reporting parameters are restored on exit, also on Ctrl-C.
set -euo pipefail
ROUNDS=${1:-7}
SIZE=${2:-1G}
GAP=${3:-10}
VMSCALE=${VMSCALE:-$(dirname "$0")/../target/release/vmscale}
P=/sys/module/page_reporting/parameters
OUT=$(mktemp -d /tmp/vmscale-noise.XXXXXX)
[ -r $P/page_reporting_order ] || { echo "no free page reporting here ($P)"; exit 0; }
ORDER0=$(cat $P/page_reporting_order)
MINFREE0=$(cat $P/min_free_ms 2>/dev/null || true)
restore() {
  echo "$ORDER0" > $P/page_reporting_order
  if [ -n "$MINFREE0" ]; then echo "$MINFREE0" > $P/min_free_ms; fi
}
trap restore EXIT
# setting: name gap order min_free_ms(empty: as booted)
SETTINGS=(
  "nogap 0 $ORDER0 -"
  "gap $GAP $ORDER0 -"
  "gap+order10 $GAP 10 -"
)
if [ -n "$MINFREE0" ]; then SETTINGS+=("gap+minfree60s $GAP $ORDER0 60000"); fi
echo "# $(date -u +%FT%TZ) kernel $(uname -r), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# booted: page_reporting_order=$ORDER0 min_free_ms=${MINFREE0:-n/a}"
echo "# pft --tasks 1 --size $SIZE, one sample per process, $ROUNDS rounds interleaved"
# Prime: one run so the first setting does not pay for first-touch of memory.
"$VMSCALE" --db "$OUT/db" run pft --tasks 1 --size "$SIZE" --reps 1 --warmup 0 >/dev/null 2>&1
for r in $(seq 1 "$ROUNDS"); do
  for s in "${SETTINGS[@]}"; do
    read -r name gap order minfree <<<"$s"
    echo "$order" > $P/page_reporting_order
    if [ -n "$MINFREE0" ]; then
      if [ "$minfree" = - ]; then echo "$MINFREE0" > $P/min_free_ms; else echo "$minfree" > $P/min_free_ms; fi
    fi
    k0=$(cat $P/reported_kib 2>/dev/null || echo 0)
    sleep "$gap"
    k1=$(cat $P/reported_kib 2>/dev/null || echo 0)
    "$VMSCALE" --db "$OUT/db" run pft --tasks 1 --size "$SIZE" --reps 1 --warmup 0 \
      --json > "$OUT/$name.$r.json" 2>/dev/null
    echo "$name $((k1 - k0))" >> "$OUT/reported"
  done
done
restore
trap - EXIT
python3 - "$OUT" "${SETTINGS[@]%% *}" <<'PY'
import json, statistics as st, sys, glob, collections
out, names = sys.argv[1], sys.argv[2:]
rep = collections.defaultdict(list)
for line in open(f"{out}/reported"):
    n, k = line.split(); rep[n].append(int(k))
print(f"{'setting':<16}{'n':>3}{'sys us/fault':>13}{'max/min':>8}{'fault/wsec':>11}"
      f"{'others':>7}{'reported in gap':>16}")
for n in names:
    sy, fw, oth = [], [], []
    for f in sorted(glob.glob(f"{out}/{n}.*.json")):
        s = json.load(open(f))["cases"][0]["samples"][-1]
        F = s["data"]["figures"]
        sy.append(1e6 * F["system"] / F["faults"]); fw.append(F["fault/wsec"])
        oth.append(s["noise"]["other_share"])
    print(f"{n:<16}{len(sy):>3}{st.median(sy):>13.3f}{max(sy)/min(sy):>8.2f}"
          f"{st.median(fw):>11.0f}{100*st.median(oth):>6.0f}%"
          f"{st.median(rep[n])/1024:>12.0f} MiB")
# Every sample of every setting, by how much of the machine others used
# meanwhile (/proc/stat): does system time per fault follow the load?
pts = []
for f in glob.glob(f"{out}/*.json"):
    s = json.load(open(f))["cases"][0]["samples"][-1]
    F = s["data"]["figures"]
    pts.append((s["noise"]["other_share"], 1e6 * F["system"] / F["faults"],
                1 - (F["system"] + F["user"]) / F["wall"]))
print()
print(f"{'others used':<14}{'n':>4}{'sys us/fault':>13}{'p90':>7}{'task off-CPU':>14}")
for lo, hi in [(0, .25), (.25, .5), (.5, .75), (.75, .9), (.9, 1.01)]:
    sel = sorted(p for p in pts if lo <= p[0] < hi)
    if not sel:
        continue
    ys = sorted(p[1] for p in sel)
    print(f"{100*lo:>3.0f}-{min(100*hi,100):>3.0f} %      {len(sel):>4}{st.median(ys):>13.3f}"
          f"{ys[int(0.9*(len(ys)-1))]:>7.3f}{100*st.median(p[2] for p in sel):>13.0f}%")
# The same samples split by what the kernel did meanwhile (system-wide
# vmstat deltas): reclaim (kswapd or direct) or compaction, or neither.
def busy(v):
    return any(v.get(k, 0) > 0 for k in ("pgscan_kswapd", "pgscan_direct",
               "compact_stall", "compact_daemon_wake"))
groups = {"reclaim or compaction": [], "neither": []}
for f in glob.glob(f"{out}/*.json"):
    s = json.load(open(f))["cases"][0]["samples"][-1]
    F = s["data"]["figures"]
    key = "reclaim or compaction" if busy(s["vmstat"]) else "neither"
    groups[key].append(1e6 * F["system"] / F["faults"])
print()
print(f"{'meanwhile':<24}{'n':>4}{'sys us/fault':>13}{'max':>7}")
for k, ys in groups.items():
    if ys:
        print(f"{k:<24}{len(ys):>4}{st.median(ys):>13.3f}{max(ys):>7.3f}")
PY
echo "# raw JSON: $OUT"
