#!/usr/bin/python3
"""Offline checks of deploy/kubernetes: render every kustomization with `kubectl kustomize`,
validate each object against the Kubernetes API schemas, then check that the objects fit each
other and the agent.

usage: k8s_validate.py DEPLOY_K8S_DIR [--reveal BIN]
  exit 0 all good; 1 a check failed (one "FAIL: ..." line each); 2 usage or missing tools.

Schemas: the API types of the Kubernetes Python client (python3-kubernetes, generated from the
API server's OpenAPI document): every field of every object must be a field of its type (strict,
as `kubectl apply --validate=strict`), of the declared type (str, int, bool, list, map or a nested
type), and the fields the API requires must be there (the client's models refuse None for them).
The PodMonitor is a custom resource of the Prometheus Operator, whose schema is not in the client:
its fields are checked against the subset of monitoring.coreos.com/v1 PodMonitor that the file
uses (PODMONITOR below, from the operator's API reference), so a misspelt field still fails.

Fit (what a schema cannot see):
  - the DaemonSet's selector matches its pod template; ConfigMap volumes name rendered ConfigMaps;
  - the agent's --config file is in a mounted ConfigMap, and `reveal agent --check-config` accepts
    it (with --reveal); its `root` has the host's /proc, /sys and /var/log (pod names) mounted
    read-only beneath it, on a GPU node (the NVIDIA runtime) the kubelet's pod-resources
    directory too (which pod holds each GPU), and
    its store directory is a hostPath volume (the store outlives the pod);
  - --listen's port is a named container port, and the liveness and readiness probes ask
    /healthz on it; hostNetwork (per-namespace /proc/net), system-node-critical priority,
    CAP_PERFMON, a read-only root file system;
  - the PodMonitor selects the DaemonSet's pods, in its namespace, on a port the container has;
  - the Dockerfile's run-time stage installs a package for every shared library the built binary
    links (with --reveal; owners found with dpkg -S).
"""
import argparse
import copy
import os
import re
import subprocess
import sys
import tempfile

try:
    import yaml
    import kubernetes.client as kc
    from kubernetes.client import ApiClient
except ImportError as e:  # pragma: no cover
    print(f"k8s_validate.py: {e} (Debian: apt-get install python3-kubernetes)", file=sys.stderr)
    sys.exit(2)

FAILS = []


def fail(msg):
    FAILS.append(msg)
    print(f"FAIL: {msg}")


# ---------------------------------------------------------------------------- schema validation
PRIMITIVES = {"str": str, "int": int, "bool": bool, "float": (int, float), "object": object, "datetime": str,
              "date": str}


def model_for(api_version, kind):
    """apps/v1 DaemonSet -> kc.V1DaemonSet; v1 ConfigMap -> kc.V1ConfigMap; None if unknown."""
    version = api_version.split("/")[-1]
    name = version[0].upper() + version[1:] + kind
    return getattr(kc, name, None)


def walk(obj, typ, path):
    """Checks obj against the client type string typ ('str', 'list[V1Container]', ...)."""
    if obj is None:
        return
    m = re.fullmatch(r"list\[(.+)\]", typ)
    if m:
        if not isinstance(obj, list):
            fail(f"{path}: want a list, got {type(obj).__name__}")
            return
        for i, x in enumerate(obj):
            walk(x, m.group(1), f"{path}[{i}]")
        return
    m = re.fullmatch(r"dict\((\w+), (.+)\)", typ)
    if m:
        if not isinstance(obj, dict):
            fail(f"{path}: want a map, got {type(obj).__name__}")
            return
        for k, v in obj.items():
            walk(v, m.group(2), f"{path}.{k}")
        return
    if typ in PRIMITIVES:
        want = PRIMITIVES[typ]
        if typ in ("int", "float") and isinstance(obj, bool) or not isinstance(obj, want):
            fail(f"{path}: want {typ}, got {type(obj).__name__} {obj!r}")
        return
    cls = getattr(kc, typ, None)
    if cls is None:
        fail(f"{path}: unknown schema type {typ}")
        return
    if not isinstance(obj, dict):
        fail(f"{path}: want an object ({typ}), got {type(obj).__name__}")
        return
    by_json = {j: p for p, j in cls.attribute_map.items()}
    for key, value in obj.items():
        if key not in by_json:
            fail(f"{path}: unknown field '{key}' in {typ}")
            continue
        walk(value, cls.openapi_types[by_json[key]], f"{path}.{key}")


