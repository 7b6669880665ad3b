"""Recursive reads that follow symlinks: the jail checks the tree, not just the arguments.

A path argument is resolved before the policy decides, so `cat link/secret` counts as the file
the link points at. A recursive command that follows links (`grep -R`, `find -L`, `diff -r`,
`tree -l`, `du -L`, `ls -RL`) reads whatever the links under its start folders point at, which
no argument shows. So for those, the tree under each start folder inside the workspace is
walked as the command reads it (`tree_walk`, the walk the secret check shares) and the first
link that leaves the workspace makes the command wait for a person, with the link and its
target shown.
Options that read the names of the files to open from a file (`--files0-from`) cannot be
checked at all and always ask.
"""

from __future__ import annotations

from collections.abc import Sequence

from pilothouse.tools.shell.arguments import path_roles
from pilothouse.tools.shell.findings import Finding, GuardContext
from pilothouse.tools.shell.secret_trees import recursive_read
from pilothouse.tools.shell.tree_walk import Skips, TreeWalk


def link_finding(command: str, walk: TreeWalk) -> Finding:
    """Allow when no link under the walked folder leaves the workspace; otherwise ask,
    showing it."""
    if not walk.inside:
        return Finding("allow", "")  # outside: the path check covers it
    if walk.escape is not None:
        return Finding(
            "ask",
            f"{command} follows the symlink {walk.escape.link} to {walk.escape.target}, "
            "outside the workspace",
            "Drop the option that follows symlinks, or ask the user to approve reading there.",
        )
    if walk.too_large:
        return Finding(
            "ask",
            f"{command} follows symlinks under {walk.start}, a tree too large to check for "
            "links that leave the workspace",
            "Drop the option that follows symlinks, or ask the user to approve.",
        )
    return Finding("allow", "")


def _short_flags(args: Sequence[str]) -> set[str]:
    """Every single-letter option in `args` (`-Rn` gives R and n), up to `--`."""
    letters: set[str] = set()
    for arg in args:
        if arg == "--":
            break
        if arg.startswith("-") and not arg.startswith("--") and len(arg) > 1:
            letters.update(arg[1:])
    return letters


def follows_links(name: str, args: Sequence[str]) -> str | None:
    """The option by which `name args` follows symlinks while recursing, or None."""
    short, long = _short_flags(args), set(args)
    if name in ("grep", "egrep", "fgrep"):
        if "R" in short or "--dereference-recursive" in long:
            return "-R"
    elif name == "find":
        if "-L" in _find_options(args) or "-follow" in long:
            return "-L"
    elif name == "ls":
        recursive = "R" in short or "--recursive" in long
        if recursive and ("L" in short or "--dereference" in long):
            return "-RL"
    elif name == "du":
        if "L" in short or "--dereference" in long:
            return "-L"
    elif name == "tree":
        if "l" in short:
            return "-l"
    elif name == "diff":
        recursive = "r" in short or "--recursive" in long
        if recursive and "--no-dereference" not in long:
            return "-r"
    return None


def _find_options(args: Sequence[str]) -> list[str]:
    """find's options before its start folders (`-H`, `-L`, `-P`, `-D opts`, `-Olevel`)."""
    leading: list[str] = []
    value_next = False
    for arg in args:
        if value_next:
            value_next = False
        elif arg in ("-H", "-L", "-P") or arg.startswith("-O"):
            leading.append(arg)
        elif arg.startswith("-D"):
            value_next = arg == "-D"
        else:
            break
    return leading


def link_findings(name: str, args: Sequence[str], ctx: GuardContext) -> list[Finding]:
    """Findings for the links a recursive, link-following `name args` would read through."""
    found: list[Finding] = []
    if option := names_from_file(args):
        found.append(Finding(
            "ask", f"{name} {option} opens the files another file names, which the policy "
            "cannot check", "Name the files on the command line instead."))
    option = follows_links(name, args)
    skips = Skips()
    # grep and diff: the walk their secret check makes (`secret_trees`) serves here too, so
    # it skips what they skip; and getopt's abbreviations (`--derefer`) follow links as well.
    if (read := recursive_read(name, args)) is not None and read.follows_links:
        option, skips = option or read.option, read.skips
    if option is None:
        return found
    starts = [v for v in path_roles(name, args).reads if not v.startswith("-")]
    what = f"{name} {option}"
    found.extend(link_finding(what, ctx.tree(start, skips, True)) for start in starts or ["."])
    return found


def names_from_file(args: Sequence[str]) -> str | None:
    """An option that makes the command open every file named in another file."""
    for arg in args:
        if arg == "--":
            break
        if arg.split("=", 1)[0] == "--files0-from":
            return "--files0-from"
    return None
