// The contacts service, split by use case; this file keeps the names every caller imports.
export { leadItemSteps, writeContacts } from './contact-batch-write.js';
export {
  contactExists,
  contactIdSelectByIdOrTracker,
  findContactIdByPhone,
  findContactIdsByIdOrTracker,
  optOutContact,
  setContactFlags,
} from './contact-lookups.js';
export { type ContactProfile, getContactProfile, readContactByAddress, readContactById } from './contact-profile.js';
export {
  applyContactWrite,
  type ContactWriteResult,
  type PreparedContactWrite,
  prepareContactWrite,
  writeContact,
} from './contact-write.js';
export { contactPickedBy } from './contact-write-rules.js';
