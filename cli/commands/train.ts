import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { randomBytes } from "node:crypto";
import { createInterface } from "node:readline";
import process from "node:process";
import { type Command, InvalidArgumentError, Option } from "commander";
import { configure } from "../../games/core/config.ts";
import { games, getGame, numericInfo } from "../../games/registry.ts";
import type { PolicyRecord } from "../../db/policies.ts";
import { POLICY_DEVICES, type PolicyDevice } from "../../policies/onnx/network.ts";
import type { PolicyRuntime } from "../../policies/onnx/runtime.ts";
import { strategiesFor } from "../../policies/baselines/index.ts";
import { simulate, type SimulationSummary } from "../../policies/simulate.ts";
import { roundsPerMatch } from "../../policies/crossplay.ts";
import type { AnyGame } from "../../games/core/game.ts";
import { startServer } from "../../server/app.ts";
import { seatingFor, SelfPlay } from "../../server/league/self-play.ts";
import {
  defaultMethod,
  type Method,
  methodRefusal,
  METHODS,
  notTabular,
  sharedPolicy,
} from "../../policies/training.ts";
import { ConfigError } from "../../games/core/config.ts";
import { type Io, processIo } from "../io.ts";
import { integerIn, storeLocation } from "../options.ts";
import { measurePolicy } from "./exploitability.ts";

/**
 * `ludus train`: the whole loop on one machine. A server (on the given store) plays self-play matches of the
 * learning policy's latest version against itself and its past versions; the Python trainer
 * (policies/trainer) pulls what was played from the tensors dataset, updates, and registers each new version
 * over HTTP, which the next matches seat. Every version is evaluated exactly where the game allows it; the
 * run's curve is written as JSON and PNG.
 */

interface TrainFlags {
  game: string;
  variant?: string;
  name: string;
  minutes: number;
  versions?: number;
  dataDir: string;
  databaseUrl?: string;
  device: PolicyDevice;
  live: number;
  matchesPerVersion?: number;
  method?: Method;
  snapshots: number;
  out?: string;
  python?: string;
  json?: boolean;
}

/** The trainer could not be run, or stopped with an error (its own message precedes this one). */
export class TrainError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "TrainError";
  }
}

/** One point of the run's curve: a registered version and what it scores. */
interface CurvePoint {
  readonly version: number;
  readonly id: string;
  readonly seconds: number;
  /** Matches and decisions played so far, the learner's and its opponents'. */
  readonly matches: number;
  readonly decisions: number;
  /** Zero-sum poker: NashConv / 2 of the version, exactly. */
  readonly exploitability?: number;
  /**
   * General-sum games: the seats' mean reward per round (per match where the game has no rounds) when the versions
   * meet, playing greedily, and against the game's exploiter (always-defect, else greedy) in its other seat.
   */
  readonly welfare?: number;
  readonly againstExploiter?: number;
}

/** The built-in that exploits a trusting policy, by game: the first of these the game has. */
const EXPLOITERS = ["always-defect", "greedy"];

/** Evaluates a general-sum run's versions: 500 seeded matches per figure. */
function welfareJudge(policies: PolicyRuntime, game: AnyGame, variant: string, name: string) {
  const { config } = configure(game, {}, variant);
  const seats = game.seatCount(config);
  const rounds = roundsPerMatch(config) ?? 1;
  const exploiter = seats === 2 ? EXPLOITERS.find((e) => strategiesFor(game.id).some((s) => s.name === e)) : undefined;
  const run = (seatsOf: string[]) => simulate({ game, variant, seats: seatsOf, matches: 500, seed: 1, policies });
  const perRound = (summary: SimulationSummary, seat?: number) => {
    const returns = seat === undefined ? summary.meanReturns : [summary.meanReturns[seat]];
    return returns.reduce((a, b) => a + b, 0) / returns.length / rounds;
  };
  return {
    exploiter,
    /** What the exploiter earns against itself: the bar a policy meets against it. */
    exploiterAgainstItself: async () => exploiter ? perRound(await run([exploiter, exploiter])) : undefined,
    async version(version: number): Promise<Pick<CurvePoint, "welfare" | "againstExploiter">> {
      const mine = Array.from({ length: seats }, (_, s) => `policy:${name}.${s}@${version}:greedy`);
      const welfare = perRound(await run(mine));
      if (!exploiter) return { welfare };
      const against = await Promise.all(
        [0, 1].map(async (seat) => perRound(await run(seat === 0 ? [mine[0], exploiter] : [exploiter, mine[1]]), seat)),
      );
      return { welfare, againstExploiter: (against[0] + against[1]) / 2 };
    },
  };
}

