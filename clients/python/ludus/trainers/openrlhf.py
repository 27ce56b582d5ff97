"""Ludus matches as OpenRLHF agents (``openrlhf.utils.agent.AgentInstanceBase``, OpenRLHF 0.8+).

OpenRLHF documents the agent's contract (``--agent_func_path agent_func.py``, whose module defines ``AgentExecutor``;
``MultiTurnAgentExecutor(AgentInstance)`` runs it): for each prompt the executor makes ``AgentInstance()`` with no
arguments, awaits ``reset({"observation": prompt, "label": label})`` for ``{"observation": text}`` (the text the model
continues), then after each generation awaits ``step({"observation_text", "action_text", "label",
"sampling_params"})`` for a dict with ``rewards`` and ``scores`` (tensors), ``environment_feedback`` (text appended
after the model's tokens), ``done``, ``sampling_params`` and ``extra_logs``, until ``done`` or the length budget runs
out. A Ludus agent plays one whole match per prompt::

    # agent_func.py
    from openrlhf.utils.agent import MultiTurnAgentExecutor
    from ludus.trainers import MatchSpec
    from ludus.trainers.openrlhf import ludus_agent_instance

    AgentInstance = ludus_agent_instance(
        MatchSpec("ws://127.0.0.1:2567/bot", TOKEN, "kuhn-poker", opponents={1: "strategy:nash"}), "Qwen/Qwen3-0.6B")

    class AgentExecutor(MultiTurnAgentExecutor):
        def __init__(self, *args, **kwargs):
            super().__init__(AgentInstance)

The dataset's prompt is the instruction as plain text (no ``--apply_chat_template``: the agent renders the
conversation with the model's chat template, the match's first observation in the user message); the label, when
present, is the match's seed. The last step's reward is the seat's return. A match cut off by ``max_length`` before it
ends stays open until the server's clock plays it out, so give ``max_length`` room for whole matches.
"""

from __future__ import annotations

import asyncio
from typing import Any

from .rollout import MatchSpec, SeatRollout, first_messages, next_turn_text, trained_agent

try:
    from openrlhf.utils.agent import AgentInstanceBase
except ImportError:  # OpenRLHF is not installed here: the same methods, for use and tests without it
    AgentInstanceBase = object


def ludus_agent_instance(spec: MatchSpec, tokenizer: Any) -> type:
    """An ``AgentInstance`` class (made with no arguments, as OpenRLHF makes it) whose episodes are matches of
    ``spec``; ``tokenizer`` (a tokenizer, or a model name for ``AutoTokenizer``) renders the conversation as the
    model's chat template does."""
    if isinstance(tokenizer, str):
        from transformers import AutoTokenizer

        tokenizer = AutoTokenizer.from_pretrained(tokenizer)
    agent = trained_agent(tokenizer, {})

    class LudusAgentInstance(AgentInstanceBase):
        """One match of ``spec`` per prompt (see ``ludus.trainers.openrlhf``)."""

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            self.match = SeatRollout(spec, agent)

        async def reset(self, states: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
            label = states.get("label")
            observation = await asyncio.to_thread(self.match.start, None if label in (None, "") else str(label))
            messages = first_messages(str(states.get("observation") or ""), observation)
            text = tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
            return {"observation": text}

        async def step(self, states: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
            import torch

            message = await asyncio.to_thread(self.match.answer, states["action_text"])
            if message is not None:
                reward, feedback = torch.tensor(0.0), next_turn_text(tokenizer, message)
            elif self.match.match_return is not None:  # a match that ended after a reply of the seat has a result
                reward, feedback = torch.tensor(float(self.match.match_return)), ""
            else:
                raise RuntimeError(f"match {self.match.match} ended without a return for seat {spec.seat}")
            return {
                "rewards": reward,
                "scores": reward,
                "environment_feedback": feedback,
                "done": message is None,
                "sampling_params": states.get("sampling_params"),
                "extra_logs": {"ludus_refused": torch.tensor(float(self.match.refused))},
            }

    return LudusAgentInstance
