#!/usr/bin/env bash
# Install (npm, by package name) and start Spector serving the Azure HTTP specs (including the ARM
# scenarios under azure/resource-manager) on 127.0.0.1:PORT.
#
#   tests/third_party/start_spector.sh PORT          start (or reuse) the server; prints when ready
#   tests/third_party/start_spector.sh PORT --stop   stop the server this script started on PORT
#
# Environment:
#   RPCONFORM_TP_CACHE     install/log directory (default /tmp/rpconform-third-party)
#   SPECTOR_VERSION        @typespec/spector version (default 0.1.0-alpha.24-dev.2)
#   AZURE_HTTP_SPECS_VERSION  @azure-tools/azure-http-specs version (default 0.1.0-alpha.38-dev.2)
#                          (the versions FINDINGS.md describes; both were the registry's `latest`)
#   RPCONFORM_TP_TIMEOUT   seconds to wait for readiness (default 90)
#
# Spector has no host option (its express server calls app.listen(port): every interface), so it
# runs with `node --require bind-loopback.cjs`, which makes a host-less listen() bind 127.0.0.1.
# `tsp-spector serve` also runs `git rev-parse HEAD` in the specs directory and dies outside a git
# work tree; the script gives it a one-commit stub repository through GIT_DIR.
# Spector keeps LRO poll counters in process-global variables: run one client at a time per server.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
port="${1:-}"
if ! [[ "$port" =~ ^[0-9]+$ ]] || (( port < 1 || port > 65535 )); then
  echo "usage: $0 PORT [--stop]   (PORT 1-65535)" >&2
  exit 2
fi
spector_version="${SPECTOR_VERSION:-0.1.0-alpha.24-dev.2}"
specs_version="${AZURE_HTTP_SPECS_VERSION:-0.1.0-alpha.38-dev.2}"
cache="${RPCONFORM_TP_CACHE:-/tmp/rpconform-third-party}"
dir="$cache/spector-$spector_version-specs-$specs_version"
pidfile="$dir/spector-$port.pid"
log="$dir/spector-$port.log"
base="http://127.0.0.1:$port"
probe="$base/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/test-rg/providers/Azure.ResourceManager.Resources/topLevelTrackedResources/top?api-version=2023-12-01-preview"

for tool in node npm git; do
  command -v "$tool" >/dev/null 2>&1 || { echo "error: $tool is not installed (Node.js >= 20, npm and git are needed)" >&2; exit 1; }
done

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
    echo "spector on $base stopped"
  else
    rm -f "$pidfile"
    echo "no spector server started by this script on port $port"
  fi
  exit 0
elif [[ -n "${2:-}" ]]; then
  echo "usage: $0 PORT [--stop]" >&2
  exit 2
fi

if answers "$probe" 'topLevelTrackedResources/top'; then
  echo "spector already running at $base"
  exit 0
fi
if port_busy "$port"; then
  echo "error: 127.0.0.1:$port is in use by something that is not Spector" >&2
  exit 1
fi

mkdir -p "$dir"
nm="$dir/node_modules"
# Tests start servers side by side: one install at a time (the others wait, then find it done),
# never two npm installs racing in one folder.
exec 9>"$dir/.install.lock"
flock 9
version_of() { node -e 'try{console.log(require(process.argv[1]).version)}catch{}' "$1/package.json"; }
if [[ "$(version_of "$nm/@typespec/spector")" != "$spector_version" ||
      "$(version_of "$nm/@azure-tools/azure-http-specs")" != "$specs_version" ]]; then
  echo "installing @typespec/spector@$spector_version and @azure-tools/azure-http-specs@$specs_version into $dir ..."
  [[ -f "$dir/package.json" ]] || echo '{"name":"rpconform-spector","private":true}' >"$dir/package.json"
  npm install --prefix "$dir" --no-audit --no-fund --loglevel=error \
    "@typespec/spector@$spector_version" "@azure-tools/azure-http-specs@$specs_version" >"$dir/npm-install.log" 2>&1 || {
    echo "error: npm install failed; see $dir/npm-install.log" >&2
    tail -20 "$dir/npm-install.log" >&2
    exit 1
  }
fi

gitstub="$dir/git-stub"
if ! GIT_DIR="$gitstub/.git" git rev-parse -q --verify HEAD >/dev/null 2>&1; then
  rm -rf "$gitstub"
  git init -q "$gitstub"
  git -C "$gitstub" -c user.name=rpconform -c user.email=rpconform@localhost \
    commit -q --allow-empty -m "spector reads a commit id"
fi

# The install is done: let the next waiting start go (the server must not inherit the lock).
exec 9>&-

cd "$dir"
GIT_DIR="$gitstub/.git" RPCONFORM_BIND_HOST=127.0.0.1 nohup node --require "$here/bind-loopback.cjs" \
  "$nm/@typespec/spector/cmd/cli.mjs" serve "$nm/@azure-tools/azure-http-specs/specs" \
  --port "$port" --coverageFile "$dir/spector-coverage-$port.json" \
  >"$log" 2>&1 </dev/null &
pid=$!
echo "$pid" >"$pidfile"

deadline=$(( SECONDS + ${RPCONFORM_TP_TIMEOUT:-90} ))
until answers "$probe" 'topLevelTrackedResources/top'; do
  if ! kill -0 "$pid" 2>/dev/null; then
    echo "error: spector exited; last lines of $log:" >&2
    tail -20 "$log" >&2
    rm -f "$pidfile"
    exit 1
  fi
  if (( SECONDS >= deadline )); then
    echo "error: spector did not answer within ${RPCONFORM_TP_TIMEOUT:-90}s; log: $log" >&2
    kill "$pid" 2>/dev/null || true
    rm -f "$pidfile"
    exit 1
  fi
  sleep 0.5
done
echo "spector ready at $base (pid $pid, log $log)"
