/**
 * The agent report schema is defined next to the agent (src/agent/report-schema.ts): the agent is
 * built into a standalone executable that must import nothing of the server, and the server must
 * validate exactly the schema the agent checks its items against.
 */
export * from '../../agent/report-schema.js';
