// fixtures/README.md, generated from the same tables as the files it describes.

import {DOCUMENT_KINDS, PROFILES} from '../../src/signing/profiles.js'
import {SIGNER} from './documents.js'
import {IDENTITIES, ORG, VALID_FROM, identity} from './identities.js'
import {SEED_PREFIX} from './util.js'

export function fixturesReadme(): string {
  const keyRows = IDENTITIES.map((i) => {
    const interval =
      i.validityHistory.length === 0
        ? `from ${i.validFrom}`
        : `from ${i.validFrom}; ${i.validityHistory.map((r) => (r.revokedAt ? `revoked at ${r.revokedAt}` : `valid until ${r.validUntil}`)).join(', then ')}`
    return `| \`keys/${i.name}.key.json\` | ${i.principal.type} \`${i.principal.id}\` | \`${i.keyId}\` | ${interval} | ${i.role} |`
  })
  const docRows = DOCUMENT_KINDS.map((kind) => {
    const signer = identity(SIGNER[kind])
    return `| \`${kind}\` | \`${PROFILES[kind].timeField}\` | ${signer.principal.type} \`${signer.principal.id}\` (\`keys/${signer.name}.key.json\`) |`
  })
  return `# Development fixtures

**Everything in this directory is development material. The private keys are published, derived
from fixed strings, and must never be trusted for anything real.** They exist so the README
examples, the tests and local experiments have a small, consistent Organization to work with.

Do not edit these files by hand: they are generated, byte for byte, by
\`scripts/make-fixtures.ts\`, and \`test/project/fixtures.test.ts\` fails when the committed files differ
from a fresh generation. To change them, edit the generator and run

\`\`\`sh
npm run fixtures
\`\`\`

The same run also regenerates our own conformance bundles at the project root
(\`conformance/\` and \`cryptography/\`, see below).

## The development Organization

Organization \`${ORG}\`. Every key's 32-byte Ed25519 seed is
\`sha256("${SEED_PREFIX}" + name)\`; current keys are valid from ${VALID_FROM} with no end.

| Key file | Principal | Key ID | Validity | Role |
| --- | --- | --- | --- | --- |
${keyRows.join('\n')}

Key files use the project key-file format (\`{keyId, principal, algorithm, seed, publicKey}\`) and are
written with mode 0600.

## Files

* \`registry.json\` - the complete Registry snapshot for the Organization: every binding above with
  its full validity history (the expired and revoked keys included), in the format of the
  cryptography bundle's registry fixtures. Use it as \`--registry\` evidence.
* \`unsigned/<kind>.json\` - one unsigned sample of each of the nine Signed Document kinds, all about
  one Mission (\`urn:mwp:dev:mission:api-rate-limit\`).
* \`documents/<kind>.json\` - the same samples signed by the signer the spec §6.4 table requires.
  Each one verifies against \`registry.json\`.

| Kind | Protected signed time | Signed by |
| --- | --- | --- |
${docRows.join('\n')}

## Examples

\`\`\`sh
npm run build
# sign a sample (signature.createdAt is copied from the protected time)
node bin/run.js sign --document-kind command --key fixtures/keys/coordinator.key.json fixtures/unsigned/command.json
# verify every signed sample against the development registry
node bin/run.js verify --registry fixtures/registry.json fixtures/documents/*.json
# a key of the wrong Principal is refused by the signer
node bin/run.js sign --document-kind command --key fixtures/keys/developer.key.json fixtures/unsigned/command.json
# the expired key signs, but verification fails at key resolution (--explain shows why)
node bin/run.js sign --document-kind artifact --key fixtures/keys/developer-expired.key.json fixtures/unsigned/artifact.json > /tmp/expired.json
node bin/run.js verify --explain --registry fixtures/registry.json /tmp/expired.json
\`\`\`

## Our conformance bundles

\`npm run fixtures\` also writes two vector bundles in the upstream manifest formats, so
\`node bin/run.js conformance run --root . --bundle all\` runs them:

* \`conformance/manifest.json\` and \`conformance/vectors/{valid,invalid}/\` - structural vectors: a
  valid instance for every schema in \`schemas/\` plus edge cases, and invalid instances that each
  break one rule from ACCEPTANCE.md (A, B7, D1-D2, G3, H1-H4, H8, K3). The vector name says what it
  proves.
* \`cryptography/\` - the nine signed samples as a profile matrix with every verified field computed,
  a golden Command with JCS edge content (and a re-serialized copy), a hand-checked JCS vector, and
  failure vectors made by targeted mutations of the golden Command or its Registry, covering every
  verification stage. The manifest schema and the two fixture schemas are our own (same format as
  upstream, without upstream's fixed case counts). The artifact list pins every bundle file; it
  does not pin \`schemas/\`, which is the implementation under test rather than bundle data.
`
}
