#!/bin/sh
# Entrypoint of the local test Postgres image (see Dockerfile): on the first
# start, initdb with POSTGRES_USER / POSTGRES_PASSWORD (password login from
# any address) and POSTGRES_DB; then the server, as the postgres user, on all
# addresses, with the command's `-c` settings. Any other command runs as is.
set -eu

if [ "$#" -eq 0 ] || [ "${1#-}" != "$1" ]; then set -- postgres "$@"; fi
if [ "$1" != postgres ]; then exec "$@"; fi
shift

: "${POSTGRES_PASSWORD:?POSTGRES_PASSWORD is required (the server takes password logins only)}"
user="${POSTGRES_USER:-postgres}"
db="${POSTGRES_DB:-$user}"
as_postgres() { setpriv --reuid=postgres --regid=postgres --init-groups -- "$@"; }

if [ ! -s "$PGDATA/PG_VERSION" ]; then
  mkdir -p "$PGDATA"
  chown postgres:postgres "$PGDATA"
  chmod 0700 "$PGDATA"
  pwfile="$(mktemp)"
  printf '%s\n' "$POSTGRES_PASSWORD" > "$pwfile"
  chown postgres "$pwfile"
  as_postgres initdb --no-sync -D "$PGDATA" -U "$user" --pwfile="$pwfile" -E UTF8 --locale=C.UTF-8 \
    --auth-local=trust --auth-host=scram-sha-256 >/dev/null
  rm -f "$pwfile"
  echo 'host all all all scram-sha-256' >> "$PGDATA/pg_hba.conf"
  if [ "$db" != postgres ]; then
    quoted="$(printf '%s' "$db" | sed 's/"/""/g')"
    echo "CREATE DATABASE \"$quoted\"" | as_postgres postgres --single -F -D "$PGDATA" -j postgres >/dev/null
  fi
  echo "entrypoint: initialised $PGDATA (user $user, database $db)"
fi

exec setpriv --reuid=postgres --regid=postgres --init-groups -- \
  postgres -D "$PGDATA" -c listen_addresses='*' "$@"
