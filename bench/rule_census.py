"""Count the hand-written rules that read a person's words in `agents/`: regexes and phrases.

Run: .venv/bin/python bench/rule_census.py [--src DIR --label NAME]
Prints a table (one row per module) and writes bench/results/rule_census.json.

Issue 29 asks that the regexes and phrases deciding the agent, the tool or the arguments
shrink to a third of what they were, and that each one left states a principle. This counts
them the same way on any tree, so two commits can be compared (`git archive <commit> src |
tar -x -C /tmp/old`, then `--src /tmp/old/src --label before`):

- a regex: a call of `re.compile`, or of a helper that takes one as its first argument
  (`words(r"...")`, the way the deleted tool-hint tables were written);
- a phrase: a string in a module-level constant collection (a tuple, list, set, frozenset
  or dict of strings, nested or not) whose strings hold a letter and no `{`, i.e. words,
  not a prompt's template. Tables of tool, argument, setting or folder names (`NAME_TABLES`)
  are listed but not counted: they name the product's own things, not a person's words.
"""

from __future__ import annotations

import argparse
import ast
import json
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results" / "rule_census.json"
#: Helpers whose first argument is a regex source.
REGEX_HELPERS = frozenset({"compile", "words"})
#: Constant tables of the product's own names (tools, arguments, settings, folders).
NAME_TABLES = frozenset({"_HIDDEN_ARGS", "_APPROVAL_ARGS", "PROJECT_TOOLS", "GROUNDED_NAMES",
                         "ANSWERING_TOOLS", "_PAGED", "NOT_CONFIGURED", "SKIPPED_DIRS",
                         "_SKIPPED_DIRS", "ONE_APP_TOOLS", "GATED_TOOLS", "GROUNDED_IDS"})


def _strings(node: ast.AST) -> list[str]:
    """The string leaves of a constant collection (empty when it holds anything else)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        elements = node.elts
    elif isinstance(node, ast.Dict):
        elements = [*(k for k in node.keys if k is not None), *node.values]
    elif isinstance(node, ast.Call) and getattr(node.func, "id", "") in {"frozenset", "set",
                                                                            "tuple"}:
        elements = list(node.args)
    else:
        return []
    found: list[str] = []
    for element in elements:
        inner = _strings(element)
        if not inner and not (isinstance(element, ast.Constant)):
            return []
        found += inner
    return found


def census(source: Path) -> dict[str, Any]:
    """Per module of `source`: its regex count and its phrase tables."""
    tree = ast.parse(source.read_text())
    regexes = sum(1 for node in ast.walk(tree) if isinstance(node, ast.Call)
                  and (getattr(node.func, "attr", None) or getattr(node.func, "id", None))
                  in REGEX_HELPERS and node.args)
    tables: dict[str, int] = {}
    for node in tree.body:
        target = node.targets[0] if isinstance(node, ast.Assign) and node.targets \
            else node.target if isinstance(node, ast.AnnAssign) else None
        value = node.value if isinstance(node, (ast.Assign, ast.AnnAssign)) else None
        if not isinstance(target, ast.Name) or value is None or isinstance(value, ast.Constant):
            continue
        phrases = [s for s in _strings(value) if any(c.isalpha() for c in s) and "{" not in s]
        if phrases:
            tables[target.id] = len(phrases)
    words = sum(n for name, n in tables.items() if name not in NAME_TABLES)
    return {"regexes": regexes, "tables": tables, "phrases": words}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--src", type=Path, default=ROOT / "src")
    parser.add_argument("--label", default="now")
    options = parser.parse_args()
    modules = {path.stem: census(path)
               for path in sorted((options.src / "pilothouse" / "agents").glob("*.py"))}
    modules = {name: found for name, found in modules.items()
               if found["regexes"] or found["phrases"]}
    table = Table(title=f"Rules that read words in agents/ ({options.label})")
    for column in ("module", "regexes", "phrases", "tables"):
        table.add_column(column)
    for name, found in modules.items():
        table.add_row(name, str(found["regexes"]), str(found["phrases"]),
                      ", ".join(f"{t} {n}" for t, n in found["tables"].items()
                                if t not in NAME_TABLES))
    total = {"regexes": sum(f["regexes"] for f in modules.values()),
             "phrases": sum(f["phrases"] for f in modules.values())}
    table.add_row("all", str(total["regexes"]), str(total["phrases"]), "")
    Console().print(table)
    kept = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}
    kept[options.label] = {"total": total, "modules": modules}
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(kept, indent=2) + "\n")


if __name__ == "__main__":
    main()
