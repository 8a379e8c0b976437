"""Serve the stand-in by hand: python -m hubfake --root DIR [--port N] [--lfs].

Tokens: `hf_fake_write` (user `alice`, write, org `team`), `hf_fake_read` (alice, read-only).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from hubfake.server import HubFake, Token


def main() -> None:
    parser = argparse.ArgumentParser(prog="hubfake")
    parser.add_argument("--root", type=Path, required=True)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--lfs", action="store_true")
    args = parser.parse_args()
    tokens = {
        "hf_fake_write": Token("alice", "write", ("team",)),
        "hf_fake_read": Token("alice", "read", ("team",)),
    }
    fake = HubFake(args.root, tokens, lfs=args.lfs, port=args.port).start()
    print(f"HF_ENDPOINT={fake.url}", flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        fake.stop()


if __name__ == "__main__":
    main()
