/// <reference lib="dom" />
import type { IpdObservation } from "./game.ts";
import { ChatLog, Totals } from "../../web/src/table/chat-log.tsx";
import type { GameTable, TableProps } from "../../web/src/tables/types.ts";

/** The prisoner's dilemma: the payoff matrix, every round's two moves and payoffs, and any messages. */
function Board({ obs, seat, names }: TableProps<IpdObservation>) {
  const me = seat ?? 0;
  const other = 1 - me;
  const p = obs.payoffs;
  const word = { C: "Cooperate", D: "Defect" } as const;
  return (
    <div class="ipd">
      <div class="status-line">
        {obs.phase === "over"
          ? `All ${obs.rounds} rounds played`
          : `Round ${obs.round} of ${obs.rounds}${obs.phase === "message" ? ": messages" : ""}`}
      </div>
      <Totals totals={obs.totals} names={names} seat={seat} />
      <table class="payoff-matrix" aria-label="Payoffs (yours, theirs)">
        <thead>
          <tr>
            <th>{seat === null ? names[0] : "You"} \ {seat === null ? names[1] : names[other]}</th>
            <th>Cooperate</th>
            <th>Defect</th>
          </tr>
        </thead>
        <tbody>
          <tr>
            <th>Cooperate</th>
            <td>{p.reward}, {p.reward}</td>
            <td>{p.sucker}, {p.temptation}</td>
          </tr>
          <tr>
            <th>Defect</th>
            <td>{p.temptation}, {p.sucker}</td>
            <td>{p.punishment}, {p.punishment}</td>
          </tr>
        </tbody>
      </table>
      <table class="history" aria-label="Rounds played">
        <thead>
          <tr>
            <th>Round</th>
            <th>{names[me]}</th>
            <th>{names[other]}</th>
            <th>Payoffs</th>
          </tr>
        </thead>
        <tbody>
          {obs.history.map((h, i) => (
            <tr key={i} class="round-result">
              <td>{i + 1}</td>
              <td class={`move move-${h.moves[me]}`}>{word[h.moves[me]]}</td>
              <td class={`move move-${h.moves[other]}`}>{word[h.moves[other]]}</td>
              <td>{h.rewards[me]} : {h.rewards[other]}</td>
            </tr>
          ))}
          {obs.history.length === 0 && (
            <tr>
              <td colSpan={4} class="empty">No rounds yet.</td>
            </tr>
          )}
        </tbody>
      </table>
      {obs.chat.length > 0 && <ChatLog lines={obs.chat} names={names} seat={seat} />}
    </div>
  );
}

export const table: GameTable = { Board };
