import type { ActionSpace } from "../../games/core/action.ts";
import type { IpdAction, IpdObservation } from "../../games/ipd/game.ts";
import type { MemoryOne } from "../../games/ipd/analysis.ts";
import { type Strategy, type StrategyContext, type StrategyDef, StrategyError } from "../strategy.ts";

/** Classic strategies of the iterated prisoner's dilemma. */

type IpdContext = StrategyContext<IpdAction, IpdObservation>;

const COOPERATE: IpdAction = { type: "cooperate" };
const DEFECT: IpdAction = { type: "defect" };

function inMessagePhase(legal: ActionSpace): boolean {
  return legal[0]?.kind === "text";
}

/** A strategy that moves by `choose` and, when there is talk, says `line`. */
function strategy(name: string, line: string, choose: (ctx: IpdContext) => IpdAction): Strategy {
  return {
    name,
    act: (ctx) => (inMessagePhase(ctx.legal) ? { type: "message", text: line } : choose(ctx as IpdContext)),
  } as Strategy;
}

/** Index of the last round's outcome from this seat's own view: start 0, then CC 1, CD 2, DC 3, DD 4. */
function ownState(obs: IpdObservation, seat: number): number {
  const last = obs.history[obs.history.length - 1];
  if (!last) return 0;
  const own = last.moves[seat] === "D" ? 1 : 0;
  const other = last.moves[1 - seat] === "D" ? 1 : 0;
  return 1 + 2 * own + other;
}

/** Plays a memory-one strategy: p(cooperate) by the last outcome, drawing only when 0 < p < 1. */
export function memoryOne(name: string, line: string, p: (obs: IpdObservation) => MemoryOne): Strategy {
  return strategy(name, line, (ctx) => {
    const obs = ctx.observation();
    const q = p(obs)[ownState(obs, ctx.seat)];
    return q >= 1 || (q > 0 && ctx.rng.float() < q) ? COOPERATE : DEFECT;
  });
}

/**
 * Press & Dyson's zero-determinant extortioner for the match's payoffs: it enforces
 * (own − P) = χ · (other − P) on average. φ is half its largest feasible value, which for the
 * classic 3/0/5/1 game and χ = 3 gives the published extort-3 vector (11/13, 1/2, 7/26, 0).
 */
export function extortion(payoffs: IpdObservation["payoffs"], chi: number): MemoryOne {
  const { reward: R, sucker: S, temptation: T, punishment: P } = payoffs;
  const phiMax = Math.min(
    1 / ((chi - 1) * (R - P) || Infinity),
    1 / (chi * (T - P) + (P - S)),
    1 / (T - P + chi * (P - S)),
  );
  const phi = phiMax / 2;
  return [1, 1 - phi * (chi - 1) * (R - P), 1 - phi * (chi * (T - P) + (P - S)), phi * (T - P + chi * (P - S)), 0];
}

const fixed = (p: MemoryOne) => () => p;

function parseVector(text: string | undefined): MemoryOne {
  const values = (text ?? "").split("/").map((v) => Number(v.trim()));
  if (values.length !== 5 || values.some((v) => !Number.isFinite(v) || v < 0 || v > 1)) {
    throw new StrategyError(
      "strategy `memory-one` takes five probabilities of cooperating, separated by /, each in [0, 1]: " +
        `start/CC/CD/DC/DD (own move first), got ${JSON.stringify(text ?? "")}`,
    );
  }
  return values as unknown as MemoryOne;
}

export const ipdStrategies: readonly StrategyDef[] = [
  {
    name: "always-cooperate",
    game: "ipd",
    description: "always cooperates",
    create: () => memoryOne("always-cooperate", "I will cooperate.", fixed([1, 1, 1, 1, 1])),
  },
  {
    name: "always-defect",
    game: "ipd",
    description: "always defects",
    create: () => memoryOne("always-defect", "I will defect.", fixed([0, 0, 0, 0, 0])),
  },
  {
    name: "tit-for-tat",
    game: "ipd",
    description: "cooperates first, then copies the other player's last move",
    create: () => memoryOne("tit-for-tat", "I will do what you did last.", fixed([1, 1, 0, 1, 0])),
  },
  {
    name: "win-stay-lose-shift",
    game: "ipd",
    description: "cooperates first, keeps its move after a good outcome (R or T), switches after a bad one (S or P)",
    create: () => memoryOne("win-stay-lose-shift", "Let's both cooperate.", fixed([1, 1, 0, 0, 1])),
  },
  {
    name: "grim-trigger",
    game: "ipd",
    description: "cooperates until the other player defects once, then defects forever",
    create: () =>
      strategy("grim-trigger", "Defect once and I never cooperate again.", (ctx) => {
        const obs = ctx.observation();
        const other = 1 - ctx.seat;
        return obs.history.some((h) => h.moves[other] === "D") ? DEFECT : COOPERATE;
      }),
  },
  {
    name: "extort",
    game: "ipd",
    description: "zero-determinant extortioner (Press & Dyson): cooperates first, then enforces " +
      "(own − P) = χ·(other − P) on average",
    arg: { name: "chi", description: "the extortion factor χ > 1", default: "3" },
    create: (arg) => {
      const chi = Number(arg);
      if (!(chi > 1) || !Number.isFinite(chi)) {
        throw new StrategyError(`strategy \`extort\` takes an extortion factor χ > 1, got ${JSON.stringify(arg)}`);
      }
      return memoryOne(`extort:${chi}`, "Cooperate with me and we both do well.", (obs) => extortion(obs.payoffs, chi));
    },
  },
  {
    name: "memory-one",
    game: "ipd",
    description: "any memory-one strategy: p(cooperate) at the start and after CC, CD, DC, DD (own move first)",
    arg: { name: "start/CC/CD/DC/DD", description: "five probabilities in [0, 1]" },
    create: (arg) => {
      const p = parseVector(arg);
      return memoryOne(`memory-one:${p.join("/")}`, "Let's see how this goes.", fixed(p));
    },
  },
];
