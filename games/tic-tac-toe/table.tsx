/// <reference lib="dom" />
import type { TttObservation } from "./game.ts";
import type { GameTable, TableProps } from "../../web/src/tables/types.ts";

/** Where each cell is, for the move list (the numbers are the rules' and the board's hints). */
const PLACES = [
  "top left",
  "top middle",
  "top right",
  "middle left",
  "centre",
  "middle right",
  "bottom left",
  "bottom middle",
  "bottom right",
];

/** Tic-tac-toe: the board is the control; a legal cell is a button while it is the viewer's move. */
function Board({ obs, seat, names, turn }: TableProps<TttObservation>) {
  const legal = new Map<number, unknown>();
  for (const form of turn?.legal ?? []) {
    if (form.kind === "fixed" && form.action.type === "mark") {
      const cell = (form.action as { cell?: number }).cell;
      if (cell !== undefined) legal.set(cell, form.action);
    }
  }
  const last = obs.moves.at(-1);
  const status = obs.phase === "over"
    ? obs.winner === null ? "A draw." : `${names[obs.winner]} (${obs.marks[obs.winner]}) wins.`
    : obs.toMove === null
    ? ""
    : `${obs.toMove === seat ? "Your" : `${names[obs.toMove]}'s`} move (${obs.marks[obs.toMove]}).`;
  return (
    <div class="tic-tac-toe">
      <div class="status-line">{status}</div>
      <div class="ttt-board" role="grid" aria-label="Board">
        {obs.board.map((mark, cell) => {
          const action = legal.get(cell);
          return action
            ? (
              <button
                type="button"
                class="ttt-cell open"
                value={JSON.stringify(action)}
                aria-label={`Mark cell ${cell}`}
                onClick={(e) => turn!.submit(JSON.parse((e.currentTarget as HTMLButtonElement).value))}
              >
                <span class="hint">{cell}</span>
              </button>
            )
            : (
              <div class={`ttt-cell${mark ? ` mark-${mark}` : ""}${cell === last ? " last" : ""}`} role="gridcell">
                {mark ?? ""}
              </div>
            );
        })}
      </div>
      {obs.moves.length > 0 && (
        <ol class="move-list" aria-label="Moves">
          {obs.moves.map((cell, i) => (
            // Player 0 moves first, so the players alternate from there.
            <li key={i}>
              <span class="move-no">{i + 1}.</span>
              <span class={`mark mark-${obs.marks[i % 2]}`}>{obs.marks[i % 2]}</span>
              <span>
                {PLACES[cell]} <span class="muted">({cell})</span>
              </span>
            </li>
          ))}
        </ol>
      )}
    </div>
  );
}

export const table: GameTable = {
  Board,
  ownsForm: (form) => form.kind === "fixed" && form.action.type === "mark",
};
