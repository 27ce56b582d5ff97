"""Plays 100 Kuhn poker matches through the PettingZoo environment, random legal actions in every seat, and prints a
summary. Usage: pettingzoo_kuhn.py ws://127.0.0.1:2567/bot [TOKEN] (the token defaults to $LUDUS_TOKEN)."""

import os
import sys
import time

from ludus.envs.pettingzoo import LudusAECEnv

url, token = sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else os.environ["LUDUS_TOKEN"]
env = LudusAECEnv(url, token, "kuhn-poker", text=False)
totals = {agent: 0.0 for agent in env.possible_agents}
start = time.monotonic()
for episode in range(100):
    env.reset(seed=episode)
    for agent in env.agent_iter():
        observation, reward, termination, truncation, info = env.last()
        totals[agent] += reward
        env.step(None if termination or truncation else env.action_space(agent).sample(observation["action_mask"]))
env.close()
seconds = time.monotonic() - start
print(f"100 matches in {seconds:.2f} s ({100 / seconds:.0f} matches/s); returns: "
      + ", ".join(f"{agent} {total:+g}" for agent, total in totals.items()))
