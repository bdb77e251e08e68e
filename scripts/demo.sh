#!/usr/bin/env bash
# Install what is missing, then run the demo on the built-in crank-slider engine.
# Writes its files to ./out (or the folder given as the first argument) and says where they are.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
exec /usr/bin/python3 -m MultibodyWB.demo "${1:-out}"
