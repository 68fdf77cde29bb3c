/**
 * The answers' types, each read from the generated contract (`openapi.ts`): a field the
 * server adds, renames or drops changes them at the next `make typescript-types`.
 */
export {};
