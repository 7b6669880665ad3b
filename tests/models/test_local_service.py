"""The shared local model service: started once, reused, queued, replaced when stale or killed.

Real processes throughout: the service is `python -m pilothouse.models.local_service` in a
session of its own, clients are `ServiceEngine`s here and in other processes
(`service_client.py`), signals are real. These tests hold turns without generating, so the
model file is never loaded (a few bytes stand in for it); the test at the end runs the real
model to kill the service in the middle of an answer (marked `local_model`).
"""

from __future__ import annotations

import json
import os
import signal
import socket
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from pilothouse.config import Settings
from pilothouse.errors import PilothouseError
from pilothouse.models.local_engine import GenerationStats
from pilothouse.models.local_service_client import ServiceEngine, ServiceOptions
from pilothouse.models.local_service_control import service_status, stop_service
from pilothouse.models.local_service_files import (
    ServicePaths,
    service_alive,
    service_paths,
    socket_address,
    unlock,
    wait_lock,
)
from pilothouse.models.local_turn_queue import report_waiting
from pilothouse.models.local_weights import ensure_local_model
from pilothouse.models.local_worker import LocalModelCrashedError

CLIENT = Path(__file__).with_name("service_client.py")


@pytest.fixture
def model(tmp_path: Path) -> Path:
    path = tmp_path / "model.gguf"
    path.write_bytes(b"GGUF: never loaded by these tests")
    return path


@pytest.fixture
def paths(tmp_path: Path) -> Iterator[ServicePaths]:
    paths = service_paths(tmp_path / "home")
    yield paths
    stop_service(paths)


def engine(paths: ServicePaths, model: Path, *, n_ctx: int = 2048, idle: float = 60,
           report: Callable[[int], None] = report_waiting) -> ServiceEngine:
    return ServiceEngine(model, n_ctx, 1, None, ServiceOptions(paths.folder, idle), report)


def take_turn(client: ServiceEngine) -> int | None:
    """Take a turn and end it at once: the pid of the service that ran it."""
    with client.lock:
        client.begin()
        return client.service_pid


def client_process(paths: ServicePaths, model: Path, n_ctx: int = 2048) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, str(CLIENT), str(paths.folder), str(model),
                             str(n_ctx)], stdout=subprocess.PIPE, text=True)


def client_result(process: subprocess.Popen[str]) -> dict[str, object]:
    out, _ = process.communicate(timeout=120)
    assert process.returncode == 0
    result: dict[str, object] = json.loads(out)
    return result


def wait_gone(paths: ServicePaths) -> None:
    """Until no service holds the home's lock (it is released when the process ends)."""
    lock = wait_lock(paths.lock, 30)
    assert lock is not None, "the service is still running"
    unlock(lock)


def test_the_first_command_starts_the_service_and_the_next_one_uses_it(
    paths: ServicePaths, model: Path,
) -> None:
    assert service_status(paths) is None
    first = engine(paths, model)
    pid = take_turn(first)
    assert pid is not None and pid != os.getpid()

    assert client_result(client_process(paths, model)) == {"service_pid": pid, "private": False}
    info = service_status(paths)
    assert info is not None and info["pid"] == pid and info["turns"] == 2
    assert info["identity"]["model"] == str(model.resolve())


def test_commands_started_at_once_start_one_service(paths: ServicePaths, model: Path) -> None:
    clients = [client_process(paths, model) for _ in range(3)]
    pids = {client_result(process)["service_pid"] for process in clients}
    assert len(pids) == 1
    assert paths.log.read_text().count("serving ") == 1  # no second service ever started


def test_the_socket_and_its_folder_are_owner_only(paths: ServicePaths, model: Path) -> None:
    take_turn(engine(paths, model))
    assert stat.S_IMODE(paths.folder.stat().st_mode) == 0o700
    assert stat.S_ISSOCK(paths.socket.stat().st_mode)
    assert stat.S_IMODE(paths.socket.stat().st_mode) == 0o600
    assert stat.S_IMODE(paths.log.stat().st_mode) == 0o600


def test_turns_wait_in_line_and_are_told_how_many_are_ahead(
    paths: ServicePaths, model: Path,
) -> None:
    told: dict[str, list[int]] = {"second": [], "third": []}
    queued = threading.Semaphore(0)
    third_is_next = threading.Event()

    def reporter(name: str) -> Callable[[int], None]:
        def report(ahead: int) -> None:
            told[name].append(ahead)
            if name == "third" and ahead == 1:
                third_is_next.set()
            queued.release()
        return report

    holder = engine(paths, model)
    second = engine(paths, model, report=reporter("second"))
    third = engine(paths, model, report=reporter("third"))

    def wait_turn(name: str, client: ServiceEngine) -> None:
        with client.lock:
            client.begin()
            if name == "second":
                # The second holds its turn until the third is told it is next: a turn that
                # ends before the service writes to the one behind it may be skipped over
                # (2, then 0 ahead), which is right but not what this test is about.
                third_is_next.wait(30)

    with holder.lock:
        holder.begin()
        waiters = [threading.Thread(target=wait_turn, args=("second", second))]
        waiters[0].start()
        assert queued.acquire(timeout=30)  # second: 1 ahead
        waiters.append(threading.Thread(target=wait_turn, args=("third", third)))
        waiters[1].start()
        assert queued.acquire(timeout=30)  # third: 2 ahead
        info = service_status(paths)
        assert info is not None and info["active"] and info["queued"] == 2
    for waiter in waiters:
        waiter.join(30)
    assert told == {"second": [1, 0], "third": [2, 1, 0]}


