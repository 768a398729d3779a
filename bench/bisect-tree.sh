#!/usr/bin/env bash
# `vmscale bisect --tree` over eight commits of Debian's linux-source-6.1,
# one of which (the PLANTED-th, default 5) puts a busy loop in
# do_anonymous_page; the others change comments elsewhere in mm/. Makes the
# tree once (DIR/linux), then runs the bisect under TCG with a pft plan and
# prints its summary and its wall time. The first build of a new tree is
# cold (minutes); the other revisions rebuild one file and relink.
#
# usage: bench/bisect-tree.sh [--vmscale BIN] [--planted K] [--make-only] [DIR]
#          [-- BISECT_OPTION...]
#
# BISECT_OPTIONs go to `vmscale bisect` before the plan (default
# `--accel tcg --mem 512M`).
#
# Needs linux-source-6.1, build-essential flex bison bc libelf-dev git,
# qemu-system-x86, busybox-static.
set -euo pipefail

die() { echo "bisect-tree: $*" >&2; exit 2; }
vmscale=${VMSCALE:-target/release/vmscale}
planted=5
make_only=
dir=
while [ $# -gt 0 ]; do
  case "$1" in
    --vmscale) vmscale=$2; shift 2 ;;
    --planted) planted=$2; shift 2 ;;
    --make-only) make_only=1; shift ;;
    --) shift; break ;;
    -*) die "unknown option $1" ;;
    *) dir=$1; shift ;;
  esac
done
opts=("$@")
[ ${#opts[@]} -gt 0 ] || opts=(--accel tcg --mem 512M)
dir=${dir:-/var/tmp/vmscale-bisect-bench}
tarball=/usr/src/linux-source-6.1.tar.xz
[ -f "$tarball" ] || die "apt-get install linux-source-6.1"
case "$planted" in [1-8]) ;; *) die "--planted takes 1 to 8" ;; esac
t=$dir/linux

if [ ! -f "$t/.vmscale-bench-ready" ]; then
  rm -rf "$t"
  mkdir -p "$t"
  (cd "$t" && tar xJf "$tarball" --strip-components=1 &&
    sed -i '/^# Debian packaging/,$d' .gitignore &&
    git init -q -b main . && git add -A &&
    git -c user.name=bench -c user.email=bench@localhost commit -qm 'linux-source-6.1 as packaged' &&
    git tag good)
  files=(mm/mmap.c mm/util.c mm/swap.c mm/rmap.c mm/mprotect.c mm/madvise.c mm/mremap.c mm/mlock.c)
  for k in 1 2 3 4 5 6 7 8; do
    f=${files[$((k - 1))]}
    if [ "$k" = "$planted" ]; then
      python3 - "$t/mm/memory.c" <<'PY'
import sys
p = sys.argv[1]
text = open(p).read()
head = "static vm_fault_t do_anonymous_page(struct vm_fault *vmf)\n{\n"
at = text.index(head) + len(head)
body = at + text[at:].index("\n\n") + 2
spin = ("\t{ volatile unsigned long vmscale_spin; for (vmscale_spin = 0; "
        "vmscale_spin < 2000; vmscale_spin++) ; }\n")
open(p, "w").write(text[:body] + spin + text[body:])
PY
      msg="mm: a busy loop in do_anonymous_page"
    else
      printf '\n/* bench commit %s: a comment only */\n' "$k" >> "$t/$f"
      msg="mm: a comment in $(basename "$f")"
    fi
    (cd "$t" && git -c user.name=bench -c user.email=bench@localhost commit -qam "$msg")
  done
  (cd "$t" && git tag bad && printf '.vmscale-bench-ready\n' > .git/info/exclude)
  touch "$t/.vmscale-bench-ready"
fi
[ -n "$make_only" ] && { echo "$t"; exit 0; }
[ -x "$vmscale" ] || die "$vmscale: not built (cargo build --release)"

export VMSCALE_CACHE_DIR=${VMSCALE_CACHE_DIR:-$dir/cache}
db=$dir/bench.db
echo "bisect-tree: load $(cut -d' ' -f1-3 /proc/loadavg)"
start=$(date +%s)
"$vmscale" --db "$db" bisect --tree "$t" --good good --bad bad "${opts[@]}" \
  -- run pft --tasks 1 --size 16M --reps 3 --warmup 0
end=$(date +%s)
echo "bisect-tree: $((end - start)) s wall (planted at commit $planted of 8);" \
  "load $(cut -d' ' -f1-3 /proc/loadavg)"
