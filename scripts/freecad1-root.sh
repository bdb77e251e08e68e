#!/usr/bin/env bash
# A Debian 13 ("trixie") root with FreeCAD 1.0, to test MultibodyWB on FreeCAD 1.0 from a Debian 12 host.
#
#   scripts/freecad1-root.sh                   create the root if it is missing or incomplete; when it is
#                                              complete this only checks its marker file (instant)
#   scripts/freecad1-root.sh run [--bind SRC:DST[:ro]]... [--setenv NAME=VALUE]... [--cwd DIR] -- CMD...
#                                              run CMD inside the root (creating the root first if needed)
#   scripts/freecad1-root.sh path              print where the root is
#   scripts/freecad1-root.sh remove            delete the root
#
# The root lives outside the repository: $MBWB_TRIXIE_ROOT, default /var/cache/multibodywb/trixie-root.
# It is made with `debootstrap --variant=minbase trixie` and `apt-get install --no-install-recommends` of
# the packages below; the marker file <root>/.mbwb-root-complete holds the package list it was made with
# (change the list and the next call installs what is new). Creation happens in <root>.partial and is
# renamed into place at the end, so an interrupted run never leaves a root that looks complete.
#
# Mounts: every command inside the root runs in its own mount and PID namespace (unshare), with /proc,
# /sys, /dev, /dev/pts, /dev/shm and /tmp (tmpfs) mounted there only: they vanish with the namespace,
# even if this script is killed, and no process (Xvfb, FreeCAD) survives the command. Without unshare
# the same mounts are made in the host's namespace and a trap unmounts them. A lock file
# (<root>.lock, flock) serialises creation; commands inside a complete root run concurrently.
#
# Needs root (debootstrap, chroot, mount): re-runs itself with sudo otherwise. Needs network access to
# the Debian mirror ($MBWB_DEBIAN_MIRROR, default http://deb.debian.org/debian) only while creating.
set -euo pipefail

