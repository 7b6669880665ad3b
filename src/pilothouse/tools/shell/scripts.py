"""Find the commands hidden in sed and awk programs: `e`, `w file`, `system()`, pipes.

sed and awk are read-only only as long as their program is. GNU sed can run shell commands
(`e`, the `e` flag of `s`) and write files (`w`, `W`, the `w` flag); awk has `system()`,
`"cmd" | getline`, `print | "cmd"` and `print > "file"`. We scan the program text rather than
trust the tool name, and treat what we cannot scan as needing approval.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field


@dataclass
class ScriptEffects:
    """What a sed or awk program does beyond reading its input."""

    runs_commands: list[str] = field(default_factory=list)
    writes: list[str] = field(default_factory=list)
    reads: list[str] = field(default_factory=list)
    unreadable: str | None = None  # why the scanner gave up

    @property
    def pure(self) -> bool:
        return not (self.runs_commands or self.writes or self.reads or self.unreadable)


class _SedScanner:
    """Walk a GNU sed script command by command (addresses, s///flags, y///, text args)."""

    def __init__(self, script: str) -> None:
        self.s = script
        self.i = 0
        self.effects = ScriptEffects()

    def scan(self) -> ScriptEffects:
        try:
            while self._skip_separators():
                self._address()
                self._command()
        except (IndexError, ValueError) as exc:
            self.effects.unreadable = f"cannot analyse sed script {self.s!r}: {exc}"
        return self.effects

    def _skip_separators(self) -> bool:
        while self.i < len(self.s) and self.s[self.i] in " \t\n;}":
            self.i += 1
        return self.i < len(self.s)

    def _address(self) -> None:
        for _ in range(2):  # `addr1,addr2`
            self._skip_blanks()
            ch = self.s[self.i]
            if ch.isdigit():
                while self.s[self.i].isdigit() or self.s[self.i] == "~":
                    self.i += 1
            elif ch == "$":
                self.i += 1
            elif ch in "/\\":
                delim = self.s[self.i + 1] if ch == "\\" else "/"
                self.i += 2 if ch == "\\" else 1
                self._delimited(delim)
                while self.i < len(self.s) and self.s[self.i] in "IM":
                    self.i += 1
            self._skip_blanks()
            if self.i < len(self.s) and self.s[self.i] == ",":
                self.i += 1
                continue
            break
        self._skip_blanks()
        while self.i < len(self.s) and self.s[self.i] == "!":
            self.i += 1
            self._skip_blanks()

    def _command(self) -> None:
        cmd = self.s[self.i]
        self.i += 1
        if cmd == "{":
            return
        if cmd == "s":
            delim = self.s[self.i]
            self.i += 1
            self._delimited(delim)
            self._delimited(delim)
            self._s_flags()
        elif cmd == "y":
            delim = self.s[self.i]
            self.i += 1
            self._delimited(delim)
            self._delimited(delim)
        elif cmd in "aic":
            self._rest_of_line()
        elif cmd in ":btT":
            self._label()
        elif cmd == "e":
            self.effects.runs_commands.append(self._rest_of_line().strip() or "(pattern space)")
        elif cmd in "wW":
            self.effects.writes.append(self._rest_of_line().strip())
        elif cmd in "rR":
            self.effects.reads.append(self._rest_of_line().strip())
        elif cmd in "qQlL":
            self._skip_blanks()
            while self.i < len(self.s) and self.s[self.i].isdigit():
                self.i += 1
        elif cmd in "=dDgGhHnNpPxzF":
            pass
        else:
            raise ValueError(f"unknown sed command {cmd!r}")

    def _s_flags(self) -> None:
        while self.i < len(self.s) and self.s[self.i] not in ";\n}":
            flag = self.s[self.i]
            self.i += 1
            if flag == "e":
                self.effects.runs_commands.append("(s///e replacement)")
            elif flag in "wW":
                self.effects.writes.append(self._rest_of_line().strip())
            elif flag == "m" or flag in "gpiIM0123456789 \t":
                pass
            else:
                raise ValueError(f"unknown s/// flag {flag!r}")

    def _delimited(self, delim: str) -> None:
        if delim in "\n\\":
            raise ValueError("bad delimiter")
        while self.s[self.i] != delim:
            self.i += 2 if self.s[self.i] == "\\" else 1
        self.i += 1

    def _rest_of_line(self) -> str:
        end = self.s.find("\n", self.i)
        end = len(self.s) if end < 0 else end
        text, self.i = self.s[self.i : end], end
        return text

    def _label(self) -> None:
        while self.i < len(self.s) and self.s[self.i] not in ";\n":
            self.i += 1

    def _skip_blanks(self) -> None:
        while self.i < len(self.s) and self.s[self.i] in " \t":
            self.i += 1


def sed_effects(script: str) -> ScriptEffects:
    """Commands run and files touched by a sed script."""
    return _SedScanner(script).scan()


_AWK_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
_AWK_SYSTEM = re.compile(r"\bsystem\s*\(")
_AWK_PIPE = re.compile(r"\|\s*&?\s*getline|\|&|\bprintf?\b[^;{}]*\|")
_AWK_WRITE = re.compile(r"\bprintf?\b[^;{}]*?>>?\s*(\"(?:[^\"\\]|\\.)*\"|[^;{}\s]+)")


def awk_effects(program: str) -> ScriptEffects:
    """Commands run and files touched by an awk program."""
    effects = ScriptEffects()
    # Strings cannot hide `system(` from us, but a quoted `|` or `>` inside one is harmless.
    code = _AWK_STRING.sub(lambda m: '"' + "x" * (len(m.group()) - 2) + '"', program)
    if _AWK_SYSTEM.search(code):
        effects.runs_commands.append("system()")
    if _AWK_PIPE.search(code):
        effects.runs_commands.append("a pipe to or from a command")
    if re.search(r"@(load|include)\b", code):
        effects.unreadable = "awk @load/@include pull in code we cannot inspect"
    for match in _AWK_WRITE.finditer(code):
        start = match.start(1)
        target = program[start : match.end(1)]
        if target.startswith('"'):
            effects.writes.append(target[1:-1])
        else:
            effects.unreadable = f"awk writes to a computed file name ({target})"
    if re.search(r"\bgetline\b", code) and not effects.runs_commands:
        effects.reads.append("(getline input)")
    return effects
