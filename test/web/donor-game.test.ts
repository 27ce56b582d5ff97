/// <reference lib="dom" />
import { describe, expect, it } from "vitest";
import { matchIdOf, nextTurn, screenshot, useBrowser } from "../support/browser.ts";
import { smallTargets } from "../support/accessibility.ts";
import { useTestServer } from "../support/server.ts";

/**
 * A Donor Game played by clicking, as a person chooses it in the lobby, at a phone's and a laptop's size: the donor's
 * control in the first screen on every turn however long the recipient's trace grows, a result that tells the eleven
 * built-in agents apart, and "Play again" that keeps the variant and the opponent.
 */

const TEST_MS = 240_000;
const SIZES = { phone: { width: 390, height: 844 }, laptop: { width: 1280, height: 800 } };
const browser = useBrowser();
const server = useTestServer();

describe("the Donor Game's table", () => {
  for (const [size, viewport] of Object.entries(SIZES)) {
    it(
      `keeps the donor's control in the first screen, numbers the agents, and plays again the same (${size})`,
      async () => {
        const watched = await browser.open(viewport);
        const { page, errors } = watched;
        await page.goto(`${server.url}/`);
        const card = page.locator("article[data-game='donor-game']");
        await card.locator("#donor-game-variant").selectOption("costly-punishment");
        await card.locator("#donor-game-vs").selectOption("reciprocator");
        await card.locator("a[data-action='vs-builtin']").click();
        const first = await matchIdOf(page);

        let seq: string | null = "";
        let turns = 0;
        while ((seq = await nextTurn(page, seq ?? "")) !== null) {
          const donate = page.locator(".action-bar button.action-donate");
          // Where the control lies on the page, scrolled or not: inside the first screen means no scrolling to reach.
          if (turns === 0) await screenshot(page, `donor-game-turn-${size}`);
          const bottom = await donate.evaluate((el) => el.getBoundingClientRect().bottom + scrollY);
          expect(bottom, `turn ${turns + 1}: the Donate button ends at ${bottom} px`).toBeLessThanOrEqual(
            viewport.height,
          );
          if (size === "phone") expect(await smallTargets(page, 44, ".action-bar")).toEqual([]);
          await donate.click();
          turns++;
        }
        expect(turns).toBeGreaterThan(3);

        const returns = await page.locator("[data-result] .returns [data-seat]").allInnerTexts();
        expect(returns).toHaveLength(12);
        const labels = returns.map((r) => r.slice(0, r.lastIndexOf(":")));
        expect(new Set(labels).size, labels.join(", ")).toBe(12);
        expect(labels.filter((l) => /^reciprocator #\d+$/.test(l))).toHaveLength(11);
        await screenshot(page, `donor-game-result-${size}`);

        await page.getByRole("button", { name: "Play again" }).click();
        const again = await matchIdOf(page, first);
        const match = server.server.matches.get(again)!;
        expect(match.variant).toBe("costly-punishment");
        const mine = await page.locator(".seat-card.mine").getAttribute("data-seat");
        const others = Array.from({ length: match.seatCount }, (_, s) => match.participant(s)!)
          .filter((_, s) => String(s) !== mine);
        expect(others.map((p) => `${p.kind}:${p.name}`)).toEqual(Array(11).fill("builtin:reciprocator"));
        expect(errors).toEqual([]);
      },
      TEST_MS,
    );
  }
});
