"""Benchmark the Argo CD tools' memory: peak RSS growth and latency per call, by fleet size.

Run: .venv/bin/python bench/argocd_memory.py [--sizes 819,10000,100000]
Prints a table and writes bench/results/argocd_memory.json.

For each fleet size a sandbox runs in its own process. Each call is measured in a fresh child
process, so its peak is its own: the child resets the kernel's peak-RSS mark
(/proc/self/clear_refs), makes one call, and reports VmHWM minus the RSS it started from.

- pilothouse: `list_applications` page 1 and `search_argocd_resources` as the MCP tools run
  them (fields= projection, ijson over the byte stream, only the page kept).
- baseline: what the seed's anchor did: fetch everything (no fields=), json.loads, then slice
  (and, for search, filter the parsed lists). It runs under a 4 GiB address-space limit, the
  seed's container budget; past it, the call fails with MemoryError, and the table says so.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import platform
import resource
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results" / "argocd_memory.json"
SEARCH_QUERY = "checkout-web-production"
BUDGET_BYTES = 4 * 1024**3
MiB = 1024 * 1024


# -- child: one call, measured ------------------------------------------------------------------
def _status_kib(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise KeyError(field)


class Meter:
    """Peak RSS growth from `start()` to `stop()`: VmHWM reset, or ru_maxrss if it cannot be."""

    def __init__(self) -> None:
        self.before = 0
        self.precise = False

    def start(self) -> None:
        try:
            Path("/proc/self/clear_refs").write_text("5")  # resets the kernel's VmHWM mark
            self.precise = True
            self.before = _status_kib("VmRSS")
        except OSError:
            self.before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss

    def growth_mib(self) -> float:
        peak = _status_kib("VmHWM") if self.precise else resource.getrusage(
            resource.RUSAGE_SELF).ru_maxrss
        return max(0, peak - self.before) / 1024


async def _pilothouse(url: str, token: str, call: str, meter: Meter) -> dict[str, Any]:
    from pilothouse.tools.argocd import listing, search
    from pilothouse.tools.argocd.client import ArgoCDClient

    async with ArgoCDClient(url, token=token, timeout=600) as client:
        await client.get("/api/version")  # imports, connection set up before measuring
        meter.start()
        started = time.perf_counter()
        if call == "list":
            answer = await listing.list_applications(client, page=1, page_size=20)
        else:
            answer = await search.search_resources(client, SEARCH_QUERY)
        elapsed = time.perf_counter() - started
    return {"latency_s": elapsed, "answer": _answer_digest(answer)}


async def _baseline(url: str, token: str, call: str, meter: Meter) -> dict[str, Any]:
    import httpx

    from pilothouse.tools.argocd import rows
    from pilothouse.tools.argocd.search import Matcher

    headers = {"Authorization": f"Bearer {token}"}
    async with httpx.AsyncClient(base_url=url, headers=headers, timeout=600) as client:
        await client.get("/api/version")
        meter.start()
        started = time.perf_counter()
        if call == "list":
            items = (await client.get(rows.ENDPOINTS["applications"])).json()["items"]
            page = [rows.app_row(item) for item in items[:20]]
            answer: dict[str, Any] = {"pagination": {"total_items": len(items),
                                                     "total_pages": -(-len(items) // 20)},
                                      "items": page}
        else:
            matcher, matches = Matcher(SEARCH_QUERY), []
            for kind in rows.RESOURCE_TYPES:
                items = (await client.get(rows.ENDPOINTS[kind])).json()["items"]
                matches += [rows.ROW_BUILDERS[kind](item) for item in items
                            if matcher.first_match(rows.SEARCH_FIELDS[kind](item))]
                del items
            answer = {"pagination": {"total_items": len(matches),
                                     "total_pages": -(-len(matches) // 20)},
                      "items": matches[:20]}
        elapsed = time.perf_counter() - started
    return {"latency_s": elapsed, "answer": _answer_digest(answer)}


def _answer_digest(answer: dict[str, Any]) -> str:
    if "error" in answer:
        return f"rejected: {answer['total_matches']:,} matches"
    block = answer["pagination"]
    return f"{block['total_items']:,} items, {block['total_pages']:,} pages"


def child(url: str, token: str, approach: str, call: str) -> None:
    """Run one call and print one JSON line with its cost."""
    if approach == "baseline":
        resource.setrlimit(resource.RLIMIT_AS, (BUDGET_BYTES, BUDGET_BYTES))
    runner = _pilothouse if approach == "pilothouse" else _baseline
    meter, result = Meter(), {"ok": True}
    started = time.perf_counter()
    try:
        result.update(asyncio.run(runner(url, token, call, meter)))
    except MemoryError:
        result.update(ok=False, error=f"MemoryError at the {BUDGET_BYTES // 1024**3} GiB limit",
                      latency_s=time.perf_counter() - started)
    result.update(peak_growth_mib=meter.growth_mib(), precise_peak=meter.precise)
    print(json.dumps(result), flush=True)


# -- parent: sandboxes and children -------------------------------------------------------------
def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _start_sandbox(apps: int) -> tuple[subprocess.Popen[bytes], str]:
    import httpx

    port = _free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "pilothouse.sandbox.argocd", "--apps", str(apps), "--port",
         str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url, deadline = f"http://127.0.0.1:{port}", time.monotonic() + 60
    while True:
        try:
            httpx.get(f"{url}/api/version", timeout=1)
            return process, url
        except httpx.TransportError:
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("the sandbox did not start") from None
            time.sleep(0.1)


def _measure(url: str, token: str, approach: str, call: str) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, __file__, "--child", "--url", url, "--token", token,
         "--approach", approach, "--call", call],
        capture_output=True, text=True, timeout=1800, check=False)
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if not lines:
        tail = done.stderr.strip().splitlines()[-1:] or [f"exit code {done.returncode}"]
        return {"ok": False, "error": f"child died: {tail[0]}", "peak_growth_mib": None,
                "latency_s": None}
    return dict(json.loads(lines[-1]))


def main(sizes: list[int]) -> None:
    from rich.console import Console
    from rich.table import Table

    from pilothouse.sandbox.argocd import DEFAULT_TOKEN

    console = Console(width=120)
    rows: list[dict[str, Any]] = []
    for apps in sizes:
        process, url = _start_sandbox(apps)
        try:
            for call in ("list", "search"):
                for approach in ("pilothouse", "baseline"):
                    console.print(f"[dim]{apps:>7,} apps  {call:<6} {approach} ...[/]")
                    measured = _measure(url, DEFAULT_TOKEN, approach, call)
                    rows.append({"apps": apps, "call": call, "approach": approach, **measured})
        finally:
            process.terminate()
            process.wait(timeout=30)

    table = Table(title="Argo CD tools: peak RSS growth and latency of one call")
    for column in ("Apps", "Call", "Approach", "Peak RSS growth", "Latency", "Answer"):
        table.add_column(column, justify="right" if column in ("Apps", "Peak RSS growth",
                                                               "Latency") else "left")
    for row in rows:
        growth = "-" if row["peak_growth_mib"] is None else f"{row['peak_growth_mib']:.1f} MiB"
        latency = "-" if row["latency_s"] is None else f"{row['latency_s']:.2f} s"
        label = "list_applications p1" if row["call"] == "list" else \
            f"search '{SEARCH_QUERY}'"
        answer = row.get("answer") if row["ok"] else f"[red]{row['error']}[/]"
        table.add_row(f"{row['apps']:,}", label, row["approach"], growth, latency, answer)
    console.print(table)
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps({
        "benchmark": "argocd_memory",
        "measured_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "python": platform.python_version(), "machine": platform.machine(),
        "search_query": SEARCH_QUERY, "baseline_address_space_limit_bytes": BUDGET_BYTES,
        "peak_measure": "VmHWM after /proc/self/clear_refs reset, minus VmRSS before the call",
        "results": rows,
    }, indent=2) + "\n")
    console.print(f"Wrote {RESULTS.relative_to(ROOT)}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="819,10000,100000")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--url", help=argparse.SUPPRESS)
    parser.add_argument("--token", help=argparse.SUPPRESS)
    parser.add_argument("--approach", choices=("pilothouse", "baseline"), help=argparse.SUPPRESS)
    parser.add_argument("--call", choices=("list", "search"), help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.child:
        child(options.url, options.token, options.approach, options.call)
    else:
        main([int(size) for size in options.sizes.split(",")])
