"""Order storage in PostgreSQL: a small connection pool and the order repository.

Connections come from `ConnectionPool`, which opens at most POOL_SIZE connections and makes a
caller wait up to POOL_TIMEOUT_SECONDS for a free one (then `PoolExhausted`). Opening a
connection is retried with `orders.retry.retry_with_backoff`, so a database failover during a
deploy does not crash-loop the pods. Queries use placeholders, never string formatting.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, Protocol

from orders.models import LineItem, Order, OrderStatus
from orders.retry import RetryPolicy, retry_with_backoff

POOL_SIZE = 10
POOL_TIMEOUT_SECONDS = 5.0
STATEMENT_TIMEOUT_MS = 2000


class Connection(Protocol):
    def execute(self, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]: ...
    def commit(self) -> None: ...
    def rollback(self) -> None: ...
    def close(self) -> None: ...


class PoolExhausted(Exception):
    """No connection became free within POOL_TIMEOUT_SECONDS."""


class ConnectionPool:
    """At most `size` connections, opened lazily and handed out one caller at a time."""

    def __init__(self, connect: Callable[[], Connection], size: int = POOL_SIZE,
                 timeout: float = POOL_TIMEOUT_SECONDS) -> None:
        self._connect = connect
        self._idle: queue.LifoQueue[Connection] = queue.LifoQueue()
        self._opened = 0
        self._size = size
        self._timeout = timeout
        self._lock = threading.Lock()

    def _open(self) -> Connection:
        connection = retry_with_backoff(self._connect, RetryPolicy(max_attempts=3))
        connection.execute(f"SET statement_timeout = {STATEMENT_TIMEOUT_MS}")
        return connection

    @contextmanager
    def connection(self) -> Iterator[Connection]:
        """A connection for the block: committed on success, rolled back on error."""
        with self._lock:
            can_open = self._idle.empty() and self._opened < self._size
            if can_open:
                self._opened += 1
        try:
            conn = self._open() if can_open else self._idle.get(timeout=self._timeout)
        except queue.Empty as error:
            raise PoolExhausted(f"no free connection in {self._timeout} s "
                                f"(pool size {self._size})") from error
        try:
            yield conn
            conn.commit()
        except Exception:
            conn.rollback()
            raise
        finally:
            self._idle.put(conn)


class OrderRepository:
    """Reads and writes orders; one transaction per call."""

    def __init__(self, pool: ConnectionPool) -> None:
        self.pool = pool

    def save(self, order: Order) -> None:
        with self.pool.connection() as conn:
            conn.execute(
                "INSERT INTO orders (id, customer_id, currency, status, created_at) "
                "VALUES (%s, %s, %s, %s, %s) ON CONFLICT (id) DO UPDATE SET status = "
                "EXCLUDED.status",
                (order.id, order.customer_id, order.currency, order.status.value,
                 order.created_at))
            conn.execute("DELETE FROM order_items WHERE order_id = %s", (order.id,))
            for item in order.items:
                conn.execute(
                    "INSERT INTO order_items (order_id, sku, quantity, unit_price) "
                    "VALUES (%s, %s, %s, %s)",
                    (order.id, item.sku, item.quantity, item.unit_price))

    def get(self, order_id: str) -> Order | None:
        with self.pool.connection() as conn:
            rows = conn.execute("SELECT id, customer_id, currency, status, created_at "
                                "FROM orders WHERE id = %s", (order_id,))
            if not rows:
                return None
            items = conn.execute("SELECT sku, quantity, unit_price FROM order_items "
                                 "WHERE order_id = %s ORDER BY sku", (order_id,))
        oid, customer, currency, status, created = rows[0]
        return Order(customer_id=customer, currency=currency, status=OrderStatus(status),
                     id=oid, created_at=created,
                     items=tuple(LineItem(s, q, p) for s, q, p in items))

    def list_for_customer(self, customer_id: str, limit: int = 50) -> list[str]:
        """Ids of a customer's newest orders, newest first."""
        with self.pool.connection() as conn:
            rows = conn.execute("SELECT id FROM orders WHERE customer_id = %s "
                                "ORDER BY created_at DESC LIMIT %s", (customer_id, limit))
        return [row[0] for row in rows]
