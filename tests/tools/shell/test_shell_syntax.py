"""The shell-subset parser: what it understands, and what it refuses with a reason."""

from __future__ import annotations

import pytest

from pilothouse.tools.shell.syntax import Redirect, ShellSyntaxError, Word, parse


def argvs(command: str) -> list[tuple[str, list[list[str]]]]:
    """Connector and the raw words of each stage, for compact assertions."""
    return [
        (connector, [[w.raw for w in c.words] for c in pipeline.commands])
        for connector, pipeline in parse(command).items
    ]


def test_pipeline_and_lists_are_split_into_parts() -> None:
    assert argvs("echo hi | tr a-z A-Z && git status || echo failed; ls -l") == [
        ("", [["echo", "hi"], ["tr", "a-z", "A-Z"]]),
        ("&&", [["git", "status"]]),
        ("||", [["echo", "failed"]]),
        (";", [["ls", "-l"]]),
    ]


def test_pipe_inside_quotes_is_an_argument_not_a_pipe() -> None:
    assert argvs("grep 'a|b' file") == [("", [["grep", "'a|b'", "file"]])]


def test_quoting_is_kept_per_part() -> None:
    word = parse("""echo pre'*'"$HOME"x\\*""").items[0][1].commands[0].words[1]
    kinds = [(p.text, p.kind) for p in word.parts]
    assert kinds == [("pre", "literal"), ("*", "quoted"), ("HOME", "var"), ("", "quoted"),
                     ("x", "literal"), ("*", "quoted")]


def test_redirections_are_parsed_with_descriptors() -> None:
    command = parse("cmd <in >out 2>>err 2>&1 &>all").items[0][1].commands[0]
    assert [w.raw for w in command.words] == ["cmd"]

    def target(r: Redirect) -> str | int:
        return r.target.raw if isinstance(r.target, Word) else r.target

    assert [(r.fd, r.op, target(r)) for r in command.redirects] == [
        (0, "<", "in"), (1, ">", "out"), (2, ">>", "err"), (2, ">&", 1), (1, ">", "all"),
        (2, ">&", 1),
    ]  # fmt: skip


def test_digits_followed_by_space_are_an_argument_not_a_descriptor() -> None:
    command = parse("echo 2 > out").items[0][1].commands[0]
    assert [w.raw for w in command.words] == ["echo", "2"]
    assert command.redirects[0].fd == 1


def test_normalized_form_collapses_whitespace_and_trailing_separator() -> None:
    assert parse("git   push\torigin   main ;").normalized == "git push origin main"
    assert parse("find . -exec rm {} \\;").normalized == "find . -exec rm {} \\;"


@pytest.mark.parametrize(
    ("command", "reason"),
    [
        ("echo $(id)", "command substitution"),
        ("echo `id`", "backticks"),
        ('echo "`id`"', "backticks"),
        ('echo "$(id)"', "command substitution"),
        ("echo $((1+2))", "arithmetic"),
        ("cat <(ls)", "process substitution"),
        ("ls >(cat)", "process substitution"),
        ("(ls)", "subshells"),
        (":(){ :|:& };:", "subshells and functions"),
        ("ls &", "background"),
        ("cat <<EOF", "here-documents"),
        ("cat <<< hi", "here-strings"),
        ("ls |& cat", "2>&1 |"),
        ("X=1 ls", "variable assignments"),
        ("if true; then ls; fi", "keyword 'if'"),
        ("for f in a; do ls; done", "keyword 'for'"),
        ("{ ls; }", "keyword '{'"),
        ("! ls", "keyword '!'"),
        ("echo ${HOME:-x}", "parameter expansion"),
        ("echo $1", "special parameter"),
        ("echo $?", "special parameter"),
        ("echo $'\\x41'", "quoting is not supported"),
        ("echo {a,b}", "brace expansion"),
        ("ls # comment", "comments"),
        ("echo 'unterminated", "unbalanced single quote"),
        ('echo "unterminated', "unbalanced double quote"),
        ("ls &&", "must be followed by a command"),
        ("| ls", "expected a command"),
        ("ls ; ; ls", "expected a command"),
        ("ls >", "needs a target"),
        ("ls 3> x", "only descriptors"),
        ("ls 2>&7", "must name descriptor"),
        ("echo \\", "trailing backslash"),
        ("   ", "empty"),
        ("echo safe\rrm -rf x", "U+000D"),
        ("echo a\x00b", "U+0000"),
        ("echo \u202egnp.exe", "U+202E"),
        ("echo " + "x" * 70_000, "longer than"),
    ],
)
def test_unsupported_syntax_is_refused_with_a_reason(command: str, reason: str) -> None:
    with pytest.raises(ShellSyntaxError) as raised:
        parse(command)
    assert reason in raised.value.reason


def test_unbalanced_quote_reports_which_quote_and_where() -> None:
    with pytest.raises(ShellSyntaxError) as raised:
        parse("grep it's file")
    assert raised.value.unbalanced_quote == "'"
    assert raised.value.position == 7


def test_literal_dollar_and_braces_without_expansion_are_words() -> None:
    assert argvs("grep 'x$' f") == [("", [["grep", "'x$'", "f"]])]
    assert argvs("echo a$ {}") == [("", [["echo", "a$", "{}"]])]


def test_newline_separates_commands_and_backslash_newline_continues() -> None:
    assert argvs("ls\npwd") == [("", [["ls"]]), (";", [["pwd"]])]
    assert [p.text for p in parse("ec\\\nho").items[0][1].commands[0].words[0].parts] == [
        "ec", "ho"
    ]
