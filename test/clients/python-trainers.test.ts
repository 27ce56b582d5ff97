import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { lastJsonLine, projectPython, ROOT, runPython } from "../support/python.ts";
import { startTestServer } from "../support/server.ts";

/**
 * ludus.trainers against a real server: a few GRPO steps of TRL's trainer on CPU whose rollouts are Kuhn poker
 * matches, and verl's agent loop and OpenRLHF's agent driven as those frameworks drive them (neither is installed
 * here), all with a tiny randomly initialised model built in the script. Needs the project's .venv with trl (`.ci/run`
 * makes it); without it the suite says so and skips.
 */

const { python, ready, suite } = projectPython(
  ["trl", "transformers", "torch", "datasets", "tokenizers"],
  "trainer rollouts",
);

/** What every script starts with: the tiny offline model the docs build (ludus.trainers.tiny), and the server. */
const TINY_MODEL = `
import json, os, sys
import torch
from ludus.trainers.tiny import tiny_model

url, token = sys.argv[1], sys.argv[2]
`;

/** The GRPO script exactly as docs/train-on-ludus.md gives it: the Python block after its `grpo-tiny` marker. */
function grpoRecipe(): string {
  const doc = readFileSync(resolve(ROOT, "docs/train-on-ludus.md"), "utf8");
  const block = /<!-- grpo-tiny -->\s*```python\n([\s\S]*?)```/.exec(doc);
  if (!block) throw new Error("docs/train-on-ludus.md has no ```python block after <!-- grpo-tiny -->");
  return block[1];
}

/**
 * Runs around the docs' script, without changing it: wraps the functions it imports to record what each of the three
 * GRPO steps saw (the rollouts, the rewards, the progress reports) and the model's weights as built, then prints it.
 */
const GRPO_BEFORE = `
import dataclasses, json, time
import ludus.trainers.tiny as tiny
import ludus.trainers.trl as ludus_trl

started = time.monotonic()
batches, rewarded, reports, built = [], [], [], []
build, rollout_func, reward = tiny.tiny_model, ludus_trl.ludus_rollout_func, ludus_trl.match_return_reward

def recorded_model(*args, **kwargs):
    model, tokenizer = build(*args, **kwargs)
    built.append((model, tokenizer, {name: p.detach().clone() for name, p in model.named_parameters()}))
    return model, tokenizer

def recorded_rollout_func(spec, **options):
    rollout = rollout_func(spec, progress=lambda report: reports.append(dataclasses.asdict(report)), **options)
    def recorded_rollout(prompts, trainer):
        out = rollout(prompts, trainer)
        kept = ("completion_ids", "env_mask", "logprobs", "match_return", "ludus_match", "ludus_refused")
        batches.append({"prompts": len(prompts), **{key: out[key] for key in kept}})
        return out
    return recorded_rollout

def recorded_reward(completions, match_return, ludus_match, **kwargs):
    rewards = reward(completions, match_return, **kwargs)
    rewarded.append([[match, value] for match, value in zip(ludus_match, rewards)])
    return rewards

tiny.tiny_model, ludus_trl.ludus_rollout_func, ludus_trl.match_return_reward = (
    recorded_model, recorded_rollout_func, recorded_reward)
`;

const GRPO_AFTER = `
model, tokenizer, before = built[0]
changed = sum(float((p.detach() - before[name]).abs().sum()) for name, p in model.named_parameters())
print(json.dumps({
    "steps": trainer.state.global_step, "batches": batches, "rewarded": rewarded, "changed": changed,
    "reward_std": [entry["reward_std"] for entry in trainer.state.log_history if "reward_std" in entry],
    "reports": reports, "seconds": time.monotonic() - started, "eos": tokenizer.eos_token_id,
}))
`;

/**
 * The rollout function driven as GRPOTrainer drives it, by a stand-in for the trainer whose generation answers the
 * first turn of both matches with "[check]" and never returns from the second (the opponent always raises, so each
 * match has one): the rollout must end with RolloutTimeout, saying which matches stalled.
 */
