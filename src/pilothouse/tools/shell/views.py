"""How a shell command's result is shown: the command, how it ended, and its output as printed.

Output stays in a code block, unchanged (a command split or re-wrapped is a different command);
a refusal says why and what to run instead. How many lines a whole output holds is said by
code, as a listing's total is: "how many files / matches / commits" is then a fact of the
result, not a number the model counts (a 1.5B model miscounts a listing) or copies from the
command (`git log -5`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

#: Output kept in the view; the structured result has all of what the server kept.
MAX_OUTPUT_CHARS = 6_000


def _block(text: str) -> str:
    text = text.rstrip("\n")
    if len(text) > MAX_OUTPUT_CHARS:
        text = f"[... {len(text) - MAX_OUTPUT_CHARS:,} characters cut ...]\n" + \
            text[-MAX_OUTPUT_CHARS:]
    fence = "````" if "```" in text else "```"
    return f"{fence}\n{text}\n{fence}"


def command_view(payload: Mapping[str, Any]) -> str:
    """`run_command`'s answer as a person reads it."""
    command = payload.get("command") or "the command"
    status = payload.get("status")
    lines: list[str] = []
    if status == "ok":
        took = payload.get("duration_seconds")
        printed = payload.get("stdout_lines")
        lines.append(f"`{command}` exited {payload.get('exit_code')}"
                     + (f" ({took:.2f} s)" if isinstance(took, int | float) else "")
                     + (f", {printed} lines of output" if isinstance(printed, int)
                        and printed > 1 else "")
                     + (f": {payload['reason']}." if payload.get("reason") else "."))
    elif payload.get("kind") == "EvidenceChanged":
        lines.append(f"**Not run:** `{command}`. {payload.get('reason', '')}".rstrip())
    elif status == "needs_approval":
        lines.append(f"`{command}` needs your approval before it runs.")
    elif status == "refused":
        lines.append(f"**Refused:** `{command}`. {payload.get('reason', '')}".rstrip())
    elif status == "timeout":
        lines.append(f"`{command}` timed out. {payload.get('reason', '')}".rstrip())
    else:
        lines.append(f"**Error:** `{command}` failed. {payload.get('reason', '')}".rstrip())
    if payload.get("retried_from"):
        why = payload.get("retried_because") or "it was refused"
        lines.append(f"(Ran instead of `{payload['retried_from']}`: {why}.)")
    if payload.get("stdout"):
        lines.append(_block(str(payload["stdout"])))
    if payload.get("stderr"):
        lines.append("stderr:\n" + _block(str(payload["stderr"])))
    if status == "ok" and not any(payload.get(k) for k in ("stdout", "stderr", "reason")):
        lines.append("(no output)")
    if payload.get("guidance"):
        lines.append(f"**What to do:** {payload['guidance']}")
    return "\n\n".join(lines)
