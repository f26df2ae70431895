import { describe, expect, it } from 'vitest';
import { summarize } from '../../src/modules/integrations/formatters/summary.js';

describe('schedule.run_finished in chat, ticket and e-mail messages', () => {
  it('names the schedule, how its run ended and why', () => {
    const summary = summarize({
      id: 'e1',
      type: 'schedule.run_finished',
      tenant_id: 't1',
      timestamp: '2027-04-01T03:00:00.000Z',
      data: {
        schedule: { id: 's1', name: 'rediscover', kind: 'discovery' },
        run: {
          id: 'r1',
          status: 'failed',
          due_at: '2027-04-01T03:00:00.000Z',
          started_at: '2027-04-01T03:00:00.000Z',
          finished_at: '2027-04-01T03:00:00.000Z',
          job_id: null,
          job_url: null,
          error: 'discovery job j1 no longer exists',
        },
      },
    });
    expect(summary.title).toBe('Scheduled discovery failed: rediscover');
    expect(summary.facts).toEqual([
      ['Schedule', 's1'],
      ['Status', 'failed'],
      ['Due at', '2027-04-01T03:00:00.000Z'],
      ['Finished at', '2027-04-01T03:00:00.000Z'],
    ]);
    expect(summary.text).toBe('discovery job j1 no longer exists');
  });
});
