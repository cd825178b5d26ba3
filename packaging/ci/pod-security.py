#!/usr/bin/env python3
"""Checks Kubernetes manifests against the Pod Security Standards their namespaces declare.

usage: pod-security.py [--level LEVEL] FILE...

Reads every YAML document of the files; each Namespace's `pod-security.kubernetes.io/enforce`
label sets the level of the pods in it. Every pod template (Pod, Job, CronJob, DaemonSet,
Deployment, StatefulSet, ReplicaSet) is checked against its namespace's level, or against
LEVEL when given (to show that a manifest would be refused at a stricter level). A workload
whose namespace declares no level is an error. Where an OpenShift SecurityContextConstraints
is among the documents, the pods run by the service accounts it is granted to (by a
RoleBinding to a role that may `use` it) are checked against it too.

The rules are those of the Pod Security Standards (baseline, then restricted) that a pod spec
shows; what only the cluster knows (AppArmor defaults, the runtime's seccomp profile) is not
judged. Prints one line per workload; exit 0 when all are admitted, 1 otherwise, 2 on bad
input.
"""
import sys

import yaml

LEVELS = ["privileged", "baseline", "restricted"]
BASELINE_CAPS = {
    "AUDIT_WRITE", "CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "KILL", "MKNOD",
    "NET_BIND_SERVICE", "SETFCAP", "SETGID", "SETPCAP", "SETUID", "SYS_CHROOT",
}
SAFE_SYSCTLS = {
    "kernel.shm_rmid_forced", "net.ipv4.ip_local_port_range", "net.ipv4.ip_unprivileged_port_start",
    "net.ipv4.tcp_syncookies", "net.ipv4.ping_group_range", "net.ipv4.ip_local_reserved_ports",
    "net.ipv4.tcp_keepalive_time", "net.ipv4.tcp_fin_timeout", "net.ipv4.tcp_keepalive_intvl",
    "net.ipv4.tcp_keepalive_probes",
}
RESTRICTED_VOLUMES = {
    "configMap", "csi", "downwardAPI", "emptyDir", "ephemeral", "persistentVolumeClaim",
    "projected", "secret",
}
SELINUX_TYPES = {"", "container_t", "container_init_t", "container_kvm_t", "container_engine_t"}
VOLUME_KEYS_NOT_TYPES = {"name"}


def pod_spec(doc):
    kind = doc.get("kind")
    spec = doc.get("spec") or {}
    if kind == "Pod":
        return spec
    if kind == "CronJob":
        return ((spec.get("jobTemplate") or {}).get("spec") or {}).get("template", {}).get("spec")
    if kind in {"Job", "DaemonSet", "Deployment", "StatefulSet", "ReplicaSet"}:
        return (spec.get("template") or {}).get("spec")
    return None


def containers(pod):
    for key in ("initContainers", "containers", "ephemeralContainers"):
        for c in pod.get(key) or []:
            yield c


def baseline(pod):
    errs = []
    for k in ("hostNetwork", "hostPID", "hostIPC"):
        if pod.get(k):
            errs.append(f"{k}: true")
    psc = pod.get("securityContext") or {}
    for v in pod.get("volumes") or []:
        if "hostPath" in v:
            errs.append(f"volume {v.get('name')}: hostPath")
    for s in psc.get("sysctls") or []:
        if s.get("name") not in SAFE_SYSCTLS:
            errs.append(f"sysctl {s.get('name')}")
    contexts = [("pod", psc)]
    for c in containers(pod):
        name = c.get("name")
        sc = c.get("securityContext") or {}
        contexts.append((f"container {name}", sc))
        if sc.get("privileged"):
            errs.append(f"container {name}: privileged")
        added = set((sc.get("capabilities") or {}).get("add") or [])
        if added - BASELINE_CAPS:
            errs.append(f"container {name}: capabilities {sorted(added - BASELINE_CAPS)} added")
        for p in c.get("ports") or []:
            if p.get("hostPort"):
                errs.append(f"container {name}: hostPort {p['hostPort']}")
        if sc.get("procMount", "Default") != "Default":
            errs.append(f"container {name}: procMount {sc['procMount']}")
    for where, sc in contexts:
        if (sc.get("seccompProfile") or {}).get("type") == "Unconfined":
            errs.append(f"{where}: seccompProfile Unconfined")
        if (sc.get("appArmorProfile") or {}).get("type") == "Unconfined":
            errs.append(f"{where}: appArmorProfile Unconfined")
        se = sc.get("seLinuxOptions") or {}
        if se.get("type", "") not in SELINUX_TYPES or se.get("user") or se.get("role"):
            errs.append(f"{where}: seLinuxOptions {se}")
    return errs


def restricted(pod):
    errs = []
    psc = pod.get("securityContext") or {}
    for v in pod.get("volumes") or []:
        types = set(v) - VOLUME_KEYS_NOT_TYPES
        if not types <= RESTRICTED_VOLUMES:
            errs.append(f"volume {v.get('name')}: {sorted(types - RESTRICTED_VOLUMES)}")
    pod_nonroot = psc.get("runAsNonRoot") is True
    pod_seccomp = (psc.get("seccompProfile") or {}).get("type")
    if psc.get("runAsUser") == 0:
        errs.append("pod: runAsUser 0")
    for c in containers(pod):
        name = c.get("name")
        sc = c.get("securityContext") or {}
        if sc.get("allowPrivilegeEscalation") is not False:
            errs.append(f"container {name}: allowPrivilegeEscalation is not false")
        nonroot = sc.get("runAsNonRoot", pod_nonroot)
        if nonroot is not True:
            errs.append(f"container {name}: runAsNonRoot is not true")
        if sc.get("runAsUser") == 0:
            errs.append(f"container {name}: runAsUser 0")
        seccomp = (sc.get("seccompProfile") or {}).get("type", pod_seccomp)
        if seccomp not in ("RuntimeDefault", "Localhost"):
            errs.append(f"container {name}: seccompProfile is {seccomp or 'unset'}")
        caps = sc.get("capabilities") or {}
        if "ALL" not in (caps.get("drop") or []):
            errs.append(f"container {name}: capabilities do not drop ALL")
        added = set(caps.get("add") or []) - {"NET_BIND_SERVICE"}
        if added:
            errs.append(f"container {name}: capabilities {sorted(added)} added")
    return errs


