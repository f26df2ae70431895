import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api } from '../../api/client';
import { unwrap } from '../../api/errors';
import { meKey } from '../../session/queries';

/** The signed-in user's own multi-factor sign-in (GET /auth/mfa and its actions). */
export const mfaKey = ['auth', 'mfa'] as const;

export function useMfaStatus() {
  return useQuery({ queryKey: mfaKey, queryFn: async () => unwrap(await api.GET('/api/v1/auth/mfa')) });
}

/** Every action changes the status (and, for confirm, what /auth/me may say): both are read again. */
function useMfaMutation<I, O>(run: (input: I) => Promise<O>) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: run,
    onSuccess: () => {
      void client.invalidateQueries({ queryKey: mfaKey });
    },
  });
}

export function useStartEnrollment() {
  return useMfaMutation(async () => unwrap(await api.POST('/api/v1/auth/mfa/totp/enroll')));
}

export function useConfirmEnrollment() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: async (code: string) => unwrap(await api.POST('/api/v1/auth/mfa/totp/confirm', { body: { code } })),
    onSuccess: () => {
      // Not /auth/me: a session held to enrollment stays held until the user signs in again, and
      // re-reading it here would take the user away from the recovery codes shown once.
      void client.invalidateQueries({ queryKey: mfaKey });
    },
  });
}

export function useRegenerateRecoveryCodes() {
  return useMfaMutation(async (code: string) => unwrap(await api.POST('/api/v1/auth/mfa/recovery-codes', { body: { code } })));
}

export function useDisableMfa() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: async (code: string) => unwrap(await api.DELETE('/api/v1/auth/mfa/totp', { body: { code } })),
    onSuccess: () => {
      void client.invalidateQueries({ queryKey: mfaKey });
      void client.invalidateQueries({ queryKey: meKey });
    },
  });
}
