#!/usr/bin/env bash
# Runs the whole test suite (`CI=true cargo test --no-fail-fast`, with a
# throw-away PostgreSQL as .ci/run starts it) N times in a row with
# `stress-ng --cpu 2` beside it, and says for each run whether it passed,
# how long it took, the load average before and after, and which tests
# failed; then how many of N passed. Each run's output stays in
# OUT_DIR/run-K.log. The test binaries are built first, without stress-ng.
# stress-ng runs at the suite's own niceness (19): at nice 0 beside a nice
# 19 suite in the same scheduling group (autogroup) it would take ~98 % of
# the group's time, a starved suite rather than a loaded machine.
#
# usage: bench/suite-under-stress.sh [N] [OUT_DIR] [-- extra cargo test args]
#   defaults: 5 runs, /tmp/vmscale-suite-under-stress
#   STRESS="--cpu 2"   stress-ng's load (empty: none)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
n=${1:-5}
out=${2:-/tmp/vmscale-suite-under-stress}
shift $(($# < 2 ? $# : 2))
[ "${1:-}" = "--" ] && shift
command -v stress-ng >/dev/null || { echo "apt-get install stress-ng" >&2; exit 2; }
cd "$here/.."
mkdir -p "$out"

eval "$(PG_SCRATCH_PORT=${PG_SCRATCH_PORT:-57432} "$here/pg-scratch.sh")"
# shellcheck source=bench/stress-lib.sh
. "$here/stress-lib.sh"
trap 'stress_stop; "$here/pg-scratch.sh" stop "$PG_SCRATCH_DIR"' EXIT

nice -n 19 cargo test --no-run --quiet "$@" 2>&1 | tail -3
load_args=${STRESS---cpu 2}
ok=0
for k in $(seq 1 "$n"); do
    log=$out/run-$k.log
    stress_start "$load_args"
    load=$(cut -d' ' -f1 /proc/loadavg)
    commit=$(git rev-parse --short HEAD)
    start=$(date +%s)
    set +e
    CI=true nice -n 19 cargo test --no-fail-fast "$@" > "$log" 2>&1
    rc=$?
    set -e
    secs=$(($(date +%s) - start))
    end_load=$(cut -d' ' -f1 /proc/loadavg)
    stress_stop
    [ $rc = 0 ] && ok=$((ok + 1))
    printf 'run %d: exit %d, %d s, load %s -> %s, %s\n' "$k" "$rc" "$secs" \
        "$load" "$end_load" "$commit"
    grep -E '^test .* FAILED$|^error: test failed' "$log" || true
done
echo "$ok of $n passed"
