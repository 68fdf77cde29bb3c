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

type EnvelopeCode<E> = E extends { error?: { code?: infer C } } ? NonNullable<C> : never;

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
export class PhoneIntelError extends Error {
  override name = "PhoneIntelError";
}

/** The server answered with an error envelope, or with something that is not the contract. */
export class APIError extends PhoneIntelError {
  override name = "APIError";
  readonly status: number;
  readonly code: ErrorCode;
  /** `error.requestId`, which equals the `X-Request-Id` header: quote it when you write to us. */
  readonly requestId: string | null;
  readonly details: ErrorDetail[];
  /** Seconds the server asked us to wait (`Retry-After`), on every 429 and 503. */
  readonly retryAfter: number | null;
  readonly headers: Headers;

  constructor(init: APIErrorInit) {
    super(init.message);
    this.status = init.status;
    this.code = init.code as ErrorCode;
    this.requestId = init.requestId ?? null;
    this.details = init.details ?? [];
    this.retryAfter = init.retryAfter ?? null;
    this.headers = init.headers ?? new Headers();
  }

  override toString(): string {
    const where = this.requestId ? ` (request ${this.requestId})` : "";
    return `${this.name}: ${this.status} ${this.code}: ${this.message}${where}`;
  }
}

export class BadRequestError extends APIError {
  override name = "BadRequestError";
  declare readonly code: StatusCodes[400] | "unexpected_response";
}
export class InvalidJsonError extends BadRequestError {
  override name = "InvalidJsonError";
  declare readonly code: "invalid_json";
}
export class IdempotencyKeyRequiredError extends BadRequestError {
  override name = "IdempotencyKeyRequiredError";
  declare readonly code: "idempotency_key_required";
}

/** 401: the key is missing, malformed, unknown, expired, revoked or inactive. */
export class AuthenticationError extends APIError {
  override name = "AuthenticationError";
  declare readonly code: StatusCodes[401] | "unexpected_response";
}
export class MissingApiKeyError extends AuthenticationError {
  override name = "MissingApiKeyError";
  declare readonly code: "missing_api_key";
}
export class InvalidApiKeyError extends AuthenticationError {
  override name = "InvalidApiKeyError";
  declare readonly code: "invalid_api_key";
}
export class ExpiredApiKeyError extends AuthenticationError {
  override name = "ExpiredApiKeyError";
  declare readonly code: "expired_api_key";
}
export class RevokedApiKeyError extends AuthenticationError {
  override name = "RevokedApiKeyError";
  declare readonly code: "revoked_api_key";
}
export class InactiveApiKeyError extends AuthenticationError {
  override name = "InactiveApiKeyError";
  declare readonly code: "inactive_api_key";
}

/** 403: a valid key that may not do this (its restrictions); never retried, nothing charged. */
export class PermissionDeniedError extends APIError {
  override name = "PermissionDeniedError";
  declare readonly code: StatusCodes[403] | "unexpected_response";
}
/** The key may not use this product (a bulk call's `product`: `details[0].field` is `/product`). */
export class ProductNotPermittedError extends PermissionDeniedError {
  override name = "ProductNotPermittedError";
  declare readonly code: "product_not_permitted";
}
/** The key may not be used from this client address. */
export class AddressNotPermittedError extends PermissionDeniedError {
  override name = "AddressNotPermittedError";
  declare readonly code: "address_not_permitted";
}

export class NotFoundError extends APIError {
  override name = "NotFoundError";
  declare readonly code: StatusCodes[404] | "unexpected_response";
}

export class MethodNotAllowedError extends APIError {
  override name = "MethodNotAllowedError";
  declare readonly code: StatusCodes[405] | "unexpected_response";
}

export class ConflictError extends APIError {
  override name = "ConflictError";
  declare readonly code: StatusCodes[409] | "unexpected_response";
}
/** The first attempt with this Idempotency-Key is still running; retried. */
export class IdempotencyInProgressError extends ConflictError {
  override name = "IdempotencyInProgressError";
  declare readonly code: "idempotency_in_progress";
}
/** The Idempotency-Key was used before for a different request; never retried. */
export class IdempotencyConflictError extends ConflictError {
  override name = "IdempotencyConflictError";
  declare readonly code: "idempotency_conflict";
}

