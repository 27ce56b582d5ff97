"""A small bot client for the Ludus game server's websocket protocol (protocol/frames.ts).

Connect, authenticate, queue for a game and answer each ``turn`` frame with a policy::

    async with LudusClient("ws://127.0.0.1:2567/bot", token) as client:
        results = await client.play("kuhn-poker", policy=lambda obs, legal, turn: random_action(legal), matches=10)

One connection plays any number of seats, several of one match included (self-play: ``"self"``
opponents in ``create``, or ``self_play=True`` tickets that may meet each other). Frames are JSON
text, or msgpack binary when ``format="msgpack"`` is asked for and the ``msgpack`` package is
importable. A connection that drops is reopened by itself: the client authenticates again and
resumes every match it holds seats in; after a server restart (close code 1012) it keeps trying
while the server is down.

Needs Python 3.11 and ``websockets`` (10.4 or later); ``msgpack`` is optional.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import inspect
import json
import logging
import math
import operator
import random
import time
from collections import deque
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

import websockets
from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidURI

from .frames import AgentInfo

if TYPE_CHECKING:  # for types only: websockets 14+ connects with this; 10.4 (Debian) with its legacy protocol, same API
    from websockets.asyncio.client import ClientConnection

try:
    import msgpack
except ImportError:  # msgpack is optional: JSON frames need nothing beyond the standard library
    msgpack = None

__all__ = [
    "ActionId",
    "Answer",
    "LudusClient",
    "LudusError",
    "LudusAuthError",
    "LudusConnectionError",
    "MatchResult",
    "Policy",
    "PrivateMatch",
    "RESTART_CLOSE_CODE",
    "random_action",
    "Withdraw",
    "MSGPACK_AVAILABLE",
]

log = logging.getLogger("ludus")

MSGPACK_AVAILABLE: bool = msgpack is not None
"""Whether ``format="msgpack"`` can be honoured in this interpreter."""

Frame = dict[str, Any]
Policy = Callable[[Any, list[Any], Frame], Any | Awaitable[Any]]
"""``policy(observation, legal, turn)`` returns an action (a JSON object such as ``{"type": "bet"}``, or
text such as ``"bet"``), an ``ActionId`` (an id of the game's numeric face), an ``Answer`` (an action or
``ActionId`` with replay fields), a ``Withdraw``, or an awaitable of one. ``legal`` is the turn's list of
action forms and ``turn`` the whole ``turn`` frame; after an illegal action ``turn["error"]`` holds the server's ``error`` frame."""


@dataclass(frozen=True)
class ActionId:
    """An action given by its id in the game's numeric face (one of ``turn["legalIds"]``), sent as ``act.actionId``.

    A wrapper rather than a bare ``int`` so that an id is never mistaken for an action: ``ActionId(2)``. Any
    integer-like value (a numpy integer, a 0-d tensor's ``item()``) is accepted and stored as ``int``.
    """

    id: int

    def __post_init__(self) -> None:
        if isinstance(self.id, bool):
            raise TypeError(f"an action id is an integer, got {self.id!r}")
        try:
            number = operator.index(self.id)
        except TypeError:
            raise TypeError(f"an action id is an integer, got {self.id!r}") from None
        object.__setattr__(self, "id", number)


@dataclass(frozen=True)
class Answer:
    """An action with free fields the replay keeps beside it (``act.meta``): an LLM's ``prompt`` messages,
    raw ``response`` and ``usage`` land in the replay store and the ``turns`` exports."""

    action: Any
    """An action (JSON or text) or an ``ActionId``."""
    meta: Mapping[str, Any] | None = None


@dataclass(frozen=True)
class Withdraw:
    """Gives up the seat when its player cannot go on (a model endpoint that refuses every request): the
    seat's status becomes ERROR, ``reason`` is kept in the replay, and the match applies its timeout
    policy to the seat at once. The match still ends with its ``match_end``."""

    reason: str


# Error codes that answer an `act` and leave the decision open while retries last.
_RETRYABLE = frozenset({"illegal_action", "malformed_action"})
# Error codes about an `act` that the match has moved past: nothing to do but wait for the next frame.
_STALE = frozenset({"not_your_turn", "stale_sequence", "wrong_sequence", "match_over"})


