"""Static checks of the app catalog (src/aoi/apps): manifests are valid, self-consistent Kubernetes objects and
app.yaml agrees with them. No cluster is needed; the twin's own deployment tests live elsewhere."""

from __future__ import annotations

import base64
import fnmatch
import json
import os
import re
from pathlib import Path

import pytest
import yaml

APPS_DIR = Path(__file__).resolve().parents[2] / "src" / "aoi" / "apps"
APPS = ["hotel_reservation", "social_network", "astronomy_shop", "platform"]
APP_NAMESPACES = {"hotel_reservation": "test-hotel-reservation", "social_network": "test-social-network",
                  "astronomy_shop": "astronomy-shop"}
CLUSTER_KINDS = {"Namespace", "PersistentVolume", "StorageClass"}
ALLOWED_KINDS = CLUSTER_KINDS | {"Deployment", "StatefulSet", "DaemonSet", "Service", "ConfigMap", "Secret",
                                 "PersistentVolumeClaim", "ServiceAccount", "Job", "Pod"}
WORKLOADS = {"Deployment", "StatefulSet", "DaemonSet", "Job"}
PROTOCOLS = {"http", "grpc", "thrift", "mongodb", "memcached", "redis", "consul", "jaeger", "kafka", "envoy", "flagd",
             "other"}
AIOPSLAB_FLAGS = {"adFailure": "on", "adHighCpu": "on", "adManualGc": "on", "cartFailure": "on",
                  "imageSlowLoad": "10sec", "kafkaQueueProblems": "on", "loadGeneratorFloodHomepage": "on",
                  "paymentFailure": "100%", "paymentUnreachable": "on", "productCatalogFailure": "on",
                  "recommendationCacheFailure": "on"}
CONTROL_PLANE_TAINT = "node-role.kubernetes.io/control-plane"


def load_app(app: str) -> tuple[dict, list[dict]]:
    """Return the app's app.yaml and its manifest objects in apply (filename) order."""
    folder = APPS_DIR / app
    meta = yaml.safe_load((folder / "app.yaml").read_text())
    objects = []
    for path in sorted((folder / "manifests").glob("*.yaml")):
        objects += [o for o in yaml.safe_load_all(path.read_text()) if o is not None]
    return meta, objects


CATALOG = {app: load_app(app) for app in APPS}
ALL_OBJECTS = [o for _, objs in CATALOG.values() for o in objs]


def pod_templates(objects: list[dict]) -> list[tuple[dict, dict, dict]]:
    """Yield (owner, pod metadata, pod spec) for every workload and bare Pod."""
    out = []
    for o in objects:
        if o["kind"] in WORKLOADS:
            t = o["spec"]["template"]
            out.append((o, t.get("metadata", {}), t["spec"]))
        elif o["kind"] == "Pod":
            out.append((o, o["metadata"], o["spec"]))
    return out


def containers(spec: dict) -> list[dict]:
    return list(spec.get("initContainers") or []) + list(spec["containers"])


def find(objects: list[dict], kind: str, name: str, namespace: str | None = None) -> dict | None:
    for o in objects:
        md = o["metadata"]
        if o["kind"] == kind and md["name"] == name and md.get("namespace") == namespace:
            return o
    return None


def selects(selector: dict, labels: dict) -> bool:
    return all(labels.get(k) == v for k, v in selector.items())


def program_for(meta: dict, c: dict) -> str | None:
    """Resolve a container to its program name the way the twin will (first matching image pattern)."""
    for entry in meta["programs"]:
        if fnmatch.fnmatchcase(c["image"], entry["image"]):
            argv = c.get("command") or c.get("args") or [""]
            return entry["program"].replace("{command}", os.path.basename(argv[0]))
    return None


def ids(app_objects):
    return [f"{o['kind']}/{o['metadata'].get('namespace', '')}/{o['metadata']['name']}" for o in app_objects]