const STALL_SCRIPT = `${TINY_MODEL}
import dataclasses, threading
from types import SimpleNamespace
from ludus.trainers import MatchSpec
from ludus.trainers.trl import RolloutTimeout, ludus_rollout_func, rollout_dataset

model, tokenizer = tiny_model()
check = tokenizer.convert_tokens_to_ids(["[check]", "<|im_end|>"])
calls, reports = [], []

class StallingTrainer:
    """What the rollout uses of GRPOTrainer, with a generation that stalls on its second batch."""
    processing_class = tokenizer
    num_generations = num_generations_eval = 2
    accelerator = SimpleNamespace(process_index=0)
    state = SimpleNamespace(global_step=0)
    def __init__(self):
        self.model = model
    def _generate_single_turn(self, prompt_ids, images, multimodal_fields):
        calls.append(len(prompt_ids))
        if len(calls) > 1:
            threading.Event().wait()
        return [list(check) for _ in prompt_ids], None

rollout = ludus_rollout_func(MatchSpec(url, token, "kuhn-poker", opponents={1: "strategy:always-raise"}),
                             seed="stall", match_timeout=float(sys.argv[3]), progress_every=0.5,
                             progress=lambda report: reports.append(dataclasses.asdict(report)))
prompts = list(rollout_dataset(2)["prompt"])
try:
    rollout(prompts, StallingTrainer())
    raised = None
except RolloutTimeout as error:
    raised = str(error)
print(json.dumps({"raised": raised, "calls": calls, "reports": reports}))
`;

/**
 * verl's agent loop, run as verl's AgentLoopWorker runs it (made with the trainer config, server manager, tokenizer
 * and processor and the config entry's keys, then run(sampling_params, raw_prompt=..., extra_info=...)), its server
 * manager generating with the tiny model; and OpenRLHF's agent driven step by step as MultiTurnAgentExecutor.execute
 * drives it. Then the bad inputs.
 */
