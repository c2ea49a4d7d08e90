#!/usr/bin/env bash
# System packages some tests need (Debian): chromium for the admin page's
# browser test, b3sum for benchmarks, promtool (Debian's prometheus) for the
# metrics test. Safe to re-run; skips what is there.
set -euo pipefail
need=()
command -v chromium >/dev/null || need+=(chromium)
command -v b3sum >/dev/null || need+=(b3sum)
[ -x /usr/bin/promtool ] || need+=(prometheus)
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
  else
    echo "setup-system: missing ${need[*]}; install them with your package manager (tests that need them will say so)" >&2
  fi
fi
