#!/usr/bin/env bash
# Installs the package as a user would — `npm pack`, then the tarball into a fresh project — checks that its command
# runs as `npx svc-mail` and as `svc`, and runs the example tests of svc-mail/testing (examples/testing/) there under
# vitest and under node:test. Each run must end by itself: a sandbox that left a socket, timer or thread behind would
# keep the runner from exiting, and the timeout fails it.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

cd "$root"
tarball="$work/$(npm pack --silent --pack-destination "$work" | tail -1)"
vitest_version=$(node -p "require('./node_modules/vitest/package.json').version")

mkdir "$work/app"
cd "$work/app"
npm init -y >/dev/null
npm pkg set type=module >/dev/null
npm install --no-audit --no-fund --prefer-offline "$tarball" "vitest@$vitest_version" >/dev/null
cp "$root"/examples/testing/*.mjs .

echo "== the command, as npx svc-mail and as svc =="
test "$(npx --no-install svc-mail --version)" = "$(node -p "require('$root/package.json').version")"
npx --no-install svc --version >/dev/null
echo "== svc-mail/testing from the installed package, under vitest =="
timeout 120 npx vitest run welcome.test.mjs
echo "== svc-mail/testing from the installed package, under node --test =="
timeout 120 node --test welcome.node-test.mjs
