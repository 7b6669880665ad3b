"""orders: the order service of the acme checkout platform.

The service takes orders from the checkout front end, charges them through the payments
gateway and stores them in PostgreSQL. Modules:

- `orders.api`: HTTP handlers (create, get, list, cancel) and the role each one needs.
- `orders.auth`: signed access tokens (HMAC-SHA256, JWT-like) and role checks.
- `orders.db`: the order repository over a small connection pool.
- `orders.retry`: retries with exponential backoff and jitter for flaky dependencies.
- `orders.payments`: the payments gateway client behind a circuit breaker.
- `orders.config`: settings read from the environment.
"""

__version__ = "2.7.1"

__all__ = ["__version__"]
