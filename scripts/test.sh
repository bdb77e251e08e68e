#!/usr/bin/env bash
# The whole test suite, on both FreeCAD versions the workbench supports:
#   1. on this Debian 12 machine: FreeCAD 0.20.2, Debian's /usr/bin/python3 (FreeCAD's Python);
#   2. in a Debian 13 root (scripts/freecad1-root.sh, made once: about two minutes, 2 GB, needs
#      root or sudo): FreeCAD 1.0.0, Python 3.13, numpy 2 (scripts/test-freecad1.sh).
# Installs what is missing first. Set MBWB_SKIP_FREECAD1=1 to run only the first part.
# Extra arguments go to pytest (both parts). Fails when any test fails.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
status=0
echo "== tests on $(/usr/bin/python3 -c 'import sys; print("Python", sys.version.split()[0])'), FreeCAD 0.20 (this machine) =="
/usr/bin/python3 -m pytest -q -ra tests "$@" || status=$?
if [ "${MBWB_SKIP_FREECAD1:-0}" != "1" ]; then
  echo "== the same tests on FreeCAD 1.0.0 (Debian 13 root) =="
  bash scripts/test-freecad1.sh "$@" || status=$?
fi
exit "$status"
