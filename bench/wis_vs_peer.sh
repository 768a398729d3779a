#!/usr/bin/env bash
# vmscale's `run wis` against will-it-scale's own test binaries, paired and
# interleaved: in every round one run of each program for one test, mode
# and task count, their order turned every round, so a slow stretch of the
# machine lands on all alike. will-it-scale runs `-t TASKS -s 5` (its five
# 1-second warm-up totals, then the average of five); vmscale runs `--time
# 1 --reps 5 --warmup 1` (median of five 1-second samples). Printed: each
# round's ops/s, ops per CPU second (user + system: time spent off the CPU
# under other load does not dilute it), faults per op and load, then the
# median and range of the per-round ratios vmscale / will-it-scale: of
# each tool's own figure (will-it-scale's average, vmscale's median), and
# like for like, the mean of each tool's five seconds and their median.
#
# will-it-scale is not part of this repository: build it elsewhere
# (github.com/antonblanchard/will-it-scale, `make` with libhwloc-dev) and
# name its directory.
#
# A second vmscale binary (OTHER, e.g. main's before a change to the timed
# path) joins every round as a third program: its ratio to the peer and
# this binary's ratio to it are printed too.
#
# usage: bench/wis_vs_peer.sh WIS_DIR [ROUNDS] [TEST] [TASKS] [MODE] [OTHER]
#   defaults: 5 rounds, page_fault3, 2 tasks, thread
#   VMSCALE=path  the binary measured (default target/release/vmscale)
#   PEER_ARGS=... more arguments for will-it-scale (e.g. -n: no affinity)
#   VMSCALE_ARGS=... more arguments for `run wis` (e.g. --pin none)
#   ASLR=off      run both programs under `setarch -R` (no address-space
#                 randomisation), as will-it-scale's runtest.py runs its tests
set -euo pipefail
cd "$(dirname "$0")/.."
wis=${1:?usage: bench/wis_vs_peer.sh WIS_DIR [ROUNDS] [TEST] [TASKS] [MODE] [OTHER]}
rounds=${2:-5}
test=${3:-page_fault3}
tasks=${4:-2}
mode=${5:-thread}
other=${6:-}
vmscale=${VMSCALE:-target/release/vmscale}
# will-it-scale's binaries are TEST_threads and TEST_processes.
case $mode in
  thread) peer="$wis/${test}_threads" ;;
  process) peer="$wis/${test}_processes" ;;
  *) echo "MODE is thread or process, not $mode" >&2; exit 2 ;;
