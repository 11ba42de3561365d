"""CRUD + watch + conflict scenario with the official Python `kubernetes` client, plus the
kube-apiserver rules clients rely on: Secret stringData, delete answers, the 1 MiB data limit.

Usage: client_scenario.py <kubeconfig> (HTTPS, with the CA and a client certificate). Exits non-zero (with a message) on any mismatch.
"""
import base64
import json
import sys
import threading

from kubernetes import client, config, watch
from kubernetes.client.rest import ApiException


def main(kubeconfig: str) -> None:
    api_client = config.new_client_from_config(config_file=kubeconfig)
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

    secrets_and_limits(core)

    core.delete_namespaced_config_map("py", "default")
    custom.delete_namespaced_custom_object("example.drydock.dev", "v1", "default", "widgets", "pw")
    print("python scenario passed")


def b64(s: str) -> str:
    return base64.b64encode(s.encode()).decode()


def as_status(answer) -> client.V1Status:
    """A delete's answer as a V1Status (clients generated from newer specs hand back the dict)."""
    if isinstance(answer, client.V1Status):
        return answer
    assert isinstance(answer, dict), answer
    return client.V1Status.from_dict(answer)


def secrets_and_limits(core: client.CoreV1Api) -> None:
    # stringData is write-only: merged into data (base64, overriding data's key), never returned
    secret = client.V1Secret(
        metadata=client.V1ObjectMeta(name="py-secret"),
        data={"a": b64("old"), "kept": b64("same")},
        string_data={"a": "new", "b": "plain"},
    )
    created = core.create_namespaced_secret("default", secret)
    assert created.string_data is None, created
    got = core.read_namespaced_secret("py-secret", "default")
    assert got.data == {"a": b64("new"), "b": b64("plain"), "kept": b64("same")}, got.data
    assert got.string_data is None, got.string_data
    patched = core.patch_namespaced_secret("py-secret", "default", {"stringData": {"b": "changed"}})
    assert patched.data["b"] == b64("changed") and patched.string_data is None, patched

    # An object removed at once is answered with a Status (kind holds the resource)
    uid = core.create_namespaced_config_map("default", client.V1ConfigMap(metadata=client.V1ObjectMeta(name="gone"))).metadata.uid
    answer = core.delete_namespaced_config_map("gone", "default")
    status = as_status(answer)
    assert isinstance(status, client.V1Status), status
    assert status.kind == "Status" and status.status == "Success", status
    assert status.details.name == "gone" and status.details.kind == "configmaps" and status.details.uid == uid, status
    status = as_status(core.delete_namespaced_secret("py-secret", "default"))
    assert status.status == "Success" and status.details.kind == "secrets", status

    # ConfigMap data is limited to 1 MiB: 2 MiB is refused with 422 Invalid
    big = client.V1ConfigMap(metadata=client.V1ObjectMeta(name="big"), data={"blob": "x" * (2 * 1024 * 1024)})
    try:
        core.create_namespaced_config_map("default", big)
        raise AssertionError("a 2 MiB ConfigMap was accepted")
    except ApiException as e:
        assert e.status == 422, e
        refused = json.loads(e.body)
        assert refused["reason"] == "Invalid", refused
        assert refused["message"] == 'ConfigMap "big" is invalid: []: Too long: must have at most 1048576 bytes', refused


if __name__ == "__main__":
    main(sys.argv[1])
