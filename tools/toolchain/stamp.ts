// A stamp records which pinned inputs an installed part of the toolchain satisfies: the hash of
// those inputs. Equal hash -> the part is current and the bootstrap skips it with no network.
import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";

export function hashOf(parts: readonly string[]): string {
  const hash = createHash("sha256");
  // Length-prefixed so that ["ab", "c"] and ["a", "bc"] differ.
  for (const part of parts) hash.update(`${part.length}:${part}\n`);
  return hash.digest("hex").slice(0, 16);
}

export class Stamp {
  private readonly file: string;

  constructor(stampDir: string, name: string) {
    this.file = join(stampDir, `${name}.stamp`);
  }

  matches(hash: string): boolean {
    try {
      return readFileSync(this.file, "utf8").trim() === hash;
    } catch {
      return false;
    }
  }

  /** Written only after the part installed successfully, so a failed run is retried next time. */
  record(hash: string): void {
    mkdirSync(dirname(this.file), { recursive: true });
    writeFileSync(this.file, `${hash}\n`);
  }
}
