"""Folders of a workspace that its walks leave out: one definition for every walk.

Code search (`tools.rag.files`), the shell's closest paths (`tools.shell.near_paths`) and the
agents' names of the workspace (`agents.workspace_names`) walk the same tree. Each used to keep
its own list, and the lists differed (a `.tox` the index pruned was walked for near paths).
"""

from __future__ import annotations

#: Never descended into, ignored or not: VCS data, virtualenvs, caches, dependency trees.
PRUNED_DIRS = frozenset(
    {
        ".git", ".hg", ".svn", ".venv", "venv", ".tox", ".nox", "node_modules", "__pycache__",
        ".mypy_cache", ".ruff_cache", ".pytest_cache", ".hypothesis", ".idea", ".vscode",
        ".eggs", ".terraform", ".gradle", "target", ".next", ".cache",
    }
)
#: Also left out of what is the workspace's own (its names, its paths): installed packages,
#: build output and vendored code, which code search still indexes when git tracks them.
FOREIGN_DIRS = PRUNED_DIRS | {"site-packages", "build", "dist", "vendor", "third_party"}
