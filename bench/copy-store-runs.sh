#!/usr/bin/env bash
# Copies every run of one vmscale store (with its cases and samples) into
# another, ids shifted past the target's, in one transaction. A stop-gap
# for `vmscale merge`. Runs the target already has (same uuid) are skipped;
# stores older than schema 2 have no uuid and are copied again if run twice.
#
# usage: bench/copy-store-runs.sh FROM.db INTO.db
set -euo pipefail
[ $# = 2 ] || { echo "usage: $0 FROM.db INTO.db" >&2; exit 2; }
from=$1 into=$2
[ -f "$from" ] || { echo "copy-store-runs: no store at $from" >&2; exit 2; }
if ! command -v sqlite3 >/dev/null; then
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq sqlite3 >/dev/null
fi
if [ ! -f "$into" ]; then
  mkdir -p "$(dirname "$into")"
  sqlite3 "$from" ".backup '$into'"
  echo "copy-store-runs: $into did not exist; it is now a copy of $from" >&2
  exit 0
fi
v_from=$(sqlite3 "$from" 'PRAGMA user_version')
v_into=$(sqlite3 "$into" 'PRAGMA user_version')
[ "$v_from" = "$v_into" ] ||
  { echo "copy-store-runs: schema versions differ ($from $v_from, $into $v_into): open both with the same vmscale first" >&2; exit 2; }
# Same schema version, so the same columns in the same order: rows are
# copied whole through temporary tables, ids shifted past the target's.
# Runs whose uuid the target already holds (schema 2+) are skipped.
has_uuid=$(sqlite3 "$into" "SELECT count(*) FROM pragma_table_info('runs') WHERE name = 'uuid'")
skip_known=""
[ "$has_uuid" = 1 ] && skip_known="DELETE FROM r WHERE uuid IS NOT NULL AND uuid IN (SELECT uuid FROM main.runs);"
sqlite3 "$into" <<SQL
.bail on
ATTACH '$(printf %s "$from" | sed "s/'/''/g")' AS g;
BEGIN;
CREATE TEMP TABLE shift AS SELECT
  (SELECT ifnull(max(id), 0) FROM main.runs) AS run,
  (SELECT ifnull(max(id), 0) FROM main.samples) AS sample;
CREATE TEMP TABLE r AS SELECT * FROM g.runs;
$skip_known
CREATE TEMP TABLE c AS SELECT * FROM g.cases WHERE run_id IN (SELECT id FROM r);
CREATE TEMP TABLE s AS SELECT * FROM g.samples WHERE run_id IN (SELECT id FROM r);
UPDATE r SET id = id + (SELECT run FROM shift);
UPDATE c SET run_id = run_id + (SELECT run FROM shift);
UPDATE s SET id = id + (SELECT sample FROM shift), run_id = run_id + (SELECT run FROM shift);
INSERT INTO main.runs SELECT * FROM r;
INSERT INTO main.cases SELECT * FROM c;
INSERT INTO main.samples SELECT * FROM s;
SELECT 'copy-store-runs: copied ' || (SELECT count(*) FROM r) || ' of ' ||
       (SELECT count(*) FROM g.runs) || ' run(s) from $(basename "$from")';
COMMIT;
SQL