class LudusError(Exception):
    """The server refused something, with its error ``code`` (see ErrorCode in protocol/frames.ts)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message


class LudusAuthError(LudusError):
    """The server refused the token (``bad_token``) or the ``auth`` frame."""


class LudusConnectionError(LudusError):
    """The server could not be reached, or the connection was lost and could not be reopened."""

    def __init__(self, url: str, reason: str) -> None:
        super().__init__("connection_failed", f"could not connect to {url}: {reason}")
        self.url = url


@dataclass(frozen=True)
class MatchResult:
    """How one match ended, from a ``match_end`` frame."""

    match: str
    seat: int
    returns: list[float]
    statuses: list[str]
    reason: str
    steps: int
    seed: str
    culprit: int | None = None
    """The seat whose conduct ended the match early, when one did."""

    @property
    def my_return(self) -> float:
        """This client's payoff: the return of its own seat."""
        return self.returns[self.seat]


RESTART_CLOSE_CODE = 1012
"""The close code of a server that stops to restart: it keeps its matches, and the client waits for it."""


@dataclass
class _Seat:
    """One seat this client holds: a match may have several (self-play), so seats are keyed by match and seat."""

    match: str
    seat: int
    future: asyncio.Future[MatchResult]
    start: Frame | None = None
    """The seat's first ``match_start``: its game, and whether it came back by a resume."""
    policy: Policy | None = None
    """Who plays it; None while its owner is not known yet (its ``match_start`` came before ``created``)."""
    turn: Frame | None = None
    thinking: int | None = None
    """The decision the policy is working on."""
    answer: Frame | None = None
    """The last ``act`` sent, resent as is when a resume brings its turn back."""
    forgiven: int = 0
    """Illegal answers the server still forgives for the open decision."""


@dataclass
class _Waiter:
    """A queued ticket waiting for its match, or a ``join`` waiting for its match to start."""

    game: str | None
    """The ticket's game; None for a join."""
    variant: str | None
    self_play: bool
    policy: Policy
    future: asyncio.Future[_Seat]
    ticket: str | None = None
    """The ticket ``queued`` returned, to cancel it."""
    invite: str | None = None
    """For a join: the invite it was sent with."""
    joined: bool = False
    """For a join: the server took the seat (its ``pong`` came, and no refusal before it)."""
    match: str | None = None
    """For a join: its match, once a resume's ``created`` named it (the server does not echo the invite)."""


@dataclass
class _Request:
    """A frame the server answers in order: ``queue`` with ``queued``, ``create`` with ``created``, ``join`` (and
    the ``ping`` after it) with ``pong``, or an error."""

    answer: str
    on_answer: Callable[[Frame, list[_Seat]], None]
    on_error: Callable[[LudusError], None]
    policy: Policy | None = None
    """For ``create``: who plays the seats ``created`` names."""
    about: str | None = None
    """For ``join``: the invite, which its error frames name in ``match``."""
    ping: int | None = None
    """For ``join``: the id of the ping sent after it. A refused join's pong still comes, and must answer nothing."""


class _Dropped(LudusError):
    """The connection dropped before a request was answered."""

    def __init__(self, request: str) -> None:
        super().__init__("connection_closed", f"the connection dropped before `{request}` was answered")


@dataclass(frozen=True)
class PrivateMatch:
    """A match this client created (give ``invite`` to whoever should take an open seat) or joined by its invite."""

    match: str
    invite: str
    seats: list[int]
    """Every seat this client plays in the match: the one asked for, then the ``"self"`` opponents; for a join, the
    seat it took."""
    _ends: list[asyncio.Future[MatchResult]] = field(repr=False)

    async def results(self) -> list[MatchResult]:
        """Waits for the match to end; one result per seat, in the order of ``seats``."""
        return list(await asyncio.gather(*self._ends))


