/// <reference lib="dom" />
import type { DonorObservation, DonorSeatView } from "./game.ts";
import type { TraceEntry } from "./trace.ts";
import { fmt } from "../../web/src/table/action-bar.tsx";
import type { GameTable, TableProps } from "../../web/src/tables/types.ts";

/**
 * The Donor Game. A seat sees itself, this round's partner and, as a donor, the recipient's trace (the
 * reputation it decides on); the public sees the whole population, this round's pairs and the finals.
 * Donate, punish and refuse are the action bar's forms; donations get quick shares of the resources.
 */

const MECHANISM = {
  standard: "Donations",
  "costly-punishment": "Costly punishment",
  "partner-choice": "Partner choice",
} as const;

function where(obs: DonorObservation): string {
  return obs.phase === "over"
    ? `Match over · ${obs.games} game${obs.games === 1 ? "" : "s"} of ${obs.rounds} rounds`
    : `Game ${obs.gameNumber} of ${obs.games} · Round ${obs.round} of ${obs.rounds}`;
}

function Board({ obs, seat, names }: TableProps<DonorObservation>) {
  return obs.you === null
    ? <PublicView obs={obs} names={names} />
    : <SeatView obs={obs} you={obs.you} player={seat === null ? undefined : names[seat]} />;
}

function SeatView(props: { obs: DonorObservation; you: DonorSeatView; player: string | undefined }) {
  const { obs, you } = props;
  const partner = you.partner;
  const role = you.role === "donor" ? "You are the donor" : you.role === "recipient" ? "You are the recipient" : "";
  const finished = you.results.reduce((sum, r) => sum + r, 0);
  return (
    <div class="donor">
      <div class="status-line">
        {where(obs)}
        {role && ` · ${role}`}
      </div>
      <p class="nego-note donor-setting">
        <span class="tag">{MECHANISM[obs.mechanism]}</span>
        Generation {obs.generation}. A donation arrives multiplied by {fmt(obs.cooperationGain)}.
      </p>

      <div class="donor-pair">
        <div class="donor-agent me">
          <span class="agent-name">{you.name}</span>
          <span class="agent-sub">{props.player && props.player !== you.name ? `you (${props.player})` : "you"}</span>
          <span class="agent-res">{fmt(you.resources)}</span>
          <span class="agent-sub">units</span>
        </div>
        {partner && (
          <>
            <div class="donor-arrow" aria-hidden="true">{you.role === "donor" ? "→" : "←"}</div>
            <div class="donor-agent partner">
              <span class="agent-name">{partner.name}</span>
              <span class="agent-sub">{you.role === "donor" ? "your recipient" : "your donor"}</span>
              <span class="agent-res">{fmt(partner.resources)}</span>
              <span class="agent-sub">units</span>
            </div>
          </>
        )}
      </div>

      {you.role === "donor" && partner && (
        <>
          <p class="nego-notice">
            Give any amount from 0 to all you have: {partner.name} receives {fmt(obs.cooperationGain)}× what you give.
            {obs.mechanism === "costly-punishment" &&
              ` Or punish: spend an amount and ${partner.name} loses ${fmt(obs.punishmentLoss)}× that (never below 0).`}
            {obs.mechanism === "partner-choice" && ` Or refuse to play with ${partner.name}: nothing changes hands.`}
          </p>
          <section class="nego-section donor-trace">
            <h3>{partner.name}'s trace</h3>
            <p class="nego-note">
              Newest first: what {partner.name} did last, then what the agent it gave to had done before, and so on.
            </p>
            <Trace entries={you.recipientTrace} subject={partner.name} loss={obs.punishmentLoss} />
          </section>
        </>
      )}
      {you.role === "recipient" && partner && (
        <p class="nego-notice">
          {partner.name} decides what to do with you this round, seeing your trace. Nothing for you to do.
        </p>
      )}

      <section class="nego-section donor-results">
        <h3>Results</h3>
        {you.results.length === 0 && obs.phase !== "over"
          ? <p class="nego-note">No game finished yet. Your score is the sum of your resources at each game's end.</p>
          : (
            <dl class="totals">
              {you.results.map((r, g) => (
                <div key={g} class="total">
                  <dt>Game {g + 1}</dt>
                  <dd>{fmt(r)}</dd>
                </div>
              ))}
              {obs.phase !== "over" && (
                <div class="total">
                  <dt>Game {obs.gameNumber} so far</dt>
                  <dd>{fmt(you.resources)}</dd>
                </div>
              )}
              <div class="total mine">
                <dt>{obs.phase === "over" ? "Score" : "Score so far"}</dt>
                <dd>{fmt(finished + (obs.phase === "over" ? 0 : you.resources))}</dd>
              </div>
            </dl>
          )}
      </section>
    </div>
  );
}

