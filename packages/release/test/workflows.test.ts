// The GitHub workflows are linted here, as nothing else runs them before they reach GitHub:
// check-jsonschema (SchemaStore's workflow schema, shipped in the package) for structure, and
// zizmor for what the schema cannot see: unpinned actions, template injection, credentials
// left in the checkout, excessive permissions, cache poisoning. Informational notes (e.g.
// "prefer trusted publishing" for the token-based publish steps) are not failures.
// Both tools come from the toolchain venv (tools/toolchain/requirements/python.txt).
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { repoRoot } from "../src/core.ts";

const workflowsDir = join(repoRoot, ".github", "workflows");

function lint(files: string[]): { tool: string; status: number | null; output: string }[] {
  const runs: [string, string[]][] = [
    ["check-jsonschema", ["--builtin-schema", "vendor.github-workflows", ...files]],
    ["zizmor", ["--offline", "--min-severity=low", "--no-progress", ...files]],
  ];
  return runs.map(([tool, args]) => {
    const result = spawnSync(tool, args, { encoding: "utf8" });
    if (result.error !== undefined) throw new Error(`cannot run ${tool} (is the toolchain venv on PATH?): ${result.error.message}`);
    return { tool, status: result.status, output: `${result.stdout}${result.stderr}` };
  });
}

test("the workflows pass check-jsonschema and zizmor", () => {
  const files = readdirSync(workflowsDir).filter((f) => /\.ya?ml$/.test(f)).map((f) => join(workflowsDir, f));
  assert.ok(files.some((f) => f.endsWith("ci.yml")) && files.some((f) => f.endsWith("release.yml")), `workflows: ${files}`);
  for (const { tool, status, output } of lint(files)) assert.equal(status, 0, `${tool}:\n${output}`);
});

test("both linters reject a broken workflow", () => {
  const dir = mkdtempSync(join(tmpdir(), "bsrmm-workflow-lint-"));
  try {
    const broken = join(dir, "broken.yml");
    // An unknown job key (`timeout`), an action pinned to a tag, and an untrusted commit message
    // expanded into a shell script.
    writeFileSync(broken, [
      "name: broken", "on: push", "permissions: {}", "jobs:", "  build:", "    runs-on: ubuntu-24.04", "    timeout: 5",
      "    steps:", "      - uses: actions/checkout@v4", "        with:", "          persist-credentials: false",
      '      - run: echo "${{ github.event.head_commit.message }}"', ""].join("\n"));
    const [schema, zizmor] = lint([broken]);
    assert.notEqual(schema?.status, 0, `check-jsonschema accepted it:\n${schema?.output}`);
    assert.match(schema?.output ?? "", /timeout/);
    assert.notEqual(zizmor?.status, 0, `zizmor accepted it:\n${zizmor?.output}`);
    assert.match(zizmor?.output ?? "", /unpinned-uses/);
    assert.match(zizmor?.output ?? "", /template-injection/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