# --------------------------------------------------------------------------------------------- object basics
@pytest.mark.parametrize("obj", ALL_OBJECTS, ids=ids(ALL_OBJECTS))
def test_object_basics(obj):
    assert obj.get("apiVersion") and obj.get("kind") and obj["metadata"].get("name")
    assert obj["kind"] in ALLOWED_KINDS
    if obj["kind"] in CLUSTER_KINDS:
        assert "namespace" not in obj["metadata"]
    else:
        assert obj["metadata"].get("namespace"), "namespaced objects must name their namespace"
    for key in ("labels", "annotations"):
        for k, v in (obj["metadata"].get(key) or {}).items():
            assert isinstance(v, str), f"{key} {k} must be a string"


MODELS = {"Namespace": "V1Namespace", "Deployment": "V1Deployment", "StatefulSet": "V1StatefulSet",
          "DaemonSet": "V1DaemonSet", "Service": "V1Service", "ConfigMap": "V1ConfigMap", "Secret": "V1Secret",
          "PersistentVolume": "V1PersistentVolume", "PersistentVolumeClaim": "V1PersistentVolumeClaim",
          "StorageClass": "V1StorageClass", "ServiceAccount": "V1ServiceAccount", "Job": "V1Job", "Pod": "V1Pod"}


def _dropped(original, back, path=""):
    """Return the paths of non-empty fields of `original` that did not survive the model round trip."""
    out = []
    if isinstance(original, dict):
        for k, v in original.items():
            if not isinstance(back, dict) or k not in back:
                if v not in ({}, [], None):
                    out.append(f"{path}/{k}")
            else:
                out += _dropped(v, back[k], f"{path}/{k}")
    elif isinstance(original, list):
        for i, (a, b) in enumerate(zip(original, back)):
            out += _dropped(a, b, f"{path}[{i}]")
    return out


@pytest.mark.parametrize("obj", ALL_OBJECTS, ids=ids(ALL_OBJECTS))
def test_fields_are_known_to_the_kubernetes_api(obj):
    """Round-trip through the official client's models: a misspelled field would be silently dropped."""
    client = pytest.importorskip("kubernetes.client")
    api = client.ApiClient()
    model = api.deserialize(json.dumps(obj), MODELS[obj["kind"]], "application/json")
    assert _dropped(obj, api.sanitize_for_serialization(model)) == []


@pytest.mark.parametrize("app", APPS)
def test_names_are_unique_and_namespaces_exist(app):
    _, objects = CATALOG[app]
    keys = [(o["kind"], o["metadata"].get("namespace"), o["metadata"]["name"]) for o in objects]
    assert len(keys) == len(set(keys))
    declared = {o["metadata"]["name"] for o in ALL_OBJECTS if o["kind"] == "Namespace"}
    for o in objects:
        ns = o["metadata"].get("namespace")
        assert ns is None or ns in declared
        if app in APP_NAMESPACES:
            assert ns in (None, APP_NAMESPACES[app])


@pytest.mark.parametrize("app", APPS)
def test_workload_selectors_match_templates(app):
    _, objects = CATALOG[app]
    for o in objects:
        if o["kind"] in WORKLOADS - {"Job"}:
            labels = o["spec"]["template"]["metadata"]["labels"]
            assert selects(o["spec"]["selector"]["matchLabels"], labels), o["metadata"]["name"]


@pytest.mark.parametrize("app", APPS)
def test_containers_are_complete(app):
    _, objects = CATALOG[app]
    for owner, _, spec in pod_templates(objects):
        names = [c["name"] for c in containers(spec)]
        assert len(names) == len(set(names))
        for c in containers(spec):
            assert c["image"], owner["metadata"]["name"]
            for p in c.get("ports") or []:
                assert isinstance(p["containerPort"], int)
                assert p.get("protocol", "TCP") in ("TCP", "UDP")


