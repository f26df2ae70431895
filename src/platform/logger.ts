import pino, { type Logger, type LoggerOptions } from 'pino';

/** Everything that may carry a credential is redacted wherever it appears in a log line. */
export const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["x-api-key"]',
  'res.headers["set-cookie"]',
  '*.password',
  '*.secret',
  '*.client_secret',
  '*.token',
  '*.refresh_token',
  '*.api_key',
  '*.key',
  'password',
  'secret',
  'token',
];

export function loggerOptions(level: string): LoggerOptions {
  return {
    level,
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
    base: { service: 'controlgraph' },
    timestamp: pino.stdTimeFunctions.isoTime,
  };
}

export function createLogger(level: string): Logger {
  return pino(loggerOptions(level));
}

/** For CLI commands whose stdout is their answer: logs go to stderr. */
export function createStderrLogger(level: string): Logger {
  return pino(loggerOptions(level), pino.destination(2));
}
