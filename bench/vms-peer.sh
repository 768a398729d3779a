#!/usr/bin/env bash
# vmscale's vms cases side by side with Intel vm-scalability's own case
# scripts and usemem (docs/vms.md, "Side by side with vm-scalability").
#
# vm-scalability is not in this repository and not fetched by this script
# (only package registries are reachable from the CI machine): give a
# local copy of the suite's repository in VMSCALE_VMS_PEER; its usemem is
# built there with the suite's own Makefile if it is missing.
#
# One round runs every case once with each tool, the tool that goes first
# turned every round. vmscale: `run vms --case C --tasks N --size S
# --runtime R --reps 1 --warmup 0` (one sample, cold, as the suite runs a
# case once). The suite: its `case-C` script, unchanged, as lkp-tests runs
# it (hw_vars, mount_tmpfs, create_sparse_root with fs=ext4, the case,
# remove_sparse_root, remove_tmpfs), with nr_task=N and runtime=R, in a
# private mount namespace whose /proc/meminfo and /proc/vmstat show the
# machine vmscale models (MemTotal, MemAvailable, free + file pages and
# swap of vmscale's plan), so the script derives the same sizes; its tmpfs
# is remounted to that MemTotal (shm_size). The cases vmscale runs in a
# memory cgroup (page cache, swap) run in one of the same limit, and the
# swap cases get a zram swap device of the same size for the suite's run
# only. The suite's throughput is summed from its output as lkp-tests'
# stats/vm-scalability sums it (usemem's KB/s lines; dd's bytes >> 10
# over its seconds).
#
# Time: dd is stopped by `timeout R`; usemem stops at its first check
# after more than R whole seconds (tv_sec differences) have passed, so it
# is started on a second's boundary (by the $CMD prefix the scripts put
# before usemem, as lkp-tests puts its logger there) and runs R + 1
# seconds, or longer where its check (every 64 Ki words) comes late: a
# random pass that swaps ran 4 s for R = 2. Throughput is a rate that
# falls as pressure builds, so both tools must run equally long: vmscale
# is given as --runtime the median of the suite's per-task seconds in the
# rounds before (the suite runs first in the first round); before that,
# and with SAME_TIME=0, R for the dd cases and R + 1 for the usemem ones.
#
# Before every run of either tool the bench maps, writes and unmaps the
# memory the case needs (vmscale's plan: its need, at most its cgroup's
# limit), so each run starts with that much memory just freed: without it
# the tool that ran second in a round found the first one's freed pages
# and the other tool had to have them reclaimed from the rest of the
# machine (a 400 MB page-cache read took 1-2 s against 0.5 s here).
# PRIME=0 turns this off.
#
# lru-memcg's script makes a v1 memory cgroup `vmscale` where `mount -t
# cgroup` shows the memory hierarchy and never removes it: in the private
# mount namespace a cgroup the bench made is mounted there, so the
# script's cgroup is made inside it and removed with it after the run.
#
# A run of either tool that ends without its figure (an OOM kill in a
# swap case was seen) is reported with its message, and that round is
# left out of the case's pairs: n says how many rounds were paired.
#
# Printed per case: the medians of each side, the median and range of the
# per-round ratios vmscale / vm-scalability, per task the bytes counted
# and the seconds they took (medians), the bytes read or written per CPU
# second of the workers and its ratio (their CPU time read from /proc
# every 5 ms while they run: dd and usemem, vmscale's task processes), what the case's cgroup counted
# (limit hits: memory.failcnt on v1, memory.events max on v2; pages its
# reclaim stole: memory.stat pgsteal, on v2 only), the pages stolen and
# swapped out system-wide around each run (pgsteal_anon + pgsteal_file,
# which count a cgroup's reclaim too), the pages allocated and the faults
# system-wide around each run (pgalloc_*, pgfault, pgmajfault: where two
# runs read the same bytes, the page cache each filled), the file pages
# read again after their eviction (workingset_refault_file), the idle CPU
# seconds and context switches of the machine during each run (/proc/stat;
# the whole run, so the suite's set-up and its wait for a second's
# boundary count too), the file THPs mapped and the THPs faults allocated
# or fell back from, and what the suite's script ran.
#
# FLIP=FILE:A,B (the knob-flip bench, docs/vms.md "One knob flipped"):
# every case runs under the value A written to FILE (a sysfs or procfs
# knob, e.g. /sys/kernel/mm/transparent_hugepage/enabled:never,always)
# and under B, each tool in each round, the knob written before every
# run; besides the tables per value it prints each tool's percent change
# from A to B (median of the per-round changes) and vmscale's minus the
# suite's in points. FILE's value before is written back on exit, also
# after an error or Ctrl-C. Then the change of each tool's medians, and
# vmscale's minus the suite's with the middle 95 % of its bootstrap draws
# over rounds (the per-round changes each combine four noisy runs).
#
#   VMSCALE_VMS_PEER=DIR bench/vms-peer.sh [ROUNDS] [CASE[@SIZE]...]
#   SIZE=1/16 RUNTIME=2 TASKS=<online CPUs>  as vmscale's options (CASE@SIZE:
#                  that case at that --size)
#   VMSCALE=path   the binary measured (default target/release/vmscale)
#   OTHER=path     a second vmscale binary (e.g. main's before a change),
#                  run in every round too: its ratios are printed as well
#   PRIME=0        no memory made free before each run
#   HOLD_REPORTING=0  leave free page reporting's min_free_ms as it is
#   PRIME_GIB=G    make G GiB free before each run instead (at most half of
#                  MemAvailable): on a guest whose free memory the host
#                  takes back, more of what the run allocates is then backed
#   SAME_TIME=0    vmscale's --runtime R (dd) or R + 1 (usemem), fixed
#   FLIP=FILE:A,B  each case under two values of one knob (above)
#   RAW=FILE       every run's per-task KB/s, bytes and seconds as JSON
#
# Needs root (mounts, loop devices, cgroups, swap). Everything made is
# undone on exit, also on Ctrl-C.
set -euo pipefail
cd "$(dirname "$0")/.."
peer=${VMSCALE_VMS_PEER:?"set VMSCALE_VMS_PEER to a local copy of vm-scalability's repository (github.com/intel/vm-scalability)"}
[ -f "$peer/case-anon-w-seq" ] && [ -f "$peer/hw_vars" ] || {
  echo "VMSCALE_VMS_PEER=$peer holds no vm-scalability (no case-anon-w-seq, hw_vars)" >&2
  exit 2
}
[ "$(id -u)" = 0 ] || { echo "bench/vms-peer.sh needs root" >&2; exit 2; }
[ -x "$peer/usemem" ] || make -C "$peer" usemem >/dev/null
rounds=${1:-5}
shift || true
cases=${*:-anon-w-seq anon-w-rand anon-r-seq anon-cow-seq lru-file-readonce@1/64 lru-file-readtwice@1/64 lru-file-mmap-read@1/64 lru-shm swap-w-seq@1/64 swap-w-rand@1/64}
vmscale=${VMSCALE:-target/release/vmscale}
[ -x "$vmscale" ] || cargo build --release --quiet
work=$(mktemp -d /tmp/vmscale-vms-peer.XXXXXX)
flip=${FLIP:-}
flip_file=${flip%%:*}
if [ -n "${FLIP:-}" ]; then
  [ -w "$flip_file" ] || { echo "FLIP=$FLIP: $flip_file is no writable knob" >&2; exit 2; }
  # THP's files show the choices with the one in force in brackets.
  flip_before=$(sed 's/.*\[\(.*\)\].*/\1/' "$flip_file")
