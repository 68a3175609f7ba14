import { SCOPES, type Scope } from '../../contract/constants.js';

export { SCOPES, type Scope };

export function isScope(value: string): value is Scope {
  return (SCOPES as readonly string[]).includes(value);
}
