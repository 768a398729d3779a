#!/usr/bin/env bash
# stress-ng run through `vmscale run stress-ng` against the same stress-ng
# run alone with the same arguments, paired and interleaved: in every
# round one run of each, their order turned every round, so a slow stretch
# of a loaded machine lands on both alike. Alone: `stress-ng --STRESSOR N
# --timeout T --metrics --yaml DIR/metrics.yaml --temp-path DIR` in a
# fresh private DIR (what vmscale runs, its plan prints it); through
# vmscale: `vmscale run stress-ng --stressor S --instances N --timeout T
# --reps 1 --warmup 0 --json`. Both figures are stress-ng's own bogo-ops/s
# (real time) from its yaml file, and its bogo-ops per second of user +
# system time, which the other load (taking CPU time from both alike)
# dilutes less. Printed: each round's figures and load, then per stressor
# the medians and the median and range of the per-round ratios vmscale /
# alone of both figures.
#
# usage: bench/stressng_vs_alone.sh [ROUNDS] [TIMEOUT_S] [INSTANCES] STRESSOR...
#   defaults: 5 rounds, 5 s, 1 instance, fault madvise mmap mremap vm userfaultfd
#   VMSCALE=path  the binary measured (default target/release/vmscale)
#   OPTS='--mmap-bytes 4M'  the stressor's own options, given to both
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-5}
timeout=${2:-5}
instances=${3:-1}
shift $(($# < 3 ? $# : 3))
stressors=("$@")
[ ${#stressors[@]} -gt 0 ] || stressors=(fault madvise mmap mremap vm userfaultfd)
vmscale=${VMSCALE:-target/release/vmscale}
command -v stress-ng >/dev/null || { echo "no stress-ng: apt-get install stress-ng" >&2; exit 2; }
[ -x "$vmscale" ] || { echo "no $vmscale: cargo build --release" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 - "$work" "$rounds" "$timeout" "$instances" "$vmscale" "${OPTS:-}" "${stressors[@]}" <<'PY'
import json, os, statistics as st, subprocess, sys, tempfile
work, rounds, timeout, instances, vmscale, opts, *stressors = sys.argv[1:]
rounds, opts = int(rounds), opts.split()

def load():
    return float(open("/proc/loadavg").read().split()[0])

def yaml_ops(path, stressor):
    """bogo-ops/s of real time and of usr+sys time of the stressor's entry."""
    inside, mine, got = False, False, {}
    for line in open(path):
        if not line.startswith(" "):
            inside = line.strip() == "metrics:"
            continue
        item = line.strip()
        if inside and item.startswith("- stressor:"):
            mine = item.split(":", 1)[1].strip() == stressor
        elif inside and mine and ":" in item:
            k, v = item.split(":", 1)
            got[k] = v.strip()
    try:
        return (float(got["bogo-ops-per-second-real-time"]),
                float(got["bogo-ops-per-second-usr-sys-time"]))
    except KeyError:
        sys.exit(f"no metrics for {stressor} in {path}")

def alone(stressor):
    d = tempfile.mkdtemp(dir=work)
    subprocess.run(["stress-ng", f"--{stressor}", instances, "--timeout", timeout,
                    "--metrics", "--yaml", f"{d}/metrics.yaml", "--temp-path", d] + opts,
                   cwd=d, check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
    return yaml_ops(f"{d}/metrics.yaml", stressor)

def through(stressor):
    env = dict(os.environ, VMSCALE_DB=f"{work}/vmscale.db")
    out = subprocess.run([vmscale, "run", "stress-ng", "--stressor", stressor,
                          "--instances", instances, "--timeout", timeout,
                          "--reps", "1", "--warmup", "0", "--json", "--"] + opts, check=True,
                         capture_output=True, text=True, env=env,
                         stdin=subprocess.DEVNULL).stdout
    f = json.loads(out)["cases"][0]["samples"][0]["data"]["figures"]
    return f["ops_per_sec"], f["ops_per_cpu_sec"]

progs = {"alone": alone, "vmscale": through}
summary = []
for stressor in stressors:
    print(f"# {stressor} x{instances}, --timeout {timeout}, {rounds} rounds; "
          f"load {load():.1f}")
    res = {p: [] for p in progs}
    for r in range(rounds):
        order = list(progs) if r % 2 == 0 else list(progs)[::-1]
        line = []
        for p in order:
            before = load()
            v = progs[p](stressor)
            res[p].append(v)
            line.append(f"{p} {v[0]:.2f} ({v[1]:.2f}/cpu-s, load {before:.1f})")
        print(f"  round {r + 1}: " + ", ".join(line))
    for i, what in ((0, "ops/s"), (1, "ops/cpu-s")):
        # A round where either did no operation has no ratio.
        ratios = [v[i] / a[i] for v, a in zip(res["vmscale"], res["alone"])
                  if a[i] > 0 and v[i] > 0]
        summary.append((stressor, what, st.median(x[i] for x in res["alone"]),
                        st.median(x[i] for x in res["vmscale"]),
                        st.median(ratios) if ratios else float("nan"),
                        min(ratios, default=float("nan")),
                        max(ratios, default=float("nan")), len(ratios)))
print(f"# load after {load():.1f}")
print("stressor    figure        alone   vmscale  ratio median  range         n")
for s, w, a, v, m, lo, hi, n in summary:
    print(f"{s:<11} {w:<9} {a:9.2f} {v:9.2f} {m:13.3f}  {lo:.3f}..{hi:.3f} {n:2d}")
PY
