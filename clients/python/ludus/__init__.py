"""Ludus's Python client: the bot protocol (``ludus.client``, its frames typed in ``ludus.frames``), and environments
over it for RL and LLM trainers (``ludus.envs``, ``ludus.trainers``), each imported only when used so that the client
needs nothing but ``websockets``."""

from .client import (
    MSGPACK_AVAILABLE,
    RESTART_CLOSE_CODE,
    ActionId,
    Answer,
    LudusAuthError,
    LudusClient,
    LudusConnectionError,
    LudusError,
    MatchResult,
    Policy,
    PrivateMatch,
    Withdraw,
    random_action,
)

__all__ = [
    "ActionId",
    "Answer",
    "LudusAuthError",
    "LudusClient",
    "LudusConnectionError",
    "LudusError",
    "MatchResult",
    "MSGPACK_AVAILABLE",
    "Policy",
    "PrivateMatch",
    "RESTART_CLOSE_CODE",
    "Withdraw",
    "random_action",
]
