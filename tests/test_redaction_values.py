"""Redaction recognises credentials by their values, so code that only names one reads as written.

A retrieved passage of a library once came back as `secret_key: [REDACTED] | bytes`. These
tests hold the line from both sides: real third-party source (which holds no secret, but names
secret keys, passwords and tokens everywhere) passes through unchanged, and a literal that is a
credential is still masked when assigned to a secret name, in code, YAML, .env or JSON.
"""

from __future__ import annotations

import importlib
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from pilothouse.redaction import MASK, Redactor, redact, scrub

#: Dependencies of Pilothouse whose source names secrets in signatures, type hints, docstrings
#: and URL handling (starlette's `secret_key: str | Secret`, httpx's `password=password`).
CODEBASES = ("starlette", "httpx", "click")
#: A secret name followed by `=` or `:`, the pattern the assignment rule looks at.
SECRET_NAMED = re.compile(r"(?i)(?:secret|password|passwd|token|key|auth|credential)\w*['\"]?"
                          r"[ \t]*[:=]")


def _sources(package: str) -> list[Path]:
    module = importlib.import_module(package)
    assert module.__file__ is not None
    return sorted(Path(module.__file__).parent.rglob("*.py"))


def test_third_party_source_comes_back_unchanged() -> None:
    changed: list[str] = []
    files = named = 0
    for package in CODEBASES:
        for path in _sources(package):
            text = path.read_text(encoding="utf-8")
            files += 1
            named += len(SECRET_NAMED.findall(text))
            shown = redact(text)
            if shown != text:
                changed += [f"{path.relative_to(path.parents[1])}: {before.strip()!r} -> "
                            f"{after.strip()!r}"
                            for before, after in zip(text.splitlines(), shown.splitlines(),
                                                     strict=True) if before != after]
    # The corpus is worth scanning: many files, full of secret-named code.
    assert files >= 50 and named >= 100, (files, named)
    assert changed == [], f"{len(changed)} lines rewritten:\n" + "\n".join(changed[:20])


def test_the_reported_signature_is_left_as_written() -> None:
    (sessions,) = [p for p in _sources("starlette") if p.name == "sessions.py"]
    line = "secret_key: str | Secret,"
    assert line in sessions.read_text(encoding="utf-8")
    assert redact(line) == line
    assert redact("secret_key: str | bytes") == "secret_key: str | bytes"


@dataclass(frozen=True)
class Assigned:
    """`text` assigns `secret` to a secret name; the secret must go, `kept` must stay."""

    id: str
    text: str
    secret: str
    kept: str


HEX_KEY = "9f2c4e7a1b3d5f6e8a0c2e4f"
ASSIGNED = [
    Assigned("python-api-key", 'api_key = "sk-proj-Ab12Cd34Ef56Gh78Ij90Kl12"',
             "sk-proj-Ab12Cd34Ef56Gh78Ij90Kl12", 'api_key = "'),
    Assigned("python-hex-key", f'client = Client(api_key="{HEX_KEY}")', HEX_KEY,
             'client = Client(api_key="'),
    Assigned("python-settings-secret", 'SECRET_KEY = "django-insecure-3k$9x!q2@w#e4r^u8i*o0p"',
             "django-insecure-3k$9x", 'SECRET_KEY = "'),
    Assigned("python-annotated-default", 'password: str = "hunter2hunter2"', "hunter2hunter2",
             'password: str = "'),
    Assigned("yaml-quoted-password", '  password: "hunter2"\n  user: ops', "hunter2", "user: ops"),
    Assigned("yaml-passphrase", 'client_secret: "correct-horse-battery-staple"',
             "correct-horse-battery-staple", 'client_secret: "'),
    Assigned("yaml-bare-hex-token", "token: 7f3c9a0e5b1d4c8e\nreplicas: 3", "7f3c9a0e5b1d4c8e",
             "replicas: 3"),
    Assigned("k8s-secret-data", "data:\n  password: cGFzc3dvcmQxMjM=\n  username: YWRtaW4=",
             "cGFzc3dvcmQxMjM=", "username: YWRtaW4="),
    Assigned("env-password", "DB_HOST=db\nDB_PASSWORD=hunter2hunter2\n", "hunter2hunter2",
             "DB_PASSWORD="),
    Assigned("env-secret-key", "SECRET_KEY='q8Xz3LmN0pR7sT1vW4yB6dF9hJ2kM5nP'",
             "q8Xz3LmN0pR7sT1vW4yB6dF9hJ2kM5nP", "SECRET_KEY='"),
    Assigned("oauth-json", '{"access_token":"2YotnFZFEjr1zCsicMWpAA","token_type":"Bearer"}',
             "2YotnFZFEjr1zCsicMWpAA", '"token_type":"Bearer"'),
    Assigned("json-in-a-string", '"{\\"api_key\\": \\"' + HEX_KEY + '\\"}"', HEX_KEY,
             '\\"api_key\\": \\"'),
    Assigned("cut-json", '{"api_key": "' + HEX_KEY[:20], HEX_KEY[:20], '{"api_key": "'),
    Assigned("long-session-token", "aws_session_token = IQoJb3JpZ2luX2VjEJr" + "Ab1Cd2" * 40,
             "Ab1Cd2Ab1Cd2", "aws_session_token = "),
    Assigned("url-password", "DATABASE_URL=postgres://app:pw12345@db:5432/app", "pw12345",
             "postgres://app:"),
]

