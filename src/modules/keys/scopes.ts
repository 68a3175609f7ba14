/** The scopes of service-spec.md, Authentication. */
export const SCOPES = ['leads:write', 'leads:read', 'events:write', 'campaigns:trigger'] as const;
export type Scope = (typeof SCOPES)[number];

export function isScope(value: string): value is Scope {
  return (SCOPES as readonly string[]).includes(value);
}