/** A trace as a list of moves, each with what it was and how generous, its own move marked. */
function Trace(props: { entries: readonly TraceEntry[]; subject: string; loss: number }) {
  return (
    <ol class="donor-trace-list">
      {props.entries.map((e, i) => {
        const when = e.kind === "start" ? "" : e.game > 1 ? `Game ${e.game}, round ${e.round}` : `Round ${e.round}`;
        let badge: string;
        let what: string;
        switch (e.kind) {
          case "start":
            badge = "New";
            what = `${e.donor} had no interactions before.`;
            break;
          case "donate":
            badge = `Gave ${Math.round(e.percent)}%`;
            what = `${e.donor} donated ${fmt(e.amount)} units (${
              e.percent.toFixed(1)
            }% of their resources) to ${e.recipient}.`;
            break;
          case "punish":
            badge = "Punished";
            what = `${e.donor} spent ${fmt(e.amount)} units to take ${fmt(props.loss * e.amount)} from ${e.recipient}.`;
            break;
          case "refuse":
            badge = "Refused";
            what = `${e.donor} refused to play with ${e.recipient}.`;
            break;
        }
        const generosity = e.kind === "donate" ? (e.percent >= 50 ? " high" : e.percent >= 20 ? " mid" : " low") : "";
        return (
          <li key={i} class={`donor-trace-entry ${e.kind}${generosity}${e.donor === props.subject ? " own" : ""}`}>
            <span class="trace-badge">{badge}</span>
            <div class="trace-body">
              <span class="trace-what">{what}</span>
              <span class="trace-when">
                {when}
                {e.donor === props.subject && i === 0 && (when ? " · " : "") + `${props.subject}'s latest move`}
              </span>
              {e.kind === "donate" && (
                <span class="trace-bar" aria-hidden="true">
                  <span style={{ width: `${Math.min(100, e.percent)}%` }} />
                </span>
              )}
            </div>
          </li>
        );
      })}
    </ol>
  );
}

function PublicView(props: { obs: DonorObservation; names: readonly string[] }) {
  const { obs, names } = props;
  const agents = obs.agents ?? [];
  const pairs = obs.pairs ?? [];
  const finals = obs.finals ?? [];
  const over = obs.phase === "over";
  const partnerOf = new Map<number, { seat: number; gives: boolean }>();
  for (const p of pairs) {
    partnerOf.set(p.donor, { seat: p.recipient, gives: true });
    partnerOf.set(p.recipient, { seat: p.donor, gives: false });
  }
  const richest = Math.max(obs.endowment, ...agents.map((a) => a.resources));
  // The players behind the agents, where the page names them apart from the agent names.
  const player = (s: number) => (names[s] && names[s] !== agents[s]?.name ? names[s] : null);
  const totals = agents.map((a, s) => finals.reduce((sum, g) => sum + g[s], 0) + (over ? 0 : a.resources));
  const ranking = agents.map((_, s) => s).sort((a, b) => totals[b] - totals[a]);

  return (
    <div class="donor">
      <div class="status-line">{where(obs)}</div>
      <p class="nego-note">
        <span class="tag">{MECHANISM[obs.mechanism]}</span>
        Generation {obs.generation}, {agents.length} agents in groups A and B. Donations arrive ×
        {fmt(obs.cooperationGain)}; each game starts at {fmt(obs.endowment)} units.
      </p>

      <section class="nego-section">
        <h3>{over ? "Final resources" : "The population"}</h3>
        <div class="donor-grid">
          {agents.map((a, s) => {
            const pair = partnerOf.get(s);
            return (
              <div key={s} class={`donor-cell group-${a.group}${pair ? (pair.gives ? " gives" : " receives") : ""}`}>
                <div class="cell-head">
                  <span class="agent-name">{a.name}</span>
                  <span class={`group-tag group-${a.group}`} title={`group ${a.group}`}>{a.group}</span>
                </div>
                {player(s) && <span class="agent-sub">{player(s)}</span>}
                <span class="cell-res">{fmt(a.resources)}</span>
                <span class="trace-bar" aria-hidden="true">
                  <span style={{ width: `${(100 * a.resources) / richest}%` }} />
                </span>
                {pair && (
                  <span class="cell-role">
                    {pair.gives ? `gives to ${agents[pair.seat].name}` : `receives from ${agents[pair.seat].name}`}
                  </span>
                )}
              </div>
            );
          })}
        </div>
      </section>

      {pairs.length > 0 && (
        <section class="nego-section">
          <h3>This round's pairs</h3>
          <ul class="donor-pairs">
            {pairs.map((p) => (
              <li key={p.donor}>
                <span class={`group-tag group-${agents[p.donor].group}`}>{agents[p.donor].group}</span>
                <strong>{agents[p.donor].name}</strong>
                <span class="donor-arrow-small" aria-label="donates to">→</span>
                <span class={`group-tag group-${agents[p.recipient].group}`}>{agents[p.recipient].group}</span>
                {agents[p.recipient].name}
              </li>
            ))}
          </ul>
        </section>
      )}

      {finals.length > 0 && (
        <section class="nego-section">
          <h3>{over ? "Final standings" : "Standings"}</h3>
          <div class="nego-scroll">
            <table class="history donor-standings">
              <thead>
                <tr>
                  <th>#</th>
                  <th>Agent</th>
                  {finals.map((_, g) => <th key={g}>Game {g + 1}</th>)}
                  {!over && <th>Game {obs.gameNumber} now</th>}
                  <th>Total</th>
                </tr>
              </thead>
              <tbody>
                {ranking.map((s, rank) => (
                  <tr key={s}>
                    <td>{rank + 1}</td>
                    <td class="agent-col">
                      <span class={`group-tag group-${agents[s].group}`}>{agents[s].group}</span>
                      {agents[s].name}
                      {player(s) && <span class="muted">({player(s)})</span>}
                    </td>
                    {finals.map((g, k) => <td key={k}>{fmt(g[s])}</td>)}
                    {!over && <td>{fmt(agents[s].resources)}</td>}
                    <td class="donor-total">{fmt(totals[s])}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </section>
      )}
    </div>
  );
}

/** Shares of what the donor holds, rounded down to the cent so the bar's rounding never exceeds the maximum. */
function presets(form: { max: number }) {
  return [0, 0.25, 0.5, 1].map((share) => ({
    label: share === 1 ? "All" : `${share * 100}%`,
    amount: Math.floor(form.max * share * 100) / 100,
  }));
}

export const table: GameTable = {
  Board,
  presets,
  labels: { donate: "Donate", punish: "Punish", refuse: "Refuse to play" },
};
