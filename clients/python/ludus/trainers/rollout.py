"""What every trainer adapter shares: which match a rollout plays, the seat's conversation with the server, and how
a chat template joins the model's turns with the server's messages.

A rollout is one whole Ludus match in which the trained model plays one seat through ``ludus.envs.text.LudusTextEnv``
and every other seat is taken by the server (a built-in strategy, a registered policy, or a player who joins with the
invite). The model's reply to each observation is sent as the action, as the server reads text (``"[bet]"``, ``"bet"``
or JSON); an action the server refuses comes back as the next message, with what is legal, and the seat answers again
until the server's retries run out (then the match's timeout policy plays for it). The rollout's reward is the seat's
return at the end of the match. The seat's record names the model being trained (its name and the generation settings
the trainer samples with), so the datasets say which model played each rollout (``participant_model``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..envs.text import LudusTextEnv
from ..frames import AgentInfo

INSTRUCTIONS = (
    "You play one seat of a game on a Ludus game server. Each message shows what your seat sees and the moves that "
    "are legal now. Answer with your move only, in the form the message asks for."
)
"""The instruction a rollout's conversation starts with when the trainer's prompt does not give one."""

Message = dict[str, Any]


@dataclass(frozen=True)
class MatchSpec:
    """The match each rollout plays: a private match on the server at ``url`` (a ``ws://…/bot`` address) for
    ``token``, of ``game`` (with ``variant`` and ``config``), the model in ``seat`` and every other seat named in
    ``opponents`` (``"strategy:<name>"``, ``"policy:<name>"`` or ``"open"``), as ``LudusTextEnv`` takes them.

    ``agent`` is who the seat's record says plays it. By default each trainer declares the model it trains (see
    ``trained_agent``); give ``{"model": ..., "endpoint": ..., "sampling": {...}}`` to name it otherwise, or ``{}`` to
    declare nothing."""

    url: str
    token: str
    game: str = "kuhn-poker"
    variant: str | None = None
    config: Mapping[str, Any] | None = None
    opponents: Mapping[int, str] = field(default_factory=dict)
    seat: int = 0
    agent: AgentInfo | None = None

    def __post_init__(self) -> None:
        if not self.opponents:
            raise ValueError(
                "MatchSpec needs opponents for every seat but the model's, e.g. {1: 'strategy:random'}: a rollout "
                "trains one seat, so the server must play the others"
            )


@dataclass
class SeatRollout:
    """One match played by the model's seat, message by message.

    ``start()`` opens the match and returns the first message for the model; ``answer(reply)`` sends the model's
    reply as the seat's action and returns the next message, or None once the match is over. Then ``match_return``
    is the seat's return, ``match`` the server's match id (known from the start), ``replies`` every reply sent and ``refused`` how many the
    server refused.
    """

    spec: MatchSpec
    agent: AgentInfo | None = None
    """Who the trainer says plays the seat (``trained_agent``), declared unless ``spec.agent`` says otherwise."""
    env: LudusTextEnv | None = None
    replies: list[str] = field(default_factory=list)
    refused: int = 0
    match_return: float | None = None
    match: str | None = None
    info: dict[str, Any] = field(default_factory=dict)

    def start(self, seed: str | None = None) -> str:
        """Opens a new private match (seeded with ``seed`` when given) and returns the seat's first observation."""
        spec = self.spec
        self.env = LudusTextEnv(
            spec.url,
            spec.token,
            spec.game,
            variant=spec.variant,
            config=dict(spec.config) if spec.config is not None else None,
            opponents=dict(spec.opponents),
            seat=spec.seat,
            agent=spec.agent if spec.agent is not None else self.agent,
        )
        self.env.reset(seed=seed)
        self.match = self.env.match.id if self.env.match is not None else None
        return self._observation()

    def answer(self, reply: str) -> str | None:
        """Sends ``reply`` as the seat's action; returns the next message for the model (the seat's next
        observation, which says why the server refused the reply when it did), or None when the match has ended."""
        if self.env is None:
            raise RuntimeError("answer() needs a match in play: call start() first, and not after the match ended")
        self.replies.append(reply)
        done, info = self.env.step(reply.strip())
        if "error" in info:
            self.refused += 1
        if done:
            self._finish()
            return None
        return self._observation()

    def close(self) -> None:
        """Ends the match early (a trainer that stops mid-rollout, a start that failed) and releases the
        connection; the server ends a match still going, ``aborted``."""
        if self.env is not None:
            self._finish()

    def _observation(self) -> str:
        assert self.env is not None
        player, observation = self.env.get_observation()
        if player != self.spec.seat:
            raise RuntimeError(
                f"seat {player} is to act in {self.spec.game}, but the model plays seat {self.spec.seat}: name every "
                "other seat in MatchSpec.opponents so that the server plays them"
            )
        return observation

    def _finish(self) -> None:
        assert self.env is not None
        env, self.env = self.env, None
        rewards, game_info = env.close()
        if self.spec.seat in rewards:  # a match the server never created has no result
            self.match_return = float(rewards[self.spec.seat])
            self.info = dict(game_info[self.spec.seat])
            self.match = self.info["match"]