def check(pod, level):
    if level == "privileged":
        return []
    errs = baseline(pod)
    if level == "restricted":
        errs += restricted(pod)
    return errs


def scc_check(pod, scc):
    errs = []
    allowed_volumes = set(scc.get("volumes") or [])
    for v in pod.get("volumes") or []:
        for t in set(v) - VOLUME_KEYS_NOT_TYPES:
            if "*" not in allowed_volumes and t not in allowed_volumes:
                errs.append(f"volume {v.get('name')}: {t} not among the SCC's volumes")
    for k, allow in (("hostNetwork", "allowHostNetwork"), ("hostPID", "allowHostPID"),
                     ("hostIPC", "allowHostIPC")):
        if pod.get(k) and not scc.get(allow):
            errs.append(f"{k} without {allow}")
    allowed_caps = set(scc.get("allowedCapabilities") or [])
    for c in containers(pod):
        sc = c.get("securityContext") or {}
        name = c.get("name")
        if sc.get("privileged") and not scc.get("allowPrivilegedContainer"):
            errs.append(f"container {name}: privileged")
        added = set((sc.get("capabilities") or {}).get("add") or [])
        if added - allowed_caps and "*" not in allowed_caps:
            errs.append(f"container {name}: capabilities {sorted(added - allowed_caps)} not allowed")
        if sc.get("allowPrivilegeEscalation") is not False and not scc.get(
                "allowPrivilegeEscalation", True):
            errs.append(f"container {name}: allowPrivilegeEscalation is not false")
        uid = sc.get("runAsUser", (pod.get("securityContext") or {}).get("runAsUser"))
        if uid == 0 and (scc.get("runAsUser") or {}).get("type") != "RunAsAny":
            errs.append(f"container {name}: runs as root, the SCC's runAsUser is not RunAsAny")
    return errs


def main(argv):
    forced = None
    files = []
    it = iter(argv)
    for a in it:
        if a == "--level":
            forced = next(it, None)
            if forced not in LEVELS:
                print(f"--level: one of {', '.join(LEVELS)}", file=sys.stderr)
                return 2
        else:
            files.append(a)
    if not files:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    docs = []
    for f in files:
        try:
            with open(f) as fh:
                docs += [(f, d) for d in yaml.safe_load_all(fh) if d]
        except (OSError, yaml.YAMLError) as e:
            print(f"{f}: {e}", file=sys.stderr)
            return 2
    levels = {}
    for f, d in docs:
        if d.get("kind") == "Namespace":
            labels = (d.get("metadata") or {}).get("labels") or {}
            level = labels.get("pod-security.kubernetes.io/enforce")
            if level:
                levels[d["metadata"]["name"]] = level
    # OpenShift: which SCC each namespace's service accounts may use.
    sccs = {d["metadata"]["name"]: d for _, d in docs if d.get("kind") == "SecurityContextConstraints"}
    roles = {}
    for _, d in docs:
        if d.get("kind") in ("ClusterRole", "Role"):
            for r in d.get("rules") or []:
                if "use" in (r.get("verbs") or []) and "securitycontextconstraints" in (r.get("resources") or []):
                    roles.setdefault(d["metadata"]["name"], []).extend(r.get("resourceNames") or [])
    granted = {}
    for _, d in docs:
        if d.get("kind") in ("RoleBinding", "ClusterRoleBinding"):
            for s in d.get("subjects") or []:
                if s.get("kind") == "ServiceAccount":
                    key = (s.get("namespace") or d["metadata"].get("namespace"), s["name"])
                    granted.setdefault(key, []).extend(roles.get(d["roleRef"]["name"], []))
    failed = 0
    checked = 0
    for f, d in docs:
        pod = pod_spec(d)
        if pod is None:
            continue
        checked += 1
        ns = (d.get("metadata") or {}).get("namespace", "default")
        what = f"{f}: {d['kind']} {ns}/{d['metadata']['name']}"
        level = forced or levels.get(ns)
        if level is None:
            print(f"FAIL {what}: namespace {ns} declares no pod-security.kubernetes.io/enforce level")
            failed += 1
            continue
        errs = check(pod, level)
        used = [n for n in granted.get((ns, pod.get("serviceAccountName", "default")), []) if n in sccs]
        for scc_name in used:
            errs += [f"SCC {scc_name}: {e}" for e in scc_check(pod, sccs[scc_name])]
        if used:
            level += f" and SCC {', '.join(used)}"
        if errs:
            failed += 1
            print(f"FAIL {what} at {level}:")
            for e in errs:
                print(f"  - {e}")
        else:
            print(f"ok   {what} at {level}")
    if checked == 0:
        print("no workloads in the files", file=sys.stderr)
        return 2
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
