"""The official Python `kubernetes` client creates a Deployment and a Service through its
typed APIs and reads back the defaults kube-apiserver would have set.

Usage: builtin_scenario.py <server-url>. Exits non-zero (with a message) on any mismatch.
"""
import ipaddress
import sys

from kubernetes import client


def main(url: str) -> None:
    cfg = client.Configuration()
    cfg.host = url
    api_client = client.ApiClient(cfg)
    apps = client.AppsV1Api(api_client)
    core = client.CoreV1Api(api_client)

    labels = {"app": "py-web"}
    container = client.V1Container(name="web", image="nginx:1.27", ports=[client.V1ContainerPort(container_port=80)])
    deployment = client.V1Deployment(
        metadata=client.V1ObjectMeta(name="py-web"),
        spec=client.V1DeploymentSpec(
            selector=client.V1LabelSelector(match_labels=labels),
            template=client.V1PodTemplateSpec(
                metadata=client.V1ObjectMeta(labels=labels), spec=client.V1PodSpec(containers=[container])
            ),
        ),
    )
    created = apps.create_namespaced_deployment("default", deployment)
    assert created.spec.replicas == 1, created.spec.replicas
    assert created.spec.strategy.type == "RollingUpdate", created.spec.strategy
    assert created.spec.template.spec.containers[0].image_pull_policy == "IfNotPresent"
    assert created.spec.template.spec.containers[0].ports[0].protocol == "TCP"

    scaled = apps.patch_namespaced_deployment_scale("py-web", "default", {"spec": {"replicas": 4}})
    assert scaled.spec.replicas == 4, scaled
    assert scaled.status.selector == "app=py-web", scaled.status

    service = client.V1Service(
        metadata=client.V1ObjectMeta(name="py-web"),
        spec=client.V1ServiceSpec(selector=labels, ports=[client.V1ServicePort(port=80)]),
    )
    svc = core.create_namespaced_service("default", service)
    assert svc.spec.type == "ClusterIP", svc.spec
    assert ipaddress.ip_address(svc.spec.cluster_ip) in ipaddress.ip_network("10.96.0.0/12"), svc.spec.cluster_ip
    assert svc.spec.ports[0].target_port == 80, svc.spec.ports
    listed = apps.list_namespaced_deployment("default")
    assert [d.metadata.name for d in listed.items] == ["py-web"], listed.items
    print("python builtin scenario passed")


if __name__ == "__main__":
    main(sys.argv[1])
