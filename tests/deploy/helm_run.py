"""Run the real Helm engine (helm-sdkpy's Helm v4 library) in its own process.

`python helm_run.py lint CHART` or `python helm_run.py install CHART KUBECONFIG VALUES_JSON`;
prints the result as JSON. A process of its own because the Go runtime reads HELM_DRIVER when
it loads and can never be unloaded again.
"""

from __future__ import annotations

import asyncio
import json
import sys

import helm_sdkpy


async def main(action: str, chart: str, *rest: str) -> object:
    if action == "lint":
        return await helm_sdkpy.Lint(helm_sdkpy.Configuration()).run(chart)
    kubeconfig, values = rest
    config = helm_sdkpy.Configuration(namespace="pilothouse", kubeconfig=kubeconfig)
    return await helm_sdkpy.Install(config).run("demo", chart, values=json.loads(values),
                                                wait=False, timeout=60)


if __name__ == "__main__":
    print(json.dumps(asyncio.run(main(*sys.argv[1:])), default=str))
