#!/usr/bin/env bash
# Fidelity of vmscale's pft against the minimal C reference loop
# (bench/pft_ref.c): in every round, for 1 and then 2 tasks (the order
# turned every round), one sample of each program, their order turned every
# round too, so a slow stretch of the machine lands on both alike. The
# figure is the per-round ratio vmscale / reference of fault/wsec; printed
# are its median and range over the rounds, the medians of each side, and
# vmscale's user/system share beside the reference's. The same ratios of
# faults per CPU second (flt/cpu/s: user + system time, which time spent
# off the CPU under other load does not dilute) follow as "cpu".
#
# A second vmscale binary (OTHER, e.g. main's before a change to the timed
# path) joins every round as a third program: its ratio to the reference
# and this binary's ratio to it are printed too.
#
# usage: bench/pft_vs_ref.sh [ROUNDS] [SIZE] [OTHER]  (defaults 10, 1G total)
#   VMSCALE=path  the binary measured (default target/release/vmscale,
#                 built if absent)
#   PIN=none      vmscale's --pin (the reference does not pin)
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-10}
size=${2:-1G}
other=${3:-}
vmscale=${VMSCALE:-target/release/vmscale}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cc -O2 -pthread -o "$work/pft_ref" bench/pft_ref.c
[ -x "$vmscale" ] || cargo build --release --quiet
python3 - "$work" "$rounds" "$size" "$vmscale" "${PIN:-none}" "$other" <<'PY'
import json, os, statistics as st, subprocess, sys
work, rounds, size, vmscale, pin, other = sys.argv[1:]
rounds = int(rounds)
units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
total = int(float(size[:-1]) * units[size[-1].upper()]) if size[-1].upper() in units \
    else int(size)
progs = ["ref", "vmscale"] + (["other"] if other else [])
bins = {"vmscale": vmscale, "other": other}

def load():
    return " ".join(open("/proc/loadavg").read().split()[:3])

def one(prog, tasks):
    """fault/wsec and user/system of one sample of `prog`."""
    if prog == "ref":
        out = subprocess.run([f"{work}/pft_ref", str(tasks), str(total // tasks)],
                             check=True, capture_output=True, text=True).stdout.split()
        rate, user, sys_ = float(out[0]), float(out[1]), float(out[2])
        cpu = float(out[3]) / (user + sys_) if user + sys_ > 0 else float("nan")
    else:
        env = dict(os.environ, VMSCALE_DB=f"{work}/{prog}.db")
        out = subprocess.run([bins[prog], "run", "pft", "--tasks", str(tasks), "--size",
                              size, "--reps", "1", "--warmup", "0", "--pin", pin, "--json"],
                             check=True, capture_output=True, text=True, env=env).stdout
        f = json.loads(out)["cases"][0]["samples"][0]["data"]["figures"]
        rate, user, sys_ = f["fault/wsec"], f["user"], f["system"]
        cpu = f.get("flt/cpu/s", float("nan"))
    return rate, (user / sys_ if sys_ > 0 else 0.0), cpu

print(f"# {rounds} rounds, {size} per case in total, vmscale {vmscale}"
      + (f", other {other}" if other else "") + f", pin {pin}; load {load()}")
res = {(p, t): [] for p in progs for t in (1, 2)}
for r in range(rounds):
    for tasks in ((1, 2) if r % 2 == 0 else (2, 1)):
        k = r % len(progs)
        for prog in progs[k:] + progs[:k]:
            res[(prog, tasks)].append(one(prog, tasks))
print(f"# load after {load()}")

def ratios(a, b, t, i=0):
    return [x[i] / y[i] for x, y in zip(res[(a, t)], res[(b, t)])]

for tasks in (1, 2):
    med = {p: st.median(x[0] for x in res[(p, tasks)]) for p in progs}
    us = {p: st.median(x[1] for x in res[(p, tasks)]) for p in progs}
    pairs = [("vmscale", "ref")] + ([("other", "ref"), ("vmscale", "other")] if other else [])
    lines = [(f"{a}/{b}", ratios(a, b, tasks)) for a, b in pairs]
    lines += [(f"cpu {a}/{b}", ratios(a, b, tasks, 2)) for a, b in pairs]
    print(f"tasks {tasks}: fault/wsec medians " +
          ", ".join(f"{p} {med[p]:.0f}" for p in progs) +
          "; user/system " + ", ".join(f"{p} {100 * us[p]:.2f} %" for p in progs))
    for name, v in lines:
        print(f"  {name:<18} median {st.median(v):.3f}  range {min(v):.3f} .. {max(v):.3f}"
              f"  (n={len(v)} rounds)")
PY
