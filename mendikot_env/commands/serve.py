"""``mendikot serve``: the web table on a local server (needs the ``web`` extra).

It binds 127.0.0.1 unless ``--host`` says otherwise, prints the page's URL and runs until
Ctrl-C. The page opens on a hand against ``hard`` on the standard rules; its settings start
any other game, and ``--replay`` opens records (files or run folders) for the replay view.
"""

from __future__ import annotations

import argparse
import socket
from pathlib import Path

import uvicorn

from ..web.app import create_app
from .common import check_output_paths

LOOPBACK = ("127.0.0.1", "::1", "[::1]")


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("serve", help="play and replay in the browser: a local web table")
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (127.0.0.1: this machine only)")
    parser.add_argument("--port", type=int, default=8765, help="port to listen on (0: any free port)")
    parser.add_argument("--save", metavar="DIR", help="save every finished hand as a game record in DIR")
    parser.add_argument("--replay", nargs="+", metavar="PATH", help="records or run folders to open for replay")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    check_output_paths(save_dir=args.save)
    if args.port not in range(0, 65536):
        raise ValueError(f"--port {args.port} is not a port (0 to 65535)")
    save = None if args.save is None else Path(args.save)
    # Bound to this machine only, it answers only to this machine's names (no DNS rebinding).
    loopback = args.host in LOOPBACK
    app = create_app(save, args.replay, allowed_hosts=[*LOOPBACK, "localhost"] if loopback else None)
    # The socket is bound here, so the URL printed names the port really listened on (--port 0).
    sock = socket.socket(socket.AF_INET6 if ":" in args.host else socket.AF_INET)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((args.host, args.port))
    port = sock.getsockname()[1]
    host = f"[{args.host}]" if ":" in args.host else args.host
    query = f"?replay={app.state.first_replay}" if app.state.first_replay else ""
    print(f"Mendikot web table: http://{host}:{port}/{query}  (Ctrl-C stops it)", flush=True)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning"))
    try:
        server.run(sockets=[sock])
    except KeyboardInterrupt:  # a second Ctrl-C while shutting down
        pass
    print("Stopped.", flush=True)
    return 0
