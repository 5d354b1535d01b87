import {BoundaryCommand, boundaryDescription, boundaryFlags} from '../../src/cli/registry-boundary.js'

export default class RegistryExpire extends BoundaryCommand {
  static summary = 'Record an expiry (validUntil) for a key.'
  static description = boundaryDescription('validUntil')
  static examples = [
    '<%= config.bin %> registry expire --registry registry.json --key-id urn:example:key:alice-1 --valid-until 2026-12-31T00:00:00Z --yes',
  ]
  static flags = boundaryFlags('validUntil')
  protected readonly field = 'validUntil'
}
