#!/usr/bin/env bash
# Runs `vmscale run quick` in a 32-vCPU, 4-node, 2-socket SMT-2 guest
# under `vmscale guest` (TCG here: this machine's /dev/kvm boots only PVM
# kernels) and times it: the suite's plans as they derive from a
# many-CPU topology, run for real (docs/scale.md, "A 32-vCPU guest").
#
# usage: bench/scale-vm.sh [OUT_DIR]   (default /tmp/vmscale-scale-vm)
#
# Uses the release build and Debian's cloud kernel (bench/guest-kernels.sh).
# Under TCG on 2 host CPUs this takes an hour or more; the time, the load
# average before and after and the guest's console go to OUT_DIR.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-/tmp/vmscale-scale-vm}
bin=$here/../target/release/vmscale
[ -x "$bin" ] || { echo "build first: cargo build --release" >&2; exit 2; }
mkdir -p "$out"
kernel=$("$here/guest-kernels.sh" linux-image-cloud-amd64)
uptime > "$out/load-before"
start=$(date +%s)
set +e
"$bin" --db "$out/scale.db" guest --kernel "$kernel" --accel tcg \
    --cpus 32 --sockets 2 --nodes 4 --threads 2 --mem 4G \
    --out "$out/guest" --timeout 4h -- run quick > "$out/stdout" 2> "$out/stderr"
rc=$?
set -e
end=$(date +%s)
uptime > "$out/load-after"
echo "exit $rc, $((end - start)) s wall" | tee "$out/time"
exit $rc
