"""``persona-memory``: the command line.

- ``persona-memory demo`` plays the design's story offline and prints each block.
- ``persona-memory serve`` runs the memory with the human's pages and the runtime's JSON API,
  in one process (Ctrl-C stops serving, then drains queued writes). ``serve --worker [ID]``
  runs it as one of several workers sharing the PostgreSQL at ``storage.url``
  (``cluster/node.py``); ``--advertise URL`` is where the other workers reach it.
- ``persona-memory login-link 42`` prints a signed, expiring login link for user 42, on
  ``--public-url`` if given, else ``web.public_url``, else ``http://web.host:web.port`` (give
  it the ``--host``/``--port`` that ``serve`` was given).
- ``persona-memory doctor`` checks an SQLite store file (read only): integrity, schema, rooms
  behind, parked slices, escalated personas; exit 1 when it needs attention. It does not read
  PostgreSQL: there a running ``serve`` answers ``/readyz`` and ``/metrics``.
- ``persona-memory backup PATH`` copies an SQLite store to a new file, consistently, while it
  runs (for PostgreSQL: ``pg_dump``).
- ``--db`` names the store: an SQLite file, or a ``postgresql://`` URL (as ``storage.url``).
- ``persona-memory exam`` runs the design's leak exam (§4) on a temporary memory with the group
  scope on, prints its table, writes a JSON report; exit 1 on a leak, 3 when inconclusive.
"""

from __future__ import annotations

import argparse
import errno
import logging
import signal
import os
import socket
import sys
from functools import partial
from urllib.parse import urlsplit

import trio

from .errors import PersonaMemoryError
from .settings import Settings, load_settings
from .storage.location import names_postgres, redacted
from .version import installed_version


def main(argv: list[str] | None = None) -> int:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--config", help="a TOML file over the embedded defaults (config.toml)")
    common.add_argument(
        "--db", help="the store: an SQLite file (overrides storage.path) or a postgresql:// URL (storage.url)"
    )
    common.add_argument("-v", "--verbose", action="store_true", help="log what the actors do")
    parser = argparse.ArgumentParser(
        prog="persona-memory", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--version", action="version", version=f"persona-memory {installed_version()}")
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser(
        "demo", parents=[common], help="play the design's story offline and print each block"
    )
    serve = commands.add_parser(
        "serve", parents=[common], help="run the memory with the human's pages and the JSON API"
    )
    serve.add_argument("--host", help="the address to bind (overrides web.host)")
    serve.add_argument("--port", type=int, help="the port to bind (overrides web.port; 0 = any)")
    serve.add_argument(
        "--worker", nargs="?", const="", metavar="ID",
        help="run as one of several workers sharing the PostgreSQL at storage.url (default id: host-pid)",
    )
    serve.add_argument(
        "--advertise", metavar="URL",
        help="with --worker: where the other workers reach this one (default http://<host>:<port>)",
    )
    link = commands.add_parser(
        "login-link", parents=[common], help="print a signed, expiring login link for a user"
    )
    link.add_argument("user_id", type=int, help="the user's id, e.g. 42")
    link.add_argument(
        "--public-url", metavar="URL",
        help="where people open the pages, e.g. https://memory.example.com (overrides web.public_url)",
    )
    link.add_argument("--host", help="with no public URL: the host serve listens on (overrides web.host)")
    link.add_argument("--port", type=int, help="with no public URL: the port serve listens on (overrides web.port)")
    exam = commands.add_parser(
        "exam", parents=[common], help="run the leak exam (design §4) and write its JSON report"
    )
    exam.add_argument(
        "--report", default="persona-memory-exam.json", help="where to write the JSON report"
    )
    commands.add_parser(
        "doctor", parents=[common],
        help="check an SQLite store file: integrity, schema, rooms behind, parked slices",
    )
    backup = commands.add_parser(
        "backup", parents=[common], help="copy an SQLite store to a new file, consistently, even while it runs"
    )
    backup.add_argument("path", help="where to write the copy (must not exist yet)")
    args = parser.parse_args(argv)
    if args.command == "exam" and args.db:
        parser.error("exam runs its own memory on a temporary file; --db does not apply")

    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.WARNING,
        format="%(levelname)s %(name)s: %(message)s",
    )
    if args.command in ("doctor", "backup") and args.db and names_postgres(args.db):
        print(f"persona-memory: {_sqlite_only(args.command, '--db', redacted(args.db.strip()))}", file=sys.stderr)
        return 2
    overrides: dict[str, object] = {}
    if args.db:
        overrides["storage.url" if names_postgres(args.db) else "storage.path"] = args.db
    if args.command in ("serve", "login-link"):
        if args.host is not None:
            overrides["web.host"] = args.host
        if args.port is not None:
            overrides["web.port"] = args.port
    if args.command == "login-link" and args.public_url is not None:
        overrides["web.public_url"] = args.public_url
    try:
        settings = load_settings(args.config, overrides)
        if args.command in ("doctor", "backup") and settings.storage.backend == "postgresql":
            print(f"persona-memory: {_sqlite_only(args.command, 'storage.url', settings.storage.place)}", file=sys.stderr)
            return 2
        if args.command == "demo":
            from .demo import run_demo

            trio.run(run_demo, settings)
        elif args.command == "serve":
            if args.advertise is not None and args.worker is None:
                parser.error("--advertise needs --worker")
            worker = None if args.worker is None else (args.worker or f"{socket.gethostname()}-{os.getpid()}")
            try:
                trio.run(partial(run_serve, settings, worker=worker, advertise=args.advertise))
            except (OSError, BaseExceptionGroup) as exc:
                bind_error = _bind_error(exc)
                if bind_error is None:
                    raise
                print(f"persona-memory: {_explain_bind(settings, bind_error)}", file=sys.stderr)
                return 2
        elif args.command == "login-link":
            print(login_link(settings, args.user_id))
        elif args.command == "doctor":
            from .storage.maintenance import doctor

            checkup = doctor(settings.storage.path)
            print(checkup.report())
            return 0 if checkup.healthy else 1
        elif args.command == "backup":
            from .storage.maintenance import backup

            size = backup(settings.storage.path, args.path)
            print(f"persona-memory: backed up {settings.storage.path} to {args.path} ({size:,} bytes)")
        elif args.command == "exam":
            from .exam import Verdict, run_exam

            job = partial(run_exam, settings, report_path=args.report, config_path=args.config)
            result = trio.run(job)
            return {Verdict.PASS: 0, Verdict.LEAK: 1, Verdict.INCONCLUSIVE: 3}[result.verdict]
    except PersonaMemoryError as exc:
        print(f"persona-memory: {exc}", file=sys.stderr)
        return 2
    return 0


