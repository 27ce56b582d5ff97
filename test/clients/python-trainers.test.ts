import { resolve } from "node:path";
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

/**
 * A tiny random Llama and a word-level tokenizer, no download: the chat template's markers, Kuhn poker's four moves in
 * the form its text asks for ("[bet]"), and a few words of the observations (the rest read as <unk>), so that a random
 * model's replies are sometimes legal moves and often not.
 */
const TINY_MODEL = `
import json, os, sys
os.environ["TRL_EXPERIMENTAL_SILENCE"] = "1"
import torch
from tokenizers import Tokenizer, decoders, models, pre_tokenizers
from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

def tiny_model():
    words = ["<pad>", "<unk>", "<|im_start|>", "<|im_end|>", "system", "user", "assistant", "[check]", "[bet]",
             "[call]", "[fold]", "Kuhn", "poker", "hand", "card", "J", "Q", "K", "Legal", "now:", "or"]
    vocabulary = {word: i for i, word in enumerate(words)}
    level = Tokenizer(models.WordLevel(vocab=vocabulary, unk_token="<unk>"))
    level.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    level.decoder = decoders.WordPiece()
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=level, pad_token="<pad>", unk_token="<unk>", bos_token="<|im_start|>",
        eos_token="<|im_end|>", padding_side="left", name_or_path="ludus-tiny-llama",
        chat_template="{% for m in messages %}<|im_start|> {{ m['role'] }} {{ m['content'] }} <|im_end|> {% endfor %}"
                      "{% if add_generation_prompt %}<|im_start|> assistant {% endif %}",
    )
    torch.manual_seed(0)
    model = LlamaForCausalLM(LlamaConfig(
        vocab_size=len(words), hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4,
        num_key_value_heads=2, max_position_embeddings=8192, pad_token_id=0, bos_token_id=2, eos_token_id=3,
        name_or_path="ludus-tiny-llama",
    ))
    return model, tokenizer

url, token = sys.argv[1], sys.argv[2]
`;

/** Three GRPO steps of 8 rollouts (2 groups of 4) against the Nash strategy; prints what each step saw. */
const GRPO_SCRIPT = `${TINY_MODEL}
import tempfile, time
from trl import GRPOConfig, GRPOTrainer
from ludus.trainers import MatchSpec
from ludus.trainers.trl import ludus_rollout_func, match_return_reward, rollout_dataset

started = time.monotonic()
model, tokenizer = tiny_model()
before = {name: p.detach().clone() for name, p in model.named_parameters()}
rollout = ludus_rollout_func(MatchSpec(url, token, "kuhn-poker", opponents={1: "strategy:nash"}), seed="ci")
batches, rewarded = [], []

def recorded_rollout(prompts, trainer):
    out = rollout(prompts, trainer)
    kept = ("completion_ids", "env_mask", "logprobs", "match_return", "ludus_match", "ludus_refused")
    batches.append({"prompts": len(prompts), **{key: out[key] for key in kept}})
    return out

def recorded_reward(completions, match_return, ludus_match, **kwargs):
    rewards = match_return_reward(completions, match_return, **kwargs)
    rewarded.append([[match, reward] for match, reward in zip(ludus_match, rewards)])
    return rewards

with tempfile.TemporaryDirectory() as out:
    config = GRPOConfig(
        output_dir=out, use_cpu=True, report_to="none", max_steps=3, per_device_train_batch_size=8,
        num_generations=4, max_completion_length=4, learning_rate=0.05, beta=0.0, logging_steps=1,
        save_strategy="no", seed=0, disable_tqdm=True,
    )
    trainer = GRPOTrainer(model, reward_funcs=recorded_reward, args=config, train_dataset=rollout_dataset(64),
                          processing_class=tokenizer, rollout_func=recorded_rollout)
    trainer.train()

changed = sum(float((p.detach() - before[name]).abs().sum()) for name, p in model.named_parameters())
print(json.dumps({
    "steps": trainer.state.global_step, "batches": batches, "rewarded": rewarded, "changed": changed,
    "reward_std": [entry["reward_std"] for entry in trainer.state.log_history if "reward_std" in entry],
    "seconds": time.monotonic() - started, "eos": tokenizer.eos_token_id,
}))
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

/** Runs `script` with the venv's Python, clients/python first on the path, and collects what it prints. */
const runScript = (script: string, ...args: string[]) =>
  runPython(python, ["-c", script, ...args], { env: { PYTHONPATH: resolve(ROOT, "clients/python") } }).done;

/** The runs of 1 in a mask: the model's turns. */
const runsOfOnes = (mask: number[]) => mask.filter((m, i) => m === 1 && mask[i - 1] !== 1).length;

describe.skipIf(!ready)(suite, () => {
  let server: Awaited<ReturnType<typeof startTestServer>>;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(async () => {
    await server?.close();
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
    const run = await runScript(GRPO_SCRIPT, server.wsUrl, await server.token("grpo", "llm"));
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
  }, 240_000);

  it("plays whole matches through verl's agent loop and OpenRLHF's agent, as those frameworks call them", async () => {
    const run = await runScript(FRAMEWORKS_SCRIPT, server.wsUrl, await server.token("frameworks", "llm"));
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
