/**
 * Verifying a webhook delivery before trusting it (Standard Webhooks, as the server signs).
 *
 * With Node's own crypto, no dependency: the signature is HMAC-SHA256 over
 * `{webhook-id}.{webhook-timestamp}.{body}` under the secret's base64 bytes (after
 * `whsec_`), sent as `v1,<base64>`; during a rotation two of them, space-separated, and
 * either one verifies. Comparisons are constant-time, and a timestamp more than 5 minutes
 * away from now is refused, so a captured delivery cannot be replayed later.
 */
import { PhoneIntelError } from "./errors.js";
import type { Event } from "./types.js";
/** The delivery's signature or timestamp does not verify: do not trust its body. */
export declare class WebhookVerificationError extends PhoneIntelError {
    name: string;
}
/** A `Headers` object (fetch, undici), or a plain object such as Node's `req.headers`. */
export type WebhookHeaders = Headers | Record<string, string | string[] | undefined>;
/**
 * The event of a webhook delivery, once its signature verifies under `secret` (your
 * endpoint's `whsec_…`); throws `WebhookVerificationError` otherwise.
 *
 * `payload` is the request body exactly as received, before any JSON parsing (a string, or
 * bytes: a `Buffer` or `Uint8Array`).
 */
export declare function verifyWebhook(payload: string | Uint8Array, headers: WebhookHeaders, secret: string): Event;
