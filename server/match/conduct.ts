import type { ConductPolicy } from "../../protocol/frames.ts";

/**
 * The default conduct: two illegal actions forgiven per decision, then the seat's default action;
 * a timeout plays the default action too, so a slow or broken bot costs itself, not the match; a
 * dropped seat is held for 30 s. Research leagues that want a loss instead set `forfeit`.
 */
export const DEFAULT_CONDUCT: ConductPolicy = {
  retries: 2,
  onIllegal: "default",
  onTimeout: "default",
  holdMs: 30_000,
};
