"""CRUD + watch + conflict scenario with the official Python `kubernetes` client.

Usage: client_scenario.py <server-url>. Exits non-zero (with a message) on any mismatch.
"""
import sys
import threading

from kubernetes import client, watch
from kubernetes.client.rest import ApiException


def main(url: str) -> None:
    cfg = client.Configuration()
    cfg.host = url
    api_client = client.ApiClient(cfg)
    core = client.CoreV1Api(api_client)
    custom = client.CustomObjectsApi(api_client)

    version = client.VersionApi(api_client).get_code()
    assert version.major == "1", version

    # CRUD on a ConfigMap
    body = client.V1ConfigMap(metadata=client.V1ObjectMeta(name="py", labels={"from": "python"}), data={"a": "1"})
    created = core.create_namespaced_config_map("default", body)
    assert created.metadata.uid, created
    got = core.read_namespaced_config_map("py", "default")
    assert got.data == {"a": "1"}, got.data
    listed = core.list_namespaced_config_map("default", label_selector="from=python")
    assert [c.metadata.name for c in listed.items] == ["py"], listed.items

    # Conflict: an update with a stale resourceVersion is refused with 409
    got.data = {"a": "2"}
    core.replace_namespaced_config_map("py", "default", got)
    got.data = {"a": "3"}
    try:
        core.replace_namespaced_config_map("py", "default", got)
        raise AssertionError("stale update was accepted")
    except ApiException as e:
        assert e.status == 409, e
        assert "Conflict" in e.body, e.body

    # Strategic merge patch (the client's default for core kinds)
    patched = core.patch_namespaced_config_map("py", "default", {"data": {"b": "x"}})
    assert patched.data == {"a": "2", "b": "x"}, patched.data

    # Watch from the current revision sees ADDED, MODIFIED and DELETED
    rv = core.list_namespaced_config_map("default").metadata.resource_version
    events = []
    w = watch.Watch()

    def consume():
        for ev in w.stream(core.list_namespaced_config_map, "default", resource_version=rv, timeout_seconds=10):
            if ev["object"].metadata.name == "watched":
                events.append(ev["type"])
            if len(events) == 3:
                w.stop()

    t = threading.Thread(target=consume)
    t.start()
    core.create_namespaced_config_map("default", client.V1ConfigMap(metadata=client.V1ObjectMeta(name="watched")))
    core.patch_namespaced_config_map("watched", "default", {"data": {"k": "v"}})
    core.delete_namespaced_config_map("watched", "default")
    t.join(15)
    assert events == ["ADDED", "MODIFIED", "DELETED"], events

    # Custom resources: merge patch, status subresource, scale subresource
    widget = {"apiVersion": "example.drydock.dev/v1", "kind": "Widget", "metadata": {"name": "pw"}, "spec": {"replicas": 1}}
    custom.create_namespaced_custom_object("example.drydock.dev", "v1", "default", "widgets", widget)
    custom.patch_namespaced_custom_object("example.drydock.dev", "v1", "default", "widgets", "pw", {"spec": {"color": "red"}})
    custom.patch_namespaced_custom_object_status("example.drydock.dev", "v1", "default", "widgets", "pw", {"status": {"replicas": 1}})
    custom.patch_namespaced_custom_object_scale("example.drydock.dev", "v1", "default", "widgets", "pw", {"spec": {"replicas": 3}})
    obj = custom.get_namespaced_custom_object("example.drydock.dev", "v1", "default", "widgets", "pw")
    assert obj["spec"] == {"replicas": 3, "color": "red"}, obj["spec"]
    assert obj["status"] == {"replicas": 1}, obj["status"]

    # Not found is a proper Status
    try:
        core.read_namespaced_config_map("missing", "default")
        raise AssertionError("missing object was found")
    except ApiException as e:
        assert e.status == 404 and "NotFound" in e.body, e

    core.delete_namespaced_config_map("py", "default")
    custom.delete_namespaced_custom_object("example.drydock.dev", "v1", "default", "widgets", "pw")
    print("python scenario passed")


if __name__ == "__main__":
    main(sys.argv[1])
