#!/usr/bin/env bash
# Validation (not a test) of `vmscale history`'s change points against
# Apache Otava and MongoDB's signal-processing-algorithms, both from PyPI,
# installed into virtual environments here (neither is a dependency of
# vmscale). The same seeded series go through all three:
#   - series of 20-200 runs, 3-30 samples a run, log-normal noise of 1-10 %
#     per sample and up to 3 % between runs, with 0, 1 or 3 steps of 2-20 %
#     at least 5 runs apart (the simulation of src/history/tests.rs);
#   - vmscale: history::analyse on the samples (the run medians, E-divisive
#     with its permutation test at alpha 0.01, the confirmation by Welch);
#   - Otava: compute_change_points on the runs' medians (its defaults:
#     window 50, max p-value 0.001; and max p-value 0.01);
#   - MongoDB: e_divisive on the runs' medians (its defaults: p 0.05, 100
#     permutations).
# Prints, per kind of series, how many true steps of at least 3x the
# per-run noise each found within one run, how many series without a step
# each flagged, and where vmscale and the others agree.
#
#   bench/history-otava.sh [SERIES_PER_KIND]      (default 40)
#
# Environment: VENV_DIR (default /tmp/vmscale-otava-venvs) keeps the two
# virtual environments between runs.
set -euo pipefail

per_kind=${1:-40}
here=$(cd "$(dirname "$0")/.." && pwd)
venvs=${VENV_DIR:-/tmp/vmscale-otava-venvs}
work=$(mktemp -d /tmp/vmscale-otava.XXXXXX)
trap 'rm -rf "$work"' EXIT

# Two environments: signal-processing-algorithms pins numpy < 2 and a
# gevent that Otava's dependencies would otherwise pull elsewhere.
if [ ! -x "$venvs/otava/bin/python" ]; then
  python3 -m venv "$venvs/otava"
  "$venvs/otava/bin/pip" install -q apache-otava
fi
if [ ! -x "$venvs/spa/bin/python" ]; then
  python3 -m venv "$venvs/spa"
  "$venvs/spa/bin/pip" install -q --only-binary gevent signal-processing-algorithms
fi

(cd "$here" && cargo build -q --release --example bench_history)
bench="$here/target/release/examples/bench_history"

# The series, with their true steps (numpy in Otava's environment).
"$venvs/otava/bin/python" - "$per_kind" "$work/series.json" <<'EOF'
import json, sys
import numpy as np
per_kind, out = int(sys.argv[1]), sys.argv[2]
rng = np.random.default_rng(26)
series = []
for steps in (0, 1, 3):
    for _ in range(per_kind):
        runs = int(rng.integers(20, 201))
        k = int(rng.integers(3, 31))
        sample_sd = rng.uniform(0.01, 0.10)
        run_sd = rng.uniform(0.0, 0.03)
        while True:
            at = sorted(int(a) for a in rng.integers(5, runs - 4, size=steps))
            if all(b - a >= 5 for a, b in zip(at, at[1:])):
                break
        sizes = [float(np.log1p(rng.uniform(0.02, 0.20)) * rng.choice([-1, 1])) for _ in at]
        level = np.zeros(runs)
        for a, s in zip(at, sizes):
            level[a:] += s
        run = level + run_sd * rng.normal(size=runs)
        samples = 100.0 * np.exp(run[:, None] + sample_sd * rng.normal(size=(runs, k)))
        median_sd = sample_sd * np.sqrt(np.pi / 2 / k)
        series.append({
            "kind": steps,
            "steps": at,
            "sizes": sizes,
            "noise": float(np.hypot(run_sd, median_sd)),
            "runs": samples.tolist(),
        })
json.dump({"series": series}, open(out, "w"))
EOF

"$bench" --validate "$work/series.json" > "$work/vmscale.json"

"$venvs/otava/bin/python" - "$work/series.json" "$work/otava.json" <<'EOF'
import json, sys, time
import numpy as np
from otava.analysis import compute_change_points
series = json.load(open(sys.argv[1]))["series"]
out = {}
for p in (0.001, 0.01):
    t = time.perf_counter()
    found = []
    for s in series:
        medians = [float(np.median(r)) for r in s["runs"]]
        cps, _ = compute_change_points(medians, window_len=50, max_pvalue=p)
        found.append(sorted(int(c.index) for c in cps))
    out[str(p)] = {"change_points": found, "seconds": time.perf_counter() - t}
json.dump(out, open(sys.argv[2], "w"))
EOF

"$venvs/spa/bin/python" - "$work/series.json" "$work/spa.json" <<'EOF'
import json, sys, time
import numpy as np
from signal_processing_algorithms.energy_statistics.energy_statistics import e_divisive
series = json.load(open(sys.argv[1]))["series"]
t = time.perf_counter()
found = []
for s in series:
    medians = np.array([float(np.median(r)) for r in s["runs"]])
    found.append(sorted(int(i) for i in e_divisive(medians, pvalue=0.05, permutations=100)))
json.dump({"change_points": found, "seconds": time.perf_counter() - t}, open(sys.argv[2], "w"))
EOF

"$venvs/otava/bin/python" - "$work" <<'EOF'
import json, sys
w = sys.argv[1]
series = json.load(open(f"{w}/series.json"))["series"]
vm = json.load(open(f"{w}/vmscale.json"))
ot = json.load(open(f"{w}/otava.json"))
spa = json.load(open(f"{w}/spa.json"))
tools = [
    ("vmscale (alpha 0.01)", vm["change_points"], vm["seconds"]),
    ("Otava (p 0.001)", ot["0.001"]["change_points"], ot["0.001"]["seconds"]),
    ("Otava (p 0.01)", ot["0.01"]["change_points"], ot["0.01"]["seconds"]),
    ("MongoDB e_divisive (p 0.05)", spa["change_points"], spa["seconds"]),
]
near = lambda a, bs: any(abs(a - b) <= 1 for b in bs)

print(f"{len(series)} series ({len(series)//3} each with 0, 1 and 3 steps)\n")
print("| tool | steps >= 3x noise found (+-1 run) | series without step flagged "
      "| change points off every true step | seconds |")
print("|---|---|---|---|---|")
for name, found, secs in tools:
    q = hit = flat = flagged = extra = total = 0
    for s, f in zip(series, found):
        for a, size in zip(s["steps"], s["sizes"]):
            if abs(size) >= 3 * s["noise"]:
                q += 1
                hit += near(a, f)
        if s["kind"] == 0:
            flat += 1
            flagged += bool(f)
        extra += sum(1 for c in f if not near(c, s["steps"]))
        total += len(f)
    print(f"| {name} | {hit}/{q} ({100*hit/q:.1f} %) | {flagged}/{flat} ({100*flagged/flat:.1f} %) "
          f"| {extra}/{total} | {secs:.2f} |")

print("\n| vmscale against | change points both found (+-1 run) | only vmscale | only the other | series with the same steps |")
print("|---|---|---|---|---|")
for name, found, _ in tools[1:]:
    both = only_vm = only_other = same = 0
    for a, b in zip(vm["change_points"], found):
        both += sum(1 for c in a if near(c, b))
        only_vm += sum(1 for c in a if not near(c, b))
        only_other += sum(1 for c in b if not near(c, a))
        same += len(a) == len(b) and all(near(c, b) for c in a)
    print(f"| {name} | {both} | {only_vm} | {only_other} | {same}/{len(series)} |")
EOF
