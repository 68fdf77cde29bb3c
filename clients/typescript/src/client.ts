/**
 * `Client`: one method per operation of the contract, with retries that never charge twice.
 *
 * Retry rule (the Python client's): 429 `rate_limited`, 503, 409 `idempotency_in_progress`
 * and failures with no answer are retried, after `Retry-After` when the server sent one,
 * else after an exponential backoff; capped and jittered. Nothing else is: not
 * `quota_exceeded` (the quota comes back next month), not any other 4xx. It is safe because
 * every call is either a GET or a lookup carrying an Idempotency-Key made once per call and
 * kept across its retries: the server answers a retry of a request it already ran from the
 * stored answer, and charges nothing for it.
 */

import type { paths } from "./openapi.js";
import {
  APIConnectionError,
  APIError,
  APITimeoutError,
  errorFrom,
  type ErrorCode,
} from "./errors.js";
import type {
  Account,
  AccountMeta,
  APIResponse,
  BulkJob,
  BulkJobMeta,
  BulkJobsPage,
  BulkMeta,
  BulkResult,
  Event,
  EventsMeta,
  EventsPage,
  EventType,
  LookupInput,
  LookupMeta,
  LookupResult,
  Product,
  ProductManifest,
  ProductManifestMeta,
  RateLimit,
  TestNumbers,
  TestNumbersMeta,
} from "./types.js";

export const VERSION = "0.1.0";
export const ENV_API_KEY = "PHONEINTEL_API_KEY";
export const ENV_BASE_URL = "PHONEINTEL_BASE_URL";
export const DEFAULT_BASE_URL = "http://127.0.0.1:8000";
export const DEFAULT_TIMEOUT = 10_000;
export const DEFAULT_MAX_RETRIES = 3;
export const DEFAULT_MAX_RETRY_WAIT = 30_000;
const BACKOFF_BASE = 500;
const JITTER = 0.25;

type Path = keyof paths;

/** Each product's single-lookup path; the compiler checks each is a path of the contract. */
export const PRODUCT_PATHS = {
  "phone-lookup": "/v1/data/phone-lookups",
  "phone-risk": "/v1/data/phone-risk-checks",
  "carrier-lookup": "/v1/data/carrier-lookups",
  "reverse-phone-lookup": "/v1/data/reverse-phone-lookups",
  "phone-exposure": "/v1/data/phone-exposure-checks",
} as const satisfies Record<Product, Path>;

const BULK_PATH = "/v1/data/bulk-lookups" satisfies Path;
const ACCOUNT_PATH = "/v1/data/account" satisfies Path;
const EVENTS_PATH = "/v1/data/events" satisfies Path;
const PRODUCTS_PATH = "/v1/data/products" satisfies Path;
const BULK_JOBS_PATH = "/v1/data/bulk-jobs" satisfies Path;
const BULK_JOB_PATH = "/v1/data/bulk-jobs/{job_id}" satisfies Path;
const BULK_JOB_RESULTS_PATH = "/v1/data/bulk-jobs/{job_id}/results" satisfies Path;
const FINISHED: readonly string[] = ["succeeded", "canceled", "failed"];
// Not in the served document yet (the sandbox is being built); a plain string until it is.
const TEST_NUMBERS_PATH = "/v1/data/test-numbers";

/** What a lookup of product P returns. */
export type Lookup<P extends Product> = Promise<APIResponse<LookupResult<P>, LookupMeta>>;

export interface ClientOptions {
  /** Default: `PHONEINTEL_API_KEY`. A test key (`pi_beta_test_…`) works the same way. */
  apiKey?: string | undefined;
  /** Default: `PHONEINTEL_BASE_URL`, else `http://127.0.0.1:8000`. */
  baseUrl?: string | undefined;
  /** Milliseconds each attempt may take, answer read included (default 10 000). */
  timeout?: number;
  /** Retries after the first attempt (default 3; 0 for none). */
  maxRetries?: number;
  /** The longest wait before a retry, in milliseconds (default 30 000), `Retry-After` included. */
  maxRetryWait?: number;
  /** Told before each wait: which retry, how long, and why. */
  onRetry?: (event: RetryEvent) => void;
  /** Another `fetch` (a proxy's agent, a recorder); default the global one. */
  fetch?: typeof fetch;
}