const FRAMEWORKS_SCRIPT = `${TINY_MODEL}
import asyncio
from types import SimpleNamespace
from ludus import LudusError
from ludus.trainers import MatchSpec
from ludus.trainers.verl import LudusAgentLoop
from ludus.trainers.openrlhf import ludus_agent_instance

model, tokenizer = tiny_model()

def generate(ids, max_new_tokens=4):
    out = model.generate(torch.tensor([ids]), attention_mask=torch.ones(1, len(ids), dtype=torch.long), do_sample=True,
                         max_new_tokens=max_new_tokens, output_scores=True, return_dict_in_generate=True)
    reply = out.sequences[0, len(ids):].tolist()
    logprobs = model.compute_transition_scores(out.sequences, out.scores, normalize_logits=True)[0].tolist()
    end = reply.index(tokenizer.eos_token_id) + 1 if tokenizer.eos_token_id in reply else len(reply)
    return reply[:end], logprobs[:end]

class ServerManager:
    """verl's AsyncLLMServerManager.generate(request_id, *, prompt_ids, sampling_params, image_data=None)."""
    requests = set()
    async def generate(self, request_id, *, prompt_ids, sampling_params, image_data=None):
        self.requests.add(request_id)
        ids, logprobs = generate(prompt_ids)
        return SimpleNamespace(token_ids=ids, log_probs=logprobs)

rollout_config = SimpleNamespace(actor_rollout_ref=SimpleNamespace(rollout=SimpleNamespace(response_length=4096),
                                                                  model=SimpleNamespace(path="/models/tiny-llama")))
entry = {"url": url, "token": token, "game": "kuhn-poker", "opponents": {"1": "strategy:always-call"}}

async def verl_runs():
    outputs = []
    for seed in ["verl-1", "verl-2", "verl-3"]:
        loop = LudusAgentLoop(SimpleNamespace(config=rollout_config), ServerManager(), tokenizer, None, **entry)
        output = await loop.run({"temperature": 1.0, "top_p": 1.0, "logprobs": True},
                                raw_prompt=[{"role": "user", "content": "Play Kuhn poker."}],
                                extra_info={"seed": seed}, agent_name="ludus")
        outputs.append({"seed": seed, **{key: getattr(output, key) for key in (
            "prompt_ids", "response_ids", "response_mask", "response_logprobs", "reward_score", "num_turns",
            "extra_fields")}})
    return outputs

AgentInstance = ludus_agent_instance(MatchSpec(url, token, "kuhn-poker", opponents={1: "strategy:always-call"}),
                                     tokenizer)
# The model served under another name: the spec's agent replaces the one the trainer would declare.
ServedInstance = ludus_agent_instance(MatchSpec(url, token, "kuhn-poker", opponents={1: "strategy:always-call"},
                                                agent={"model": "served-tiny", "sampling": {"temperature": 0.5}}),
                                      tokenizer)

async def openrlhf_execute(prompt, label, instance=AgentInstance):
    """MultiTurnAgentExecutor.execute's loop, the vLLM engine replaced by the tiny model."""
    agent = instance()
    observation = (await agent.reset({"observation": prompt, "label": label}))["observation"]
    tokens = tokenizer(observation, add_special_tokens=False)["input_ids"]
    ranges, total, steps = [], 0.0, 0
    while True:
        action, _ = generate(tokens)
        ranges.append([len(tokens), len(tokens) + len(action)])
        states = {"observation_text": observation, "action_text": tokenizer.decode(action, skip_special_tokens=True),
                  "label": label, "sampling_params": None}
        result = await agent.step(states)
        total += result["rewards"].item()
        steps += 1
        observation = observation + states["action_text"] + result["environment_feedback"]
        tokens = tokens + action + tokenizer(result["environment_feedback"], add_special_tokens=False)["input_ids"]
        if result["done"]:
            break
    return {"label": label, "reward": total, "scores": result["scores"].item(), "steps": steps, "ranges": ranges,
            "tokens": len(tokens), "match": agent.match.match, "refused": result["extra_logs"]["ludus_refused"].item()}

async def main():
    verl = await verl_runs()
    openrlhf = [await openrlhf_execute("Play Kuhn poker.", label) for label in ["orlhf-1", "orlhf-2"]]
    served = await openrlhf_execute("Play Kuhn poker.", "orlhf-served", ServedInstance)
    errors = {}
    try:
        MatchSpec(url, token, "kuhn-poker")
    except ValueError as error:
        errors["no_opponents"] = str(error)
    try:
        bad = LudusAgentLoop(SimpleNamespace(config=rollout_config), ServerManager(), tokenizer, None,
                             **{**entry, "opponents": {1: "strategy:bluff-forever"}})
        await bad.run({}, raw_prompt=[])
    except LudusError as error:
        errors["bad_strategy"] = str(error)
    print(json.dumps({"verl": verl, "openrlhf": openrlhf, "served": served, "errors": errors,
                      "eos": tokenizer.eos_token_id}))

asyncio.run(main())
`;

/** Where the scripts run (the GRPO script's output_dir is relative): the suite's own folder. */
let scratch = tmpdir();

/** Runs `script` with the venv's Python, clients/python first on the path, and collects what it prints. */
const runScript = (script: string, args: string[] = [], env: Record<string, string> = {}) =>
  runPython(python, ["-c", script, ...args], {
    cwd: scratch,
    env: { PYTHONPATH: resolve(ROOT, "clients/python"), TRL_EXPERIMENTAL_SILENCE: "1", HF_HUB_OFFLINE: "1", ...env },
  }).done;

/** The runs of 1 in a mask: the model's turns. */
const runsOfOnes = (mask: number[]) => mask.filter((m, i) => m === 1 && mask[i - 1] !== 1).length;

