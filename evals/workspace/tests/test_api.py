"""Tests of the request handling: routing, authentication and error mapping."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from orders.api import Request, Services, handle
from orders.auth import issue_token
from orders.models import LineItem, Order

SECRET = b"api-test-secret"


class FakeRepository:
    def __init__(self) -> None:
        self.orders: dict[str, Order] = {}

    def save(self, order: Order) -> None:
        self.orders[order.id] = order

    def get(self, order_id: str) -> Order | None:
        return self.orders.get(order_id)

    def list_for_customer(self, customer_id: str, limit: int = 50) -> list[str]:
        return [o.id for o in self.orders.values() if o.customer_id == customer_id][:limit]


class FakePayments:
    def charge(self, order_id: str, amount: Decimal, currency: str) -> str:
        return "pay_123"

    def refund(self, payment_id: str, amount: Decimal) -> str:
        return "ref_456"


def services() -> Services:
    return Services(FakeRepository(), FakePayments(), SECRET)  # type: ignore[arg-type]


def auth(role: str) -> dict[str, Any]:
    return {"authorization": f"Bearer {issue_token('tester', role, SECRET)}"}


def test_probes_need_no_token() -> None:
    assert handle(Request("GET", "/healthz"), services()).status == 200


def test_missing_token_is_401() -> None:
    assert handle(Request("GET", "/v1/orders/ord_1"), services()).status == 401


def test_viewer_cannot_cancel() -> None:
    svc = services()
    order = Order("cust-1", (LineItem("sku-1", 1, Decimal("9.90")),))
    svc.repository.save(order)
    answer = handle(Request("POST", f"/v1/orders/{order.id}/cancel", auth("viewer")), svc)
    assert answer.status == 403


def test_operator_creates_and_pays_an_order() -> None:
    body = b'{"customer_id": "cust-9", "items": [{"sku": "a", "quantity": 2, "unit_price": 5}]}'
    answer = handle(Request("POST", "/v1/orders", auth("operator"), body), services())
    assert answer.status == 201
    assert answer.body["payment_id"] == "pay_123"