SUITE=trixie
ROOT=${MBWB_TRIXIE_ROOT:-/var/cache/multibodywb/trixie-root}
MIRROR=${MBWB_DEBIAN_MIRROR:-http://deb.debian.org/debian}
PACKAGES=(
  freecad                                     # FreeCAD 1.0.0 (freecadcmd, freecad) and its Python 3.13
  python3-numpy python3-scipy python3-numba python3-lxml python3-matplotlib
  python3-graphviz graphviz
  python3-pil ffmpeg                          # movie export: GIF, MP4
  python3-dask python3-distributed            # design studies
  gmsh                                        # FEM loads: the mesher (CalculiX: below)
  python3-meshio                              # contact shapes from mesh files
  python3-pytest
  xvfb xauth                                  # xvfb-run for the GUI tests
)
MARKER_NAME=.mbwb-root-complete
# Debian 13 has no CalculiX (calculix-ccx and its solver library spooles left it). The FEM tests
# run it on FreeCAD 1.0 too, so the root gets Debian 12's ccx, libspooles and libarpack unpacked
# (not installed: Debian 12's spooles wants Debian 12's MPI package, which would replace the one
# FreeCAD needs) in /opt/calculix-bookworm, and /usr/local/bin/ccx runs it with those libraries
# first. libarpack: Debian 13's own came with a package FreeCAD or Gmsh no longer pulls in (13.8);
# the set-up now fails at once when ccx lacks a library, instead of the FEM tests failing later.
BOOKWORM_PACKAGES=(calculix-ccx libspooles2.2 libarpack2)
STAMP="suite=$SUITE packages=${PACKAGES[*]} bookworm=${BOOKWORM_PACKAGES[*]} layout=1"
# Environment inside the root: nothing from the host leaks in except what is listed here.
BASE_ENV=(PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8
          LC_ALL=C.UTF-8 TERM="${TERM:-dumb}" DEBIAN_FRONTEND=noninteractive)

SELF=$(readlink -f "$0")
PARTIAL="$ROOT.partial"
LOCK="$ROOT.lock"

log() { printf 'freecad1-root: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || die "needs root (debootstrap, chroot, mount) and sudo is missing"
  exec sudo --preserve-env=MBWB_TRIXIE_ROOT,MBWB_DEBIAN_MIRROR,MBWB_ARTIFACTS_DIR,TERM -- "$SELF" "$@"
fi

is_complete() { [ -f "$ROOT/$MARKER_NAME" ] && [ "$(cat "$ROOT/$MARKER_NAME")" = "$STAMP" ]; }

# Mount points (as /proc/self/mountinfo spells them) at or below $1, deepest first.
mounts_below() {
  local dir
  dir=$(readlink -f "$1")
  awk -v d="$dir" '{ p = $5; gsub(/\\040/, " ", p); if (p == d || index(p, d "/") == 1) print p }' \
    /proc/self/mountinfo | sort -r
}

# Delete a root directory, but never through a mount (a bind-mounted repository would be emptied).
remove_tree() {
  local dir=$1 m
  [ -e "$dir" ] || return 0
  for m in $(mounts_below "$dir"); do umount "$m" 2>/dev/null || umount -l "$m" || true; done
  [ -z "$(mounts_below "$dir")" ] || die "still mounted below $dir, not deleting it: $(mounts_below "$dir")"
  rm -rf --one-file-system "$dir"
}

# --- running commands inside a root ----------------------------------------------------------------

MOUNTED=()
cleanup_mounts() {
  local i
  for ((i = ${#MOUNTED[@]} - 1; i >= 0; i--)); do
    umount "${MOUNTED[i]}" 2>/dev/null || umount -l "${MOUNTED[i]}" 2>/dev/null || true
  done
  MOUNTED=()
}

mount_at() {  # mount_at TARGET MOUNT-ARGS... (records TARGET for cleanup_mounts)
  local target=$1; shift
  mkdir -p "$target"
  mount "$@" "$target"
  MOUNTED+=("$target")
}

bind_at() {  # bind_at SRC TARGET ro|rw
  local src=$1 target=$2 mode=$3
  [ -e "$src" ] || die "--bind: $src does not exist"
  if [ -d "$src" ]; then mkdir -p "$target"; else mkdir -p "$(dirname "$target")"; touch "$target"; fi
  mount_at "$target" --bind "$src"
  if [ "$mode" = ro ]; then mount -o remount,bind,ro "$target"; fi
}

# Runs in the new namespaces (or, without unshare, in the host's): mount, chroot, clean up.
# Arguments: DIR [--bind SRC:DST[:ro]]... [--setenv NAME=VALUE]... [--cwd DIR] -- CMD...
inside() {
  local dir=$1; shift
  local binds=() envs=() cwd=/ spec
  while [ $# -gt 0 ]; do
    case $1 in
      --bind) binds+=("$2"); shift 2 ;;
      --setenv) envs+=("$2"); shift 2 ;;
      --cwd) cwd=$2; shift 2 ;;
      --) shift; break ;;
      *) break ;;
    esac
  done
  [ $# -gt 0 ] || die "run: no command given"
  trap cleanup_mounts EXIT
  trap 'exit 130' INT; trap 'exit 143' TERM; trap 'exit 129' HUP
  mount_at "$dir/proc" -t proc proc
  mount_at "$dir/sys" -t sysfs -o ro sysfs
  # /dev: a small tmpfs with the usual nodes (bound from the host's), not the host's whole /dev.
  mount_at "$dir/dev" -t tmpfs -o mode=755,nosuid tmpfs
  local node
  for node in null zero full random urandom tty; do
    touch "$dir/dev/$node"; mount --bind "/dev/$node" "$dir/dev/$node"; MOUNTED+=("$dir/dev/$node")
  done
  mount_at "$dir/dev/pts" -t devpts -o newinstance,ptmxmode=0666,mode=620 devpts
  ln -sf pts/ptmx "$dir/dev/ptmx"
  ln -sf /proc/self/fd "$dir/dev/fd"
  ln -sf /proc/self/fd/0 "$dir/dev/stdin"
  ln -sf /proc/self/fd/1 "$dir/dev/stdout"
  ln -sf /proc/self/fd/2 "$dir/dev/stderr"
  mount_at "$dir/dev/shm" -t tmpfs -o mode=1777,nosuid,nodev tmpfs      # multiprocessing, Qt, Xvfb
  mount_at "$dir/tmp" -t tmpfs -o mode=1777,nosuid,nodev tmpfs           # emptied after every command
  for spec in "${binds[@]}"; do
    local src=${spec%%:*} rest=${spec#*:} dst mode=rw
    dst=${rest%%:*}
    [ "$rest" != "$dst" ] && mode=${rest#*:}
    case $dst in /*) ;; *) die "--bind $spec: the target must be an absolute path" ;; esac
    bind_at "$src" "$dir$dst" "$mode"
  done
  # Name resolution for apt while creating; harmless afterwards.
  if [ -f /etc/resolv.conf ]; then
    rm -f "$dir/etc/resolv.conf"; cat /etc/resolv.conf > "$dir/etc/resolv.conf"
  fi
  local status=0
  chroot "$dir" /usr/bin/env -i "${BASE_ENV[@]}" "${envs[@]}" /bin/sh -c 'cd "$1" && shift && exec "$@"' \
    sh "$cwd" "$@" || status=$?
  cleanup_mounts
  trap - EXIT
  return "$status"
}

# Run a command inside DIR (see `inside` for the arguments), in private namespaces if possible.
in_root() {
  if [ -z "${MBWB_NO_UNSHARE:-}" ] && unshare --mount --pid --fork --propagation private true 2>/dev/null
  then
    unshare --mount --pid --fork --propagation private --kill-child -- "$SELF" __inside "$@"
  else
    inside "$@"
  fi
}

# --- creating the root -------------------------------------------------------------------------------

ensure_debootstrap() {
  command -v debootstrap >/dev/null && [ -e "/usr/share/debootstrap/scripts/$SUITE" ] && return 0
  log "installing debootstrap on the host"
  apt-get update -q
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends debootstrap
  [ -e "/usr/share/debootstrap/scripts/$SUITE" ] || die "this debootstrap does not know $SUITE"
}

install_packages() {  # install_packages DIR
  local dir=$1
  # No services start inside the root; no manual pages or (non-FreeCAD) documentation are unpacked.
  printf '#!/bin/sh\nexit 101\n' > "$dir/usr/sbin/policy-rc.d"; chmod 755 "$dir/usr/sbin/policy-rc.d"
  cat > "$dir/etc/dpkg/dpkg.cfg.d/90-mbwb-nodoc" <<'EOF'
path-exclude=/usr/share/man/*
path-exclude=/usr/share/info/*
path-exclude=/usr/share/doc/*
path-include=/usr/share/doc/*/copyright
path-include=/usr/share/doc/freecad*
EOF
  printf 'Acquire::Languages "none";\nAPT::Install-Recommends "false";\n' \
    > "$dir/etc/apt/apt.conf.d/90-mbwb"
  in_root "$dir" -- /bin/sh -c '
    set -e
    apt-get update -q
    apt-get install -y -q --no-install-recommends "$@"
    apt-get clean
    rm -rf /var/lib/apt/lists/*' sh "${PACKAGES[@]}"
  printf 'deb %s bookworm main\n' "$MIRROR" > "$dir/etc/apt/sources.list.d/mbwb-bookworm.list"
  in_root "$dir" -- /bin/sh -c '
    set -e
    apt-get update -q
    rm -rf /opt/calculix-bookworm /tmp/calculix-debs
    mkdir -p /opt/calculix-bookworm /tmp/calculix-debs
    cd /tmp/calculix-debs
    apt-get download "$@"
    for d in *.deb; do dpkg-deb -x "$d" /opt/calculix-bookworm; done
    rm -rf /tmp/calculix-debs /opt/calculix-bookworm/usr/share
    printf "#!/bin/sh\nLD_LIBRARY_PATH=/opt/calculix-bookworm/usr/lib/x86_64-linux-gnu\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH} exec /opt/calculix-bookworm/usr/bin/ccx \"\$@\"\n" > /usr/local/bin/ccx
    chmod 755 /usr/local/bin/ccx
    if LD_LIBRARY_PATH=/opt/calculix-bookworm/usr/lib/x86_64-linux-gnu \
        ldd /opt/calculix-bookworm/usr/bin/ccx | grep "not found"; then
      echo "freecad1-root: CalculiX (Debian 12) lacks the libraries above" >&2
      exit 1
    fi
    rm -f /etc/apt/sources.list.d/mbwb-bookworm.list
    apt-get update -q
    rm -rf /var/lib/apt/lists/*' sh "${BOOKWORM_PACKAGES[@]}"
}

create() {
  is_complete && return 0
  mkdir -p "$(dirname "$ROOT")"
  exec 9>"$LOCK"
  if ! flock -n -x 9; then
    log "waiting for another run that holds $LOCK"
    flock -x 9
  fi
  if is_complete; then flock -u 9; return 0; fi
  local start=$SECONDS
  if [ -f "$ROOT/$MARKER_NAME" ]; then
    log "updating $ROOT (package list changed)"
    install_packages "$ROOT"
  else
    if [ -e "$ROOT" ]; then
      log "$ROOT exists but is incomplete: deleting it"
      remove_tree "$ROOT"
    fi
    if [ ! -f "$PARTIAL/.mbwb-debootstrap-done" ]; then
      remove_tree "$PARTIAL"
      ensure_debootstrap
      log "debootstrap --variant=minbase $SUITE $PARTIAL $MIRROR"
      debootstrap --variant=minbase "$SUITE" "$PARTIAL" "$MIRROR" >"$PARTIAL.debootstrap.log" 2>&1 || {
        tail -n 30 "$PARTIAL.debootstrap.log" >&2
        die "debootstrap failed (log: $PARTIAL.debootstrap.log)"
      }
      rm -f "$PARTIAL.debootstrap.log"
      touch "$PARTIAL/.mbwb-debootstrap-done"
      log "debootstrap done after $((SECONDS - start)) s"
    fi
    log "installing ${PACKAGES[*]}"
    install_packages "$PARTIAL"
    [ -z "$(mounts_below "$PARTIAL")" ] || die "mounts left below $PARTIAL"
    rm -f "$PARTIAL/.mbwb-debootstrap-done"
    mv "$PARTIAL" "$ROOT"
  fi
  in_root "$ROOT" -- /bin/sh -c 'test -x /usr/bin/freecadcmd && test -x /usr/bin/xvfb-run && python3 -c "import numpy, scipy, numba, lxml, graphviz, pytest, matplotlib"' \
    || die "the root at $ROOT lacks something the tests need"
  printf '%s' "$STAMP" > "$ROOT/$MARKER_NAME"
  log "ready: $ROOT ($(du -sh --one-file-system "$ROOT" | cut -f1)) after $((SECONDS - start)) s"
  flock -u 9
}

# --- command line --------------------------------------------------------------------------------------

case "${1:-create}" in
  create)
    create ;;
  run)
    shift
    create
    exec 9>"$LOCK"
    flock -s 9          # a concurrent re-creation waits until this command is done
    in_root "$ROOT" "$@" ;;
  path)
    echo "$ROOT" ;;
  remove)
    exec 9>"$LOCK"; flock -x 9
    remove_tree "$ROOT"; remove_tree "$PARTIAL" ;;
  __inside)
    shift; inside "$@" ;;
  -h|--help)
    sed -n '2,/^set -euo/p' "$SELF" | sed '$d; s/^# \{0,1\}//' ;;
  *)
    die "unknown command '$1' (create, run, path, remove; see --help)" ;;
esac
