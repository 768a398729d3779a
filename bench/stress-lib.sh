# shellcheck shell=bash
# stress-ng beside a test run, for bench/test-loop.sh and
# bench/suite-under-stress.sh (sourced): stress_start ARGS starts it at
# nice 19 (nothing when ARGS is empty), stress_stop stops it and is safe
# to call twice (the scripts' EXIT trap calls it too).
stress=
stress_start() {
    if [ -n "$1" ]; then
        # shellcheck disable=SC2086
        nice -n 19 stress-ng $1 --quiet &
        stress=$!
    fi
}
stress_stop() {
    if [ -n "$stress" ]; then
        kill "$stress" 2>/dev/null || true
        wait "$stress" 2>/dev/null || true
    fi
    stress=
}
