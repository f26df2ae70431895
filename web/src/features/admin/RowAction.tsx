import { Button } from '@mantine/core';
import { errorMessage } from '../../api/errors';
import { notifyError, notifySuccess } from '../../ui/notify';

/** A table row's action answers with a notification: the success text, or the service's message. */
export function notifyOutcome(success: string) {
  return {
    onSuccess: () => notifySuccess(success),
    onError: (error: unknown) => notifyError(errorMessage(error)),
  };
}

/** A row's destructive action (revoke, remove, cancel), asking first when `confirm` is given. */
export function DangerRowButton({ label, ariaLabel, confirm, onClick }: { label: string; ariaLabel: string; confirm?: string; onClick: () => void }) {
  return (
    <Button
      size="xs"
      variant="subtle"
      color="red"
      aria-label={ariaLabel}
      onClick={() => {
        if (confirm !== undefined && !window.confirm(confirm)) return;
        onClick();
      }}
    >
      {label}
    </Button>
  );
}