fi
# Free page reporting hands memory freed 2 s ago back to the host, which
# backs it again on its next touch at a tenth of the speed: the run that
# starts later after the bench's prime (the suite's, behind its set-up
# and its wait for a second's boundary) met cold memory (docs/vms.md,
# "mmap-*read-seq-mt"). Where the kernel has min_free_ms, a page must
# stay free 60 s before it is reported while the bench runs.
held=/sys/module/page_reporting/parameters/min_free_ms
if [ "${HOLD_REPORTING:-1}" != 0 ] && [ -w "$held" ]; then
  held_before=$(cat "$held")
  echo 60000 > "$held"
else
  held_before=
fi
cleanup() {
  if [ -n "$held_before" ]; then
    echo "$held_before" > "$held" || echo "could not restore $held to $held_before" >&2
  fi
  if [ -n "${FLIP:-}" ]; then
    echo "$flip_before" > "$flip_file" || echo "could not restore $flip_file to $flip_before" >&2
  fi
  # A swap device or cgroup the suite's run left (also after Ctrl-C).
  if [ -f "$work/zram" ]; then
    id=$(cat "$work/zram")
    swapoff "/dev/zram$id" 2>/dev/null || true
    echo "$id" > /sys/class/zram-control/hot_remove 2>/dev/null || true
  fi
  # Deepest first: lru-memcg's script makes its cgroup inside ours.
  [ -f "$work/memcg" ] && rmdir "$(cat "$work/memcg")"/vmscale "$(cat "$work/memcg")" \
    2>/dev/null || true
  rmdir /tmp/vm-scalability-tmp 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
python3 - "$work" "$rounds" "$peer" "$vmscale" "${OTHER:-}" "${SIZE:-1/16}" "${RUNTIME:-2}" \
  "${TASKS:-$(nproc)}" "${PRIME:-1}" "${SAME_TIME:-1}" "${FLIP:-}" $cases <<'PY'
import json, mmap, os, random, re, statistics as st, subprocess, sys, threading, time

work, rounds, peer, vmscale, other, size, runtime, tasks, prime_on, same_time, flip = \
    sys.argv[1:12]
bases = sys.argv[12:]
# With FLIP each case runs under both values: entry CASE[@SIZE]=VALUE.
flip_file, _, flip_values = flip.partition(":")
values = flip_values.split(",") if flip else []
if flip and len(values) != 2:
    sys.exit(f"FLIP={flip}: give FILE:A,B, two values")
cases = [f"{c}={v}" for c in bases for v in values] if flip else bases
rounds, tasks = int(rounds), int(tasks)
rt = str(int(float(runtime)))  # usemem takes whole seconds
env = dict(os.environ, VMSCALE_DB=f"{work}/vmscale.db")

# The suite's run, in a private mount namespace: the machine vmscale
# models shown in /proc/meminfo and /proc/vmstat, lkp-tests' set-up and
# tear-down around the unchanged case script. CMD logs each command the
# script runs (it prefixes them with $CMD, as lkp-tests' log_test does).
INNER = r'''
mount --bind "$W/meminfo" /proc/meminfo || exit 1
mount --bind "$W/vmstat" /proc/vmstat || exit 1
if [ -n "$MEMCG_AT" ]; then
  # lru-memcg: our cgroup shown as the memory hierarchy's root.
  mkdir -p "$W/cgmnt" && mount --bind "$MEMCG_DIR" "$W/cgmnt" &&
    umount -l "$MEMCG_AT" && mount --move "$W/cgmnt" "$MEMCG_AT" || exit 1
fi
cd "$PEER" || exit 1
# `. case-lru-file-readonce` (lru-memcg) is looked up in PATH by sh.
export fs=ext4 CMD="$W/logcmd" PATH="$PEER:$PATH"
. ./hw_vars
mount_tmpfs
mount -o remount,size=$mem "$TMPFS_MNT" || exit 1
export shm_size=$(($(stat -f -c "%b*%S" "$TMPFS_MNT")))
create_sparse_root
trap 'remove_sparse_root >/dev/null 2>&1; remove_tmpfs' EXIT
[ -z "$JOIN" ] || echo $$ > "$JOIN" || exit 1
./case-$CASE
'''
with open(f"{work}/inner.sh", "w") as f:
    f.write(INNER)
# usemem stops once more than --runtime whole seconds of the wall clock
# have passed since it started (tv_sec differences): started at a second's
# boundary it runs runtime + 1 seconds, and vmscale is given as much.
with open(f"{work}/logcmd", "w") as f:
    f.write('#!/bin/sh\necho "$*" >> "$W/cmds"\n'
            'case "$1" in ./usemem) python3 -c "import time; '
            'time.sleep(1 - time.time() % 1)";; esac\nexec "$@"\n')
os.chmod(f"{work}/logcmd", 0o755)

def load():
    return " ".join(open("/proc/loadavg").read().split()[:3])

def split(entry):
    """CASE, CASE@SIZE or either =VALUE: the case and vmscale's --size."""
    case, _, s = entry.partition("=")[0].partition("@")
    return case, s or size

def set_knob(entry):
    """Writes the FLIP knob's value of this entry, if any."""
    _, _, value = entry.partition("=")
    if value:
        with open(flip_file, "w") as f:
            f.write(value)

def plan(entry):
    """vmscale's plan of a case: its sizes and the modelled machine."""
    case, s = split(entry)
    out = subprocess.run([vmscale, "run", "vms", "--case", case, "--tasks", str(tasks),
                          "--size", s, "--runtime", runtime, "--dry-run", "--json"],
                         check=True, capture_output=True, text=True, env=env).stdout
    return json.loads(out)

def find(obj, key):
    """The first value of `key` anywhere in a JSON document."""
    if isinstance(obj, dict):
        if key in obj:
            return obj[key]
        obj = list(obj.values())
    if isinstance(obj, list):
        for v in obj:
            r = find(v, key)
            if r is not None:
                return r
    return None

def fake_proc(s):
    """meminfo and vmstat of the machine `s` (vmscale's Sizes) models."""
    mi = []
    for line in open("/proc/meminfo"):
        k = line.split(":")[0]
        v = {"MemTotal": s["mem"], "MemAvailable": s["mem_avail"],
             "SwapTotal": s["swap"], "SwapFree": s["swap"]}.get(k)
        mi.append(f"{k}:{v // 1024:>16} kB\n" if v is not None else line)
    vm = []
    for line in open("/proc/vmstat"):
        k = line.split()[0]
        v = {"nr_free_pages": s["reclaimable"] // s["page"], "nr_file_pages": 0}.get(k)
        vm.append(f"{k} {v}\n" if v is not None else line)
    open(f"{work}/meminfo", "w").write("".join(mi))
    open(f"{work}/vmstat", "w").write("".join(vm))

def memcg_root():
    """Our own cgroup in the v1 memory hierarchy (as vmscale's set-up
    uses), else the v2 root."""
    for line in open("/proc/self/cgroup"):
        _, ctl, path = line.rstrip("\n").split(":", 2)
        if "memory" in ctl.split(","):
            return f"/sys/fs/cgroup/memory{path}", 1
    return "/sys/fs/cgroup", 2

def zram(bytes_):
    i = open("/sys/class/zram-control/hot_add").read().strip()
    open(f"{work}/zram", "w").write(i)
    open(f"/sys/block/zram{i}/disksize", "w").write(str(bytes_))
    subprocess.run(["mkswap", f"/dev/zram{i}"], check=True, capture_output=True)
    subprocess.run(["swapon", f"/dev/zram{i}"], check=True)
    return i

def zram_off(i):
    subprocess.run(["swapoff", f"/dev/zram{i}"], check=True)
    open("/sys/class/zram-control/hot_remove", "w").write(i)
    os.unlink(f"{work}/zram")

KB_LINE = re.compile(r"^\.*(\d+) bytes / (\d+) usecs = (\d+) KB.s")
DD_LINE = re.compile(r"(\d+) bytes \([0-9.]+ .B(?:, [0-9.]+ .iB)?\) copied, ([0-9.]+) s, ")

def cgroup_counts(cg, v):
    """What a case's cgroup counted: limit hits and, on v2, pages its
    reclaim stole (v1's memory.stat has no pgsteal)."""
    if v == 1:
        return {"hits": int(open(f"{cg}/memory.failcnt").read()), "steal": None}
    ev = dict(line.split() for line in open(f"{cg}/memory.events"))
    stat = dict(line.split() for line in open(f"{cg}/memory.stat"))
    return {"hits": int(ev.get("max", 0)), "steal": int(stat.get("pgsteal", 0))}

def rmdir_soon(path):
    """rmdir, retried while the cgroup's last tasks finish exiting."""
    for _ in range(50):
        try:
            os.rmdir(path)
            return
        except FileNotFoundError:
            return
        except OSError:
            time.sleep(0.1)
    os.rmdir(path)

def peer_run(entry, p):
    """One run of the suite's case: per task (KB/s, bytes, seconds), and
    its cgroup's counts."""
    case, _ = split(entry)
    s = find(p, "sizes")
    room = find(p, "case_sizes")[0]["room"]
    fake_proc(s)
    join, cg, swap, counted, extra = "", None, None, None, {}
    if room["memcg"]:
        root, v = memcg_root()
        cg = f"{root}/vmsbench-peer-{os.getpid()}"
        os.mkdir(cg)
        open(f"{work}/memcg", "w").write(cg)
        if case == "lru-memcg":
            # Its script makes `vmscale` (mem/3) where the memory
            # hierarchy is mounted: there it finds ours.
            if v != 1:
                sys.exit("lru-memcg's script needs a cgroup v1 memory hierarchy")
            extra = {"MEMCG_DIR": cg, "MEMCG_AT": "/sys/fs/cgroup/memory"}
            counted = f"{cg}/vmscale"
        else:
            open(f"{cg}/memory.limit_in_bytes" if v == 1 else f"{cg}/memory.max", "w") \
                .write(str(room["memcg"]))
            join, counted = f"{cg}/cgroup.procs", cg
    if room["swap"]:
        swap = zram(room["swap"])
    counts = {"hits": None, "steal": None}
    try:
        e = dict(os.environ, W=work, PEER=peer, CASE=case, JOIN=join,
                 nr_task=str(tasks), runtime=rt, **extra)
        r = subprocess.run(["unshare", "--mount", "--propagation", "private", "sh",
                            f"{work}/inner.sh"], capture_output=True, text=True, env=e)
        if counted and os.path.isdir(counted):
            counts = cgroup_counts(counted, v)
    finally:
        if swap is not None:
            zram_off(swap)
        if cg:
            if case == "lru-memcg":
                rmdir_soon(f"{cg}/vmscale")
            rmdir_soon(cg)
            os.unlink(f"{work}/memcg")
    out = []
    for line in r.stdout.splitlines():
        if m := KB_LINE.match(line):
            b, us, kbps = map(int, m.groups())
            out.append((kbps, b, us / 1e6))
        elif m := DD_LINE.search(line):
            b, secs = int(m.group(1)), float(m.group(2))
            out.append(((b >> 10) / secs, b, secs))
    # One line a task (usemem's process or thread, each dd): fewer means
    # a task was killed (the OOM killer was seen in the swap cases).
    want = tasks * (2 if case == "lru-file-readtwice" else 1)
    if len(out) != want:
        if os.path.exists(f"{work}/cmds"):
            os.unlink(f"{work}/cmds")
        raise RunFailed(f"case-{case}: {len(out)} of {want} tasks printed a throughput "
                        f"(exit {r.returncode}): " + last_line(r.stderr or r.stdout))
    if entry not in commands:
        # What the script ran (its sizes), once per case.
        commands[entry] = [c for c in open(f"{work}/cmds").read().splitlines()
                           if c.startswith(("./usemem", "truncate "))
                           and ".img" not in c]
    os.unlink(f"{work}/cmds")
    return out, counts

class RunFailed(Exception):
    """One run of one tool that ended without its figure: reported, and
    the round left out of that case's pairs."""

def last_line(text):
    lines = [l for l in text.splitlines() if l.strip()]
    return lines[-1][:200] if lines else "(nothing printed)"

# The cases whose script bounds dd with `timeout RUNTIME` (exact).
DD = {"lru-file-readonce", "lru-file-readtwice", "lru-memcg"}

def seconds(entry):
    """vmscale's --runtime: as long as the suite's tasks ran (the median
    of its rounds so far), else R for dd and R + 1 for usemem."""
    case, _ = split(entry)
    ran = [x[2] for run in res[(entry, "peer")] if run for x in run]
    if same_time != "0" and ran:
        return round(st.median(ran), 3)
    return float(rt) if case in DD else float(rt) + 1

def vmscale_run(entry, p, binary):
    case, s = split(entry)
    secs = seconds(entry)
    if binary == vmscale:
        given[entry].append(secs)
    r = subprocess.run([binary, "run", "vms", "--case", case, "--tasks", str(tasks),
                        "--size", s, "--runtime", str(secs), "--reps", "1",
                        "--warmup", "0", "--json"],
                       capture_output=True, text=True, env=env)
    if r.returncode != 0:
        raise RunFailed(f"exit {r.returncode}: {last_line(r.stderr)}")
    data = json.loads(r.stdout)["cases"][0]["samples"][-1]["data"]
    res = []
    for t in data["tasks"]:
        kbps, b = t["throughput"], t["bytes"]
        res.append((kbps, b, b / 1024 / kbps if kbps else 0.0))
    f = data["figures"]
    cgroup = find(p, "case_sizes")[0]["room"]["memcg"]
    counts = {"hits": int(f.get("memcg.events.max", 0)) if cgroup else None,
              "steal": int(f["memcg.pgsteal"]) if "memcg.pgsteal" in f else None}
    return res, counts

HELD = "/sys/module/page_reporting/parameters/min_free_ms"

def prime(p):
    """Maps, writes and unmaps the memory the case needs (its plan's need,
    at most its cgroup's limit, at most half of MemAvailable), so the run
    that follows finds it free whichever tool ran before."""
    c = find(p, "case_sizes")[0]
    want = min(c["need"], c["room"]["memcg"] or c["need"])
    if os.environ.get("PRIME_GIB"):
        want = int(float(os.environ["PRIME_GIB"]) * 2**30)
    avail = int(next(l.split()[1] for l in open("/proc/meminfo")
                     if l.startswith("MemAvailable:"))) * 1024
    n = min(want, avail // 2) & ~0xfff
    if n <= 0:
        return
    m = mmap.mmap(-1, n, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    try:
        m.madvise(23)  # MADV_POPULATE_WRITE (Linux 5.14)
    except OSError:
        for i in range(0, n, 4096):
            m[i] = 1
    m.close()

print(f"# {rounds} rounds, --size {size}, --runtime {runtime}, {tasks} tasks, "
      f"vmscale {vmscale}" + (f", other {other}" if other else "")
      + f", vm-scalability {peer}, prime {'on' if prime_on != '0' else 'off'}, "
      f"same time {'on' if same_time != '0' else 'off'}, "
      + (f"page reporting min_free_ms {open(HELD).read().strip()}, "
         if os.path.exists(HELD) else "") +
      f"nice {os.nice(0)}" + (f", {flip_file} {' / '.join(values)}" if flip else "")
      + f"; load {load()}")
# System-wide counters read around every run: the pressure each side met.
CLK = os.sysconf("SC_CLK_TCK")
COUNTERS = ("pswpout", "pgsteal_anon", "pgsteal_file", "pgalloc_dma32", "pgalloc_normal",
            "pgalloc_movable", "pgfault", "pgmajfault", "workingset_refault_file", "thp_file_mapped",
            "thp_fault_alloc", "thp_fault_fallback")

def vmstat():
    v = dict(line.split() for line in open("/proc/vmstat"))
    out = {k: int(v.get(k, 0)) for k in COUNTERS}
    for line in open("/proc/stat"):
        f = line.split()
        if f[0] == "cpu":
            out["idle"] = (int(f[4]) + int(f[5])) / CLK
        elif f[0] == "ctxt":
            out["ctxt"] = int(f[1])
    return out

def proc_stat(pid):
    """A process's name, parent and CPU seconds (user + system), or None."""
    try:
        t = open(f"/proc/{pid}/stat").read()
    except OSError:
        return None
    f = t[t.rindex(")") + 2:].split()
    return t[t.index("(") + 1:t.rindex(")")], int(f[1]), (int(f[11]) + int(f[12])) / CLK

class WorkerCpu:
    """The CPU seconds of a run's workers, read from /proc every 5 ms (the
    last value seen per process): the suite's usemem and dd processes,
    vmscale's tasks (its processes below the first), each a descendant of
    this script. Threads count in their process."""
    def __init__(self, tool):
        self.tool, self.seen, self.stop = tool, {}, False
        self.thread = threading.Thread(target=self.poll)
        self.thread.start()

    def worker(self, comm, ppid):
        me, chain = os.getpid(), []
        while len(chain) < 8 and ppid > 1 and ppid != me:
            chain.append(ppid)
            up = proc_stat(ppid)
            if not up:
                return False
            ppid = up[1]
        if ppid != me:
            return False
        if self.tool == "peer":
            return comm in ("dd", "usemem")
        return comm.startswith("vmscale") and len(chain) >= 1

    def poll(self):
        while not self.stop:
            for d in os.listdir("/proc"):
                s = d.isdigit() and proc_stat(d)
                if s and self.worker(s[0], s[1]):
                    self.seen[d] = s[2]
            time.sleep(0.005)

    def done(self):
        self.stop = True
        self.thread.join()
        return sum(self.seen.values())

tools = ["peer", "vmscale"] + (["other"] if other else [])
binary = {"vmscale": vmscale, "other": other}
res = {(c, t): [] for c in cases for t in tools}
pressure = {(c, t): [] for c in cases for t in tools}
cpu = {(c, t): [] for c in cases for t in tools}
commands, planned = {}, {}
given = {c: [] for c in cases}
for r in range(rounds):
    for c in cases:
        p = plan(c)
        planned.setdefault(c, find(p, "case_sizes")[0]["amount"])
        k = r % len(tools)
        for tool in tools[k:] + tools[:k]:
            set_knob(c)
            if prime_on != "0":
                prime(p)
            before = vmstat()
            workers = WorkerCpu(tool)
            try:
                tasks_out, counts = (peer_run(c, p) if tool == "peer"
                                     else vmscale_run(c, p, binary[tool]))
            except RunFailed as e:
                workers.done()
                cpu[(c, tool)].append(None)
                print(f"# round {r + 1}, {c}, {tool} failed: {e}", flush=True)
                res[(c, tool)].append(None)
                continue
            after = vmstat()
            cpu[(c, tool)].append(workers.done())
            res[(c, tool)].append(tasks_out)
            d = {k: after[k] - before[k] for k in after}
            counts.update(pswpout=d["pswpout"],
                          pgsteal=d["pgsteal_anon"] + d["pgsteal_file"],
                          pgalloc=sum(v for k, v in d.items() if k.startswith("pgalloc")),
                          pgfault=d["pgfault"], pgmajfault=d["pgmajfault"],
                          refault=d["workingset_refault_file"],
                          idle=d["idle"], ctxt=d["ctxt"], thp_file=d["thp_file_mapped"],
                          thp_alloc=d["thp_fault_alloc"], thp_fallback=d["thp_fault_fallback"])
            pressure[(c, tool)].append(counts)
    print(f"# round {r + 1} done, load {load()}", flush=True)
if os.environ.get("RAW"):
    # Every run's per-task (KB/s, bytes, seconds), None for a failed one.
    with open(os.environ["RAW"], "w") as f:
        json.dump({f"{c} {t}": v for (c, t), v in res.items()}, f)

def med(tool, c, i):
    return st.median(x[i] for run in res[(c, tool)] if run for x in run)

def sums(c):
    """Per tool, its throughput summed over tasks in each round in which
    every tool's run of case c ended with its figure."""
    paired = [k for k in range(rounds) if all(res[(c, t)][k] for t in tools)]
    return {t: [sum(x[0] for x in res[(c, t)][k]) for k in paired] for t in tools}

print(f"{'case':<20} {'suite KB/s':>11} {'vmscale':>11} {'ratio':>6} "
      f"{'range':>11} {'n':>2}  {'MB/task':>13} {'s/task':>11}")
for c in cases:
    sm = sums(c)
    if not sm["peer"]:
        print(f"{c:<20} no round in which both ran")
        continue
    ratio = [v / p for v, p in zip(sm["vmscale"], sm["peer"])]
    print(f"{c:<20} {st.median(sm['peer']):>11.0f} {st.median(sm['vmscale']):>11.0f} "
          f"{st.median(ratio):>6.3f} {min(ratio):>5.2f}-{max(ratio):<5.2f} {len(ratio):>2}  "
          f"{med('peer', c, 1) / 1e6:>6.0f} {med('vmscale', c, 1) / 1e6:>6.0f} "
          f"{med('peer', c, 2):>5.2f} {med('vmscale', c, 2):>5.2f}")
print(f"# load after {load()}; MB/task and s/task: suite, then vmscale (medians)")
# Bytes per CPU second of the workers: what the load, which takes CPU time
# from both alike, does not dilute as it dilutes the wall-time rate.
print("# KB per CPU second of the workers (dd, usemem; vmscale's tasks),")
print("# medians, and the median (range) of the per-round ratios, n:")
for c in cases:
    per_cpu = {t: [sum(x[1] for x in run) / 1024 / s if run and s else None
                   for run, s in zip(res[(c, t)], cpu[(c, t)])] for t in tools}
    both = [k for k in range(rounds) if per_cpu["peer"][k] and per_cpu["vmscale"][k]]
    if not both:
        continue
    ratio = [per_cpu["vmscale"][k] / per_cpu["peer"][k] for k in both]
    print(f"#   {c:<24} suite {st.median(per_cpu['peer'][k] for k in both):>10.0f}"
          f"  vmscale {st.median(per_cpu['vmscale'][k] for k in both):>10.0f}"
          f"  {st.median(ratio):.3f} ({min(ratio):.2f}-{max(ratio):.2f}) {len(both)}")
if other:
    print(f"# other vmscale {other}: ratios to the suite and vmscale / other:")
    for c in cases:
        sm = sums(c)
        if not sm["peer"]:
            continue
        o = [a / b for a, b in zip(sm["other"], sm["peer"])]
        vo = [a / b for a, b in zip(sm["vmscale"], sm["other"])]
        print(f"#   {c:<24} other/suite {st.median(o):.3f} ({min(o):.2f}-{max(o):.2f})"
              f"   vmscale/other {st.median(vo):.3f} ({min(vo):.2f}-{max(vo):.2f})")

def mid(c, tool, key, fmt=".0f"):
    v = [x[key] for x in pressure[(c, tool)] if x.get(key) is not None]
    return f"{st.median(v):{fmt}}" if v else "-"

def pair(c, key, width, fmt=".0f"):
    """The suite's and vmscale's medians of `key`, as `suite|vmscale`."""
    return f"{mid(c, 'peer', key, fmt):>{width}}|{mid(c, 'vmscale', key, fmt):<{width}}"

if flip:
    # Each tool's percent change from the first value to the second, per
    # round in which both values ran with every tool; then vmscale's
    # change minus the suite's, in points.
    print(f"# {flip_file}: {values[0]} -> {values[1]}, percent change per round "
          "(median, range, n):")
    for b in bases:
        lo, hi = f"{b}={values[0]}", f"{b}={values[1]}"
        both = [k for k in range(rounds)
                if all(res[(e, t)][k] for e in (lo, hi) for t in tools)]
        n = len(both)
        if not n:
            print(f"#   {b:<24} no round in which both values ran")
            continue
        total = lambda e, t, k: sum(x[0] for x in res[(e, t)][k])
        pct = {t: [100 * (total(hi, t, k) / total(lo, t, k) - 1) for k in both]
               for t in tools}
        cols = [f"{t} {st.median(v):+7.1f} % ({min(v):+.0f}..{max(v):+.0f})"
                for t, v in pct.items()]
        gap = [a - b for a, b in zip(pct["vmscale"], pct["peer"])]
        print(f"#   {b:<24} " + "  ".join(cols) + f"  vmscale-suite {st.median(gap):+.1f} "
              f"points ({min(gap):+.0f}..{max(gap):+.0f}), n {n}")
        # The change of each tool's medians, and vmscale's minus the
        # suite's with the middle 95 % of its bootstrap draws over rounds
        # (a round drawn with its four runs, 4000 draws, seeded): a spread,
        # not an interval whose coverage was checked.
        def moved(ks):
            med = lambda e, t: st.median(total(e, t, k) for k in ks)
            return {t: 100 * (med(hi, t) / med(lo, t) - 1) for t in ("peer", "vmscale")}
        m = moved(both)
        draw = random.Random(42)
        boot = sorted((lambda c: c["vmscale"] - c["peer"])(moved(draw.choices(both, k=n)))
                      for _ in range(4000))
        print(f"#   {'':<24} of the medians: peer {m['peer']:+.1f} %, vmscale "
              f"{m['vmscale']:+.1f} %, vmscale-suite {m['vmscale'] - m['peer']:+.1f} points "
              f"(middle 95 % of draws {boot[99]:+.1f}..{boot[3899]:+.1f})")
print("# reclaim, medians per run: the case cgroup's limit hits and pages its")
print("# reclaim stole (v2 only); pages stolen (pgsteal_anon + _file) and")
print("# swapped out, system-wide; suite | vmscale:")
print(f"#   {'case':<24} {'hits':>13} {'cg steal':>13} {'stolen':>15} {'pswpout':>15}")
for c in cases:
    cols = [pair(c, "hits", 6), pair(c, "steal", 6), pair(c, "pgsteal", 7),
            pair(c, "pswpout", 7)]
    print(f"#   {c:<24} " + " ".join(cols))
print("# pages allocated (pgalloc_*), faults (pgfault, pgmajfault) and file")
print("# refaults (workingset_refault_file), system-wide, medians per run;")
print("# suite | vmscale:")
print(f"#   {'case':<24} {'pgalloc':>19} {'pgfault':>19} {'pgmajfault':>15} {'refault':>19}")
for c in cases:
    cols = [pair(c, "pgalloc", 9), pair(c, "pgfault", 9), pair(c, "pgmajfault", 7),
            pair(c, "refault", 9)]
    print(f"#   {c:<24} " + " ".join(cols))
print("# the machine's idle CPU seconds (idle + iowait) and context switches")
print("# (/proc/stat), file THPs mapped by PMD (vmstat thp_file_mapped), THPs")
print("# a fault allocated and fell back from (thp_fault_alloc, _fallback)")
print("# during each run, medians; suite | vmscale:")
for c in cases:
    cols = [f"idle {pair(c, 'idle', 6, '.2f')}", f"ctxt {pair(c, 'ctxt', 8)}",
            f"thp_file_mapped {pair(c, 'thp_file', 7)}",
            f"thp_fault_alloc {pair(c, 'thp_alloc', 5)}",
            f"fallback {pair(c, 'thp_fallback', 5)}"]
    print(f"#   {c:<24} " + " ".join(cols))
print("# vmscale's --runtime by round (the suite's seconds before it):")
for c in cases:
    print(f"#   {c:<24} " + " ".join(f"{x:g}" for x in given[c]))
print("# sizes: vmscale's per task and file bytes; what the suite's script ran:")
for c in cases:
    a = planned[c]
    print(f"#   {c}: vmscale {a['per_task']} {a['file']}; suite: "
          + "; ".join(commands.get(c, [])[:2]))
PY
