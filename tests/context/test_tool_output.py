"""Structure-aware truncation of tool outputs."""

from __future__ import annotations

import json

from pilothouse.context.tool_output import tool_output_limit, truncate_tool_output


def test_small_output_is_untouched() -> None:
    assert truncate_tool_output("ok", 100) == ("ok", None)


def test_json_list_keeps_whole_leading_items_and_counts() -> None:
    items = [{"name": f"app-{i}", "health": "Healthy"} for i in range(300)]
    text, info = truncate_tool_output(json.dumps(items), 6000)
    assert info is not None and info.kind == "json_list" and len(text) <= 6000
    data = json.loads(text)
    assert data["items"] == items[: data["truncated"]["shown"]]
    assert data["truncated"]["total"] == 300 and "smaller page" in data["truncated"]["note"]


def test_json_object_trims_its_largest_list_and_keeps_the_rest() -> None:
    payload = {"pagination": {"page": 1, "total_items": 819},
               "items": [{"name": f"app-{i}", "project": "p" * 20} for i in range(200)]}
    text, info = truncate_tool_output(json.dumps(payload), 4000)
    assert info is not None and info.kind == "json_object"
    data = json.loads(text)
    assert data["pagination"] == {"page": 1, "total_items": 819}
    assert data["truncated"]["field"] == "items" and data["truncated"]["total"] == 200
    assert 0 < len(data["items"]) < 200


def test_text_keeps_head_and_tail_with_a_marker() -> None:
    text = "HEAD" + "x" * 2500 + "TAIL"
    cut, info = truncate_tool_output(text, 1000)
    assert info is not None and info.kind == "text" and len(cut) <= 1000
    assert cut.startswith("HEAD") and cut.endswith("TAIL") and "characters cut of 2,508" in cut


def test_far_oversize_output_asks_to_refine_with_a_preview() -> None:
    text, info = truncate_tool_output("line\n" * 10_000, 1000)
    assert info is not None and info.kind == "refused"
    assert "Refine the query" in text and "Preview:\nline" in text


def test_limit_is_the_smaller_of_size_and_window_share() -> None:
    assert tool_output_limit(10_000, 200_000, 0.25) == 10_000
    assert tool_output_limit(10_000, 4096, 0.25) == int(4096 * 0.25 * 3.5)


def test_a_result_already_shown_is_cut_for_the_model_never_refused() -> None:
    log = "step\n" * 10_000 + "##[error] the last line"
    text, info = truncate_tool_output(log, 1000, refuse=False)
    assert info is not None and info.kind == "text" and len(text) <= 1000
    assert text.endswith("the last line") and "Refine the query" not in text
