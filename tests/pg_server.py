"""A throw-away PostgreSQL server for the test suite, kept by a guard process.

The suite's PostgreSQL leg needs a server. When the user names one in
``PERSONA_MEMORY_TEST_POSTGRES_URL`` the suite uses it and starts nothing; otherwise
``conftest.py`` starts one through this module and stops it at the end of the session.

Rules:
- The server lives in a fresh temporary directory: its data directory (``initdb``, trust
  authentication, the C locale) and its Unix socket beside it. It listens on no TCP port, so
  it never collides with another server on the machine. Durability is off (``fsync``,
  ``synchronous_commit``, ``full_page_writes``): a crash loses a server nobody keeps.
- The server is owned by a guard process — this file run as a script — not by pytest. The
  guard starts it, prints one JSON line (``{"url": …}`` or ``{"error": …}``), then waits for
  its standard input to close, and then stops the server and deletes the directory. pytest
  holds the other end of that pipe, so the server goes away however pytest ends: teardown,
  a failure, Ctrl-C, SIGTERM or SIGKILL (the kernel closes the pipe of a dead process).
- Ctrl-C in a terminal reaches the whole foreground process group: the guard ignores SIGINT
  and the server runs in a session of its own, so neither dies under pytest's teardown; the
  guard cleans up once pytest has let go of the pipe.
- ``initdb`` and ``postgres`` refuse to run as root. As root, both run as the ``postgres``
  user (Debian's package creates it) or, failing that, ``nobody``; the directory is handed to
  that user and the socket is open to every local user (the server is reachable only from
  this machine, through a file in a private directory).
- The binaries are the ones on ``PATH``, else the newest ``/usr/lib/postgresql/<n>/bin``
  (Debian's layout, where ``pg_ctl`` is not on ``PATH``). None found: ``Unavailable``, whose
  message the suite shows as the reason its PostgreSQL tests were skipped.
"""

from __future__ import annotations

import contextlib
import json
import os
import pwd
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import IO, Iterator
from urllib.parse import quote, urlsplit, urlunsplit

URL_ENV = "PERSONA_MEMORY_TEST_POSTGRES_URL"
DATABASE = "persona_memory_test"
SUPERUSER = "postgres"
PORT = 5432  # named in the socket's file name only; said explicitly, so PGPORT cannot move it
START_TIMEOUT = 60.0  # seconds for initdb plus the first accepted connection, on a busy VM
STOP_TIMEOUT = 20.0

SERVER_SETTINGS = {
    "listen_addresses": "",
    "port": str(PORT),
    "fsync": "off",
    "synchronous_commit": "off",
    "full_page_writes": "off",
    "max_connections": "200",
    "shared_buffers": "64MB",
    "unix_socket_permissions": "0777",
}


class Unavailable(Exception):
    """No throw-away server could be started here; the message says why and what to do."""


def find_binaries(debian_root: Path = Path("/usr/lib/postgresql")) -> Path:
    """The directory holding ``initdb`` and ``postgres``: on ``PATH``, else the newest
    version under ``debian_root``.

    Raises:
        Unavailable: neither ``PATH`` nor ``/usr/lib/postgresql/*/bin`` has them.
    """
    initdb = shutil.which("initdb")
    if initdb and shutil.which("postgres"):
        return Path(os.path.realpath(initdb)).parent
    versions = sorted(
        (p for p in debian_root.glob("*/bin") if (p / "initdb").exists() and (p / "postgres").exists()),
        key=lambda p: _version_key(p.parent.name),
    )
    if versions:
        return versions[-1]
    raise Unavailable(
        f"no PostgreSQL server binaries (initdb, postgres) on PATH or in {debian_root}/*/bin: "
        "install Debian's postgresql package (make test does), or set "
        f"{URL_ENV}=postgresql://… to use a running server"
    )


def _version_key(name: str) -> tuple[int, ...]:
    return tuple(int(part) for part in name.split(".") if part.isdigit())


def socket_url(socket_dir: Path, database: str, user: str = SUPERUSER) -> str:
    """A ``postgresql://`` URL that reaches a server through its socket in ``socket_dir``."""
    return f"postgresql://{quote(user)}@{quote(str(socket_dir), safe='')}:{PORT}/{quote(database)}"


def with_database(url: str, database: str) -> str:
    """``url`` with its database replaced by ``database`` (user, host and options kept)."""
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, "/" + quote(database), parts.query, parts.fragment))


def _short_temp_dir() -> str:
    """The temporary directory, unless its path is too long for a Unix socket beneath it
    (the kernel allows 107 bytes): then ``/tmp``."""
    folder = tempfile.gettempdir()
    return folder if len(folder) <= 60 else "/tmp"


def _server_user() -> pwd.struct_passwd | None:
    """The user to run the server as: ``None`` (ourselves) unless we are root."""
    if os.geteuid() != 0:
        return None
    for name in ("postgres", "nobody"):
        with contextlib.suppress(KeyError):
            return pwd.getpwnam(name)
    raise Unavailable("running as root and neither a 'postgres' nor a 'nobody' user exists to run PostgreSQL as")


def _as(user: pwd.struct_passwd | None) -> dict:
    """``subprocess`` arguments that run a child as ``user`` (nothing to add for ourselves)."""
    if user is None:
        return {}
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": "/", "LC_ALL": "C", "USER": user.pw_name}
    return {"user": user.pw_uid, "group": user.pw_gid, "extra_groups": [], "env": env}