# --------------------------------------------------------------------------------------------- services
@pytest.mark.parametrize("app", APPS)
def test_services_select_pods_and_target_declared_ports(app):
    _, objects = CATALOG[app]
    for svc in (o for o in objects if o["kind"] == "Service"):
        selector = svc["spec"].get("selector")
        if not selector:
            assert svc["metadata"]["name"] == "kubernetes", "only the API server's Service has no selector"
            continue
        ns = svc["metadata"]["namespace"]
        selected = [spec for owner, md, spec in pod_templates(objects)
                    if owner["metadata"]["namespace"] == ns and selects(selector, md.get("labels") or {})]
        assert selected, f"Service {svc['metadata']['name']} selects no pod template"
        declared = [(p, c) for spec in selected for c in spec["containers"] for p in c.get("ports") or []]
        for port in svc["spec"]["ports"]:
            target = port.get("targetPort", port["port"])
            proto = port.get("protocol", "TCP")
            if isinstance(target, str):
                hits = [p for p, _ in declared if p.get("name") == target]
            else:
                hits = [p for p, _ in declared if p["containerPort"] == target]
            assert any(p.get("protocol", "TCP") == proto for p in hits), \
                f"{svc['metadata']['name']}: targetPort {target}/{proto} is not a declared container port"
            if svc["spec"].get("type") == "NodePort" and "nodePort" in port:
                assert 30000 <= port["nodePort"] <= 32767


# --------------------------------------------------------------------------------------------- references
def check_volumes(objects, owner, ns: str, vols: dict) -> None:
    """Assert every ConfigMap (and its items), Secret and claim a pod template's volumes name exists."""
    for v in vols.values():
        if "configMap" in v:
            cm = find(objects, "ConfigMap", v["configMap"]["name"], ns)
            assert cm, f"{owner['metadata']['name']}: ConfigMap {v['configMap']['name']} missing"
            for item in v["configMap"].get("items") or []:
                assert item["key"] in cm["data"]
        if "secret" in v:
            assert find(objects, "Secret", v["secret"]["secretName"], ns)
        if "persistentVolumeClaim" in v:
            assert find(objects, "PersistentVolumeClaim", v["persistentVolumeClaim"]["claimName"], ns)


def check_mounts(objects, c: dict, ns: str, vols: dict, claim_templates: set) -> None:
    """Assert a container mounts only declared volumes, and a ConfigMap subPath names one of its keys."""
    for m in c.get("volumeMounts") or []:
        assert m["name"] in vols or m["name"] in claim_templates, f"{c['name']}: volume {m['name']}"
        vol = vols.get(m["name"], {})
        if m.get("subPath") and "configMap" in vol:
            cm = find(objects, "ConfigMap", vol["configMap"]["name"], ns)
            assert m["subPath"] in cm["data"], f"{c['name']}: subPath {m['subPath']}"


def check_env_refs(objects, c: dict, ns: str) -> None:
    """Assert every Secret and ConfigMap key a container's env refers to exists."""
    for e in c.get("env") or []:
        ref = (e.get("valueFrom") or {})
        if "secretKeyRef" in ref:
            s = find(objects, "Secret", ref["secretKeyRef"]["name"], ns)
            assert s and ref["secretKeyRef"]["key"] in s["data"]
        if "configMapKeyRef" in ref:
            cm = find(objects, "ConfigMap", ref["configMapKeyRef"]["name"], ns)
            assert cm and ref["configMapKeyRef"]["key"] in cm["data"]


@pytest.mark.parametrize("app", APPS)
def test_referenced_configmaps_secrets_and_claims_exist(app):
    _, objects = CATALOG[app]
    for owner, _, spec in pod_templates(objects):
        ns = owner["metadata"]["namespace"]
        vols = {v["name"]: v for v in spec.get("volumes") or []}
        claim_templates = {t["metadata"]["name"] for t in owner["spec"].get("volumeClaimTemplates") or []}
        check_volumes(objects, owner, ns, vols)
        for c in containers(spec):
            check_mounts(objects, c, ns, vols, claim_templates)
            check_env_refs(objects, c, ns)
        if spec.get("serviceAccountName"):
            assert find(objects, "ServiceAccount", spec["serviceAccountName"], ns) or \
                spec["serviceAccountName"] == "default"


def test_claims_have_storage():
    classes = {o["metadata"]["name"] for o in ALL_OBJECTS if o["kind"] == "StorageClass"}
    defaults = [o for o in ALL_OBJECTS if o["kind"] == "StorageClass" and
                (o["metadata"].get("annotations") or {}).get("storageclass.kubernetes.io/is-default-class") == "true"]
    assert defaults, "StatefulSet claim templates without a class need a default StorageClass"
    for o in ALL_OBJECTS:
        if o["kind"] in ("PersistentVolumeClaim", "PersistentVolume"):
            assert o["spec"]["storageClassName"] in classes


