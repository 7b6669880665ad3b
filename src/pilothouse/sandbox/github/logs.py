"""Workflow run log archives, laid out like GitHub's: a zip of one file per job and per step.

`{n}_{job}.txt` holds a whole job, `{job}/{n}_{step}.txt` one step; every line starts with a
timestamp, groups are wrapped in `##[group]`/`##[endgroup]`, and a failing step ends with what
the tool printed and GitHub's `##[error]Process completed with exit code 1.` The archive is
built on request and served from a signed URL, as GitHub's storage host serves it; deflated, the
~5 MB oversized log is ~1 MB on the wire, which is what a client's decompression cap is for.
"""

from __future__ import annotations

import hashlib
import hmac
import io
import time
import zipfile
from collections.abc import Iterator
from datetime import UTC, datetime

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response

from pilothouse.sandbox.github.protocol import as_int
from pilothouse.sandbox.github.records import Job, Run, Step
from pilothouse.sandbox.github.world import World

_SETUP = ("Current runner version: '2.319.1'", "Operating System", "  Ubuntu", "  22.04.5",
          "  LTS", "Runner Image", "  Image: ubuntu-22.04", "  Version: 20260817.1.0",
          "GITHUB_TOKEN Permissions", "  Contents: read", "  Metadata: read",
          "Secret source: Actions", "Prepare workflow directory",
          "Prepare all required actions", "Complete job name: {job}")


def _stamp(moment: float) -> str:
    return datetime.fromtimestamp(moment, UTC).strftime("%Y-%m-%dT%H:%M:%S.%f") + "0Z"


def _body(run: Run, job: Job, step: Step) -> Iterator[str]:
    """The text lines of one step, without timestamps."""
    if step.name == "Set up job":
        for k in range(step.lines):
            yield _SETUP[k % len(_SETUP)].format(job=job.name)
        return
    if step.name == "Complete job":
        yield "Post job cleanup."
        for k in range(max(0, step.lines - 2)):
            yield f"[command]/usr/bin/git config --local --unset-all http.extraheader ({k})"
        yield "Cleaning up orphan processes"
        return
    command = step.name.removeprefix("Run ")
    yield f"##[group]Run {command}"
    yield command
    yield "shell: /usr/bin/bash -e {0}"
    yield "##[endgroup]"
    failing = step.conclusion == "failure"
    filler = max(0, step.lines - 4 - (len(run.failure) + 1 if failing else 0))
    for k in range(filler):
        yield f"=== RUN   Test{run.app.title().replace('-', '')}/case_{k:05d}"
        if k % 3 == 2:
            yield f"--- PASS: Test{run.app.title().replace('-', '')}/case_{k:05d} (0.0{k % 10}s)"
    if failing:
        yield from run.failure
        yield "##[error]Process completed with exit code 1."


def _lines(run: Run, job: Job, step: Step, start: float) -> Iterator[str]:
    moment = start
    for text in _body(run, job, step):
        moment += 0.0137
        yield f"{_stamp(moment)} {text}\n"


def log_archive(run: Run) -> bytes:
    """The zip GitHub would serve for `run`'s logs."""
    buffer = io.BytesIO()
    # Level 1: the archive is rebuilt per request, and speed matters more than size here.
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as archive:
        for j, job in enumerate(run.jobs):
            whole: list[str] = []
            start = float(run.created_at)
            for step in job.steps:
                if step.conclusion == "skipped":
                    continue
                text = "".join(_lines(run, job, step, start))
                start += step.lines * 0.0137
                # GitHub drops '/' from step names ("Run actionscheckout@v4") so that a step
                # never becomes a directory in the archive.
                name = step.name.replace("/", "")
                archive.writestr(f"{job.name}/{step.number}_{name}.txt", text)
                whole.append(text)
            archive.writestr(f"{j}_{job.name}.txt", "".join(whole))
    return buffer.getvalue()


def _signature(secret: str, repo_id: int, run_id: int, expires: int) -> str:
    message = f"{repo_id}/{run_id}/{expires}".encode()
    return hmac.new(secret.encode(), message, hashlib.sha256).hexdigest()[:40]


def signed_location(root: str, secret: str, repo_id: int, run_id: int, seconds: float) -> str:
    """The short-lived URL `GET .../runs/{id}/logs` redirects to."""
    expires = int(time.time() + seconds)
    return (f"{root}/_sandbox/run-logs/{repo_id}/{run_id}.zip?expires={expires}"
            f"&sig={_signature(secret, repo_id, run_id, expires)}")


async def serve_archive(request: Request, world: World, secret: str) -> Response:
    """Answer a signed archive URL like a storage host: the signature is the credential, and
    a bearer token is refused (so a client that forwards its GitHub token finds out)."""
    if "authorization" in request.headers:
        return PlainTextResponse("InvalidAuthenticationInfo: a signed URL takes no "
                                 "Authorization header", 400)
    repo_id, run_id = int(request.path_params["repo_id"]), int(request.path_params["run_id"])
    expires = as_int(request.query_params.get("expires"), 0)
    signature = request.query_params.get("sig", "")
    if not hmac.compare_digest(signature, _signature(secret, repo_id, run_id, expires)):
        return PlainTextResponse("AuthenticationFailed: signature mismatch", 403)
    if time.time() > expires:
        return PlainTextResponse("AuthenticationFailed: signed expiry time has passed", 403)
    repo = world.repo_by_id(repo_id)
    run = repo.run(run_id) if repo is not None else None
    if run is None:
        return PlainTextResponse("BlobNotFound", 404)
    return Response(await run_in_threadpool(log_archive, run), media_type="application/zip")
