// The Work Contract the benches authorize (the shape test/support/authority-helpers.ts contract()
// has), with members a bench may replace.

export const benchContract = (extra: Record<string, unknown> = {}) => ({
  contractVersion: 1,
  goal: 'Draft the release notes for 0.1',
  requiredDeliverables: [
    {
      deliverableId: 'notes',
      description: 'Release notes',
      mediaType: 'text/markdown',
      schema: 'urn:mwp:dev:schema:notes',
    },
  ],
  acceptanceCriteria: [
    {criterionId: 'notes', description: 'Every change is listed', evidenceRequired: ['human_review']},
  ],
  inputArtifacts: [],
  dependencyWorkItemIds: [],
  allowedResources: [],
  requiredCapabilities: [{id: 'writing.release-notes', version: '1.0.0'}],
  deadline: '2027-01-15T00:00:00Z',
  requestedUrgency: 'normal',
  businessImpact: 'Release blocker',
  retryPolicy: {maxAttempts: 2, backoff: 'fixed', maxDelay: 'PT10M', retryableFailures: []},
  budget: {currency: 'EUR', financialLimit: 10},
  sideEffectRisk: 'none',
  executionApproval: 'not_required',
  ...extra,
})
