#!/usr/bin/env bash
# Downloads Debian kernel packages for `vmscale guest` and prints their
# paths, one a line. Each name is a Debian meta package (linux-image-amd64,
# linux-image-cloud-amd64, ...); the kernel package it depends on is
# fetched with apt-get download (not installed) into the cache,
# ${VMSCALE_CACHE_DIR:-$XDG_CACHE_HOME/vmscale}/kernels, and kept there.
# vmscale unpacks the .deb itself (`vmscale guest --kernel FILE.deb`).
#
# usage: bench/guest-kernels.sh [META_PACKAGE...]   (default: linux-image-amd64)
#
# The tests use linux-image-amd64 and linux-image-cloud-amd64 (Debian 12:
# 6.1) and linux-image-6.12-cloud-amd64 (bookworm-backports: 6.12, with
# per-size THP and its stats/ counters; tests/mthp.rs), and
# linux-image-6.12-amd64 (the same with zswap, which the cloud one lacks).
#
# Needs apt-get (Debian or a derivative); root is not needed to download.
set -euo pipefail

die() { echo "guest-kernels: $*" >&2; exit 2; }
[ $# -gt 0 ] || set -- linux-image-amd64
command -v apt-get >/dev/null || die "no apt-get: download a kernel .deb by hand and give it to --kernel"
cache=${VMSCALE_CACHE_DIR:-${XDG_CACHE_HOME:-${HOME:-/root}/.cache}/vmscale}/kernels
mkdir -p "$cache"
updated=0
download() {
  # apt-get download into the current directory, after one apt-get update
  # if the package lists do not know the package yet.
  apt-get download -o APT::Sandbox::User=root "$1" >/dev/null 2>&1 && return 0
  if [ "$updated" = 0 ]; then
    updated=1
    apt-get update -qq >/dev/null 2>&1 || true
    apt-get download -o APT::Sandbox::User=root "$1" >/dev/null && return 0
  fi
  die "apt-get download $1 failed"
}
for meta in "$@"; do
  [[ "$meta" =~ ^linux-image-[a-z0-9.+-]+$ ]] || die "'$meta' is not a linux-image package name"
  dl=$(mktemp -d "$cache/dl.XXXXXX")
  trap 'rm -rf "$dl"' EXIT
  ( cd "$dl" && download "$meta" )
  meta_deb=$(ls "$dl"/*.deb | head -1)
  # A meta package depends on the versioned kernel package; a versioned
  # package is the kernel itself.
  pkg=$(dpkg-deb -f "$meta_deb" Depends | tr ',' '\n' |
        sed -n 's/^ *\(linux-image-[0-9][^ ]*\).*/\1/p' | head -1)
  if [ -z "$pkg" ]; then
    pkg=$meta
  fi
  found=$(ls "$cache/${pkg}"_*.deb 2>/dev/null | sort -V | tail -1 || true)
  if [ -z "$found" ]; then
    if [ "$pkg" = "$meta" ]; then
      mv "$meta_deb" "$cache/"
    else
      ( cd "$dl" && download "$pkg" )
      mv "$dl/${pkg}"_*.deb "$cache/"
    fi
    found=$(ls "$cache/${pkg}"_*.deb | sort -V | tail -1)
  fi
  rm -rf "$dl"
  trap - EXIT
  echo "$found"
done
