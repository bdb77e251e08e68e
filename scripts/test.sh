#!/usr/bin/env bash
# The whole test suite, on both FreeCAD versions the workbench supports:
#   1. on this Debian 12 machine: FreeCAD 0.20.2, Debian's /usr/bin/python3 (FreeCAD's Python);
#   2. in a Debian 13 root (scripts/freecad1-root.sh, made once: about two minutes, 2 GB, needs
#      root or sudo): FreeCAD 1.0.0, Python 3.13, numpy 2 (scripts/test-freecad1.sh).
# Installs what is missing first. Set MBWB_SKIP_FREECAD1=1 to run only the first part.
# Extra arguments go to pytest (both parts). Fails when any test fails.
set -euo pipefail
cd "$(dirname "$0")/.."
# The FreeCAD 1.0 part runs beside the host's (two cores: each suite is mostly one process), its
# output kept in a file and printed after the host's; MBWB_SERIAL=1 runs them one after the other.
status=0
fc1_log=""
fc1_pid=""
if [ "${MBWB_SKIP_FREECAD1:-0}" != "1" ] && [ "${MBWB_SERIAL:-0}" != "1" ]; then
  fc1_log=$(mktemp /tmp/mbwb-freecad1-XXXXXX.log)
  # job control on while it starts: without it a background command ignores SIGINT (POSIX),
  # and so would every process of that suite (the tests of Ctrl-C send it one)
  set -m
  bash scripts/test-freecad1.sh --durations=15 "${@:-tests}" >"$fc1_log" 2>&1 &
  fc1_pid=$!
  set +m
fi
bash scripts/install-deps.sh
# The lint step (.flake8: pyflakes' checks, unused and undefined names): it fails the run too.
echo "== lint: flake8 (.flake8) =="
if /usr/bin/python3 -m flake8 MultibodyWB tests benchmarks scripts InitGui.py Init.py; then
  echo "lint: clean"
else
  status=1
fi
echo "== tests on $(/usr/bin/python3 -c 'import sys; print("Python", sys.version.split()[0])'), FreeCAD 0.20 (this machine) =="
/usr/bin/python3 -m pytest -q -ra --durations=15 tests "$@" || status=$?
if [ -n "$fc1_pid" ]; then
  echo "== the same tests on FreeCAD 1.0.0 (Debian 13 root), run beside the ones above =="
  fc1_status=0
  wait "$fc1_pid" || fc1_status=$?
  cat "$fc1_log"
  rm -f "$fc1_log"
  [ "$fc1_status" -eq 0 ] || status=$fc1_status
elif [ "${MBWB_SKIP_FREECAD1:-0}" != "1" ]; then
  echo "== the same tests on FreeCAD 1.0.0 (Debian 13 root) =="
  bash scripts/test-freecad1.sh --durations=15 "${@:-tests}" || status=$?
fi
exit "$status"
