"""Ludus matches as verl agent loops (``verl.experimental.agent_loop.agent_loop.AgentLoopBase``, verl 0.5+).

verl documents the agent loop's contract: the rollout worker makes one loop instance per sample as
``cls(trainer_config, server_manager, tokenizer, processor, **kwargs)`` (``kwargs`` from the agent loop's config
entry) and awaits ``run(sampling_params, **kwargs)`` with the dataset's fields (``raw_prompt``, the chat messages, and
``extra_info``); the loop generates with
``await server_manager.generate(request_id, prompt_ids=..., sampling_params=...)`` (a ``TokenOutput`` with
``token_ids`` and ``log_probs``, or plain token ids in older versions) and returns an ``AgentLoopOutput``: ``prompt_ids``, ``response_ids``, ``response_mask`` (1 for the model's tokens, 0 for the
environment's), ``response_logprobs``, ``reward_score``, ``num_turns``, ``metrics`` and ``extra_fields``.

``LudusAgentLoop`` plays one whole match per sample: the prompt's last user message gets the match's first
observation, each of the model's replies is the seat's action, each next observation is joined into the response with
mask 0, and ``reward_score`` is the seat's return. Name it in an agent loop config (``agent_loop_config_path``)::

    - name: ludus
      _target_: ludus.trainers.verl.LudusAgentLoop
      url: ws://127.0.0.1:2567/bot
      token: ...
      game: kuhn-poker
      opponents: {1: "strategy:nash"}

and give the dataset's rows ``agent_name: ludus`` (``extra_info.seed``, when present, seeds the row's match). With verl
installed the class is a real ``AgentLoopBase`` registered as ``"ludus"``; without it, the same shape.

Each match records the trained model as its seat's agent: ``actor_rollout_ref.model.path`` (or the tokenizer's name),
and the sample's ``temperature``, ``top_p``, ``top_k`` and ``repetition_penalty`` with the rollout's
``response_length``; an ``agent`` key in the config entry names another.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, cast
from uuid import uuid4

from ..frames import AgentInfo
from .rollout import MatchSpec, SeatRollout, first_messages, next_turn_ids, trained_agent

# verl's sampling parameters that say how the seat's replies were sampled.
_SAMPLING = ("temperature", "top_p", "top_k", "repetition_penalty")

try:
    from verl.experimental.agent_loop.agent_loop import AgentLoopBase, AgentLoopOutput, register
except ImportError:  # verl is not installed here: the same constructor and output, for use and tests without it

    class AgentLoopBase:  # type: ignore[no-redef]
        """What ``LudusAgentLoop`` uses of verl's base: the constructor's arguments, kept as verl keeps them."""

        def __init__(self, trainer_config: Any, server_manager: Any, tokenizer: Any, processor: Any, **_: Any) -> None:
            self.config = trainer_config.config
            self.server_manager = server_manager
            self.tokenizer = tokenizer
            self.processor = processor

    @dataclass
    class AgentLoopOutput:  # type: ignore[no-redef]
        """verl's ``AgentLoopOutput`` fields."""

        prompt_ids: list[int]
        response_ids: list[int]
        response_mask: list[int]
        response_logprobs: list[float] | None = None
        multi_modal_data: dict[str, Any] | None = None
        reward_score: float | None = None
        num_turns: int = 0
        metrics: dict[str, Any] = field(default_factory=dict)
        extra_fields: dict[str, Any] = field(default_factory=dict)

    def register(_name: str) -> Any:
        return lambda cls: cls


@register("ludus")
class LudusAgentLoop(AgentLoopBase):
    """One Ludus match per sample, the model playing ``seat`` (see the module's docstring). The response is capped at
    the rollout's ``response_length``: a match still going then is abandoned (the server ends it, ``aborted``) and
    scored as the server scores it."""

    def __init__(
        self,
        trainer_config: Any,
        server_manager: Any,
        tokenizer: Any,
        processor: Any,
        *,
        url: str,
        token: str,
        game: str = "kuhn-poker",
        opponents: Mapping[int, str],
        variant: str | None = None,
        config: Mapping[str, Any] | None = None,
        seat: int = 0,
        agent: AgentInfo | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(trainer_config, server_manager, tokenizer, processor, **kwargs)
        opponents_by_seat = {int(s): o for s, o in opponents.items()}
        # The config entry's mappings may be OmegaConf's: the agent is sent as JSON.
        declared = None if agent is None else cast(AgentInfo, _plain(agent))
        self.spec = MatchSpec(url, token, game, variant, config, opponents_by_seat, seat, declared)
        self.response_length = int(self.config.actor_rollout_ref.rollout.response_length)
        self.trained_model = getattr(getattr(self.config.actor_rollout_ref, "model", None), "path", None) or tokenizer

    async def run(self, sampling_params: dict[str, Any], **kwargs: Any) -> AgentLoopOutput:
        """Plays the match; ``kwargs`` are the dataset row's fields (``raw_prompt``, ``extra_info``)."""
        tokenizer = self.tokenizer
        seed = (kwargs.get("extra_info") or {}).get("seed")
        sampling = {key: sampling_params.get(key) for key in _SAMPLING}
        sampling["response_length"] = self.response_length
        match = SeatRollout(self.spec, trained_agent(self.trained_model, sampling))
        request = uuid4().hex
        response: list[int] = []
        mask: list[int] = []
        logprobs: list[float] = []
        sampled = True  # whether the server gave every reply's log-probabilities
        turns = 1
        try:
            observation = await asyncio.to_thread(match.start, None if seed is None else str(seed))
            messages = first_messages(list(kwargs.get("raw_prompt") or []), observation)
            prompt = list(tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=True,
                                                        return_dict=False))
            while len(response) < self.response_length:
                output = await self.server_manager.generate(request, prompt_ids=prompt + response,
                                                            sampling_params=sampling_params)
                reply = list(getattr(output, "token_ids", output))
                response += reply
                mask += [1] * len(reply)
                reply_logprobs = getattr(output, "log_probs", None)
                sampled = sampled and reply_logprobs is not None
                logprobs += list(reply_logprobs or [])
                turns += 1
                message = await asyncio.to_thread(match.answer, tokenizer.decode(reply, skip_special_tokens=True))
                if message is None:
                    break
                joint = ([] if reply and reply[-1] == tokenizer.eos_token_id else [tokenizer.eos_token_id])
                joint += next_turn_ids(tokenizer, message)
                response += joint
                mask += [0] * len(joint)
                logprobs += [0.0] * len(joint)
                turns += 1
        finally:
            await asyncio.to_thread(match.close)
        return AgentLoopOutput(
            prompt_ids=prompt,
            response_ids=response[: self.response_length],
            response_mask=mask[: self.response_length],
            response_logprobs=logprobs[: self.response_length] if sampled else None,
            reward_score=match.match_return,
            num_turns=turns,
            metrics={},
            extra_fields={"ludus_match": match.match, "ludus_refused": match.refused},
        )


def _plain(value: Any) -> Any:
    """``value`` with every mapping in it a plain dict."""
    return {key: _plain(item) for key, item in value.items()} if isinstance(value, Mapping) else value
