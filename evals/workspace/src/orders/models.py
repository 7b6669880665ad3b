"""The order model and the state machine of its status."""

from __future__ import annotations

import enum
import uuid
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from decimal import Decimal


class OrderStatus(enum.StrEnum):
    """Where an order is in its life."""

    PENDING = "pending"
    PAID = "paid"
    SHIPPED = "shipped"
    CANCELLED = "cancelled"
    REFUNDED = "refunded"


#: Which status may follow which; anything else is an InvalidTransition.
ALLOWED_TRANSITIONS: dict[OrderStatus, frozenset[OrderStatus]] = {
    OrderStatus.PENDING: frozenset({OrderStatus.PAID, OrderStatus.CANCELLED}),
    OrderStatus.PAID: frozenset({OrderStatus.SHIPPED, OrderStatus.REFUNDED}),
    OrderStatus.SHIPPED: frozenset({OrderStatus.REFUNDED}),
    OrderStatus.CANCELLED: frozenset(),
    OrderStatus.REFUNDED: frozenset(),
}


class InvalidTransition(Exception):
    """An order cannot move from its status to the one asked for."""


@dataclass(frozen=True)
class LineItem:
    sku: str
    quantity: int
    unit_price: Decimal

    @property
    def total(self) -> Decimal:
        return self.unit_price * self.quantity


@dataclass(frozen=True)
class Order:
    """An order as stored; amounts in the order's currency, never floats."""

    customer_id: str
    items: tuple[LineItem, ...]
    currency: str = "EUR"
    status: OrderStatus = OrderStatus.PENDING
    id: str = field(default_factory=lambda: f"ord_{uuid.uuid4().hex[:16]}")
    created_at: datetime = field(default_factory=lambda: datetime.now(UTC))

    @property
    def total(self) -> Decimal:
        return sum((item.total for item in self.items), Decimal("0"))

    def transition(self, new_status: OrderStatus) -> Order:
        """A copy of this order in `new_status`; raises InvalidTransition when not allowed."""
        if new_status not in ALLOWED_TRANSITIONS[self.status]:
            raise InvalidTransition(f"order {self.id} cannot go from {self.status} "
                                    f"to {new_status}")
        return replace(self, status=new_status)
