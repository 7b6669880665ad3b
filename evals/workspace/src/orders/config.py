"""Settings of the orders service, read once from the environment.

Every variable has a default that works on a laptop against a local PostgreSQL; production
overrides come from the Helm values (`deploy/helm/values.yaml`) as environment variables.
The token signing secret is never defaulted in production: `ORDERS_ENV=production` without
`ORDERS_TOKEN_SECRET` is a start-up error.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

DEFAULT_DATABASE_URL = "postgresql://orders:orders@localhost:5432/orders"
DEFAULT_PAYMENTS_URL = "http://payments-gateway.payments.svc.cluster.local:8080"
DEV_TOKEN_SECRET = "dev-only-not-a-secret"


class ConfigError(Exception):
    """A setting is missing or has an invalid value; the message names the variable."""


@dataclass(frozen=True)
class Settings:
    """What the service needs to start."""

    env: str = "dev"
    port: int = 8080
    database_url: str = DEFAULT_DATABASE_URL
    db_pool_size: int = 10
    payments_url: str = DEFAULT_PAYMENTS_URL
    payments_timeout_seconds: float = 3.0
    token_secret: str = DEV_TOKEN_SECRET
    log_level: str = "INFO"

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Settings:
        """Settings from `ORDERS_*` variables (default: the process environment)."""
        env = os.environ if environ is None else environ
        name = env.get("ORDERS_ENV", "dev")
        secret = env.get("ORDERS_TOKEN_SECRET")
        if name == "production" and not secret:
            raise ConfigError("ORDERS_TOKEN_SECRET must be set when ORDERS_ENV=production")
        return cls(
            env=name,
            port=_int(env, "ORDERS_PORT", 8080),
            database_url=env.get("ORDERS_DATABASE_URL", DEFAULT_DATABASE_URL),
            db_pool_size=_int(env, "ORDERS_DB_POOL_SIZE", 10),
            payments_url=env.get("ORDERS_PAYMENTS_URL", DEFAULT_PAYMENTS_URL),
            payments_timeout_seconds=float(env.get("ORDERS_PAYMENTS_TIMEOUT", "3.0")),
            token_secret=secret or DEV_TOKEN_SECRET,
            log_level=env.get("ORDERS_LOG_LEVEL", "INFO").upper(),
        )


def _int(env: Mapping[str, str], name: str, default: int) -> int:
    raw = env.get(name)
    if raw is None:
        return default
    try:
        value = int(raw)
    except ValueError as error:
        raise ConfigError(f"{name} must be a whole number, got {raw!r}") from error
    if value <= 0:
        raise ConfigError(f"{name} must be positive, got {value}")
    return value
