import { rulesText } from "./game-text.ts";
import { jsonString as text } from "./json-text.ts";
import { playedByJson } from "./played-by.ts";
import type { ExportMatch } from "./source.ts";
import { type TurnRow, turnRows } from "./turns-view.ts";

/**
 * `verl.jsonl`: the turns view in the shape verl's RL datasets take — `data_source`, `prompt` (chat
 * messages), `ability`, `reward_model`, `extra_info` — one row per decision.
 */

/**
 * An LLM seat's own messages in one shape, `{role, content}` with text content (other content as JSON text, other
 * keys left out): a reader that types columns from its first rows refuses a struct that gains a field later.
 */
function chatMessages(messages: string): string {
  const parsed: unknown = JSON.parse(messages);
  const list = Array.isArray(parsed) ? parsed : [parsed];
  return JSON.stringify(list.map((m) => {
    const { role, content } = (m ?? {}) as { role?: unknown; content?: unknown };
    return {
      role: typeof role === "string" ? role : JSON.stringify(role ?? null),
      content: typeof content === "string" ? content : JSON.stringify(content ?? null),
    };
  }));
}

export function verlLines(entry: ExportMatch, discount: number): { pieces: Iterable<string>; rows: number } {
  const { match } = entry;
  const system = rulesText(match.game, match.gameVersion, match.config);
  const systemMessage = system === null ? "" : `{"role":"system","content":${text(system)}},`;
  const head = `{"data_source":${text(match.game)},"prompt":`;
  const line = (r: TurnRow) => {
    const prompt = r.messages !== null
      ? chatMessages(r.messages)
      : `[${systemMessage}{"role":"user","content":${text(r.prompt)}}]`;
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
