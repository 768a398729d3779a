#!/usr/bin/env bash
# Boots a QEMU guest with several NUMA nodes, runs vmscale inside it and
# brings the guest's store back into the host's store: a thin wrapper over
# `vmscale guest` (docs/guest.md), kept for its options.
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
# VMSCALE_DB set to the guest's store (as `vmscale guest --setup` lines);
# files written to /out come back. Runs keep the labels the commands give.
#
# KVM: on the machine this was written on, /dev/kvm is kvm-pvm (nested
# "pagetable-based" virtualisation), which boots only guest kernels built
# for PVM; Debian's kernel stops right after decompression with every
# -cpu model tried (host aborts on MSR 0x10a). TCG is the default; --accel
# kvm is there for machines with ordinary KVM (`vmscale guest` refuses it
# where its probe shows KVM cannot boot the kernel).
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

# --- Packages: QEMU and busybox installed, the kernel only downloaded -----
need_pkgs=()
command -v qemu-system-x86_64 >/dev/null || need_pkgs+=(qemu-system-x86)
[ -x /bin/busybox ] && /bin/busybox --list | grep -qx cpio || need_pkgs+=(busybox-static)
if [ ${#need_pkgs[@]} -gt 0 ]; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y -qq --no-install-recommends "${need_pkgs[@]}" >/dev/null 2>&1 ||
    { apt-get update -qq && apt-get install -y -qq --no-install-recommends "${need_pkgs[@]}" >/dev/null; }
fi
kernel_deb=$(bench/guest-kernels.sh linux-image-amd64)

# --- vmscale ---------------------------------------------------------------
if [ -z "$vmscale" ]; then
  vmscale=target/release/vmscale
  [ -x "$vmscale" ] || cargo build --release --quiet
fi
[ -x "$vmscale" ] || die "--vmscale $vmscale is not an executable"

# --- The guest's shape, as `vmscale guest` options --------------------------
shape=(--nodes "$nodes" --memory-only-nodes "$memory_only")
if [ -n "$smp" ]; then
  total_cpus=1
  for part in ${smp//,/ }; do
    [[ "$part" =~ ^(sockets|dies|clusters|cores|threads)=([1-9][0-9]*)$ ]] ||
      die "--smp '$smp': use sockets=N,dies=N,cores=N,threads=N"
    key=${BASH_REMATCH[1]} v=${BASH_REMATCH[2]}
    total_cpus=$((total_cpus * v))
    case "$key" in
      sockets|dies|threads) shape+=("--$key" "$v") ;;
      clusters) [ "$v" = 1 ] || die "--smp clusters=$v: vmscale guest builds no clusters" ;;
    esac
  done
  shape+=(--cpus "$total_cpus")
else
  shape+=(--cpus $((nodes * cpus_per_node)))
fi
shape+=(--mem "$(((nodes + memory_only) * mem_per_node))M")
[ -z "$dist" ] || shape+=(--distance "$dist")
[ -z "$cpu_model" ] || shape+=(--cpu "$cpu_model")

# --- The guest's commands -------------------------------------------------
default_suite() {
  cat <<'EOF'
vmscale sysinfo
vmscale sysinfo --json > /out/sysinfo.json
vmscale run numa01 --size 32M --loops 150 --reps 1 --warmup 0 --interval 500ms --knob numa_balancing=0,1 --label vm-numa01
vmscale run numa01-threadlocal --size 32M --loops 400 --reps 1 --warmup 0 --interval 500ms --label vm-numa01-threadlocal
vmscale run numa02 --size 32M --loops 400 --reps 1 --warmup 0 --interval 500ms --label vm-numa02
vmscale run pft --tasks "$(nproc)" --size 64M --pin spread --reps 3 --warmup 1 --label vm-pft-spread
EOF
}
setup=()
if [ ${#guest_commands[@]} -gt 0 ]; then
  for c in "${guest_commands[@]}"; do setup+=(--setup "$c"); done
else
  while IFS= read -r c; do setup+=(--setup "$c"); done < <(default_suite)
fi

# --- Boot, run, bring back -------------------------------------------------
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
[ -n "$out" ] || out=$work/out
mkdir -p "$out"
global=()
[ -z "$db" ] || global=(--db "$db")
import=()
[ "$do_import" = 1 ] || import=(--no-merge)
# An empty --label keeps the labels the guest commands give their runs.
rc=0
"$vmscale" "${global[@]}" guest --kernel "$kernel_deb" --label '' --accel "$accel" \
  "${shape[@]}" --timeout "${timeout_s}s" --out "$out/.guest" "${import[@]}" \
  "${setup[@]}" >&2 || rc=$?
# The guest's files where earlier versions of this script put them.
guest_files=$out/.guest/round-1/kernel-1
if [ -d "$guest_files/results" ]; then
  cp -a "$guest_files/results/." "$out/"
  [ ! -f "$out/setup.log" ] || cp "$out/setup.log" "$out/guest.log"
  [ ! -f "$out/setup.status" ] || cp "$out/setup.status" "$out/status"
fi
[ ! -f "$guest_files/console.log" ] || cp "$guest_files/console.log" "$out/console.log"
[ "$rc" = 0 ] || { echo "numa-vm: vmscale guest failed (exit $rc), see $out" >&2; exit "$rc"; }
echo "numa-vm: the guest's runs are in ${db:-the default store} (label vm-*; guest files in $out)" >&2
