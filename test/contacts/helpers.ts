import { after, before } from 'node:test';
import { getContactProfile } from '../../src/modules/contacts/contacts.service.js';
import { apiClient, startTestApp, type TestApp } from '../helpers/app.js';
import { makeTenant } from '../helpers/factories.js';

/** One app (and database) per test file; call at the top level of the file. */
export function useTestApp(): () => TestApp {
  let testApp: TestApp | undefined;
  before(async () => {
    testApp = await startTestApp();
  });
  after(async () => {
    await testApp?.close();
  });
  return () => {
    if (!testApp) throw new Error('the test app is not started yet');
    return testApp;
  };
}

/** A fresh account with an all-scopes key, and shorthands for writing and reading its contacts. */
export async function contactTenant(t: TestApp, options: { scopes?: string[] } = {}) {
  const tenant = await makeTenant(t.db, t.config, options);
  const api = apiClient(t.app, tenant.key);
  return {
    ...tenant,
    api,
    lead: (body: unknown) => api.post('/api/leads', body),
    profile: (lookup: { id?: string; email?: string; phone?: string }) => getContactProfile(t.db, tenant.accountId, lookup),
  };
}