export interface RequestOptions {
  /** Aborts the call, retries and waits included; it then throws the signal's reason. */
  signal?: AbortSignal;
  /** This call's per-attempt timeout in milliseconds. */
  timeout?: number;
}

export interface LookupOptions extends RequestOptions {
  /** ISO 3166-1 alpha-2: the region of a number in national form. */
  country?: string;
  /**
   * Default: a fresh UUID per call, kept across its retries. Pass your own to make a later
   * call a replay of an earlier one (8 to 128 visible ASCII characters, kept 24 hours).
   */
  idempotencyKey?: string;
}

export type BulkOptions = Omit<LookupOptions, "country">;

export interface EventsOptions extends RequestOptions {
  /** Only events of this type. */
  type?: EventType;
  /** Events per request, 1 to 100 (default 20). */
  limit?: number;
}

export interface EventsPageOptions extends EventsOptions {
  /** The `id` of the last event of the previous page. */
  startingAfter?: string;
}

/** A bulk job's file: its text (CSV or NDJSON) or bytes. */
export type BulkJobFile = string | Uint8Array;

export interface BulkJobCreateOptions extends RequestOptions {
  /** `text/csv` (default: a header row naming `phone`, optionally `country`) or `application/x-ndjson`. */
  contentType?: "text/csv" | "application/x-ndjson";
  /** Default: a fresh UUID per call, kept across its retries; the same key and file answer the same job. */
  idempotencyKey?: string;
}

export interface BulkJobsOptions extends RequestOptions {
  /** Jobs per request, 1 to 100 (default 20). */
  limit?: number;
}

export interface BulkJobsPageOptions extends BulkJobsOptions {
  /** The `id` of the last job of the previous page. */
  startingAfter?: string;
}

export interface BulkJobWaitOptions extends RequestOptions {
  /** Milliseconds between polls (default 1 000). */
  pollInterval?: number;
  /** Sees each state of the job while it runs. */
  onProgress?: (job: BulkJob) => void;
}

export interface BulkJobResultsOptions extends RequestOptions {
  /** `ndjson` (default: one JSON object per line) or `csv`. */
  format?: "ndjson" | "csv";
  /** The `index` of the last item you have: the results continue after it. */
  startingAfter?: number;
}

/** `client.bulkJobs`: lists of up to 100,000 numbers, answered on the server's workers. */
export interface BulkJobs {
  /** Uploads a list; the job comes back queued (202). */
  create(
    product: Product,
    file: BulkJobFile,
    options?: BulkJobCreateOptions,
  ): Promise<APIResponse<BulkJob, BulkJobMeta>>;
  /** Every job of the key's mode, newest first, a page at a time. */
  list(options?: BulkJobsOptions): AsyncGenerator<BulkJob, void, undefined>;
  page(options?: BulkJobsPageOptions): Promise<APIResponse<BulkJobsPage, BulkJobMeta>>;
  get(jobId: string, options?: RequestOptions): Promise<APIResponse<BulkJob, BulkJobMeta>>;
  /** Cancels the job if it runs, and deletes its input and results at once. */
  delete(jobId: string, options?: RequestOptions): Promise<APIResponse<BulkJob, BulkJobMeta>>;
  /** Polls the job until it has finished. */
  wait(jobId: string, options?: BulkJobWaitOptions): Promise<BulkJob>;
  /** The results as they stream in, one line (NDJSON object or CSV row) at a time. */
  results(jobId: string, options?: BulkJobResultsOptions): AsyncGenerator<string, void, undefined>;
}

export interface RetryEvent {
  retry: number;
  /** Milliseconds before the retry. */
  delay: number;
  method: string;
  path: string;
  /** The error answer, or the connection failure, that is retried. */
  error: APIError | APIConnectionError;
}

interface Call {
  method: "GET" | "POST" | "DELETE";
  path: string;
  body?: unknown;
  /** A body that is not JSON (a bulk job's file), with its Content-Type. */
  raw?: { content: BulkJobFile; contentType: string };
  idempotencyKey?: string;
  signal?: AbortSignal | undefined;
  timeout?: number | undefined;
}

interface Answer {
  status: number;
  headers: Headers;
  body: unknown;
}

