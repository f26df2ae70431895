import { AppError } from './errors.js';

/** The longest path parameter the router accepts; a longer one is 414 URI_TOO_LONG. */
export const MAX_PATH_PARAM_LENGTH = 500;

export const PATH_PARAM_TOO_LONG = 'a path parameter is too long';

/**
 * The router refuses an over-long parameter only when no other route matches; a catch-all route
 * (the console's `/*`) would otherwise swallow it as a 404. The catch-all asks this for API paths.
 */
export function assertPathSegmentsFit(path: string): void {
  for (const segment of path.split('/')) {
    if (segment.length > MAX_PATH_PARAM_LENGTH) throw new AppError(414, 'URI_TOO_LONG', PATH_PARAM_TOO_LONG);
  }
}
