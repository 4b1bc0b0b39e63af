#!/usr/bin/env bash
# Installs the package as a user would — `npm pack`, then the tarball into a fresh project — and checks what the user
# gets: an install that warns of no install script, its size (what it put on disk, the number of packages and the ten
# largest; over INSTALL_LIMIT_MB fails), the command running as `npx svc-mail` and as `svc`, and the example tests of
# svc-mail/testing (examples/testing/) under vitest and under node:test. Each run must end by itself: a sandbox that
# left a socket, timer or thread behind would keep the runner from exiting, and the timeout fails it.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
# What installing svc-mail may put on disk, in MB.
INSTALL_LIMIT_MB=110
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

cd "$root"
# `npm pack` builds first when dist/ is stale (prepack: scripts/prepare.mjs).
tarball="$work/$(npm pack --silent --pack-destination "$work" | tail -1)"
vitest_version=$(node -p "require('./node_modules/vitest/package.json').version")

mkdir "$work/app"
cd "$work/app"
npm init -y >/dev/null
npm pkg set type=module >/dev/null
echo "== the packed package installed in a fresh project =="
npm install --no-audit --no-fund --prefer-offline "$tarball" >"$work/install.log" 2>&1 || {
  cat "$work/install.log"
  exit 1
}
# npm names here every package whose install scripts it would run (or refused to): svc-mail has none to run.
if grep -q 'install-scripts' "$work/install.log"; then
  echo "installing svc-mail warns of install scripts:" >&2
  grep 'install-scripts' "$work/install.log" >&2
  exit 1
fi
node "$root/scripts/installed-size.mjs" node_modules "$INSTALL_LIMIT_MB"

npm install --no-audit --no-fund --prefer-offline "vitest@$vitest_version" >/dev/null
cp "$root"/examples/testing/*.mjs .

echo "== the command, as npx svc-mail and as svc =="
test "$(npx --no-install svc-mail --version)" = "$(node -p "require('$root/package.json').version")"
npx --no-install svc --version >/dev/null
echo "== svc-mail/testing from the installed package, under vitest =="
timeout 120 npx vitest run welcome.test.mjs
echo "== svc-mail/testing from the installed package, under node --test =="
timeout 120 node --test welcome.node-test.mjs
