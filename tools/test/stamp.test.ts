import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { hashOf, Stamp } from "../toolchain/stamp.ts";

test("hashes are stable and tell apart lists that concatenate to the same text", () => {
  assert.equal(hashOf(["a", "b"]), hashOf(["a", "b"]));
  assert.notEqual(hashOf(["ab", "c"]), hashOf(["a", "bc"]));
  assert.notEqual(hashOf(["numpy==2.4.6"]), hashOf(["numpy==2.4.5"]));
});

test("a stamp matches only the hash recorded last, and nothing before it is recorded", () => {
  const dir = mkdtempSync(join(tmpdir(), "bsrmm-stamp-"));
  try {
    const stamp = new Stamp(join(dir, "nested"), "venv");
    assert.equal(stamp.matches("abc"), false);
    stamp.record("abc");
    assert.equal(stamp.matches("abc"), true);
    stamp.record("def");
    assert.equal(stamp.matches("abc"), false);
    assert.equal(new Stamp(join(dir, "nested"), "venv").matches("def"), true);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
