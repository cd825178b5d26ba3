#!/usr/bin/env bash
# Builds the iopscheck image with buildah, without a registry: stages a context directory whose
# rootfs/ holds the release binary and the shared libraries `ldd` names for it, the scheduled
# check (packaging/libexec/iopscheck-scheduled) with the shell and the few tools it calls
# (sed, od, tr, date, sleep, mkdir, dirname, each with its libraries), and the built-in
# policies; then builds packaging/kubernetes/Containerfile (FROM scratch) over it.
#
# usage: packaging/kubernetes/image.sh [--binary FILE] [--tag NAME] [--context DIR]
#                                      [-- BUILDAH-GLOBAL-OPTIONS...]
#   --binary FILE  the iopscheck binary (default: `cargo build --release --locked`'s)
#   --tag NAME     the image's name (default: registry.example.com/iopscheck:VERSION, the name
#                  the manifests use, VERSION from Cargo.toml)
#   --context DIR  only stage the context into DIR (empty or new) and build nothing: for
#                  `docker build DIR` or `podman build DIR`
#   -- …           options for buildah itself, e.g. -- --storage-driver vfs --root DIR
# Prints the image's name on stdout when built. Needs ldd and buildah (apt-get install buildah).
set -euo pipefail
cd "$(dirname "$0")/../.."

version=$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -1)
binary=
tag=registry.example.com/iopscheck:$version
context=
while [ $# -gt 0 ]; do
    case $1 in
        --binary) binary=${2:?--binary needs a file}; shift 2 ;;
        --tag) tag=${2:?--tag needs a name}; shift 2 ;;
        --context) context=${2:?--context needs a directory}; shift 2 ;;
        --) shift; break ;;
        -h|--help) sed -n '2,/^set -e/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) echo "image.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    esac
done
if [ -z "$binary" ]; then
    cargo build --release --locked >&2
    binary=${CARGO_TARGET_DIR:-target}/release/iopscheck
fi
[ -x "$binary" ] || { echo "image.sh: --binary $binary: not an executable file" >&2; exit 2; }

if [ -n "$context" ]; then
    mkdir -p "$context"
    if [ -n "$(ls -A "$context")" ]; then
        echo "image.sh: --context $context: not empty" >&2
        exit 2
    fi
    ctx=$context
else
    ctx=$(mktemp -d)
    trap 'rm -rf "$ctx"' EXIT
fi
root=$ctx/rootfs

# put FILE DEST: copies FILE (following links) to DEST in the image, with the libraries ldd
# names for it at the paths the dynamic loader was given.
put() {
    mkdir -p "$root$(dirname "$2")"
    cp -L "$1" "$root$2"
    local lib
    # "libc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x…)" and "/lib64/ld-linux-x86-64.so.2 (0x…)";
    # linux-vdso has no file. A static binary has none ("not a dynamic executable").
    for lib in $(ldd "$1" 2>/dev/null | sed -n 's|.*=> \(/[^ ]*\) .*|\1|p; s|^[[:space:]]*\(/[^ ]*\) .*|\1|p'); do
        if [ ! -e "$root$lib" ]; then
            mkdir -p "$root$(dirname "$lib")"
            cp -L "$lib" "$root$lib"
        fi
    done
}

put "$binary" /usr/bin/iopscheck
put packaging/libexec/iopscheck-scheduled /usr/lib/iopscheck/iopscheck-scheduled
chmod 0755 "$root/usr/lib/iopscheck/iopscheck-scheduled"
mkdir -p "$root/usr/share/iopscheck/policies"
cp policies/*.yaml "$root/usr/share/iopscheck/policies/"
# The scheduled check's shell and tools (the DaemonSet runs it): the host's, with their
# libraries. dash where there is one (Debian's /bin/sh), else the host's sh.
put "$(command -v dash || command -v sh)" /bin/sh
for tool in sed od tr date sleep mkdir dirname ls id readlink; do
    put "$(command -v "$tool")" "/usr/bin/$tool"
done
# Mount points, for runtimes that do not create them on a read-only root (and for chroot).
mkdir -p "$root/data" "$root/proc" "$root/sys" "$root/dev" "$root/tmp"
chmod 1777 "$root/tmp"
cp packaging/kubernetes/Containerfile "$ctx/Containerfile"

if [ -n "$context" ]; then
    echo "image.sh: context staged in $context: docker build -t $tag $context" >&2
    exit 0
fi
buildah "$@" bud --quiet --layers=false \
    --label "org.opencontainers.image.version=$version" \
    --label "org.opencontainers.image.revision=$(git rev-parse HEAD 2>/dev/null || echo unknown)" \
    -f "$ctx/Containerfile" -t "$tag" "$ctx" >&2
echo "$tag"
