import type { Io } from "./io.ts";

/** A run the store keeps and an interrupted command can go on with (a tournament, an evolution). */
interface Run {
  readonly id: string;
  readonly endedAt: Date | null;
}

/**
 * The run a command works on: the stored one `--resume <id>` names (refused, with the latest ids, when the store has
 * none of that id), or a new one from `start`. An unfinished run's id is printed first, with how to resume it.
 */
export async function resumeOrStart<T extends Run>(
  io: Io,
  options: {
    readonly noun: string;
    readonly resume?: string;
    /** The store, for the refusal's message. */
    readonly where: string;
    readonly find: (id: string) => Promise<T | undefined>;
    readonly latest: () => Promise<readonly T[]>;
    readonly start: () => Promise<T>;
    readonly refuse: (message: string) => Error;
  },
): Promise<T> {
  const { noun, resume } = options;
  let run: T | undefined;
  if (resume === undefined) run = await options.start();
  else {
    run = await options.find(resume);
    if (!run) {
      const recent = (await options.latest()).map((r) => r.id);
      throw options.refuse(
        `no ${noun} ${resume} in ${options.where}${recent.length ? `; its latest: ${recent.join(", ")}` : ""}`,
      );
    }
  }
  if (!run.endedAt) io.err(`${noun} ${run.id} (if interrupted, go on with --resume ${run.id})\n`);
  return run;
}
