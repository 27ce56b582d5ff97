"""The bot protocol's frames as typed dicts, after protocol/frames.ts (docs/protocol.md is the prose).

The client hands frames on as plain ``dict``s; these types say what is in them, for type checkers and readers::

    def policy(observation: Any, legal: list[ActionForm], turn: TurnFrame) -> Any: ...

Fields that may be absent are ``NotRequired``. Every frame is one JSON object with a string ``type``.
"""

from __future__ import annotations

from typing import Any, Literal, TypedDict, Union

try:
    from typing import NotRequired
except ImportError:  # Python 3.10
    from typing_extensions import NotRequired

__all__ = [
    "AckFrame",
    "ActFrame",
    "ActionForm",
    "AgentInfo",
    "AuthFrame",
    "CancelFrame",
    "CancelledFrame",
    "ClientFrame",
    "ClockView",
    "ConductPolicy",
    "CreateFrame",
    "CreatedFrame",
    "ErrorCode",
    "ErrorFrame",
    "JoinFrame",
    "MatchEndFrame",
    "MatchStartFrame",
    "NumericInfo",
    "ParticipantView",
    "PingFrame",
    "PongFrame",
    "QueueFrame",
    "QueuedFrame",
    "ResumeFrame",
    "SeatKind",
    "SeatStatus",
    "ServerFrame",
    "TurnFrame",
    "WelcomeFrame",
    "WithdrawFrame",
]

SeatKind = Literal["human", "bot", "llm", "builtin", "policy"]
SeatStatus = Literal["ACTIVE", "DONE", "ERROR", "INVALID", "TIMEOUT", "DISCONNECTED"]
Outcome = Literal["default", "forfeit", "abort"]
EndReason = Literal["completed", "forfeit", "aborted", "error"]

ActionForm = dict[str, Any]
"""A legal action form: ``{"kind": "fixed" | "amount" | "text" | "split" | "exchange", ...}`` (docs/protocol.md,
"Legal forms")."""


class ClockView(TypedDict):
    mainMs: float
    overageMs: float
    incrementMs: float


class ParticipantView(TypedDict):
    seat: int
    kind: SeatKind
    name: str
    open: bool
    connected: bool
    status: SeatStatus


class ConductPolicy(TypedDict):
    retries: int
    onIllegal: Outcome
    onTimeout: Outcome
    holdMs: int


class AgentInfo(TypedDict, total=False):
    """Who plays a seat, for its record (``auth.agent``, ``create.agents``): the model, its endpoint (kept without
    credentials or query) and its sampling settings (at most 32, string, number, boolean or null)."""

    model: str
    endpoint: str
    sampling: dict[str, str | float | bool | None]


# ---- client -> server ----


class AuthFrame(TypedDict):
    type: Literal["auth"]
    token: str
    text: NotRequired[bool]
    numeric: NotRequired[bool]
    agent: NotRequired[AgentInfo]


class QueueFrame(TypedDict):
    type: Literal["queue"]
    game: str
    variant: NotRequired[str]
    selfPlay: NotRequired[bool]
    group: NotRequired[str]


class CancelFrame(TypedDict):
    type: Literal["cancel"]
    ticket: str


class CreateFrame(TypedDict):
    type: Literal["create"]
    game: str
    variant: NotRequired[str]
    config: NotRequired[dict[str, Any]]
    seat: NotRequired[int | None]
    opponents: NotRequired[dict[str, str]]
    """By seat number: ``"open"``, ``"self"``, ``"strategy:<name>"`` or ``"policy:<name>"``."""
    agents: NotRequired[dict[str, AgentInfo]]
    """By seat number, for this connection's seats: who plays each, in place of ``auth.agent``."""
    seed: NotRequired[str]
    group: NotRequired[str]


class JoinFrame(TypedDict):
    type: Literal["join"]
    match: str


class ActFrame(TypedDict):
    type: Literal["act"]
    match: str
    seq: int
    action: NotRequired[Any]
    actionId: NotRequired[int]
    """Instead of ``action``: an id of the numeric face, one of the turn's ``legalIds``."""
    meta: NotRequired[dict[str, Any]]


