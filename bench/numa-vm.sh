#!/usr/bin/env bash
# Boots a QEMU guest with several NUMA nodes, runs vmscale inside it and
# brings the guest's store back into the host's store.
#
# Development machines have one NUMA node, so the NUMA code (placement by
# node, first touch, numa_maps locality, the AutoNUMA counters) is run here
# for real: Debian's kernel (linux-image-amd64, NUMA balancing built in and
# on by default) in a guest whose nodes, CPUs, memory and distances QEMU is
# told, with an initramfs of busybox, vmscale and its shared libraries.
#
# usage: bench/numa-vm.sh [OPTIONS] [-- GUEST SHELL COMMANDS]
#
#   --nodes N            NUMA nodes with CPUs: 2 (default) or 4
#   --cpus-per-node N    CPUs per node (default 1), or use --smp
#   --smp TOPOLOGY       QEMU -smp topology, e.g. sockets=2,dies=2,cores=2,threads=2;
#                        its CPUs are split over the nodes in order
#   --mem-per-node MIB   memory per node in MiB (default 512)
#   --memory-only-node   add one more node with memory and no CPUs
#   --dist S-D=V,...     distances (asymmetric allowed); default 10 local,
#                        20 remote (4 nodes: 20 to the neighbour, 30 across)
#   --accel tcg|kvm      default tcg: see "KVM" below
#   --cpu MODEL          QEMU -cpu (default under TCG: max, or Skylake-Server
#                        with --smp, since TCG's max is AMD-like and shows no
#                        SMT or dies to the guest; under KVM: host)
#   --db PATH            the host store the guest's runs go to
#                        (default: vmscale's own default)
#   --out DIR            keep the guest's files here (store, sysinfo, sysfs
#                        topology, console log); default a temporary dir
#   --vmscale PATH       the binary to put in the guest
#                        (default target/release/vmscale, built if absent)
#   --timeout SECONDS    stop the guest after this long (default 1800)
#   --no-import          leave the host store alone
#
# Without guest commands the guest runs the default suite below: sysinfo,
# numa01 with numa_balancing 0 and 1, numa01-threadlocal, numa02 and pft
# spread over the nodes. Guest commands run under /bin/sh in the guest with
# VMSCALE_DB set to the guest's store; files written to /out come back.
#
# KVM: on the machine this was written on, /dev/kvm is kvm-pvm (nested
# "pagetable-based" virtualisation), which boots only guest kernels built
# for PVM; Debian's kernel stops right after decompression with every
# -cpu model tried (host aborts on MSR 0x10a). TCG is the default; --accel
# kvm is there for machines with ordinary KVM.
#
# Needs root (apt-get install, and vmscale's knob A/B in the guest is root's).
set -euo pipefail
cd "$(dirname "$0")/.."

nodes=2 cpus_per_node=1 smp="" mem_per_node=512 memory_only=0 dist=""
accel=tcg cpu_model="" db="" out="" vmscale="" timeout_s=1800 do_import=1
die() { echo "numa-vm: $*" >&2; exit 2; }
while [ $# -gt 0 ]; do
  case "$1" in
    --nodes) nodes=$2; shift 2 ;;
    --cpus-per-node) cpus_per_node=$2; shift 2 ;;
    --smp) smp=$2; shift 2 ;;
    --mem-per-node) mem_per_node=$2; shift 2 ;;
    --memory-only-node) memory_only=1; shift ;;
    --dist) dist=$2; shift 2 ;;
    --accel) accel=$2; shift 2 ;;
    --cpu) cpu_model=$2; shift 2 ;;
    --db) db=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --vmscale) vmscale=$2; shift 2 ;;
    --timeout) timeout_s=$2; shift 2 ;;
    --no-import) do_import=0; shift ;;
    --) shift; break ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown option '$1' (see --help)" ;;
  esac
done
guest_commands=("$@")
case "$nodes" in 2|4) ;; *) die "--nodes $nodes: use 2 or 4" ;; esac
case "$accel" in tcg|kvm) ;; *) die "--accel $accel: use tcg or kvm" ;; esac
[[ "$cpus_per_node" =~ ^[1-9][0-9]*$ ]] || die "--cpus-per-node '$cpus_per_node': give a positive number"
[[ "$mem_per_node" =~ ^[1-9][0-9]*$ ]] || die "--mem-per-node '$mem_per_node': give MiB, e.g. 512"
[[ "$timeout_s" =~ ^[1-9][0-9]*$ ]] || die "--timeout '$timeout_s': give seconds"
[ "$(id -u)" = 0 ] || die "run as root: packages are installed with apt-get"

