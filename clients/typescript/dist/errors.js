/**
 * Errors: one class per error code of the contract, under one class per HTTP status, all
 * under `PhoneIntelError`.
 *
 * `instanceof` works at either level (`err instanceof RateLimitError` for any 429,
 * `err instanceof QuotaExceededError` for one code), and so does narrowing on `err.code`,
 * whose type is the union of the codes the contract gives that status.
 */
/** Every error this package throws (a caller's own abort is thrown as the signal's reason). */
export class PhoneIntelError extends Error {
    name = "PhoneIntelError";
}
/** The server answered with an error envelope, or with something that is not the contract. */
export class APIError extends PhoneIntelError {
    name = "APIError";
    status;
    code;
    /** `error.requestId`, which equals the `X-Request-Id` header: quote it when you write to us. */
    requestId;
    details;
    /** Seconds the server asked us to wait (`Retry-After`), on every 429 and 503. */
    retryAfter;
    headers;
    constructor(init) {
        super(init.message);
        this.status = init.status;
        this.code = init.code;
        this.requestId = init.requestId ?? null;
        this.details = init.details ?? [];
        this.retryAfter = init.retryAfter ?? null;
        this.headers = init.headers ?? new Headers();
    }
    toString() {
        const where = this.requestId ? ` (request ${this.requestId})` : "";
        return `${this.name}: ${this.status} ${this.code}: ${this.message}${where}`;
    }
}
export class BadRequestError extends APIError {
    name = "BadRequestError";
}
export class InvalidJsonError extends BadRequestError {
    name = "InvalidJsonError";
}
export class IdempotencyKeyRequiredError extends BadRequestError {
    name = "IdempotencyKeyRequiredError";
}
/** 401: the key is missing, malformed, unknown, expired, revoked or inactive. */
export class AuthenticationError extends APIError {
    name = "AuthenticationError";
}
export class MissingApiKeyError extends AuthenticationError {
    name = "MissingApiKeyError";
}
export class InvalidApiKeyError extends AuthenticationError {
    name = "InvalidApiKeyError";
}
export class ExpiredApiKeyError extends AuthenticationError {
    name = "ExpiredApiKeyError";
}
export class RevokedApiKeyError extends AuthenticationError {
    name = "RevokedApiKeyError";
}
export class InactiveApiKeyError extends AuthenticationError {
    name = "InactiveApiKeyError";
}
/** 403: a valid key that may not do this (its restrictions); never retried, nothing charged. */
export class PermissionDeniedError extends APIError {
    name = "PermissionDeniedError";
}
/** The key may not use this product (a bulk call's `product`: `details[0].field` is `/product`). */
export class ProductNotPermittedError extends PermissionDeniedError {
    name = "ProductNotPermittedError";
}
/** The key may not be used from this client address. */
export class AddressNotPermittedError extends PermissionDeniedError {
    name = "AddressNotPermittedError";
}
export class NotFoundError extends APIError {
    name = "NotFoundError";
}
export class MethodNotAllowedError extends APIError {
    name = "MethodNotAllowedError";
}
export class ConflictError extends APIError {
    name = "ConflictError";
}
/** The first attempt with this Idempotency-Key is still running; retried. */
export class IdempotencyInProgressError extends ConflictError {
    name = "IdempotencyInProgressError";
}
/** The Idempotency-Key was used before for a different request; never retried. */
export class IdempotencyConflictError extends ConflictError {
    name = "IdempotencyConflictError";
}
/** A bulk job's results asked for before it finished; ask again once it has. */
export class BulkJobNotFinishedError extends ConflictError {
    name = "BulkJobNotFinishedError";
}
/** 410: what was asked for is gone for good (a bulk job's results after `expiresAt`). */
export class GoneError extends APIError {
    name = "GoneError";
}
export class BulkJobExpiredError extends GoneError {
    name = "BulkJobExpiredError";
}
export class PayloadTooLargeError extends APIError {
    name = "PayloadTooLargeError";
}
/** 422: also the class of the `validation_error` code itself. */
export class ValidationError extends APIError {
    name = "ValidationError";
}
/** Not a parseable or possible phone number; nothing charged. */
export class InvalidPhoneError extends ValidationError {
    name = "InvalidPhoneError";
}
/** A test key asked about a number outside the test table (`testNumbers()` lists them). */
export class TestNumberRequiredError extends ValidationError {
    name = "TestNumberRequiredError";
}
/** 429: `rate_limited` (retried after `Retry-After`) or `quota_exceeded` (never retried). */
export class RateLimitError extends APIError {
    name = "RateLimitError";
}
export class RateLimitedError extends RateLimitError {
    name = "RateLimitedError";
}
/** The key's monthly quota or the developer's allowance is spent: it comes back next month. */
export class QuotaExceededError extends RateLimitError {
    name = "QuotaExceededError";
}
export class InternalServerError extends APIError {
    name = "InternalServerError";
}
/** A paused product or a store that is down; always with `Retry-After`; retried. */
export class ServiceUnavailableError extends APIError {
    name = "ServiceUnavailableError";
}
/** The class of each status: an answer without the envelope, or with a code this version does not know. */
export const STATUS_ERRORS = {
    400: BadRequestError,
    401: AuthenticationError,
    403: PermissionDeniedError,
    404: NotFoundError,
    405: MethodNotAllowedError,
    409: ConflictError,
    410: GoneError,
    413: PayloadTooLargeError,
    422: ValidationError,
    429: RateLimitError,
    500: InternalServerError,
    503: ServiceUnavailableError,
};
/** The class of each code; the compiler refuses a code of the document without one. */
export const CODE_ERRORS = {
    invalid_json: InvalidJsonError,
    idempotency_key_required: IdempotencyKeyRequiredError,
    missing_api_key: MissingApiKeyError,
    invalid_api_key: InvalidApiKeyError,
    expired_api_key: ExpiredApiKeyError,
    revoked_api_key: RevokedApiKeyError,
    inactive_api_key: InactiveApiKeyError,
    product_not_permitted: ProductNotPermittedError,
    address_not_permitted: AddressNotPermittedError,
    not_found: NotFoundError,
    method_not_allowed: MethodNotAllowedError,
    idempotency_in_progress: IdempotencyInProgressError,
    idempotency_conflict: IdempotencyConflictError,
    bulk_job_not_finished: BulkJobNotFinishedError,
    bulk_job_expired: BulkJobExpiredError,
    payload_too_large: PayloadTooLargeError,
    validation_error: ValidationError,
    invalid_phone: InvalidPhoneError,
    test_number_required: TestNumberRequiredError,
    rate_limited: RateLimitedError,
    quota_exceeded: QuotaExceededError,
    server_error: InternalServerError,
    service_unavailable: ServiceUnavailableError,
};
/** No answer: the connection failed or broke, after any retries. */
export class APIConnectionError extends PhoneIntelError {
    name = "APIConnectionError";
    constructor(message, options) {
        super(message, options);
    }
}
/** No answer within the timeout, after any retries. */
export class APITimeoutError extends APIConnectionError {
    name = "APITimeoutError";
}
/** The error an answer is: the class of its code if this version knows it, else of its status. */
export function errorFrom(status, body, headers) {
    const retryAfter = parseRetryAfter(headers.get("Retry-After"));
    const envelope = isObject(body) && isObject(body.error) ? body.error : null;
    const statusClass = STATUS_ERRORS[status] ?? APIError;
    if (envelope === null || typeof envelope.code !== "string") {
        return new statusClass({
            status,
            code: "unexpected_response",
            message: `HTTP ${status} without the API's error envelope`,
            requestId: headers.get("X-Request-Id"),
            retryAfter,
            headers,
        });
    }
    const code = envelope.code;
    const codeClass = Object.hasOwn(CODE_ERRORS, code)
        ? CODE_ERRORS[code]
        : undefined;
    // A code under another status than the contract gives it (a proxy's answer, say) is
    // classed by its status alone, so `instanceof` never contradicts `status`.
    const cls = codeClass !== undefined &&
        statusClass !== APIError &&
        (codeClass === statusClass || codeClass.prototype instanceof statusClass)
        ? codeClass
        : statusClass;
    const details = Array.isArray(envelope.details)
        ? envelope.details.filter(isObject).map((detail) => ({
            field: String(detail.field ?? ""),
            code: String(detail.code ?? ""),
            message: String(detail.message ?? ""),
        }))
        : [];
    return new cls({
        status,
        code,
        message: typeof envelope.message === "string" ? envelope.message : "",
        requestId: (typeof envelope.requestId === "string" ? envelope.requestId : null) ??
            headers.get("X-Request-Id"),
        details,
        retryAfter,
        headers,
    });
}
/** Seconds from `Retry-After`: the contract sends whole seconds; an HTTP date is read too. */
export function parseRetryAfter(value) {
    if (!value)
        return null;
    const trimmed = value.trim();
    if (/^\d+(\.\d+)?$/.test(trimmed))
        return Number(trimmed);
    const when = Date.parse(trimmed);
    if (Number.isNaN(when))
        return null;
    return Math.max(0, (when - Date.now()) / 1000);
}
function isObject(value) {
    return typeof value === "object" && value !== null && !Array.isArray(value);
}