class WithdrawFrame(TypedDict):
    type: Literal["withdraw"]
    match: str
    reason: str
    seat: NotRequired[int]


class ResumeFrame(TypedDict):
    type: Literal["resume"]
    match: str


class PingFrame(TypedDict):
    type: Literal["ping"]
    id: NotRequired[str | int]


ClientFrame = Union[
    AuthFrame, QueueFrame, CancelFrame, CreateFrame, JoinFrame, ActFrame, WithdrawFrame, ResumeFrame, PingFrame
]

# ---- server -> client ----


class WelcomeFrame(TypedDict):
    type: Literal["welcome"]
    server: dict[str, Any]
    """``name``, ``version``, ``protocol``."""
    bot: dict[str, Any]
    """``id``, ``name``, ``kind``."""
    limits: dict[str, int]
    """``frameBytes``, ``framesPerSecond``, ``burst``, ``tokenFramesPerSecond``, ``maxMatches``."""
    matches: list[str]


class QueuedFrame(TypedDict):
    type: Literal["queued"]
    ticket: str
    game: str
    variant: str
    fillAt: int | None


class CancelledFrame(TypedDict):
    type: Literal["cancelled"]
    ticket: str


class CreatedFrame(TypedDict):
    type: Literal["created"]
    match: str
    invite: str
    seat: int | None
    seats: list[int]


class NumericInfo(TypedDict, total=False):
    """The config's numeric face (``observationShape``, ``actionCount``, ``encoderVersion``), or ``numericFace``: why
    it has none."""

    observationShape: list[int]
    actionCount: int
    encoderVersion: int
    numericFace: str


class MatchStartFrame(TypedDict):
    type: Literal["match_start"]
    match: str
    game: str
    version: int
    variant: str
    config: Any
    rules: str
    answerExample: str
    seat: int
    participants: list[ParticipantView]
    clock: ClockView
    conduct: ConductPolicy
    observation: Any
    resumed: bool
    numeric: NotRequired[NumericInfo]


class TurnFrame(TypedDict):
    type: Literal["turn"]
    match: str
    seq: int
    seat: int
    observation: Any
    text: NotRequired[str]
    legal: list[ActionForm]
    legalText: str
    tensor: NotRequired[list[float]]
    legalIds: NotRequired[list[int]]
    deadline: int
    clock: ClockView
    retriesLeft: int
    error: NotRequired[ErrorFrame]
    """Added by the client (never sent so): the server's refusal of the previous answer, when the policy is asked
    again."""


class AckFrame(TypedDict):
    type: Literal["ack"]
    match: str
    seq: int
    action: Any
    duplicate: bool


ErrorCode = Literal[
    "bad_frame",
    "unknown_type",
    "frame_too_large",
    "rate_limited",
    "not_authenticated",
    "bad_token",
    "already_authenticated",
    "unknown_game",
    "bad_config",
    "bad_strategy",
    "unknown_match",
    "match_full",
    "already_seated",
    "too_many_matches",
    "not_seated",
    "spectator",
    "unknown_ticket",
    "not_your_turn",
    "malformed_action",
    "illegal_action",
    "stale_sequence",
    "wrong_sequence",
    "match_over",
    "store_unavailable",
    "server_stopping",
    "internal_error",
]
"""What an ``error`` frame's ``code`` says (docs/protocol.md, "Error codes")."""


class ErrorFrame(TypedDict):
    type: Literal["error"]
    code: ErrorCode
    message: str
    match: NotRequired[str]
    seq: NotRequired[int]
    retriesLeft: NotRequired[int]


class MatchEndFrame(TypedDict):
    type: Literal["match_end"]
    match: str
    seat: int
    returns: list[float]
    statuses: list[SeatStatus]
    reason: EndReason
    culprit: int | None
    seed: str
    steps: int


class PongFrame(TypedDict):
    type: Literal["pong"]
    id: NotRequired[str | int]
    time: int


ServerFrame = Union[
    WelcomeFrame,
    QueuedFrame,
    CancelledFrame,
    CreatedFrame,
    MatchStartFrame,
    TurnFrame,
    AckFrame,
    ErrorFrame,
    MatchEndFrame,
    PongFrame,
]