def trained_agent(model: Any, sampling: Mapping[str, Any]) -> AgentInfo:
    """The agent a trainer declares for its seat: the model's name as transformers keeps it (a name given as text, a
    tokenizer's or model's ``name_or_path``, or its ``config._name_or_path``: the hub id or the local path it was
    loaded from; none for a model built from a bare config) and the generation ``sampling`` settings that were given
    (those that are None are left out). There is no endpoint: the trainer generates in process."""
    name = model if isinstance(model, str) else getattr(model, "name_or_path", None)
    if not name:
        name = getattr(getattr(model, "config", None), "_name_or_path", None)
    agent: AgentInfo = {}
    if isinstance(name, str) and name:
        agent["model"] = name
    given = {key: value for key, value in sampling.items() if value is not None}
    if given:
        agent["sampling"] = given
    return agent


def first_messages(prompt: Sequence[Message] | str, observation: str) -> list[Message]:
    """The conversation a rollout starts with: the trainer's prompt (``INSTRUCTIONS`` when it is empty) with the
    match's first observation appended to its last user message, as TRL appends what an environment's ``reset``
    returns, or as a user message of its own after any other."""
    if not prompt:
        prompt = INSTRUCTIONS
    messages = [{"role": "user", "content": prompt}] if isinstance(prompt, str) else [dict(m) for m in prompt]
    if messages[-1].get("role") == "user":
        messages[-1]["content"] = f"{messages[-1].get('content') or ''}\n\n{observation}".lstrip()
    else:
        messages.append({"role": "user", "content": observation})
    return messages


def _render(tokenizer: Any, messages: list[Message], generation_prompt: bool, tokenize: bool) -> Any:
    return tokenizer.apply_chat_template(
        messages, add_generation_prompt=generation_prompt, tokenize=tokenize, return_dict=False
    )


_DUMMY = [{"role": "user", "content": "dummy"}, {"role": "assistant", "content": "dummy"}]


def next_turn_ids(tokenizer: Any, message: str) -> list[int]:
    """The tokens that follow the model's end-of-turn token to hand it ``message`` as a user message and open its
    next turn: the chat template's rendering of a conversation with the message after one without it, cut after the
    last end-of-sequence token of the shorter (as TRL's ``GRPOTrainer._get_tool_suffix_ids`` cuts its tool results),
    so that the model's own tokens are kept as generated rather than re-tokenized."""
    prefix = list(_render(tokenizer, _DUMMY, False, True))
    full = list(_render(tokenizer, [*_DUMMY, {"role": "user", "content": message}], True, True))
    ends = [i for i, token in enumerate(prefix) if token == tokenizer.eos_token_id]
    if ends:
        prefix = prefix[: ends[-1] + 1]
    if full[: len(prefix)] != prefix:
        raise ValueError("the chat template does not render a longer conversation as an extension of a shorter one")
    return full[len(prefix) :]


def next_turn_text(tokenizer: Any, message: str) -> str:
    """``next_turn_ids`` as text, for trainers that join conversations as text (OpenRLHF's environment feedback):
    what follows the model's end-of-turn token."""
    prefix = _render(tokenizer, _DUMMY, False, False)
    full = _render(tokenizer, [*_DUMMY, {"role": "user", "content": message}], True, False)
    eos = tokenizer.eos_token
    if eos and eos in prefix:
        prefix = prefix[: prefix.rindex(eos) + len(eos)]
    if not full.startswith(prefix):
        raise ValueError("the chat template does not render a longer conversation as an extension of a shorter one")
    return full[len(prefix) :]


def group_seed(base: str, step: int, group: int) -> str:
    """The seed of every match of one GRPO group: rollouts compared with each other meet the same deal."""
    return f"{base}-{step}-{group}"
