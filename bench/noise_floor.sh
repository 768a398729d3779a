#!/usr/bin/env bash
# How close vmscale's intervals come to the machine's noise floor, and
# whether sampling cases in turn tightens case-to-case comparisons.
#
# 1. Floor: for 1 and 2 tasks, one pft sample of vmscale and one of the
#    minimal C reference loop (bench/pft_ref.c) in turn (their order turned
#    every round) until BUDGET is spent, so both get the same time and the
#    same stretches of the machine. For each: the 95 % interval of the
#    median of fault/wsec by order statistics (as vmscale's stopping rule),
#    as +-% of the median; the figure is vmscale's half-width / the
#    reference's (target <= 1.2).
# 2. Case-to-case: `run pft --tasks 1,2 --reps N` K times with this binary
#    (cases sampled in turn, 1 2, 2 1, ...) and K times with OTHER (e.g.
#    main's binary before the change: one case after the other), the runs
#    alternated. Per run: the ratio 2 tasks / 1 task of the median
#    fault/wsec, its 95 % interval (paired by round where the cases were
#    sampled in turn, Welch on logs where not), and over the K runs the
#    spread of that ratio.
#
# usage: bench/noise_floor.sh [BUDGET_S] [SIZE] [OTHER] [K] [N]
#        (defaults 60, 1G, none (part 2 left out), 3, 15)
#   VMSCALE=path  the binary measured (default target/release/vmscale)
set -euo pipefail
cd "$(dirname "$0")/.."
budget=${1:-60}
size=${2:-1G}
other=${3:-}
k=${4:-3}
n=${5:-15}
vmscale=${VMSCALE:-target/release/vmscale}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cc -O2 -pthread -o "$work/pft_ref" bench/pft_ref.c
[ -x "$vmscale" ] || cargo build --release --quiet
python3 - "$work" "$budget" "$size" "$vmscale" "$other" "$k" "$n" <<'PY'
import json, math, os, random, statistics as st, subprocess, sys, time
work, budget, size, vmscale, other, K, N = sys.argv[1:]
budget, K, N = float(budget), int(K), int(N)
units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
total = int(float(size[:-1]) * units[size[-1].upper()]) if size[-1].upper() in units \
    else int(size)

def load():
    return " ".join(open("/proc/loadavg").read().split()[:3])

