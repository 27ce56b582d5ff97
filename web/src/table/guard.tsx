/// <reference lib="dom" />
import type { ComponentChildren } from "preact";
import { useErrorBoundary } from "preact/hooks";

/** Keeps a table that fails to draw an observation from blanking the page: says so, and the rest goes on. */
export function Guard(props: { children: ComponentChildren }) {
  const [error, reset] = useErrorBoundary((e: unknown) => console.error("ludus: a table failed to draw:", e));
  if (error) {
    return (
      <div class="notice error" role="alert">
        This table could not be drawn ({String((error as Error)?.message ?? error)}).{" "}
        <button type="button" onClick={reset}>Try again</button>
      </div>
    );
  }
  return <>{props.children}</>;
}
