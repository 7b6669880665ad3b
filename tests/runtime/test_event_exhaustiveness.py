"""A new kind of event cannot be silently ignored: every consumer fails the type check.

The consumers `match` on the `Event` union and end in `assert_never`. This test adds an event
type to a copy of the source tree and runs the project's mypy over it: each consumer that
dispatches on events must then report the new type as unhandled.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
#: Every module that dispatches on the whole union, and must be told about a new kind.
CONSUMERS = {
    "src/pilothouse/runtime/events.py",  # the wire form (SSE, --json, A2A)
    "src/pilothouse/runtime/subagent.py",  # the supervisor's view of a sub-agent turn
    "src/pilothouse/interfaces/render.py",  # the CLI
    "src/pilothouse/interfaces/tui/app.py",
    "src/pilothouse/interfaces/tui/widgets.py",
    "src/pilothouse/a2a/executor.py",
}
NEW_KIND = '''@dataclass(frozen=True)
class Surprise:
    """A kind of event no consumer handles yet."""


Event: TypeAlias = (Surprise | '''


def _tree_with_a_new_event(target: Path) -> None:
    shutil.copytree(ROOT / "src", target / "src", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", target / "pyproject.toml")
    if (ROOT / ".mypy_cache").is_dir():  # speed only: unchanged modules are not re-checked
        shutil.copytree(ROOT / ".mypy_cache", target / ".mypy_cache")
    events = target / "src/pilothouse/runtime/events.py"
    source = events.read_text()
    assert "Event: TypeAlias = (" in source
    events.write_text(source.replace("Event: TypeAlias = (", NEW_KIND, 1))


def _mypy(cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "mypy"], cwd=cwd, capture_output=True,
                          text=True, check=False)


def test_every_consumer_reports_an_event_kind_it_does_not_handle(tmp_path: Path) -> None:
    _tree_with_a_new_event(tmp_path)

    result = _mypy(tmp_path)

    unhandled = {m.group(1) for m in re.finditer(
        r"^(src/\S+\.py):\d+: error: Argument 1 to \"assert_never\" has incompatible type "
        r"\"Surprise\"", result.stdout, re.MULTILINE)}
    assert unhandled == CONSUMERS, result.stdout
    assert result.returncode == 1
