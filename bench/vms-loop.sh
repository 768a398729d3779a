#!/usr/bin/env bash
# The word loop of vmscale's usemem cases against usemem's own, for the
# same words: one task writes (or, READ=1, reads) the same mapping once,
# anon-w-seq's (anon-r-seq's) size at --size SIZE (taken from vmscale's
# run), under
# `perf record -e cpu-clock`; printed per run: the samples in the word
# loop (usemem's do_rw_once + do_access, vmscale's words::pass +
# words::access), those in page clearing (clear_page*, memset*), and all
# of the worker's (a command name beginning usemem or vmscale). Two loops
# doing the same work a word show the same loop count; the kernel's part
# is the same pages in both. Runs scatter with the host: read the
# per-round ratios, and the medians of many rounds.
#
# Needs perf (software events suffice) and a local vm-scalability in
# VMSCALE_VMS_PEER (its usemem built there if missing), as
# bench/vms-peer.sh.
#
# usage: VMSCALE_VMS_PEER=DIR bench/vms-loop.sh [ROUNDS]
#   VMSCALE=path   the binary measured (default target/release/vmscale)
#   OTHER=path     a second vmscale binary run in every round too
#   READ=1         anon-r-seq's read loop instead of anon-w-seq's writes
#   SIZE=1/N       vmscale's --size (default 1/16, READ=1: 1/512)
set -euo pipefail
cd "$(dirname "$0")/.."
peer=${VMSCALE_VMS_PEER:?"set VMSCALE_VMS_PEER to a local copy of vm-scalability's repository"}
[ -f "$peer/usemem.c" ] || { echo "VMSCALE_VMS_PEER=$peer holds no usemem.c" >&2; exit 2; }
command -v perf >/dev/null || { echo "no perf: apt-get install linux-perf" >&2; exit 2; }
[ -x "$peer/usemem" ] || make -C "$peer" usemem >/dev/null
rounds=${1:-5}
vmscale=${VMSCALE:-target/release/vmscale}
[ -x "$vmscale" ] || { echo "no $vmscale: cargo build --release" >&2; exit 2; }
work=$(mktemp -d /tmp/vmscale-vms-loop.XXXXXX)
trap 'rm -rf "$work"' EXIT
# anon-r-seq's mapping is the address space's limit, 374 GB a task at
# 1/16 here (3 minutes a run): it is read at 1/512.
case ${READ:-0} in
  0) vcase=anon-w-seq; uargs=(); size=${SIZE:-1/16} ;;
  *) vcase=anon-r-seq; uargs=(--readonly); size=${SIZE:-1/512} ;;
esac

vms() { # BINARY: one run of the case, its task's bytes on stdout
  VMSCALE_DB="$work/db" "$1" run vms --case "$vcase" --tasks 1 --size "$size" \
    --runtime 600 --reps 1 --warmup 0 --json |
    python3 -c 'import json,sys; d=json.load(sys.stdin)
print(int(d["cases"][0]["samples"][0]["data"]["tasks"][0]["bytes"]))'
}

# The mapping's bytes: a task counts them plus an eighth (usemem's credit).
counted=$(vms "$vmscale")
bytes=$((counted * 8 / 9 / 4096 * 4096))
echo "# $vcase, one task, --size $size, $bytes bytes a run, $rounds rounds; load $(cut -d' ' -f1 /proc/loadavg)"

count() { # NAME: samples of the worker in the recorded run
  perf script -i "$work/perf.data" -F comm,ip,sym 2>/dev/null | awk -v name="$1" '
    $1 == "usemem" || $1 ~ /^vmscale/ {
      n++; s = $3
      if (s == "do_rw_once" || s == "do_access" || s ~ /words::pass/ || s ~ /words::access/) loop++
      else if (s ~ /clear_page|memset/) clr++
    }
    END { printf "  %-8s loop %6d  clearing %6d  all %6d\n", name, loop, clr, n }' |
    tee -a "$work/counts"
}

progs=(usemem vmscale)
[ -n "${OTHER:-}" ] && progs+=(other)
for r in $(seq 1 "$rounds"); do
  echo "round $r:"
  k=$(( (r - 1) % ${#progs[@]} ))
  for p in "${progs[@]:k}" "${progs[@]:0:k}"; do
    case $p in
      usemem) cmd=("$peer/usemem" "${uargs[@]}" "$bytes") ;;
      vmscale) cmd=(env VMSCALE_DB="$work/db" "$vmscale" run vms --case "$vcase" --tasks 1
                    --size "$size" --runtime 600 --reps 1 --warmup 0) ;;
      other) cmd=(env VMSCALE_DB="$work/db" "$OTHER" run vms --case "$vcase" --tasks 1
                  --size "$size" --runtime 600 --reps 1 --warmup 0) ;;
    esac
    perf record -q -e cpu-clock -F 4999 -o "$work/perf.data" -- "${cmd[@]}" >/dev/null 2>&1
    count "$p"
  done
  echo "round $r" >> "$work/counts"
done
python3 - "$work/counts" <<'PY'
import statistics as st, sys
rounds, cur = [], {}
for line in open(sys.argv[1]):
    f = line.split()
    if f[0] == "round":
        rounds.append(cur)
        cur = {}
    else:
        cur[f[0]] = int(f[2])
progs = [p for p in ("usemem", "vmscale", "other") if p in rounds[0]]
print("loop samples, medians: " + ", ".join(f"{p} {st.median(r[p] for r in rounds):.0f}"
                                           for p in progs))
pairs = [("usemem", "vmscale")] + ([("vmscale", "other")] if "other" in progs else [])
for a, b in pairs:
    v = sorted(r[a] / r[b] for r in rounds if r[b])
    print(f"  {a}/{b}: median {st.median(v):.3f}  range {v[0]:.3f} .. {v[-1]:.3f}"
          f"  (n={len(v)} rounds)")
PY
