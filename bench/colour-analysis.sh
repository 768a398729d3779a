#!/bin/sh
# The colour performance figure: analysing the PFNs of 16 GiB (4 Mi pages of
# 4 KiB) on synthetic frame lists, the touch excluded. Prints the median of 5.
set -e
cd "$(dirname "$0")/.."
exec cargo run --release --quiet --example bench_colour