/** The Python that runs the trainer: --python, $LUDUS_PYTHON, the project's .venv, else python3. */
function pythonPath(flag: string | undefined): string {
  if (flag) return flag;
  if (process.env.LUDUS_PYTHON) return process.env.LUDUS_PYTHON;
  const venv = resolve(".venv/bin/python");
  return existsSync(venv) ? venv : "python3";
}

/**
 * The trainer's Python, checked before a server starts for it: that it runs, has the trainer's packages, and sees
 * `device`. Each failure is one sentence saying what to run.
 */
function trainerPython(flag: string | undefined, device: PolicyDevice): string {
  const python = pythonPath(flag);
  const check = spawnSync(python, ["-m", "ludus_trainer.check", "--device", device], {
    cwd: TRAINER_DIR,
    env: { ...process.env, PYTHONPATH: TRAINER_DIR },
    encoding: "utf8",
  });
  if (check.error) {
    throw new TrainError(`cannot run the trainer's Python (${python}): ${check.error.message}; ${setup()}`);
  }
  if (check.status === 3) {
    const { missing } = JSON.parse(check.stdout.trim().split("\n").at(-1)!) as { missing: string[] };
    throw new TrainError(`the trainer's Python (${python}) lacks ${missing.join(", ")}; ${setup()}`);
  }
  if (check.status !== 0) {
    const said = check.stderr.trim().split("\n").at(-1) ?? "";
    throw new TrainError(said.replace(/^ludus-trainer: error: /, "") || `${python} -m ludus_trainer.check failed`);
  }
  return python;
}

/** What to run to set up the trainer's Python: the project's .venv, as `npm test` makes it (cli/python-env.mjs). */
function setup(): string {
  return `set it up with \`node cli/python-env.mjs\` in ${resolve(TRAINER_DIR, "../..")}, or give --python`;
}

function shareOf(value: string): number {
  const share = Number(value);
  if (value.trim() === "" || !(share >= 0 && share <= 1)) {
    throw new InvalidArgumentError("expected a number in [0, 1].");
  }
  return share;
}

const TRAINER_DIR = resolve(new URL("../../policies/trainer", import.meta.url).pathname);

