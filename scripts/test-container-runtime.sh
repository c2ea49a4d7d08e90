#!/usr/bin/env bash
# The test run's own container runtime (Debian's docker.io, as root), for the
# pass of the database tests on Testcontainers Postgres 15:
#
#   test-container-runtime.sh start <owner-pid>
#       starts a dockerd of its own (own --data-root, --exec-root and unix
#       socket; never /var/run/docker.sock, so nobody else's tests see it),
#       builds the local Postgres 15 image once (a debootstrap'd Debian base,
#       then docker/test-postgres; cached in the data root until its recipe
#       changes) and prints the variables the test pass needs, one KEY=VALUE a
#       line. Exit 3 with one line on stderr when this machine cannot (not
#       root, no docker.io/debootstrap) or another test run holds the runtime.
#   test-container-runtime.sh stop [<owner-pid>]
#       removes every container of that dockerd and stops it: the owner's
#       runtime, or one whose owner is gone (a run that was killed).
#
# Paths: OXICLOUD_TEST_DOCKER_DATA_ROOT (default /var/lib/oxicloud-test-docker,
# kept between runs: it holds the image) and OXICLOUD_TEST_DOCKER_RUN_DIR
# (default /run/oxicloud-test-docker: socket, pid files, exec root, log).
set -euo pipefail

repo="$(cd "$(dirname "$0")/.." && pwd)"
data_root="${OXICLOUD_TEST_DOCKER_DATA_ROOT:-/var/lib/oxicloud-test-docker}"
run_dir="${OXICLOUD_TEST_DOCKER_RUN_DIR:-/run/oxicloud-test-docker}"
socket="$run_dir/docker.sock"
pidfile="$run_dir/dockerd.pid"
ownerfile="$run_dir/owner.pid"
log="$run_dir/dockerd.log"
image="oxicloud/test-postgres:15"
base_image="local/debian:bookworm"
recipe_dir="$repo/docker/test-postgres"
# docker.io's own client (same API version as its daemon), not whatever `docker` is first on PATH.
docker_cli=/usr/bin/docker

say() { echo "test-container-runtime: $*" >&2; }
cannot() {
  say "$*"
  exit 3
}
dk() { DOCKER_HOST="unix://$socket" DOCKER_BUILDKIT=0 "$docker_cli" "$@"; }
alive() { [ -n "${1:-}" ] && kill -0 "$1" 2>/dev/null; }
# A process's identity: its pid and start time (a pid alone may be reused).
identity() { [ -r "/proc/$1/stat" ] && echo "$1 $(sed -E 's/^.*\) //' "/proc/$1/stat" | cut -d' ' -f20)"; }
owner_alive() {
  local pid
  pid="$(cut -d' ' -f1 "$ownerfile" 2>/dev/null || true)"
  [ -n "$pid" ] && [ "$(identity "$pid" 2>/dev/null || true)" = "$(cat "$ownerfile")" ]
}
dockerd_pid() {
  local pid
  pid="$(cat "$pidfile" 2>/dev/null || true)"
  if alive "$pid" && [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = dockerd ]; then echo "$pid"; fi
}

stop_runtime() {
  local pid containerd_pid
  pid="$(dockerd_pid)"
  containerd_pid="$(cat "$run_dir/exec/containerd/containerd.pid" 2>/dev/null || true)"
  if [ -n "$pid" ]; then
    dk ps -aq 2>/dev/null | xargs -r "$docker_cli" -H "unix://$socket" rm -f -v >/dev/null 2>&1 || true
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 1 100); do
      alive "$pid" || break
      sleep 0.2
    done
    if alive "$pid"; then kill -KILL "$pid" 2>/dev/null || true; fi
  fi
  # dockerd stops the containerd it started; after a KILL that one is left.
  if alive "$containerd_pid" && [ "$(cat "/proc/$containerd_pid/comm" 2>/dev/null)" = containerd ]; then
    kill -TERM "$containerd_pid" 2>/dev/null || true
  fi
  rm -f "$ownerfile"
}

# The Debian mirror apt already uses (no other source is reachable here).
debian_mirror() {
  local mirror
  mirror="$(sed -E 's/\[[^]]*\]//' /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null |
    awk '$1 == "deb" && $3 !~ /security/ { print $2; exit }')"
  if [ -z "$mirror" ]; then
    mirror="$(awk '/^URIs:/ { uri = $2 } /^Suites:/ && uri !~ /security/ { print uri; exit }' \
      /etc/apt/sources.list.d/*.sources 2>/dev/null)"
  fi
  echo "${mirror:-http://deb.debian.org/debian}"
}