def median_ci(v):
    """The order-statistics 95 % CI of the median, as (lo, hi) or None."""
    v, n = sorted(v), len(v)
    k = 0
    for j in range(1, n // 2 + 1):
        if sum(math.comb(n, i) for i in range(j)) / 2 ** n <= 0.025:
            k = j
    return (v[k - 1], v[n - k]) if k >= 1 else None

def half(v):
    ci, m = median_ci(v), st.median(v)
    return max(ci[1] - m, m - ci[0]) / m if ci else float("inf")

def vm(binary, args, db):
    env = dict(os.environ, VMSCALE_DB=db)
    out = subprocess.run([binary, "run", "pft", *args, "--json"], check=True,
                         capture_output=True, text=True, env=env).stdout
    return json.loads(out)

def ref(tasks):
    out = subprocess.run([f"{work}/pft_ref", str(tasks), str(total // tasks)], check=True,
                         capture_output=True, text=True).stdout
    return float(out.split()[0])

print(f"# floor: {budget:.0f} s per task count, {size}, vmscale {vmscale}; load {load()}")
for tasks in (1, 2):
    a, b, r, t0 = [], [], 0, time.monotonic()
    while time.monotonic() - t0 < budget:
        for side in (("vm", "ref") if r % 2 == 0 else ("ref", "vm")):
            if side == "ref":
                b.append(ref(tasks))
            else:
                j = vm(vmscale, ["--tasks", str(tasks), "--size", size, "--reps", "1",
                                 "--warmup", "0", "--pin", "none"], f"{work}/floor.db")
                a.append(j["cases"][0]["samples"][0]["data"]["figures"]["fault/wsec"])
        r += 1
    print(f"tasks {tasks}: n={len(a)} each; median CI +-{100 * half(a):.2f} % vmscale, "
          f"+-{100 * half(b):.2f} % reference; ratio {half(a) / half(b):.2f} "
          f"(CoV {100 * st.stdev(a) / st.mean(a):.1f} % vs {100 * st.stdev(b) / st.mean(b):.1f} %)")
    # The ratio of two order-statistic half-widths is itself noisy: its
    # seeded bootstrap range says how far one run's figure can be trusted.
    rng, rs = random.Random(1), []
    for _ in range(400):
        x, y = [rng.choice(a) for _ in a], [rng.choice(b) for _ in b]
        if half(y) > 0:
            rs.append(half(x) / half(y))
    rs.sort()
    if len(rs) >= 40:
        print(f"  ratio's bootstrap 95 % range {rs[len(rs) // 40]:.2f} .. "
              f"{rs[len(rs) - 1 - len(rs) // 40]:.2f}; deciles / median vmscale "
              f"{' '.join(f'{q / st.median(a):.3f}' for q in st.quantiles(a, n=10))}")
        print(f"  {'':>34}reference "
              f"{' '.join(f'{q / st.median(b):.3f}' for q in st.quantiles(b, n=10))}")
print(f"# load after {load()}")
if not other:
    sys.exit(0)

def t95(df):
    # Student t 0.975 quantiles; 1.96 beyond the table.
    tab = {1: 12.71, 2: 4.30, 3: 3.18, 4: 2.78, 5: 2.57, 6: 2.45, 7: 2.36, 8: 2.31, 9: 2.26,
           10: 2.23, 12: 2.18, 15: 2.13, 20: 2.09, 30: 2.04}
    return tab.get(df) or next((tab[d] for d in sorted(tab) if d >= df), 1.96)

def case_ratio(j):
    """2 tasks / 1 task: ratio of medians, the CI half-width of the ratio
    (paired by round when the samples alternate, else Welch on logs)."""
    c = {c["case"]["tasks"]: c["samples"] for c in j["cases"]}
    get = lambda s: {x["seq"]: math.log(x["data"]["figures"]["fault/wsec"])
                     for x in s if not x["warmup"]}
    one, two = get(c[1]), get(c[2])
    ratio = st.median(math.exp(v) for v in two.values()) / \
        st.median(math.exp(v) for v in one.values())
    taken = lambda s: [x["taken_at"] for x in s if not x["warmup"]]
    interleaved = min(taken(c[2])) < max(taken(c[1]))
    if interleaved:
        d = [two[s] - one[s] for s in one if s in two]
        h = t95(len(d) - 1) * st.stdev(d) / math.sqrt(len(d))
    else:
        x, y = list(one.values()), list(two.values())
        se2 = st.variance(x) / len(x) + st.variance(y) / len(y)
        df = se2 ** 2 / ((st.variance(x) / len(x)) ** 2 / (len(x) - 1)
                         + (st.variance(y) / len(y)) ** 2 / (len(y) - 1))
        h = t95(round(df)) * math.sqrt(se2)
    return ratio, math.exp(h) - 1, interleaved

print(f"# case-to-case: {K} runs each of `run pft --tasks 1,2 --size {size} --reps {N}`, "
      f"this binary and {other} alternated; load {load()}")
got = {"this": [], "other": []}
for i in range(K):
    for name in (("this", "other") if i % 2 == 0 else ("other", "this")):
        binary = vmscale if name == "this" else other
        j = vm(binary, ["--tasks", "1,2", "--size", size, "--reps", str(N)],
               f"{work}/{name}.db")
        got[name].append(case_ratio(j))
for name, v in got.items():
    rs = [x[0] for x in v]
    order = "in turn" if all(x[2] for x in v) else "one after the other"
    sd = st.stdev(math.log(x) for x in rs) * 100 if len(rs) > 1 else float("nan")
    print(f"{name:<5} ({order}): 2/1 ratio per run " + " ".join(f"{x:.3f}" for x in rs)
          + f"; CI +-{100 * st.median(x[1] for x in v):.2f} % (median of runs); "
          f"sd between runs {sd:.2f} %")
print(f"# load after {load()}")
PY
