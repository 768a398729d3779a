#!/usr/bin/env bash
# CPU time per 4 KiB block of lru-file-readonce's readers: coreutils dd as
# the suite's script runs it against vmscale's readers (docs/vms.md, "dd
# reads into a buffer that starts on a page").
#
# dd's side is made as the script makes it, with vmscale's plan's sizes: a
# tmpfs of the modelled MemTotal holding a sparse ext4 image, loop-mounted;
# a memory cgroup of the plan's limit; per task a sparse file of the plan's
# size and `timeout -s INT R dd bs=4k if=FILE of=/dev/null`. Its CPU time
# is the readers' own (getrusage of the waited children: dd and timeout).
# vmscale's is that of `run vms --case lru-file-readonce` for R seconds
# less that of a 0.05 s run (its set-up and tear-down), over the bytes the
# longer run read more. Rounds interleave dd and each binary (the order
# turned every round); printed are medians of user and system ns a block
# and KB/s (summed over the readers).
#
#   bench/vms-dd-cost.sh [ROUNDS]
#   VMSCALE=path   the binary measured (default target/release/vmscale)
#   OTHER=path     a second binary (e.g. main's before a change)
#   SIZE=1/256 RUNTIME=2 TASKS=2   as vmscale's options
#
# Needs root (mount, loop device, cgroup); everything made is undone on
# exit, also on Ctrl-C.
set -euo pipefail
cd "$(dirname "$0")/.."
[ "$(id -u)" = 0 ] || { echo "bench/vms-dd-cost.sh needs root" >&2; exit 2; }
vmscale=${VMSCALE:-target/release/vmscale}
[ -x "$vmscale" ] || cargo build --release --quiet
work=$(mktemp -d /tmp/vmscale-dd-cost.XXXXXX)
cleanup() {
  umount "$work/t/m" 2>/dev/null || true
  umount "$work/t" 2>/dev/null || true
  [ -f "$work/memcg" ] && rmdir "$(cat "$work/memcg")" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
python3 - "$work" "${1:-5}" "$vmscale" "${OTHER:-}" "${SIZE:-1/256}" "${RUNTIME:-2}" \
  "${TASKS:-2}" <<'PY'
import json, os, re, resource, statistics as st, subprocess, sys, time

work, rounds, vmscale, other, size, runtime, tasks = sys.argv[1:]
rounds, tasks = int(rounds), int(tasks)
CASE = "lru-file-readonce"
env = dict(os.environ, VMSCALE_DB=f"{work}/vmscale.db")

def children():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime, r.ru_stime

plan = json.loads(subprocess.run(
    [vmscale, "run", "vms", "--case", CASE, "--tasks", str(tasks), "--size", size,
     "--dry-run", "--json"], check=True, capture_output=True, text=True, env=env).stdout)
sizes, case = plan["sizes"], plan["case_sizes"][0]
mem, file_bytes, limit = sizes["mem"], case["amount"]["file"], case["room"]["memcg"]

def memcg_dir():
    """A new cgroup under ours in the v1 memory hierarchy, else at the v2
    root (as vmscale's set-up makes its own)."""
    for line in open("/proc/self/cgroup"):
        _, ctl, path = line.rstrip("\n").split(":", 2)
        if "memory" in ctl.split(","):
            return f"/sys/fs/cgroup/memory{path}/vmsbench-dd-{os.getpid()}", "memory.limit_in_bytes"
    return f"/sys/fs/cgroup/vmsbench-dd-{os.getpid()}", "memory.max"

def dd_run():
    """The suite's readers: (blocks, user s, system s, KB/s summed)."""
    t, m = f"{work}/t", f"{work}/t/m"
    os.makedirs(t, exist_ok=True)
    subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={mem}", "vmsbench-dd", t], check=True)
    cg, knob = memcg_dir()
    try:
        subprocess.run(["truncate", "-s", str(mem), f"{t}/img"], check=True)
        subprocess.run(["mkfs.ext4", "-q", "-F", f"{t}/img"], check=True)
        os.mkdir(m)
        subprocess.run(["mount", "-o", "loop", f"{t}/img", m], check=True)
        os.mkdir(cg)
        open(f"{work}/memcg", "w").write(cg)
        open(f"{cg}/{knob}", "w").write(str(limit))
        files = [f"{m}/f{i}" for i in range(tasks)]
        for f in files:
            subprocess.run(["truncate", "-s", str(file_bytes), f], check=True)
        join = lambda: open(f"{cg}/cgroup.procs", "w").write(str(os.getpid()))
        u0, s0 = children()
        ps = [subprocess.Popen(["timeout", "--foreground", "-s", "INT", runtime, "dd", "bs=4k",
                                f"if={f}", "of=/dev/null"], stderr=subprocess.PIPE, text=True,
                               preexec_fn=join) for f in files]
        out = [p.communicate()[1] for p in ps]
        u1, s1 = children()
    finally:
        subprocess.run(["umount", m], check=False)
        subprocess.run(["umount", t], check=True)
        for _ in range(50):
            try:
                os.rmdir(cg)
                break
            except FileNotFoundError:
                break
            except OSError:
                time.sleep(0.1)
        if os.path.exists(f"{work}/memcg"):
            os.unlink(f"{work}/memcg")
    got = [re.search(r"^(\d+) bytes .* copied, ([0-9.]+) s", o, re.M) for o in out]
    if not all(got):
        sys.exit("dd printed no figure: " + " | ".join(out))
    b = sum(int(g.group(1)) for g in got)
    kbps = sum((int(g.group(1)) >> 10) / float(g.group(2)) for g in got)
    return b / 4096, u1 - u0, s1 - s0, kbps

def vm_once(binary, secs):
    u0, s0 = children()
    r = subprocess.run([binary, "run", "vms", "--case", CASE, "--tasks", str(tasks), "--size",
                        size, "--runtime", str(secs), "--reps", "1", "--warmup", "0", "--json"],
                       capture_output=True, text=True, env=env)
    u1, s1 = children()
    if r.returncode != 0:
        sys.exit(f"{binary} failed: {r.stderr.strip()[-300:]}")
    d = json.loads(r.stdout)["cases"][0]["samples"][-1]["data"]
    return sum(t["bytes"] for t in d["tasks"]), u1 - u0, s1 - s0, d["figures"]["throughput"]

def vm_run(binary):
    """vmscale's readers: a runtime's run less a 0.05 s run."""
    b, u, s, kbps = vm_once(binary, runtime)
    b0, u0, s0, _ = vm_once(binary, 0.05)
    return (b - b0) / 4096, u - u0, s - s0, kbps

sides = {"dd": dd_run, "vmscale": lambda: vm_run(vmscale)}
if other:
    sides["other"] = lambda: vm_run(other)
res = {k: [] for k in sides}
load = lambda: " ".join(open("/proc/loadavg").read().split()[:3])
print(f"# {rounds} rounds, {CASE}, --size {size}, {tasks} tasks, {runtime} s; vmscale "
      f"{vmscale}" + (f", other {other}" if other else "") + f"; nice {os.nice(0)}; load {load()}")
names = list(sides)
for r in range(rounds):
    for k in names[r % len(names):] + names[:r % len(names)]:
        res[k].append(sides[k]())
    print(f"# round {r + 1} done, load {load()}", flush=True)
print(f"{'side':<8} {'user ns/block':>14} {'sys ns/block':>13} {'KB/s':>11}  (medians of {rounds})")
for k, v in res.items():
    print(f"{k:<8} {st.median(x[1] / x[0] * 1e9 for x in v):>14.0f} "
          f"{st.median(x[2] / x[0] * 1e9 for x in v):>13.0f} {st.median(x[3] for x in v):>11.0f}")
print(f"# load after {load()}")
PY
