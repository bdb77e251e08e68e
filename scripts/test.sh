#!/usr/bin/env bash
# Install what is missing, then run the whole test suite with FreeCAD's Python (Debian's python3).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
exec /usr/bin/python3 -m pytest -q -ra tests "$@"
