import { useState } from 'react';
import { Alert, Button, Group, TextInput } from '@mantine/core';
import { errorMessage } from '../../api/errors';

/** One code field and a button: confirm, regenerate and disable all ask for a current code. */
export function CodeForm({
  label,
  submitLabel,
  onSubmit,
  busy,
  color,
}: {
  label: string;
  submitLabel: string;
  onSubmit: (code: string) => Promise<unknown>;
  busy: boolean;
  color?: string;
}) {
  const [code, setCode] = useState('');
  const [error, setError] = useState<string | null>(null);
  return (
    <form
      onSubmit={(event) => {
        event.preventDefault();
        setError(null);
        onSubmit(code.trim()).then(
          () => setCode(''),
          (failure: unknown) => setError(errorMessage(failure)),
        );
      }}
    >
      {error && (
        <Alert color="red" role="alert" mb="sm">
          {error}
        </Alert>
      )}
      <Group align="flex-end">
        <TextInput label={label} autoComplete="one-time-code" value={code} onChange={(e) => setCode(e.currentTarget.value)} required w={260} />
        <Button type="submit" loading={busy} disabled={!code.trim()} color={color}>
          {submitLabel}
        </Button>
      </Group>
    </form>
  );
}
