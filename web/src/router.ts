/// <reference lib="dom" />
import { useEffect, useState } from "preact/hooks";

/** Path routing with the History API: every page has a real URL (a table, a replay, an invite) to share or reload. */

const listeners = new Set<() => void>();

export function navigate(path: string, replace = false): void {
  if (replace) history.replaceState(null, "", path);
  else history.pushState(null, "", path);
  for (const listener of listeners) listener();
}

addEventListener("popstate", () => listeners.forEach((l) => l()));

export function useLocation(): URL {
  const [url, setUrl] = useState(() => new URL(location.href));
  useEffect(() => {
    const listener = () => setUrl(new URL(location.href));
    listeners.add(listener);
    return () => void listeners.delete(listener);
  }, []);
  return url;
}

/** A link that changes the page without a reload. */
export function onLink(event: MouseEvent): void {
  const anchor = (event.target as HTMLElement).closest("a");
  if (!anchor || anchor.target || event.ctrlKey || event.metaKey || event.shiftKey || event.button !== 0) return;
  const url = new URL(anchor.href);
  if (url.origin !== location.origin) return;
  event.preventDefault();
  navigate(url.pathname + url.search);
}