def test_secrets_decode():
    for o in ALL_OBJECTS:
        if o["kind"] == "Secret":
            for value in (o.get("data") or {}).values():
                base64.b64decode(value, validate=True)


# --------------------------------------------------------------------------------------------- app.yaml
@pytest.mark.parametrize("app", APPS)
def test_app_yaml_shape(app):
    meta, _ = CATALOG[app]
    required = {"name", "namespace", "service_label", "programs", "components", "logs"}
    behaviour = {"tracing", "operations", "workloads", "errors", "flags"}
    assert required <= set(meta) <= required | behaviour
    assert meta["name"] == app.replace("_", "-")
    assert meta["namespace"] == APP_NAMESPACES.get(app)
    for entry in meta["programs"]:
        assert set(entry) == {"image", "program"}
    for prog, spec in meta["logs"].items():
        assert set(spec) == {"format", "startup"}
        assert len(spec["startup"]) <= 15, prog
        for line in spec["startup"]:
            assert len(line) == 3 and all(isinstance(x, str) for x in line), (prog, line)


@pytest.mark.parametrize("app", APPS)
def test_every_container_runs_a_known_program_with_logs(app):
    meta, objects = CATALOG[app]
    for owner, _, spec in pod_templates(objects):
        for c in containers(spec):
            program = program_for(meta, c)
            assert program, f"{owner['metadata']['name']}/{c['name']}: image {c['image']} matches no program"
            assert program in meta["logs"], f"{c['name']}: program {program} has no logs entry"


@pytest.mark.parametrize("app", APPS)
def test_components_have_services_and_known_callees(app):
    meta, objects = CATALOG[app]
    services = {o["metadata"]["name"] for o in objects if o["kind"] == "Service"}
    for name, comp in meta["components"].items():
        assert name in services, f"component {name} has no Service"
        assert comp["protocol"] in PROTOCOLS
        svc = next(o for o in objects if o["kind"] == "Service" and o["metadata"]["name"] == name)
        assert comp["port"] in [p["port"] for p in svc["spec"]["ports"]], f"{name}: port {comp['port']}"
        for callee in comp.get("calls", []):
            assert callee in meta["components"], f"{name} calls unknown {callee}"
        mongo = comp.get("mongo")
        if mongo:
            assert meta["components"][mongo["service"]]["protocol"] == "mongodb"
            assert mongo["service"] in comp["calls"]


# --------------------------------------------------------------------------------------------- per-app facts
def _by_kind(app, kind):
    return [o for o in CATALOG[app][1] if o["kind"] == kind]


