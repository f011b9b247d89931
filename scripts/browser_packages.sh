#!/usr/bin/env bash
# What the browser tests need from Debian: a headless Chromium, and the Liberation fonts that
# docs/report.png was drawn with (its pixel comparison depends on them). Installs the missing ones
# as root with apt-get; otherwise names them and exits 1. Both `make test` (which then goes on:
# the tests skip naming the package) and .ci/run (which stops) call it.
set -euo pipefail
missing=()
# Any of the browsers the tests look for (tests/test_report_browser.py: CHROMIUM).
command -v chromium chromium-browser google-chrome >/dev/null || missing+=(chromium)
dpkg -s fonts-liberation >/dev/null 2>&1 || missing+=(fonts-liberation)
[ "${#missing[@]}" = 0 ] && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  apt-get update -q >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}" >/dev/null
else
  echo "missing Debian package(s): ${missing[*]}; install them (this is not root with apt-get)" >&2
  exit 1
fi
