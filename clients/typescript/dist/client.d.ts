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
import { APIConnectionError, APIError } from "./errors.js";
import type { Account, AccountMeta, APIResponse, BulkJob, BulkJobMeta, BulkJobsPage, BulkMeta, BulkResult, Event, EventsMeta, EventsPage, EventType, LookupInput, LookupMeta, LookupResult, Product, ProductManifest, ProductManifestMeta, RateLimit, TestNumbers, TestNumbersMeta } from "./types.js";
export declare const VERSION = "0.1.0";
export declare const ENV_API_KEY = "PHONEINTEL_API_KEY";
export declare const ENV_BASE_URL = "PHONEINTEL_BASE_URL";
export declare const DEFAULT_BASE_URL = "http://127.0.0.1:8000";
export declare const DEFAULT_TIMEOUT = 10000;
export declare const DEFAULT_MAX_RETRIES = 3;
export declare const DEFAULT_MAX_RETRY_WAIT = 30000;
/** Each product's single-lookup path; the compiler checks each is a path of the contract. */
export declare const PRODUCT_PATHS: {
    readonly "phone-lookup": "/v1/data/phone-lookups";
    readonly "phone-risk": "/v1/data/phone-risk-checks";
    readonly "carrier-lookup": "/v1/data/carrier-lookups";
    readonly "reverse-phone-lookup": "/v1/data/reverse-phone-lookups";
    readonly "phone-exposure": "/v1/data/phone-exposure-checks";
};
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
    create(product: Product, file: BulkJobFile, options?: BulkJobCreateOptions): Promise<APIResponse<BulkJob, BulkJobMeta>>;
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
export declare class Client {
    #private;
    readonly baseUrl: string;
    readonly timeout: number;
    readonly maxRetries: number;
    readonly maxRetryWait: number;
    /** The RateLimit headers of the latest answer that had them. */
    rateLimit: RateLimit | null;
    constructor(options?: ClientOptions);
    /** Any product by its value; the methods below are the same, one per product. */
    lookup<P extends Product>(product: P, phone: string, options?: LookupOptions): Lookup<P>;
    /** Risk score, level and reasons, with the number of reports on record. */
    phoneLookup(phone: string, options?: LookupOptions): Lookup<"phone-lookup">;
    /** Risk score, level and reasons. */
    phoneRisk(phone: string, options?: LookupOptions): Lookup<"phone-risk">;
    /** Operator, number type and country. */
    carrierLookup(phone: string, options?: LookupOptions): Lookup<"carrier-lookup">;
    /** The verified business registered to the number. */
    reversePhoneLookup(phone: string, options?: LookupOptions): Lookup<"reverse-phone-lookup">;
    /** Whether the number appears in exposure data (`atRisk`). */
    phoneExposure(phone: string, options?: LookupOptions): Lookup<"phone-exposure">;
    /**
     * One bulk call: 1 to 50 inputs of one product, answered in input order. An invalid input
     * is an item with an inline `error` and is not charged.
     */
    bulk<P extends Product>(product: P, inputs: readonly LookupInput[], options?: BulkOptions): Promise<APIResponse<BulkResult<P>, BulkMeta>>;
    /** Bulk jobs: upload a list, follow it, stream its results, delete it. */
    readonly bulkJobs: BulkJobs;
    /** The key, its quota, this month's usage (by product) and its rate limit. Free. */
    account(options?: RequestOptions): Promise<APIResponse<Account, AccountMeta>>;
    /**
     * Every event of the key's mode, newest first: `for await (const event of client.events())`.
     * Pages (`limit` each) are asked for as the loop reaches them. Free.
     */
    events(options?: EventsOptions): AsyncGenerator<Event, void, undefined>;
    /** One page of the key's events (`events()` pages for you). Free. */
    eventsPage(options?: EventsPageOptions): Promise<APIResponse<EventsPage, EventsMeta>>;
    /** The product manifest: every product, its availability, channels, price and endpoint. Public. */
    products(options?: RequestOptions): Promise<APIResponse<ProductManifest, ProductManifestMeta>>;
    /** The numbers a test key answers, each with the product it is for and what it answers. Public. */
    testNumbers(options?: RequestOptions): Promise<APIResponse<TestNumbers, TestNumbersMeta>>;
    /**
     * Milliseconds before retry number `retry`: `Retry-After` (seconds) when the server gave
     * one, else 0.5 s doubling each time; capped at `maxRetryWait`, then up to 25 % added so
     * that clients told the same wait do not all come back at the same instant.
     */
    retryDelay(retry: number, retryAfter: number | null): number;
}
/** Retried: 503, 429 but `quota_exceeded`, and 409 `idempotency_in_progress`. */
export declare function retryableError(error: APIError): boolean;
/** `RateLimit-Policy: "default";q=600;w=60` and `RateLimit: "default";r=599;t=42`. */
export declare function parseRateLimit(headers: Headers): RateLimit | null;
