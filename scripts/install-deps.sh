#!/bin/sh
# SPDX-License-Identifier: MIT
#
# Installs what gtrace needs on Debian (and derivatives): the build tools and
# libraries, then what the tests and benchmarks use. Only the packages not
# installed yet are fetched, so running it again costs nothing. CUDA is
# optional and left to the user (see README.md).
#
# usage: scripts/install-deps.sh

set -eu

# To build, and to run the tests (setpriv, groff for the man page check,
# python3 to decode exported timelines, go for go tool pprof to read
# exported profiles, sqlite3 to query exported databases, GNU time for the
# peak memory of the robustness tests).
required="build-essential make pkg-config libzstd-dev zlib1g-dev libdw-dev libelf-dev
	  libunwind-dev libsqlite3-dev libcapstone-dev procps util-linux groff-base python3 golang-go sqlite3
	  time"
# For the sanitizer and fuzzing builds, the benchmarks, the tests of
# several ranks (Open MPI), of DWARF that dwz shared out to another file
# and of system debuginfo (libc6-dbg), and the browser test (speedscope in
# Debian's chromium, driven by node); not every distribution has them
# under these names. node and npm only
# where there is no node: NodeSource's nodejs has its own npm, which
# Debian's npm would not install beside.
browser=chromium
command -v node >/dev/null 2>&1 || browser="$browser nodejs"
command -v npm >/dev/null 2>&1 || browser="$browser npm"
optional="clang linux-perf openmpi-bin libopenmpi-dev dwz libc6-dbg $browser"

if ! command -v dpkg-query >/dev/null 2>&1 || ! command -v apt-get >/dev/null 2>&1; then
	echo "install-deps: no apt-get here; install by hand a C11 compiler, make," >&2
	echo "  pkg-config, libzstd, zlib, libdw and libelf (elfutils), libunwind, libsqlite3," >&2
	echo "  libcapstone" >&2
	exit 1
fi

# not_installed PACKAGE...: prints those of the packages not installed.
not_installed() {
	for pkg in "$@"; do
		case $(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true) in
		*" installed") ;;
		*) printf ' %s' "$pkg" ;;
		esac
	done
}

# unpackaged_note: names what the tests want that this script leaves to
# the machine: the CPython versions the Python reader's tests want, none of
# which apt-get can install on Debian 12 but 3.11 (the tests find the others
# under pyenv), and rustc, rustup's or Debian's (tests/requirements).
unpackaged_note() {
	pyenv=${PYENV_ROOT:-$HOME/.pyenv}/versions
	for version in 3.10 3.11 3.12 3.13; do
		found=
		for py in /usr/bin/python$version "$pyenv"/$version.*/bin/python3; do
			[ -x "$py" ] && found=1 && break
		done
		[ -n "$found" ] ||
			echo "install-deps: no CPython $version (/usr/bin/python$version or $pyenv/$version.*): its Python tests skip"
	done
	command -v rustc >/dev/null 2>&1 ||
		echo "install-deps: no rustc (rustup's, or apt-get install rustc): the Rust names test skips"
}

# npm_packages: the browser test's npm packages, pinned by
# tests/browser/package-lock.json (speedscope's web app, playwright-core),
# by npm ci from the npm registry into tests/browser/node_modules, unless
# they are installed from that lock file already (node_modules/.installed-lock
# is its copy then).
npm_packages() {
	dir=$(cd "$(dirname "$0")/.." && pwd)/tests/browser
	if cmp -s "$dir/package-lock.json" "$dir/node_modules/.installed-lock"; then
		return 0
	fi
	if ! command -v npm >/dev/null 2>&1; then
		echo "install-deps: no npm: the browser test skips" >&2
		return 0
	fi
	echo "install-deps: npm ci in tests/browser"
	(cd "$dir" && npm ci --no-audit --no-fund --loglevel=error &&
		cp package-lock.json node_modules/.installed-lock) ||
		echo "install-deps: npm ci failed in tests/browser: the browser test skips" >&2
}

# shellcheck disable=SC2086 # one word per package
missing_required=$(not_installed $required)
# shellcheck disable=SC2086
missing_optional=$(not_installed $optional)
if [ -z "$missing_required$missing_optional" ]; then
	echo "install-deps: all packages are installed"
	npm_packages
	unpackaged_note
	exit 0
fi

if [ "$(id -u)" -eq 0 ]; then
	as_root=
elif command -v sudo >/dev/null 2>&1; then
	as_root=sudo
else
	echo "install-deps: need root or sudo to install:$missing_required$missing_optional" >&2
	exit 1
fi

apt_install() {
	$as_root env DEBIAN_FRONTEND=noninteractive \
		apt-get install -qq -y --no-install-recommends "$@" >/dev/null
}

# Without the package lists (no network, say) only the optional packages
# may go without.
if ! $as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq; then
	if [ -n "$missing_required" ]; then
		echo "install-deps: apt-get update failed; cannot install:$missing_required" >&2
		exit 1
	fi
	echo "install-deps: apt-get update failed; skipping the optional:$missing_optional" >&2
	npm_packages
	exit 0
fi
if [ -n "$missing_required" ]; then
	echo "install-deps: installing$missing_required"
	# shellcheck disable=SC2086
	apt_install $missing_required
fi
for pkg in $missing_optional; do
	echo "install-deps: installing $pkg"
	apt_install "$pkg" ||
		echo "install-deps: could not install $pkg (optional: benchmarks, fuzzing, MPI tests, the browser test)" >&2
done
npm_packages
unpackaged_note
echo "install-deps: done"
