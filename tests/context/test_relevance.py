"""Cross-turn links: names and reference words link turns; ordinary words do not."""

from __future__ import annotations

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

from pilothouse.context.compression import group_units
from pilothouse.context.relevance import find_links, link_note, salience


def listing_turn() -> list[BaseMessage]:
    call = {"name": "list_applications", "args": {"page": 1}, "id": "c1", "type": "tool_call"}
    return [
        HumanMessage(content="List all apps", id="h1"),
        AIMessage(content="", tool_calls=[call], id="a1"),
        ToolMessage(content='{"items":[{"name":"payments-api","health":"Degraded"}],'
                            '"summary":{"health":{"Degraded":1}}}', tool_call_id="c1", id="t1"),
        AIMessage(content="One app.", id="a2"),
    ]


def test_a_name_from_an_earlier_result_links_the_follow_up() -> None:
    units = group_units(listing_turn())
    links = find_links("Why is payments-api failing?", units)
    assert links and links[0].shared == ("payments-api",)
    assert "list_applications" in (link_note("Why is payments-api failing?", units) or "")


def test_an_ordinary_shared_word_is_a_new_question_not_a_follow_up() -> None:
    assert find_links("Which apps are degraded?", group_units(listing_turn())) == []


def test_a_reference_word_links_to_the_latest_result() -> None:
    links = find_links("show me more of those", group_units(listing_turn()))
    assert [link.tool for link in links] == ["list_applications"]


def test_diagnostic_results_are_worth_more_than_listings() -> None:
    units = group_units(listing_turn())
    assert salience(units[1]) > 0 > salience([ToolMessage(
        content=str([{"name": f"a{i}"} for i in range(30)]).replace("'", '"'),
        tool_call_id="x")])
