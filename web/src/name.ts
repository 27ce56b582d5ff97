/// <reference lib="dom" />
import { useEffect, useState } from "preact/hooks";

/** The display name of this browser's guest: chosen in the top bar, kept across visits, no sign-up. */

const KEY = "ludus.name";
const listeners = new Set<(name: string) => void>();

function initial(): string {
  const saved = localStorage.getItem(KEY);
  if (saved) return saved;
  const name = `guest-${Math.floor(1000 + Math.random() * 9000)}`;
  localStorage.setItem(KEY, name);
  return name;
}

let current = initial();

export function displayName(): string {
  return current;
}

export function setDisplayName(name: string): void {
  current = name.trim().slice(0, 40) || current;
  localStorage.setItem(KEY, current);
  listeners.forEach((l) => l(current));
}

export function useDisplayName(): string {
  const [name, setName] = useState(current);
  useEffect(() => {
    listeners.add(setName);
    return () => void listeners.delete(setName);
  }, []);
  return name;
}
