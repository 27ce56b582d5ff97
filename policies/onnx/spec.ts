import { StrategyError } from "../strategy.ts";

/**
 * How a seat names a registered policy: `policy:<name>` (its latest version), `policy:<name>@<version>`,
 * or a policy id; `:greedy` after either plays the most likely legal action instead of sampling.
 */
export interface PolicySpec {
  /** A name, or a policy id. */
  readonly ref: string;
  /** A fixed version; undefined for the latest. */
  readonly version?: number;
  readonly greedy: boolean;
}

export const POLICY_PREFIX = "policy:";
const SPEC = /^policy:([A-Za-z0-9][A-Za-z0-9_.-]{0,63})(?:@(\d{1,9}))?(:greedy)?$/;

export const isPolicySpec = (spec: string): boolean => spec.startsWith(POLICY_PREFIX);

/** Parses a policy seat's spec, or a StrategyError saying what the form is. */
export function parsePolicySpec(spec: string): PolicySpec {
  const match = SPEC.exec(spec);
  if (!match || (match[2] !== undefined && Number(match[2]) < 1)) {
    throw new StrategyError(
      `${JSON.stringify(spec)} is not a policy seat: write policy:<name> (its latest version), ` +
        "policy:<name>@<version> (a version ≥ 1) or policy:<id>, optionally followed by :greedy",
    );
  }
  return { ref: match[1], version: match[2] === undefined ? undefined : Number(match[2]), greedy: !!match[3] };
}

/** The spec a seat record keeps: the exact version that played. */
export const policySeatName = (name: string, version: number, greedy: boolean): string =>
  `${POLICY_PREFIX}${name}@${version}${greedy ? ":greedy" : ""}`;
