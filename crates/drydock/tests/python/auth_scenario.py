"""The official Python client over HTTPS: the administrator's kubeconfig works, a client
with the CA but no credential gets 401, and a workload cluster's kubeconfig (with its own
CA and tls-server-name) lists that cluster's nodes."""

import sys

from kubernetes import client, config
from kubernetes.client.rest import ApiException


def main(admin_kubeconfig, ca_file, workload_kubeconfig):
    api = client.CoreV1Api(config.new_client_from_config(config_file=admin_kubeconfig))
    names = [ns.metadata.name for ns in api.list_namespace().items]
    assert "default" in names, names

    anonymous = client.Configuration()
    anonymous.host = api.api_client.configuration.host
    anonymous.ssl_ca_cert = ca_file
    try:
        client.CoreV1Api(client.ApiClient(anonymous)).list_namespace()
        raise AssertionError("an anonymous list was allowed")
    except ApiException as e:
        assert e.status == 401, e

    workload = client.CoreV1Api(config.new_client_from_config(config_file=workload_kubeconfig))
    nodes = workload.list_node().items
    assert len(nodes) >= 1, nodes
    print("python auth scenario passed")


if __name__ == "__main__":
    main(*sys.argv[1:4])
