import type { Action, ActionError, ActionSpace } from "./action.ts";
import { type AnyGame, settleChance, type Viewer } from "./game.ts";
import { GAME_STREAM, Rng, type Seed } from "./rng.ts";

/**
 * The one episode engine: a game, its config and a seed, stepped by the seats' moves, with chance drawn
 * from the seed's game stream as it falls due. Pure (no timers, no I/O): the simulator, the live `Match`,
 * restores, replay views, verification and export all step matches through it, so they cannot disagree.
 */
export class Episode<S = unknown, O = unknown> {
  readonly state: S;
  /** The game's chance, stream GAME_STREAM of the seed. */
  readonly rng: Rng;
  /** Steps taken (a simultaneous step of several seats is one). */
  steps = 0;
  #toAct: readonly number[] = [];

  constructor(
    readonly game: AnyGame,
    readonly config: unknown,
    readonly seed: Seed,
    /** Told every chance outcome as it is drawn (playthroughs print them). */
    private readonly onChance?: (outcome: number, odds: readonly number[]) => void,
  ) {
    this.rng = new Rng(seed, GAME_STREAM);
    this.state = game.start(config);
    this.settle();
  }

  /** Seats to act now; none once the match is over. */
  get toAct(): readonly number[] {
    return this.#toAct;
  }

  get over(): boolean {
    return this.#toAct.length === 0;
  }

  legal(seat: number): ActionSpace {
    return this.game.legal(this.state, seat);
  }

  observe(viewer: Viewer): O {
    return this.game.observe(this.state, viewer);
  }

  parse(input: unknown, seat: number): Action | ActionError {
    return this.game.parse(input, this.state, seat);
  }

  /** Applies one legal action per seat to act (indexed by seat), draws the chance that follows, and returns the rewards. */
  step(moves: readonly (Action | undefined)[]): readonly number[] {
    const rewards = this.game.play(this.state, moves);
    this.steps++;
    this.settle();
    return rewards;
  }

  returns(): readonly number[] {
    return this.game.returns(this.state);
  }

  /** `seat`'s legal mask now, into `out` (length `actionCount`). */
  legalMask(seat: number, out: Uint8Array): Uint8Array {
    this.game.legalMask(this.state, seat, out);
    return out;
  }

  /** `seat`'s information-state tensor now, into `out`: encoded from its observation, so it holds nothing hidden. */
  encode(seat: number, out: Float32Array): Float32Array {
    if (this.game.encodeState) this.game.encodeState(this.state, seat, out);
    else this.game.encode(this.game.observe(this.state, seat), out);
    return out;
  }

  actionId(action: Action, seat: number): number {
    return this.game.actionId(action, this.state, seat);
  }

  actionOf(id: number, seat: number): Action | ActionError {
    return this.game.actionOf(id, this.state, seat);
  }

  private settle(): void {
    settleChance(this.game, this.state, this.rng, this.onChance);
    this.#toAct = this.game.toAct(this.state);
  }
}
