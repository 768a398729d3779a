#!/usr/bin/env bash
# `vmscale bisect --kernel` over Debian's own series of kernels: the
# versioned packages linux-image-6.1.0-FROM-FLAVOUR-amd64 ... -TO-, in ABI
# order, downloaded with apt-get download (not installed) into DIR/debs.
# The first is the good end, the last the bad one. Without --planted the
# series is one flavour and any difference found is a real one. With
# --planted K the kernels from 6.1.0-K on are the generic flavour, every
# guest boots with page_poison=1, and so the step appears at 6.1.0-K:
# the cloud flavour is built without CONFIG_PAGE_POISONING and ignores
# the option, the generic one poisons each freed page and checks the
# poison when the page is allocated again (in the anonymous fault path).
# Prints the bisection's report and its wall time.
#
# usage: bench/bisect-debian.sh [--vmscale BIN] [--from N] [--to N]
#          [--flavour cloud|generic] [--planted K] [DIR] [-- BISECT_OPTION...]
#
# BISECT_OPTIONs go to `vmscale bisect` before the plan (default
# `--accel tcg --mem 512M`); the plan is `run pft --tasks 1 --size 16M
# --reps 3 --warmup 0`.
#
# Needs apt-get (Debian 12's repositories), qemu-system-x86,
# busybox-static.
set -euo pipefail

die() { echo "bisect-debian: $*" >&2; exit 2; }
vmscale=${VMSCALE:-target/release/vmscale}
from=47
to=56
flavour=cloud
planted=
dir=/var/tmp/vmscale-bisect-debian
while [ $# -gt 0 ]; do
  case "$1" in
    --vmscale) vmscale=$2; shift 2 ;;
    --from) from=$2; shift 2 ;;
    --to) to=$2; shift 2 ;;
    --flavour) flavour=$2; shift 2 ;;
    --planted) planted=$2; shift 2 ;;
    --) shift; break ;;
    -*) die "unknown option $1" ;;
    *) dir=$1; shift ;;
  esac
done
opts=("$@")
[ ${#opts[@]} -gt 0 ] || opts=(--accel tcg --mem 512M)
[ -z "$planted" ] || opts+=(--append page_poison=1)
[[ "$from" =~ ^[0-9]+$ && "$to" =~ ^[0-9]+$ ]] || die "--from and --to take ABI numbers (47, 56)"
[ "$from" -lt "$to" ] || die "--from must be below --to"
case "$flavour" in cloud) suffix=cloud-amd64 ;; generic) suffix=amd64 ;;
  *) die "--flavour takes cloud or generic" ;; esac
if [ -n "$planted" ]; then
  [[ "$planted" =~ ^[0-9]+$ ]] && [ "$planted" -gt "$from" ] && [ "$planted" -le "$to" ] ||
    die "--planted takes an ABI number after --from, up to --to"
  [ "$flavour" = cloud ] || die "--planted switches cloud to generic: give --flavour cloud"
fi
command -v apt-get >/dev/null || die "no apt-get: this bench needs Debian's repositories"
[ -x "$vmscale" ] || die "$vmscale: not built (cargo build --release)"

debs=$dir/debs
mkdir -p "$debs"
kernels=()
for n in $(seq "$from" "$to"); do
  s=$suffix
  [ -n "$planted" ] && [ "$n" -ge "$planted" ] && s=amd64
  pkg=linux-image-6.1.0-$n-$s
  found=$(ls "$debs/${pkg}"_*.deb 2>/dev/null | head -1 || true)
  if [ -z "$found" ]; then
    (cd "$debs" && apt-get download -o APT::Sandbox::User=root "$pkg" >/dev/null) ||
      die "apt-get download $pkg failed (apt-get update? Debian 12 holds 6.1.0-47 to -56)"
    found=$(ls "$debs/${pkg}"_*.deb | head -1)
  fi
  kernels+=(--kernel "$found")
done

db=$dir/bench.db
echo "bisect-debian: $(( ${#kernels[@]} / 2 )) kernels 6.1.0-$from to -$to ($flavour${planted:+, generic from $planted}); load $(cut -d' ' -f1-3 /proc/loadavg)"
start=$(date +%s)
"$vmscale" --db "$db" bisect "${kernels[@]}" "${opts[@]}" \
  -- run pft --tasks 1 --size 16M --reps 3 --warmup 0
end=$(date +%s)
echo "bisect-debian: $((end - start)) s wall; load $(cut -d' ' -f1-3 /proc/loadavg)"
