/** A small typed event emitter: `on` returns its own unsubscribe, and a throwing listener cannot stop the others. */
export class Emitter<Events extends object> {
  readonly #listeners = new Map<keyof Events, Set<(payload: never) => void>>();

  on<K extends keyof Events>(event: K, listener: (payload: Events[K]) => void): () => void {
    let set = this.#listeners.get(event);
    if (!set) this.#listeners.set(event, set = new Set());
    set.add(listener);
    return () => void set.delete(listener);
  }

  /** The next `event` for which `accept` holds. */
  next<K extends keyof Events>(event: K, accept: (payload: Events[K]) => boolean = () => true): Promise<Events[K]> {
    return new Promise((resolve) => {
      const off = this.on(event, (payload) => {
        if (!accept(payload)) return;
        off();
        resolve(payload);
      });
    });
  }

  emit<K extends keyof Events>(event: K, payload: Events[K]): void {
    for (const listener of [...(this.#listeners.get(event) ?? [])]) {
      try {
        (listener as (payload: Events[K]) => void)(payload);
      } catch (error) {
        // A listener's bug must not break the socket's frame loop; surface it without swallowing it.
        queueMicrotask(() => {
          throw error;
        });
      }
    }
  }
}
