#!/usr/bin/env bash
# Boots tests/scale_vm.rs's guest shape (32 vCPUs, 2 sockets, 4 nodes,
# SMT-2, 2 GiB, TCG, Debian's cloud kernel) N times in a row with the plan
# `sysinfo` and says for each boot whether it came up, how long it took and
# the load average, then how many of N booted. Each boot's console and
# vmscale's stderr stay in OUT_DIR/boot-K/.
#
# usage: bench/scale-vm-boots.sh [N] [OUT_DIR] [-- extra `vmscale guest` options]
#   defaults: 20 boots, /tmp/vmscale-scale-vm-boots
#   TIMEOUT=300s  each boot's bound (vmscale guest --timeout)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
n=${1:-20}
out=${2:-/tmp/vmscale-scale-vm-boots}
shift $(($# < 2 ? $# : 2))
[ "${1:-}" = "--" ] && shift
bin=${VMSCALE:-$here/../target/release/vmscale}
[ -x "$bin" ] || { echo "build first: cargo build --release" >&2; exit 2; }
kernel=$("$here/guest-kernels.sh" linux-image-cloud-amd64)
mkdir -p "$out"
ok=0
for k in $(seq 1 "$n"); do
    dir=$out/boot-$k
    rm -rf "$dir"
    mkdir -p "$dir"
    load=$(cut -d' ' -f1 /proc/loadavg)
    start=$(date +%s.%N)
    set +e
    "$bin" --db "$dir/db" guest --kernel "$kernel" --accel tcg --cpus 32 \
        --sockets 2 --nodes 4 --threads 2 --mem 2G --timeout "${TIMEOUT:-300s}" \
        --out "$dir/guest" "$@" -- sysinfo > "$dir/stdout" 2> "$dir/stderr"
    rc=$?
    set -e
    secs=$(echo "$(date +%s.%N) - $start" | bc)
    [ $rc = 0 ] && ok=$((ok + 1))
    printf 'boot %2d: exit %d, %6.1f s, load %s -> %s\n' "$k" "$rc" "$secs" "$load" \
        "$(cut -d' ' -f1 /proc/loadavg)"
done
echo "$ok of $n booted"
