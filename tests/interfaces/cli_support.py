"""Run `pilothouse` as a user does: a process of its own, stdout a pipe, over a scripted model.

The model is the only fake (an OpenAI-compatible scripted server on 127.0.0.1); the agents'
tool servers, the sandboxes, SQLite and the shell are real. One script serves every agent:
each rule matches on the tools a request offers, so the supervisor, the GitHub, DevOps and
Argo CD agents each get their own replies.
"""

from __future__ import annotations

import fcntl
import json
import os
import pty
import select
import shlex
import struct
import subprocess
import sys
import termios
from pathlib import Path
from typing import Any

#: Variables of the test process that would change what the CLI's agents do.
CLEARED = ("PILOTHOUSE_", "ARGOCD_", "GITHUB_", "GH_TOKEN", "OPENAI_", "LLM_", "MAX_CONTEXT")
#: A line longer than any terminal, with a command in it that must not be split. Advice, not
#: "Run <command>": a question that says that runs the command as spelled (`shell_intent`).
LONG_LINE = ("Restart it with kubectl -n payments rollout restart deployment/payments-api "
             "--context gke-prod-europe-west4.acme.internal and then watch "
             "kubectl -n payments get pods -l app=payments-api -w until every pod is Ready.")

#: An application of the Argo CD sandbox's generated fleet (any size).
SYNCED_APP = "analytics-api-dev"


def _supervisor(agent: str, word: str) -> list[dict[str, Any]]:
    tool = f"ask_{agent}"
    return [{"name": f"route-{agent}",
             "when": {"tools_include": tool, "last_role": "user", "last_contains": word},
             "reply": {"tool_calls": [{"name": tool, "arguments": {"question": "{question}"}}]}},
            {"name": f"combine-{agent}", "when": {"tools_include": tool, "last_role": "tool"},
             "reply": {"content": "Combined: {tool_results}"}}]


def _specialist(agent: str, tool: str, arguments: dict[str, Any],
                answer: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"name": f"{agent}-call", "when": {"tools_include": tool, "last_role": "user"},
             "reply": {"tool_calls": [{"name": tool, "arguments": arguments}]}},
            {"name": f"{agent}-answer", "when": {"tools_include": tool, "last_role": "tool"},
             "reply": answer}]


SCRIPT: dict[str, Any] = {"rules": [
    {"name": "long-answer", "when": {"last_role": "user", "last_contains": "long answer"},
     "reply": {"content": f"Two steps:  \n\n{LONG_LINE}   \n\nDone."}},
    {"name": "markdown-answer", "when": {"last_role": "user", "last_contains": "stream it"},
     "reply": {"content": "The **payments-api** rollout is fine.", "chunk_delay": 0.05}},
    *_supervisor("github", "pull"), *_supervisor("devops", "touch"),
    *_supervisor("argocd", "apps"),
    *_specialist("github", "search_issues", {"query": "org:acme-corp is:pr is:open",
                                             "per_page": 5}, {"content": "GITHUB: {last}"}),
    *_specialist("devops", "run_command", {"command": "touch approved.txt"},
                 {"content": "DEVOPS: {last}"}),
    {"name": "argocd-sync", "when": {"tools_include": "sync_application", "last_role": "user",
                                     "last_contains": "sync"},
     "reply": {"tool_calls": [{"name": "sync_application",
                               "arguments": {"name": SYNCED_APP, "dry_run": False}}]}},
    *_specialist("argocd", "list_applications", {}, {"content": "ARGO: {last}"}),
], "default": {"content": "No scripted answer."}}


def pilothouse(home: Path, model_url: str, *args: str, stdin: str | None = None,
               cwd: Path | None = None, **env: str) -> subprocess.CompletedProcess[str]:
    """`pilothouse ARGS...` with stdout and stderr pipes, configured only by `env`, run in
    `cwd` (default `home`: the DevOps agent's workspace when PILOTHOUSE_WORKSPACE is unset)."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith(CLEARED)}
    clean.update({"PILOTHOUSE_HOME": str(home), "PILOTHOUSE_MODEL": "openai-compatible:scripted",
                  "OPENAI_BASE_URL": model_url, "MAX_CONTEXT_TOKENS": "32000", **env})
    home.mkdir(parents=True, exist_ok=True)
    return subprocess.run([sys.executable, "-m", "pilothouse", *args], env=clean, cwd=cwd or home,
                          input=stdin, capture_output=True, text=True, timeout=180, check=False)


def on_a_terminal(home: Path, model_url: str, *args: str, **extra: str) -> tuple[int, str]:
    """Run `pilothouse ARGS` (with `extra` variables) with stdout and stderr on a 120-column
    pseudo-terminal; returns the exit code and everything the terminal received."""
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    env = {k: v for k, v in os.environ.items()
           if not k.startswith((*CLEARED, "NO_COLOR", "COLUMNS", "LINES"))}
    env.update({"PILOTHOUSE_HOME": str(home), "PILOTHOUSE_MODEL": "openai-compatible:scripted",
                "OPENAI_BASE_URL": model_url, "MAX_CONTEXT_TOKENS": "32000", "TERM": "xterm",
                **extra})
    process = subprocess.Popen([sys.executable, "-m", "pilothouse", *args], env=env,
                               stdin=subprocess.DEVNULL, stdout=follower, stderr=follower)
    os.close(follower)
    chunks: list[bytes] = []
    try:
        while select.select([leader], [], [], 180)[0]:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # the terminal closed: the process has exited
                break
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        os.close(leader)
    return process.wait(timeout=60), b"".join(chunks).decode("utf-8", "replace")


def printed_command(stderr: str, label: str) -> list[str]:
    """The command a hint printed after `label` (e.g. "approve:"), as arguments for `pilothouse`
    (the leading `pilothouse` dropped, quoting undone as a shell would)."""
    for line in stderr.splitlines():
        if line.startswith(label):
            words = shlex.split(line[len(label):])
            assert words[0] == "pilothouse", line
            return words[1:]
    raise AssertionError(f"no {label!r} line in:\n{stderr}")


def backquoted_commands(text: str) -> list[list[str]]:
    """Every `pilothouse ...` command quoted in backquotes in `text`, as arguments."""
    parts = text.split("`")[1::2]
    return [shlex.split(p)[1:] for p in parts if p.startswith("pilothouse ")]


def json_lines(stdout: str) -> list[dict[str, Any]]:
    """Every line of stdout as JSON (a line that is not one fails the test)."""
    return [json.loads(line) for line in stdout.splitlines()]