describe.skipIf(!ready)(suite, () => {
  let server: Awaited<ReturnType<typeof startTestServer>>;
  beforeAll(async () => {
    server = await startTestServer();
    scratch = mkdtempSync(join(tmpdir(), "ludus-trainers-"));
  });
  afterAll(async () => {
    await server?.close();
    rmSync(scratch, { recursive: true, force: true });
  });

  /** The server's record of `match`, which ended. */
  const recorded = async (match: string) => {
    const record = (await server.server.store.match(match))!;
    expect(record, match).toBeDefined();
    expect(record.endReason).toBe("completed");
    return record;
  };
  /** What the server saw of seat 0 in `match`: the answers it was sent (refused ones too) and those it refused. */
  const answers = async (match: string) => {
    const rows = (await server.server.store.steps(match)).filter((row) => row.seat === 0);
    const refused = rows.reduce((n, row) => n + row.attempts.length, 0);
    return { sent: refused + rows.filter((row) => row.defaulted === null).length, refused };
  };

  it("runs GRPO steps whose rollouts are Kuhn poker matches, rewarded with the matches' returns", async () => {
    const script = `${GRPO_BEFORE}\n${grpoRecipe()}\n${GRPO_AFTER}`;
    const run = await runScript(script, [], {
      LUDUS_URL: server.wsUrl,
      LUDUS_TOKEN: await server.token("grpo", "llm"),
    });
    expect(run.code, run.err).toBe(0);
    const grpo = lastJsonLine(run.out);
    console.info(`GRPO: ${grpo.steps} steps, ${grpo.seconds.toFixed(1)} s in Python`);
    expect(grpo.steps).toBe(3);
    expect(grpo.batches).toHaveLength(3);
    const matches = new Set<string>();
    for (const [step, batch] of grpo.batches.entries()) {
      expect(batch.prompts).toBe(8);
      // The reward function saw each rollout's return, as the server recorded it.
      expect(grpo.rewarded[step]).toEqual(batch.ludus_match.map((m: string, i: number) => [m, batch.match_return[i]]));
      const seeds: string[] = [];
      for (const [i, match] of batch.ludus_match.entries()) {
        matches.add(match);
        const record = await recorded(match);
        expect(record.returns![0]).toBe(batch.match_return[i]);
        // The seat is recorded as the model being trained, sampled as the trainer samples; the built-in's is not.
        expect(record.seats[0]).toMatchObject({
          model: "ludus-tiny-llama",
          sampling: { temperature: 1, top_p: 1, max_completion_length: 4 },
        });
        expect(record.seats[0]).not.toHaveProperty("endpoint");
        expect(record.seats[1]).not.toHaveProperty("model");
        seeds.push(record.seed);
        const ids: number[] = batch.completion_ids[i];
        const mask: number[] = batch.env_mask[i];
        expect(mask).toHaveLength(ids.length);
        expect(batch.logprobs).toBeNull(); // transformers' generate gives the trainer none
        // Each of the model's turns is an answer the server got (refused ones included), and the server's text
        // between them is masked out.
        const seen = await answers(match);
        expect(runsOfOnes(mask)).toBe(seen.sent);
        expect(batch.ludus_refused[i]).toBe(seen.refused);
        expect(mask.slice(-1)[0]).toBe(1);
      }
      // The four rollouts of a GRPO group share their match's seed; the two groups do not.
      expect(seeds.slice(0, 4).every((s) => s === seeds[0]) && seeds.slice(4).every((s) => s === seeds[4])).toBe(true);
      expect(seeds[0]).not.toBe(seeds[4]);
    }
    expect(matches.size).toBe(24);
    const rewards = grpo.batches.flatMap((b: { match_return: number[] }) => b.match_return);
    console.info(`GRPO rewards: ${JSON.stringify(rewards)}; reward std per step ${JSON.stringify(grpo.reward_std)}`);
    expect(grpo.reward_std.some((std: number) => std > 0)).toBe(true);
    expect(grpo.changed).toBeGreaterThan(0);
    // The rollout reported its progress after each batch; each step's last report counts what the step played.
    const finals = grpo.reports.filter((r: { generating: boolean; waiting: number }) => !r.generating && !r.waiting);
    expect(finals).toHaveLength(3);
    for (const [step, batch] of grpo.batches.entries()) {
      const masks: number[][] = batch.env_mask;
      expect(finals[step]).toMatchObject({
        matches: 8,
        finished: 8,
        decisions: masks.reduce((n, mask) => n + runsOfOnes(mask), 0),
        tokens: masks.reduce((n, mask) => n + mask.filter((m) => m === 1).length, 0),
      });
    }
    // And to its logger, which the docs' script shows at INFO.
    expect(run.err).toMatch(
      /ludus rollout step \d+: 8\/8 matches finished, \d+ decisions, \d+ tokens in [\d.]+ s \([\d.]+ tokens\/s\)/,
    );
  }, 420_000);

  it("ends a rollout whose generation stalls with RolloutTimeout, naming the matches, and ends them", async () => {
    const run = await runScript(STALL_SCRIPT, [server.wsUrl, await server.token("stall", "llm"), "3"]);
    expect(run.code, run.err).toBe(0);
    const { raised, calls, reports } = lastJsonLine(run.out);
    // The first batch was answered, the second never returned.
    expect(calls).toEqual([2, 2]);
    expect(reports[0]).toMatchObject({ matches: 2, finished: 0, waiting: 2, turns: 1, decisions: 2, tokens: 4 });
    // The first match to run out of time is named (the other started a moment later, and may be named with it).
    const named =
      /^([12]) of 2 matches \(([^)]+)\) had not ended 3 s after they started: the model was still generating turn 2 for 2 matches; 0 had finished, 2 decisions, 4 tokens in [\d.]+ s\. Raise match_timeout/
        .exec(raised);
    expect(named, raised).not.toBeNull();
    expect(named![2].split(", ")).toHaveLength(Number(named![1]));
    // Both matches were ended on the server, each after the seat's one answer (a check, which the opponent raised).
    await server.server.store.writer.drain();
    const ended = await server.server.store.endedMatches({ participant: "stall" }, 10);
    expect(ended.map((m) => m.id)).toEqual(expect.arrayContaining(named![2].split(", ")));
    expect(ended).toHaveLength(2);
    for (const id of ended.map((m) => m.id)) {
      const record = (await server.server.store.match(id))!;
      expect(record.endReason, id).toBe("aborted");
      expect(record.endedAt, id).toBeTruthy();
      const steps = await server.server.store.steps(id);
      // Then the seat left (no action): the rollout ended the match.
      expect(steps.filter((row) => row.seat === 0).map((row) => row.action)).toEqual([{ type: "check" }, null]);
      expect(steps.filter((row) => row.seat === 1).map((row) => row.action)).toEqual([{ type: "bet" }]);
    }
  }, 180_000);

  it("plays whole matches through verl's agent loop and OpenRLHF's agent, as those frameworks call them", async () => {
    const run = await runScript(FRAMEWORKS_SCRIPT, [server.wsUrl, await server.token("frameworks", "llm")]);
    expect(run.code, run.err).toBe(0);
    const { verl, openrlhf, served, errors } = lastJsonLine(run.out);
    for (const output of verl) {
      const record = await recorded(output.extra_fields.ludus_match);
      // verl's model path, and the sample's sampling parameters with the rollout's response length.
      expect(record.seats[0]).toMatchObject({
        model: "/models/tiny-llama",
        sampling: { temperature: 1, top_p: 1, response_length: 4096 },
      });
      expect(record.seats[0]!.sampling).not.toHaveProperty("logprobs");
      expect(record.seed).toBe(output.seed);
      expect(output.reward_score).toBe(record.returns![0]);
      expect(output.response_mask).toHaveLength(output.response_ids.length);
      expect(output.response_logprobs).toHaveLength(output.response_ids.length);
      // Each of the model's turns is an answer the server got, the server's messages between them masked out.
      const seen = await answers(record.id);
      expect(runsOfOnes(output.response_mask)).toBe(seen.sent);
      expect(output.extra_fields.ludus_refused).toBe(seen.refused);
      expect(output.num_turns).toBe(2 * seen.sent);
    }
    for (const episode of openrlhf) {
      const record = await recorded(episode.match);
      expect(record.seed).toBe(episode.label);
      expect(record.seats[0]).toMatchObject({ model: "ludus-tiny-llama" }); // the tokenizer's name
      expect(record.seats[0]).not.toHaveProperty("sampling");
      expect(episode.reward).toBe(record.returns![0]);
      expect(episode.scores).toBe(record.returns![0]);
      expect(episode.ranges).toHaveLength(episode.steps);
      const seen = await answers(record.id);
      expect(episode.steps).toBe(seen.sent);
      expect(episode.refused).toBe(seen.refused);
    }
    const overridden = await recorded(served.match);
    expect(overridden.seats[0]).toMatchObject({ model: "served-tiny", sampling: { temperature: 0.5 } });
    expect(errors.no_opponents).toContain("MatchSpec needs opponents for every seat but the model's");
    expect(errors.bad_strategy).toMatch(/unknown strategy `bluff-forever` for kuhn-poker \(strategies: .*nash/);
  }, 120_000);
});
