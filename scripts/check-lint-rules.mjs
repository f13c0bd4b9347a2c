// Shows that the module-boundary rules of eslint.config.js fire (and the SQL rules: none in the
// server, and inside the core only in store files): one deliberate violation of each,
// linted as if it stood at the path named (nothing is written to disk), and the same import made
// the allowed way passes. Run: node scripts/check-lint-rules.mjs (exits 1 when a rule is silent).
// Kept out of the unit tests: loading ESLint's TypeScript parser costs seconds.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ESLint } from 'eslint';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const eslint = new ESLint({ cwd: ROOT });

const CASES = [
  ['a floor of the core importing a floor above it', 'src-main/core/audit/x.ts', "import { Inbox } from '../inbox';\nexport const i = Inbox;\n", /imports only the floors below it/],
  ["a module reaching into another module's file", 'src-main/core/jobs/x.ts', "import { ClaimLocks } from '../tasks/claim-locks';\nexport const c = ClaimLocks;\n", /only through tasks\/index\.ts/],
  ["a module importing another through its index.ts", 'src-main/core/jobs/x.ts', "import { ClaimLocks } from '../tasks';\nexport const c = ClaimLocks;\n", null],
  ['production code importing a test kit', 'src-main/server/x.ts', "import { makeTestCore } from '../core/tests/test-core';\nexport const m = makeTestCore;\n", /test kits are for tests/],
  ['a test importing a test kit', 'src-main/server/x.test.ts', "import { makeTestCore } from '../core/tests/test-core';\nexport const m = makeTestCore;\n", null],
  ['SQL in the server', 'src-main/server/x.ts', "import type { Db } from '../core/db/open';\nexport const n = (db: Db) => db.prepare('SELECT 1').get();\n", /no SQL here/],
  ['core.db in the server', 'src-main/server/x.ts', "import type { Core } from '../core/create-core';\nexport const n = (core: Core) => core.db;\n", /does not touch core\.db/],
  ['a regular expression in the server', 'src-main/server/x.ts', "export const m = (s: string) => /a/.exec(s);\n", null],
  ['SQL in a core service', 'src-main/core/tasks/x.ts', "import type { Db } from '../db/open';\nexport const n = (db: Db) => db.prepare('SELECT 1').get();\n", /SQL lives only in the module's store files/],
  ['SQL in a core store file', 'src-main/core/tasks/x-store.ts', "import type { Db } from '../db/open';\nexport const n = (db: Db) => db.prepare('SELECT 1').get();\n", null],
  ['db.exec in a core service', 'src-main/core/tasks/x.ts', "import type { Db } from '../db/open';\nexport const n = (db: Db) => db.exec('DELETE FROM t');\n", /SQL lives only in the module's store files/],
  ['a pragma in a core service', 'src-main/core/tasks/x.ts', "import type { Db } from '../db/open';\nexport const n = (db: Db) => db.pragma('user_version');\n", /a pragma lives only/],
  ['a pragma in the core\'s db/', 'src-main/core/db/x.ts', "import type { Db } from './open';\nexport const n = (db: Db) => db.pragma('user_version');\n", null],
  ['SQL in a core test', 'src-main/core/tasks/x.test.ts', "import type { Db } from '../db/open';\nexport const n = (db: Db) => db.prepare('SELECT 1').get();\n", null],
  ['a regular expression constant in a core service', 'src-main/core/tasks/x.ts', "const DATE_RE = /a/;\nexport const m = (s: string) => DATE_RE.exec(s);\n", null],
];

let failed = 0;
for (const [what, file, code, expected] of CASES) {
  const [result] = await eslint.lintText(code, { filePath: path.join(ROOT, file) });
  const messages = result.messages.map((m) => `${m.ruleId}: ${m.message}`);
  const ok = expected ? messages.length === 1 && expected.test(messages[0]) : messages.length === 0;
  if (!ok) failed++;
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${what} (${file})${messages.length ? `\n       ${messages.join('\n       ')}` : ': no problem'}`);
}
process.exit(failed ? 1 : 0);
