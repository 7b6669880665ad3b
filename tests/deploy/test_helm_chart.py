"""The Helm chart: `helm lint`, then a real `helm install` whose objects are schema-checked.

No `helm` binary is packaged for this machine (not in Debian's archive), but PyPI's helm-sdkpy
ships the Helm v4 engine as a library: lint and install run through it. The install goes to a
small Kubernetes API server on 127.0.0.1 (`kube_api.py`), and every object Helm sent it is
validated against the Kubernetes JSON schemas (kubernetes-validate, offline) and checked for the
wiring Pilothouse needs.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
from kube_api import KubeApi

from pilothouse.sandbox.argocd.server import running_app

CHART = Path(__file__).resolve().parents[2] / "deploy" / "helm" / "pilothouse"
RUNNER = Path(__file__).with_name("helm_run.py")
KUBERNETES_VERSION = "1.30"
HELM_MISSING = ("helm-sdkpy is not installed: pip install --ignore-requires-python "
                "helm-sdkpy==0.1.32 (the Helm engine; its wheel is pure Python plus Helm's "
                "library and runs on 3.11)")


AUTH = {"auth": {"apiKeys": "ops=ops-key-123456-9f3b7d1a5c8e2b6f0d4a"}}


def run_helm(*args: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([sys.executable, str(RUNNER), *args], capture_output=True, text=True,
                          timeout=180, env={**os.environ, "HELM_DRIVER": "memory"})
    if "No module named 'helm_sdkpy'" in done.stderr:
        pytest.fail(HELM_MISSING)
    return done


def helm(*args: str) -> Any:
    done = run_helm(*args)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout)


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[tuple[KubeApi, Path]]:
    api = KubeApi()
    with running_app(api.app) as url:
        kubeconfig = tmp_path / "kubeconfig"
        kubeconfig.write_text(json.dumps({
            "apiVersion": "v1", "kind": "Config", "current-context": "test",
            "clusters": [{"name": "test", "cluster": {"server": url}}],
            "users": [{"name": "test", "user": {"token": "test"}}],
            "contexts": [{"name": "test", "context": {"cluster": "test", "user": "test"}}],
        }))
        yield api, kubeconfig


def install(cluster: tuple[KubeApi, Path], values: dict[str, Any]) -> dict[str, dict[str, Any]]:
    api, kubeconfig = cluster
    release = helm("install", str(CHART), str(kubeconfig), json.dumps(values))
    assert release["info"]["status"] == "deployed"
    for obj in api.objects.values():
        kubernetes_validate.validate(obj, KUBERNETES_VERSION, strict=True)
    return {f"{o['kind']}/{o['metadata']['name']}": o for o in api.objects.values()}


def env_of(deployment: dict[str, Any]) -> dict[str, Any]:
    [container] = deployment["spec"]["template"]["spec"]["containers"]
    return {e["name"]: e.get("value", e.get("valueFrom")) for e in container["env"]}


def test_helm_lint_passes_with_no_errors() -> None:
    result = helm("lint", str(CHART))
    assert result["TotalChartsLinted"] == 1
    assert not result["Errors"]
    assert all(m["Severity"] < 3 for m in result["Messages"]), result["Messages"]


def test_helm_lint_catches_a_broken_template(tmp_path: Path) -> None:
    broken = tmp_path / "pilothouse"
    subprocess.run(["cp", "-r", str(CHART), str(broken)], check=True)
    (broken / "templates" / "broken.yaml").write_text("kind: {{ .Values.nope.deeper }}\n")
    assert helm("lint", str(broken))["Errors"]


def test_the_default_install_wires_the_supervisor_to_each_enabled_agent(
    cluster: tuple[KubeApi, Path],
) -> None:
    objects = install(cluster, {"database": {"url": "postgresql://ph:pw@postgres/ph"},
                                "supervisor": {"replicas": 2}, **AUTH})

    deployments = {k.split("/")[1]: v for k, v in objects.items() if k.startswith("Deployment/")}
    assert sorted(deployments) == ["demo-pilothouse-argocd", "demo-pilothouse-github",
                                   "demo-pilothouse-supervisor"]
    supervisor = deployments["demo-pilothouse-supervisor"]
    assert supervisor["spec"]["replicas"] == 2
    # Ready only while its conversation store (the database) answers.
    [container] = supervisor["spec"]["template"]["spec"]["containers"]
    assert container["readinessProbe"]["httpGet"]["path"] == "/readyz"
    assert deployments["demo-pilothouse-argocd"]["spec"]["template"]["spec"]["containers"][0][
        "readinessProbe"]["httpGet"]["path"] == "/.well-known/agent-card.json"
    urls = {k: v for k, v in env_of(supervisor).items()
            if k.startswith("PILOTHOUSE_AGENTS_") and k.endswith("_URL")}
    assert urls == {
        "PILOTHOUSE_AGENTS_ARGOCD_URL": "http://demo-pilothouse-argocd:8080/a2a/argocd",
        "PILOTHOUSE_AGENTS_GITHUB_URL": "http://demo-pilothouse-github:8080/a2a/github",
    }
    for name, deployment in deployments.items():
        component = name.removeprefix("demo-pilothouse-")
        service = objects[f"Service/{name}"]
        pod = deployment["spec"]["template"]
        # The Service reaches these pods, on the port the URLs above use.
        assert service["spec"]["selector"].items() <= pod["metadata"]["labels"].items()
        assert service["spec"]["ports"][0]["port"] == 8080
        [container] = pod["spec"]["containers"]
        assert container["args"] == ["--agent", component, "--public-url",
                                     f"http://{name}:8080"]
        assert container["resources"]["limits"]["memory"] == "4Gi"
        assert env_of(deployment)["PILOTHOUSE_DATABASE_URL"] == {
            "secretKeyRef": {"name": "demo-pilothouse-database", "key": "database-url"}}
    secret = objects["Secret/demo-pilothouse-database"]
    assert secret["stringData"] == {"database-url": "postgresql://ph:pw@postgres/ph"}


def test_every_pod_requires_keys_and_the_supervisor_holds_the_agents_key(
    cluster: tuple[KubeApi, Path],
) -> None:
    objects = install(cluster, AUTH)

    auth = objects["Secret/demo-pilothouse-auth"]["stringData"]
    assert auth["api-keys"] == "ops=ops-key-123456-9f3b7d1a5c8e2b6f0d4a"
    assert len(auth["agent-key"]) == 40  # generated: none was given
    from_auth = {"secretKeyRef": {"name": "demo-pilothouse-auth", "key": "agent-key"}}
    supervisor = env_of(objects["Deployment/demo-pilothouse-supervisor"])
    assert supervisor["PILOTHOUSE_API_KEYS"] == {
        "secretKeyRef": {"name": "demo-pilothouse-auth", "key": "api-keys"}}
    assert supervisor["PILOTHOUSE_AGENTS_ARGOCD_KEY"] == from_auth
    assert supervisor["PILOTHOUSE_AGENTS_GITHUB_KEY"] == from_auth
    for agent in ("argocd", "github"):
        deployment = objects[f"Deployment/demo-pilothouse-{agent}"]
        [container] = deployment["spec"]["template"]["spec"]["containers"]
        names = [e["name"] for e in container["env"]]
        # Kubernetes expands $(VAR) only from variables defined before it.
        assert names.index("PILOTHOUSE_AGENT_KEY") < names.index("PILOTHOUSE_API_KEYS")
        assert env_of(deployment)["PILOTHOUSE_AGENT_KEY"] == from_auth
        assert env_of(deployment)["PILOTHOUSE_API_KEYS"] == "supervisor=$(PILOTHOUSE_AGENT_KEY)"


def test_an_install_without_keys_is_refused_with_what_to_set(
    cluster: tuple[KubeApi, Path],
) -> None:
    api, kubeconfig = cluster
    done = run_helm("install", str(CHART), str(kubeconfig), "{}")
    assert done.returncode != 0
    assert "auth.apiKeys (name=key,...) or auth.existingSecret is required" in done.stderr
    assert not api.objects


def test_an_existing_secret_and_the_devops_agent_can_be_chosen(
    cluster: tuple[KubeApi, Path],
) -> None:
    objects = install(cluster, {"database": {"existingSecret": "pg-credentials"},
                                "agents": {"devops": {"enabled": True, "replicas": 3}},
                                "credentialsSecret": "llm-keys", "supervisor": {"api": False},
                                "auth": {"existingSecret": "pilothouse-keys"}})

    assert not [k for k in objects if k.startswith("Secret/")]
    assert env_of(objects["Deployment/demo-pilothouse-devops"])["PILOTHOUSE_AGENT_KEY"] == {
        "secretKeyRef": {"name": "pilothouse-keys", "key": "agent-key"}}
    devops = objects["Deployment/demo-pilothouse-devops"]
    assert devops["spec"]["replicas"] == 3
    assert env_of(devops)["PILOTHOUSE_WORKSPACE"] == "/workspace"
    [container] = devops["spec"]["template"]["spec"]["containers"]
    assert container["envFrom"] == [{"secretRef": {"name": "llm-keys"}}]
    [container] = objects["Deployment/demo-pilothouse-supervisor"]["spec"]["template"]["spec"][
        "containers"]
    assert container["args"][-1] == "--no-api"
    # Without the REST API there is no /readyz: the agent card is the probe.
    assert container["readinessProbe"]["httpGet"]["path"] == "/.well-known/agent-card.json"
    supervisor = env_of(objects["Deployment/demo-pilothouse-supervisor"])
    assert supervisor["PILOTHOUSE_AGENTS_DEVOPS_URL"] == \
        "http://demo-pilothouse-devops:8080/a2a/devops"
    assert supervisor["PILOTHOUSE_DATABASE_URL"]["secretKeyRef"]["name"] == "pg-credentials"


def test_without_a_database_pods_keep_local_state_and_the_notes_say_so(
    cluster: tuple[KubeApi, Path],
) -> None:
    api, kubeconfig = cluster
    release = helm("install", str(CHART), str(kubeconfig), json.dumps(AUTH))
    supervisor = next(o for o in api.created("Deployment")
                      if o["metadata"]["name"] == "demo-pilothouse-supervisor")

    assert "PILOTHOUSE_DATABASE_URL" not in env_of(supervisor)
    assert supervisor["spec"]["replicas"] == 1
    assert "no database is configured" in release["info"]["notes"]


@pytest.mark.parametrize(("values", "message"), [
    ({"supervisor": {"replicas": 2}},
     "supervisor.replicas=2 needs PostgreSQL: set database.url or database.existingSecret"),
    ({"agents": {"argocd": {"replicas": 3}}},
     "argocd.replicas=3 needs PostgreSQL: set database.url or database.existingSecret"),
    ({"database": {"url": "sqlite:///data/state.sqlite"}, "supervisor": {"replicas": 2}},
     "database.url must be a postgresql:// URL"),
])
def test_more_than_one_replica_without_postgresql_is_refused(
    cluster: tuple[KubeApi, Path], values: dict[str, Any], message: str,
) -> None:
    api, kubeconfig = cluster
    done = run_helm("install", str(CHART), str(kubeconfig), json.dumps({**values, **AUTH}))
    assert done.returncode != 0
    assert message in done.stderr
    assert not api.objects