def test_hotel_reservation_matches_aiopslab():
    deployments = _by_kind("hotel_reservation", "Deployment")
    assert len(deployments) == 19
    assert len(_by_kind("hotel_reservation", "Service")) == 20  # 19 + NodePort jaeger-out
    go = {"frontend": 5000, "search": 8082, "geo": 8083, "rate": 8084, "profile": 8081, "recommendation": 8085,
          "reservation": 8087, "user": 8086}
    for d in deployments:
        name = d["metadata"]["name"]
        assert d["spec"]["replicas"] == 1
        for part in (d["metadata"]["labels"], d["spec"]["selector"]["matchLabels"],
                     d["spec"]["template"]["metadata"]["labels"]):
            assert part == {"io.kompose.service": name}
        (c,) = d["spec"]["template"]["spec"]["containers"]
        assert c["resources"] == {"requests": {"cpu": "100m"}, "limits": {"cpu": "1000m"}}
        assert "tolerations" not in d["spec"]["template"]["spec"]
        if name in go:
            assert c["name"] == f"hotel-reserv-{name}" and c["command"] == [name]
            assert c["image"] == "yinfangchen/hotelreservation:latest"
            assert {"name": "JAEGER_SAMPLE_RATIO", "value": "1"} in c["env"]
            assert c["ports"] == [{"containerPort": go[name]}]
        if name in ("mongodb-geo", "mongodb-rate"):
            x = name.split("-")[1]
            assert c["args"] == ["--auth"] and c["image"] == "mongo:4.4.6"
            mounts = {m["mountPath"]: m["name"] for m in c["volumeMounts"]}
            vols = {v["name"]: v for v in d["spec"]["template"]["spec"]["volumes"]}
            assert vols[mounts["/docker-entrypoint-initdb.d"]]["configMap"]["name"] == f"mongo-{x}-script"
            assert vols[mounts["/scripts"]]["configMap"]["name"] == f"failure-admin-{x}"
    for svc in _by_kind("hotel_reservation", "Service"):
        name = svc["metadata"]["name"]
        for p in svc["spec"]["ports"]:
            if name.startswith(("mongodb-", "memcached-")):
                assert p["name"] == name
            elif name != "jaeger-out":
                assert p["name"] == str(p["port"])
    consul = find(CATALOG["hotel_reservation"][1], "Service", "consul", "test-hotel-reservation")
    assert {"name": "8600", "port": 8600, "protocol": "UDP", "targetPort": 53} in consul["spec"]["ports"]
    out = find(CATALOG["hotel_reservation"][1], "Service", "jaeger-out", "test-hotel-reservation")
    assert out["spec"]["type"] == "NodePort" and out["spec"]["ports"][0]["port"] == 16686
    for x in ("geo", "profile", "rate", "recommendation", "reservation", "user"):
        pv = find(ALL_OBJECTS, "PersistentVolume", f"{x}-pv")
        assert pv["spec"]["hostPath"]["path"] == f"/data/volumes/{x}-pv"
        assert pv["spec"]["persistentVolumeReclaimPolicy"] == "Retain"
        assert pv["spec"]["capacity"]["storage"] == "1Gi" and pv["spec"]["accessModes"] == ["ReadWriteOnce"]
        pvc = find(ALL_OBJECTS, "PersistentVolumeClaim", f"{x}-pvc", "test-hotel-reservation")
        assert pvc["spec"]["storageClassName"] == pv["spec"]["storageClassName"] == f"{x}-storage"


SCRIPT_LINE = re.compile(r"""^(#.*|[A-Z_]+="[^"]*"|echo "[^"]*"|mongo admin( -u \$\w+ -p \$\w+"""
                         r""" --authenticationDatabase admin| --quiet)? --eval "[^"\n]*")$""")


def test_hotel_mongo_scripts():
    objects = CATALOG["hotel_reservation"][1]
    for x in ("geo", "rate"):
        init = find(objects, "ConfigMap", f"mongo-{x}-script", "test-hotel-reservation")["data"]
        failure = find(objects, "ConfigMap", f"failure-admin-{x}", "test-hotel-reservation")["data"]
        assert set(init) == {f"k8s-{x}-mongo.sh"}
        assert set(failure) == {f"revoke-admin-{x}-mongo.sh", f"revoke-mitigate-admin-{x}-mongo.sh",
                                "remove-admin-mongo.sh", f"remove-mitigate-admin-{x}-mongo.sh"}
        calls = {"k8s": "createUser", "revoke-admin": "revokeRolesFromUser", "revoke-mitigate": "grantRolesToUser",
                 "remove-admin": "dropUser", "remove-mitigate": "createUser"}
        for key, script in {**init, **failure}.items():
            lines = script.strip().splitlines()
            assert lines[0] == "#!/bin/bash"
            for line in lines:
                assert SCRIPT_LINE.match(line), f"{key}: {line!r} is outside the simulated shell subset"
            prefix = next(p for p in calls if key.startswith(p))
            assert calls[prefix] in script
            if prefix != "remove-admin":
                assert f'TARGET_DB="{x}-db"' in script


