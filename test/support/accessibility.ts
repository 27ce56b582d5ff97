/// <reference lib="dom" />
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import type { Page } from "playwright-core";

/**
 * What a page offers to people who use assistive technology or a thumb: axe-core's findings, and the targets that
 * fall short of WCAG 2.2's target size.
 */

const AXE = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");

/** axe-core's serious and critical violations on the page as it is now, one line each (rule, count, first nodes). */
export async function seriousViolations(page: Page): Promise<string[]> {
  // Evaluated through the debugging protocol, which the page's Content-Security-Policy does not govern.
  await page.evaluate(AXE);
  return await page.evaluate(async () => {
    // deno-lint-ignore no-explicit-any
    const axe = (globalThis as any).axe;
    const { violations } = await axe.run(document, { resultTypes: ["violations"] });
    return violations
      .filter((v: { impact: string }) => v.impact === "serious" || v.impact === "critical")
      .map((v: { id: string; impact: string; nodes: { target: string[]; failureSummary: string }[] }) =>
        `${v.impact} ${v.id} ×${v.nodes.length}: ${
          v.nodes.slice(0, 3).map((n) => `${n.target.join(" ")} (${n.failureSummary.split("\n")[1]?.trim()})`)
            .join("; ")
        }`
      );
  });
}

/**
 * The visible targets (links, buttons, form controls) under `within` smaller than `min` px either way, as
 * "text width×height". Links inside a sentence are left out, as WCAG 2.2's inline exception allows: an inline
 * link whose paragraph or list item holds more text than the link.
 */
export async function smallTargets(page: Page, min: number, within = "body"): Promise<string[]> {
  return await page.evaluate(({ min, within }) => {
    const inSentence = (el: Element) => {
      const parent = el.parentElement;
      return getComputedStyle(el).display === "inline" && parent !== null && ["P", "LI"].includes(parent.tagName) &&
        (parent.textContent ?? "").trim().length > (el.textContent ?? "").trim().length;
    };
    return [...document.querySelectorAll(`${within} :is(a[href], button, select, input, textarea, summary)`)]
      .filter((el) => !inSentence(el))
      .map((el) => ({ el, box: el.getBoundingClientRect() }))
      .filter(({ box }) => box.width > 0 && box.height > 0 && (box.width < min || box.height < min))
      .map(({ el, box }) =>
        `${el.tagName.toLowerCase()} "${(el.textContent || el.getAttribute("aria-label") || "").trim().slice(0, 24)}" ${
          Math.round(box.width)
        }×${Math.round(box.height)}`
      );
  }, { min, within });
}
