#!/usr/bin/env bash
# Install what MultibodyWB needs from Debian's packages (Debian 12 or 13), then compile the
# solver's kernels. Safe to run again: it installs only what is missing and asks apt for nothing
# when everything is there; the compile is skipped when it was done for these sources.
set -euo pipefail

PACKAGES=(
  freecad                      # FreeCAD (0.20.2 on Debian 12, 1.0.0 on Debian 13) and its Python
  python3-numpy python3-scipy python3-numba python3-lxml python3-matplotlib
  python3-graphviz graphviz    # topology figures
  python3-pil                  # animated GIF export of the playback
  ffmpeg                       # MP4 export of the playback
  python3-dask python3-distributed  # design studies: variants in parallel (local or a cluster)
  gmsh                         # FEM loads: the mesher FreeCAD's FEM uses (Gmsh)
  python3-meshio               # contact shapes from mesh files (STL, OBJ, PLY, ...)
  python3-pytest               # the test suite
  python3-flake8               # the test command's lint step (pyflakes' checks, .flake8)
  xvfb xauth                   # FreeCAD's GUI without a screen (GUI tests, demo renders)
)

# Installed where the Debian release has them: CalculiX (FEM loads solved in FreeCAD's FEM) is in
# Debian 12 but not in Debian 13; without it the FEM analysis is made and meshed, not solved.
OPTIONAL=(calculix-ccx)

installed() { [[ "$(dpkg-query -W -f='${Status}' "$1" 2>/dev/null || true)" == *"install ok installed"* ]]; }
missing=()
for p in "${PACKAGES[@]}"; do installed "$p" || missing+=("$p"); done
optional=()
for p in "${OPTIONAL[@]}"; do installed "$p" || optional+=("$p"); done
if [ ${#missing[@]} -ne 0 ] || [ ${#optional[@]} -ne 0 ]; then
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
  $SUDO apt-get update -q
  for p in "${optional[@]}"; do
    # the policy read whole first: piped into grep -q, apt-cache gets SIGPIPE when grep stops at
    # the match, and with pipefail the test failed, so CalculiX was never installed
    policy=$(apt-cache policy "$p" 2>/dev/null || true)
    if grep -q "Candidate: [0-9]" <<< "$policy"; then
      missing+=("$p")
    else
      echo "note: $p is not in this Debian release's packages: skipped (README: FEM loads)"
    fi
  done
  if [ ${#missing[@]} -ne 0 ]; then
    echo "Installing: ${missing[*]}"
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
  fi
fi

# The solver's kernels compiled once now, so that no run waits a minute for them (at once when
# they are ready already: python3 -m MultibodyWB.solver warmup).
cd "$(dirname "$0")/.."
/usr/bin/python3 -m MultibodyWB.solver warmup
