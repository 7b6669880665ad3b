"""HTTP handlers of the orders API and the route table that maps requests to them.

Every handler except the probes takes `(request, principal)`: `handle` verifies the bearer
token with `orders.auth.verify_token` first and answers 401 for a bad token, 403 when
`require_role` refuses. Routes:

    GET  /healthz                    liveness (no auth)
    GET  /readyz                     readiness: the database answers (no auth)
    POST /v1/orders                  create_order   (operator)
    GET  /v1/orders/{id}             get_order      (viewer)
    GET  /v1/customers/{id}/orders   list_orders    (viewer)
    POST /v1/orders/{id}/cancel      cancel_order   (operator)
    POST /v1/orders/{id}/refund      refund_order   (admin)
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from orders.auth import PermissionDenied, Principal, TokenError, bearer_token, require_role
from orders.auth import verify_token
from orders.db import OrderRepository, PoolExhausted
from orders.models import InvalidTransition, LineItem, Order, OrderStatus
from orders.payments import CircuitOpen, PaymentsClient


@dataclass
class Request:
    method: str
    path: str
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""
    params: dict[str, str] = field(default_factory=dict)

    def json(self) -> Any:
        return json.loads(self.body or b"{}")


@dataclass
class Response:
    status: int
    body: dict[str, Any]


@dataclass
class Services:
    repository: OrderRepository
    payments: PaymentsClient
    token_secret: bytes


@require_role("operator")
def create_order(request: Request, principal: Principal, services: Services) -> Response:
    data = request.json()
    items = tuple(LineItem(i["sku"], int(i["quantity"]), Decimal(str(i["unit_price"])))
                  for i in data.get("items", []))
    if not items:
        return Response(422, {"error": "an order needs at least one item"})
    order = Order(customer_id=data["customer_id"], items=items,
                  currency=data.get("currency", "EUR"))
    services.repository.save(order)
    payment_id = services.payments.charge(order.id, order.total, order.currency)
    order = order.transition(OrderStatus.PAID)
    services.repository.save(order)
    return Response(201, {"id": order.id, "status": order.status, "payment_id": payment_id})


@require_role("viewer")
def get_order(request: Request, principal: Principal, services: Services) -> Response:
    order = services.repository.get(request.params["id"])
    if order is None:
        return Response(404, {"error": f"no order {request.params['id']}"})
    return Response(200, {"id": order.id, "status": order.status, "total": str(order.total)})


@require_role("viewer")
def list_orders(request: Request, principal: Principal, services: Services) -> Response:
    ids = services.repository.list_for_customer(request.params["id"])
    return Response(200, {"orders": ids, "count": len(ids)})


@require_role("operator")
def cancel_order(request: Request, principal: Principal, services: Services) -> Response:
    order = services.repository.get(request.params["id"])
    if order is None:
        return Response(404, {"error": f"no order {request.params['id']}"})
    services.repository.save(order.transition(OrderStatus.CANCELLED))
    return Response(200, {"id": order.id, "status": OrderStatus.CANCELLED})


@require_role("admin")
def refund_order(request: Request, principal: Principal, services: Services) -> Response:
    order = services.repository.get(request.params["id"])
    if order is None:
        return Response(404, {"error": f"no order {request.params['id']}"})
    refund_id = services.payments.refund(request.json()["payment_id"], order.total)
    services.repository.save(order.transition(OrderStatus.REFUNDED))
    return Response(200, {"id": order.id, "refund_id": refund_id})


Handler = Callable[..., Response]
ROUTES: list[tuple[str, re.Pattern[str], Handler]] = [
    ("POST", re.compile(r"^/v1/orders$"), create_order),
    ("GET", re.compile(r"^/v1/orders/(?P<id>[\w-]+)$"), get_order),
    ("GET", re.compile(r"^/v1/customers/(?P<id>[\w-]+)/orders$"), list_orders),
    ("POST", re.compile(r"^/v1/orders/(?P<id>[\w-]+)/cancel$"), cancel_order),
    ("POST", re.compile(r"^/v1/orders/(?P<id>[\w-]+)/refund$"), refund_order),
]


def handle(request: Request, services: Services) -> Response:
    """Route, authenticate, authorize and run one request; errors become JSON answers."""
    if request.path == "/healthz":
        return Response(200, {"status": "ok"})
    if request.path == "/readyz":
        ready = services.repository.list_for_customer("__readiness__", limit=1) is not None
        return Response(200 if ready else 503, {"ready": ready})
    for method, pattern, handler in ROUTES:
        match = pattern.match(request.path)
        if match and method == request.method:
            request.params = match.groupdict()
            break
    else:
        return Response(404, {"error": f"no route for {request.method} {request.path}"})
    try:
        principal = verify_token(bearer_token(request.headers), services.token_secret)
        return handler(request, principal, services)
    except TokenError as error:
        return Response(401, {"error": str(error)})
    except PermissionDenied as error:
        return Response(403, {"error": str(error)})
    except InvalidTransition as error:
        return Response(409, {"error": str(error)})
    except (PoolExhausted, CircuitOpen) as error:
        return Response(503, {"error": str(error), "retry_after_seconds": 5})
