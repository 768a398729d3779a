#!/bin/sh
# Builds the fuzz targets as `cargo fuzz build -s none` would, on the stable
# toolchain (no cargo-fuzz needed; `cargo fuzz run TARGET` works as well
# where cargo-fuzz and nightly are installed). Then, e.g.:
#   fuzz/target/x86_64-unknown-linux-gnu/release/import -max_total_time=600 fuzz/corpus/import
set -e
cd "$(dirname "$0")"
export RUSTFLAGS="-Cpasses=sancov-module -Cllvm-args=-sanitizer-coverage-level=4 \
-Cllvm-args=-sanitizer-coverage-inline-8bit-counters \
-Cllvm-args=-sanitizer-coverage-pc-table \
-Cllvm-args=-sanitizer-coverage-trace-compares --cfg fuzzing -Cdebug-assertions \
-Coverflow-checks"
# --target keeps the flags off build scripts and proc macros.
cargo build --release --bins --target "$(rustc -vV | sed -n "s/^host: //p")"
