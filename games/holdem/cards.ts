/**
 * Cards as ACPC numbers them: card = rank * 4 + suit, ranks `23456789TJQKA` (0 = deuce, 12 = ace),
 * suits `cdhs` (0 = clubs). Text is two characters, rank then suit (`Ah`, `Tc`).
 */

export const RANK_CHARS = "23456789TJQKA";
export const SUIT_CHARS = "cdhs";
export const MAX_RANKS = 13;
export const MAX_SUITS = 4;

export function makeCard(rank: number, suit: number): number {
  return rank * 4 + suit;
}

export function rankOf(card: number): number {
  return card >> 2;
}

export function suitOf(card: number): number {
  return card & 3;
}

const CARD_TEXT: readonly string[] = Array.from(
  { length: MAX_RANKS * MAX_SUITS },
  (_, c) => RANK_CHARS[c >> 2] + SUIT_CHARS[c & 3],
);

/** `Ah` for the ace of hearts. */
export function cardText(card: number): string {
  return CARD_TEXT[card];
}

/** Cards written back to back, as ACPC does: `AhKd`. */
export function cardsText(cards: ArrayLike<number>, start = 0, end = cards.length): string {
  let text = "";
  for (let i = start; i < end && i < cards.length; i++) text += CARD_TEXT[cards[i]];
  return text;
}

/** The card written at `text[at]` (rank then suit, either case, as ACPC reads it), or -1. */
export function readCard(text: string, at = 0): number {
  const rank = RANK_CHARS.indexOf(text.charAt(at).toUpperCase());
  const suit = SUIT_CHARS.indexOf(text.charAt(at + 1).toLowerCase());
  return rank < 0 || suit < 0 || at + 1 >= text.length ? -1 : makeCard(rank, suit);
}

/**
 * Cards written back to back or separated by spaces or commas (`AhKd`, `Ah Kd`, `ah, kd`), or a
 * RangeError naming the first thing that is not a card.
 */
export function parseCards(text: string): number[] {
  const compact = text.replace(/[\s,]+/g, "");
  const cards: number[] = [];
  for (let i = 0; i < compact.length; i += 2) {
    const card = readCard(compact, i);
    if (card < 0) {
      throw new RangeError(
        `\`${compact.slice(i, i + 2)}\` is not a card (a rank of ${RANK_CHARS} then a suit of ${SUIT_CHARS})`,
      );
    }
    cards.push(card);
  }
  return cards;
}

/**
 * The deck of a game with `numRanks` ranks and `numSuits` suits: the lowest ranks and suits, as
 * OpenSpiel's universal_poker builds it (its 6-rank test game plays 2 to 7).
 */
export function deckOf(numRanks: number, numSuits: number): number[] {
  const deck: number[] = [];
  for (let rank = 0; rank < numRanks; rank++) {
    for (let suit = 0; suit < numSuits; suit++) deck.push(makeCard(rank, suit));
  }
  return deck;
}
