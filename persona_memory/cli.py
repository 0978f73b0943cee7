"""``persona-memory``: the command line. ``persona-memory demo`` runs the main job offline."""

from __future__ import annotations

import argparse
import logging
import sys

import trio

from .errors import PersonaMemoryError
from .settings import load_settings


def main(argv: list[str] | None = None) -> int:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--config", help="a TOML file over the embedded defaults (config.toml)")
    common.add_argument("--db", help="the SQLite file (overrides storage.path)")
    common.add_argument("-v", "--verbose", action="store_true", help="log what the actors do")
    parser = argparse.ArgumentParser(prog="persona-memory", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser(
        "demo", parents=[common], help="play the design's story offline and print each block"
    )
    args = parser.parse_args(argv)

    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.WARNING,
        format="%(levelname)s %(name)s: %(message)s",
    )
    overrides = {"storage.path": args.db} if args.db else {}
    try:
        settings = load_settings(args.config, overrides)
        if args.command == "demo":
            from .demo import run_demo

            trio.run(run_demo, settings)
    except PersonaMemoryError as exc:
        print(f"persona-memory: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
