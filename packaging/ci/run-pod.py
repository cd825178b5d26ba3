#!/usr/bin/env python3
"""Runs the first container of a manifest's pod template from a locally built image, as the
pod would run: its user and group, read-only root filesystem, dropped and added capabilities,
no privilege escalation, its environment (`fieldRef: spec.nodeName` becomes --node), its
command and args, its volume mounts (an emptyDir becomes a tmpfs; any other volume a directory
WORK/VOLUME, created and owned by the pod's user and fsGroup), and no network.

usage: run-pod.py MANIFEST --image NAME --work DIR --node NAME
                  [--podman "GLOBAL OPTIONS" | --rootfs DIR]
                  [--env KEY=VALUE]... [--first-word-only | --shell SCRIPT]
                  [-- EXTRA-ARGS...]

  --podman OPTS     run with `podman OPTS run …` (OPTS split on blanks), with runc as the
                    runtime, cgroupfs as the cgroup manager and the open-files and processes
                    limits at the host's own (see packaging/check.sh for why)
  --rootfs DIR      run the image's extracted root filesystem DIR instead: `unshare` (new
                    mount, network, IPC, UTS and PID namespaces: no network) and `chroot
                    --userspec`, with the root bind-mounted read-only and the volumes, /proc, a
                    read-only /sys and /dev mounted into it; capabilities are not set
                    there (a non-root uid has none, as under `drop: [ALL]`; root keeps root's)
  --env KEY=VALUE   set (or override) a variable beyond the manifest's
  --first-word-only keep only the first word of the container's command (drops a DaemonSet's
                    `--every N`, which would never return)
  --shell SCRIPT    run the image's /bin/sh -c SCRIPT instead of the container's command
                    and args, under the same settings (to look at what the container sees)
  EXTRA-ARGS        appended to the container's args (a small, quick job)

The container's stdout is this program's stdout, its stderr ours; exits with its exit code.
"""
import os
import shlex
import subprocess
import sys

import yaml


def fail(msg):
    print(f"run-pod.py: {msg}", file=sys.stderr)
    sys.exit(2)


