/** How the aws plugin tells a refused read from a broken job. */

/** Errors that say the credentials may not read this service (or this region), not that the job is broken. */
export const PERMISSION_ERROR =
  /^(AccessDenied(Exception)?|UnauthorizedOperation|AuthorizationError|AuthorizationErrorException|UnauthorizedAccess|OptInRequired|SubscriptionRequiredException)$/;

/** The error's code as the SDK names it (`name`, or `Code` of a modelled error). */
export const errorName = (error: unknown) => String((error as { name?: string; Code?: string }).name ?? (error as { Code?: string }).Code ?? '');
