import {BoundaryCommand, boundaryDescription, boundaryFlags} from '../../src/cli/registry-boundary.js'

export default class RegistryRevoke extends BoundaryCommand {
  static summary = 'Record a revocation (revokedAt) of a key.'
  static description = boundaryDescription('revokedAt')
  static examples = [
    '<%= config.bin %> registry revoke --registry registry.json --key-id urn:example:key:alice-1 --revoked-at 2026-08-01T12:00:00Z --yes',
  ]
  static flags = boundaryFlags('revokedAt')
  protected readonly field = 'revokedAt'
}
