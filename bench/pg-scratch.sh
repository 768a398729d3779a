#!/usr/bin/env bash
# Starts a throw-away PostgreSQL server from Debian's packages (installing
# them if needed): a new cluster in a temporary directory, owned by the
# postgres user, listening on loopback only, trusting local connections.
# Prints shell lines to evaluate:
#   eval "$(bench/pg-scratch.sh)"    # sets VMSCALE_TEST_PG and PG_SCRATCH_DIR
#   bench/pg-scratch.sh stop DIR     # stops it and removes DIR
#   bench/pg-scratch.sh down DIR     # stops the server, keeping DIR (a fault)
#   bench/pg-scratch.sh up DIR       # starts it again on the same port
# PG_SCRATCH_PORT=N starts the search for a free port at N (default 55432),
# so helpers and tests running at once keep to their own servers.
set -euo pipefail

bindir() {
  ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1
}

pg_ctl() {
  runuser -u postgres -- "$(bindir)/pg_ctl" "$@"
}

case "${1:-}" in
  stop)
    dir=${2:?usage: pg-scratch.sh stop DIR}
    pg_ctl -D "$dir/data" -m fast -w stop >/dev/null 2>&1 || true
    rm -rf "$dir"
    exit 0
    ;;
  down)
    dir=${2:?usage: pg-scratch.sh down DIR}
    pg_ctl -D "$dir/data" -m fast -w stop >/dev/null
    exit 0
    ;;
  up)
    dir=${2:?usage: pg-scratch.sh up DIR}
    pg_ctl -D "$dir/data" -l "$dir/log" -w start >/dev/null
    exit 0
    ;;
esac

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
# In the cluster's configuration, so `up` starts it the same way.
cat >>"$dir/data/postgresql.conf" <<CONF
listen_addresses = '127.0.0.1'
unix_socket_directories = '$dir'
max_connections = 200
fsync = off
CONF
# A free loopback port from PG_SCRATCH_PORT (55432) on. A port no one
# listens on can still be taken by the time the server binds it (another
# server starting, or a client's ephemeral port: Linux hands those out
# from ip_local_port_range, 32768-60999 by default), so a start that
# fails with "Address already in use" tries the next port; the last
# `port =` line of the configuration is the one in force.
port=${PG_SCRATCH_PORT:-55432}
for try in $(seq 1 20); do
  while (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; do
    port=$((port + 1))
  done
  echo "port = $port" >>"$dir/data/postgresql.conf"
  seen=$({ wc -l <"$dir/log"; } 2>/dev/null || echo 0)
  if pg_ctl -D "$dir/data" -l "$dir/log" -w start >/dev/null 2>&1; then
    break
  fi
  if [ "$try" = 20 ] || ! tail -n +"$((seen + 1))" "$dir/log" | grep -q "Address already in use"; then
    echo "pg-scratch: the server in $dir did not start; its log:" >&2
    tail -n 20 "$dir/log" >&2
    rm -rf "$dir"
    exit 1
  fi
  port=$((port + 1))
done
echo "export VMSCALE_TEST_PG=postgres://postgres@127.0.0.1:$port/postgres"
echo "export PG_SCRATCH_DIR=$dir"
