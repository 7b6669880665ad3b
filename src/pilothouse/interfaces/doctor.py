"""`pilothouse doctor`: what is configured, and whether each part works here.

For the local model it goes as far as running it: a probe process loads the model and decodes
one token (`local_probe`), so a llama.cpp build this CPU cannot run is named, with its fix,
instead of crashing the first conversation.
"""

from __future__ import annotations

import importlib.util
import os
import tempfile
from pathlib import Path

from pilothouse.config import Settings
from pilothouse.errors import PilothouseError
from pilothouse.models.tokens import tiktoken_counter
from pilothouse.models.windows import resolve_context_window
from pilothouse.observability.memory import MemoryBudget

Check = tuple[str, bool, str]


def _data_dir(settings: Settings) -> Check:
    try:
        settings.home.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=settings.home):
            pass
        return ("data directory", True, str(settings.home))
    except OSError as error:
        return ("data directory", False,
                f"{settings.home}: {error.strerror}; set PILOTHOUSE_HOME to a writable path")


def _local_model(settings: Settings) -> list[Check]:
    checks: list[Check] = []
    has_llama = importlib.util.find_spec("llama_cpp") is not None
    checks.append(("llama-cpp-python", has_llama,
                   "installed" if has_llama else "missing: pip install llama-cpp-python"))
    from pilothouse.models.local_weights import ensure_local_model

    try:
        path = ensure_local_model(settings)
        size = os.path.getsize(path)
        checks.append(("local model file", True, f"{path} ({size:,} bytes, verified)"))
    except PilothouseError as error:
        checks.append(("local model file", False, f"{error.message} {error.hint or ''}"))
        return checks
    if has_llama:
        checks.extend(_model_runs(path, settings.local_threads))
    return checks


def _model_runs(path: Path, threads: int | None) -> list[Check]:
    """Load the model and decode one token in a probe process (a crash there is reported)."""
    from pilothouse.models.local_probe import run_probe

    probe = run_probe(path, threads)
    checks: list[Check] = []
    if probe.cpu_features:
        checks.append(("llama.cpp CPU features", True, probe.cpu_features))
    checks.append(("local model runs", probe.ok, probe.detail))
    return checks


def run_checks(settings: Settings) -> list[Check]:
    """Every check as (name, ok, detail)."""
    checks: list[Check] = [("model", True, settings.model)]
    try:
        window = resolve_context_window(settings)
        checks.append(("context window", True, f"{window.tokens:,} tokens ({window.source})"))
    except PilothouseError as error:
        checks.append(("context window", False, f"{error.message} {error.hint or ''}"))
    checks.append(_data_dir(settings))
    if settings.provider == "local":
        checks.extend(_local_model(settings))
    counter = tiktoken_counter()
    checks.append(("token counting", True,
                   "tiktoken cl100k offline" if counter else "character estimate (tiktoken-"
                   "offline missing)"))
    disabled = ", ".join(sorted(settings.disabled_layers)) or "none"
    checks.append(("context layers", not settings.disabled_layers, f"disabled: {disabled}"))
    checks.append(("Argo CD", True, settings.argocd_url or "not configured (ARGOCD_URL)"))
    budget = MemoryBudget.detect(settings.memory_limit_bytes, settings.memory_high_water)
    checks.append(("memory budget", True, f"{budget.limit_bytes / 2**30:.1f} GiB from "
                   f"{budget.source}; new work refused above {settings.memory_high_water:.0%}"))
    return checks
