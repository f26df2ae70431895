import { createContext, useContext } from 'react';
import type { Paths } from '../api/client';

/** The signed-in user as GET /auth/me describes them. */
export type Me = Paths['/api/v1/auth/me']['get']['responses'][200]['content']['application/json'];

export interface Session {
  me: Me;
  /** The tenant every tenant route of the console addresses (the session's own). */
  tenantId: string;
  /** Whether the user's role grants a permission, e.g. `findings:write`. Hides actions; the API still decides. */
  can: (permission: string) => boolean;
}

export const SessionContext = createContext<Session | null>(null);

export function useSession(): Session {
  const session = useContext(SessionContext);
  if (!session) throw new Error('useSession outside a signed-in page');
  return session;
}

export function sessionOf(me: Me): Session {
  const granted = new Set(me.permissions);
  return {
    me,
    tenantId: me.tenant_id,
    can: (permission) => me.is_system_admin || granted.has(permission),
  };
}