export function registerTrain(program: Command, io: Io): void {
  program
    .command("train")
    .description("self-play training on one machine: matches played here, a PyTorch trainer updating the policy")
    .addOption(new Option("--game <id>", "the game").choices(games.map((g) => g.id)).makeOptionMandatory())
    .option("--variant <name>", "a variant of the game (default: the game's default variant)")
    .requiredOption("--name <name>", "the learning policy's name: resumed from its last version if it exists")
    .option("--minutes <m>", "how long to train", integerIn(1, 100_000), 10)
    .option("--versions <n>", "... or stop once this many new versions are registered", integerIn(1, 10_000_000))
    .option("--data-dir <dir>", "the data directory whose store keeps the matches and the policy", "data")
    .option("--database-url <url>", "a PostgreSQL store instead (default: $DATABASE_URL, unless --data-dir is given)")
    .addOption(
      new Option("--device <device>", "where the trainer learns (the server's self-play networks run on CPU)")
        .choices(POLICY_DEVICES).default("cpu"),
    )
    .option("--live <k>", "self-play matches kept running at once", integerIn(1, 10_000), 64)
    .option("--snapshots <share>", "the share of matches against a past version (default 0)", shareOf, 0)
    .option(
      "--matches-per-version <n>",
      "self-play matches each learning step reads (default 100 with cfr, 5000 with mmd, 384 with adalign and ppo)",
      integerIn(10, 10_000_000),
    )
    .addOption(
      new Option(
        "--method <method>",
        "cfr: outcome-sampling CFR+ for two-player zero-sum games small enough to tabulate, the average strategy as " +
          "<name> and the policy self-play samples with as <name>.behaviour (the default where it qualifies); mmd: " +
          "sampled magnetic mirror descent, one network, for two-player zero-sum games (the default for the others " +
          "of them); adalign: a policy per seat, <name>.0, <name>.1, " +
          "..., PPO with Advantage Alignment (default for the others); ppo: as adalign without the alignment term " +
          "(naive PPO, for comparison)",
      ).choices(METHODS),
    )
    .option("--out <dir>", "where the curve (JSON and PNG) goes (default: <data-dir>/runs/<run>)")
    .option("--python <path>", "the Python with the trainer's packages (default: $LUDUS_PYTHON, ./.venv, python3)")
    .option("--json", "print exactly one JSON object with the result on stdout")
    .action(async (flags: TrainFlags, command: Command) => {
      const game = getGame(flags.game);
      const { variant, config } = configure(game, {}, flags.variant);
      const face = numericInfo(game, config);
      if ("numericFace" in face) throw new ConfigError([`it has no numeric face: ${face.numericFace}`], game.id);
      const method = flags.method ?? defaultMethod(game, variant);
      const refusal = methodRefusal(method, game, variant);
      if (refusal) throw new TrainError(refusal);
      const python = trainerPython(flags.python, flags.device);
      const run = `run-${new Date().toISOString().replace(/[-:]/g, "").slice(0, 15)}-${randomBytes(3).toString("hex")}`;
      const out = flags.out ?? join(flags.dataDir, "runs", run);
      mkdirSync(out, { recursive: true });
      const location = storeLocation(flags, command);
      const server = await startServer({
        port: 0,
        host: "127.0.0.1",
        dataDir: location.dataDir,
        databaseUrl: location.databaseUrl,
        fillAfterMs: null,
        // A private server (loopback, its admin token the trainer's alone) playing the versions its own trainer writes,
        // a few every step: in this process, as a process of their own each would cost more than the step.
        policies: { isolated: false },
      });
      const admin = await server.tokens.create(`trainer-${run}`, "admin");
      const perSeat = !sharedPolicy(method);
      const perVersion = flags.matchesPerVersion ?? { cfr: 100, mmd: 5000, adalign: 384, ppo: 384 }[method];
      const selfPlay = new SelfPlay(server.matches, server.policies, {
        game,
        variant,
        name: flags.name,
        live: flags.live,
        perVersion,
        snapshotShare: flags.snapshots,
        ...seatingFor(game, variant, perSeat),
      });
      // A step registers its seats' policies in seat order: the last seat's comes last.
      const last = `${flags.name}${perSeat ? `.${game.seatCount(config) - 1}` : ""}`;
      const started = performance.now();
      const curve: CurvePoint[] = [];
      const evaluations: Promise<void>[] = [];
      // A shared policy's versions are evaluated exactly where the tree is small enough to walk at every version.
      const analysable = notTabular(game, config) === undefined;
      const judge = welfareJudge(server.policies, game, variant, flags.name);
      const exploiter = perSeat && judge.exploiter
        ? { name: judge.exploiter, againstItself: await judge.exploiterAgainstItself() }
        : undefined;
      const evaluate = (record: PolicyRecord) => {
        const point = {
          version: record.version,
          id: record.id,
          seconds: (performance.now() - started) / 1000,
          matches: selfPlay.ended,
          decisions: selfPlay.decisions,
        };
        const evaluation = (async () => {
          const figures = !perSeat
            ? {
              exploitability: analysable
                ? (await measurePolicy(server.policies, game.id, `policy:${record.name}@${record.version}`, variant))
                  .exploitability
                : undefined,
            }
            : await judge.version(record.version);
          const shown = Object.entries(figures).filter(([, v]) => v !== undefined);
          curve.push({ ...point, ...Object.fromEntries(shown) });
          io.err(
            `ludus train: ${flags.name}@${record.version} after ${
              point.seconds.toFixed(0)
            } s, ${point.matches} matches, ${Math.round(point.decisions / Math.max(point.seconds, 1e-9))} decisions/s${
              shown.map(([k, v]) => `, ${k} ${(v as number).toFixed(4)}`).join("")
            }\n`,
          );
        })();
        // Awaited once the trainer stops; a failure meanwhile is not an unhandled rejection, and ends the run then.
        evaluation.catch(() => {});
        evaluations.push(evaluation);
      };
      // A version is evaluated once all its seats' policies are registered (the last seat's comes last): the first
      // 20, then one whenever the version number has grown by 5 % (long runs register thousands), and the last.
      let latest: PolicyRecord | undefined;
      let evaluated = 0;
      const unsubscribe = server.policies.onRegistered((record) => {
        if (record.name !== last) return;
        latest = record;
        if (record.version < 20 || record.version >= evaluated * 1.05) {
          evaluated = record.version;
          evaluate(record);
        }
      });
      selfPlay.start();
      let exit: number;
      const interruption = stopOnInterrupt(io);
      try {
        exit = await runTrainer(
          python,
          [
            "-m",
            "ludus_trainer",
            "--server",
            server.url,
            "--game",
            game.id,
            "--variant",
            variant,
            "--name",
            flags.name,
            "--minutes",
            String(flags.minutes),
            "--device",
            flags.device,
            "--run",
            run,
            "--matches-per-version",
            String(perVersion),
            "--method",
            method,
            ...(flags.versions ? ["--versions", String(flags.versions)] : []),
          ],
          admin.token,
          io,
          interruption,
        );
      } finally {
        selfPlay.stop();
        unsubscribe();
        if (latest && latest.version !== evaluated) evaluate(latest);
        await Promise.all(evaluations);
        await server.tokens.revoke(admin.record.id);
        await server.close({ drainMs: 5_000 });
        interruption.dispose();
      }
      curve.sort((a, b) => a.version - b.version);
      const curveFile = join(out, "curve.json");
      writeFileSync(
        curveFile,
        JSON.stringify({ game: game.id, variant, name: flags.name, run, exploiter, curve }, null, 2) + "\n",
      );
      if (exit !== 0) throw new TrainError(`the trainer stopped with exit code ${exit}; its message is above`);
      const final = curve.at(-1);
      const plot = await runTrainer(
        python,
        ["-m", "ludus_trainer.plot", curveFile, join(out, "curve.png")],
        "",
        io,
      );
      const result = {
        game: game.id,
        variant,
        name: flags.name,
        run,
        last: final,
        curve: curveFile,
        plot: plot === 0 ? join(out, "curve.png") : null,
      };
      if (flags.json) return io.out(JSON.stringify(result) + "\n");
      io.out(
        `${flags.name}@${final?.version ?? "?"} registered${
          final?.exploitability === undefined ? "" : `, exploitability ${final.exploitability.toFixed(4)}`
        }; curve in ${curveFile}\n`,
      );
    });
}