def _sqlite_only(command: str, named_by: str, place: str) -> str:
    """Why ``doctor`` or ``backup`` stops when ``named_by`` names the PostgreSQL database at
    ``place``, and what to use there instead."""
    if command == "doctor":
        instead = (
            "a running `persona-memory serve` reports escalated personas at /readyz and its counts "
            "at /metrics, and the server's own tools do the rest (pg_dump for a backup); to check "
            "an SQLite file, pass --db FILE"
        )
    else:
        instead = "use the server's own tools (pg_dump); to copy an SQLite file, pass --db FILE"
    return (
        f"{command} reads an SQLite store file, and {named_by} names a PostgreSQL database "
        f"({place}), which it does not read. For PostgreSQL, {instead}"
    )


def _bind_error(exc: BaseException) -> OSError | None:
    """The one ``OSError`` (a busy port, an unknown host) a failed ``serve`` ended with, if any."""
    while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]
    return exc if isinstance(exc, OSError) else None


def _explain_bind(settings: Settings, error: OSError) -> str:
    where = f"{settings.web.host}:{settings.web.port}"
    if isinstance(error, socket.gaierror):
        return (f"cannot listen on {where}: the host {settings.web.host!r} is not an address here "
                f"({error.strerror}); set web.host (or --host) to 127.0.0.1, 0.0.0.0 or this machine's address")
    if error.errno == errno.EADDRINUSE:
        return (f"cannot listen on {where}: the port is taken by another program; set web.port "
                "(or --port) to a free port, or --port 0 for any free one")
    if error.errno in (errno.EACCES, errno.EPERM):
        return (f"cannot listen on {where}: not allowed ({error.strerror}); ports below 1024 need "
                "privileges, so set web.port (or --port) to 1024 or above")
    if error.errno == errno.EADDRNOTAVAIL:
        return (f"cannot listen on {where}: {settings.web.host!r} is not an address of this machine; "
                "set web.host (or --host) to one of its addresses, or 127.0.0.1")
    return f"cannot listen on {where}: {error.strerror or error}; check web.host and web.port"


def login_link(settings: Settings, user_id: int) -> str:
    """A login link for ``user_id`` on ``web.public_url`` (the secret comes from the env)."""
    from .web import Auth, WebSecrets

    return Auth(WebSecrets.from_env(settings.web, api=False), settings.web).login_url(user_id)


async def run_serve(settings: Settings, *, worker: str | None = None, advertise: str | None = None) -> None:
    """Open the memory, serve the web app beside the supervisor, stop on SIGINT or SIGTERM.

    The secrets are read before the store opens, so a missing one fails fast. On a signal the
    server stops (requests in flight get a few seconds), then leaving ``open_memory`` lets
    queued writes land. With ``worker``, the memory is that cluster worker's
    (``cluster/node.py``), reachable by the others at ``advertise`` (default: the bound
    address, whose host the web app then answers to besides ``web.allowed_hosts``); on a
    signal it leaves the cluster, releasing its personas at once.
    """
    from .memory import open_memory
    from .web import WebSecrets, serve_web

    secrets = WebSecrets.from_env(settings.web)
    logging.getLogger("persona_memory.access").setLevel(logging.INFO)  # one line per request
    if worker is None:
        opened = open_memory(settings)
    else:
        from .cluster.node import open_cluster_memory

        opened = open_cluster_memory(settings, worker, runtime_token=secrets.runtime_token)
    with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
        async with opened as memory:
            async with trio.open_nursery() as nursery:
                advertised = urlsplit(advertise).hostname if advertise else None
                port = await nursery.start(partial(serve_web, memory, settings, secrets=secrets,
                                                   also_hosts=[advertised] if advertised else []))
                as_worker = ""
                if worker is not None:
                    address = advertise or f"http://{settings.web.host}:{port}"
                    memory.worker.advertise(address)  # type: ignore[attr-defined]
                    as_worker = f" as worker {worker!r}, reached at {address}"
                print(
                    f"persona-memory: serving http://{settings.web.host}:{port}{as_worker} "
                    f"(store {settings.storage.place}); Ctrl-C to stop",
                    flush=True,
                )
                async for signum in signals:
                    print(f"persona-memory: {signal.Signals(signum).name}: stopping the web app, "
                          "then draining writes", flush=True)
                    break
                nursery.cancel_scope.cancel()
        print("persona-memory: stopped", flush=True)


if __name__ == "__main__":
    raise SystemExit(main())
