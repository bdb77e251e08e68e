#!/usr/bin/env bash
# With a screen: open the demo's engine in FreeCAD with its stored run, the player ready to play.
# Installs this add-on for FreeCAD (a link in FreeCAD's Mod folder, once) and runs the demo first
# if its document is not there yet.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
OUT="${1:-out}"
[ -f "$OUT/crank_slider.FCStd" ] || /usr/bin/python3 -m MultibodyWB.demo "$OUT"
MOD="$(/usr/bin/python3 -c 'from MultibodyWB.demo.launch import import_freecad; print(import_freecad().getUserAppDataDir())')Mod"
mkdir -p "$MOD"
if [ ! -e "$MOD/MultibodyWB" ]; then
  ln -s "$PWD" "$MOD/MultibodyWB"
  echo "Installed the Multibody workbench for FreeCAD: $MOD/MultibodyWB -> $PWD"
fi
exec freecad "$OUT/crank_slider.FCStd" MultibodyWB/demo/open_engine.py