interface Interruption {
  /** The running trainer, told of a Ctrl-C. */
  trainer?: ChildProcess;
  dispose(): void;
}

/**
 * Ctrl-C ends a run as its time limit does: the trainer stops before its next step (it gets the signal too, from
 * the terminal or from here), and the curve and plot are written. A second Ctrl-C stops at once. Only in the real
 * process: a test's Io has no signals.
 */
function stopOnInterrupt(io: Io): Interruption {
  const state: Interruption = { dispose() {} };
  if (io !== processIo) return state;
  let told = false;
  const listener = () => {
    if (told) Deno.exit(130);
    told = true;
    io.err("ludus train: stopping before the trainer's next step (Ctrl-C again to stop at once)\n");
    state.trainer?.kill("SIGINT");
  };
  Deno.addSignalListener("SIGINT", listener);
  state.dispose = () => Deno.removeSignalListener("SIGINT", listener);
  return state;
}

/** Runs the Python trainer with the token in its environment; its progress goes to stderr. Resolves its exit code. */
function runTrainer(
  python: string,
  args: string[],
  token: string,
  io: Io,
  interruption?: Interruption,
): Promise<number> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(python, args, {
      cwd: TRAINER_DIR,
      env: { ...process.env, LUDUS_TOKEN: token, PYTHONPATH: TRAINER_DIR, PYTHONUNBUFFERED: "1" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    if (interruption) interruption.trainer = child;
    child.on("error", (error) =>
      reject(
        new TrainError(
          `cannot run the trainer's Python (${python}): ${error.message}; ${setup()}`,
        ),
      ));
    // Its last word on stdout is its "done" event: an interrupted trainer ends with it too. (Deno's child_process
    // may report the signal it sent in place of the exit code, so the code alone cannot tell.)
    let done = false;
    createInterface({ input: child.stdout! }).on("line", (line) => {
      done = line.startsWith('{"event": "done"');
      io.err(`${line}\n`);
    });
    createInterface({ input: child.stderr! }).on("line", (line) => io.err(`${line}\n`));
    child.on("close", (code) => resolvePromise(code ?? (done ? 0 : 1)));
  });
}
