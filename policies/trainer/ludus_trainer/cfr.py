"""Outcome-sampling CFR+ with a learned baseline (Lanctot et al. 2009; Tammelin 2014; Schmid et al. 2019,
"Variance Reduction in Monte Carlo Counterfactual Regret Minimization") from the server's recorded play only.

Two policies per iteration t:
  - the behaviour ξ_t = (1 − ε)·σ_t + ε·uniform, which the server's self-play seats (`<name>.behaviour`), σ_t being
    regret matching on the accumulated regrets;
  - the average strategy σ̄ (Σ_t t·π_own^{σ_t}(I)·σ_t(I), normalised), the policy `<name>` that is evaluated and
    played in the league: CFR's guarantee is on the average, not on σ_t.
From one batch of N matches of ξ_t, each match's decisions in order (both seats' rows: the trainer sees the whole
sampled trajectory), the learner forms the usual outcome-sampling estimate of every sampled information state's
counterfactual regrets. The trainer wrote ξ_t and σ_t, so every importance weight is exact: the traverser's own
actions are divided by ξ, the other seat's weighted by σ/ξ. A baseline b(h, a) per sampled history h — keyed by the
dataset's `state` (every seat's information state at the decision: both private cards and the betting) — replaces
each unsampled action's zero by b and corrects the sampled one (the estimate stays unbiased; its variance falls
several times). An earlier key, the information state with the other seat's latest earlier one, missed the other's
card at the first mover's first decision: on a simulator of Kuhn poker it reached 0.0019 against 0.0009 after 2M
matches. Regrets are floored at zero after each batch (CFR+), the average is weighted by the
iteration.

Tables are keyed by the information-state tensor, so the method needs binary tensors (Kuhn and Leduc poker: one
bit pattern per information state). Both policies are written as exact one-hidden-layer networks (`table_network`):
a ReLU unit per known information state that fires on exactly its bit pattern, its logits behind it; an unknown
state gets uniform play. The learner's tables and baseline travel in the average's ONNX metadata, so a run resumes exactly.

Measured on a simulator of the same rows (docs/training.md), 100 matches a step, 3 seeds: Kuhn 0.0021–0.0023 after
300k matches, 0.0007–0.0012 after 1M, 0.0008–0.0009 after 2M. With the earlier key and 1,000 matches a step: Kuhn
0.002 after 3.3M; Leduc 0.087 after 736k, 0.041 after 2.2M, 0.013 after 20M.
"""

from __future__ import annotations

import io
from dataclasses import dataclass

import numpy as np
import torch

from .network import PolicyNet

STATE_KEY = "ludus.cfr.state"


@dataclass
class CfrConfig:
    exploration: float = 0.1
    # The baseline moves this far towards a batch's mean return at each sampled (history, action).
    baseline_rate: float = 0.5
    # Iteration t's strategy enters the average with weight t ** average_power.
    average_power: float = 1.0


def regret_matching(regret: np.ndarray, legal: np.ndarray) -> np.ndarray:
    positive = np.where(legal, np.maximum(regret, 0.0), 0.0)
    total = positive.sum(1, keepdims=True)
    uniform = legal / np.maximum(legal.sum(1, keepdims=True), 1)
    return np.where(total > 0, positive / np.where(total > 0, total, 1), uniform)


def table_network(tensors: np.ndarray, probabilities: np.ndarray, legal: np.ndarray) -> PolicyNet:
    """A network that plays `probabilities[i]` on exactly the binary tensor `tensors[i]` and uniformly elsewhere."""
    count, inputs = tensors.shape
    net = PolicyNet(inputs, probabilities.shape[1], (max(count, 1),), "relu")
    weights = np.zeros((max(count, 1), inputs))
    bias = np.full(max(count, 1), -1.0)  # a padding unit (no state known yet) never fires
    weights[:count] = 2 * tensors - 1
    bias[:count] = 1 - tensors.sum(1)
    logits = np.where(legal, np.log(np.maximum(probabilities, 1e-30)), 0.0)
    out = np.zeros((probabilities.shape[1], max(count, 1)))
    out[:, :count] = logits.T
    hidden, output = net.linears
    with torch.no_grad():
        hidden.weight.copy_(torch.tensor(weights))
        hidden.bias.copy_(torch.tensor(bias))
        output.weight.copy_(torch.tensor(out))
        output.bias.zero_()
    return net


