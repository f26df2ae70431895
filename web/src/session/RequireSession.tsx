import { useEffect, useMemo, type ReactNode } from 'react';
import { Navigate, useLocation, useNavigate } from 'react-router';
import { useQueryClient } from '@tanstack/react-query';
import { SESSION_EXPIRED_EVENT } from '../api/client';
import { PageLoader, QueryError } from '../ui/QueryState';
import { meKey, useMe } from './queries';
import { SessionContext, sessionOf } from './session';

const SECURITY_PATH = '/account/security';

/** Pages inside need a session: without one the browser goes to sign-in and comes back after. */
export function RequireSession({ children }: { children: ReactNode }) {
  const me = useMe();
  const location = useLocation();
  const navigate = useNavigate();
  const client = useQueryClient();
  const session = useMemo(() => (me.data ? sessionOf(me.data) : null), [me.data]);

  useEffect(() => {
    const expired = () => {
      client.clear();
      client.setQueryData(meKey, null);
      void navigate(`/sign-in?expired=1&next=${encodeURIComponent(location.pathname + location.search)}`);
    };
    window.addEventListener(SESSION_EXPIRED_EVENT, expired);
    return () => window.removeEventListener(SESSION_EXPIRED_EVENT, expired);
  }, [client, navigate, location.pathname, location.search]);

  if (me.isPending) return <PageLoader />;
  if (me.isError) return <QueryError error={me.error} onRetry={() => void me.refetch()} />;
  if (!session) return <Navigate to={`/sign-in?next=${encodeURIComponent(location.pathname + location.search)}`} replace />;
  // A session held to multi-factor enrollment (the tenant requires it) can only enroll: every other
  // page would answer 403, so the console goes straight to the enrollment screen, which explains why.
  if (session.me.mfa_enrollment_required && location.pathname !== SECURITY_PATH) return <Navigate to={SECURITY_PATH} replace />;
  return <SessionContext.Provider value={session}>{children}</SessionContext.Provider>;
}
