export * from "./client.js";
export * from "./errors.js";
export * from "./webhooks.js";
export type * from "./types.js";
export type { components, operations, paths } from "./openapi.js";
