import { describe, expect, it } from "vitest";
import { configure } from "../../games/core/config.ts";
import { Rng } from "../../games/core/rng.ts";
import { ipd, type IpdConfig } from "../../games/ipd/game.ts";
import { createStrategy } from "../../policies/baselines/index.ts";

describe("the random strategy", () => {
  const { config } = configure<IpdConfig>(ipd, { messages: 1 });
  const state = ipd.init(config, new Rng(1));
  const context = (seat: number) => ({
    seat,
    legal: ipd.legal(state, seat),
    observation: () => ipd.observe(state, seat),
    rng: new Rng(2),
  });

  it("knows its distribution over fixed choices", () => {
    const random = createStrategy("ipd", "random");
    ipd.apply(state, [{ type: "message", text: "hi" }], new Rng(1));
    ipd.apply(state, [undefined, { type: "message", text: "yo" }], new Rng(1));
    expect(random.distribution!(context(0))).toEqual([
      { action: { type: "cooperate" }, probability: 0.5 },
      { action: { type: "defect" }, probability: 0.5 },
    ]);
  });

  it("refuses to state a distribution over a continuum", () => {
    const fresh = ipd.init(config, new Rng(1));
    const random = createStrategy("ipd", "random");
    const ctx = { ...context(0), legal: ipd.legal(fresh, 0) };
    expect(() => random.distribution!(ctx)).toThrow(/only where every legal action is a fixed choice/);
    expect(random.act(ctx)).toMatchObject({ type: "message" });
  });
});