def validate_schema(doc, where):
    api, kind = doc.get("apiVersion"), doc.get("kind")
    if not api or not kind:
        fail(f"{where}: no apiVersion or kind")
        return
    if api == "monitoring.coreos.com/v1" and kind == "PodMonitor":
        check_subset(doc, PODMONITOR, f"{where} PodMonitor")
        return
    cls = model_for(api, kind)
    if cls is None:
        fail(f"{where}: {api} {kind} is not a Kubernetes API type this check knows")
        return
    walk(doc, cls.__name__, f"{kind}/{doc.get('metadata', {}).get('name', '?')}")
    try:  # the client's models refuse a missing required field (and some bad enum values)
        ApiClient()._ApiClient__deserialize(doc, cls.__name__)
    except ValueError as e:
        fail(f"{kind}/{doc.get('metadata', {}).get('name', '?')}: {e}")


# monitoring.coreos.com/v1 PodMonitor, the fields used here and their neighbours (types as the
# operator's API reference gives them). A dict is an object (its keys the allowed fields), [x] a
# list of x, and "labels" a map of strings.
RELABEL = {"sourceLabels": ["str"], "separator": "str", "targetLabel": "str", "regex": "str", "modulus": "int",
           "replacement": "str", "action": "str"}
PODMONITOR = {
    "apiVersion": "str", "kind": "str",
    "metadata": {"name": "str", "namespace": "str", "labels": "labels", "annotations": "labels"},
    "spec": {
        "jobLabel": "str", "podTargetLabels": ["str"], "sampleLimit": "int", "targetLimit": "int",
        "namespaceSelector": {"any": "bool", "matchNames": ["str"]},
        "selector": {"matchLabels": "labels",
                     "matchExpressions": [{"key": "str", "operator": "str", "values": ["str"]}]},
        "podMetricsEndpoints": [{
            "port": "str", "targetPort": "str", "path": "str", "scheme": "str", "interval": "str",
            "scrapeTimeout": "str", "honorLabels": "bool", "honorTimestamps": "bool",
            "params": "labels", "relabelings": [RELABEL], "metricRelabelings": [RELABEL]}],
    },
}


def check_subset(obj, schema, path):
    if isinstance(schema, dict):
        if not isinstance(obj, dict):
            fail(f"{path}: want an object, got {type(obj).__name__}")
            return
        for k, v in obj.items():
            if k not in schema:
                fail(f"{path}: unknown field '{k}'")
            else:
                check_subset(v, schema[k], f"{path}.{k}")
    elif isinstance(schema, list):
        if not isinstance(obj, list):
            fail(f"{path}: want a list, got {type(obj).__name__}")
            return
        for i, x in enumerate(obj):
            check_subset(x, schema[0], f"{path}[{i}]")
    elif schema == "labels":
        if not isinstance(obj, dict) or not all(isinstance(v, str) for v in obj.values()):
            fail(f"{path}: want a map of strings")
    elif schema == "str" and not isinstance(obj, str) or schema == "int" and (
            not isinstance(obj, int) or isinstance(obj, bool)) or schema == "bool" and not isinstance(obj, bool):
        fail(f"{path}: want {schema}, got {type(obj).__name__} {obj!r}")


# ---------------------------------------------------------------------------------- fit checks
def arg_value(args, flag):
    for i, a in enumerate(args):
        if a.startswith(flag + "="):
            return a.split("=", 1)[1]
        if a == flag and i + 1 < len(args):
            return args[i + 1]
    return None