/** A bulk job's results asked for before it finished; ask again once it has. */
export class BulkJobNotFinishedError extends ConflictError {
  override name = "BulkJobNotFinishedError";
  declare readonly code: "bulk_job_not_finished";
}

/** 410: what was asked for is gone for good (a bulk job's results after `expiresAt`). */
export class GoneError extends APIError {
  override name = "GoneError";
  declare readonly code: StatusCodes[410] | "unexpected_response";
}
export class BulkJobExpiredError extends GoneError {
  override name = "BulkJobExpiredError";
  declare readonly code: "bulk_job_expired";
}

export class PayloadTooLargeError extends APIError {
  override name = "PayloadTooLargeError";
  declare readonly code: StatusCodes[413] | "unexpected_response";
}

/** 422: also the class of the `validation_error` code itself. */
export class ValidationError extends APIError {
  override name = "ValidationError";
  declare readonly code: StatusCodes[422] | "unexpected_response";
}
/** Not a parseable or possible phone number; nothing charged. */
export class InvalidPhoneError extends ValidationError {
  override name = "InvalidPhoneError";
  declare readonly code: "invalid_phone";
}
/** A test key asked about a number outside the test table (`testNumbers()` lists them). */
export class TestNumberRequiredError extends ValidationError {
  override name = "TestNumberRequiredError";
  declare readonly code: "test_number_required";
}

/** 429: `rate_limited` (retried after `Retry-After`) or `quota_exceeded` (never retried). */
export class RateLimitError extends APIError {
  override name = "RateLimitError";
  declare readonly code: StatusCodes[429] | "unexpected_response";
}
export class RateLimitedError extends RateLimitError {
  override name = "RateLimitedError";
  declare readonly code: "rate_limited";
}
/** The key's monthly quota or the developer's allowance is spent: it comes back next month. */
export class QuotaExceededError extends RateLimitError {
  override name = "QuotaExceededError";
  declare readonly code: "quota_exceeded";
}

export class InternalServerError extends APIError {
  override name = "InternalServerError";
  declare readonly code: StatusCodes[500] | "unexpected_response";
}

/** A paused product or a store that is down; always with `Retry-After`; retried. */
export class ServiceUnavailableError extends APIError {
  override name = "ServiceUnavailableError";
  declare readonly code: StatusCodes[503] | "unexpected_response";
}

type ErrorClass = new (init: APIErrorInit) => APIError;

/** The class of each status: an answer without the envelope, or with a code this version does not know. */
export const STATUS_ERRORS: { readonly [S in keyof StatusCodes]: ErrorClass } = {
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
export const CODE_ERRORS: {
  readonly [C in Exclude<ErrorCode, "unexpected_response">]: ErrorClass;
} = {
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
  override name = "APIConnectionError";
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

/** No answer within the timeout, after any retries. */
export class APITimeoutError extends APIConnectionError {
  override name = "APITimeoutError";
}

/** The error an answer is: the class of its code if this version knows it, else of its status. */
export function errorFrom(status: number, body: unknown, headers: Headers): APIError {
  const retryAfter = parseRetryAfter(headers.get("Retry-After"));
  const envelope = isObject(body) && isObject(body.error) ? body.error : null;
  const statusClass: ErrorClass = STATUS_ERRORS[status as keyof StatusCodes] ?? APIError;
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
  const codeClass: ErrorClass | undefined = Object.hasOwn(CODE_ERRORS, code)
    ? CODE_ERRORS[code as keyof typeof CODE_ERRORS]
    : undefined;
  // A code under another status than the contract gives it (a proxy's answer, say) is
  // classed by its status alone, so `instanceof` never contradicts `status`.
  const cls =
    codeClass !== undefined &&
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
    requestId:
      (typeof envelope.requestId === "string" ? envelope.requestId : null) ??
      headers.get("X-Request-Id"),
    details,
    retryAfter,
    headers,
  });
}

/** Seconds from `Retry-After`: the contract sends whole seconds; an HTTP date is read too. */
export function parseRetryAfter(value: string | null): number | null {
  if (!value) return null;
  const trimmed = value.trim();
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Number(trimmed);
  const when = Date.parse(trimmed);
  if (Number.isNaN(when)) return null;
  return Math.max(0, (when - Date.now()) / 1000);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