export class Client {
  readonly baseUrl: string;
  readonly timeout: number;
  readonly maxRetries: number;
  readonly maxRetryWait: number;
  /** The RateLimit headers of the latest answer that had them. */
  rateLimit: RateLimit | null = null;
  // Private (#) so that neither console.log nor util.inspect ever shows the key.
  readonly #apiKey: string | null;
  readonly #fetch: typeof fetch;
  readonly #onRetry: ((event: RetryEvent) => void) | undefined;

  constructor(options: ClientOptions = {}) {
    this.#apiKey = options.apiKey ?? (process.env[ENV_API_KEY] || null);
    const baseUrl = (options.baseUrl || process.env[ENV_BASE_URL] || DEFAULT_BASE_URL).replace(
      /\/+$/,
      "",
    );
    new URL(baseUrl); // a malformed address fails here, not as a retried connection error
    this.baseUrl = baseUrl;
    this.timeout = options.timeout ?? DEFAULT_TIMEOUT;
    this.maxRetries = options.maxRetries ?? DEFAULT_MAX_RETRIES;
    this.maxRetryWait = options.maxRetryWait ?? DEFAULT_MAX_RETRY_WAIT;
    if (this.timeout <= 0 || this.maxRetries < 0 || this.maxRetryWait < 0) {
      throw new RangeError("timeout must be positive; maxRetries and maxRetryWait not negative");
    }
    this.#fetch = options.fetch ?? globalThis.fetch;
    this.#onRetry = options.onRetry;
  }