def toml_value(text, key, section=None):
    """A string value of `key` in the TOML text (top level, or in [section])."""
    current = None
    for line in text.splitlines():
        s = line.split("#", 1)[0].strip()
        m = re.fullmatch(r"\[(.+)\]", s)
        if m:
            current = m.group(1).strip()
            continue
        m = re.fullmatch(rf'{re.escape(key)}\s*=\s*"([^"]*)"', s)
        if m and current == section:
            return m.group(1)
    return None


def mount_of(path, mounts):
    """The volumeMount whose mountPath is path or a parent of it (the longest one)."""
    best = None
    for m in mounts:
        mp = m["mountPath"].rstrip("/") or "/"
        if path == mp or path.startswith(mp + "/"):
            if best is None or len(mp) > len(best["mountPath"]):
                best = m
    return best


def check_fit(docs, name, reveal):
    where = f"[{name}]"
    ds = [d for d in docs if d.get("kind") == "DaemonSet"]
    if len(ds) != 1:
        fail(f"{where} want one DaemonSet, got {len(ds)}")
        return
    ds = ds[0]
    ns = ds["metadata"].get("namespace")
    spec = ds["spec"]
    pod = spec["template"]["spec"]
    labels = spec["template"]["metadata"].get("labels", {})
    sel = spec["selector"].get("matchLabels", {})
    if not sel or any(labels.get(k) != v for k, v in sel.items()):
        fail(f"{where} DaemonSet selector {sel} does not match its pod template's labels {labels}")
    if not pod.get("hostNetwork"):
        fail(f"{where} hostNetwork is not true: /proc/net would show the pod's namespace, not the node's")
    if pod.get("priorityClassName") != "system-node-critical":
        fail(f"{where} priorityClassName is {pod.get('priorityClassName')!r}, want system-node-critical")
    configmaps = {d["metadata"]["name"]: d for d in docs if d.get("kind") == "ConfigMap"}
    volumes = {v["name"]: v for v in pod.get("volumes", [])}
    for v in volumes.values():
        if "configMap" in v and v["configMap"]["name"] not in configmaps:
            fail(f"{where} volume {v['name']} names ConfigMap {v['configMap']['name']}, which is not rendered")
    agents = [c for c in pod["containers"] if (c.get("args") or [None])[0] == "agent"]
    if len(agents) != 1:
        fail(f"{where} want one container running `reveal agent`, got {len(agents)}")
        return
    c = agents[0]
    args = c["args"]
    mounts = c.get("volumeMounts", [])
    sc = c.get("securityContext", {})
    if "PERFMON" not in sc.get("capabilities", {}).get("add", []):
        fail(f"{where} container lacks CAP_PERFMON (system-wide perf events)")
    if not sc.get("readOnlyRootFilesystem"):
        fail(f"{where} root file system not read-only")
    # --listen and the probes
    listen = arg_value(args, "--listen")
    ports = {p.get("name"): p for p in c.get("ports", [])}
    if not listen or ":" not in listen:
        fail(f"{where} no --listen HOST:PORT among the args {args}")
    else:
        port = int(listen.rsplit(":", 1)[1])
        named = [n for n, p in ports.items() if p["containerPort"] == port]
        if not named:
            fail(f"{where} --listen port {port} is not a container port ({list(ports)})")
        for probe in ("livenessProbe", "readinessProbe"):
            g = (c.get(probe) or {}).get("httpGet")
            if not g:
                fail(f"{where} no {probe} httpGet")
                continue
            p = g.get("port")
            if g.get("path") != "/healthz" or (p != port and p not in named):
                fail(f"{where} {probe} asks {g.get('path')} on {p}, want /healthz on port {port}")
    # --config: a file of a mounted ConfigMap
    config = arg_value(args, "--config")
    text = None
    if not config:
        fail(f"{where} no --config among the args")
    else:
        m = mount_of(config, mounts)
        v = volumes.get(m["name"]) if m else None
        if not v or "configMap" not in v:
            fail(f"{where} --config {config} is not in a mounted ConfigMap")
        else:
            key = os.path.relpath(config, m["mountPath"])
            text = (configmaps.get(v["configMap"]["name"], {}).get("data") or {}).get(key)
            if text is None:
                fail(f"{where} ConfigMap {v['configMap']['name']} has no key {key}")
    if text is not None:
        if reveal:
            with tempfile.NamedTemporaryFile("w", suffix=".toml", delete=False) as f:
                f.write(text)
            r = subprocess.run([reveal, "agent", "--config", f.name, "--check-config"], capture_output=True,
                               text=True)
            os.unlink(f.name)
            if r.returncode != 0:
                fail(f"{where} reveal agent --check-config refuses the ConfigMap's file: {r.stderr.strip()}")
        root = toml_value(text, "root") or "/"
        # /proc and /sys for every probe; /var/log for the pod names of the cgroup channels.
        for sub in ("proc", "sys", "var/log"):
            want = os.path.join(root, sub)
            m = mount_of(want, mounts)
            v = volumes.get(m["name"]) if m else None
            host = (v or {}).get("hostPath", {}).get("path")
            if root == "/" or not m or m["mountPath"].rstrip("/") != want or host != f"/{sub}" or not m.get(
                    "readOnly"):
                fail(f"{where} root = {root!r}: the host's /{sub} is not mounted read-only at {want}")
        # A GPU node's DaemonSet (NVIDIA runtime or NVIDIA_VISIBLE_DEVICES): the kubelet's
        # pod-resources socket under root, from the node's directory, for the GPU pod labels.
        gpu = pod.get("runtimeClassName") == "nvidia" or any(
            e.get("name") == "NVIDIA_VISIBLE_DEVICES" for e in c.get("env", []))
        if gpu and root != "/" and toml_value(text, "pod_resources_interval", "kubernetes") not in ("0s", "0"):
            want = os.path.join(root, "var/lib/kubelet/pod-resources")
            m = mount_of(os.path.join(want, "kubelet.sock"), mounts)
            v = volumes.get(m["name"]) if m else None
            host = (v or {}).get("hostPath", {}).get("path")
            if not m or m["mountPath"].rstrip("/") != want or host != "/var/lib/kubelet/pod-resources":
                fail(f"{where} a GPU node's agent without the kubelet's pod-resources socket at {want} "
                     f"(hostPath /var/lib/kubelet/pod-resources): no GPU pod labels")
        store = toml_value(text, "path", "store") or "/var/lib/reveal/agent.db"
        m = mount_of(os.path.dirname(store), mounts)
        v = volumes.get(m["name"]) if m else None
        if not v or "hostPath" not in v or m.get("readOnly"):
            fail(f"{where} the store {store} is not on a writable hostPath volume (it would die with the pod)")
    # PodMonitor
    for pm in (d for d in docs if d.get("kind") == "PodMonitor"):
        if pm["metadata"].get("namespace") != ns:
            fail(f"{where} PodMonitor in namespace {pm['metadata'].get('namespace')!r}, the DaemonSet in {ns!r}")
        ml = pm["spec"].get("selector", {}).get("matchLabels", {})
        if not ml or any(labels.get(k) != v for k, v in ml.items()):
            fail(f"{where} PodMonitor selector {ml} does not select the agent's pods ({labels})")
        for e in pm["spec"].get("podMetricsEndpoints", []):
            if e.get("port") not in ports:
                fail(f"{where} PodMonitor scrapes port {e.get('port')!r}; the container has {list(ports)}")


