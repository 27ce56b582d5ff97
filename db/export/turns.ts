import { jsonString as text, jsonText as json, perGame } from "./json-text.ts";
import { playedByJson } from "./played-by.ts";
import type { ExportMatch } from "./source.ts";
import { type TurnRow, turnRows } from "./turns-view.ts";

/**
 * `turns.jsonl`: the turns view, one JSON object per decision. The game-shaped values (observation, action) sit
 * under the game's id, `{"ipd": {...}}`, so a file of several games has one column per game in readers that type
 * columns (pyarrow): a field that is a number in one game and a list in another never meet.
 */

/** One row as a JSON line; JSON-valued fields are spliced in as the store printed them. */
export function turnLine(r: TurnRow): string {
  return `{"match_id":${text(r.matchId)},"game":${text(r.game)},"game_version":${r.gameVersion},"variant":${
    text(r.variant)
  },"seat":${r.seat},"role":${text(r.role)}${playedByJson(r.playedBy)},"turn":${r.turn},"seq":${r.seq},"observation":${
    perGame(r.game, r.observation)
  },"prompt":${text(r.prompt)},"messages":${json(r.messages)},"response":${text(r.response)},"action":${
    perGame(r.game, r.action)
  },"legal":${r.legal},"error":${json(r.error)},"attempts":${r.attempts},"defaulted":${
    text(r.defaulted)
  },"latency_ms":${r.latencyMs},"prompt_tokens":${r.promptTokens},"completion_tokens":${r.completionTokens},"reward":${r.reward},"return":${r.return},"return_to_go":${r.returnToGo},"cursor":${
    text(r.cursor)
  }}\n`;
}

/** The lines of one match, one at a time. */
export function turnLines(entry: ExportMatch, discount: number): { pieces: Iterable<string>; rows: number } {
  return { pieces: Iterator.from(turnRows(entry, discount)).map(turnLine), rows: entry.steps.length };
}
