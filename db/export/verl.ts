import { rulesText } from "./game-text.ts";
import { jsonString as text } from "./json-text.ts";
import { playedByJson } from "./played-by.ts";
import type { ExportMatch } from "./source.ts";
import { type TurnRow, turnRows } from "./turns-view.ts";

/**
 * `verl.jsonl`: the turns view in the shape verl's RL datasets take — `data_source`, `prompt` (chat
 * messages), `ability`, `reward_model`, `extra_info` — one row per decision.
 */

export function verlLines(entry: ExportMatch, discount: number): { pieces: Iterable<string>; rows: number } {
  const { match } = entry;
  const system = rulesText(match.game, match.gameVersion, match.config);
  const systemMessage = system === null ? "" : `{"role":"system","content":${text(system)}},`;
  const head = `{"data_source":${text(match.game)},"prompt":`;
  const line = (r: TurnRow) => {
    const prompt = r.messages ?? `[${systemMessage}{"role":"user","content":${text(r.prompt)}}]`;
    return `${head}${prompt},"ability":"game","reward_model":{"style":"rule","ground_truth":${
      text(r.action)
    }},"extra_info":{"match_id":${text(r.matchId)},"game_version":${r.gameVersion},"variant":${
      text(r.variant)
    },"turn":${r.turn},"seq":${r.seq},"seat":${r.seat},"role":${text(r.role)}${
      playedByJson(r.playedBy)
    },"legal":${r.legal},"response":${
      text(r.response)
    },"reward":${r.reward},"return":${r.return},"return_to_go":${r.returnToGo},"cursor":${text(r.cursor)}}}\n`;
  };
  return { pieces: Iterator.from(turnRows(entry, discount)).map(line), rows: entry.steps.length };
}
