/**
 * Errors: one class per error code of the contract, under one class per HTTP status, all
 * under `PhoneIntelError`.
 *
 * `instanceof` works at either level (`err instanceof RateLimitError` for any 429,
 * `err instanceof QuotaExceededError` for one code), and so does narrowing on `err.code`,
 * whose type is the union of the codes the contract gives that status.
 */
import type { components } from "./openapi.js";
type Schemas = components["schemas"];
/** Every `error.code` of the contract, plus `unexpected_response` for an answer that is not its envelope (a proxy's, say). */
export type ErrorCode = Schemas["ErrorCodeEnum"] | "unexpected_response";
type EnvelopeCode<E> = E extends {
    error?: {
        code?: infer C;
    };
} ? NonNullable<C> : never;
/** The codes the contract gives each status, read from its per-status error envelopes. */
export interface StatusCodes {
    400: EnvelopeCode<Schemas["ErrorEnvelope400"]>;
    401: EnvelopeCode<Schemas["ErrorEnvelope401"]>;
    403: EnvelopeCode<Schemas["ErrorEnvelope403"]>;
    404: EnvelopeCode<Schemas["ErrorEnvelope404"]>;
    405: EnvelopeCode<Schemas["ErrorEnvelope405"]>;
    409: EnvelopeCode<Schemas["ErrorEnvelope409"]>;
    410: EnvelopeCode<Schemas["ErrorEnvelope410"]>;
    413: EnvelopeCode<Schemas["ErrorEnvelope413"]>;
    422: EnvelopeCode<Schemas["ErrorEnvelope422"]>;
    429: EnvelopeCode<Schemas["ErrorEnvelope429"]>;
    500: EnvelopeCode<Schemas["ErrorEnvelope500"]>;
    503: EnvelopeCode<Schemas["ErrorEnvelope503"]>;
}
/** `{field, code, message}`: `field` is a JSON Pointer into the body (`/phone`) or a header name. */
export type ErrorDetail = Schemas["ErrorDetail"];
export interface APIErrorInit {
    status: number;
    code: string;
    message: string;
    requestId?: string | null;
    details?: ErrorDetail[];
    retryAfter?: number | null;
    headers?: Headers;
}
/** Every error this package throws (a caller's own abort is thrown as the signal's reason). */
export declare class PhoneIntelError extends Error {
    name: string;
}
/** The server answered with an error envelope, or with something that is not the contract. */
export declare class APIError extends PhoneIntelError {
    name: string;
    readonly status: number;
    readonly code: ErrorCode;
    /** `error.requestId`, which equals the `X-Request-Id` header: quote it when you write to us. */
    readonly requestId: string | null;
    readonly details: ErrorDetail[];
    /** Seconds the server asked us to wait (`Retry-After`), on every 429 and 503. */
    readonly retryAfter: number | null;
    readonly headers: Headers;
    constructor(init: APIErrorInit);
    toString(): string;
}
export declare class BadRequestError extends APIError {
    name: string;
    readonly code: StatusCodes[400] | "unexpected_response";
}
export declare class InvalidJsonError extends BadRequestError {
    name: string;
    readonly code: "invalid_json";
}
export declare class IdempotencyKeyRequiredError extends BadRequestError {
    name: string;
    readonly code: "idempotency_key_required";
}
/** 401: the key is missing, malformed, unknown, expired, revoked or inactive. */
export declare class AuthenticationError extends APIError {
    name: string;
    readonly code: StatusCodes[401] | "unexpected_response";
}
export declare class MissingApiKeyError extends AuthenticationError {
    name: string;
    readonly code: "missing_api_key";
}
export declare class InvalidApiKeyError extends AuthenticationError {
    name: string;
    readonly code: "invalid_api_key";
}
export declare class ExpiredApiKeyError extends AuthenticationError {
    name: string;
    readonly code: "expired_api_key";
}
export declare class RevokedApiKeyError extends AuthenticationError {
    name: string;
    readonly code: "revoked_api_key";
}
export declare class InactiveApiKeyError extends AuthenticationError {
    name: string;
    readonly code: "inactive_api_key";
}
/** 403: a valid key that may not do this (its restrictions); never retried, nothing charged. */
export declare class PermissionDeniedError extends APIError {
    name: string;
    readonly code: StatusCodes[403] | "unexpected_response";
}
/** The key may not use this product (a bulk call's `product`: `details[0].field` is `/product`). */
export declare class ProductNotPermittedError extends PermissionDeniedError {
    name: string;
    readonly code: "product_not_permitted";
}
/** The key may not be used from this client address. */
export declare class AddressNotPermittedError extends PermissionDeniedError {
    name: string;
    readonly code: "address_not_permitted";
}
export declare class NotFoundError extends APIError {
    name: string;
    readonly code: StatusCodes[404] | "unexpected_response";
}
export declare class MethodNotAllowedError extends APIError {
    name: string;
    readonly code: StatusCodes[405] | "unexpected_response";
}
export declare class ConflictError extends APIError {
    name: string;
    readonly code: StatusCodes[409] | "unexpected_response";
}
/** The first attempt with this Idempotency-Key is still running; retried. */
export declare class IdempotencyInProgressError extends ConflictError {
    name: string;
    readonly code: "idempotency_in_progress";
}
/** The Idempotency-Key was used before for a different request; never retried. */
export declare class IdempotencyConflictError extends ConflictError {
    name: string;
    readonly code: "idempotency_conflict";
}
/** A bulk job's results asked for before it finished; ask again once it has. */
export declare class BulkJobNotFinishedError extends ConflictError {
    name: string;
    readonly code: "bulk_job_not_finished";
}
/** 410: what was asked for is gone for good (a bulk job's results after `expiresAt`). */
export declare class GoneError extends APIError {
    name: string;
    readonly code: StatusCodes[410] | "unexpected_response";
}
export declare class BulkJobExpiredError extends GoneError {
    name: string;
    readonly code: "bulk_job_expired";
}
export declare class PayloadTooLargeError extends APIError {
    name: string;
    readonly code: StatusCodes[413] | "unexpected_response";
}
/** 422: also the class of the `validation_error` code itself. */
export declare class ValidationError extends APIError {
    name: string;
    readonly code: StatusCodes[422] | "unexpected_response";
}
/** Not a parseable or possible phone number; nothing charged. */
export declare class InvalidPhoneError extends ValidationError {
    name: string;
    readonly code: "invalid_phone";
}
/** A test key asked about a number outside the test table (`testNumbers()` lists them). */
export declare class TestNumberRequiredError extends ValidationError {
    name: string;
    readonly code: "test_number_required";
}
/** 429: `rate_limited` (retried after `Retry-After`) or `quota_exceeded` (never retried). */
export declare class RateLimitError extends APIError {
    name: string;
    readonly code: StatusCodes[429] | "unexpected_response";
}
export declare class RateLimitedError extends RateLimitError {
    name: string;
    readonly code: "rate_limited";
}
/** The key's monthly quota or the developer's allowance is spent: it comes back next month. */
export declare class QuotaExceededError extends RateLimitError {
    name: string;
    readonly code: "quota_exceeded";
}
export declare class InternalServerError extends APIError {
    name: string;
    readonly code: StatusCodes[500] | "unexpected_response";
}
/** A paused product or a store that is down; always with `Retry-After`; retried. */
export declare class ServiceUnavailableError extends APIError {
    name: string;
    readonly code: StatusCodes[503] | "unexpected_response";
}
type ErrorClass = new (init: APIErrorInit) => APIError;
/** The class of each status: an answer without the envelope, or with a code this version does not know. */
export declare const STATUS_ERRORS: {
    readonly [S in keyof StatusCodes]: ErrorClass;
};
/** The class of each code; the compiler refuses a code of the document without one. */
export declare const CODE_ERRORS: {
    readonly [C in Exclude<ErrorCode, "unexpected_response">]: ErrorClass;
};
/** No answer: the connection failed or broke, after any retries. */
export declare class APIConnectionError extends PhoneIntelError {
    name: string;
    constructor(message: string, options?: {
        cause?: unknown;
    });
}
/** No answer within the timeout, after any retries. */
export declare class APITimeoutError extends APIConnectionError {
    name: string;
}
/** The error an answer is: the class of its code if this version knows it, else of its status. */
export declare function errorFrom(status: number, body: unknown, headers: Headers): APIError;
/** Seconds from `Retry-After`: the contract sends whole seconds; an HTTP date is read too. */
export declare function parseRetryAfter(value: string | null): number | null;
export {};
