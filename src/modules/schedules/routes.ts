import { Type } from 'typebox';
import type { RoutePlugin } from '../module.js';
import { contextOf } from '../../platform/auth/authenticator.js';
import { pageRequest } from '../../platform/http/pagination.js';
import { TenantParams, withErrors } from '../../platform/http/schemas.js';
import { createScheduleService } from './schedule-service.js';
import { RunListQuery, Schedule, ScheduleCreate, ScheduleList, ScheduleListQuery, ScheduleParams, SchedulePatch, ScheduleRunList } from './schemas.js';

const WRITE_NOTE = 'Changing a schedule needs the permission of what it runs: jobs:write for discovery schedules, audit:run for audit schedules (403 otherwise).';

/** Workspace schedules (/schedules): jobs:read to look; writing checks the permission of the schedule's kind. */
export const scheduleRoutes: RoutePlugin = async (app, { deps }) => {
  const schedules = createScheduleService(deps);
  const tags = ['schedules'];

  app.post(
    '/tenants/:tenantID/schedules',
    {
      config: { permission: 'jobs:read' },
      schema: {
        operationId: 'createSchedule',
        tags,
        summary: 'Schedule a discovery job or an audit',
        description: `A discovery schedule repeats a discovery job of the workspace (target.job_id: its plugins and configuration, as a new job each run; a job that read an uploaded Terraform state cannot be repeated); an audit schedule audits target.frameworks (empty: every enabled framework). Exactly one of cron (five fields, read in time_zone) and interval_seconds (at least 300). 400 naming the field for a bad cron expression, an unknown time zone, an interval below 5 minutes, both or neither of cron and interval_seconds, or a target that does not fit the kind. ${WRITE_NOTE}`,
        params: TenantParams,
        body: ScheduleCreate,
        response: withErrors({ 201: Schedule }, [401, 403, 409]),
      },
    },
    async (request, reply) => reply.status(201).send(await schedules.create(contextOf(request), request.body)),
  );

  app.get(
    '/tenants/:tenantID/schedules',
    {
      config: { permission: 'jobs:read' },
      schema: {
        operationId: 'listSchedules',
        tags,
        summary: 'Schedules of the workspace, newest first',
        params: TenantParams,
        querystring: ScheduleListQuery,
        response: withErrors({ 200: ScheduleList }, [401, 403]),
      },
    },
    async (request) => {
      const { kind, page, per_page } = request.query;
      return schedules.list(contextOf(request).scope, { kind }, pageRequest({ page, per_page }));
    },
  );

  app.get(
    '/tenants/:tenantID/schedules/:scheduleID',
    {
      config: { permission: 'jobs:read' },
      schema: {
        operationId: 'getSchedule',
        tags,
        summary: 'A schedule, with its last and next run',
        params: ScheduleParams,
        response: withErrors({ 200: Schedule }, [401, 403, 404]),
      },
    },
    async (request) => schedules.get(contextOf(request).scope, request.params.scheduleID),
  );

  app.patch(
    '/tenants/:tenantID/schedules/:scheduleID',
    {
      config: { permission: 'jobs:read' },
      schema: {
        operationId: 'updateSchedule',
        tags,
        summary: 'Rename, retarget, retime, enable or disable a schedule',
        description: `New timing or enabling computes next_run_at from now; disabling clears it. A cron expression replaces an interval and the other way round. ${WRITE_NOTE}`,
        params: ScheduleParams,
        body: SchedulePatch,
        response: withErrors({ 200: Schedule }, [401, 403, 404]),
      },
    },
    async (request) => schedules.update(contextOf(request), request.params.scheduleID, request.body),
  );

  app.delete(
    '/tenants/:tenantID/schedules/:scheduleID',
    {
      config: { permission: 'jobs:read' },
      schema: {
        operationId: 'deleteSchedule',
        tags,
        summary: 'Delete a schedule and its run history',
        description: `A run it already queued goes on. ${WRITE_NOTE}`,
        params: ScheduleParams,
        response: withErrors({ 204: Type.Null() }, [401, 403, 404]),
      },
    },
    async (request, reply) => {
      await schedules.delete(contextOf(request), request.params.scheduleID);
      return reply.status(204).send();
    },
  );

  app.get(
    '/tenants/:tenantID/schedules/:scheduleID/runs',
    {
      config: { permission: 'jobs:read' },
      schema: {
        operationId: 'listScheduleRuns',
        tags,
        summary: 'Run history of a schedule, newest first',
        description:
          'Each run: when it was due and started, the discovery job or audit run it queued, and how it ended (running until that job finishes; skipped when the previous run was still running).',
        params: ScheduleParams,
        querystring: RunListQuery,
        response: withErrors({ 200: ScheduleRunList }, [401, 403, 404]),
      },
    },
    async (request) => {
      const { page, per_page } = request.query;
      return schedules.runs(contextOf(request).scope, request.params.scheduleID, pageRequest({ page, per_page }));
    },
  );
};
