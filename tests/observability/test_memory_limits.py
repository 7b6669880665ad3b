"""Memory limits: size strings, cgroup v1/v2 files, /proc readings."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pilothouse.errors import ConfigurationError
from pilothouse.observability.limits import (
    detect_memory_limit,
    peak_resident_bytes,
    resident_bytes,
    total_ram,
)
from pilothouse.sizes import GIB, MIB, format_bytes, parse_memory_size

V1_UNLIMITED = "9223372036854771712"


@pytest.mark.parametrize(("text", "expected"), [
    ("1073741824", GIB),
    ("4GiB", 4 * GIB),
    ("4 GiB", 4 * GIB),
    ("4gib", 4 * GIB),
    ("4Gi", 4 * GIB),
    ("4G", 4 * GIB),
    ("4GB", 4 * GIB),
    ("512M", 512 * MIB),
    ("512MiB", 512 * MIB),
    ("1.5GiB", 3 * GIB // 2),
    ("1T", 1024 * GIB),
    ("65536K", 64 * MIB),
    ("104857600B", 100 * MIB),
])
def test_sizes_parse_with_binary_units(text: str, expected: int) -> None:
    assert parse_memory_size(text) == expected


@pytest.mark.parametrize("text", ["", "four gigs", "4 GiBs", "-1GiB", "4XB", "GiB", "4.G"])
def test_malformed_sizes_name_the_variable_and_show_examples(text: str) -> None:
    with pytest.raises(ConfigurationError) as caught:
        parse_memory_size(text)
    assert caught.value.message.startswith("PILOTHOUSE_MEMORY_LIMIT=")
    assert "is not a memory size" in caught.value.message
    assert caught.value.hint is not None and "4GiB" in caught.value.hint


def test_a_size_without_its_unit_is_refused_with_a_hint() -> None:
    with pytest.raises(ConfigurationError) as caught:
        parse_memory_size("4096")
    assert "below the minimum of 16 MiB" in caught.value.message
    assert caught.value.hint == "Add a unit: e.g. `PILOTHOUSE_MEMORY_LIMIT=4096MiB`."


def test_format_bytes_for_people() -> None:
    assert format_bytes(512 * MIB) == "512 MiB"
    assert format_bytes(4 * GIB) == "4.0 GiB"


def fake_system(tmp_path: Path, proc_cgroup: str, files: dict[str, str],
                ram_kib: int = 16 * 1024 * 1024) -> dict[str, Path]:
    """A cgroup mount, /proc/self/cgroup and /proc/meminfo under `tmp_path`."""
    root = tmp_path / "cgroup"
    root.mkdir()
    for relative, content in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content + "\n")
    (tmp_path / "self_cgroup").write_text(proc_cgroup)
    (tmp_path / "meminfo").write_text(f"MemTotal:       {ram_kib} kB\nMemFree:  1000 kB\n")
    return {"cgroup_root": root, "proc_cgroup": tmp_path / "self_cgroup",
            "meminfo": tmp_path / "meminfo"}


def test_cgroup_v2_limit_of_a_container(tmp_path: Path) -> None:
    paths = fake_system(tmp_path, "0::/\n", {"memory.max": str(4 * GIB)})
    limit = detect_memory_limit(**paths)
    assert limit.bytes == 4 * GIB
    assert "cgroup limit" in limit.source and limit.source.endswith("memory.max")


def test_cgroup_v2_takes_the_tightest_ancestor(tmp_path: Path) -> None:
    paths = fake_system(tmp_path, "0::/kubepods/pod1/app\n", {
        "kubepods/memory.max": str(8 * GIB),
        "kubepods/pod1/memory.max": str(2 * GIB),
        "kubepods/pod1/app/memory.max": "max",
    })
    assert detect_memory_limit(**paths).bytes == 2 * GIB


def test_cgroup_v2_without_a_limit_falls_back_to_total_ram(tmp_path: Path) -> None:
    paths = fake_system(tmp_path, "0::/\n", {"memory.max": "max"}, ram_kib=8 * 1024 * 1024)
    limit = detect_memory_limit(**paths)
    assert limit.bytes == 8 * GIB and "no cgroup memory limit" in limit.source


def test_cgroup_v1_limit_and_its_unlimited_marker(tmp_path: Path) -> None:
    proc = "4:memory:/docker/abc123\n3:cpu,cpuacct:/docker/abc123\n0::/\n"
    paths = fake_system(tmp_path, proc, {
        "memory/memory.limit_in_bytes": V1_UNLIMITED,
        "memory/docker/abc123/memory.limit_in_bytes": str(GIB),
    })
    limit = detect_memory_limit(**paths)
    assert limit.bytes == GIB and limit.source.endswith("abc123/memory.limit_in_bytes")


def test_cgroup_v1_namespaced_path_uses_the_mount_root(tmp_path: Path) -> None:
    # Without a cgroup namespace, /proc shows the host's path, which the container's mount lacks.
    paths = fake_system(tmp_path, "4:memory:/process_api/a9e1\n", {
        "memory/memory.limit_in_bytes": str(3 * GIB),
    })
    assert detect_memory_limit(**paths).bytes == 3 * GIB


def test_v1_everything_unlimited_is_total_ram(tmp_path: Path) -> None:
    paths = fake_system(tmp_path, "4:memory:/\n", {"memory/memory.limit_in_bytes": V1_UNLIMITED},
                        ram_kib=2 * 1024 * 1024)
    assert detect_memory_limit(**paths).bytes == 2 * GIB


def test_a_cgroup_limit_above_physical_memory_is_capped_to_it(tmp_path: Path) -> None:
    paths = fake_system(tmp_path, "0::/\n", {"memory.max": str(64 * GIB)},
                        ram_kib=16 * 1024 * 1024)
    limit = detect_memory_limit(**paths)
    assert limit.bytes == 16 * GIB and "below the cgroup limit" in limit.source


def test_this_machine_has_a_sane_limit() -> None:
    limit = detect_memory_limit()
    assert 64 * MIB < limit.bytes <= total_ram()


def test_proc_readings_from_fixture_files(tmp_path: Path) -> None:
    (tmp_path / "statm").write_text("765 411 382 5 0 123 0\n")
    (tmp_path / "status").write_text("Name:\tpython\nVmHWM:\t  123456 kB\nVmRSS:\t 1 kB\n")
    assert resident_bytes(tmp_path / "statm") == 411 * os.sysconf("SC_PAGE_SIZE")
    assert peak_resident_bytes(tmp_path / "status") == 123456 * 1024


def test_resident_bytes_follows_real_allocations() -> None:
    before = resident_bytes()
    blob = bytearray(b"x") * (96 * MIB)  # written, so its pages are resident
    after = resident_bytes()
    assert after - before >= 80 * MIB
    assert peak_resident_bytes() >= after
    del blob