#: Code and configuration that names secrets without holding one.
NAMED_ONLY = [
    "secret_key: str | bytes",
    "def __init__(self, app: ASGIApp, secret_key: str | Secret, max_age: int = 60) -> None:",
    "return BasicAuth(username=username, password=password)",
    "token = get_token()",
    "def check_password(self, password: str) -> bool:",
    "self.secret_key = secret_key",
    'defaults = {"password": None, "token": None, "api_key": ""}',
    'headers = {"Authorization": f"Bearer {token}"}',
    'url = f"https://{user}:{password}@{host}/"',
    'log.info(f"token={token!r} api_key={api_key}")',
    'query = "password=%s&token=%(token)s" % values',
    "password: Optional[str] = None",
    "auth: httpx.Auth | None = None",
    'password = kwargs.pop("password", self.password)',
    'SECRET_KEY = os.environ["SECRET_KEY"]',
    "api_key = settings.OPENAI_API_KEY",
    "private_key: Ed25519PrivateKey | Ed448PrivateKey",
    "core_auth: pb2_v10.AuthenticationInfo,",
    'url = str(self.replace(password="********"))',
    "def login(self, password: str = ...) -> None: ...",
    "if password == stored_password:",
    "key = lambda item: item.name",
    'KEY_VALUE = r"[a-zA-Z_-][a-zA-Z0-9_-]*=[0-9a-zA-Z_\\-\\/]+"',
    'password_help = "Enter the password for the deploy user"',
    "PASSWORD_RESET_TIMEOUT = 259200",
    '"""Create a client.\n\n    api_key: Your OpenAI API key, from the dashboard.\n'
    '    token: Optional bearer token, used instead of `api_key`.\n"""',
    ":param password: The password to hash.",
    "Keep `secrets_from_env=False`.",
    "Attaches HTTP Basic Authentication to the given Request object.",
    "Okay, we need to perform a basic username/password authentication.",
    "password: ${DB_PASSWORD}",
    "api_key: <your-api-key>",
    'token: "{{ .Values.token }}"',
    "secret_key: your-secret-key-here",
    "valueFrom:\n  secretKeyRef: {name: db-credentials, key: password}",
    "matchExpressions: [{key: app.kubernetes.io/name, operator: In}]",
    "https://user:password@example.com/path",
]


@pytest.mark.parametrize("case", ASSIGNED, ids=[c.id for c in ASSIGNED])
def test_a_credential_assigned_to_a_secret_name_is_masked(case: Assigned) -> None:
    shown = redact(case.text)
    assert case.secret not in shown
    assert case.kept in shown
    assert shown.count(MASK) == 1, shown


@pytest.mark.parametrize("text", NAMED_ONLY)
def test_code_that_only_names_a_secret_is_left_as_written(text: str) -> None:
    assert redact(text) == text


def test_a_configured_value_is_masked_even_where_no_rule_would_see_it() -> None:
    # A one-word password looks like a variable name to the assignment rule; knowing the
    # value still hides it, in code and in prose.
    redactor = Redactor(["letmeinplease"])
    assert redactor("password = letmeinplease") == f"password = {MASK}"
    assert redact("password = letmeinplease") == "password = letmeinplease"


def test_structured_fields_keep_counts_and_mask_credentials_under_secret_names() -> None:
    # A count of Kubernetes kinds names "Secret"; a count is no credential. A long number
    # (a PIN) and any string under a secret name still are.
    payload = {"kinds": {"Secret": 1, "ConfigMap": 2}, "secrets": 30, "token": True,
               "password": "hunter2-but-longer", "db_password": 12345678, "api_key": ""}
    assert scrub(payload) == {"kinds": {"Secret": 1, "ConfigMap": 2}, "secrets": 30,
                              "token": True, "password": MASK, "db_password": MASK,
                              "api_key": ""}
    redactor = Redactor()
    assert redactor.field("secret_count", 3) == 3
    assert redactor.field("client_secret", "abc123def456") == MASK