class CfrLearner:
    def __init__(self, inputs: int, actions: int, config: CfrConfig, state: bytes | None = None) -> None:
        self.config = config
        self.inputs = inputs
        self.actions = actions
        self.keys: dict[bytes, int] = {}
        self.tensors = np.zeros((0, inputs))
        self.legal = np.zeros((0, actions), bool)
        # The seat's previous information state and action on the way to each one (-1: the seat's first decision).
        self.parent = np.zeros(0, np.int64)
        self.parent_action = np.zeros(0, np.int64)
        self.regret = np.zeros((0, actions))
        self.average = np.zeros((0, actions))
        self.iterations = 0
        self.baseline_keys: dict[bytes, int] = {}
        self.baseline = np.zeros((0, actions))
        if state is not None:
            self._load(state)

    # -- the tables -------------------------------------------------------------------------------------------------

    def _intern(self, tensor: np.ndarray, legal: np.ndarray, parent: int, parent_action: int) -> int:
        key = tensor.astype(np.uint8).tobytes()
        index = self.keys.get(key)
        if index is not None:
            return index
        index = len(self.keys)
        self.keys[key] = index
        self.tensors = np.vstack([self.tensors, tensor[None]])
        self.legal = np.vstack([self.legal, legal[None]])
        self.parent = np.append(self.parent, parent)
        self.parent_action = np.append(self.parent_action, parent_action)
        self.regret = np.vstack([self.regret, np.zeros((1, self.actions))])
        self.average = np.vstack([self.average, np.zeros((1, self.actions))])
        return index

    def _baseline_row(self, history: bytes) -> int:
        row = self.baseline_keys.setdefault(history, len(self.baseline_keys))
        if row == len(self.baseline):
            self.baseline = np.vstack([self.baseline, np.zeros((1, self.actions))])
        return row

    def strategy(self) -> np.ndarray:
        return regret_matching(self.regret, self.legal)

    def behaviour(self) -> np.ndarray:
        uniform = self.legal / np.maximum(self.legal.sum(1, keepdims=True), 1)
        return (1 - self.config.exploration) * self.strategy() + self.config.exploration * uniform

    def average_strategy(self) -> np.ndarray:
        total = self.average.sum(1, keepdims=True)
        uniform = self.legal / np.maximum(self.legal.sum(1, keepdims=True), 1)
        return np.where(total > 0, self.average / np.where(total > 0, total, 1), uniform)

    def own_reach(self, sigma: np.ndarray) -> np.ndarray:
        """π_own^σ(I) for every known state: a state is interned after its parent, so one pass in index order."""
        reach = np.ones(len(self.keys))
        for i in range(len(reach)):
            if self.parent[i] >= 0:
                reach[i] = reach[self.parent[i]] * sigma[self.parent[i], self.parent_action[i]]
        return reach

    # -- one iteration ----------------------------------------------------------------------------------------------

    def update(
        self,
        obs: np.ndarray,
        mask: np.ndarray,
        action: np.ndarray,
        seat_return: np.ndarray,
        match: np.ndarray,
        seat: np.ndarray,
        seq: np.ndarray,
        state: np.ndarray,
    ) -> None:
        """One CFR+ iteration from every decision of the batch's matches, all played by the current behaviour;
        `state` (every seat's tensor per decision) keys the baseline by the history."""
        # The strategies that played: those of the tables before this batch (a state first met now played uniformly,
        # as the exported table network does for a tensor it does not know).
        played_sigma, played_xi = self.strategy(), self.behaviour()
        order = np.lexsort((seq, match.astype(str)))
        obs, mask, action = obs[order], mask[order].astype(bool), action[order]
        seat_return, match, seat = seat_return[order], match[order], seat[order]
        state = state[order].astype(np.uint8)
        bounds = np.flatnonzero(np.r_[True, match[1:] != match[:-1], True])
        matches = len(bounds) - 1
        # Intern every state first (in each match's order, so parents come before children).
        states = np.empty(len(order), np.int64)
        history = np.empty(len(order), np.int64)
        for m in range(matches):
            last: dict[int, tuple[int, int]] = {}
            for k in range(bounds[m], bounds[m + 1]):
                p = int(seat[k])
                parent, parent_action = last.get(p, (-1, -1))
                states[k] = self._intern(obs[k], mask[k], parent, parent_action)
                last[p] = (int(states[k]), int(action[k]))
                history[k] = self._baseline_row(state[k].tobytes())
        known = len(self.keys)
        uniform = self.legal / np.maximum(self.legal.sum(1, keepdims=True), 1)
        sigma = np.vstack([played_sigma, uniform[len(played_sigma):known]])
        xi = np.vstack([played_xi, uniform[len(played_xi):known]])
        regret_delta = np.zeros((known, self.actions))
        sums = np.zeros_like(self.baseline)
        counts = np.zeros_like(self.baseline)
        for m in range(matches):
            k0, k1 = bounds[m], bounds[m + 1]
            # Seat 0's return (zero-sum: seat 1's is its negation); every value below is in seat 0's units.
            value = float(seat_return[k0] if seat[k0] == 0 else -seat_return[k0])
            weights = np.empty((k1 - k0, 2))
            w = np.ones(2)
            for k in range(k0, k1):
                weights[k - k0] = w
                i, a, p = states[k], action[k], seat[k]
                w[p] /= xi[i, a]
                w[1 - p] *= sigma[i, a] / xi[i, a]
            for k in range(k1 - 1, k0 - 1, -1):
                i, a, p, h = states[k], action[k], seat[k], history[k]
                legal = self.legal[i]
                estimates = np.where(legal, self.baseline[h], 0.0)
                estimates[a] += (value - self.baseline[h, a]) / xi[i, a]
                sums[h, a] += value
                counts[h, a] += 1
                expected = float(sigma[i] @ estimates)
                sign = 1.0 if p == 0 else -1.0
                regret_delta[i] += np.where(legal, sign * weights[k - k0, p] * (estimates - expected), 0.0)
                value = expected
        seen = counts > 0
        rate = self.config.baseline_rate
        self.baseline[seen] = (1 - rate) * self.baseline[seen] + rate * sums[seen] / counts[seen]
        self.regret = np.maximum(self.regret + regret_delta / max(matches, 1), 0.0)
        self.iterations += 1
        weight = self.iterations ** self.config.average_power
        self.average += weight * self.own_reach(sigma)[:, None] * sigma

    # -- the policies and the state ---------------------------------------------------------------------------------

    def networks(self) -> tuple[PolicyNet, PolicyNet]:
        """The behaviour to play next and the average strategy."""
        return (
            table_network(self.tensors, self.behaviour(), self.legal),
            table_network(self.tensors, self.average_strategy(), self.legal),
        )

    def state(self) -> bytes:
        buffer = io.BytesIO()
        np.savez_compressed(
            buffer,
            tensors=self.tensors.astype(np.uint8),
            legal=self.legal,
            parent=self.parent,
            parent_action=self.parent_action,
            regret=self.regret,
            average=self.average,
            iterations=np.array(self.iterations),
            # The baseline too: a resumed run without it is a run whose first steps are noisier than the one it
            # continues (the rows of `baseline_histories` are its keys, in row order).
            baseline_histories=(
                np.stack([np.frombuffer(key, np.uint8) for key in self.baseline_keys])
                if self.baseline_keys else np.zeros((0, 0), np.uint8)
            ),
            baseline=self.baseline,
        )
        return buffer.getvalue()

    def _load(self, state: bytes) -> None:
        with np.load(io.BytesIO(state)) as saved:
            self.tensors = saved["tensors"].astype(np.float64)
            self.legal = saved["legal"]
            self.parent = saved["parent"]
            self.parent_action = saved["parent_action"]
            self.regret = saved["regret"]
            self.average = saved["average"]
            self.iterations = int(saved["iterations"])
            if "baseline" in saved:  # versions written before the baseline was kept start it afresh
                self.baseline = saved["baseline"]
                self.baseline_keys = {row.tobytes(): i for i, row in enumerate(saved["baseline_histories"])}
        self.keys = {t.astype(np.uint8).tobytes(): i for i, t in enumerate(self.tensors)}
