#!/usr/bin/env bash
# Run the test suite on FreeCAD 1.0.0 / Python 3.13 / numpy 2 (Debian 13) from a Debian 12 host.
#
#   scripts/test-freecad1.sh                      the whole suite (like scripts/test.sh on the host)
#   scripts/test-freecad1.sh tests/test_workbench.py -k gui      other pytest arguments instead of `tests`
#
# Creates the Debian 13 root first if needed (scripts/freecad1-root.sh: about two minutes, then instant),
# then runs `/usr/bin/python3 -m pytest -q -ra` inside it on a copy of this repository (bind-mounted
# read-only at /mbwb/src, copied without .git and __pycache__ to the root's /tmp/mbwb, a tmpfs emptied
# after the run), after compiling the solver's kernels once there (`python3 -m MultibodyWB.solver warmup`,
# as the set-up command does on the host). The copy is writable so that numba caches beside the
# sources, as on the host: with the cache elsewhere (NUMBA_CACHE_DIR) numba files it under the
# source's path as imported, and every FreeCAD the GUI tests start imports the add-on through a
# link in a user folder of its own, so each compiled the kernels again. Nothing is written to the
# repository: no pytest cache (-p no:cacheprovider), no bytecode. Files the tests leave for people
# (the GUI screenshot workbench.png) go to $MBWB_ARTIFACTS_DIR, default
# /var/cache/multibodywb/artifacts-freecad1. Exits with pytest's status.
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
ARTIFACTS=${MBWB_ARTIFACTS_DIR:-/var/cache/multibodywb/artifacts-freecad1}
mkdir -p "$ARTIFACTS" 2>/dev/null || sudo mkdir -p "$ARTIFACTS"

bash "$REPO/scripts/freecad1-root.sh" create

if [ $# -eq 0 ]; then set -- tests; fi
# One line saying what the tests run on, then pytest.
VERSIONS='import platform, subprocess, numpy, scipy, numba
freecad = subprocess.run(["dpkg-query", "-W", "-f=${Version}", "freecad"], capture_output=True, text=True)
debian = open("/etc/debian_version").read().strip()
print(f"test-freecad1: Debian {debian}, FreeCAD {freecad.stdout},",
      f"Python {platform.python_version()}, numpy {numpy.__version__}, scipy {scipy.__version__},",
      f"numba {numba.__version__}", flush=True)'
# The versions, the copy (tests given as paths relative to the repository work there too), the
# kernels compiled once.
PREPARE='set -e; /usr/bin/python3 -c "$0"; mkdir -p /tmp/mbwb
tar -C /mbwb/src --exclude=./.git --exclude=__pycache__ -cf - . | tar -C /tmp/mbwb -xf -
cd /tmp/mbwb; /usr/bin/python3 -m MultibodyWB.solver warmup'
status=0
MBWB_ARTIFACTS_DIR= bash "$REPO/scripts/freecad1-root.sh" run \
  --bind "$REPO:/mbwb/src:ro" --bind "$ARTIFACTS:/mbwb/artifacts" --cwd /mbwb/src \
  --setenv MBWB_ARTIFACTS_DIR=/mbwb/artifacts --setenv MBWB_XVFB_SERVERNUM=300 \
  --setenv MBWB_SUITE=freecad1 \
  --setenv PYTHONDONTWRITEBYTECODE=1 --setenv QTWEBENGINE_CHROMIUM_FLAGS=--no-sandbox \
  -- /bin/sh -c "$PREPARE"' && exec "$@"' "$VERSIONS" \
  /usr/bin/python3 -m pytest -q -ra -p no:cacheprovider "$@" || status=$?
echo "test-freecad1: FreeCAD 1.0 run finished with status $status; artefacts in $ARTIFACTS" >&2
exit "$status"