class Server:
    """A PostgreSQL server started in ``base`` (see the module's rules). Stop it with ``stop``."""

    def __init__(self, base: Path, process: subprocess.Popen, url: str) -> None:
        self.base = base
        self.process = process
        self.url = url

    def stop(self) -> None:
        """Fast shutdown (SIGINT: end the sessions, checkpoint nothing worth keeping); kill it
        if it outlives ``STOP_TIMEOUT``. Then delete its directory. Safe to call twice."""
        if self.process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        shutil.rmtree(self.base, ignore_errors=True)


def start_server() -> Server:
    """``initdb`` a temporary directory, start ``postgres`` on a socket there, create the
    test database, and return the running server. The server writes its log to
    ``server.log`` in that directory (a file, never a pipe nobody drains).

    Raises:
        Unavailable: no binaries, or ``initdb``/the server failed (the message quotes it).
    """
    bin_dir = find_binaries()
    user = _server_user()
    base = Path(tempfile.mkdtemp(prefix="persona-memory-pg-", dir=_short_temp_dir()))
    data, sockets = base / "data", base / "socket"
    try:
        for folder in (data, sockets):
            folder.mkdir()
        if user is not None:
            os.chmod(base, 0o755)
            for folder in (data, sockets):
                os.chown(folder, user.pw_uid, user.pw_gid)
        os.chmod(data, 0o700)
        os.chmod(sockets, 0o755)
        initdb = subprocess.run(
            [str(bin_dir / "initdb"), "-D", str(data), "-U", SUPERUSER, "--auth=trust",
             "--encoding=UTF8", "--locale=C", "--no-sync"],
            cwd=base, capture_output=True, text=True, timeout=START_TIMEOUT, **_as(user),
        )
        if initdb.returncode != 0:
            raise Unavailable(f"initdb failed ({bin_dir}): {(initdb.stderr or initdb.stdout).strip()[-800:]}")
        options = [f"-c{key}={value}" for key, value in SERVER_SETTINGS.items()]
        with open(base / "server.log", "w") as log:
            process = subprocess.Popen(
                [str(bin_dir / "postgres"), "-D", str(data), "-k", str(sockets), *options],
                cwd=base, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                start_new_session=True, **_as(user),
            )
    except BaseException:
        shutil.rmtree(base, ignore_errors=True)
        raise
    server = Server(base, process, socket_url(sockets, DATABASE))
    try:
        _create_database(server, sockets)
    except BaseException:
        server.stop()
        raise
    return server


def _create_database(server: Server, sockets: Path) -> None:
    """Wait until the server accepts connections, then create the test database."""
    import psycopg

    deadline = time.monotonic() + START_TIMEOUT
    maintenance = socket_url(sockets, "postgres")
    while True:
        if server.process.poll() is not None:
            raise Unavailable(
                f"postgres exited with status {server.process.returncode} before accepting "
                f"connections: {_log_tail(server)}"
            )
        try:
            with psycopg.connect(maintenance, autocommit=True, connect_timeout=5) as conn:
                conn.execute(f'CREATE DATABASE "{DATABASE}"')
            return
        except psycopg.OperationalError as exc:
            if time.monotonic() > deadline:
                raise Unavailable(f"postgres did not accept connections within {START_TIMEOUT:.0f} s: {exc}") from exc
            time.sleep(0.05)


def _log_tail(server: Server) -> str:
    try:
        return (server.base / "server.log").read_text(errors="replace").strip()[-800:]
    except OSError:
        return "(no server log)"


def guard(stdin: IO[str], stdout: IO[str]) -> int:
    """The guard process's body: start, report, wait for ``stdin`` to close, stop."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        server = start_server()
    except Unavailable as exc:
        print(json.dumps({"error": str(exc)}), file=stdout, flush=True)
        return 0
    stopping = False

    def stop_now(signum: int, frame: object) -> None:
        nonlocal stopping
        if not stopping:
            stopping = True
            server.stop()
        sys.exit(0)

    signal.signal(signal.SIGTERM, stop_now)
    try:
        print(json.dumps({"url": server.url}), file=stdout, flush=True)
        stdin.read()  # returns at EOF: pytest closed the pipe, or died
    finally:
        if not stopping:
            stopping = True
            server.stop()
    return 0


@contextlib.contextmanager
def throwaway_server() -> Iterator[str]:
    """Start a throw-away server in a guard process; yield its test database's URL.

    The server is stopped and its directory deleted when the block ends — or, if this
    process dies first, when the guard sees its pipe close.

    Raises:
        Unavailable: the server could not be started (the message says why).
    """
    find_binaries()  # fail fast, in this process, with the message that says what to install
    errors = tempfile.TemporaryFile("w+")
    guard_process = subprocess.Popen(
        [sys.executable, os.path.abspath(__file__)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=errors, text=True,
    )
    try:
        line = guard_process.stdout.readline()
        if not line:
            guard_process.wait(STOP_TIMEOUT)
            errors.seek(0)
            raise Unavailable(f"the PostgreSQL guard process ended without a word: {errors.read().strip()[-800:]}")
        answer = json.loads(line)
        if "error" in answer:
            raise Unavailable(answer["error"])
        yield answer["url"]
    finally:
        with contextlib.suppress(BrokenPipeError):
            guard_process.stdin.close()
        try:
            guard_process.wait(STOP_TIMEOUT + 10)
        except subprocess.TimeoutExpired:
            guard_process.kill()
            guard_process.wait()
        errors.close()


if __name__ == "__main__":
    sys.exit(guard(sys.stdin, sys.stdout))
