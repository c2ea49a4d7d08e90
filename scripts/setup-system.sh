#!/usr/bin/env bash
# System packages the tests need (Debian): chromium for the admin page's
# browser test, b3sum for benchmarks, promtool (Debian's prometheus) for the
# metrics test, and docker.io + debootstrap for the
# second pass of `pnpm test` (the database tests on Testcontainers Postgres 15,
# scripts/test-container-runtime.sh). Safe to re-run; skips what is there.
# Installing docker.io starts no daemon: the test run starts its own, on its
# own socket, and stops it.
set -euo pipefail
need=()
command -v chromium >/dev/null || need+=(chromium)
command -v b3sum >/dev/null || need+=(b3sum)
[ -x /usr/bin/promtool ] || need+=(prometheus)
[ -x /usr/sbin/dockerd ] || need+=(docker.io)
command -v debootstrap >/dev/null || [ -x /usr/sbin/debootstrap ] || need+=(debootstrap)
[ ${#need[@]} -gt 0 ] || exit 0

if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
  why="not root"
  [ "$(id -u)" = 0 ] && why="no apt-get (not Debian)"
  echo "setup-system: $why: missing ${need[*]}; install them with your package manager (the browser test says so; without docker.io the database tests run on embedded Postgres only)" >&2
  exit 0
fi

# No service may start while installing (docker.io's postinst would start a
# dockerd on /var/run/docker.sock, which every test run on this machine would
# then find): a policy-rc.d that denies, for the length of the install.
policy=/usr/sbin/policy-rc.d
own_policy=
if [ ! -e "$policy" ]; then
  printf '#!/bin/sh\nexit 101\n' >"$policy"
  chmod +x "$policy"
  own_policy=1
fi
trap '[ -z "$own_policy" ] || rm -f "$policy"' EXIT
apt() { apt-get -o DPkg::Lock::Timeout=300 "$@"; }
plain=() runtime=()
for p in "${need[@]}"; do
  case "$p" in docker.io | debootstrap) runtime+=("$p") ;; *) plain+=("$p") ;; esac
done
apt update -qq
[ ${#plain[@]} -eq 0 ] || DEBIAN_FRONTEND=noninteractive apt install -y -qq "${plain[@]}" >/dev/null
[ ${#runtime[@]} -eq 0 ] || DEBIAN_FRONTEND=noninteractive apt install -y -qq --no-install-recommends "${runtime[@]}" >/dev/null