def check_dockerfile(path, reveal):
    """Every shared library `reveal` links comes from a package the run-time stage installs."""
    text = open(path).read()
    stages = re.split(r"(?m)^FROM ", text)
    final = stages[-1]
    installed = set()
    for m in re.finditer(r"apt-get install((?:\\\n|[^\n])*)", final):
        installed |= {w for w in m.group(1).replace("\\\n", " ").split() if not w.startswith("-") and w != "&&"}
    if "COPY --from=build" not in final:
        fail("Dockerfile: the last stage does not copy the built binary")
    base = {"libc6", "libgcc-s1"}  # in every Debian image
    out = subprocess.run(["ldd", reveal], capture_output=True, text=True).stdout
    for line in out.splitlines():
        m = re.match(r"\s*(\S+) => (/\S+)", line)
        if not m:
            continue
        owners = set()
        for p in {m.group(2), os.path.realpath(m.group(2))}:
            for cand in {p, re.sub(r"^/usr/lib/", "/lib/", p), re.sub(r"^/lib/", "/usr/lib/", p)}:
                r = subprocess.run(["dpkg", "-S", cand], capture_output=True, text=True)
                if r.returncode == 0:
                    owners |= {o.strip().split(":")[0] for o in r.stdout.split(":", 1)[0].split(",")}
        if not owners:
            print(f"note: no package owns {m.group(2)} ({m.group(1)}); not checked")
        elif not owners & (installed | base):
            fail(f"Dockerfile: {reveal} links {m.group(1)} (package {', '.join(sorted(owners))}), "
                 f"which the run-time stage does not install")


