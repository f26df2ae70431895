import { useEffect, useState } from 'react';
import { Button, Group, Text } from '@mantine/core';
import { useQueryClient } from '@tanstack/react-query';
import { useTranslation } from 'react-i18next';
import { useSession } from '../../../session/session';
import { findingsKeys } from '../queries';

/**
 * Counts finding events on GET /findings/stream (Server-Sent Events; the session cookie goes along)
 * since the list was opened or last refreshed, and offers the refresh. Closed when the list goes.
 */
export function LiveCounter() {
  const { t } = useTranslation('findings');
  const { tenantId } = useSession();
  const client = useQueryClient();
  const [counts, setCounts] = useState({ created: 0, resolved: 0 });
  const [live, setLive] = useState(false);

  useEffect(() => {
    const source = new EventSource(`/api/v1/tenants/${encodeURIComponent(tenantId)}/findings/stream`);
    source.onopen = () => setLive(true);
    source.onerror = () => setLive(false);
    source.onmessage = (message: MessageEvent<string>) => {
      let event: unknown;
      try {
        event = (JSON.parse(message.data) as { event?: unknown }).event;
      } catch {
        return;
      }
      if (event === 'finding.created') setCounts((current) => ({ ...current, created: current.created + 1 }));
      if (event === 'finding.resolved') setCounts((current) => ({ ...current, resolved: current.resolved + 1 }));
    };
    return () => source.close();
  }, [tenantId]);

  const changed = counts.created + counts.resolved > 0;
  return (
    <Group gap="xs" role="status" aria-live="polite" data-testid="live-counter">
      <Text size="sm" c={changed ? undefined : 'dimmed'} fw={changed ? 600 : undefined}>
        {changed ? t('live.changed', { created: counts.created, resolved: counts.resolved }) : live ? t('live.none') : t('live.connecting')}
      </Text>
      {changed && (
        <Button
          size="xs"
          variant="light"
          onClick={() => {
            setCounts({ created: 0, resolved: 0 });
            void client.invalidateQueries({ queryKey: findingsKeys.all });
          }}
        >
          {t('live.refresh')}
        </Button>
      )}
    </Group>
  );
}