def test_a_turn_given_up_while_it_waits_leaves_the_line(paths: ServicePaths, model: Path) -> None:
    queued = threading.Event()
    holder = engine(paths, model)
    waiting = engine(paths, model, report=lambda ahead: queued.set())
    give_up = threading.Event()
    pieces: list[str] = []

    def ask() -> None:
        with waiting.lock:
            pieces.extend(waiting.generate("Hi", stats=GenerationStats(), max_tokens=4,
                                           should_stop=give_up.is_set))

    with holder.lock:
        holder.begin()
        asking = threading.Thread(target=ask)
        asking.start()
        assert queued.wait(30)
        give_up.set()  # e.g. Ctrl-C, or the model-call time limit
        asking.join(30)
        assert not asking.is_alive() and pieces == []
    assert take_turn(engine(paths, model)) == holder.service_pid
    # The service counts a turn just after telling its client it runs (a client gone by then
    # is not counted), so the count can lag the client by a moment: read it until it settles.
    deadline = time.monotonic() + 10
    while (info := service_status(paths)) is not None and info["turns"] < 2 \
            and time.monotonic() < deadline:
        time.sleep(0.05)
    assert info is not None and info["queued"] == 0 and info["turns"] == 2


def test_the_service_exits_after_its_idle_time(paths: ServicePaths, model: Path) -> None:
    take_turn(engine(paths, model, idle=1))
    wait_gone(paths)
    assert not paths.socket.exists()
    assert "no turn for 1 s: exiting" in paths.log.read_text()


def test_a_stale_socket_is_replaced(paths: ServicePaths, model: Path) -> None:
    first = take_turn(engine(paths, model))
    assert first is not None
    os.kill(first, signal.SIGKILL)  # nothing runs its clean-up: the socket file stays
    wait_gone(paths)
    assert stat.S_ISSOCK(paths.socket.stat().st_mode)
    assert service_status(paths) is None  # nobody answers on it

    second = take_turn(engine(paths, model))
    assert second not in (None, first)
    info = service_status(paths)
    assert info is not None and info["pid"] == second


def test_a_killed_service_fails_the_turn_in_flight_and_the_next_turn_starts_another(
    paths: ServicePaths, model: Path,
) -> None:
    client = engine(paths, model)
    with client.lock:
        client.begin()
        killed = client.service_pid
        assert killed is not None
        os.kill(killed, signal.SIGKILL)
        with pytest.raises(LocalModelCrashedError) as caught:
            list(client.generate("Hi", stats=GenerationStats(), max_tokens=4))
    message = caught.value.message
    assert f"model service (pid {killed}) was killed by SIGKILL" in message
    assert "The conversation is kept" in message and "pilothouse doctor" in (caught.value.hint
                                                                              or "")
    assert client.pid is None

    assert take_turn(client) not in (None, killed)


def test_a_model_that_does_not_load_fails_the_turn_with_the_workers_error(
    paths: ServicePaths, model: Path,
) -> None:
    client = engine(paths, model)
    with client.lock, pytest.raises(PilothouseError) as caught:
        list(client.generate("Hi", stats=GenerationStats(), max_tokens=4))
    assert "could not load" in caught.value.message  # raised in the worker, relayed twice
    info = service_status(paths)
    assert info is not None and info["turns"] == 1  # the service itself is fine


def test_a_service_of_other_settings_is_replaced_when_idle_and_left_alone_when_busy(
    paths: ServicePaths, model: Path,
) -> None:
    first = take_turn(engine(paths, model, n_ctx=2048))
    replaced = take_turn(engine(paths, model, n_ctx=4096))
    assert replaced not in (None, first)

    holder = engine(paths, model, n_ctx=4096)
    with holder.lock:
        holder.begin()
        other = client_result(client_process(paths, model, n_ctx=2048))
    assert other == {"service_pid": None, "private": True}  # its own worker, as before
    info = service_status(paths)
    assert info is not None and info["pid"] == replaced and info["identity"]["n_ctx"] == 4096


def test_status_and_stop_on_the_command_line(paths: ServicePaths, model: Path) -> None:
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("PILOTHOUSE_")},
           "PILOTHOUSE_HOME": str(paths.folder.parent)}

    def pilothouse(*args: str) -> str:
        done = subprocess.run([sys.executable, "-m", "pilothouse", "model", *args], env=env,
                              capture_output=True, text=True, timeout=120, check=True)
        return done.stdout

    assert json.loads(pilothouse("status", "--json")) == {"running": False}
    assert "not running" in pilothouse("status")
    pid = take_turn(engine(paths, model))

    status = pilothouse("status")
    assert f"running (pid {pid})" in status
    for label in ("model:", "uptime:", "idle: exits in", "served: 1 turns", "queue: 0 running, "
                  "0 waiting"):
        assert label in status, status
    assert str(model.resolve()) in status
    assert json.loads(pilothouse("status", "--json"))["pid"] == pid

    assert f"stopped the local model service (pid {pid})" in pilothouse("stop")
    assert not service_alive(paths)
    assert "not running" in pilothouse("stop")