def test_social_network_matches_aiopslab():
    deployments = _by_kind("social_network", "Deployment")
    assert len(deployments) == 27
    assert len(_by_kind("social_network", "Service")) == 27
    objects = CATALOG["social_network"][1]
    for d in deployments:
        name = d["metadata"]["name"]
        tmpl = d["spec"]["template"]
        assert tmpl["metadata"]["labels"] == {"service": name, "app": name}
        assert d["spec"]["selector"]["matchLabels"] == {"service": name}
        (c,) = tmpl["spec"]["containers"]
        if c["image"].startswith("docker.io/deathstarbench/social-network-microservices"):
            camel = "".join(w.capitalize() for w in name.split("-")[:-1]) + "Service"
            assert c["command"] == [camel] and c["ports"] == [{"containerPort": 9090}]
            cm = find(objects, "ConfigMap", name, "test-social-network")["data"]
            assert "probabilistic" in cm["jaeger-config.yml"] and "param: 0.01" in cm["jaeger-config.yml"]
            json.loads(cm["service-config.json"])
            mounts = {m["mountPath"] for m in c["volumeMounts"]}
            assert "/social-network-microservices/config/service-config.json" in mounts
    usm = find(objects, "Deployment", "url-shorten-mongodb", "test-social-network")
    (c,) = usm["spec"]["template"]["spec"]["containers"]
    assert c["args"] == ["--config", "/social-network-microservices/config/mongod.conf"]
    assert {"name": "tls-cert", "mountPath": "/etc/tls", "readOnly": True} in c["volumeMounts"]
    config_map = find(objects, "ConfigMap", "url-shorten-mongodb", "test-social-network")
    conf = yaml.safe_load(config_map["data"]["mongod.conf"])
    assert conf["net"]["tls"]["mode"] == "disabled"
    tls = find(objects, "Secret", "mongodb-tls", "test-social-network")
    assert tls["type"] == "Opaque" and set(tls["data"]) == {"tls.pem", "ca.crt"}
    assert b"TEST" in base64.b64decode(tls["data"]["tls.pem"])


def test_astronomy_shop_flags_and_wiring():
    objects = CATALOG["astronomy_shop"][1]
    flags = json.loads(find(objects, "ConfigMap", "flagd-config", "astronomy-shop")["data"]["demo.flagd.json"])["flags"]
    for name, variant in AIOPSLAB_FLAGS.items():
        assert flags[name]["defaultVariant"] == "off" and flags[name]["state"] == "ENABLED"
        assert {"off", variant} <= set(flags[name]["variants"]), name
    assert {"10%", "25%", "50%", "75%", "90%"} <= set(flags["paymentFailure"]["variants"])
    assert set(flags["imageSlowLoad"]["variants"]) == {"off", "5sec", "10sec"}
    flagd = find(objects, "Deployment", "flagd", "astronomy-shop")["spec"]["template"]["spec"]
    assert [c["name"] for c in flagd["containers"]] == ["flagd", "flagd-ui"]
    assert {"name": "config-ro", "configMap": {"name": "flagd-config"}} in flagd["volumes"]
    names = {o["metadata"]["name"] for o in objects if o["kind"] in WORKLOADS}
    assert {"accounting", "ad", "cart", "checkout", "currency", "email", "fraud-detection", "frontend",
            "frontend-proxy", "image-provider", "kafka", "load-generator", "payment", "product-catalog", "quote",
            "recommendation", "shipping", "flagd", "valkey-cart", "jaeger", "otel-collector", "prometheus", "grafana",
            "opensearch"} == names
    assert find(objects, "StatefulSet", "opensearch", "astronomy-shop")
    checkout = find(objects, "Deployment", "checkout", "astronomy-shop")
    env = {e["name"]: e.get("value") for e in checkout["spec"]["template"]["spec"]["containers"][0]["env"]}
    assert env["CART_ADDR"] == "cart:8080" and env["KAFKA_ADDR"] == "kafka:9092" and env["FLAGD_HOST"] == "flagd"
    for o in objects:
        if o["kind"] in WORKLOADS:
            spec = o["spec"]["template"]["spec"]
            assert "tolerations" not in spec
            if o["metadata"]["name"] in AIOPSLAB_COMPONENT_IMAGES:
                assert spec["containers"][0]["image"] == AIOPSLAB_COMPONENT_IMAGES[o["metadata"]["name"]]
                assert o["spec"]["template"]["metadata"]["labels"]["app.kubernetes.io/name"] == o["metadata"]["name"]


