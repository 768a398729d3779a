#!/usr/bin/env bash
# Starts a throw-away PostgreSQL server from Debian's packages (installing
# them if needed): a new cluster in a temporary directory, owned by the
# postgres user, listening on loopback only, trusting local connections.
# Prints shell lines to evaluate:
#   eval "$(bench/pg-scratch.sh)"    # sets VMSCALE_TEST_PG and PG_SCRATCH_DIR
#   bench/pg-scratch.sh stop DIR     # stops it and removes DIR
set -euo pipefail

bindir() {
  ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1
}

if [ "${1:-}" = stop ]; then
  dir=${2:?usage: pg-scratch.sh stop DIR}
  runuser -u postgres -- "$(bindir)/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null || true
  rm -rf "$dir"
  exit 0
fi

if [ -z "$(bindir)" ]; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq postgresql >/dev/null
fi
bin=$(bindir)

dir=$(mktemp -d /tmp/vmscale-pg.XXXXXX)
chown postgres: "$dir"
runuser -u postgres -- "$bin/initdb" -D "$dir/data" -A trust -U postgres \
  --no-sync >/dev/null
# A free loopback port from 55432 on.
port=55432
while (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; do
  port=$((port + 1))
done
runuser -u postgres -- "$bin/pg_ctl" -D "$dir/data" -l "$dir/log" -w start \
  -o "-c listen_addresses=127.0.0.1 -p $port -c unix_socket_directories=$dir \
      -c max_connections=200 -c fsync=off" >/dev/null
echo "export VMSCALE_TEST_PG=postgres://postgres@127.0.0.1:$port/postgres"
echo "export PG_SCRATCH_DIR=$dir"