esac
[ -x "$peer" ] || { echo "no $peer: build will-it-scale there first (make, with libhwloc-dev installed)" >&2; exit 2; }
[ -x "$vmscale" ] || { echo "no $vmscale: cargo build --release" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 - "$work" "$rounds" "$test" "$tasks" "$mode" "$peer" "$vmscale" "$other" <<'PY'
import json, os, pty, resource, statistics as st, subprocess, sys, threading
work, rounds, test, tasks, mode, peer, vmscale, other = sys.argv[1:]
rounds = int(rounds)
progs = ["peer", "vmscale"] + (["other"] if other else [])
bins = {"vmscale": vmscale, "other": other}
PEER_LIMIT_S = 60
EXIT_GRACE_S = 5
peer_args = os.environ.get("PEER_ARGS", "").split()
vmscale_args = os.environ.get("VMSCALE_ARGS", "").split()
fixed = ["setarch", "-R"] if os.environ.get("ASLR") == "off" else []

def load():
    return float(open("/proc/loadavg").read().split()[0])

def cpu_s(pid, seen):
    """User + system seconds of process `pid` (all its threads) and of its
    children (will-it-scale's processes), and whether every process seen
    before was read now. `seen` keeps each process's last value, so the
    sum never goes down; but a child the peer kills at its last total is
    gone from /proc before that total is read, and its last second is
    missing from the sum: such a reading is marked incomplete (it counted
    four seconds of CPU for five of operations in every process run)."""
    def one(p):
        try:
            f = open(f"/proc/{p}/stat").read().rsplit(")", 1)[1].split()
        except OSError:
            return False
        seen[p] = (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")
        return True
    before = set(seen)
    read = {p for p in [str(pid)] + open(f"/proc/{pid}/task/{pid}/children").read().split()
            if one(p)}
    return sum(seen.values()), before <= read

def pty_lines(f):
    """The lines read from a pseudo-terminal's master until the other side
    is closed (Linux then fails the read with EIO instead of an end)."""
    try:
        yield from f
    except OSError:
        return

def one(prog):
    """ops/s, ops per CPU second and faults/op of one run of `prog`. The
    peer's CPU time is read from /proc at each 1-second total it prints
    after its warm-up (its stdout a pseudo-terminal, so its C library
    writes each line at once; stdbuf would preload a library into it and
    move its heap: under setarch -R that halved brk1's figure), so its start-up and
    first pass are left out as vmscale's are."""
    if prog == "peer":
        r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        master, slave = pty.openpty()
        p = subprocess.Popen(fixed + [peer, "-t", tasks, "-s", "5"] + peer_args,
                             stdout=slave, stdin=subprocess.DEVNULL)
        os.close(slave)
        lines = open(master, encoding="utf-8", errors="replace")
        # Its run takes about 11 s. One that never ends is killed and the
        # round left out. will-it-scale ends its threads with an
        # asynchronous pthread_cancel: one cancelled inside malloc or free
        # keeps its arena's lock and then waits for it on its way out
        # (tcache_thread_shutdown), and the main thread waits in
        # pthread_join for good (malloc1_threads here, gdb). That comes
        # after its average is printed, so the figure stands: a peer still
        # running EXIT_GRACE_S after its average is killed, its round kept.
        fired = threading.Event()
        def expire():
            fired.set()
            p.kill()
        watchdog = threading.Timer(PEER_LIMIT_S, expire)
        watchdog.start()
        measuring, marks, ops, all_ops, avg, seen = False, [], 0.0, 0.0, None, {}
        totals = []
        for line in pty_lines(lines):
            if "total:" in line:
                n = float(line.rsplit("total:", 1)[1])
                all_ops += n
                if measuring:
                    ops += n
                    totals.append(n)
                    marks.append(cpu_s(str(p.pid), seen))
            if line.startswith("measurement"):
                measuring = True
                marks.append(cpu_s(str(p.pid), seen))
            if line.startswith("average:"):
                avg = float(line.split(":")[1])
                break
        hung_at_exit = False
        try:
            p.wait(timeout=EXIT_GRACE_S)
        except subprocess.TimeoutExpired:
            hung_at_exit = True
            p.kill()
            p.wait()
            print(f"  peer     still running {EXIT_GRACE_S} s after its average: killed,"
                  " its figure kept")
        watchdog.cancel()
        lines.close()
        r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        if fired.is_set():
            print(f"  peer     killed after {PEER_LIMIT_S} s ({len(totals)} totals printed);"
                  " round left out")
            return None
        if (p.returncode != 0 and not hung_at_exit) or avg is None or len(marks) < 2:
            sys.exit(f"{peer} failed (exit {p.returncode})")
        # Ops per CPU second over the totals up to the last complete
        # reading of the CPU time.
        last = max(i for i, (_, whole) in enumerate(marks) if whole or i == 0)
        if last == 0:
            sys.exit(f"{peer}: no complete reading of its CPU time")
        per_cpu = sum(totals[:last]) / (marks[last][0] - marks[0][0])
        return (avg, per_cpu, (r1.ru_minflt - r0.ru_minflt) / all_ops,
                avg, st.median(totals))
    env = dict(os.environ, VMSCALE_DB=f"{work}/{prog}.db")
    out = subprocess.run(fixed + [bins[prog], "run", "wis", "--test", test, "--mode", mode,
                          "--tasks", tasks, "--time", "1", "--reps", "5",
                          "--warmup", "1", "--json"] + vmscale_args, check=True,
                         capture_output=True, text=True, env=env, timeout=300).stdout
    samples = json.loads(out)["cases"][0]["samples"]
    figs = [s["data"]["figures"] for s in samples]
    return (st.median(f["ops/s"] for f in figs),
            st.median(f["ops"] / (f["user"] + f["system"]) for f in figs),
            st.median(f.get("faults/op", float("nan")) for f in figs),
            st.mean(f["ops/s"] for f in figs), st.median(f["ops/s"] for f in figs))

print(f"# {test} {mode} x{tasks}, {rounds} rounds, vmscale {vmscale}"
      + (f", other {other}" if other else "")
      + (f", peer args {' '.join(peer_args)}" if peer_args else "")
      + (f", vmscale args {' '.join(vmscale_args)}" if vmscale_args else "")
      + (", both under setarch -R" if fixed else "")
      + f"; load {load():.1f}")
res = {p: [] for p in progs}
for r in range(rounds):
    k = r % len(progs)
    print(f"round {r + 1}:")
    got = {}
    for prog in progs[k:] + progs[:k]:
        before = load()
        figs = one(prog)
        if figs is None:
            break
        ops, per_cpu, fpo, mean, median = figs
        got[prog] = (ops, per_cpu, mean, median)
        print(f"  {prog:<8} {ops:9.0f} ops/s {per_cpu:9.0f} ops/cpu-s"
              f" {fpo:.3f} faults/op, load {before:.1f}")
    if len(got) == len(progs):
        for prog in progs:
            res[prog].append(got[prog])
print(f"# load after {load():.1f}")
if not res["peer"]:
    sys.exit("no round with every program's figure: nothing to compare")
for i, what in ((0, "ops/s"), (1, "ops/cpu-s"), (2, "mean ops/s"), (3, "median ops/s")):
    print(f"{what} medians: " + ", ".join(f"{p} {st.median(x[i] for x in res[p]):.0f}"
                                          for p in progs))
    pairs = [("vmscale", "peer")] + ([("other", "peer"), ("vmscale", "other")] if other else [])
    for a, b in pairs:
        v = [x[i] / y[i] for x, y in zip(res[a], res[b])]
        print(f"  {a}/{b:<8} median {st.median(v):.3f}  range {min(v):.3f} .. {max(v):.3f}"
              f"  (n={len(v)} rounds)")
PY