AIOPSLAB_COMPONENT_IMAGES = {c: f"ghcr.io/open-telemetry/demo:2.0.2-{c}" for c in
                             ["accounting", "ad", "cart", "checkout", "currency", "email", "fraud-detection",
                              "frontend", "frontend-proxy", "image-provider", "kafka", "load-generator", "payment",
                              "product-catalog", "quote", "recommendation", "shipping"]}


def _tolerates_control_plane(spec):
    for t in spec.get("tolerations") or []:
        if t.get("operator") == "Exists" and not t.get("key") and t.get("effect") in (None, "NoSchedule"):
            return True
        if t.get("key") == CONTROL_PLANE_TAINT and t.get("effect") in (None, "NoSchedule"):
            return True
    return False


def test_platform_matches_a_kind_cluster():
    objects = CATALOG["platform"][1]
    static = [o for o in objects if o["kind"] == "Pod"]
    assert {o["metadata"]["name"] for o in static} == {
        f"{c}-kind-control-plane" for c in ("etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler")}
    for pod in static:
        assert pod["spec"]["nodeName"] == "kind-control-plane" and _tolerates_control_plane(pod["spec"])
    for name in ("kube-proxy", "kindnet"):
        assert _tolerates_control_plane(find(objects, "DaemonSet", name, "kube-system")["spec"]["template"]["spec"])
    assert _tolerates_control_plane(find(objects, "DaemonSet", "prometheus-prometheus-node-exporter",
                                         "observe")["spec"]["template"]["spec"])
    coredns = find(objects, "Deployment", "coredns", "kube-system")
    assert coredns["spec"]["replicas"] == 2 and _tolerates_control_plane(coredns["spec"]["template"]["spec"])
    dns = find(objects, "Service", "kube-dns", "kube-system")
    assert dns["spec"]["clusterIP"] == "10.96.0.10"
    assert dns["metadata"]["labels"]["kubernetes.io/cluster-service"] == "true"
    api = find(objects, "Service", "kubernetes", "default")
    assert api["spec"]["clusterIP"] == "10.96.0.1" and api["spec"]["ports"][0]["port"] == 443
    prom = find(objects, "Service", "prometheus-server", "observe")
    assert prom["spec"]["type"] == "NodePort"
    assert prom["spec"]["ports"][0]["nodePort"] == 32000 and prom["spec"]["ports"][0]["targetPort"] == 9090
    pvc = find(objects, "PersistentVolumeClaim", "prometheus-pvc", "observe")
    assert pvc["spec"]["storageClassName"] == "openebs-hostpath"
    assert pvc["spec"]["resources"]["requests"]["storage"] == "10Gi"
    assert find(objects, "StatefulSet", "prometheus-alertmanager", "observe")
    standard = find(objects, "StorageClass", "standard")
    assert standard["metadata"]["annotations"]["storageclass.kubernetes.io/is-default-class"] == "true"
    for name in ("openebs-localpv-provisioner", "openebs-ndm-operator"):
        assert find(objects, "Deployment", name, "openebs")
    assert find(objects, "DaemonSet", "openebs-ndm", "openebs")
    assert find(objects, "Deployment", "local-path-provisioner", "local-path-storage")


@pytest.mark.skipif(not hasattr(yaml, "CSafeLoader"), reason="PyYAML was built without libyaml")
@pytest.mark.parametrize("path", sorted(APPS_DIR.glob("*/**/*.yaml")), ids=lambda p: str(p.relative_to(APPS_DIR)))
def test_catalog_loader_reads_each_file_as_the_pure_python_loader_does(path):
    """load_app parses with libyaml (catalog.LOADER): every shipped file must give the same data as yaml.safe_load.
    Types count too (1 and 1.0 and True compare equal), so the JSON texts are compared."""
    from aoi.apps import catalog

    text = path.read_text()
    fast, pure = list(yaml.load_all(text, Loader=catalog.LOADER)), list(yaml.safe_load_all(text))
    assert catalog.LOADER is yaml.CSafeLoader
    assert json.dumps(fast, sort_keys=True, default=repr) == json.dumps(pure, sort_keys=True, default=repr)
