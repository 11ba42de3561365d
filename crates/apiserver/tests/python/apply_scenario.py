"""Server-side apply from Python: the official `kubernetes` client's DynamicClient
`server_side_apply` and lightkube's `Client.apply`, on a ConfigMap, a custom resource (the
test Widget) and a Cluster API Cluster: managedFields entries, conflicts (409), forcing,
and dry runs that store nothing.

Usage: apply_scenario.py <kubeconfig> (HTTPS, with the CA and a client certificate). Exits non-zero (with a message) on any mismatch.
"""
import json
import sys

from kubernetes import client, config
from kubernetes.dynamic import DynamicClient
from kubernetes.dynamic.exceptions import ConflictError, NotFoundError

# (apiVersion, kind, the field the managers fight over as a path, its fieldsV1 tree builder)
KINDS = [
    ("v1", "ConfigMap", ".data.mode",
     lambda v: {"data": {"mode": v}},
     {"f:data": {"f:mode": {}}}),
    ("example.drydock.dev/v1", "Widget", ".spec.color",
     lambda v: {"spec": {"color": v}},
     {"f:spec": {"f:color": {}}}),
    ("cluster.x-k8s.io/v1beta1", "Cluster", ".spec.clusterNetwork.serviceDomain",
     lambda v: {"spec": {"clusterNetwork": {"serviceDomain": v}}},
     {"f:spec": {"f:clusterNetwork": {"f:serviceDomain": {}}}}),
]
VALUES = {"ConfigMap": ("fast", "slow"), "Widget": ("red", "blue"),
          "Cluster": ("cluster.local", "example.internal")}


def body(api_version, kind, name, fields):
    obj = {"apiVersion": api_version, "kind": kind, "metadata": {"name": name, "namespace": "default"}}
    obj.update(fields)
    return obj


def entries(obj):
    """(manager, operation) -> fieldsV1, checking every entry's shape."""
    out = {}
    for e in obj["metadata"].get("managedFields") or []:
        assert e["fieldsType"] == "FieldsV1", e
        out[(e["manager"], e["operation"])] = (e["apiVersion"], e["fieldsV1"])
    return out


def value_at(obj, path):
    for part in path.strip(".").split("."):
        obj = (obj or {}).get(part)
    return obj


def kubernetes_client(kubeconfig):
    dyn = DynamicClient(config.new_client_from_config(config_file=kubeconfig))
    for api_version, kind, field, fields, owned in KINDS:
        first, second = VALUES[kind]
        res = dyn.resources.get(api_version=api_version, kind=kind)
        name = "py-" + kind.lower()

        obj = dyn.server_side_apply(res, body=body(api_version, kind, name, fields(first)),
                                    field_manager="py-alice").to_dict()
        assert entries(obj) == {("py-alice", "Apply"): (api_version, owned)}, obj["metadata"]

        theirs = body(api_version, kind, name, fields(second))
        try:
            dyn.server_side_apply(res, body=theirs, field_manager="py-bob")
            raise AssertionError(f"{kind}: a conflicting apply was accepted")
        except ConflictError as e:
            status = json.loads(e.body)
            assert status["reason"] == "Conflict", status
            want = f'Apply failed with 1 conflict: conflict with "py-alice": {field}'
            assert status["message"] == want, status["message"]

        dry = dyn.server_side_apply(res, body=theirs, field_manager="py-bob", force_conflicts=True,
                                    dry_run="All").to_dict()
        assert value_at(dry, field) == second, dry
        stored = dyn.get(res, name=name, namespace="default").to_dict()
        assert value_at(stored, field) == first, f"{kind}: a dry run stored its change: {stored}"

        forced = dyn.server_side_apply(res, body=theirs, field_manager="py-bob", force_conflicts=True).to_dict()
        assert value_at(forced, field) == second, forced
        assert entries(forced) == {("py-bob", "Apply"): (api_version, owned)}, forced["metadata"]

        dry_new = body(api_version, kind, name + "-dry", fields(first))
        dyn.server_side_apply(res, body=dry_new, field_manager="py-alice", dry_run="All")
        try:
            dyn.get(res, name=name + "-dry", namespace="default")
            raise AssertionError(f"{kind}: a dry-run create stored the object")
        except NotFoundError:
            pass


def lightkube_client(kubeconfig):
    from lightkube import ApiError, Client
    from lightkube.config.kubeconfig import KubeConfig
    from lightkube.generic_resource import create_namespaced_resource
    from lightkube.models.meta_v1 import ObjectMeta
    from lightkube.resources.core_v1 import ConfigMap

    widget = create_namespaced_resource("example.drydock.dev", "v1", "Widget", "widgets")
    cluster = create_namespaced_resource("cluster.x-k8s.io", "v1beta1", "Cluster", "clusters")
    lk = Client(KubeConfig.from_file(kubeconfig), field_manager="lk")

    def make(kind, name, fields):
        meta = ObjectMeta(name=name, namespace="default")
        if kind == "ConfigMap":
            return ConfigMap(metadata=meta, data=fields["data"])
        resource = widget if kind == "Widget" else cluster
        return resource(metadata=meta, spec=fields["spec"])

    def as_dict(obj):
        return obj.to_dict() if hasattr(obj, "to_dict") else dict(obj)

    for api_version, kind, field, fields, owned in KINDS:
        first, second = VALUES[kind]
        name = "lk-" + kind.lower()
        obj = as_dict(lk.apply(make(kind, name, fields(first))))
        assert entries(obj) == {("lk", "Apply"): (api_version, owned)}, obj["metadata"]
        try:
            lk.apply(make(kind, name, fields(second)), field_manager="lk-other")
            raise AssertionError(f"{kind}: a conflicting apply was accepted")
        except ApiError as e:
            assert e.status.code == 409 and e.status.reason == "Conflict", e.status
            assert 'conflict with "lk"' in e.status.message, e.status.message
        dry = as_dict(lk.apply(make(kind, name, fields(second)), field_manager="lk-other", force=True, dry_run=True))
        assert value_at(dry, field) == second, dry
        resource = {"ConfigMap": ConfigMap, "Widget": widget, "Cluster": cluster}[kind]
        assert value_at(as_dict(lk.get(resource, name)), field) == first, f"{kind}: dry run stored"
        forced = as_dict(lk.apply(make(kind, name, fields(second)), field_manager="lk-other", force=True))
        assert entries(forced) == {("lk-other", "Apply"): (api_version, owned)}, forced["metadata"]


def main(kubeconfig: str) -> None:
    kubernetes_client(kubeconfig)
    try:
        import lightkube  # noqa: F401
    except ImportError:
        raise AssertionError("lightkube is not installed (pip install lightkube)")
    lightkube_client(kubeconfig)
    print("python apply scenario passed")


if __name__ == "__main__":
    main(sys.argv[1])