  /** Any product by its value; the methods below are the same, one per product. */
  async lookup<P extends Product>(
    product: P,
    phone: string,
    options: LookupOptions = {},
  ): Lookup<P> {
    const path = PRODUCT_PATHS[product];
    if (path === undefined) {
      throw new TypeError(
        `Unknown product ${JSON.stringify(product)}; one of ${Object.keys(PRODUCT_PATHS).join(", ")}`,
      );
    }
    const { country, idempotencyKey, ...request } = options;
    return this.#lookupCall(
      { method: "POST", path, body: lookupInput(country ? { phone, country } : phone), ...request },
      idempotencyKey,
      withFound as (data: unknown) => LookupResult<P>,
    );
  }

  /** Risk score, level and reasons, with the number of reports on record. */
  phoneLookup(phone: string, options?: LookupOptions): Lookup<"phone-lookup"> {
    return this.lookup("phone-lookup", phone, options);
  }

  /** Risk score, level and reasons. */
  phoneRisk(phone: string, options?: LookupOptions): Lookup<"phone-risk"> {
    return this.lookup("phone-risk", phone, options);
  }

  /** Operator, number type and country. */
  carrierLookup(phone: string, options?: LookupOptions): Lookup<"carrier-lookup"> {
    return this.lookup("carrier-lookup", phone, options);
  }

  /** The verified business registered to the number. */
  reversePhoneLookup(phone: string, options?: LookupOptions): Lookup<"reverse-phone-lookup"> {
    return this.lookup("reverse-phone-lookup", phone, options);
  }

  /** Whether the number appears in exposure data (`atRisk`). */
  phoneExposure(phone: string, options?: LookupOptions): Lookup<"phone-exposure"> {
    return this.lookup("phone-exposure", phone, options);
  }

  /**
   * One bulk call: 1 to 50 inputs of one product, answered in input order. An invalid input
   * is an item with an inline `error` and is not charged.
   */
  bulk<P extends Product>(
    product: P,
    inputs: readonly LookupInput[],
    options: BulkOptions = {},
  ): Promise<APIResponse<BulkResult<P>, BulkMeta>> {
    const { idempotencyKey, ...request } = options;
    return this.#lookupCall(
      {
        method: "POST",
        path: BULK_PATH,
        body: { product, inputs: inputs.map(lookupInput) },
        ...request,
      },
      idempotencyKey,
      (data) => {
        const result = data as BulkResult<P>;
        const items = result.items.map((item) =>
          item.data === undefined ? item : { ...item, data: withFound(item.data) },
        ) as BulkResult<P>["items"];
        return { ...result, items };
      },
    );
  }

  /** Bulk jobs: upload a list, follow it, stream its results, delete it. */
  readonly bulkJobs: BulkJobs = {
    create: (product, file, options = {}) => {
      const { contentType = "text/csv", idempotencyKey, ...request } = options;
      const path = `${BULK_JOBS_PATH}?${new URLSearchParams({ product })}`;
      return this.#lookupCall(
        { method: "POST", path, raw: { content: file, contentType }, ...request },
        idempotencyKey,
        (data) => data as BulkJob,
      );
    },
    list: (options = {}) => this.#bulkJobs(options),
    page: (options = {}) => {
      const { limit, startingAfter, ...request } = options;
      const query = new URLSearchParams();
      if (limit !== undefined) query.set("limit", String(limit));
      if (startingAfter !== undefined) query.set("startingAfter", startingAfter);
      const path = query.toString() ? `${BULK_JOBS_PATH}?${query}` : BULK_JOBS_PATH;
      return this.#call({ method: "GET", path, ...request }, (data) => data as BulkJobsPage);
    },
    get: (jobId, options = {}) =>
      this.#call({ method: "GET", path: jobPath(jobId), ...options }, (data) => data as BulkJob),
    delete: (jobId, options = {}) =>
      this.#call({ method: "DELETE", path: jobPath(jobId), ...options }, (data) => data as BulkJob),
    wait: async (jobId, options = {}) => {
      const { pollInterval = 1000, onProgress, ...request } = options;
      for (;;) {
        const job = (await this.bulkJobs.get(jobId, request)).data;
        onProgress?.(job);
        if (FINISHED.includes(job.status)) return job;
        await sleep(pollInterval, request.signal);
      }
    },
    results: (jobId, options = {}) => this.#bulkJobResults(jobId, options),
  };

  async *#bulkJobs(options: BulkJobsOptions): AsyncGenerator<BulkJob, void, undefined> {
    let startingAfter: string | undefined;
    for (;;) {
      const page = (
        await this.bulkJobs.page(startingAfter ? { ...options, startingAfter } : options)
      ).data;
      yield* page.items;
      const last = page.items.at(-1);
      if (!page.hasMore || last === undefined) return;
      startingAfter = last.id;
    }
  }

  async *#bulkJobResults(
    jobId: string,
    options: BulkJobResultsOptions,
  ): AsyncGenerator<string, void, undefined> {
    const { format = "ndjson", startingAfter, signal } = options;
    const query = startingAfter === undefined ? "" : `?startingAfter=${startingAfter}`;
    const headers: Record<string, string> = {
      Accept: format === "csv" ? "text/csv" : "application/x-ndjson",
      "User-Agent": `phoneintel-client-ts/${VERSION} node/${process.versions.node}`,
    };
    if (this.#apiKey) headers.Authorization = `Bearer ${this.#apiKey}`;
    const path = BULK_JOB_RESULTS_PATH.replace("{job_id}", encodeURIComponent(jobId));
    let response: Response;
    try {
      response = await this.#fetch(this.baseUrl + path + query, {
        headers,
        ...(signal ? { signal } : {}),
      });
    } catch (caught) {
      if (signal?.aborted) throw signal.reason;
      throw new APIConnectionError(`GET ${path}: ${describe(caught)}`, { cause: caught });
    }
    if (response.status !== 200 || response.body === null) {
      throw errorFrom(response.status, parseJson(await response.text()), response.headers);
    }
    const decoder = new TextDecoder();
    let rest = "";
    for await (const bytes of response.body) {
      rest += decoder.decode(bytes, { stream: true });
      const lines = rest.split("\n");
      rest = lines.pop() ?? "";
      yield* lines;
    }
    rest += decoder.decode();
    if (rest) yield rest;
  }

  /** The key, its quota, this month's usage (by product) and its rate limit. Free. */
  account(options: RequestOptions = {}): Promise<APIResponse<Account, AccountMeta>> {
    return this.#call({ method: "GET", path: ACCOUNT_PATH, ...options }, (data) => data as Account);
  }

  /**
   * Every event of the key's mode, newest first: `for await (const event of client.events())`.
   * Pages (`limit` each) are asked for as the loop reaches them. Free.
   */
  async *events(options: EventsOptions = {}): AsyncGenerator<Event, void, undefined> {
    let startingAfter: string | undefined;
    for (;;) {
      const page = (await this.eventsPage(startingAfter ? { ...options, startingAfter } : options))
        .data;
      yield* page.items;
      const last = page.items.at(-1);
      if (!page.hasMore || last === undefined) return;
      startingAfter = last.id;
    }
  }

  /** One page of the key's events (`events()` pages for you). Free. */
  eventsPage(options: EventsPageOptions = {}): Promise<APIResponse<EventsPage, EventsMeta>> {
    const { type, limit, startingAfter, ...request } = options;
    const query = new URLSearchParams();
    if (type !== undefined) query.set("type", type);
    if (limit !== undefined) query.set("limit", String(limit));
    if (startingAfter !== undefined) query.set("startingAfter", startingAfter);
    const path = query.toString() ? `${EVENTS_PATH}?${query}` : EVENTS_PATH;
    return this.#call({ method: "GET", path, ...request }, (data) => data as EventsPage);
  }

  /** The product manifest: every product, its availability, channels, price and endpoint. Public. */
  products(
    options: RequestOptions = {},
  ): Promise<APIResponse<ProductManifest, ProductManifestMeta>> {
    return this.#call(
      { method: "GET", path: PRODUCTS_PATH, ...options },
      (data) => data as ProductManifest,
    );
  }

  /** The numbers a test key answers, each with the product it is for and what it answers. Public. */
  testNumbers(options: RequestOptions = {}): Promise<APIResponse<TestNumbers, TestNumbersMeta>> {
    return this.#call(
      { method: "GET", path: TEST_NUMBERS_PATH, ...options },
      (data) => data as TestNumbers,
    );
  }

  #lookupCall<D, M>(call: Call, idempotencyKey: string | undefined, read: (data: unknown) => D) {
    // Made once here, before the first attempt: every retry of this call sends the same key.
    return this.#call<D, M>(
      { ...call, idempotencyKey: idempotencyKey ?? crypto.randomUUID() },
      read,
    );
  }

  async #call<D, M>(call: Call, read: (data: unknown) => D): Promise<APIResponse<D, M>> {
    const answer = await this.#execute(call);
    const requestId = answer.headers.get("X-Request-Id") ?? "";
    const body = answer.body;
    if (!isObject(body) || !("data" in body)) {
      throw new APIError({
        status: answer.status,
        code: "unexpected_response" satisfies ErrorCode,
        message: "The answer does not have the contract's envelope.",
        requestId: requestId || null,
        headers: answer.headers,
      });
    }
    const meta = (isObject(body.meta) ? body.meta : { requestId }) as M;
    return {
      data: read(body.data),
      meta,
      requestId:
        (isObject(body.meta) && typeof body.meta.requestId === "string" && body.meta.requestId) ||
        requestId,
      status: answer.status,
      replayed: answer.headers.get("Idempotent-Replayed")?.toLowerCase() === "true",
      rateLimit: parseRateLimit(answer.headers),
    };
  }

  async #execute(call: Call): Promise<Answer> {
    for (let retry = 1; ; retry++) {
      let failure: APIError | APIConnectionError;
      try {
        const answer = await this.#send(call);
        this.rateLimit = parseRateLimit(answer.headers) ?? this.rateLimit;
        if (answer.status < 400 && isObject(answer.body)) return answer;
        failure = errorFrom(answer.status < 400 ? 502 : answer.status, answer.body, answer.headers);
      } catch (caught) {
        // Only a failure with no answer is retried; the caller's abort is thrown as it is.
        if (!(caught instanceof APIConnectionError)) throw caught;
        failure = caught;
      }
      const retryable = failure instanceof APIError ? retryableError(failure) : true;
      if (!retryable || retry > this.maxRetries) throw failure;
      const delay = this.retryDelay(retry, failure instanceof APIError ? failure.retryAfter : null);
      this.#onRetry?.({ retry, delay, method: call.method, path: call.path, error: failure });
      await sleep(delay, call.signal);
    }
  }

  /**
   * Milliseconds before retry number `retry`: `Retry-After` (seconds) when the server gave
   * one, else 0.5 s doubling each time; capped at `maxRetryWait`, then up to 25 % added so
   * that clients told the same wait do not all come back at the same instant.
   */
  retryDelay(retry: number, retryAfter: number | null): number {
    const wanted = retryAfter !== null ? retryAfter * 1000 : BACKOFF_BASE * 2 ** (retry - 1);
    return Math.min(wanted, this.maxRetryWait) * (1 + Math.random() * JITTER);
  }

  async #send(call: Call): Promise<Answer> {
    const { signal } = call;
    signal?.throwIfAborted();
    const timeout = call.timeout ?? this.timeout;
    const controller = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, timeout);
    const forward = () => controller.abort(signal?.reason);
    signal?.addEventListener("abort", forward, { once: true });
    const headers: Record<string, string> = {
      Accept: "application/json",
      "User-Agent": `phoneintel-client-ts/${VERSION} node/${process.versions.node}`,
    };
    if (this.#apiKey) headers.Authorization = `Bearer ${this.#apiKey}`;
    if (call.idempotencyKey) headers["Idempotency-Key"] = call.idempotencyKey;
    if (call.body !== undefined) headers["Content-Type"] = "application/json";
    if (call.raw !== undefined) headers["Content-Type"] = call.raw.contentType;
    const body = call.raw !== undefined ? call.raw.content : JSON.stringify(call.body);
    try {
      const response = await this.#fetch(this.baseUrl + call.path, {
        method: call.method,
        headers,
        ...(call.body !== undefined || call.raw !== undefined ? { body } : {}),
        signal: controller.signal,
      });
      // Read whole inside the timeout: an answer cut off half-way is no answer.
      const text = await response.text();
      return { status: response.status, headers: response.headers, body: parseJson(text) };
    } catch (caught) {
      if (signal?.aborted) throw signal.reason;
      const where = `${call.method} ${call.path}`;
      if (timedOut) {
        throw new APITimeoutError(`${where}: no answer within ${timeout} ms`, { cause: caught });
      }
      throw new APIConnectionError(`${where}: ${describe(caught)}`, { cause: caught });
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener("abort", forward);
    }
  }
}

