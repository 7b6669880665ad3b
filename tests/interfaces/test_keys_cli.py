"""`pilothouse keys new`: a key `serve` accepts, alone on stdout, and where to put it."""

from __future__ import annotations

import os
import subprocess
import sys

from pilothouse.interfaces.api.identity import KeyRing


def pilothouse(*args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PILOTHOUSE_")}
    return subprocess.run([sys.executable, "-m", "pilothouse", *args], env=env,
                          capture_output=True, text=True, timeout=120, check=False)


def test_keys_new_prints_a_key_serve_accepts_and_says_where_it_goes() -> None:
    bare, named = pilothouse("keys", "new"), pilothouse("keys", "new", "--name", "alice")
    assert bare.returncode == named.returncode == 0, bare.stderr + named.stderr
    key = bare.stdout.strip()
    name, _, other = named.stdout.strip().partition("=")
    assert bare.stdout == key + "\n" and len(key) == 43 and name == "alice"
    assert other != key and len(other) == 43
    ring = KeyRing.parse([key, named.stdout.strip()])  # exactly what PILOTHOUSE_API_KEYS takes
    found = ring.identify(other)
    assert found is not None and found.name == "alice" and ring.identify(key) is not None
    for told in (bare.stderr, named.stderr):
        assert "PILOTHOUSE_API_KEYS" in told and "Authorization: Bearer" in told
        assert key not in told and other not in told  # the key goes to stdout only


def test_the_help_says_where_the_key_goes() -> None:
    shown = pilothouse("keys", "new", "--help")
    text = " ".join(shown.stdout.split())
    assert shown.returncode == 0
    assert "PILOTHOUSE_API_KEYS" in text and "auth.apiKeys" in text and "--name" in text


def test_a_name_that_cannot_name_a_key_is_refused() -> None:
    done = pilothouse("keys", "new", "--name", "al ice")
    assert done.returncode == 2 and done.stdout == ""
    assert "cannot name a key" in done.stderr and "--name alice" in done.stderr


def test_the_command_loads_nothing_heavy() -> None:
    probe = ("import sys, pilothouse.interfaces.keys_cli; "
             "print(sorted({m.split('.')[0] for m in sys.modules} & "
             "{'langchain', 'langchain_core', 'langgraph', 'chromadb', 'a2a', 'fastapi', "
             "'starlette', 'llama_cpp'}))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          timeout=60, check=True)
    assert done.stdout.strip() == "[]"