# ------------------------------------------------------------------- rendering without kustomize v4+
# Debian 12's kubectl (1.20) embeds kustomize v2.0.3, which predates components (kustomize 3.7,
# kubectl 1.21). Where `kubectl kustomize` cannot render, these files are assembled by the
# subset of kustomize they use, so that the schema and fit checks still run: resources (files and
# directories), components, configMapGenerator (files; the name gets no hash suffix), namespace,
# images (newName, newTag) and inline JSON 6902 patches with a kind/name target (add, replace,
# remove). Any other key is refused, so a new feature cannot slip through unchecked.
KNOWN_KEYS = {"apiVersion", "kind", "resources", "components", "configMapGenerator", "namespace", "images", "patches"}


def json_pointer_apply(doc, op):
    parts = [p.replace("~1", "/").replace("~0", "~") for p in op["path"].split("/")[1:]]
    parent = doc
    for p in parts[:-1]:
        parent = parent[int(p)] if isinstance(parent, list) else parent.setdefault(p, {})
    last = parts[-1]
    if op["op"] in ("add", "replace"):
        if isinstance(parent, list):
            if last == "-":
                parent.append(op["value"])
            elif op["op"] == "add":
                parent.insert(int(last), op["value"])
            else:
                parent[int(last)] = op["value"]
        else:
            parent[last] = op["value"]
    elif op["op"] == "remove":
        del parent[int(last) if isinstance(parent, list) else last]
    else:
        raise ValueError(f"patch op {op['op']} not in the fallback's subset")


def apply_patches(docs, patches):
    for p in patches:
        t = p["target"]
        for doc in docs:
            if doc.get("kind") == t.get("kind") and doc["metadata"].get("name") == t.get("name", doc["metadata"].get("name")):
                for op in yaml.safe_load(p["patch"]):
                    json_pointer_apply(doc, op)


