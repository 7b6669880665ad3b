"""One command's turn on the model service, in a process of its own (for the service tests).

`python service_client.py FOLDER MODEL N_CTX`: takes a turn (starting the service if none
runs), prints `{"service_pid": ..., "private": ...}` and ends the turn. It never generates, so
the model file is never loaded.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from pilothouse.models.local_service_client import ServiceEngine, ServiceOptions


def main() -> None:
    folder, model, n_ctx = sys.argv[1:4]
    engine = ServiceEngine(Path(model), int(n_ctx), 1, None, ServiceOptions(Path(folder), 60))
    with engine.lock:
        engine.begin()
        print(json.dumps({"service_pid": engine.service_pid, "private": engine.private}),
              flush=True)


if __name__ == "__main__":
    main()
