"""Worker processes for the cluster tests and benches: ``persona-memory serve --worker`` on one
PostgreSQL, each on a loopback port, with the runtime token set.

``start_worker(url, worker_id, tmp, extra)`` writes a config file, starts the process, waits for
its "serving http://…" line and returns a ``WorkerProcess`` (its URL, its pid, its log file).
``stop_all`` kills whatever is still running.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import attrs

TOKEN = "t" * 40
ENV = {
    "PERSONA_MEMORY_WEB_SECRET": "s" * 40,
    "PERSONA_MEMORY_API_TOKEN": "a" * 40,
    "PERSONA_MEMORY_RUNTIME_TOKEN": TOKEN,
}
SERVING = re.compile(r"serving (http://127\.0\.0\.1:\d+)")
START_TIMEOUT = 60.0


@attrs.define
class WorkerProcess:
    worker_id: str
    process: subprocess.Popen
    url: str
    log: Path

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait()

    def pause(self) -> None:
        self.process.send_signal(signal.SIGSTOP)

    def resume(self) -> None:
        self.process.send_signal(signal.SIGCONT)

    def output(self) -> str:
        return self.log.read_text(errors="replace")


def _toml(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    return '"' + str(value).replace("\\", "\\\\").replace('"', '\\"') + '"'


def write_config(path: Path, settings: dict[str, Any]) -> Path:
    tables: dict[str, dict[str, Any]] = {}
    for key, value in settings.items():
        table, name = key.rsplit(".", 1)
        tables.setdefault(table, {})[name] = value
    path.write_text("".join(
        f"[{table}]\n" + "".join(f"{name} = {_toml(v)}\n" for name, v in items.items()) + "\n"
        for table, items in tables.items()
    ))
    return path


def start_worker(url: str, worker_id: str, tmp: Path, extra: dict[str, Any] | None = None) -> WorkerProcess:
    """Start ``persona-memory serve --worker worker_id`` on the database at ``url``."""
    config = write_config(tmp / f"{worker_id}.toml", {
        "storage.url": url,
        "embedder.kind": "hashing",
        "embedder.dim": 64,
        "web.host": "127.0.0.1",
        "web.port": 0,
        "cluster.lease_seconds": 2.0,
        "cluster.renew_seconds": 0.5,
        **(extra or {}),
    })
    log = tmp / f"{worker_id}.log"
    out = log.open("w")
    process = subprocess.Popen(
        [sys.executable, "-m", "persona_memory.cli", "serve", "--config", str(config), "--worker", worker_id, "-v"],
        stdout=out, stderr=subprocess.STDOUT, env={**os.environ, **ENV},
        cwd=Path(__file__).resolve().parent.parent,
    )
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        found = SERVING.search(log.read_text(errors="replace"))
        if found:
            return WorkerProcess(worker_id, process, found.group(1), log)
        if process.poll() is not None:
            break
        time.sleep(0.05)
    process.kill()
    raise RuntimeError(f"worker {worker_id} did not start:\n{log.read_text(errors='replace')[-3000:]}")


def stop_all(workers: list[WorkerProcess]) -> None:
    for worker in workers:
        if worker.process.poll() is None:
            worker.resume()
            worker.process.send_signal(signal.SIGTERM)
    for worker in workers:
        try:
            worker.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            worker.kill()
