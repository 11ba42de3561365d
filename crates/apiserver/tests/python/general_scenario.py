"""The Python `kubernetes` client against built-in kinds beyond the core six and a
CustomResourceDefinition installed at runtime: typed apps/batch/rbac APIs, Service
clusterIP allocation, a CRD becoming Established, its objects defaulted and validated,
the status subresource, a watch, and the CRD's deletion.

Usage: general_scenario.py <kubeconfig> (HTTPS, with the CA and a client certificate). Exits non-zero (with a message) on any mismatch.
"""
import ipaddress
import sys
import time

from kubernetes import client, config, watch
from kubernetes.client.rest import ApiException

CRD = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "gadgets.py.example.com"},
    "spec": {
        "group": "py.example.com",
        "scope": "Namespaced",
        "names": {"kind": "Gadget", "plural": "gadgets", "singular": "gadget", "listKind": "GadgetList"},
        "versions": [{
            "name": "v1", "served": True, "storage": True,
            "subresources": {"status": {}},
            "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                "spec": {"type": "object", "properties": {
                    "size": {"type": "integer", "minimum": 1, "default": 2},
                    "mode": {"type": "string", "enum": ["on", "off"]},
                }},
                "status": {"type": "object", "properties": {"ok": {"type": "boolean"}}},
            }}},
        }],
    },
}


def until(what, fn, timeout=20.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = fn()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def built_in_kinds(api_client):
    apps = client.AppsV1Api(api_client)
    core = client.CoreV1Api(api_client)
    batch = client.BatchV1Api(api_client)
    rbac = client.RbacAuthorizationV1Api(api_client)
    ns = "py-general"
    core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=ns)))

    labels = {"app": "py"}
    container = client.V1Container(name="main", image="nginx:1.27", ports=[client.V1ContainerPort(container_port=80)])
    dep = client.V1Deployment(
        metadata=client.V1ObjectMeta(name="py"),
        spec=client.V1DeploymentSpec(
            selector=client.V1LabelSelector(match_labels=labels),
            template=client.V1PodTemplateSpec(metadata=client.V1ObjectMeta(labels=labels),
                                              spec=client.V1PodSpec(containers=[container]))))
    created = apps.create_namespaced_deployment(ns, dep)
    assert created.spec.replicas == 1, created.spec
    assert created.spec.strategy.type == "RollingUpdate", created.spec.strategy
    assert created.spec.revision_history_limit == 10, created.spec
    assert created.spec.template.spec.containers[0].image_pull_policy == "IfNotPresent"
    assert created.spec.template.spec.containers[0].ports[0].protocol == "TCP"
    scale = apps.patch_namespaced_deployment_scale("py", ns, {"spec": {"replicas": 4}})
    assert scale.spec.replicas == 4, scale
    assert scale.status.selector == "app=py", scale.status

    svc = core.create_namespaced_service(ns, client.V1Service(
        metadata=client.V1ObjectMeta(name="py"),
        spec=client.V1ServiceSpec(selector=labels, ports=[client.V1ServicePort(port=80)])))
    assert svc.spec.type == "ClusterIP", svc.spec
    assert ipaddress.ip_address(svc.spec.cluster_ip) in ipaddress.ip_network("10.96.0.0/12"), svc.spec.cluster_ip
    assert svc.spec.ports[0].target_port == 80, svc.spec.ports
    other = core.create_namespaced_service(ns, client.V1Service(
        metadata=client.V1ObjectMeta(name="py2"),
        spec=client.V1ServiceSpec(selector=labels, ports=[client.V1ServicePort(port=81)])))
    assert other.spec.cluster_ip != svc.spec.cluster_ip, "clusterIPs are unique"

    core.create_namespaced_service_account(ns, client.V1ServiceAccount(metadata=client.V1ObjectMeta(name="bot")))
    rbac.create_namespaced_role(ns, client.V1Role(
        metadata=client.V1ObjectMeta(name="r"),
        rules=[client.V1PolicyRule(api_groups=[""], resources=["pods"], verbs=["get"])]))
    rbac.create_namespaced_role_binding(ns, client.V1RoleBinding(
        metadata=client.V1ObjectMeta(name="rb"),
        role_ref=client.V1RoleRef(api_group="rbac.authorization.k8s.io", kind="Role", name="r"),
        subjects=[client.RbacV1Subject(kind="ServiceAccount", name="bot", namespace=ns)]))
    job = batch.create_namespaced_job(ns, client.V1Job(
        metadata=client.V1ObjectMeta(name="once"),
        spec=client.V1JobSpec(template=client.V1PodTemplateSpec(spec=client.V1PodSpec(
            restart_policy="Never", containers=[client.V1Container(name="c", image="busybox", command=["true"])])))))
    assert job.spec.backoff_limit == 6, job.spec
    names = [d.metadata.name for d in apps.list_deployment_for_all_namespaces().items]
    assert "py" in names, names


def custom_resources(api_client):
    ext = client.ApiextensionsV1Api(api_client)
    custom = client.CustomObjectsApi(api_client)
    ext.create_custom_resource_definition(CRD)

    def established():
        crd = ext.read_custom_resource_definition("gadgets.py.example.com")
        conds = {c.type: c.status for c in (crd.status.conditions or [])} if crd.status else {}
        return conds.get("Established") == "True"
    until("the CRD to be Established", established)

    args = ("py.example.com", "v1", "default", "gadgets")
    obj = custom.create_namespaced_custom_object(*args, {
        "apiVersion": "py.example.com/v1", "kind": "Gadget", "metadata": {"name": "g"}, "spec": {"mode": "on"}})
    assert obj["spec"]["size"] == 2, obj
    try:
        custom.create_namespaced_custom_object(*args, {
            "apiVersion": "py.example.com/v1", "kind": "Gadget", "metadata": {"name": "bad"},
            "spec": {"mode": "sideways", "size": 0}})
        raise AssertionError("an invalid Gadget was accepted")
    except ApiException as e:
        assert e.status == 422, e
        assert "spec.mode" in e.body and "spec.size" in e.body, e.body
    custom.patch_namespaced_custom_object_status(*args, "g", {"status": {"ok": True}})
    got = custom.get_namespaced_custom_object(*args, "g")
    assert got["status"] == {"ok": True}, got

    rv = custom.list_namespaced_custom_object(*args)["metadata"]["resourceVersion"]
    seen = []
    stream = watch.Watch().stream(custom.list_namespaced_custom_object, *args, resource_version=rv, timeout_seconds=10)
    custom.patch_namespaced_custom_object(*args, "g", {"spec": {"size": 5}})
    for event in stream:
        seen.append((event["type"], event["object"]["spec"].get("size")))
        if event["type"] == "MODIFIED":
            break
    assert ("MODIFIED", 5) in seen, seen

    ext.delete_custom_resource_definition("gadgets.py.example.com")

    def removed():
        try:
            ext.read_custom_resource_definition("gadgets.py.example.com")
            return False
        except ApiException as e:
            return e.status == 404
    until("the CRD to be deleted", removed, timeout=60)


def main(kubeconfig: str) -> None:
    api_client = config.new_client_from_config(config_file=kubeconfig)
    built_in_kinds(api_client)
    custom_resources(api_client)
    print("python general scenario passed")


if __name__ == "__main__":
    main(sys.argv[1])
