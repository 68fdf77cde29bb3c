/**
 * Verifying a webhook delivery before trusting it (Standard Webhooks, as the server signs).
 *
 * With Node's own crypto, no dependency: the signature is HMAC-SHA256 over
 * `{webhook-id}.{webhook-timestamp}.{body}` under the secret's base64 bytes (after
 * `whsec_`), sent as `v1,<base64>`; during a rotation two of them, space-separated, and
 * either one verifies. Comparisons are constant-time, and a timestamp more than 5 minutes
 * away from now is refused, so a captured delivery cannot be replayed later.
 */
import { createHmac, timingSafeEqual } from "node:crypto";
import { PhoneIntelError } from "./errors.js";
/** The delivery's signature or timestamp does not verify: do not trust its body. */
export class WebhookVerificationError extends PhoneIntelError {
    name = "WebhookVerificationError";
}
const TOLERANCE_SECONDS = 5 * 60;
const SECRET_PREFIX = "whsec_";
function header(headers, name) {
    if (typeof Headers !== "undefined" && headers instanceof Headers) {
        return headers.get(name) ?? undefined;
    }
    for (const [key, value] of Object.entries(headers)) {
        if (key.toLowerCase() === name) {
            return Array.isArray(value) ? value[0] : value;
        }
    }
    return undefined;
}
/**
 * The event of a webhook delivery, once its signature verifies under `secret` (your
 * endpoint's `whsec_…`); throws `WebhookVerificationError` otherwise.
 *
 * `payload` is the request body exactly as received, before any JSON parsing (a string, or
 * bytes: a `Buffer` or `Uint8Array`).
 */
export function verifyWebhook(payload, headers, secret) {
    const id = header(headers, "webhook-id");
    const timestamp = header(headers, "webhook-timestamp");
    const signatures = header(headers, "webhook-signature");
    if (!id || !timestamp || !signatures) {
        throw new WebhookVerificationError("Missing required headers");
    }
    const seconds = Number(timestamp);
    if (!/^[0-9]+$/.test(timestamp) || !Number.isSafeInteger(seconds)) {
        throw new WebhookVerificationError("Invalid webhook-timestamp");
    }
    const now = Math.floor(Date.now() / 1000);
    if (seconds < now - TOLERANCE_SECONDS) {
        throw new WebhookVerificationError("Message timestamp too old");
    }
    if (seconds > now + TOLERANCE_SECONDS) {
        throw new WebhookVerificationError("Message timestamp too new");
    }
    const key = Buffer.from(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret, "base64");
    if (key.length === 0) {
        throw new WebhookVerificationError("The secret is empty");
    }
    const body = typeof payload === "string" ? Buffer.from(payload, "utf8") : Buffer.from(payload);
    const expected = createHmac("sha256", key)
        .update(`${id}.${timestamp}.`)
        .update(body)
        .digest();
    for (const versioned of signatures.split(" ")) {
        const [version, signature] = versioned.split(",", 2);
        if (version !== "v1" || !signature) {
            continue;
        }
        const given = Buffer.from(signature, "base64");
        if (given.length === expected.length && timingSafeEqual(given, expected)) {
            try {
                return JSON.parse(body.toString("utf8"));
            }
            catch {
                throw new WebhookVerificationError("Signed, but the body is not JSON");
            }
        }
    }
    throw new WebhookVerificationError("No matching signature found");
}
