"""Approvals as plain text: "approve" or "reject: reason" in, a readable request out.

Over A2A an approval is a message like any other, so people and other agents answer it the
same way. Both ends use these functions: the executor reads a decision, the remote sub-agent
client writes one.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from langchain.agents.middleware.human_in_the_loop import ApproveDecision, RejectDecision

APPROVE_WORDS = frozenset({"approve", "approved", "yes", "y", "ok", "go", "go ahead"})
REJECT_WORDS = frozenset({"reject", "rejected", "no", "n", "deny", "denied", "cancel"})
REPLY_HINT = "Reply 'approve' to go ahead, or 'reject: <reason>' to stop it."

# A decision word (trailing "." or "!" allowed), then optionally ": reason" / "- reason".
_DECISION = re.compile(r"^\s*([a-z ]+?)[.!]*\s*(?:[:,-]\s*(.*?))?\s*$", re.IGNORECASE | re.DOTALL)


def parse_decision(text: str) -> ApproveDecision | RejectDecision | None:
    """`{"type": "approve"}` / `{"type": "reject", "message": ...}`, or None if neither."""
    match = _DECISION.match(text)
    if match is None:
        return None
    word, reason = match.group(1).lower(), (match.group(2) or "").strip()
    if word in APPROVE_WORDS and not reason:
        return {"type": "approve"}
    if word in REJECT_WORDS:
        return {"type": "reject", "message": reason or "Rejected by the user."}
    return None


def format_decision(decision: Mapping[str, Any]) -> str:
    """The text that `parse_decision` reads back as `decision`."""
    if decision.get("type") == "approve":
        return "approve"
    if decision.get("type") == "reject":
        return f"reject: {decision.get('message') or 'Rejected by the user.'}"
    raise ValueError(f"only approve and reject travel as text, not {decision.get('type')!r}")