class LudusClient:
    """One authenticated connection to a Ludus bot gateway (``ws://host:port/bot``), playing any number of seats.

    Use as an async context manager, or call :meth:`connect` and :meth:`close` yourself.
    """

    def __init__(
        self,
        url: str,
        token: str,
        *,
        text: bool = False,
        numeric: bool = False,
        format: Literal["json", "msgpack"] = "json",
        reconnect_attempts: int = 5,
        reconnect_delay: float = 0.25,
        open_timeout: float = 10.0,
        restart_wait: float = 300.0,
        on_frame: Callable[[Frame], None] | None = None,
        agent: AgentInfo | None = None,
    ) -> None:
        """
        :param url: the gateway's websocket URL, e.g. ``ws://127.0.0.1:2567/bot``.
        :param token: a bot token (``ludus token create``).
        :param text: ask for each observation rendered as text in ``turn["text"]`` (for LLM seats).
        :param numeric: ask for the numeric face: each ``turn`` then carries ``tensor`` (the information-state
            tensor, flat) and ``legalIds``, and each ``match_start`` its ``numeric`` shape and action count. Any
            policy may answer with ``ActionId(n)``, asked or not.
        :param format: ``"msgpack"`` for binary msgpack frames when msgpack is importable; JSON text otherwise.
        :param reconnect_attempts: how many times a dropped connection is reopened before giving up.
        :param reconnect_delay: the first wait before reopening; it doubles on each failed attempt, up to 5 s.
        :param open_timeout: seconds allowed for the websocket handshake.
        :param restart_wait: after the server closed the connection to restart (code 1012; it keeps its matches),
            seconds to keep trying, however many attempts that takes.
        :param on_frame: called with every frame the server sends after ``welcome``, on the client's event loop,
            before the client acts on it: to watch ``ack`` and ``error`` frames, say. It must not block.
        :param agent: who plays behind the token, recorded with every seat this connection takes (``auth.agent``):
            ``{"model": ..., "endpoint": ..., "sampling": {...}}``, each optional; the datasets export it per row
            (``participant_model``, ``participant_endpoint``, ``participant_sampling``). The server checks it: a bad
            one makes ``connect`` raise ``LudusAuthError`` (``bad_frame``) saying what is allowed. Never put a key
            in it.
        """
        if format not in ("json", "msgpack"):
            raise ValueError(f'format must be "json" or "msgpack", got {format!r}')
        self.url = url
        self.token = token
        self.text = text
        self.numeric = numeric
        self.on_frame = on_frame
        self.agent = agent
        self.format: Literal["json", "msgpack"] = "msgpack" if format == "msgpack" and MSGPACK_AVAILABLE else "json"
        self.reconnect_attempts = reconnect_attempts
        self.reconnect_delay = reconnect_delay
        self.open_timeout = open_timeout
        self.restart_wait = restart_wait
        self.welcome: Frame | None = None
        """The latest ``welcome`` frame: server version, this bot's id and name, limits, matches to resume."""
        self._ws: ClientConnection | None = None
        self._reader: asyncio.Task[None] | None = None
        self._seats: dict[tuple[str, int], _Seat] = {}
        self._waiters: list[_Waiter] = []
        self._requests: deque[_Request] = deque()
        self._tasks: set[asyncio.Task[Any]] = set()
        self._pings = 0
        """The id of the latest ping sent (after each ``join``)."""
        self._up: asyncio.Future[None] | None = None
        """Settles at the next (re)connection: what waits for the server to come back awaits it."""
        self._connected = False
        self._closing = False

    async def __aenter__(self) -> LudusClient:
        await self.connect()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    async def connect(self) -> Frame:
        """Opens the connection, sends ``auth`` and returns the ``welcome`` frame.

        :raises LudusConnectionError: the server cannot be reached.
        :raises LudusAuthError: the server refused the token.
        """
        welcome = await self._open()
        self._up = _settled_later()
        self._reader = asyncio.create_task(self._read())
        return welcome

    async def close(self) -> None:
        """Closes the connection (a no-op when it is not open); whatever still waits on it fails."""
        self._closing = True
        if self._reader is not None:
            self._reader.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._reader
            self._reader = None
        await self._close_socket()
        self._fail(LudusConnectionError(self.url, "the connection was closed"))

    async def play(
        self,
        game: str,
        variant: str | None = None,
        policy: Policy | None = None,
        matches: int = 1,
        *,
        self_play: bool = False,
        concurrency: int = 1,
    ) -> list[MatchResult]:
        """Queues for ``game`` (and ``variant``, or the game's default) ``matches`` times, ``concurrency`` tickets
        at a time, answering every turn with ``policy``; returns each seat's result as its match ended.

        With ``self_play`` this token's tickets may be seated together (with ``concurrency`` of 2 or more they
        can meet each other: one match then gives a result per seat). By default a token never meets itself.

        ``policy(observation, legal, turn)`` defaults to a uniformly random legal action; ``turn["seat"]`` says
        which seat is to act. After an illegal action that the server still forgives, the policy is asked again
        with the server's ``error`` frame in ``turn["error"]`` and the updated ``turn["retriesLeft"]``.

        :raises LudusError: the server refused the queue (e.g. ``unknown_game``) or a seat.
        :raises LudusConnectionError: the connection dropped and could not be reopened.
        """
        chosen = self._policy(policy)
        if matches < 1 or concurrency < 1:
            raise ValueError(f"matches and concurrency must be at least 1, got {matches} and {concurrency}")
        results: list[MatchResult] = []
        left = matches

        async def lane() -> None:
            nonlocal left
            while left > 0:
                left -= 1
                seat = await self._queue(game, variant, chosen, self_play)
                results.append(await seat.future)

        await _every(lane() for _ in range(min(concurrency, matches)))
        return results

    async def create(
        self,
        game: str,
        *,
        variant: str | None = None,
        config: Mapping[str, Any] | None = None,
        seat: int | None = None,
        opponents: Mapping[int, str] | Mapping[str, str] | None = None,
        seed: str | None = None,
        policy: Policy | None = None,
        agents: Mapping[int, AgentInfo] | Mapping[str, AgentInfo] | None = None,
        group: str | None = None,
    ) -> PrivateMatch:
        """Opens a private match (the ``create`` frame): ``opponents`` names other seats ``"open"`` (for the
        invite), ``"strategy:<name>"`` (a built-in) or ``"self"`` (this client plays that seat too, with
        ``policy``). Returns once the server has created it; ``await match.results()`` waits for its end.
        While the server stops to restart (``server_stopping``), it waits for the reconnect and asks again.

        ``agents`` names who plays each of this client's seats here (``seat`` and the ``"self"`` opponents), by seat
        number, when they are not all the connection's ``agent``: several models at one table, each seat recorded
        with its own. ``group`` names a seed group: its matches are recorded (and exported) with it.

        :raises LudusError: the server refused the match (``bad_config``, ``bad_strategy``, ``bad_frame`` for a bad
            agent, ...).
        :raises LudusConnectionError: the connection dropped before the server answered.
        """
        chosen = self._policy(policy)
        frame: Frame = {"type": "create", "game": game}
        given = {
            "variant": variant,
            "config": None if config is None else dict(config),
            "seat": seat,
            "seed": seed,
            "group": group,
        }
        frame.update((name, value) for name, value in given.items() if value is not None)
        if opponents is not None:
            frame["opponents"] = {str(k): v for k, v in opponents.items()}
        if agents is not None:
            frame["agents"] = {str(k): v for k, v in agents.items()}
        created, seats = await self._ask([frame], "created", policy=chosen)
        return PrivateMatch(created["match"], created["invite"], [s.seat for s in seats], [s.future for s in seats])

    async def join(self, invite: str, *, policy: Policy | None = None) -> PrivateMatch:
        """Takes the first open seat of the match ``invite`` names (the ``join`` frame; the invite comes from its
        creator's ``create``). Returns once the match starts, that is once every open seat is taken;
        ``await match.results()`` waits for its end. The seat is played with ``policy`` and resumed after a
        reconnect like any other. While the server stops to restart (``server_stopping``), it waits for the
        reconnect and asks again.

        :raises LudusError: the server refused the seat: ``match_full`` (no open seat is left), ``already_seated``
            (this token sits in the match: for self-play use ``"self"`` opponents), ``unknown_match`` (no live match
            has that invite; a match id is not an invite), ``too_many_matches``.
        :raises LudusConnectionError: the connection dropped before the server answered.
        """
        chosen = self._policy(policy)
        waiter = _Waiter(None, None, False, chosen, asyncio.get_running_loop().create_future(), invite=invite)
        self._waiters.append(waiter)
        try:
            # `join` has no answer of its own until the match starts: the `pong` to a ping sent after it says
            # that the server took the seat, as the server answers a connection's frames in order.
            self._pings += 1
            ping = {"type": "ping", "id": self._pings}
            await self._ask([{"type": "join", "match": invite}, ping], "pong", about=invite, ping=self._pings)
            waiter.joined = True
            self._assign()  # a seat that came back by a resume (the join was given a match id of ours) is its
            seat = await waiter.future
        finally:
            if waiter in self._waiters:
                self._waiters.remove(waiter)
        return PrivateMatch(seat.match, invite, [seat.seat], [seat.future])

    async def _ask(
        self,
        frames: list[Frame],
        answer: str,
        *,
        policy: Policy | None = None,
        about: str | None = None,
        ping: int | None = None,
    ) -> tuple[Frame, list[_Seat]]:
        """Sends ``frames`` and waits for ``answer`` (or the error that refuses them). While the server stops to
        restart (``server_stopping``), it waits for the reconnect and asks again.

        :raises LudusConnectionError: the connection dropped before the server answered.
        """
        while True:
            await self._when_up()
            answered: asyncio.Future[tuple[Frame, list[_Seat]]] = asyncio.get_running_loop().create_future()
            self._requests.append(
                _Request(
                    answer,
                    functools.partial(_settle, answered),
                    functools.partial(_fail, answered),
                    policy,
                    about,
                    ping,
                )
            )
            for frame in frames:
                await self._send_quiet(frame)
            try:
                return await answered
            except _Dropped as e:
                raise LudusConnectionError(self.url, e.message) from e
            except LudusError as e:
                if e.code != "server_stopping":
                    raise
                log.warning("%s; sending `%s` again once the server is back", e.message, frames[0]["type"])
                await self._next_connection()

    def _policy(self, policy: Policy | None) -> Policy:
        if self._reader is None:
            raise RuntimeError("call connect() (or use `async with`) before play(), create() or join()")
        return policy if policy is not None else (lambda _obs, legal, _turn: random_action(legal))

    async def _queue(self, game: str, variant: str | None, policy: Policy, self_play: bool) -> _Seat:
        waiter = _Waiter(game, variant, self_play, policy, asyncio.get_running_loop().create_future())
        self._waiters.append(waiter)
        if self._connected:
            await self._send_queue(waiter)
        # Otherwise it is queued once reconnected.
        try:
            return await waiter.future
        except asyncio.CancelledError:
            if waiter in self._waiters:
                self._waiters.remove(waiter)
                if waiter.ticket is not None:
                    await self._send_quiet({"type": "cancel", "ticket": waiter.ticket})
            raise

    async def _send_queue(self, waiter: _Waiter) -> None:
        frame: Frame = {"type": "queue", "game": waiter.game}
        if waiter.variant is not None:
            frame["variant"] = waiter.variant
        if waiter.self_play:
            frame["selfPlay"] = True

        def refused(error: LudusError) -> None:
            # A drop, or a server stopping to restart: the ticket is queued again once reconnected.
            if isinstance(error, _Dropped) or error.code == "server_stopping":
                return
            if waiter in self._waiters:
                self._waiters.remove(waiter)
            if not waiter.future.done():
                waiter.future.set_exception(error)

        self._requests.append(
            _Request("queued", lambda queued, _seats: setattr(waiter, "ticket", queued["ticket"]), refused)
        )
        await self._send_quiet(frame)

    async def _open(self) -> Frame:
        try:
            self._ws = await websockets.connect(self.url, open_timeout=self.open_timeout, max_size=2**24)
        except (OSError, InvalidURI, InvalidHandshake, asyncio.TimeoutError) as e:
            raise LudusConnectionError(self.url, str(e) or type(e).__name__) from e
        auth: Frame = {"type": "auth", "token": self.token}
        if self.text:
            auth["text"] = True
        if self.numeric:
            auth["numeric"] = True
        if self.agent is not None:
            auth["agent"] = self.agent
        try:
            await self._send(auth)
            while True:
                frame = await self._recv()
                if frame["type"] == "welcome":
                    self.welcome = frame
                    self._connected = True
                    return frame
                if frame["type"] == "error":
                    await self._close_socket()
                    raise LudusAuthError(frame["code"], frame["message"])
        except ConnectionClosed as e:
            raise LudusConnectionError(self.url, f"the server closed the connection during auth ({e})") from e

    async def _close_socket(self) -> None:
        self._connected = False
        if self._ws is not None:
            ws, self._ws = self._ws, None
            await ws.close()

    async def _read(self) -> None:
        """Reads every frame and hands it on; after a drop, reconnects and resumes. Runs until the connection ends."""
        while True:
            try:
                frame = await self._recv()
            except ConnectionClosed as e:
                if self._closing:
                    return
                log.warning("connection to %s lost (%s); reconnecting", self.url, e)
                self._connected = False
                for request in list(self._requests):
                    request.on_error(_Dropped(request.answer))
                self._requests.clear()
                try:
                    await self._reconnect(e.rcvd.code if e.rcvd else None)
                except LudusError as failure:
                    self._fail(failure)
                    return
                continue
            except LudusError as failure:
                self._fail(failure)
                return
            if self.on_frame is not None:
                self.on_frame(frame)
            self._dispatch(frame)

    async def _reconnect(self, code: int | None) -> None:
        """Reopens the connection, then resumes every match with a seat of ours and queues the waiting tickets again.

        A server that closed with 1012 is restarting: it is tried for ``restart_wait`` seconds, however many
        attempts that takes. A resume also answers for a match that ended meanwhile, with its ``match_end``.
        """
        await self._close_socket()
        until = time.monotonic() + self.restart_wait if code == RESTART_CLOSE_CODE else 0.0
        delay = self.reconnect_delay
        attempt = 0
        while True:
            attempt += 1
            await asyncio.sleep(delay)
            try:
                await self._open()
                break
            except LudusConnectionError as e:
                if attempt >= self.reconnect_attempts and time.monotonic() >= until:
                    waited = f" over {self.restart_wait:g} s of the server's restart" if until else ""
                    raise LudusConnectionError(
                        self.url, f"the connection was lost and {attempt} reconnects failed{waited}"
                    ) from e
                log.warning("reconnect %d failed: %s", attempt, e.message)
                delay = min(delay * 2, 5.0)
        resumed = dict.fromkeys(seat.match for seat in self._seats.values())
        if any(w.joined for w in self._waiters):
            # A seat taken by invite is unknown here until its match starts: the token's other matches are resumed
            # too, and the waiting one's `created` (or its `match_start`, if it started meanwhile) names it.
            resumed.update(dict.fromkeys(self.welcome["matches"] if self.welcome else []))
        for match in resumed:
            await self._send_quiet({"type": "resume", "match": match})
        for waiter in self._waiters:
            if waiter.invite is None:
                await self._send_queue(waiter)
        up, self._up = self._up, _settled_later()
        if up is not None and not up.done():
            up.set_result(None)

    async def _when_up(self) -> None:
        if not self._connected:
            await self._next_connection()

    async def _next_connection(self) -> None:
        assert self._up is not None
        await asyncio.shield(self._up)

    def _dispatch(self, frame: Frame) -> None:
        kind = frame.get("type")
        if kind in ("queued", "pong"):
            self._answer(kind, frame, [])
        elif kind == "created":
            self._created(frame)
        elif kind == "match_start":
            seat = self._seat(frame["match"], frame["seat"])
            seat.start = seat.start or frame
            if seat.policy is None:
                self._assign()
        elif kind == "turn":
            playing = self._seats.get((frame["match"], frame["seat"]))
            if playing is not None:
                playing.turn = frame
                if playing.policy is not None:
                    self._on_turn(playing, frame)
        elif kind == "error":
            self._on_error(frame)
        elif kind == "match_end":
            self._on_end(frame)

    def _answer(self, kind: str, frame: Frame, seats: list[_Seat]) -> None:
        request = next((r for r in self._requests if r.answer == kind and r.ping == frame.get("id")), None)
        if request is not None:
            self._requests.remove(request)
            request.on_answer(frame, seats)

    def _created(self, frame: Frame) -> None:
        joining = next((w for w in self._waiters if w.joined and w.invite == frame["invite"]), None)
        if joining is not None:
            joining.match = frame["match"]  # a resume of the match a join waits in
            return
        known = self._seats.get((frame["match"], frame["seat"]))
        if known is not None and known.policy is not None:
            return  # a resume of a match still waiting for players answers `created` again
        request = next((r for r in self._requests if r.answer == "created"), None)
        if request is None or request.policy is None:
            return
        seats = [
            self._claim(self._seat(frame["match"], n), request.policy) for n in frame.get("seats", [frame["seat"]])
        ]
        self._answer("created", frame, seats)
        self._assign()

    def _seat(self, match: str, number: int) -> _Seat:
        seat = self._seats.get((match, number))
        if seat is None:
            seat = self._seats[(match, number)] = _Seat(match, number, asyncio.get_running_loop().create_future())
        return seat

    def _claim(self, seat: _Seat, policy: Policy) -> _Seat:
        seat.policy = policy
        if seat.turn is not None:
            self._on_turn(seat, seat.turn)
        return seat

    def _assign(self) -> None:
        """Gives each seat whose owner is unknown to whoever waits for it: a join that knows its match, else a
        queued ticket of its game, else a join (the server does not echo the invite, so an invite's match is
        known by elimination). A resumed seat is never a ticket's, and while a ``create`` is unanswered any new
        seat may be its, so those wait."""
        creating = any(r.answer == "created" for r in self._requests)
        for seat in list(self._seats.values()):
            if seat.policy is not None or seat.start is None:
                continue
            waiter = self._waiter_of(seat, creating)
            if waiter is None:
                continue
            self._waiters.remove(waiter)
            self._claim(seat, waiter.policy)
            if not waiter.future.done():
                waiter.future.set_result(seat)

    def _waiter_of(self, seat: _Seat, creating: bool) -> _Waiter | None:
        assert seat.start is not None
        joins = [w for w in self._waiters if w.invite is not None]
        bound = next((w for w in joins if w.match == seat.match), None)
        if bound is not None or creating:
            return bound
        if seat.start.get("resumed"):
            # Only a join's reconnect resumes matches this client had no seat in: this one started meanwhile.
            return next((w for w in joins if w.joined and w.match is None), None)
        game, variant = seat.start["game"], seat.start["variant"]
        ticket = next((w for w in self._waiters if w.game == game and w.variant in (None, variant)), None)
        return ticket or next((w for w in joins if w.match is None), None)

    def _on_turn(self, seat: _Seat, turn: Frame) -> None:
        if seat.answer is not None and seat.answer["seq"] == turn["seq"]:
            # The same decision again after a resume: the server acks a resent answer as a duplicate if it had it.
            self._spawn(self._send_quiet(seat.answer))
            return
        if seat.thinking == turn["seq"]:
            return
        seat.forgiven = turn.get("retriesLeft", 0)
        self._spawn(self._decide(seat, turn))

    async def _decide(self, seat: _Seat, turn: Frame, error: Frame | None = None) -> None:
        seat.thinking = turn["seq"]
        seat.answer = None
        asked = turn if error is None else {**turn, "error": error, "retriesLeft": error.get("retriesLeft", 0)}
        try:
            # Turns reach only seats with a policy: _on_turn's callers check, and a retry follows an answer of one.
            if seat.policy is None:
                raise RuntimeError(f"match {seat.match} seat {seat.seat}: a decision asked of a seat with no policy")
            decided = await _call_policy(seat.policy, asked)
        except Exception as failure:
            self._seats.pop((seat.match, seat.seat), None)
            if not seat.future.done():
                seat.future.set_exception(failure)
            return
        # A later decision (or the match's end) overtook this one while the policy thought.
        if self._seats.get((seat.match, seat.seat)) is not seat or seat.thinking != turn["seq"]:
            return
        seat.thinking = None
        if isinstance(decided, Withdraw):
            await self._send_quiet(
                {"type": "withdraw", "match": seat.match, "seat": seat.seat, "reason": decided.reason}
            )
            return
        action, meta = (decided.action, decided.meta) if isinstance(decided, Answer) else (decided, None)
        act: Frame = {"type": "act", "match": seat.match, "seq": turn["seq"]}
        if isinstance(action, ActionId):
            act["actionId"] = action.id
        else:
            act["action"] = action
        if meta is not None:
            act["meta"] = dict(meta)
        seat.answer = act
        await self._send_quiet(act)

    def _on_error(self, error: Frame) -> None:
        code, match, seq = error["code"], error.get("match"), error.get("seq")
        seats = [s for s in self._seats.values() if s.match == match] if match is not None else []
        if not seats:
            # Not about a seat of ours: one that names a match refuses the join with that invite, if any (it may
            # be a resume's refusal); one that names none answers the oldest request (the server answers in
            # order), unless it is a refused `cancel` (sent without a request) or a rate-limit notice.
            if seq is not None or code in ("unknown_ticket", "rate_limited"):
                return
            request = (
                next((r for r in self._requests if r.about == match), None)
                if match is not None
                else (self._requests[0] if self._requests else None)
            )
            if request is not None:
                self._requests.remove(request)
                request.on_error(LudusError(code, error["message"]))
            return
        if seq is None:
            # A resume refused (the hold expired, or the match ended too long ago), or the seats taken over by
            # another connection: they are gone.
            if code in ("not_seated", "unknown_match"):
                for lost in seats:
                    self._lose(lost, LudusError(code, error["message"]))
            return
        # A decision number is unique in a match, so the seat that sent it is the one the error is about.
        seat = next((s for s in seats if s.answer is not None and s.answer["seq"] == seq), None)
        if seat is None:
            return
        if code in _RETRYABLE:
            # The policy hears of it (turn["error"]), as do the environments' callers: only a log's reader needs more.
            log.info(
                "match %s seat %d: %s (%d retries left)",
                match,
                seat.seat,
                error["message"],
                error.get("retriesLeft", 0),
            )
            # At retriesLeft 0 one more answer still counts; the error after it means the conduct policy acted.
            if seat.forgiven == 0 or seat.turn is None or seat.turn["seq"] != seq:
                return
            seat.forgiven = error.get("retriesLeft", 0)
            self._spawn(self._decide(seat, seat.turn, error))
        elif code not in _STALE:
            self._lose(seat, LudusError(code, error["message"]))

    def _on_end(self, end: Frame) -> None:
        """Every seat of a match ends together, with the same frame but for ``seat``: each of ours settles with
        the first one, including seats a resume could not bring back (withdrawn ones)."""
        for key, seat in list(self._seats.items()):
            if seat.match != end["match"]:
                continue
            del self._seats[key]
            if not seat.future.done():
                seat.future.set_result(
                    MatchResult(
                        match=seat.match,
                        seat=seat.seat,
                        returns=list(end["returns"]),
                        statuses=list(end["statuses"]),
                        reason=end["reason"],
                        steps=end["steps"],
                        seed=end["seed"],
                        culprit=end.get("culprit"),
                    )
                )

    def _lose(self, seat: _Seat, error: LudusError) -> None:
        self._seats.pop((seat.match, seat.seat), None)
        if not seat.future.done():
            seat.future.set_exception(error)

    def _fail(self, error: LudusError) -> None:
        """The connection is over: everything waiting on it fails with ``error``."""
        self._connected = False
        for seat in list(self._seats.values()):
            self._lose(seat, error)
        for waiter in self._waiters:
            if not waiter.future.done():
                waiter.future.set_exception(error)
        self._waiters.clear()
        for request in self._requests:
            request.on_error(error)
        self._requests.clear()
        if self._up is not None and not self._up.done():
            self._up.set_exception(error)

    def _spawn(self, work: Awaitable[None]) -> None:
        task = asyncio.ensure_future(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _send_quiet(self, frame: Frame) -> None:
        """Sends a frame, or drops it while the connection is down (after the reconnect, resumed turns bring back
        whatever needs answering)."""
        if not self._connected:
            return
        with contextlib.suppress(ConnectionClosed):
            await self._send(frame)

    async def _send(self, frame: Frame) -> None:
        assert self._ws is not None
        if self.format == "msgpack":
            await self._ws.send(msgpack.packb(frame, use_bin_type=True))
        else:
            await self._ws.send(json.dumps(frame, separators=(",", ":")))

    async def _recv(self) -> Frame:
        assert self._ws is not None
        message = await self._ws.recv()
        if isinstance(message, bytes):
            if msgpack is None:
                raise LudusError("bad_frame", "the server sent a binary (msgpack) frame and msgpack is not installed")
            return msgpack.unpackb(message, raw=False)
        return json.loads(message)


def _settled_later() -> asyncio.Future[None]:
    """A future for the next connection; its failure is read by whoever awaits it, or by nobody."""
    future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
    future.add_done_callback(lambda f: f.cancelled() or f.exception())
    return future


async def _every(work: Any) -> None:
    """Runs every coroutine at once; the first failure cancels the others and is raised."""
    tasks = [asyncio.ensure_future(w) for w in work]
    try:
        await asyncio.gather(*tasks)
    except BaseException:
        for task in tasks:
            task.cancel()
        raise


def _settle(answered: asyncio.Future[tuple[Frame, list[_Seat]]], frame: Frame, seats: list[_Seat]) -> None:
    if not answered.done():
        answered.set_result((frame, seats))


def _fail(answered: asyncio.Future[Any], error: LudusError) -> None:
    if not answered.done():
        answered.set_exception(error)


async def _call_policy(policy: Policy, turn: Frame) -> Any:
    action = policy(turn.get("observation"), list(turn.get("legal", [])), turn)
    return await action if inspect.isawaitable(action) else action


_WORDS = ("deal", "trust", "fair", "share", "cooperate", "maybe", "yes", "no", "you", "me", "together", "split")


def random_action(legal: Sequence[Mapping[str, Any]], rng: random.Random | None = None) -> dict[str, Any]:
    """A uniformly random legal action: a form chosen uniformly from ``legal``, then a value chosen uniformly
    within it (its range, each item's count, a trade's resources). Text forms get a short babble of words.

    Forms are those of games/core/action.ts: ``{"kind": "fixed", "action"}``, ``{"kind": "amount", "type",
    "min", "max", "integer"}``, ``{"kind": "text", "type", "maxLength"}``, ``{"kind": "split", "type",
    "items", "max"}`` and ``{"kind": "exchange", "type", "give", "get", "maxText"}``.
    """
    if not legal:
        raise ValueError("there is no legal action to choose from")
    r = rng or random
    form = r.choice(list(legal))
    kind = form["kind"]
    if kind == "fixed":
        return dict(form["action"])
    if kind == "amount":
        low, high = form["min"], form["max"]
        amount = r.randint(math.ceil(low), math.floor(high)) if form["integer"] else r.uniform(low, high)
        return {"type": form["type"], "amount": amount}
    if kind == "text":
        words = " ".join(r.choice(_WORDS) for _ in range(r.randint(0, 8)))
        return {"type": form["type"], "text": words[: form["maxLength"]]}
    if kind == "split":
        return {"type": form["type"], "take": [r.randint(0, m) for m in form["max"]]}
    if kind == "exchange":
        return {"type": form["type"], "give": _random_bundle(form["give"], r), "get": _random_bundle(form["get"], r)}
    raise ValueError(f"unknown action form kind {kind!r}")


def _random_bundle(most: Mapping[str, int], r: random.Random | Any) -> dict[str, int]:
    """A non-empty random subset of the resources that can be named, each with a count from 1 to its max."""
    names = [name for name, n in most.items() if n >= 1]
    chosen = r.sample(names, r.randint(1, len(names))) if names else []
    return {name: r.randint(1, most[name]) for name in names if name in chosen}
