import type { Episode } from "../../games/core/episode.ts";
import { type AnyGame, NumericFaceError } from "../../games/core/game.ts";
import { maskIds, shapeSize } from "../../games/core/numeric.ts";
import { numericInfo } from "../../games/registry.ts";
import type { NumericInfo } from "../../protocol/frames.ts";

/**
 * A match's numeric face (tensors and action ids), computed once per match and only for those that ask: its
 * description as the wire states it, and the buffers its tensors and legal masks are read into.
 */
export class NumericFace {
  /** The legal mask's buffer; null where the game has no numeric face for the config. */
  private mask?: Uint8Array | null;
  private face?: NumericInfo;
  private tensor?: Float32Array;

  constructor(private readonly game: AnyGame, private readonly config: unknown) {}

  /** The config's numeric face as the wire states it (or why there is none). */
  get info(): NumericInfo {
    return this.face ??= numericInfo(this.game, this.config);
  }

  /** `seat`'s legal action ids now, where the game has a numeric face for this config. */
  legalIds(episode: Episode, seat: number): number[] | null {
    if (this.mask === undefined) {
      try {
        this.mask = new Uint8Array(this.game.actionCount(this.config));
      } catch (error) {
        if (!(error instanceof NumericFaceError)) throw error;
        this.mask = null;
      }
    }
    return this.mask && maskIds(episode.legalMask(seat, this.mask));
  }

  /**
   * The tensor of `observation` (encoded as the tensors dataset encodes the stored one) and `seat`'s legal ids;
   * undefined where the config has no numeric face.
   */
  encode(
    episode: Episode,
    seat: number,
    observation: unknown,
  ): { readonly tensor: readonly number[]; readonly legalIds: number[] } | undefined {
    const face = this.info;
    if ("numericFace" in face) return undefined;
    const tensor = this.tensor ??= new Float32Array(shapeSize(face.observationShape));
    this.game.encode(observation, tensor);
    return { tensor: Array.from(tensor), legalIds: this.legalIds(episode, seat)! };
  }
}
