#!/usr/bin/env bash
# What a `vmscale guest` boot costs against a bare QEMU boot of the same
# kernel: `vmscale guest --kernel K -- sysinfo` (initramfs with vmscale,
# modules, the plan, the results disk read back) against QEMU booting K
# with the same machine, CPU and memory into an initramfs of a static
# busybox whose /init powers off at once. Interleaved (bare, vmscale,
# bare, ...), N of each; prints every time, each round's ratio, the
# medians, their ratio and the median of the rounds' ratios (the paired
# figure: a round's two boots saw the same host load), and the load
# average before and after. A bisect boots many times: vmscale's boot
# should stay within 1.2x the bare one.
#
# vmscale boots a kernel with a PVH entry as its ELF image (unpacked into
# its cache; src/guest/pvh.rs), not through the bzImage's decompressor,
# and without the crypto self-tests (cryptomgr.notests). So each round
# also boots that same ELF image bare with that parameter ("bare-pvh"),
# and each binary's ratio is given against both bare boots: against the
# bzImage, what a boot costs a user over booting the kernel by hand;
# against bare-pvh, vmscale's own work.
#
# usage: bench/boot-cost.sh [-n N] [--vmscale BIN]... [--accel tcg|kvm] KERNEL.deb|bzImage
#
# --vmscale twice or more (a binary before and after a change): each round
# boots bare, then each binary (in the order given, reversed every other
# round); each gets its columns. Each binary boots the static guest
# binary it finds (`vmscale-guest` beside it, or cargo's
# target/x86_64-unknown-linux-gnu/guest/vmscale beside target/release;
# `cargo build-guest`), else itself.
#
# Needs qemu-system-x86, busybox-static, dpkg-deb (for a .deb), cpio.
set -euo pipefail

die() { echo "boot-cost: $*" >&2; exit 2; }
n=5
bins=()
accel=tcg
while [ $# -gt 0 ]; do
  case "$1" in
    -n) n=$2; shift 2 ;;
    --vmscale) bins+=("$2"); shift 2 ;;
    --accel) accel=$2; shift 2 ;;
    -*) die "unknown option $1" ;;
    *) break ;;
  esac
done
[ $# -eq 1 ] || die "usage: bench/boot-cost.sh [-n N] [--vmscale BIN]... KERNEL"
kernel=$1
[ -f "$kernel" ] || die "$kernel: no such file"
[ ${#bins[@]} -gt 0 ] || bins=("${VMSCALE:-target/release/vmscale}")
for v in "${bins[@]}"; do
  [ -x "$v" ] || die "$v: not built (cargo build --release)"
done
command -v qemu-system-x86_64 >/dev/null || die "apt-get install qemu-system-x86"
busybox=$(command -v busybox || true)
[ -n "$busybox" ] && file -L "$busybox" | grep -q 'statically linked' ||
  busybox=/bin/busybox
file -L "$busybox" 2>/dev/null | grep -q 'statically linked' || die "apt-get install busybox-static"

work=$(mktemp -d /tmp/boot-cost.XXXXXX)
trap 'rm -rf "$work"' EXIT
image=$kernel
if [[ "$kernel" == *.deb ]]; then
  dpkg-deb --fsys-tarfile "$kernel" | tar -x -C "$work" --wildcards './boot/vmlinuz-*'
  image=$(ls "$work"/boot/vmlinuz-* | head -1)
fi

# The bare initramfs: busybox and an /init that powers off.
mkdir -p "$work/root/bin" "$work/root/dev"
cp "$busybox" "$work/root/bin/busybox"
printf '#!/bin/busybox sh\necho bare-init-up\n/bin/busybox poweroff -f\n' > "$work/root/init"
chmod +x "$work/root/init"
(cd "$work/root" && find . | cpio -o -H newc --quiet > "$work/bare.cpio")

case "$accel" in
  tcg) qaccel="tcg,thread=multi"; cpu=max ;;
  kvm) qaccel=kvm; cpu=host ;;
  *) die "--accel tcg or kvm" ;;
esac
bare() {
  qemu-system-x86_64 -machine q35 -accel "$qaccel" -cpu "$cpu" -smp 1 -m 1024 \
    -kernel "${1:-$image}" -initrd "$work/bare.cpio" \
    -append "console=ttyS0 quiet panic=-1 no_timer_check${1:+ cryptomgr.notests}" \
    -nodefaults -no-user-config -display none -serial stdio -monitor none \
    -no-reboot > "$work/bare.log" 2>&1
  grep -q bare-init-up "$work/bare.log" || die "the bare guest did not reach init: $work/bare.log"
}
guest() {
  "$1" -q --db "$work/g.db" guest --accel "$accel" --kernel "$kernel" \
    -- sysinfo > /dev/null
}
secs() { local t0 t1; t0=$(date +%s.%N); "$@"; t1=$(date +%s.%N); echo "$t1 - $t0" | bc; }

# One untimed guest a binary first: vmscale strips (or checks) and caches
# its guest binary and unpacks a package once; that is not a boot's cost.
for v in "${bins[@]}"; do guest "$v"; done
cache=${VMSCALE_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/vmscale}
elf="$cache/pvh/vmlinux-$(sha256sum "$image" | cut -d' ' -f1)"
[ -f "$elf" ] || { echo "no PVH image in $cache/pvh: the bare-pvh boot is skipped"; elf=; }
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
b=() p=()
declare -A g r rp
for i in $(seq "$n"); do
  b+=("$(secs bare)")
  [ -z "$elf" ] || p+=("$(secs bare "$elf")")
  # The binaries' order reversed every other round: none always boots
  # right after the bare guest.
  order=("${!bins[@]}")
  [ $((i % 2)) = 1 ] || order=($(printf '%s\n' "${order[@]}" | tac))
  for k in "${order[@]}"; do
    t=$(secs guest "${bins[$k]}")
    g[$k]+=" $t"
    r[$k]+=" $(echo "scale=3; $t / ${b[-1]}" | bc)"
    [ -z "$elf" ] || rp[$k]+=" $(echo "scale=3; $t / ${p[-1]}" | bc)"
  done
  line="round $i: bare ${b[-1]} s"
  [ -z "$elf" ] || line+=", bare-pvh ${p[-1]} s"
  for k in "${!bins[@]}"; do
    line+=", vmscale#$((k + 1)) ${g[$k]##* } s (${r[$k]##* }"
    [ -z "$elf" ] || line+=", ${rp[$k]##* }"
    line+=")"
  done
  echo "$line"
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
mb=$(median "${b[@]}")
echo "bare: median of $n $mb s"
[ -z "$elf" ] || echo "bare-pvh: median of $n $(median "${p[@]}") s"
for k in "${!bins[@]}"; do
  # shellcheck disable=SC2086 # the lists are space-separated numbers
  mg=$(median ${g[$k]})
  echo "vmscale#$((k + 1)) ${bins[$k]}: median of $n $mg s, ratio of medians" \
    "$(echo "scale=3; $mg / $mb" | bc), median of the rounds' ratios $(median ${r[$k]})"
  # shellcheck disable=SC2086
  [ -z "$elf" ] || echo "  against bare-pvh: median of the rounds' ratios $(median ${rp[$k]})"
done
