#!/usr/bin/env bash
# A burst-credit disk to test on (docs/sustained.md): bench/burstdisk.c paces a file in a FUSE
# filesystem with a token bucket; a loop device on that file carries ext4, mounted at DIR/fs.
#   bench/burstdisk.sh up DIR [--size 128m] [--burst 2000] [--baseline 400] [--bucket 6000]
#                             [--unit 262144] [--dirty-max BYTES]
#   bench/burstdisk.sh down DIR
# `up` prints the mount point (DIR/fs) and the loop device; the bucket's account is in
# DIR/fuse/status. --dirty-max caps the page cache's dirty pages for this disk alone (the
# kernel's strict per-device limit), so that buffered writes meet the disk within seconds, as
# they do within minutes on a VM with less memory than this machine. Needs root, /dev/fuse,
# losetup, mkfs.ext4, cc and libfuse3's headers (Debian: libfuse3-dev).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"

up() {
    local dir="$1"; shift
    local size=128m burst=2000 baseline=400 bucket=6000 unit=262144 dirty_max=""
    while [ $# -gt 0 ]; do
        case "$1" in
            --size) size="$2" ;;
            --burst) burst="$2" ;;
            --baseline) baseline="$2" ;;
            --bucket) bucket="$2" ;;
            --unit) unit="$2" ;;
            --dirty-max) dirty_max="$2" ;;
            *) echo "burstdisk.sh: unknown option $1" >&2; exit 2 ;;
        esac
        shift 2
    done
    local bytes
    bytes=$(numfmt --from=iec "${size^^}")
    mkdir -p "$dir/fuse" "$dir/fs"
    local exe="$dir/burstdisk"
    if [ ! -x "$exe" ] || [ "$here/burstdisk.c" -nt "$exe" ]; then
        # shellcheck disable=SC2046
        cc -O2 -Wall -o "$exe" "$here/burstdisk.c" $(pkg-config --cflags --libs fuse3) -lm
    fi
    # Ahead of other work on the machine, as a disk's controller is: on a loaded machine a
    # starved pacer would stall the disk, which no credit bucket does.
    nice -n -10 "$exe" --size "$bytes" --burst "$burst" --baseline "$baseline" \
        --bucket "$bucket" --unit "$unit" "$dir/fuse" >"$dir/burstdisk.log" 2>&1 &
    echo $! >"$dir/burstdisk.pid"
    for _ in $(seq 100); do
        [ -e "$dir/fuse/status" ] && break
        kill -0 "$(cat "$dir/burstdisk.pid")" 2>/dev/null || { cat "$dir/burstdisk.log" >&2; exit 1; }
        sleep 0.05
    done
    [ -e "$dir/fuse/status" ] || { echo "burstdisk did not mount" >&2; down "$dir"; exit 1; }
    local loop
    # Direct I/O to the file: the loop device then keeps several requests in flight to FUSE
    # (asynchronously) instead of one at a time, and no page cache of the file sits between.
    loop=$(losetup -f --show --direct-io=on "$dir/fuse/disk")
    echo "$loop" >"$dir/loop"
    # No journal and no lazy initialisation: the disk then sees the data's I/O and little else
    # (no journal commits every 5 s, no inode tables zeroed in the background).
    mkfs.ext4 -q -F -O ^has_journal -E nodiscard,lazy_itable_init=0 "$loop"
    mount -o nodiscard "$loop" "$dir/fs"
    if [ -n "$dirty_max" ]; then
        local bdi
        bdi="/sys/class/bdi/$(lsblk -dno MAJ:MIN "$loop" | tr -d ' ')"
        echo 1 >"$bdi/strict_limit"
        echo "$dirty_max" >"$bdi/max_bytes"
    fi
    # The bucket starts full: what mkfs and mount spent is given back.
    sync -f "$dir/fs"
    echo refill >"$dir/fuse/control"
    echo "$dir/fs $loop"
}

down() {
    local dir="$1"
    if mountpoint -q "$dir/fs"; then umount "$dir/fs" || umount -l "$dir/fs"; fi
    if [ -f "$dir/loop" ]; then
        local loop bdi
        loop=$(cat "$dir/loop")
        bdi="/sys/class/bdi/$(lsblk -dno MAJ:MIN "$loop" 2>/dev/null | tr -d ' ')"
        # The loop device outlives us: give its page-cache limits back to the next user.
        if [ -w "$bdi/strict_limit" ]; then
            echo 0 >"$bdi/strict_limit"
            echo 100 >"$bdi/max_ratio"
        fi
        losetup -d "$loop" 2>/dev/null || true
        rm -f "$dir/loop"
    fi
    if mountpoint -q "$dir/fuse"; then umount "$dir/fuse" || umount -l "$dir/fuse"; fi
    if [ -f "$dir/burstdisk.pid" ]; then
        local pid
        pid=$(cat "$dir/burstdisk.pid")
        for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.05; done
        kill "$pid" 2>/dev/null || true
        rm -f "$dir/burstdisk.pid"
    fi
}

case "${1:-}" in
    up) shift; [ $# -ge 1 ] || { echo "usage: $0 up DIR [options]" >&2; exit 2; }; up "$@" ;;
    down) shift; [ $# -eq 1 ] || { echo "usage: $0 down DIR" >&2; exit 2; }; down "$1" ;;
    *) echo "usage: $0 up DIR [options] | down DIR" >&2; exit 2 ;;
esac
