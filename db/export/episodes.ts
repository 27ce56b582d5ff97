import { jsonString as text, jsonTime as time } from "./json-text.ts";
import type { ExportMatch } from "./source.ts";

/**
 * `episodes.jsonl`: one JSON object per match — its record and every decision in `seq` order, the full
 * replay (like a Kaggle environment's episode). The decisions' JSON columns pass through as stored.
 */

export function episodeLine(entry: ExportMatch): { text: string; rows: number } {
  const m = entry.match;
  let steps = "";
  for (const s of entry.steps) {
    steps += `${
      steps ? "," : ""
    }{"seq":${s.seq},"turn":${s.turn},"seat":${s.seat},"observation":${s.observation},"action":${
      JSON.stringify(s.action)
    },"input":${JSON.stringify(s.input ?? null)},"legal":${s.legal},"error":${JSON.stringify(s.error)},"attempts":${
      JSON.stringify(s.attempts)
    },"defaulted":${text(s.defaulted)},"latency_ms":${s.latencyMs},"meta":${JSON.stringify(s.meta)},"rewards":${
      JSON.stringify(s.rewards)
    },"at":${text(s.at)},"prompt":${text(s.prompt)},"legal_ids":${JSON.stringify(s.legalIds)}}`;
  }
  const line = `{"match_id":${text(m.id)},"game":${text(m.game)},"game_version":${m.gameVersion},"variant":${
    text(m.variant)
  },"config":${JSON.stringify(m.config)},"seed":${text(m.seed)},"group":${text(m.group ?? null)},"seats":${
    JSON.stringify(m.seats)
  },"conduct":${JSON.stringify(m.conduct)},"statuses":${JSON.stringify(m.statuses)},"returns":${
    JSON.stringify(m.returns)
  },"end_reason":${text(m.endReason)},"error":${
    text(m.error ?? null)
  },"culprit":${m.culprit},"game_steps":${m.steps},"created_at":${time(m.createdAt)},"started_at":${
    time(m.startedAt)
  },"ended_at":${time(m.endedAt)},"steps":[${steps}],"cursor":${text(entry.cursor)}}\n`;
  return { text: line, rows: 1 };
}