/** Retried: 503, 429 but `quota_exceeded`, and 409 `idempotency_in_progress`. */
export function retryableError(error: APIError): boolean {
  if (error.status === 503) return true;
  // A spent quota comes back next month: waiting inside a call cannot help.
  if (error.status === 429) return error.code !== "quota_exceeded";
  // The first attempt of this very request is still running (its answer was lost on the
  // way): once it completes, the retry gets its answer.
  return error.status === 409 && error.code === "idempotency_in_progress";
}

/** `RateLimit-Policy: "default";q=600;w=60` and `RateLimit: "default";r=599;t=42`. */
export function parseRateLimit(headers: Headers): RateLimit | null {
  const policy = structuredItem(headers.get("RateLimit-Policy"));
  const state = structuredItem(headers.get("RateLimit"));
  if (policy === null && state === null) return null;
  return {
    policy: (policy ?? state)?.name ?? "",
    limit: policy?.params.q ?? null,
    windowSeconds: policy?.params.w ?? null,
    remaining: state?.params.r ?? null,
    resetSeconds: state?.params.t ?? null,
  };
}

function structuredItem(
  value: string | null,
): { name: string; params: Record<string, number> } | null {
  if (!value) return null;
  const [name = "", ...parts] = (value.split(",")[0] ?? "").split(";").map((part) => part.trim());
  const params: Record<string, number> = {};
  for (const part of parts) {
    const [key, number] = part.split("=");
    if (key && number && /^-?\d+$/.test(number)) params[key.trim()] = Number(number);
  }
  return { name: name.replace(/^"|"$/g, ""), params };
}

function jobPath(jobId: string): string {
  return BULK_JOB_PATH.replace("{job_id}", encodeURIComponent(jobId));
}

function lookupInput(input: LookupInput): { phone: string; country?: string } {
  if (typeof input === "string") return { phone: input };
  return input.country ? { phone: input.phone, country: input.country } : { phone: input.phone };
}

function withFound(data: unknown): unknown {
  // phone-exposure's found result is the bare {atRisk}: the contract says nothing else.
  return isObject(data) && !("found" in data) ? { ...data, found: true } : data;
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const done = () => {
      signal?.removeEventListener("abort", abort);
      resolve();
    };
    const timer = setTimeout(done, ms);
    const abort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener("abort", abort, { once: true });
  });
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  // fetch says "fetch failed"; the reason (ECONNREFUSED, a reset) is in its cause.
  const cause = error.cause instanceof Error ? `: ${error.cause.message}` : "";
  return `${error.name}: ${error.message}${cause}`;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