def render_subset(d):
    """The objects of the kustomization in `d`, and (for a Component) the patches it leaves to
    the kustomization that uses it: (docs, pending patches)."""
    k = yaml.safe_load(open(os.path.join(d, "kustomization.yaml")))
    unknown = set(k) - KNOWN_KEYS
    if unknown:
        raise ValueError(f"{d}/kustomization.yaml uses {sorted(unknown)}, outside the fallback's subset")
    docs, patches = [], list(k.get("patches", []))
    for r in k.get("resources", []):
        path = os.path.join(d, r)
        if os.path.isdir(path):
            docs += render_subset(path)[0]
        else:
            docs += [x for x in yaml.safe_load_all(open(path)) if x]
    for c in k.get("components", []):  # a component's patches apply to everything gathered here
        cdocs, cpatches = render_subset(os.path.join(d, c))
        docs += cdocs
        patches += cpatches
    for g in k.get("configMapGenerator", []):
        data = {os.path.basename(f): open(os.path.join(d, f)).read() for f in g.get("files", [])}
        docs.append({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": g["name"]}, "data": data})
    if k.get("kind") == "Component":
        return docs, patches
    apply_patches(docs, patches)
    for doc in docs:
        if "namespace" in k and doc.get("kind") != "Namespace":
            doc["metadata"]["namespace"] = k["namespace"]
        spec = doc.get("spec", {}).get("template", {}).get("spec", {})
        for c in spec.get("containers", []):
            name, _, tag = c["image"].partition(":")
            for img in k.get("images", []):
                if img["name"] == name:
                    c["image"] = f"{img.get('newName', name)}:{img.get('newTag', tag)}"
    return docs, []


def normalized(docs):
    """(kind, name) -> object, with kustomize's ConfigMap hash suffixes removed, to compare the
    subset's rendering with kubectl's."""
    out = {}
    for x in copy.deepcopy(docs):
        if x.get("kind") == "ConfigMap":
            x["metadata"]["name"] = re.sub(r"-[a-z0-9]{10}$", "", x["metadata"]["name"])
        for v in x.get("spec", {}).get("template", {}).get("spec", {}).get("volumes", []):
            if "configMap" in v:
                v["configMap"]["name"] = re.sub(r"-[a-z0-9]{10}$", "", v["configMap"]["name"])
        out[(x.get("kind"), x["metadata"]["name"])] = x
    return out


def main():
    ap = argparse.ArgumentParser(description="Offline checks of deploy/kubernetes")
    ap.add_argument("dir")
    ap.add_argument("--reveal", help="the built binary: check the ConfigMap with it, and the Dockerfile's libraries")
    a = ap.parse_args()
    kubectl = subprocess.run(["sh", "-c", "command -v kubectl"], capture_output=True, text=True).stdout.strip()
    if not kubectl:
        print("k8s_validate.py: kubectl not found (Debian: apt-get install kubernetes-client)", file=sys.stderr)
        return 2
    dirs = sorted(os.path.dirname(os.path.join(r, f)) for r, _, fs in os.walk(a.dir) for f in fs
                  if f == "kustomization.yaml")
    overlays = []
    for d in dirs:
        kind = yaml.safe_load(open(os.path.join(d, "kustomization.yaml"))).get("kind", "Kustomization")
        if kind == "Kustomization":
            overlays.append(d)
        elif kind != "Component":
            fail(f"{d}/kustomization.yaml: kind {kind}")
    if not overlays:
        fail(f"no kustomization under {a.dir}")
    used_components = set()
    for d in overlays:
        name = os.path.relpath(d, a.dir)
        r = subprocess.run([kubectl, "kustomize", d], capture_output=True, text=True)
        how = "kubectl kustomize"
        if r.returncode == 0:
            docs = [x for x in yaml.safe_load_all(r.stdout) if x]
            # The subset (used where kubectl is too old) must render what kubectl renders.
            try:
                if normalized(render_subset(d)[0]) != normalized(docs):
                    fail(f"[{name}] the kustomize subset renders differently from kubectl: update render_subset()")
            except (ValueError, KeyError, OSError, yaml.YAMLError) as e:
                fail(f"[{name}] the kustomize subset cannot render it: {e}")
        else:
            print(f"note: [{name}] kubectl kustomize failed ({(r.stderr.strip().splitlines() or ['?'])[-1]}); "
                  "rendered by the subset of kustomize these files use")
            how = "the kustomize subset"
            try:
                docs = render_subset(d)[0]
            except (ValueError, KeyError, OSError, yaml.YAMLError) as e:
                fail(f"[{name}] cannot render: {e}")
                continue
        for i, doc in enumerate(docs):
            validate_schema(doc, f"[{name}] document {i}")
        check_fit(docs, name, a.reveal)
        k = yaml.safe_load(open(os.path.join(d, "kustomization.yaml")))
        used_components |= {os.path.normpath(os.path.join(d, c)) for c in k.get("components", [])}
        print(f"rendered {name} ({how}): {len(docs)} objects ({', '.join(x['kind'] for x in docs)})")
    for d in dirs:
        if d not in overlays and os.path.normpath(d) not in used_components:
            fail(f"component {os.path.relpath(d, a.dir)} is used by no overlay, so it is never rendered or checked")
    dockerfile = os.path.join(a.dir, "Dockerfile")
    if not os.path.isfile(dockerfile):
        fail("no Dockerfile")
    elif a.reveal:
        check_dockerfile(dockerfile, a.reveal)
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main())
