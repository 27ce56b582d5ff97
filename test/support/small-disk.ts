import { execFileSync } from "node:child_process";
import { closeSync, mkdtempSync, openSync, rmSync, statfsSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/**
 * A small file system of its own (tmpfs), to fill up and free again. Mounting needs root: where it is not
 * allowed, `mountSmallDisk` returns undefined and the tests that need it say they were skipped.
 */
export interface SmallDisk {
  readonly dir: string;
  /** Fills the disk until only about `leaveBytes` are free. */
  fill(leaveBytes?: number): void;
  /** Frees what `fill` took. */
  free(): void;
  freeBytes(): number;
  unmount(): void;
}

export function mountSmallDisk(megabytes: number): SmallDisk | undefined {
  const dir = mkdtempSync(join(tmpdir(), "ludus-disk-"));
  try {
    execFileSync("mount", ["-t", "tmpfs", "-o", `size=${megabytes}m`, "tmpfs", dir], { stdio: "ignore" });
  } catch {
    rmSync(dir, { recursive: true, force: true });
    return undefined;
  }
  const filler = join(dir, "filler");
  const freeBytes = () => {
    const s = statfsSync(dir);
    return s.bavail * s.bsize;
  };
  return {
    dir,
    freeBytes,
    fill(leaveBytes = 0) {
      const fd = openSync(filler, "a");
      const chunk = Buffer.alloc(64 * 1024, 1);
      try {
        while (freeBytes() > leaveBytes + chunk.length) writeSync(fd, chunk);
      } catch {
        // ENOSPC: full
      } finally {
        closeSync(fd);
      }
    },
    free() {
      rmSync(filler, { force: true });
    },
    unmount() {
      try {
        execFileSync("umount", ["-l", dir], { stdio: "ignore" });
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}
