#!/usr/bin/env bash
# Runs one test file's tests (tests/NAME.rs: `CI=true cargo test --test all
# NAME::`, or `--test NAME` for a file that is a test binary of its own in
# Cargo.toml) N times in a row (the binary cargo built, run directly, so
# another cargo holding the build directory's lock does not hold it up)
# and says for each run whether it passed, how long it took, the load
# average before and after and the commit, then how many of N passed: the
# check that a test holds, not just that it passed once (issue 32:
# tests/scale_vm.rs 20 of 20). Each run's output stays in OUT_DIR/run-K.log.
#
# usage: bench/test-loop.sh NAME [N] [OUT_DIR] [-- test binary args]
#   defaults: 20 runs, /tmp/vmscale-test-loop-NAME
#   a test name among the args adds to the filter NAME:: (libtest runs
#   what any filter matches): one test alone is `-- --exact NAME::TEST`
#   STRESS="--cpu 2"   stress-ng beside each run, at the test's niceness
#                      (default: none)
#   NICE=0             the test's niceness (default 19)
# The tests run with --nocapture, so a pass that needed a second boot
# (tests/nested_kvm.rs says so) is listed under its run's line.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
name=${1:?usage: bench/test-loop.sh NAME [N] [OUT_DIR] [-- test args]}
n=${2:-20}
out=${3:-/tmp/vmscale-test-loop-$name}
shift $(($# < 3 ? $# : 3))
[ "${1:-}" = "--" ] && shift
cd "$here/.."
mkdir -p "$out"
# shellcheck source=bench/stress-lib.sh
. "$here/stress-lib.sh"
trap stress_stop EXIT

# tests/NAME.rs is the module NAME of the binary `all` (tests/all.rs)
# unless Cargo.toml makes it a binary of its own.
if grep -qx "path = \"tests/$name.rs\"" Cargo.toml; then
    target=$name filter=()
else
    target=all filter=("$name::")
fi
exe=$(nice -n 19 cargo test --no-run --test "$target" 2>&1 |
    sed -n 's/.*Executable .* (\(.*\))$/\1/p')
[ -x "$exe" ] || { echo "no test binary for $name" >&2; exit 1; }
commit=$(git rev-parse --short HEAD)
echo "$exe, built from $commit$(git diff --quiet HEAD || echo ' + changes')"
ok=0
for k in $(seq 1 "$n"); do
    log=$out/run-$k.log
    stress_start "${STRESS:-}"
    load=$(cut -d' ' -f1 /proc/loadavg)
    start=$(date +%s)
    set +e
    CI=true nice -n "${NICE:-19}" "$exe" --nocapture ${filter[@]+"${filter[@]}"} "$@" \
        > "$log" 2>&1
    rc=$?
    set -e
    secs=$(($(date +%s) - start))
    end_load=$(cut -d' ' -f1 /proc/loadavg)
    stress_stop
    [ $rc = 0 ] && ok=$((ok + 1))
    printf 'run %2d: exit %d, %4d s, load %s -> %s, %s, %s\n' "$k" "$rc" "$secs" \
        "$load" "$end_load" "$commit" "$(date -u +%H:%M)"
    grep -E '^test .* FAILED$' "$log" || true
    # A pass that needed a second boot (the tests say so with --nocapture).
    grep -E 'second boot: .*true|booting it once more' "$log" || true
done
echo "$ok of $n passed"
