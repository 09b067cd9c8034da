#!/usr/bin/env bash
# Install (npm, by package name) and start the autorest test server on 127.0.0.1:PORT.
#
#   tests/third_party/start_autorest.sh PORT          start (or reuse) the server; prints when ready
#   tests/third_party/start_autorest.sh PORT --stop   stop the server this script started on PORT
#
# Environment:
#   RPCONFORM_TP_CACHE          install/log directory (default /tmp/rpconform-third-party)
#   AUTOREST_TESTSERVER_VERSION package version (default 3.3.51, the version FINDINGS.md describes)
#   RPCONFORM_TP_TIMEOUT        seconds to wait for readiness (default 60)
#
# The package has no host option (it calls app.listen(port), which binds every interface), so the
# server runs with `node --require bind-loopback.cjs`, which makes a host-less listen() bind
# 127.0.0.1. Idempotent: if an autorest test server already answers on 127.0.0.1:PORT it is reused;
# if the pinned version is already installed nothing is downloaded. Exit 0 when ready.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
port="${1:-}"
if ! [[ "$port" =~ ^[0-9]+$ ]] || (( port < 1 || port > 65535 )); then
  echo "usage: $0 PORT [--stop]   (PORT 1-65535)" >&2
  exit 2
fi
version="${AUTOREST_TESTSERVER_VERSION:-3.3.51}"
cache="${RPCONFORM_TP_CACHE:-/tmp/rpconform-third-party}"
dir="$cache/autorest-$version"
pidfile="$dir/autorest-$port.pid"
log="$dir/autorest-$port.log"
base="http://127.0.0.1:$port"
# A GET route of the /lro surface with a fixed answer: used as the readiness probe.
probe="$base/lro/put/201/creating/succeeded/200"

for tool in node npm; do
  command -v "$tool" >/dev/null 2>&1 || { echo "error: $tool is not installed (Node.js >= 18 is needed)" >&2; exit 1; }
done

# 0 when URL answers 200 with a body containing NEEDLE, else 1 (no curl needed).
answers() {
  node -e '
    const [url, needle] = process.argv.slice(1);
    fetch(url, { signal: AbortSignal.timeout(2000) })
      .then(async (r) => process.exit(r.status === 200 && (await r.text()).includes(needle) ? 0 : 1))
      .catch(() => process.exit(1));' "$1" "$2"
}
port_busy() {
  node -e '
    const s = require("net").connect({ host: "127.0.0.1", port: +process.argv[1] });
    s.on("connect", () => { s.destroy(); process.exit(0); });
    s.on("error", () => process.exit(1));' "$1"
}

if [[ "${2:-}" == "--stop" ]]; then
  if [[ -f "$pidfile" ]] && kill -0 "$(cat "$pidfile")" 2>/dev/null; then
    kill "$(cat "$pidfile")"
    rm -f "$pidfile"
    echo "autorest testserver on $base stopped"
  else
    rm -f "$pidfile"
    echo "no autorest testserver started by this script on port $port"
  fi
  exit 0
elif [[ -n "${2:-}" ]]; then
  echo "usage: $0 PORT [--stop]" >&2
  exit 2
fi

if answers "$probe" '"Succeeded"'; then
  echo "autorest testserver already running at $base"
  exit 0
fi
if port_busy "$port"; then
  echo "error: 127.0.0.1:$port is in use by something that is not the autorest test server" >&2
  exit 1
fi

mkdir -p "$dir"
pkg="$dir/node_modules/@microsoft.azure/autorest.testserver"
# Tests start servers side by side: one install at a time (the others wait, then find it done),
# never two npm installs racing in one folder.
exec 9>"$dir/.install.lock"
flock 9
installed="$(node -e 'try{console.log(require(process.argv[1]).version)}catch{}' "$pkg/package.json")"
if [[ "$installed" != "$version" ]]; then
  echo "installing @microsoft.azure/autorest.testserver@$version into $dir ..."
  [[ -f "$dir/package.json" ]] || echo '{"name":"rpconform-autorest-testserver","private":true}' >"$dir/package.json"
  npm install --prefix "$dir" --no-audit --no-fund --loglevel=error "@microsoft.azure/autorest.testserver@$version" >"$dir/npm-install.log" 2>&1 || {
    echo "error: npm install failed; see $dir/npm-install.log" >&2
    tail -20 "$dir/npm-install.log" >&2
    exit 1
  }
fi

# The install is done: let the next waiting start go (the server must not inherit the lock).
exec 9>&-

cd "$dir"
RPCONFORM_BIND_HOST=127.0.0.1 nohup node --require "$here/bind-loopback.cjs" \
  "$pkg/dist/cli/cli.js" --port "$port" --coverageDirectory "$dir/coverage-$port" \
  >"$log" 2>&1 </dev/null &
pid=$!
echo "$pid" >"$pidfile"

deadline=$(( SECONDS + ${RPCONFORM_TP_TIMEOUT:-60} ))
until answers "$probe" '"Succeeded"'; do
  if ! kill -0 "$pid" 2>/dev/null; then
    echo "error: the autorest testserver exited; last lines of $log:" >&2
    tail -20 "$log" >&2
    rm -f "$pidfile"
    exit 1
  fi
  if (( SECONDS >= deadline )); then
    echo "error: the autorest testserver did not answer $probe within ${RPCONFORM_TP_TIMEOUT:-60}s; log: $log" >&2
    kill "$pid" 2>/dev/null || true
    rm -f "$pidfile"
    exit 1
  fi
  sleep 0.5
done
echo "autorest testserver ready at $base (pid $pid, log $log)"
