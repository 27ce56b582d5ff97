/// <reference lib="dom" />
import type { ComponentChildren } from "preact";
import { useEffect, useRef } from "preact/hooks";

/** What the negotiation tables share (Deal or No Deal, Trust-and-Split, simple negotiation): items and lists. */

/**
 * A small drawing of an item, for every negotiation table: books, hats, balls, coins, Wood and Gold have
 * their own; any other item a config names gets a token with its initial.
 */
export function ItemIcon(props: { item: string }) {
  const kind = props.item.toLowerCase().replace(/s$/, "");
  const svg = (body: ComponentChildren) => (
    <svg class={`item-icon icon-${kind}`} viewBox="0 0 24 24" aria-hidden="true">{body}</svg>
  );
  switch (kind) {
    case "book":
      return svg(
        <>
          <rect class="fill" x="5" y="3" width="14" height="18" rx="1.5" />
          <rect class="spine" x="5" y="3" width="3" height="18" rx="1" />
          <path class="line" d="M11 8h5M11 11h5" />
        </>,
      );
    case "hat":
      return svg(
        <>
          <rect class="fill" x="7" y="4" width="10" height="12" rx="1.5" />
          <rect class="band" x="7" y="12" width="10" height="2.5" />
          <rect class="fill" x="2.5" y="16" width="19" height="3.5" rx="1.75" />
        </>,
      );
    case "ball":
      return svg(
        <>
          <circle class="fill" cx="12" cy="12" r="8.5" />
          <path class="line" d="M4 9.5c5 2 11 2 16 0M4 14.5c5-2 11-2 16 0" />
        </>,
      );
    case "coin":
      return svg(
        <>
          <circle class="fill" cx="12" cy="12" r="8.5" />
          <circle class="line" cx="12" cy="12" r="5.5" />
        </>,
      );
    case "wood":
      return svg(
        <>
          <rect class="fill" x="3" y="7" width="16" height="10" rx="5" />
          <ellipse class="end" cx="18" cy="12" rx="3" ry="5" />
          <ellipse class="line" cx="18" cy="12" rx="1.2" ry="2.2" />
        </>,
      );
    case "gold":
      return svg(
        <>
          <path class="fill" d="M3 18l3.5-9h11l3.5 9z" />
          <path class="line" d="M7 11.5h10" />
        </>,
      );
    default:
      return svg(
        <>
          <circle class="fill" cx="12" cy="12" r="8.5" />
          <text class="letter" x="12" y="16" text-anchor="middle">{kind.charAt(0).toUpperCase()}</text>
        </>,
      );
  }
}

/** `1 book`, `2 hats`. */
function itemCount(n: number, item: string): string {
  return `${n} ${n === 1 ? item.replace(/s$/, "") : item}`;
}

/**
 * Counts of each item as icon chips. A zero count stays, dimmed, where every bundle names every item (a
 * division of the pool); `named` leaves zeros out, for bundles that name only what they trade.
 */
export function Bundle(props: { items: readonly string[]; counts: readonly number[]; named?: boolean }) {
  return (
    <span class="nego-bundle">
      {props.items.map((item, i) =>
        props.named && props.counts[i] === 0
          ? null
          : (
            <span key={item} class={`nego-chip${props.counts[i] === 0 ? " none" : ""}`}>
              <ItemIcon item={item} />
              {itemCount(props.counts[i], item)}
            </span>
          )
      )}
    </span>
  );
}

/** A list kept scrolled to its newest entry (the bottom) as entries arrive, without moving the page. */
export function ScrolledList(props: { class: string; count: number; children: ComponentChildren }) {
  const list = useRef<HTMLOListElement>(null);
  useEffect(() => {
    const el = list.current;
    if (el) el.scrollTop = el.scrollHeight;
  }, [props.count]);
  return <ol ref={list} class={props.class}>{props.children}</ol>;
}
