"""An application that is not there: the error names the closest ones in the live inventory."""

from __future__ import annotations

import pytest
from argocd_harness import Connect

from pilothouse.tools.closeness import closeness


@pytest.mark.parametrize(("wanted", "name", "close"), [
    ("Checkout_API", "checkout-api", True),          # case and separators
    ("payments-api", "payments-api-production", True),  # a shortened name: whole parts
    ("shopfrnt", "shopfront", True),                  # a typo
    ("api", "payments-api-production", True),         # one whole part
    ("pay", "payments-api-production", False),        # part of a word is no part
    ("ledger", "harbour", False),                     # nothing alike
])
def test_what_counts_as_close(wanted: str, name: str, close: bool) -> None:
    assert (closeness(wanted, name) > 0) is close


def test_the_same_name_normalized_is_closer_than_a_part_and_a_part_than_a_typo() -> None:
    exact = closeness("Web_Front", "web-front")
    part = closeness("web", "web-front")
    typo = closeness("web-frnt", "web-front")
    assert exact > part > typo > 0


async def test_an_unknown_name_names_candidates_on_every_per_app_tool(connect: Connect) -> None:
    async with connect() as argocd:
        results = {tool: await argocd(tool, name="payments-api-prodution")
                   for tool in ("get_application", "get_application_events",
                                "get_application_history", "diff_application")}
        nothing = await argocd("get_application", name="zzzz-qqqq-xxxx")
    for tool, result in results.items():
        assert result.is_error, tool
        assert result.payload["suggestion"].startswith(
            "Did you mean 'payments-api-production'?"), tool
    # Nothing close: the error says so, and how to find the name; nothing is guessed.
    assert nothing.is_error and nothing.payload["suggestion"] == (
        "No application has a similar name. Check the exact name with "
        "search_argocd_resources or list_applications.")