# --- Packages: QEMU and busybox installed, the kernel only unpacked --------
need_pkgs=()
command -v qemu-system-x86_64 >/dev/null || need_pkgs+=(qemu-system-x86)
[ -x /bin/busybox ] && /bin/busybox --list | grep -qx cpio || need_pkgs+=(busybox-static)
if [ ${#need_pkgs[@]} -gt 0 ]; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y -qq --no-install-recommends "${need_pkgs[@]}" >/dev/null 2>&1 ||
    { apt-get update -qq && apt-get install -y -qq --no-install-recommends "${need_pkgs[@]}" >/dev/null; }
fi
bb=/bin/busybox
ldd "$bb" >/dev/null 2>&1 && die "$bb is dynamically linked: install busybox-static"

cache=${VMSCALE_CACHE_DIR:-${XDG_CACHE_HOME:-${HOME:-/root}/.cache}/vmscale}/numa-vm
mkdir -p "$cache"
kernel_image() {
  # The kernel package linux-image-amd64 depends on, unpacked (not installed).
  local dl pkg
  dl=$(mktemp -d "$cache/dl.XXXXXX")
  ( cd "$dl" && { apt-get download -o APT::Sandbox::User=root linux-image-amd64 >/dev/null 2>&1 ||
      { apt-get update -qq && apt-get download -o APT::Sandbox::User=root linux-image-amd64 >/dev/null; }; } )
  pkg=$(dpkg-deb -f "$dl"/linux-image-amd64_*.deb Depends | tr ',' '\n' | sed -n 's/^ *\(linux-image-[^ ]*\).*/\1/p' | head -1)
  [ -n "$pkg" ] || die "cannot tell which kernel linux-image-amd64 depends on"
  if [ ! -d "$cache/$pkg" ]; then
    ( cd "$dl" && apt-get download -o APT::Sandbox::User=root "$pkg" >/dev/null )
    dpkg-deb -x "$dl/$pkg"_*.deb "$cache/$pkg.tmp"
    mv "$cache/$pkg.tmp" "$cache/$pkg"
  fi
  rm -rf "$dl"
  echo "$cache/$pkg"
}
kdir=$(ls -d "$cache"/linux-image-*-amd64 2>/dev/null | sort -V | tail -1 || true)
[ -n "$kdir" ] || kdir=$(kernel_image)
vmlinuz=$(ls "$kdir"/boot/vmlinuz-* | head -1)
krel=${vmlinuz##*/vmlinuz-}
moddir=$kdir/lib/modules/$krel/kernel

# --- vmscale ---------------------------------------------------------------
if [ -z "$vmscale" ]; then
  vmscale=target/release/vmscale
  [ -x "$vmscale" ] || cargo build --release --quiet
fi
[ -x "$vmscale" ] || die "--vmscale $vmscale is not an executable"
host_vmscale=$vmscale

# --- Work directory --------------------------------------------------------
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
[ -n "$out" ] || out=$work/out
mkdir -p "$out"

# --- Guest topology ---------------------------------------------------------
if [ -n "$smp" ]; then
  total_cpus=1
  for part in ${smp//,/ }; do
    v=${part#*=}
    [[ "$part" =~ ^(sockets|dies|clusters|cores|threads)=[1-9][0-9]*$ ]] ||
      die "--smp '$smp': use sockets=N,dies=N,cores=N,threads=N"
    total_cpus=$((total_cpus * v))
  done
  [ $((total_cpus % nodes)) = 0 ] || die "--smp gives $total_cpus CPUs, not a multiple of $nodes nodes"
  cpus_per_node=$((total_cpus / nodes))
  smp_arg="$total_cpus,$smp"
else
  total_cpus=$((nodes * cpus_per_node))
  smp_arg=$total_cpus
fi
all_nodes=$((nodes + memory_only))
numa_args=()
for ((n = 0; n < all_nodes; n++)); do
  numa_args+=(-object "memory-backend-ram,id=m$n,size=${mem_per_node}M")
  if [ "$n" -lt "$nodes" ]; then
    numa_args+=(-numa "node,nodeid=$n,cpus=$((n * cpus_per_node))-$(((n + 1) * cpus_per_node - 1)),memdev=m$n")
  else
    numa_args+=(-numa "node,nodeid=$n,memdev=m$n")
  fi
done
# Distances: the default table, then --dist entries on top.
declare -A distance
for ((s = 0; s < all_nodes; s++)); do
  for ((d = 0; d < all_nodes; d++)); do
    if [ "$s" = "$d" ]; then v=10
    elif [ "$all_nodes" -ge 4 ] && [ $((s / 2)) != $((d / 2)) ]; then v=30
    else v=20; fi
    distance[$s-$d]=$v
  done
done
for entry in ${dist//,/ }; do
  [[ "$entry" =~ ^([0-9]+)-([0-9]+)=([0-9]+)$ ]] || die "--dist '$entry': use SRC-DST=VALUE, e.g. 0-1=20"
  s=${BASH_REMATCH[1]} d=${BASH_REMATCH[2]} v=${BASH_REMATCH[3]}
  [ "$s" -lt "$all_nodes" ] && [ "$d" -lt "$all_nodes" ] && [ "$s" != "$d" ] ||
    die "--dist '$entry': nodes are 0..$((all_nodes - 1)) and must differ"
  distance[$s-$d]=$v
done
for ((s = 0; s < all_nodes; s++)); do
  for ((d = 0; d < all_nodes; d++)); do
    [ "$s" = "$d" ] || numa_args+=(-numa "dist,src=$s,dst=$d,val=${distance[$s-$d]}")
  done
done
# What QEMU was told, for the caller to check sysinfo against.
{
  echo "nodes=$all_nodes cpu_nodes=$nodes cpus_per_node=$cpus_per_node mem_per_node_mib=$mem_per_node smp=$smp_arg accel=$accel"
  for ((s = 0; s < all_nodes; s++)); do
    row=""
    for ((d = 0; d < all_nodes; d++)); do row+="${distance[$s-$d]} "; done
    echo "distance $s: ${row% }"
  done
} > "$out/topology.given"

# --- The guest's commands -------------------------------------------------
default_suite() {
  cat <<'EOF'
vmscale sysinfo
vmscale sysinfo --json > /out/sysinfo.json
vmscale run numa01 --size 32M --loops 150 --reps 1 --warmup 0 --interval 500ms \
  --knob numa_balancing=0,1 --label vm-numa01
vmscale run numa01-threadlocal --size 32M --loops 400 --reps 1 --warmup 0 \
  --interval 500ms --label vm-numa01-threadlocal
vmscale run numa02 --size 32M --loops 400 --reps 1 --warmup 0 \
  --interval 500ms --label vm-numa02
vmscale run pft --tasks "$(nproc)" --size 64M --pin spread --reps 3 \
  --warmup 1 --label vm-pft-spread
EOF
}
{
  echo 'set -x'
  if [ ${#guest_commands[@]} -gt 0 ]; then printf '%s\n' "${guest_commands[@]}"; else default_suite; fi
} > "$work/guest.sh"

# --- Initramfs: busybox, vmscale and its libraries, virtio modules ---------
root=$work/initramfs
mkdir -p "$root"/{bin,dev,proc,sys,tmp,out,root,mods}
cp "$bb" "$root/bin/busybox"
for applet in $("$bb" --list); do [ "$applet" = busybox ] || ln -sf busybox "$root/bin/$applet"; done
cp "$vmscale" "$root/bin/vmscale"
strip "$root/bin/vmscale" 2>/dev/null || true
ldd "$vmscale" | grep -o '/[^ ]*' | while read -r lib; do
  mkdir -p "$root$(dirname "$lib")"
  cp -L "$lib" "$root$lib"
done
# The output disk's drivers (loaded in whatever order works, see init).
for m in virtio/virtio virtio/virtio_ring virtio/virtio_pci_legacy_dev \
         virtio/virtio_pci_modern_dev virtio/virtio_pci block/virtio_blk; do
  cp "$moddir/drivers/$m.ko" "$root/mods/"
done
cp "$work/guest.sh" "$root/guest.sh"
cat > "$root/init" <<'EOF'
#!/bin/sh
export PATH=/bin HOME=/root VMSCALE_DB=/out/guest.db VMSCALE_STATE_DIR=/root/state
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
mount -t tmpfs tmp /tmp
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
# Dependencies between these modules change between kernel updates (in
# 6.1.0-56 virtio needs virtio_ring, earlier it was the other way), so load
# in passes until every one is in or a pass makes no progress.
left="virtio virtio_ring virtio_pci_legacy_dev virtio_pci_modern_dev virtio_pci virtio_blk"
while [ -n "$left" ]; do
  failed=""
  for m in $left; do insmod /mods/$m.ko 2>/dev/null || failed="$failed $m"; done
  failed=${failed# }
  if [ "$failed" = "$left" ]; then echo "numa-vm: cannot load: $failed"; break; fi
  left=$failed
done
echo "numa-vm: guest up, kernel $(uname -r), nodes $(cat /sys/devices/system/node/online), numa_balancing $(cat /proc/sys/kernel/numa_balancing)"
# The topology as the guest kernel sees it, for fixtures and checks.
# (Copied with cat: sysfs files claim 4096 bytes, which tar would trust.)
for f in /sys/devices/system/cpu/online /sys/devices/system/cpu/cpu*/topology/* \
         /sys/devices/system/node/online /sys/devices/system/node/node*/cpulist \
         /sys/devices/system/node/node*/distance /sys/devices/system/node/node*/meminfo; do
  mkdir -p "/out/sysfs-topology${f%/*}" && cat "$f" > "/out/sysfs-topology$f" 2>/dev/null
done
cd /root
{ sh /guest.sh; echo $? > /out/status; } 2>&1 | tee /out/guest.log
echo "numa-vm: guest commands exited with $(cat /out/status)"
i=0
while [ ! -b /dev/vda ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
tar -cf /dev/vda -C /out . && sync
poweroff -f
EOF
chmod +x "$root/init"
( cd "$root" && find . | "$bb" cpio -o -H newc 2>/dev/null ) | gzip -1 > "$work/initramfs.gz"

# --- Boot ---------------------------------------------------------------------
truncate -s 256M "$work/out.img"
case "$accel" in
  tcg)
    [ -n "$cpu_model" ] || { [ -n "$smp" ] && cpu_model=Skylake-Server || cpu_model=max; }
    accel_args=(-accel tcg,thread=multi -cpu "$cpu_model") ;;
  kvm) accel_args=(-accel kvm -cpu "${cpu_model:-host}") ;;
esac
echo "numa-vm: booting $krel, $all_nodes nodes ($nodes with $cpus_per_node CPUs), ${mem_per_node} MiB each, $accel" >&2
started=$(date +%s)
rc=0
timeout "$timeout_s" qemu-system-x86_64 "${accel_args[@]}" -machine q35 \
  -m $((all_nodes * mem_per_node))M -smp "$smp_arg" "${numa_args[@]}" \
  -kernel "$vmlinuz" -initrd "$work/initramfs.gz" \
  -append "console=ttyS0 quiet panic=-1 vmscale_guest=numa-vm-${all_nodes}n-$accel" \
  -drive "file=$work/out.img,format=raw,if=virtio" \
  -display none -serial stdio -monitor none -no-reboot < /dev/null 2> "$out/qemu.stderr" \
  | tee "$out/console.log" || rc=$?
# TCG names every CPU feature of a named model it cannot emulate, per CPU.
grep -v "TCG doesn't support requested feature" "$out/qemu.stderr" >&2 || true
echo "numa-vm: guest ran $(($(date +%s) - started)) s" >&2
[ "$rc" = 0 ] || { echo "numa-vm: qemu failed or timed out (exit $rc), see $out" >&2; exit 1; }
tar -xf "$work/out.img" -C "$out" 2>/dev/null || { echo "numa-vm: the guest wrote no results" >&2; exit 1; }
[ -f "$out/status" ] || { echo "numa-vm: the guest wrote no results (no output disk?), see $out/console.log" >&2; exit 1; }
status=$(cat "$out/status")
[ "$status" = 0 ] || { echo "numa-vm: guest commands failed (status $status), see $out/guest.log" >&2; exit 1; }

# --- Into the host's store ---------------------------------------------------
[ -f "$out/guest.db" ] || { echo "numa-vm: the guest made no store" >&2; exit 0; }
[ "$do_import" = 1 ] || exit 0
db_args=()
[ -n "$db" ] && db_args=(--db "$db")
if "$host_vmscale" merge --help >/dev/null 2>&1; then
  "$host_vmscale" merge "${db_args[@]}" "$out/guest.db"
else
  # No `vmscale merge` yet: copy the guest's runs with their cases and
  # samples, ids shifted past the host's, in one transaction.
  # (vmscale's default store path, as src/store/mod.rs::default_path.)
  if [ -z "$db" ]; then
    db=${VMSCALE_DB:-}
    if [ -z "$db" ]; then
      data=${XDG_DATA_HOME:-}
      [[ "$data" == /* ]] || data=${HOME:-.}/.local/share
      db=$data/vmscale/vmscale.db
    fi
  fi
  bench/copy-store-runs.sh "$out/guest.db" "$db"
fi
echo "numa-vm: the guest's runs are in ${db:-the default store} (label vm-*; guest files in $out)" >&2
