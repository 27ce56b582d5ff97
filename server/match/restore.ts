/** A stored log that does not replay to the same match (the game's rules or a strategy changed). */
export class RestoreError extends Error {
  constructor(matchId: string, message: string) {
    super(`match ${matchId} cannot be restored: ${message}`);
    this.name = "RestoreError";
  }
}