def test_doctor_reports_the_service(paths: ServicePaths, model: Path) -> None:
    env = {**{k: v for k, v in os.environ.items() if not k.startswith(("PILOTHOUSE_", "ARGOCD_",
                                                                        "GITHUB_"))},
           "PILOTHOUSE_HOME": str(paths.folder.parent), "PILOTHOUSE_WORKSPACE": str(model.parent),
           "PILOTHOUSE_MODEL": "local:qwen2.5-coder-1.5b-instruct",
           "PILOTHOUSE_LOCAL_MODEL_PATH": str(model)}

    def service_row(**extra: str) -> dict[str, str]:
        done = subprocess.run([sys.executable, "-m", "pilothouse", "doctor", "--json"],
                              env={**env, **extra}, capture_output=True, text=True, timeout=120,
                              check=False)  # exit 1: these bytes are no model (its own row)
        checks = {check["name"]: check for check in json.loads(done.stdout)["checks"]}
        return checks["local model service"]

    assert service_row()["detail"].startswith("not running")
    pid = take_turn(engine(paths, model))
    row = service_row()
    assert row["status"] == "ok" and row["detail"].startswith(f"running, pid {pid}, up ")
    assert "1 turns served, exits in" in row["detail"]
    assert service_row(PILOTHOUSE_LOCAL_IDLE_SECONDS="0")["detail"].startswith("off")


@pytest.fixture
def open_home() -> Iterator[Path]:
    """A home another user could reach but for its own modes (pytest's folders are 0700)."""
    import shutil
    import tempfile

    folder = Path(tempfile.mkdtemp(prefix="ph-svc-", dir="/tmp"))
    folder.chmod(0o755)
    try:
        yield folder
    finally:
        stop_service(service_paths(folder))
        shutil.rmtree(folder)


def knock_as(uid: int, path: Path) -> str:
    """Connect to the socket at `path` as user `uid` (a forked child): what happened."""
    reader, writer = os.pipe()
    child = os.fork()
    if child == 0:  # the child: only system calls, then out
        outcome = "served"
        try:
            os.setuid(uid)
            sock = socket.socket(socket.AF_UNIX)
            sock.settimeout(30)
            sock.connect(str(path))
            outcome = "served" if sock.recv(1) else "closed"
        except OSError as error:
            outcome = type(error).__name__
        finally:
            os.write(writer, outcome.encode())
            os._exit(0)
    os.close(writer)
    with os.fdopen(reader) as answer:
        outcome = answer.read()
    os.waitpid(child, 0)
    return outcome


@pytest.mark.skipif(os.getuid() != 0, reason="acting as another user needs root")
def test_another_user_can_neither_reach_the_socket_nor_be_served(
    open_home: Path, model: Path,
) -> None:
    paths = service_paths(open_home)
    take_turn(engine(paths, model))

    with socket_address(paths.socket) as address:
        assert not address.startswith("/proc"), "a short path, reachable by another user"

    assert knock_as(65534, paths.socket) == "PermissionError"  # the folder is 0700
    paths.folder.chmod(0o711)
    paths.socket.chmod(0o666)
    assert knock_as(65534, paths.socket) == "closed"  # reached, but the service checks who
    assert "refused a connection from uid 65534" in paths.log.read_text()


MODELS_DIR = Path(
    os.environ.get("PILOTHOUSE_TEST_MODELS_DIR", "~/.cache/pilothouse-test/models")
).expanduser()
COUNT = ("<|im_start|>user\nCount from 1 to {n}, one number per line.<|im_end|>\n"
         "<|im_start|>assistant\n")


@pytest.mark.local_model
@pytest.mark.timeout(600)
def test_a_service_killed_mid_answer_fails_that_answer_and_a_new_service_gives_the_next(
    paths: ServicePaths,
) -> None:
    weights = ensure_local_model(Settings(home=MODELS_DIR.parent))
    client = ServiceEngine(weights, 2048, Settings().local_threads, None,
                           ServiceOptions(paths.folder, 60))
    with client.lock:
        pieces = client.generate(COUNT.format(n=40), stats=GenerationStats(), max_tokens=200)
        assert next(pieces)  # the answer is under way, in the service's worker
        killed = client.service_pid
        assert killed is not None
        os.kill(killed, signal.SIGKILL)
        with pytest.raises(LocalModelCrashedError) as caught:
            list(pieces)
    assert f"model service (pid {killed}) was killed by SIGKILL" in caught.value.message

    stats = GenerationStats()
    with client.lock:
        text = "".join(client.generate(COUNT.format(n=3), stats=stats, max_tokens=20))
    assert client.service_pid not in (None, killed)
    assert "1" in text and stats.completion_tokens > 0