def main(argv):
    extra = []
    if "--" in argv:
        i = argv.index("--")
        argv, extra = argv[:i], argv[i + 1:]
    opts = {"--env": []}
    rest = []
    it = iter(argv)
    for a in it:
        if a in ("--image", "--work", "--node", "--podman", "--rootfs", "--shell"):
            opts[a] = next(it, None) or fail(f"{a} needs a value")
        elif a == "--env":
            opts["--env"].append(next(it, None) or fail("--env needs KEY=VALUE"))
        elif a == "--first-word-only":
            opts[a] = True
        else:
            rest.append(a)
    if len(rest) != 1 or not all(k in opts for k in ("--image", "--work", "--node")):
        fail(__doc__.split("\n\n")[1])
    if ("--podman" in opts) == ("--rootfs" in opts):
        fail("give one of --podman and --rootfs")

    docs = [d for d in yaml.safe_load_all(open(rest[0])) if d]
    pod = next((d["spec"]["template"]["spec"] for d in docs
                if d.get("spec", {}).get("template")), None) or fail(f"{rest[0]}: no pod template")
    c = pod["containers"][0]
    psc, csc = pod.get("securityContext", {}), c.get("securityContext", {})
    uid = csc.get("runAsUser", psc.get("runAsUser", 65532))
    gid = csc.get("runAsGroup", psc.get("runAsGroup", uid))
    fs_group = psc.get("fsGroup", gid)
    read_only = csc.get("readOnlyRootFilesystem", False)
    no_new_privs = csc.get("allowPrivilegeEscalation", True) is False
    caps = csc.get("capabilities", {})

    env = {}
    for e in c.get("env", []):
        if "value" in e:
            env[e["name"]] = e["value"]
        elif e.get("valueFrom", {}).get("fieldRef", {}).get("fieldPath") == "spec.nodeName":
            env[e["name"]] = opts["--node"]
        else:
            fail(f"{rest[0]}: env {e['name']}: only values and spec.nodeName are known here")
    for kv in opts["--env"]:
        k, _, v = kv.partition("=")
        env[k] = v

    volumes = {v["name"]: v for v in pod.get("volumes", [])}
    tmpfs, binds = [], []
    for m in c.get("volumeMounts", []):
        v = volumes[m["name"]]
        if "emptyDir" in v:
            tmpfs.append(m["mountPath"])
        else:
            host = os.path.join(opts["--work"], m["name"])
            os.makedirs(host, exist_ok=True)
            os.chown(host, uid, fs_group)
            os.chmod(host, 0o2775)
            binds.append((host, m["mountPath"]))

    command = list(c.get("command", []))
    if opts.get("--first-word-only"):
        command = command[:1]
    args = list(c.get("args", [])) + extra
    if "--shell" in opts:
        command, args = ["/bin/sh", "-c", opts["--shell"]], []

    if "--podman" in opts:
        # The host's limits, not podman's defaults (1048576 open files): raising a limit needs
        # CAP_SYS_RESOURCE, which a CI container may not have.
        nofile = min(1024, int(subprocess.check_output(["sh", "-c", "ulimit -Hn"]).strip() or 1024))
        cmd = ["podman", *shlex.split(opts["--podman"]), "--runtime", "runc",
               "--cgroup-manager", "cgroupfs", "run", "--rm", "--pull=never",
               "--network", "none", "--user", f"{uid}:{gid}", "--group-add", str(fs_group),
               "--ulimit", f"nofile={nofile}:{nofile}", "--ulimit", "nproc=4096:4096"]
        if read_only:
            cmd += ["--read-only"]
        if no_new_privs:
            cmd += ["--security-opt", "no-new-privileges"]
        for cap in caps.get("drop", []):
            cmd += ["--cap-drop", cap.lower()]
        for cap in caps.get("add", []):
            cmd += ["--cap-add", cap.lower()]
        for k, v in env.items():
            cmd += ["--env", f"{k}={v}"]
        for t in tmpfs:
            cmd += ["--tmpfs", t]
        for host, path in binds:
            cmd += ["--volume", f"{host}:{path}"]
        if command:
            cmd += ["--entrypoint", command[0]]
        cmd += [opts["--image"], *command[1:], *args]
        return subprocess.call(cmd)

    # The extracted root filesystem, in new namespaces. The image's entrypoint, when the
    # manifest gives no command, is iopscheck.
    root = opts["--rootfs"]
    run = command or ["/usr/bin/iopscheck"]
    script = ["set -e", "mount --make-rprivate /", 'mount --bind "$R" "$R"',
              'mount -t proc proc "$R/proc"', 'mount --rbind /sys "$R/sys"',
              'mount -o remount,bind,ro "$R/sys"', 'mount --rbind /dev "$R/dev"']
    for t in tmpfs:
        script += [f'mkdir -p "$R{t}" 2>/dev/null || true',
                   f'mount -t tmpfs -o mode=1777,size=64m tmpfs "$R{t}"']
    for host, path in binds:
        script += [f'mkdir -p "$R{path}"', f'mount --bind {shlex.quote(host)} "$R{path}"']
    if read_only:
        script += ['mount -o remount,bind,ro "$R"']
    # R, U and G are this script's: the container does not see them.
    script += ['C=$(command -v chroot)',
               'exec env -u R -u U -u G PATH=/usr/bin:/bin "$C" --userspec "$U" --groups "$G" "$R" "$@"']
    cmd = ["unshare", "--mount", "--net", "--ipc", "--uts", "--pid", "--fork", "--kill-child",
           "sh", "-c", "\n".join(script), "sh", *run, *args]
    full_env = {"PATH": os.environ.get("PATH", "/usr/sbin:/usr/bin:/sbin:/bin"), "R": root, "U": f"{uid}:{gid}", "G": str(fs_group), **env}
    return subprocess.call(cmd, env=full_env)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