build_base_image() {
  local dir mirror started
  dk image inspect "$base_image" >/dev/null 2>&1 && return 0
  mirror="$(debian_mirror)"
  dir="$(mktemp -d "${data_root%/}.base.XXXXXX")"
  started=$SECONDS
  say "building the base image $base_image (debootstrap --variant=minbase bookworm from $mirror)"
  if ! debootstrap --variant=minbase bookworm "$dir" "$mirror" >"$run_dir/debootstrap.log" 2>&1; then
    tail -n 20 "$run_dir/debootstrap.log" >&2
    rm -rf "$dir"
    return 1
  fi
  tar -C "$dir" -c . | dk import - "$base_image" >/dev/null
  rm -rf "$dir"
  say "base image built in $((SECONDS - started)) s"
}

build_image() {
  local recipe current started
  recipe="$(cat "$recipe_dir/Dockerfile" "$recipe_dir/entrypoint.sh" | sha256sum | cut -c1-16)"
  current="$(dk image inspect -f '{{ index .Config.Labels "org.oxicloud.recipe" }}' "$image" 2>/dev/null || true)"
  if [ "$current" = "$recipe" ]; then return 0; fi
  build_base_image
  started=$SECONDS
  say "building $image from docker/test-postgres (recipe $recipe)"
  if ! dk build --network host --build-arg "BASE_IMAGE=$base_image" --label "org.oxicloud.recipe=$recipe" \
    -t "$image" "$recipe_dir" >"$run_dir/build.log" 2>&1; then
    tail -n 20 "$run_dir/build.log" >&2
    return 1
  fi
  dk image prune -f >/dev/null 2>&1 || true
  say "$image built in $((SECONDS - started)) s"
}

start_runtime() {
  local owner="$1" pid
  [ -x /usr/sbin/dockerd ] && [ -x "$docker_cli" ] || cannot "docker.io is not installed (scripts/setup-system.sh installs it as root on Debian)"
  command -v debootstrap >/dev/null || cannot "debootstrap is not installed (scripts/setup-system.sh installs it as root on Debian)"
  mkdir -p "$run_dir" "$data_root"
  pid="$(dockerd_pid)"
  if [ -n "$pid" ]; then
    if owner_alive; then
      cannot "busy: the test run of pid $(cut -d' ' -f1 "$ownerfile") uses it"
    fi
    say "stopping the dockerd (pid $pid) a finished test run left behind"
    stop_runtime
  fi
  identity "$owner" >"$ownerfile" || cannot "no process $owner to own the runtime"
  setsid /usr/sbin/dockerd --data-root "$data_root" --exec-root "$run_dir/exec" \
    --host "unix://$socket" --pidfile "$pidfile" </dev/null >"$log" 2>&1 9>&- &
  for _ in $(seq 1 150); do
    dk version >/dev/null 2>&1 && break
    sleep 0.2
  done
  if ! dk version >/dev/null 2>&1; then
    tail -n 20 "$log" >&2
    stop_runtime
    say "dockerd did not answer within 30 s (log above)"
    exit 1
  fi
  if ! build_image; then
    stop_runtime
    say "could not build $image (log above)"
    exit 1
  fi
  echo "DOCKER_HOST=unix://$socket"
  echo "OXICLOUD_TEST_POSTGRES_IMAGE=$image"
}

if [ "$(id -u)" != 0 ]; then
  [ "${1:-}" = start ] && cannot "not root: no container runtime of its own for the tests"
  exit 0
fi
mkdir -p "$(dirname "$run_dir")"
exec 9>>"${run_dir%/}.lock"
flock 9
case "${1:-}" in
start) start_runtime "${2:-$PPID}" ;;
stop)
  # The owner stops it; anyone else only a runtime whose owner is gone.
  if owner_alive && [ "${2:-}" != "$(cut -d' ' -f1 "$ownerfile")" ]; then
    say "left running: the test run of pid $(cut -d' ' -f1 "$ownerfile") uses it"
  else
    stop_runtime
  fi
  ;;
*)
  echo "usage: $0 start <owner-pid> | stop [<owner-pid>]" >&2
  exit 2
  ;;
esac
