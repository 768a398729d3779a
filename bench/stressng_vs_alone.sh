#!/usr/bin/env bash
# stress-ng run through `vmscale run stress-ng` against the same stress-ng
# run alone with the same arguments, paired and interleaved: in every
# round one run of each, their order turned every round, so a slow stretch
# of a loaded machine lands on both alike. Alone: `stress-ng --STRESSOR N
# --timeout T --metrics --yaml DIR/metrics.yaml --temp-path DIR` in a
# fresh private DIR (what vmscale runs, its plan prints it); through
# vmscale: `vmscale run stress-ng --stressor S --instances N --timeout T
# --reps 1 --warmup 0 --json`. Both figures are stress-ng's own bogo-ops/s
# (real time) from its yaml file. Printed: each round's figures and load,
# then the median and range of the per-round ratios vmscale / alone.
#
# usage: bench/stressng_vs_alone.sh [ROUNDS] [TIMEOUT_S] [INSTANCES] STRESSOR...
#   defaults: 5 rounds, 5 s, 1 instance, fault madvise mmap mremap vm userfaultfd
#   VMSCALE=path  the binary measured (default target/release/vmscale)
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
python3 - "$work" "$rounds" "$timeout" "$instances" "$vmscale" "${stressors[@]}" <<'PY'
import json, os, statistics as st, subprocess, sys, tempfile
work, rounds, timeout, instances, vmscale, *stressors = sys.argv[1:]
rounds = int(rounds)

def load():
    return float(open("/proc/loadavg").read().split()[0])

def yaml_ops(path, stressor):
    """bogo-ops-per-second-real-time of the stressor's metrics entry."""
    inside, mine = False, False
    for line in open(path):
        if not line.startswith(" "):
            inside = line.strip() == "metrics:"
            continue
        item = line.strip()
        if inside and item.startswith("- stressor:"):
            mine = item.split(":", 1)[1].strip() == stressor
        elif inside and mine and item.startswith("bogo-ops-per-second-real-time:"):
            return float(item.split(":", 1)[1])
    sys.exit(f"no metrics for {stressor} in {path}")

def alone(stressor):
    d = tempfile.mkdtemp(dir=work)
    subprocess.run(["stress-ng", f"--{stressor}", instances, "--timeout", timeout,
                    "--metrics", "--yaml", f"{d}/metrics.yaml", "--temp-path", d],
                   cwd=d, check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
    return yaml_ops(f"{d}/metrics.yaml", stressor)

def through(stressor):
    env = dict(os.environ, VMSCALE_DB=f"{work}/vmscale.db")
    out = subprocess.run([vmscale, "run", "stress-ng", "--stressor", stressor,
                          "--instances", instances, "--timeout", timeout,
                          "--reps", "1", "--warmup", "0", "--json"], check=True,
                         capture_output=True, text=True, env=env,
                         stdin=subprocess.DEVNULL).stdout
    samples = json.loads(out)["cases"][0]["samples"]
    return samples[0]["data"]["figures"]["ops_per_sec"]

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
            line.append(f"{p} {v:.2f} (load {before:.1f})")
        print(f"  round {r + 1}: " + ", ".join(line))
    ratios = [v / a for v, a in zip(res["vmscale"], res["alone"])]
    summary.append((stressor, st.median(res["alone"]), st.median(res["vmscale"]),
                    st.median(ratios), min(ratios), max(ratios), len(ratios)))
print(f"# load after {load():.1f}")
print("stressor      alone ops/s  vmscale ops/s  ratio median  range          n")
for s, a, v, m, lo, hi, n in summary:
    print(f"{s:<12} {a:12.2f} {v:14.2f} {m:13.3f}  {lo:.3f}..{hi:.3f} {n:3d}")
PY
