"""`pilothouse doctor` runs the model in a probe process; a dying probe is named, not fatal."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import threading
import time
from pathlib import Path

import pytest
from model_processes import children

from pilothouse.config import Settings
from pilothouse.interfaces.doctor import run_checks
from pilothouse.models.local_probe import cpu_features, run_probe
from pilothouse.models.local_weights import ensure_local_model
from pilothouse.models.local_worker import describe_exit

MODELS_DIR = Path(
    os.environ.get("PILOTHOUSE_TEST_MODELS_DIR", "~/.cache/pilothouse-test/models")
).expanduser()


def test_cpu_features_are_the_cpu_part_of_the_system_info() -> None:
    info = "CPU : SSE3 = 1 | AVX2 = 1 | AMX_INT8 = 0 | LLAMAFILE = 1 | "
    assert cpu_features(info) == "SSE3 = 1 | AVX2 = 1 | AMX_INT8 = 0 | LLAMAFILE = 1"


def test_exits_are_named_by_signal_and_cause() -> None:
    assert describe_exit(-signal.SIGILL) == (
        "was killed by SIGILL (the llama.cpp build uses CPU instructions this machine does not "
        "allow)")
    assert "out-of-memory killer" in describe_exit(-signal.SIGKILL)
    assert describe_exit(3) == "exited with code 3"


def test_the_installed_llama_cpp_carries_no_amx_instruction() -> None:
    import llama_cpp

    objdump = shutil.which("objdump")
    assert objdump is not None, "objdump (binutils) is needed to inspect the build"
    libraries = sorted(Path(llama_cpp.__file__).parent.rglob("libggml-cpu*.so"))
    assert libraries, "libggml-cpu.so not found under the llama_cpp package"
    for library in libraries:
        listing = subprocess.run([objdump, "-d", str(library)], capture_output=True, text=True,
                                 check=True).stdout
        assert listing.count("ldtilecfg") == 0, f"{library} executes AMX instructions"


@pytest.fixture(scope="module")
def settings(tmp_path_factory: pytest.TempPathFactory) -> Settings:
    path = ensure_local_model(Settings(home=MODELS_DIR.parent))
    return Settings(home=tmp_path_factory.mktemp("home"), local_model_path=path)


def _checks(settings: Settings) -> dict[str, tuple[bool, str]]:
    return {check.name: (check.ok, check.detail) for check in run_checks(settings)}


@pytest.mark.local_model
def test_doctor_proves_the_model_runs_and_names_the_cpu_features(settings: Settings) -> None:
    checks = _checks(settings)
    ok, detail = checks["local model runs"]
    assert ok, detail
    assert "decoded one token" in detail
    features = checks["llama.cpp CPU features"][1]
    assert "AVX2 = 1" in features or "NEON = 1" in features
    assert "AMX_INT8 = 1" not in features


def _probe_children() -> list[int]:
    """Our child processes running the probe module."""
    return [pid for pid, cmdline in children(os.getpid())
            if b"pilothouse.models.local_probe" in cmdline]


@pytest.mark.local_model
def test_doctor_names_a_probe_killed_by_sigill_and_the_rebuild(settings: Settings) -> None:
    """SIGILL is what a build with instructions this CPU lacks dies of; here it is real, sent
    to the real probe process while it starts, and doctor must report it, not die."""
    killed: list[int] = []
    doctor_done = threading.Event()

    def kill_the_probe() -> None:
        while not killed and not doctor_done.is_set():
            for pid in _probe_children():
                os.kill(pid, signal.SIGILL)
                killed.append(pid)
            time.sleep(0.01)

    killer = threading.Thread(target=kill_the_probe, daemon=True)
    killer.start()
    checks = _checks(settings)
    doctor_done.set()
    killer.join()
    ok, detail = checks["local model runs"]
    assert not ok and len(killed) == 1
    assert "killed by SIGILL" in detail
    assert "uses CPU instructions this machine does not allow" in detail
    assert "scripts/build_llama.sh" in detail and "--force-reinstall --no-deps" in detail


def test_a_probe_of_a_damaged_file_says_what_to_do(tmp_path: Path) -> None:
    damaged = tmp_path / "model.gguf"
    damaged.write_bytes(b"GGUF" + b"\xff" * 4096)  # no GGUF version this high
    result = run_probe(damaged, 1)
    assert not result.ok and result.signal is None
    assert "could not load" in result.detail and "delete it" in result.detail
