"""A small, honest stand-in for the Hugging Face Hub (HTTP on 127.0.0.1, state on disk).

Point the real huggingface_hub client at it with HF_ENDPOINT=<HubFake.url>. See server.py for
the endpoint list and state.py for the on-disk layout.
"""

from hubfake.server import HubFake, Token
from hubfake.state import HubState

__all__ = ["HubFake", "HubState", "Token"]
