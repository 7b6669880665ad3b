"""Prove the local model runs here: load it and decode one token in a separate process.

`run_probe` starts `python -m pilothouse.models.local_probe MODEL THREADS` and reads the JSON
lines it prints: first llama.cpp's system info (the CPU features the build uses, printed before
the model loads, so it is known even when the load crashes), then the decoded token. A build
with instructions the CPU refuses kills the probe, not `pilothouse doctor`, and the result
names the signal and the rebuild command.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from pilothouse.models.local_worker import describe_exit, signal_name

PROBE_TIMEOUT_SECONDS = 600.0
PINNED_VERSION = "0.3.36"


def rebuild_command() -> str:
    """The one line that installs a portable llama.cpp build into this interpreter."""
    try:
        version = metadata.version("llama-cpp-python")
    except metadata.PackageNotFoundError:
        version = PINNED_VERSION
    python = sys.executable
    return (f'{python} -m pip install --force-reinstall --no-deps '
            f'"$(scripts/build_llama.sh {python} {version})"')


@dataclass(frozen=True)
class ProbeResult:
    """What the probe process reported, and how it ended."""

    ok: bool
    cpu_features: str  # llama.cpp's "CPU : SSE3 = 1 | ... | AMX_INT8 = 0 |" line, or ""
    detail: str  # what happened and, on failure, what to do
    signal: str | None = None  # e.g. "SIGILL" when a signal ended the probe


def cpu_features(system_info: str) -> str:
    """The CPU part of `llama_print_system_info()` (it also lists other backends)."""
    for part in system_info.split("|"):
        if "CPU :" in part:
            start = system_info.index(part)
            return system_info[start:].replace("CPU :", "").strip(" |\n")
    return system_info.strip()


def run_probe(model_path: Path | str, n_threads: int | None,
              timeout: float = PROBE_TIMEOUT_SECONDS) -> ProbeResult:
    """Load the model and decode one token in a child process; never raises for its failure."""
    command = [sys.executable, "-m", "pilothouse.models.local_probe", str(model_path),
               str(n_threads or 0)]
    started = time.monotonic()
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout,
                              check=False)
    except subprocess.TimeoutExpired:
        return ProbeResult(False, "", f"the probe did not finish within {timeout:g} s "
                           "(a machine this slow cannot run the local model usefully)")
    seconds = time.monotonic() - started
    report: dict[str, str] = {}
    for line in done.stdout.splitlines():
        try:
            report.update(json.loads(line))
        except ValueError:
            continue  # llama.cpp may print to stdout too
    features = cpu_features(report.get("system_info", ""))
    if done.returncode == 0 and "token" in report:
        return ProbeResult(True, features, f"loaded the model and decoded one token "
                           f"({report['token']!r}) in a separate process in {seconds:.1f} s")
    name = signal_name(done.returncode)
    if name is not None:
        return ProbeResult(False, features, (
            f"the model probe process {describe_exit(done.returncode)}. Rebuild llama.cpp "
            f"for this machine: {rebuild_command()}"), signal=name)
    error = (report.get("error") or done.stderr.strip().splitlines()[-1:] or ["no output"])
    message = error if isinstance(error, str) else error[0]
    return ProbeResult(False, features, (
        f"the model probe failed: {message[:300]}. If the file is damaged, delete it to have "
        "it re-assembled; if llama.cpp itself fails, rebuild it: " + rebuild_command()))


def _emit(**fields: object) -> None:
    print(json.dumps(fields), flush=True)


def main(argv: list[str]) -> int:
    """The probe process: system info, then load, then one decoded token."""
    path, threads = argv[0], int(argv[1]) or None
    import llama_cpp

    _emit(system_info=llama_cpp.llama_print_system_info().decode("utf-8", "replace"))
    try:
        llm = llama_cpp.Llama(path, n_ctx=256, n_threads=threads, n_threads_batch=threads,
                              verbose=False)
    except (ValueError, OSError) as error:
        _emit(error=f"llama.cpp could not load {path}: {error}")
        return 1
    prompt = llm.tokenize(b"<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n",
                          add_bos=False, special=True)
    token = next(iter(llm.generate(prompt, temp=0.0)))
    _emit(token=llm.detokenize([token], special=True).decode("utf-8", "replace"))
    llm.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
